//! `POST /api/v1/outputs/{id}/reconcile`: ask the reconciler to evaluate an
//! output from the GitHub API now (`github::reconciler`). Answers 202
//! `{"queued": id}`; the outcome changes once the attempt is filed. In
//! listen-only mode (no `APP_ID`) there is no API access: 409, nothing queued.
//! An output outside its own installation (the tenancy rule,
//! `ingest::tenancy`) is never read for: 409 `outside_installation` with the
//! reason.
//!
//! The read API's `GET /api/v1/outputs/{*id}` takes the whole rest of the
//! path (ids contain `/`), and axum cannot put a segment after a wildcard,
//! so this handler is the `POST` of the same route and requires the
//! `/reconcile` suffix.

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State as StateExtractor};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};

use super::body::require_token;
use super::{ApiError, Mount, State};

const SUFFIX: &str = "/reconcile";

/// `POST /api/v1/outputs/{*id}` (the read API's `GET` of the same route is
/// `http::api`'s; axum merges the two methods).
pub fn routes(_: &Mount) -> Router<State> {
    Router::new().route("/api/v1/outputs/{*id}", post(request))
}

pub async fn request(
    StateExtractor(state): StateExtractor<State>,
    path: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    require_token(&headers, &state)?;
    let Path(path) = path.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let Some(id) = path.strip_suffix(SUFFIX).filter(|id| !id.is_empty()) else {
        return Err(ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "only POST /api/v1/outputs/{id}/reconcile is accepted here",
        ));
    };
    state.refuse_listen_only(
        "it cannot reconcile; set APP_ID and PRIVATE_KEY to enable reconciliation",
    )?;
    let stored = state
        .store
        .output(id)?
        .ok_or_else(|| ApiError::not_found(format!("no output {id:?}")))?;
    // An output naming a repository outside its installation (stored
    // before the tenancy rule, or its installation lost the repository) is
    // never read for: say so rather than queue it.
    if let Err(refusal) = crate::ingest::tenancy::check_output(&state.store, &stored.execution)? {
        let at = crate::ingest::tenancy::Where::Reconcile;
        state
            .shared
            .tenancy
            .refused(at, &stored.execution.id, &refusal);
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "outside_installation",
            format!("{refusal}; it is not reconciled"),
        ));
    }
    let queued = stored.execution.id;
    let sent = state
        .shared
        .reconcile_requests
        .as_ref()
        .is_some_and(|r| r.request(queued.clone()));
    if !sent {
        return Err(ApiError::unavailable(
            "the reconciler is not running on this server",
        ));
    }
    Ok((StatusCode::ACCEPTED, Json(json!({"queued": queued}))))
}
