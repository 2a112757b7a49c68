//! The read API: outputs, one output with its history, a run's outcomes shaped
//! like `gh aw outcomes RUN --json`, and the report (the export is
//! `export::http`).

use axum::extract::{Path, Query, State as StateExtractor};
use axum::http::HeaderMap;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::body::require_token;
use super::{ApiError, State};
use crate::assess::transitions;
use crate::model::{EvidenceStrength, OutcomeRecord, OutcomeStatus};
use crate::report::{parse_window, Report};
use crate::store::{Store, StoredOutput};

const DEFAULT_PAGE: usize = 100;
const MAX_PAGE: usize = 1000;

#[derive(Debug, Deserialize)]
pub struct ListQuery {
    repo: Option<String>,
    #[serde(rename = "type")]
    output_type: Option<String>,
    status: Option<String>,
    strength: Option<String>,
    cursor: Option<String>,
    limit: Option<usize>,
}

pub async fn list_outputs(
    StateExtractor(state): StateExtractor<State>,
    reader: super::read::Reader,
    Query(q): Query<ListQuery>,
) -> Result<Json<Value>, ApiError> {
    let status = match q.status.as_deref() {
        Some(s) => Some(
            OutcomeStatus::parse(s)
                .ok_or_else(|| ApiError::bad_request(format!("unknown status {s:?}")))?,
        ),
        None => None,
    };
    let strength = match q.strength.as_deref() {
        Some(s) => Some(
            EvidenceStrength::parse(s)
                .ok_or_else(|| ApiError::bad_request(format!("unknown strength {s:?}")))?,
        ),
        None => None,
    };
    let limit = q.limit.unwrap_or(DEFAULT_PAGE).clamp(1, MAX_PAGE);
    let prefix = q
        .repo
        .as_deref()
        .map(|r| format!("{r}:"))
        .unwrap_or_default();
    let store = state.store.clone();
    let (items, next) = tokio::task::spawn_blocking(move || -> Result<_, ApiError> {
        let mut items = Vec::new();
        let mut last = None;
        let mut more = false;
        for stored in store.outputs(&prefix, q.cursor.as_deref()) {
            let stored = stored?;
            let Some(outcome) = stored.outcome else {
                continue;
            };
            if !reader.scope.allows(&stored.execution.repo) {
                continue;
            }
            if q.output_type
                .as_deref()
                .is_some_and(|t| t != outcome.safe_output_type)
                || status.is_some_and(|s| s != outcome.outcome_status)
                || strength.is_some_and(|s| s != outcome.evidence_strength)
            {
                continue;
            }
            if items.len() == limit {
                more = true;
                break;
            }
            last = Some(stored.execution.id.clone());
            items.push(outcome);
        }
        Ok((items, if more { last } else { None }))
    })
    .await
    .map_err(|e| ApiError::internal(e.to_string()))??;
    Ok(Json(json!({"items": items, "next_cursor": next})))
}

pub async fn get_output(
    StateExtractor(state): StateExtractor<State>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    require_token(&headers, &state)?;
    let stored = state
        .store
        .output(&id)?
        .ok_or_else(|| ApiError::not_found(format!("no output {id:?}")))?;
    let watch = stored.execution.watch_keys();
    let observations = state.store.observations(&watch)?;
    let history = transitions(&stored.execution, &observations, state.shared.clock.now());
    Ok(Json(json!({
        "outcome": stored.outcome,
        "execution": stored.execution,
        "transitions": history,
        "observations": observations,
    })))
}

/// One item of `gh aw outcomes RUN --json`.
fn gh_aw_item(o: &OutcomeRecord) -> Value {
    json!({
        "safe_output_id": o.safe_output_id,
        "type": o.safe_output_type,
        "object_url": o.target.as_ref().and_then(|t| t.url.clone()),
        "object_number": o.target.as_ref().and_then(|t| t.number.or(t.parent_number)),
        "repo": o.target.as_ref().map(|t| t.repo.clone()),
        "outcome_status": o.outcome_status,
        "evidence_strength": o.evidence_strength,
        "signal": o.human_check_signal,
        "detail": o.notes,
        "time_to_outcome_hours": o.time_to_acceptance_hours,
        "human_actor_count": o.actor_summary.visible_non_bot_actor_count,
        "created_at": o.created_at,
        "checked_at": o.evaluated_at,
    })
}

pub async fn run_outcomes(
    StateExtractor(state): StateExtractor<State>,
    Path((owner, repo, run_id)): Path<(String, String, u64)>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    require_token(&headers, &state)?;
    let prefix = format!("{owner}/{repo}:{run_id}:");
    let outcomes: Vec<OutcomeRecord> = collect_outcomes(&state.store, &prefix)?;
    if outcomes.is_empty() {
        return Err(ApiError::not_found(format!(
            "no outputs recorded for {owner}/{repo} run {run_id}"
        )));
    }
    let count = |s: OutcomeStatus| outcomes.iter().filter(|o| o.outcome_status == s).count();
    let accepted_with = |s: EvidenceStrength| {
        outcomes
            .iter()
            .filter(|o| o.outcome_status == OutcomeStatus::Accepted && o.evidence_strength == s)
            .count()
    };
    Ok(Json(json!({
        "run_id": run_id,
        "workflow": outcomes.iter().find_map(|o| o.workflow.clone()),
        "items": outcomes.iter().map(gh_aw_item).collect::<Vec<_>>(),
        "summary": {
            "total": outcomes.len(),
            "accepted": count(OutcomeStatus::Accepted),
            "rejected": count(OutcomeStatus::Rejected),
            "pending": count(OutcomeStatus::Pending),
            "ignored": count(OutcomeStatus::Ignored),
            "skipped": count(OutcomeStatus::Skipped),
            "unknown": count(OutcomeStatus::Unknown),
            "accepted_strong": accepted_with(EvidenceStrength::Strong),
            "accepted_medium": accepted_with(EvidenceStrength::Medium),
            "accepted_weak": accepted_with(EvidenceStrength::Weak),
            "fallback_exists_only_count": outcomes.iter().filter(|o| o.is_exists_only()).count(),
        },
    })))
}

fn collect_outcomes(store: &Store, prefix: &str) -> Result<Vec<OutcomeRecord>, ApiError> {
    let mut out = Vec::new();
    for stored in store.outputs(prefix, None) {
        let StoredOutput { outcome, .. } = stored?;
        out.extend(outcome);
    }
    Ok(out)
}

#[derive(Debug, Deserialize)]
pub struct ReportQuery {
    repo: Option<String>,
    window: Option<String>,
}

pub async fn report(
    StateExtractor(state): StateExtractor<State>,
    Query(q): Query<ReportQuery>,
    headers: HeaderMap,
) -> Result<Json<Report>, ApiError> {
    require_token(&headers, &state)?;
    let window = match q.window.as_deref() {
        Some(w) => Some(parse_window(w).ok_or_else(|| {
            ApiError::bad_request(format!("window {w:?} is not one of 1h, 24h, 7d, 30d"))
        })?),
        None => None,
    };
    let store = state.store.clone();
    let now = state.shared.clock.now();
    let report = tokio::task::spawn_blocking(move || -> Result<Report, ApiError> {
        let prefix = q
            .repo
            .as_deref()
            .map(|r| format!("{r}:"))
            .unwrap_or_default();
        let outcomes = collect_outcomes(&store, &prefix)?;
        Ok(Report::build(&outcomes, q.repo.as_deref(), window, now))
    })
    .await
    .map_err(|e| ApiError::internal(e.to_string()))??;
    Ok(Json(report))
}
