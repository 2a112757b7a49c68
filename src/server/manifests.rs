//! `POST /api/v1/manifests`: gh-aw `safe-output-items.jsonl` from a workflow.
//! Lines that parse are stored (durably, before the answer); lines that do not
//! are listed in the answer with why.
//!
//! Auth: the API_TOKEN (any repository), or a GitHub Actions OIDC token, which
//! may only write to its own `repository`: a line (or target) elsewhere makes
//! the whole request 403 and nothing is stored. Its `run_id` and `workflow`
//! claims stand in for missing query parameters.

use axum::body::Body;
use axum::extract::{Query, State as StateExtractor};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::json;
use sha2::{Digest, Sha256};

use super::body::{read_capped, require_content_type, require_manifest_auth, ManifestAuth};
use super::{ApiError, State};
use crate::manifest::{parse_manifest, ManifestDefaults, ParsedManifest};
use crate::oidc::ActionsClaims;
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
    let auth = require_manifest_auth(&headers, &state).await?;
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
    let mut defaults = ManifestDefaults {
        repo: query.repo.clone(),
        run_id,
        workflow: query.workflow.clone(),
    };
    if let ManifestAuth::Oidc(claims) = &auth {
        defaults = oidc_defaults(defaults, claims)?;
    }
    let now = state.shared.clock.now();
    let parsed = parse_manifest(text, &defaults, now);
    if let ManifestAuth::Oidc(claims) = &auth {
        require_own_repo(&parsed, claims)?;
    }
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
        defaults.repo, defaults.run_id, defaults.workflow
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

/// With an OIDC token: the query's repo must be the token's (it is the
/// default otherwise), and the run and workflow default to the token's.
fn oidc_defaults(
    mut defaults: ManifestDefaults,
    claims: &ActionsClaims,
) -> Result<ManifestDefaults, ApiError> {
    match &defaults.repo {
        Some(repo) if !same_repo(repo, &claims.repository) => {
            return Err(ApiError::forbidden(format!(
                "the OIDC token is for {} but repo={repo} was asked for",
                claims.repository
            )));
        }
        Some(_) => {}
        None => defaults.repo = Some(claims.repository.clone()),
    }
    if defaults.run_id.is_none() {
        defaults.run_id = claims.run_id_number();
    }
    if defaults.workflow.is_none() {
        defaults.workflow = claims.workflow.clone();
    }
    Ok(defaults)
}

/// Every accepted line, and the object it names, must be in the token's
/// repository: a workflow may only record its own writes.
fn require_own_repo(parsed: &ParsedManifest, claims: &ActionsClaims) -> Result<(), ApiError> {
    for record in &parsed.records {
        let target_repo = record.target.as_ref().map(|t| t.repo.as_str());
        let elsewhere = std::iter::once(record.repo.as_str())
            .chain(target_repo)
            .find(|repo| !same_repo(repo, &claims.repository));
        if let Some(repo) = elsewhere {
            return Err(ApiError::forbidden(format!(
                "the OIDC token is for {} but output {} (manifest item {}) is in {repo}; nothing was stored",
                claims.repository,
                record.id,
                record.index.map_or(0, |i| i + 1),
            )));
        }
    }
    Ok(())
}

/// GitHub repository names are case-insensitive.
fn same_repo(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}
