//! `POST /api/v1/manifests`: gh-aw `safe-output-items.jsonl` from a workflow.
//! Lines that parse are stored (durably, before the answer); lines that do not
//! are listed in the answer with why (the first `ECHO_REJECTED`, and a count).
//! The body is streamed (`manifest_stream`): memory does not grow with it.
//! Caps: `Limits::manifest_max_lines` items (more: 413, nothing stored) and
//! `Limits::manifest_max_line_bytes` per line (a longer line is rejected).
//!
//! Auth: the API_TOKEN (any repository), or a GitHub Actions OIDC token whose
//! repository owner has an installation of this App or is in
//! `OIDC_ALLOWED_OWNERS` (else 403: any repository on github.com can mint a
//! token for our audience), and which may only write to its own
//! `repository`: a line (or target) elsewhere makes the whole request 403 and
//! nothing is stored. Its `run_id` and `workflow` claims stand in for missing
//! query parameters.
//!
//! Tenancy (`ingest::tenancy`): the post's `repo` (the query's, or the OIDC
//! token's) is the run's repository; a line whose own repository or target
//! lies outside that repository's installation (or, with none known, under
//! another owner) is rejected with the reason and counted in
//! `outside_installation`; nothing of it is stored. Without a `repo` each
//! line is its own run's.
//!
//! The query is read only once the caller is authenticated (a 401 comes
//! before any 400). Its `repo`, `run_id` and `workflow` are checked like a line's
//! (`model::ident`): a bad one is a 400 and nothing is stored. A post with
//! no `run_id` (from the query or the OIDC token) is a 400 too.

use axum::body::Body;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State as StateExtractor};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::from_fn_with_state;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;

use super::body::{
    check_declared_length, require_content_type, require_manifest_auth, ManifestAuth,
};
use super::manifest_stream::StreamedManifest;
use super::{limits, ApiError, Mount, State};
use crate::github::installations;
use crate::ingest::manifest::{LineParser, ManifestDefaults};
use crate::ingest::oidc::{authorize_owner, ActionsClaims};
use crate::model::{ident, ExecutionRecord};
use crate::store::inbox::{Enqueued, InboxItem};

/// Media types a manifest may come as.
const MANIFEST_TYPES: &[&str] = &[
    "application/x-ndjson",
    "application/jsonl",
    "application/json-lines",
    "text/plain",
];

#[derive(Debug, Deserialize)]
pub(crate) struct ManifestQuery {
    repo: Option<String>,
    run_id: Option<String>,
    workflow: Option<String>,
}

/// `POST /api/v1/manifests`, its body streamed under the shared budget.
pub fn routes(mount: &Mount) -> Router<State> {
    let guard = from_fn_with_state(mount.streamed(), limits::guard);
    Router::new().route("/api/v1/manifests", post(ingest).layer(guard))
}

pub async fn ingest(
    StateExtractor(state): StateExtractor<State>,
    query: Result<Query<ManifestQuery>, QueryRejection>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    // Who asks comes first: a stranger learns nothing about the query.
    let auth = require_manifest_auth(&headers, &state).await?;
    let Query(query) = query
        .map_err(|e| ApiError::bad_request(format!("malformed query string: {}", e.body_text())))?;
    require_content_type(&headers, MANIFEST_TYPES)?;
    check_declared_length(&headers)?;
    let mut defaults = query_defaults(&query)?;
    if let ManifestAuth::Oidc(claims) = &auth {
        require_known_owner(&state, claims)?;
        defaults = oidc_defaults(defaults, claims)?;
    }
    if defaults.run_id.is_none() {
        // Output ids are numbered within a run: without one, a second
        // manifest would be taken for the first.
        return Err(ApiError::bad_request(
            "run_id is required: pass ?run_id= (the workflow run the manifest came from)",
        ));
    }
    let now = state.shared.clock.now();
    let salt = format!(
        "{:?}|{:?}|{:?}|",
        defaults.repo, defaults.run_id, defaults.workflow
    );
    let limits = &state.limits;
    let parser = LineParser::new(defaults, now, limits.manifest_max_line_bytes);
    let check = |record: &ExecutionRecord| match &auth {
        ManifestAuth::Oidc(claims) => require_own_repo(record, claims),
        ManifestAuth::ApiToken => Ok(()),
    };
    let mut manifest = StreamedManifest::new(&state.store, limits, parser, &salt, &check)?;
    let (status, duplicate) = match store_manifest(&state, &mut manifest, body, now).await {
        Ok(answer) => answer,
        Err(refusal) => return Ok(refusal),
    };
    let (outputs, omitted) = manifest.outputs_json();
    Ok((
        status,
        Json(json!({
            "accepted": manifest.accepted,
            "outputs": outputs,
            "outputs_omitted": omitted,
            "rejected": manifest.rejected_json(),
            "rejected_total": manifest.rejected_total,
            "outside_installation": manifest.outside_installation_total(),
            "duplicate": duplicate,
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

/// Read the body into staged chunks and commit them as one inbox item.
/// 202: stored; 200: a duplicate (nothing new stored); an error: the answer
/// refusing it.
async fn store_manifest(
    state: &State,
    manifest: &mut StreamedManifest<'_>,
    body: Body,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<(StatusCode, bool), Response> {
    if let Err(e) = manifest.read(body).await {
        manifest.discard().await;
        return Err(e.into_response());
    }
    for (kind, n) in &manifest.outside_installation {
        let at = crate::ingest::tenancy::Where::Manifest;
        state.shared.tenancy.add(at, kind, *n as u64);
    }
    if manifest.accepted == 0 && manifest.rejected_total > 0 {
        manifest.discard().await;
        let answer = json!({
            "error": "bad_request",
            "detail": "no line of the manifest could be used",
            "accepted": 0,
            "rejected": manifest.rejected_json(),
            "rejected_total": manifest.rejected_total,
            "outside_installation": manifest.outside_installation_total(),
        });
        return Err((StatusCode::BAD_REQUEST, Json(answer)).into_response());
    }
    let item = InboxItem::ManifestChunks {
        key: manifest.key(),
        received_at: now,
        upload: manifest.upload,
        chunks: manifest.chunks,
    };
    // From here the writer may commit the upload: only it decides. A failed
    // write leaves the chunks uncommitted, for the sweep once its lease runs out.
    manifest.keep().await.map_err(IntoResponse::into_response)?;
    match state.writer.enqueue(item).await {
        Ok(Enqueued::Stored(_) | Enqueued::Logged) => Ok((StatusCode::ACCEPTED, false)),
        Ok(Enqueued::Duplicate) => {
            manifest.discard().await;
            Ok((StatusCode::OK, true))
        }
        Err(e) => Err(ApiError::unavailable(e.to_string()).into_response()),
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
fn require_own_repo(record: &ExecutionRecord, claims: &ActionsClaims) -> Result<(), ApiError> {
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
    Ok(())
}

/// GitHub repository names are case-insensitive.
fn same_repo(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}
