//! `POST /api/v1/outputs/{id}/reconcile`: ask the reconciler to evaluate an
//! output from the GitHub API now (`github::reconciler`). Answers 202
//! `{"queued": id}`; the outcome changes once the attempt is filed. In
//! listen-only mode (no `APP_ID`) there is no API access: 409, nothing queued.
//! An output outside its own installation (the tenancy rule,
//! `ingest::tenancy`) is never read for: 409 `outside_installation` with the
//! reason.
//!
//! The read API's `GET /api/v1/outputs/{id}` takes the whole rest of the
//! path (ids contain `/`), and axum cannot put a segment after a wildcard,
//! so both share the route `/api/v1/outputs/{*id}`, and `by_method` tells
//! them apart by the `/reconcile` suffix: the two resources of the OpenAPI
//! document, each taking its own methods. Any other method is a 405 whose
//! `Allow` names exactly the methods of the resource asked (`GET, HEAD` or
//! `POST`; RFC 9110 §15.5.6, schemathesis ST204/ST205), not the union the
//! framework would list for the shared route.

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, Request, State as StateExtractor};
use axum::handler::Handler;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};

use super::body::require_token;
use super::{ApiError, Mount, State};

const SUFFIX: &str = "/reconcile";

/// `/api/v1/outputs/{*id}`: an output (`GET`, `HEAD`: `http::api::get_output`)
/// and its reconcile request (`POST …/reconcile`: `request`).
pub fn routes(_: &Mount) -> Router<State> {
    // `get` and `post` name the route's methods (its `Allow` as the router
    // lists it); every other method reaches `by_method` as the fallback.
    Router::new().route(
        "/api/v1/outputs/{*id}",
        get(by_method).post(by_method).fallback(by_method),
    )
}

/// Which of the route's two resources `path` is: the reconcile request
/// when something comes before the `/reconcile` suffix.
fn is_reconcile(path: &str) -> bool {
    path.strip_prefix("/api/v1/outputs/")
        .and_then(|rest| rest.strip_suffix(SUFFIX))
        .is_some_and(|id| !id.is_empty())
}

/// Hand the request to the resource's handler for its method, or answer
/// 405 with the resource's own `Allow`.
async fn by_method(StateExtractor(state): StateExtractor<State>, req: Request) -> Response {
    let reconcile = is_reconcile(req.uri().path());
    let method = req.method().clone();
    match (reconcile, &method) {
        (true, &Method::POST) => Handler::call(request, req, state).await,
        (false, &Method::GET | &Method::HEAD) => {
            Handler::call(super::api::get_output, req, state).await
        }
        _ => {
            let (allow, resource) = match reconcile {
                true => ("POST", "/api/v1/outputs/{id}/reconcile"),
                false => ("GET, HEAD", "/api/v1/outputs/{id}"),
            };
            let mut answer = ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                format!("{resource} takes {allow}, not {method}"),
            )
            .into_response();
            answer
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static(allow));
            answer
        }
    }
}

pub async fn request(
    StateExtractor(state): StateExtractor<State>,
    path: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    require_token(&headers, &state)?;
    let Path(path) = path.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let Some(id) = path.strip_suffix(SUFFIX).filter(|id| !id.is_empty()) else {
        // `by_method` sends only paths with the suffix here.
        return Err(ApiError::not_found(format!("no output {path:?}")));
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
