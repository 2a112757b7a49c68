//! `POST /api/v1/manifests`: gh-aw `safe-output-items.jsonl` from a workflow.
//! Lines that parse are stored (durably, before the answer); lines that do not
//! are listed in the answer with why.
//!
//! Auth: the API_TOKEN (any repository), or a GitHub Actions OIDC token whose
//! repository owner has an installation of this App or is in
//! `OIDC_ALLOWED_OWNERS` (else 403: any repository on github.com can mint a
//! token for our audience), and which may only write to its own
//! `repository`: a line (or target) elsewhere makes the whole request 403 and
//! nothing is stored. Its `run_id` and `workflow` claims stand in for missing
//! query parameters.
//!
//! The query's `repo`, `run_id` and `workflow` are checked like a line's
//! (`model::ident`): a bad one is a 400 and nothing is stored.

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
use crate::github::installations;
use crate::manifest::{parse_manifest, ManifestDefaults, ParsedManifest};
use crate::model::ident;
use crate::oidc::{authorize_owner, ActionsClaims};
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
    let mut defaults = query_defaults(&query)?;
    if let ManifestAuth::Oidc(claims) = &auth {
        require_known_owner(&state, claims)?;
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

/// The query's repo, run and workflow, each checked (400 when bad).
fn query_defaults(query: &ManifestQuery) -> Result<ManifestDefaults, ApiError> {
    let bad = |e: ident::IdentError| ApiError::bad_request(format!("query parameter {e}"));
    let run_id = match query.run_id.as_deref() {
        Some(s) => {
            let n = s
                .parse::<u64>()
                .map_err(|_| ApiError::bad_request(format!("run_id {s:?} is not a number")))?;
            Some(ident::number("run_id", n).map_err(bad)?)
        }
        None => None,
    };
    if let Some(repo) = &query.repo {
        ident::repo(repo).map_err(bad)?;
    }
    if let Some(workflow) = &query.workflow {
        ident::workflow_name(workflow).map_err(bad)?;
    }
    Ok(ManifestDefaults {
        repo: query.repo.clone(),
        run_id,
        workflow: query.workflow.clone(),
    })
}

/// With an OIDC token: the token's repository owner must be an account the
/// App is installed on, or allowed by `OIDC_ALLOWED_OWNERS` (403 otherwise).
fn require_known_owner(state: &State, claims: &ActionsClaims) -> Result<(), ApiError> {
    let allowed = state
        .oidc
        .as_ref()
        .map(|v| v.config().allowed_owners.as_slice())
        .unwrap_or_default();
    let installed = installations::active_accounts(&state.store)
        .map_err(|e| ApiError::unavailable(format!("could not read the installations: {e}")))?;
    match authorize_owner(claims, allowed, &installed) {
        Ok(grant) => {
            tracing::debug!(repository = %claims.repository, ?grant, "OIDC owner accepted");
            Ok(())
        }
        Err(detail) => Err(ApiError::forbidden(detail)),
    }
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
        // The workflow's name is whatever its author wrote: one that fails the
        // boundary check is left out rather than spoiling every line.
        defaults.workflow = claims
            .workflow
            .clone()
            .filter(|w| ident::workflow_name(w).is_ok());
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
