//! `POST /api/v1/manifests`: gh-aw `safe-output-items.jsonl` from a workflow.
//! Lines that parse are stored (durably, before the answer); lines that do not
//! are listed in the answer with why.

use axum::body::Body;
use axum::extract::{Query, State as StateExtractor};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::json;
use sha2::{Digest, Sha256};

use super::body::{read_capped, require_content_type, require_token};
use super::{ApiError, State};
use crate::manifest::{parse_manifest, ManifestDefaults};
use crate::store::inbox::{Enqueued, InboxItem};

/// Media types a manifest may come as.
const MANIFEST_TYPES: &[&str] = &[
    "application/x-ndjson",
    "application/jsonl",
    "application/json-lines",
    "text/plain",
];

#[derive(Debug, Deserialize)]
pub struct ManifestQuery {
    repo: Option<String>,
    run_id: Option<String>,
    workflow: Option<String>,
}

pub async fn ingest(
    StateExtractor(state): StateExtractor<State>,
    Query(query): Query<ManifestQuery>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    require_token(&headers, &state)?;
    require_content_type(&headers, MANIFEST_TYPES)?;
    let bytes = read_capped(&headers, body).await?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|e| ApiError::bad_request(format!("the manifest is not UTF-8: {e}")))?;
    let run_id = match query.run_id.as_deref() {
        Some(s) => Some(
            s.parse::<u64>()
                .map_err(|_| ApiError::bad_request(format!("run_id {s:?} is not a number")))?,
        ),
        None => None,
    };
    let defaults = ManifestDefaults {
        repo: query.repo.clone(),
        run_id,
        workflow: query.workflow.clone(),
    };
    let now = state.shared.clock.now();
    let parsed = parse_manifest(text, &defaults, now);
    let rejected: Vec<_> = parsed
        .rejected
        .iter()
        .map(|r| json!({"line": r.line, "error": r.error}))
        .collect();
    if parsed.records.is_empty() && !rejected.is_empty() {
        return Ok((
            StatusCode::BAD_REQUEST,
            Json(json!({
                "error": "bad_request",
                "detail": "no line of the manifest could be used",
                "accepted": 0,
                "rejected": rejected,
            })),
        )
            .into_response());
    }
    let ids: Vec<String> = parsed.records.iter().map(|r| r.id.clone()).collect();
    let mut digest = Sha256::new();
    digest.update(format!(
        "{:?}|{:?}|{:?}|",
        query.repo, run_id, query.workflow
    ));
    digest.update(&bytes);
    let item = InboxItem::Manifest {
        key: hex::encode(digest.finalize()),
        received_at: now,
        records: parsed.records,
    };
    let status = match state.writer.enqueue(item).await {
        Ok(Enqueued::Stored(_)) => StatusCode::ACCEPTED,
        Ok(Enqueued::Duplicate) => StatusCode::OK,
        Err(e) => return Err(ApiError::unavailable(e.to_string())),
    };
    Ok((
        status,
        Json(json!({
            "accepted": ids.len(),
            "outputs": ids,
            "rejected": rejected,
            "duplicate": status == StatusCode::OK,
        })),
    )
        .into_response())
}
