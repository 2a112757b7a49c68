//! `POST /api/v1/backfill` (what `safe-outcomes backfill` sends): plan the
//! backfill of the gh-aw runs of the last `days` days, for `repo` or for
//! every repository of the active installations (`github::backfill`).
//! Body: `{"days": 30, "repo": "owner/name"}`, both optional. Answers 202
//! `{"planned": [repos]}` (a repository whose backfill is still running
//! keeps it and is not listed). A bad body, a bad `days` or an uncovered
//! repository is a 4xx and plans nothing; listen-only mode is 409.
//!
//! `GET /api/v1/backfill[?repo=]` (what `backfill --watch` polls): every job
//! with its state and counts (`BackfillJobs`).

use axum::body::Bytes;
use axum::extract::Query;
use axum::extract::State as StateExtractor;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::body::require_token;
use super::{ApiError, Mount, State};
use crate::github::backfill::RequestError;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Body {
    days: Option<u32>,
    repo: Option<String>,
}

/// `POST /api/v1/backfill`.
pub fn routes(_: &Mount) -> Router<State> {
    Router::new().route("/api/v1/backfill", post(request).get(jobs))
}

/// The backfill jobs, one per repository.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct BackfillJobs {
    pub jobs: Vec<BackfillJobView>,
}

/// One repository's backfill and how far it has got.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub(crate) struct BackfillJobView {
    pub repo: String,
    /// `listing`, `harvesting`, `paused` or `done`.
    pub state: String,
    /// Runs created in `[since, until]` are backfilled.
    pub since: DateTime<Utc>,
    pub until: DateTime<Utc>,
    pub runs_found: u64,
    pub runs_harvested: u64,
    /// Runs given up after repeated failures.
    pub runs_failed: u64,
    pub outputs_evaluated: u64,
    pub outputs_observed: u64,
    /// Waiting for the rate limit to reset, until then.
    pub paused_until: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct JobsQuery {
    repo: Option<String>,
}

/// `GET /api/v1/backfill`.
async fn jobs(
    StateExtractor(state): StateExtractor<State>,
    headers: HeaderMap,
    query: Result<Query<JobsQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<BackfillJobs>, ApiError> {
    require_token(&headers, &state)?;
    let Query(query) = query.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let store = state.store.clone();
    let jobs = tokio::task::spawn_blocking(move || store.backfill_jobs())
        .await
        .map_err(|e| ApiError::internal(e.to_string()))??;
    let jobs = jobs
        .into_iter()
        .filter(|j| query.repo.as_deref().is_none_or(|r| r == j.repo))
        .map(|j| BackfillJobView {
            state: j.state().to_string(),
            repo: j.repo,
            since: j.since,
            until: j.until,
            runs_found: j.runs_found,
            runs_harvested: j.runs_harvested,
            runs_failed: j.runs_failed,
            outputs_evaluated: j.outputs_evaluated,
            outputs_observed: j.outputs_observed,
            paused_until: j.paused_until,
            last_error: j.last_error,
        })
        .collect();
    Ok(Json(BackfillJobs { jobs }))
}

pub async fn request(
    StateExtractor(state): StateExtractor<State>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    require_token(&headers, &state)?;
    let body: Body = if body.iter().all(u8::is_ascii_whitespace) {
        Body::default()
    } else {
        serde_json::from_slice(&body).map_err(|e| {
            ApiError::bad_request(format!("the body is not a backfill request: {e}"))
        })?
    };
    state.refuse_listen_only("it cannot backfill; set APP_ID and PRIVATE_KEY")?;
    let requests = state
        .shared
        .backfill_requests
        .as_ref()
        .ok_or_else(|| ApiError::unavailable("the backfill is not running on this server"))?;
    let now = state.shared.clock.now();
    let planned = requests
        .request(&state.store, body.repo.as_deref(), body.days, now)
        .map_err(|e| match e {
            RequestError::BadRepo(_) | RequestError::BadDays(_) => {
                ApiError::bad_request(e.to_string())
            }
            RequestError::NotCovered(_) => ApiError::not_found(e.to_string()),
            RequestError::Store(e) => e.into(),
        })?;
    Ok((StatusCode::ACCEPTED, Json(json!({ "planned": planned }))))
}
