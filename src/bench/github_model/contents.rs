//! `GET /repos/{owner}/{repo}/contents/{path}?ref=SHA` (installation-token
//! auth): a file as GitHub's JSON media type gives it (`encoding: base64`),
//! 404 when the path is not in that commit. The test installs files with
//! `FakeGitHub::serve_contents` (from a `git::Git` commit).

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use base64::Engine;
use serde::Deserialize;
use serde_json::json;

use super::git::Git;
use super::{error, Authorized, Fake, FakeGitHub};

pub const GET_CONTENTS: &str = "GET /repos/{owner}/{repo}/contents/{*path}";

pub(crate) fn routes() -> Router<Fake> {
    Router::new().route("/repos/{owner}/{repo}/contents/{*path}", get(contents))
}

fn key(repo: &str, path: &str, sha: &str) -> String {
    format!("{repo}/contents/{path}@{sha}")
}

#[derive(Deserialize)]
struct Ref {
    #[serde(rename = "ref")]
    git_ref: Option<String>,
}

async fn contents(
    State(fake): State<Fake>,
    Path((owner, repo, path)): Path<(String, String, String)>,
    Query(q): Query<Ref>,
    _auth: Authorized,
) -> Response {
    let sha = q.git_ref.unwrap_or_else(|| "HEAD".into());
    let found = fake
        .lock()
        .api
        .get(&key(&format!("{owner}/{repo}"), &path, &sha))
        .cloned();
    match found {
        Some(v) => Json(v).into_response(),
        None => error(StatusCode::NOT_FOUND, "Not Found"),
    }
}

impl FakeGitHub {
    /// Serve `path` as it is in commit `sha` of `git` (absent: 404).
    pub fn serve_contents(&self, repo: &str, git: &Git, path: &str, sha: &str) {
        let k = key(repo, path, sha);
        let mut inner = self.fake.lock();
        match git.files(sha).get(path) {
            Some(text) => {
                let content = base64::engine::general_purpose::STANDARD.encode(text);
                inner.api.insert(
                    k,
                    json!({"type": "file", "path": path, "encoding": "base64", "content": content}),
                );
            }
            None => {
                inner.api.remove(&k);
            }
        }
    }
}
