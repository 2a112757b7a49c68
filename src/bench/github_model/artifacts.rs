//! Workflow run artifacts (installation-token auth): the run's artifact
//! list, and `/zip`, which answers 302 to a pre-signed blob URL on the same
//! server. `/blob/{id}` refuses any request carrying an Authorization header
//! (as GitHub's storage does: the URL is the credential), so a client that
//! leaks its token to the redirect target gets nothing.

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::repos::Paging;
use super::{error, require_token, Authorized, Fake, FakeGitHub};

pub const LIST_ARTIFACTS: &str = "GET /repos/{owner}/{repo}/actions/runs/{run_id}/artifacts";
pub const DOWNLOAD_ARTIFACT: &str = "GET /repos/{owner}/{repo}/actions/artifacts/{id}/zip";
pub const BLOB: &str = "GET /blob/{id}";

#[derive(Debug, Clone)]
pub struct Artifact {
    pub id: u64,
    pub repo: String,
    pub run_id: u64,
    pub name: String,
    pub expired: bool,
    pub zip: Vec<u8>,
}

#[derive(Debug, Default)]
pub struct Artifacts {
    pub all: Vec<Artifact>,
    /// Blob requests refused because they carried an Authorization header.
    pub blob_with_auth: u64,
}

impl FakeGitHub {
    /// Attach an artifact (a zip) to a run; returns its id.
    pub fn add_artifact(&self, repo: &str, run_id: u64, name: &str, zip: Vec<u8>) -> u64 {
        let id = self.fake.next_id();
        self.fake.lock().artifacts.all.push(Artifact {
            id,
            repo: repo.to_string(),
            run_id,
            name: name.to_string(),
            expired: false,
            zip,
        });
        id
    }

    pub fn blob_requests_with_auth(&self) -> u64 {
        self.fake.lock().artifacts.blob_with_auth
    }
}

/// A real zip (deflated) of the given files (`github::harvest::zip_of`).
pub use crate::github::harvest::zip_of;

pub(crate) async fn list_for_run(
    State(fake): State<Fake>,
    Path((owner, repo, run_id)): Path<(String, String, u64)>,
    Query(paging): Query<Paging>,
    _auth: Authorized,
) -> Response {
    let full = format!("{owner}/{repo}");
    let all = fake.all_artifacts();
    let artifacts: Vec<_> = all
        .iter()
        .filter(|a| a.repo.eq_ignore_ascii_case(&full) && a.run_id == run_id)
        .collect();
    let total = artifacts.len();
    let (start, per_page) = paging.window();
    let artifacts: Vec<_> = artifacts
        .into_iter()
        .skip(start)
        .take(per_page)
        .map(|a| {
            json!({
                "id": a.id, "node_id": format!("MDg6QXJ0aWZhY3Q{}", a.id), "name": a.name,
                "size_in_bytes": a.zip.len(), "expired": a.expired,
                "url": format!("https://api.github.com/repos/{full}/actions/artifacts/{}", a.id),
                "archive_download_url": format!("https://api.github.com/repos/{full}/actions/artifacts/{}/zip", a.id),
                "created_at": "2026-10-01T00:10:00Z", "updated_at": "2026-10-01T00:10:00Z",
                "expires_at": "2026-12-30T00:10:00Z",
                "workflow_run": {"id": a.run_id, "repository_id": 99, "head_branch": "main"}
            })
        })
        .collect();
    Json(json!({"total_count": total, "artifacts": artifacts})).into_response()
}

pub async fn download(
    State(fake): State<Fake>,
    Path((owner, repo, id)): Path<(String, String, u64)>,
    headers: HeaderMap,
) -> Response {
    if let Err(r) = require_token(&fake, &headers) {
        return r;
    }
    let full = format!("{owner}/{repo}");
    let found = fake
        .all_artifacts()
        .iter()
        .find(|a| a.id == id && a.repo.eq_ignore_ascii_case(&full))
        .map(|a| a.expired);
    match found {
        None => error(StatusCode::NOT_FOUND, "Not Found"),
        Some(true) => error(StatusCode::GONE, "Artifact has expired"),
        Some(false) => {
            let base = super::base_url(&headers);
            let location = format!("{base}/blob/{id}?sv=2025-01-05&sig=presigned");
            (StatusCode::FOUND, [("location", location)]).into_response()
        }
    }
}

pub async fn blob(State(fake): State<Fake>, Path(id): Path<u64>, headers: HeaderMap) -> Response {
    if headers.contains_key("authorization") {
        fake.lock().artifacts.blob_with_auth += 1;
        return (
            StatusCode::BAD_REQUEST,
            "<Error><Code>InvalidAuthenticationInfo</Code></Error>",
        )
            .into_response();
    }
    match fake.all_artifacts().iter().find(|a| a.id == id) {
        Some(a) => (
            StatusCode::OK,
            [("content-type", "application/zip")],
            a.zip.clone(),
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "BlobNotFound").into_response(),
    }
}
