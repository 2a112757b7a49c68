//! `POST /api/v1/backfill` (what `safe-outcomes backfill` sends): plan the
//! backfill of the gh-aw runs of the last `days` days, for `repo` or for
//! every repository of the active installations (`github::backfill`).
//! Body: `{"days": 30, "repo": "owner/name"}`, both optional. Answers 202
//! `{"planned": [repos]}` (a repository whose backfill is still running
//! keeps it and is not listed). A bad body, a bad `days` or an uncovered
//! repository is a 4xx and plans nothing; listen-only mode is 409.

use axum::body::Bytes;
use axum::extract::State as StateExtractor;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::{Json, Router};
use serde::Deserialize;
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
    Router::new().route("/api/v1/backfill", post(request))
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
    if state.listen_only {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "listen_only",
            "this server runs in listen-only mode (no APP_ID): it makes no GitHub API calls, so it cannot backfill; set APP_ID and PRIVATE_KEY",
        ));
    }
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
