//! `POST {WEBHOOK_PATH}`: verify (the `SignedDelivery` extractor), normalize,
//! store durably, then answer.

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, Request, State as StateExtractor};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::from_fn_with_state;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::json;

use super::body::{read_capped, require_content_type};
use super::{limits, ApiError, Mount, State};
use crate::ingest::signature;
use crate::ingest::webhook::{normalize, Normalized};
use crate::model::ident;
use crate::store::inbox::{Enqueued, InboxItem};

/// A delivery whose `X-Hub-Signature-256` matched the body under one of the
/// configured secrets, with its event and delivery id checked. As an
/// extractor it refuses anything else before the handler runs (counted in
/// `rejected`, logged with the delivery id and event it claimed).
pub(crate) struct SignedDelivery {
    pub event: String,
    pub delivery: ident::DeliveryId,
    pub body: Bytes,
}

impl FromRequest<State> for SignedDelivery {
    type Rejection = Response;

    async fn from_request(req: Request, state: &State) -> Result<SignedDelivery, Response> {
        let (parts, body) = req.into_parts();
        verify(state, &parts.headers, body)
            .await
            .map_err(|e| refused(state, &parts.headers, e))
    }
}

/// `POST {WEBHOOK_PATH}`, its whole body read under the shared budget.
pub fn routes(mount: &Mount) -> Router<State> {
    let guard = from_fn_with_state(mount.buffered(), limits::guard);
    Router::new().route(&mount.webhook_path, post(receive).layer(guard))
}

pub async fn receive(
    StateExtractor(state): StateExtractor<State>,
    delivery: SignedDelivery,
) -> Response {
    match store(&state, &delivery).await {
        Ok(response) => response,
        Err(e) => refused(&state, &HeaderMap::new(), e.with_delivery(&delivery)),
    }
}

/// Count and log a refusal, naming the delivery and event it claimed
/// (quoted and cut short: they come from outside).
fn refused(state: &State, headers: &HeaderMap, e: Refusal) -> Response {
    state
        .shared
        .rejected
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let claimed = |named: Option<String>, header_name: &str| {
        let value = named.or_else(|| header(headers, header_name).map(str::to_string));
        value.map(|v| v.chars().take(100).collect::<String>())
    };
    let delivery = claimed(e.delivery, "x-github-delivery").unwrap_or_else(|| "-".into());
    let event = claimed(e.event, "x-github-event").unwrap_or_else(|| "-".into());
    let e = e.error;
    tracing::warn!(delivery = ?delivery, event = ?event, status = %e.status, error = e.error, detail = %e.detail, "webhook refused");
    e.into_response()
}

/// An `ApiError`, with the delivery it refused when known.
struct Refusal {
    error: ApiError,
    delivery: Option<String>,
    event: Option<String>,
}

impl From<ApiError> for Refusal {
    fn from(error: ApiError) -> Refusal {
        Refusal {
            error,
            delivery: None,
            event: None,
        }
    }
}

impl Refusal {
    fn with_delivery(mut self, d: &SignedDelivery) -> Refusal {
        self.delivery = Some(d.delivery.to_string());
        self.event = Some(d.event.clone());
        self
    }
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

async fn verify(state: &State, headers: &HeaderMap, body: Body) -> Result<SignedDelivery, Refusal> {
    let bytes = read_capped(headers, body).await?;
    if state.secrets.is_empty() {
        return Err(ApiError::unauthorized("WEBHOOK_SECRET is not configured").into());
    }
    let sig = header(headers, "x-hub-signature-256")
        .ok_or_else(|| ApiError::unauthorized("missing X-Hub-Signature-256"))?;
    if !signature::verify(&state.secrets, sig, &bytes) {
        return Err(ApiError::unauthorized("X-Hub-Signature-256 does not match the body").into());
    }
    require_content_type(headers, &["application/json"])?;
    let event = header(headers, "x-github-event")
        .filter(|e| !e.is_empty())
        .ok_or_else(|| ApiError::bad_request("missing X-GitHub-Event"))?;
    let delivery = header(headers, "x-github-delivery")
        .filter(|d| !d.is_empty())
        .ok_or_else(|| ApiError::bad_request("missing or invalid X-GitHub-Delivery"))?;
    let delivery = delivery
        .parse()
        .map_err(|e: ident::IdentError| ApiError::bad_request(e.to_string()))?;
    Ok(SignedDelivery {
        event: event.to_string(),
        delivery,
        body: bytes,
    })
}

/// Normalize a verified delivery and store it durably, then answer.
async fn store(state: &State, signed: &SignedDelivery) -> Result<Response, Refusal> {
    let (event, delivery, bytes) = (
        signed.event.as_str(),
        signed.delivery.as_str(),
        &signed.body,
    );
    // Offboarding deliveries end access before anything else (auth::access).
    state.auth.end_access(event, bytes)?;
    let normalized =
        normalize(event, delivery, bytes).map_err(|e| ApiError::bad_request(e.to_string()))?;
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
    let mut delivery_norm = delivery_norm;
    keep_facts_within_installation(state, &mut delivery_norm)?;
    let received_at = state.shared.clock.now();
    if delivery_norm.dated_at_receipt {
        // A payload with no time of its own (`membership`): dated now.
        for o in &mut delivery_norm.observations {
            o.at = received_at;
        }
    }
    let item = InboxItem::Delivery {
        delivery_id: delivery.to_string(),
        event: delivery_norm.event,
        action: delivery_norm.action,
        received_at,
        observations: delivery_norm.observations,
        discoveries: delivery_norm.discoveries,
        installation_change: delivery_norm.installation_change,
    };
    match state.writer.enqueue(item).await {
        Ok(Enqueued::Stored(_) | Enqueued::Logged) => Ok((
            StatusCode::ACCEPTED,
            Json(json!({"status": "stored", "delivery": delivery})),
        )
            .into_response()),
        Ok(Enqueued::Duplicate) => Ok((
            StatusCode::OK,
            Json(json!({"status": "duplicate", "delivery": delivery})),
        )
            .into_response()),
        Err(e) => Err(ApiError::unavailable(e.to_string()).into()),
    }
}

/// Drop the facts a delivery would file under a repository outside its own
/// repository's installation (`ingest::tenancy::check_key`; a sub-issue of
/// another organization's repository), counted and logged. Facts about the
/// delivery's own repository need no lookup.
fn keep_facts_within_installation(
    state: &State,
    delivery: &mut crate::ingest::webhook::NormalizedDelivery,
) -> Result<(), ApiError> {
    let Some(repo) = delivery.repo.clone() else {
        return Ok(());
    };
    let mut kept = Vec::with_capacity(delivery.observations.len());
    for obs in std::mem::take(&mut delivery.observations) {
        match crate::ingest::tenancy::check_key(&state.store, &repo, &obs.target)? {
            Ok(()) => kept.push(obs),
            Err(refusal) => {
                let at = crate::ingest::tenancy::Where::Webhook;
                state.shared.tenancy.refused(at, &obs.id, &refusal);
            }
        }
    }
    delivery.observations = kept;
    Ok(())
}
