//! Check runs: create, update, get, list for a ref (installation-token auth).

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{error, require_token, Authorized, Fake};

/// A stored check run, as sent to us.
#[derive(Debug, Clone)]
pub struct CheckRun {
    pub id: u64,
    pub installation: u64,
    pub repo: String,
    pub head_sha: String,
    pub name: String,
    pub external_id: Option<String>,
    pub status: Option<String>,
    pub conclusion: Option<String>,
    pub title: Option<String>,
    pub summary: Option<String>,
    pub details_url: Option<String>,
    /// PATCHes received.
    pub updates: u32,
}

impl CheckRun {
    fn json(&self) -> Value {
        json!({
            "id": self.id, "node_id": format!("CR_{}", self.id), "head_sha": self.head_sha,
            "external_id": self.external_id, "name": self.name,
            "url": format!("https://api.github.com/repos/{}/check-runs/{}", self.repo, self.id),
            "html_url": format!("https://github.com/{}/runs/{}", self.repo, self.id),
            "details_url": self.details_url, "status": self.status, "conclusion": self.conclusion,
            "started_at": null, "completed_at": null,
            "output": {"title": self.title, "summary": self.summary, "text": null,
                       "annotations_count": 0,
                       "annotations_url": format!("https://api.github.com/repos/{}/check-runs/{}/annotations", self.repo, self.id)},
            "pull_requests": [], "app": {"id": super::APP_ID}
        })
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Body {
    name: Option<String>,
    head_sha: Option<String>,
    external_id: Option<String>,
    status: Option<String>,
    conclusion: Option<String>,
    details_url: Option<String>,
    output: Option<Output>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Output {
    title: Option<String>,
    summary: Option<String>,
}

pub async fn create(
    State(fake): State<Fake>,
    Path((owner, repo)): Path<(String, String)>,
    headers: HeaderMap,
    Json(body): Json<Body>,
) -> Response {
    let installation = match require_token(&fake, &headers) {
        Ok(i) => i,
        Err(r) => return r,
    };
    let (Some(name), Some(head_sha)) = (body.name, body.head_sha) else {
        return error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "name and head_sha are required",
        );
    };
    let output = body.output.unwrap_or_default();
    let run = CheckRun {
        id: fake.next_id(),
        installation,
        repo: format!("{owner}/{repo}"),
        head_sha,
        name,
        external_id: body.external_id,
        status: body.status,
        conclusion: body.conclusion,
        title: output.title,
        summary: output.summary,
        details_url: body.details_url,
        updates: 0,
    };
    let answer = run.json();
    fake.lock().check_runs.push(run);
    (StatusCode::CREATED, Json(answer)).into_response()
}

pub async fn update(
    State(fake): State<Fake>,
    Path((owner, repo, id)): Path<(String, String, u64)>,
    _auth: Authorized,
    Json(body): Json<Body>,
) -> Response {
    let mut inner = fake.lock();
    let full = format!("{owner}/{repo}");
    let Some(run) = inner
        .check_runs
        .iter_mut()
        .find(|r| r.id == id && r.repo == full)
    else {
        return error(StatusCode::NOT_FOUND, "Not Found");
    };
    run.updates += 1;
    if let Some(o) = body.output {
        run.title = o.title.or(run.title.take());
        run.summary = o.summary.or(run.summary.take());
    }
    run.status = body.status.or(run.status.take());
    run.conclusion = body.conclusion.or(run.conclusion.take());
    run.details_url = body.details_url.or(run.details_url.take());
    run.external_id = body.external_id.or(run.external_id.take());
    Json(run.json()).into_response()
}

pub(crate) async fn get_one(
    State(fake): State<Fake>,
    Path((owner, repo, id)): Path<(String, String, u64)>,
    _auth: Authorized,
) -> Response {
    let full = format!("{owner}/{repo}");
    let ours = fake
        .lock()
        .check_runs
        .iter()
        .find(|r| r.id == id && r.repo == full)
        .map(CheckRun::json);
    // Else a check run of the repository's history (another app's, or one
    // the history says the App made).
    let history = || {
        let w = fake.world(&full)?;
        super::answers::rest(&w, &format!("check-runs/{id}"))
    };
    match ours.or_else(history) {
        Some(r) => Json(r).into_response(),
        None => error(StatusCode::NOT_FOUND, "Not Found"),
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ListQuery {
    check_name: Option<String>,
}

pub async fn list_for_ref(
    State(fake): State<Fake>,
    Path((owner, repo, sha)): Path<(String, String, String)>,
    Query(q): Query<ListQuery>,
    _auth: Authorized,
) -> Response {
    let full = format!("{owner}/{repo}");
    let mut runs: Vec<Value> = fake
        .lock()
        .check_runs
        .iter()
        .filter(|r| r.repo == full && r.head_sha == sha)
        .filter(|r| q.check_name.as_ref().is_none_or(|n| *n == r.name))
        .map(CheckRun::json)
        .collect();
    // And the check runs of the repository's history on that commit.
    let world = fake.world(&full);
    let listed = world.and_then(|w| super::answers::rest(&w, &format!("commits/{sha}/check-runs")));
    let named = |r: &Value| q.check_name.as_ref().is_none_or(|n| r["name"] == **n);
    if let Some(Value::Array(more)) = listed.map(|l| l["check_runs"].clone()) {
        runs.extend(more.into_iter().filter(named));
    }
    Json(json!({"total_count": runs.len(), "check_runs": runs})).into_response()
}
