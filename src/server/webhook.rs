//! `POST {WEBHOOK_PATH}`: verify, normalize, store durably, then answer.

use axum::body::Body;
use axum::extract::State as StateExtractor;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::body::{read_capped, require_content_type};
use super::{ApiError, State};
use crate::model::ident;
use crate::signature;
use crate::store::inbox::{Enqueued, InboxItem};
use crate::webhook::{normalize, Normalized};

pub async fn receive(
    StateExtractor(state): StateExtractor<State>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    match receive_inner(&state, &headers, body).await {
        Ok(response) => response,
        Err(e) => {
            state
                .shared
                .rejected
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            tracing::warn!(status = %e.status, error = e.error, detail = %e.detail, "webhook refused");
            e.into_response()
        }
    }
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

async fn receive_inner(
    state: &State,
    headers: &HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let bytes = read_capped(headers, body).await?;
    if state.secrets.is_empty() {
        return Err(ApiError::unauthorized("WEBHOOK_SECRET is not configured"));
    }
    let sig = header(headers, "x-hub-signature-256")
        .ok_or_else(|| ApiError::unauthorized("missing X-Hub-Signature-256"))?;
    if !signature::verify(&state.secrets, sig, &bytes) {
        return Err(ApiError::unauthorized(
            "X-Hub-Signature-256 does not match the body",
        ));
    }
    require_content_type(headers, &["application/json"])?;
    let event = header(headers, "x-github-event")
        .filter(|e| !e.is_empty())
        .ok_or_else(|| ApiError::bad_request("missing X-GitHub-Event"))?;
    let delivery = header(headers, "x-github-delivery")
        .filter(|d| !d.is_empty())
        .ok_or_else(|| ApiError::bad_request("missing or invalid X-GitHub-Delivery"))?;
    ident::delivery_id(delivery).map_err(|e| ApiError::bad_request(e.to_string()))?;
    let normalized =
        normalize(event, delivery, &bytes).map_err(|e| ApiError::bad_request(e.to_string()))?;
    let delivery_norm = match normalized {
        Normalized::Ignored { reason } => {
            state
                .shared
                .ignored
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            tracing::debug!(event, delivery, %reason, "delivery ignored");
            return Ok((
                StatusCode::OK,
                Json(json!({"status": "ignored", "reason": reason})),
            )
                .into_response());
        }
        Normalized::Relevant(d) => d,
    };
    let item = InboxItem::Delivery {
        delivery_id: delivery.to_string(),
        event: delivery_norm.event,
        action: delivery_norm.action,
        received_at: state.shared.clock.now(),
        observations: delivery_norm.observations,
        discoveries: delivery_norm.discoveries,
        installation_change: delivery_norm.installation_change,
    };
    match state.writer.enqueue(item).await {
        Ok(Enqueued::Stored(_)) => Ok((
            StatusCode::ACCEPTED,
            Json(json!({"status": "stored", "delivery": delivery})),
        )
            .into_response()),
        Ok(Enqueued::Duplicate) => Ok((
            StatusCode::OK,
            Json(json!({"status": "duplicate", "delivery": delivery})),
        )
            .into_response()),
        Err(e) => Err(ApiError::unavailable(e.to_string())),
    }
}
