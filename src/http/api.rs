//! The read API: outputs, one output with its history, a run's outcomes shaped
//! like `gh aw outcomes RUN --json`, and the report (the export is
//! `http::export`). Every endpoint authenticates through `Reader` (what it may
//! see) and takes the cuts of `ReadFilter` plus its own parameters; an unknown
//! parameter is a 400. The dashboard reads through the same functions
//! (`report_of`, `run_view`, `output_detail`, `admitted_outcomes`).

use std::collections::BTreeMap;

use axum::extract::{Path, State as StateExtractor};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};

use super::budget::ReadPermit;
use super::read::{QueryPairs, ReadFilter, Reader, RepoScope};
use super::{ApiError, Mount, State};
use crate::judge::assess::transitions;
use crate::model::{EvidenceStrength, OutcomeRecord, OutcomeStatus};
use crate::read::line_survival::{line_survival, LineTotals};
use crate::read::report::{parse_window, Report};

const DEFAULT_PAGE: usize = 100;
pub const MAX_PAGE: usize = 1000;
/// Outputs a page of `GET /api/v1/outputs` looks at, at most: when the cuts
/// leave fewer than a page among them, the page is shorter and its
/// `next_cursor` goes on from where it stopped.
pub const PAGE_SCAN: usize = 20_000;

/// The read API's endpoints (an output's `POST` is `http::reconcile`'s).
pub fn routes(_: &Mount) -> Router<State> {
    Router::new()
        .route("/api/v1/outputs", get(list_outputs))
        .route("/api/v1/outputs/{*id}", get(get_output))
        .route("/api/v1/runs/{owner}/{repo}/{run_id}", get(run_outcomes))
        .route("/api/v1/report", get(report))
}

pub async fn list_outputs(
    StateExtractor(state): StateExtractor<State>,
    reader: Reader,
    _place: ReadPermit,
    QueryPairs(pairs): QueryPairs,
) -> Result<Json<Value>, ApiError> {
    let (filter, rest) = ReadFilter::parse(&pairs, &["cursor", "limit"])?;
    let limit = match rest.get("limit") {
        Some(l) => l
            .parse::<usize>()
            .map_err(|_| ApiError::bad_request(format!("limit {l:?} is not a number")))?,
        None => DEFAULT_PAGE,
    }
    .clamp(1, MAX_PAGE);
    let cursor = rest.get("cursor").cloned();
    let store = state.store.clone();
    let (items, next) = tokio::task::spawn_blocking(move || -> Result<_, ApiError> {
        Ok(crate::read::rollup::page_of_outputs(
            &store,
            &filter,
            &reader.scope,
            cursor.as_deref(),
            limit,
            PAGE_SCAN,
        )?)
    })
    .await
    .map_err(|e| ApiError::internal(e.to_string()))??;
    Ok(Json(json!({"items": items, "next_cursor": next})))
}

/// One output as `GET /api/v1/outputs/{id}` and the dashboard show it.
pub(crate) async fn output_detail(
    state: &State,
    reader: &Reader,
    filter: &ReadFilter,
    id: &str,
) -> Result<Value, ApiError> {
    let missing = || ApiError::not_found(format!("no output {id:?}"));
    let stored = state.store.output(id)?.ok_or_else(missing)?;
    // Outside the reader's scope looks exactly like absent. An output not
    // yet evaluated is shown (outcome null) unless a cut is asked for.
    let visible = reader.scope.sees(&stored.execution)
        && (*filter == ReadFilter::default() || filter.admits(&stored, &reader.scope));
    if !visible {
        return Err(missing());
    }
    let watch = stored.execution.watch_keys();
    let observations = state.store.observations(&watch)?;
    let history = transitions(&stored.execution, &observations, state.shared.clock.now());
    Ok(json!({
        "outcome": stored.outcome,
        "execution": stored.execution,
        "transitions": history,
        "observations": observations,
    }))
}

pub async fn get_output(
    StateExtractor(state): StateExtractor<State>,
    reader: Reader,
    _place: ReadPermit,
    QueryPairs(pairs): QueryPairs,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let (filter, _) = ReadFilter::parse(&pairs, &[])?;
    Ok(Json(output_detail(&state, &reader, &filter, &id).await?))
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

/// A run's outcomes shaped like `gh aw outcomes RUN --json`; `None` when the
/// reader sees no output of it under `filter`.
pub(crate) async fn run_view(
    state: &State,
    reader: &Reader,
    filter: &ReadFilter,
    repo: &str,
    run_id: u64,
) -> Result<Option<Value>, ApiError> {
    let run_filter = ReadFilter {
        repo: Some(repo.to_string()),
        ..filter.clone()
    };
    if filter.repo.as_deref().is_some_and(|r| r != repo) || !reader.scope.allows(repo) {
        return Ok(None);
    }
    let prefix = format!("{repo}:{run_id}:");
    let outcomes = collect(state, &run_filter, &reader.scope, prefix).await?;
    if outcomes.is_empty() {
        return Ok(None);
    }
    let count = |s: OutcomeStatus| outcomes.iter().filter(|o| o.outcome_status == s).count();
    let accepted_with = |s: EvidenceStrength| {
        outcomes
            .iter()
            .filter(|o| o.outcome_status == OutcomeStatus::Accepted && o.evidence_strength == s)
            .count()
    };
    Ok(Some(json!({
        "run_id": run_id,
        "repo": repo,
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

pub async fn run_outcomes(
    StateExtractor(state): StateExtractor<State>,
    reader: Reader,
    _place: ReadPermit,
    QueryPairs(pairs): QueryPairs,
    Path((owner, repo, run_id)): Path<(String, String, u64)>,
) -> Result<Json<Value>, ApiError> {
    let (filter, _) = ReadFilter::parse(&pairs, &[])?;
    let repo = format!("{owner}/{repo}");
    run_view(&state, &reader, &filter, &repo, run_id)
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::not_found(format!("no outputs recorded for {repo} run {run_id}")))
}

/// The outcomes under `prefix` that pass `filter` and `scope`, read off the
/// async workers.
async fn collect(
    state: &State,
    filter: &ReadFilter,
    scope: &RepoScope,
    prefix: String,
) -> Result<Vec<OutcomeRecord>, ApiError> {
    let store = state.store.clone();
    let (filter, scope) = (filter.clone(), scope.clone());
    tokio::task::spawn_blocking(move || -> Result<Vec<OutcomeRecord>, ApiError> {
        let mut out = Vec::new();
        for stored in filter.scan(&store, &scope, &prefix, None) {
            out.extend(stored?.outcome);
        }
        Ok(out)
    })
    .await
    .map_err(|e| ApiError::internal(e.to_string()))?
}

/// Run `read` on the blocking pool with the store, the cuts and the scope.
pub(crate) async fn blocking<T: Send + 'static>(
    state: &State,
    filter: &ReadFilter,
    scope: &RepoScope,
    read: impl FnOnce(&crate::store::Store, &ReadFilter, &RepoScope) -> crate::store::Result<T>
        + Send
        + 'static,
) -> Result<T, ApiError> {
    let store = state.store.clone();
    let (filter, scope) = (filter.clone(), scope.clone());
    tokio::task::spawn_blocking(move || read(&store, &filter, &scope))
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?
        .map_err(ApiError::from)
}

/// The report of what `reader` may see under `filter`, at `window`.
pub(crate) async fn report_of(
    state: &State,
    reader: &Reader,
    filter: &ReadFilter,
    window: Option<&str>,
) -> Result<Report, ApiError> {
    let window = match window {
        Some(w) => Some(parse_window(w).ok_or_else(|| {
            ApiError::bad_request(format!("window {w:?} is not one of 1h, 24h, 7d, 30d"))
        })?),
        None => None,
    };
    let now = state.shared.clock.now();
    let mut report = blocking(state, filter, &reader.scope, move |store, f, scope| {
        crate::read::rollup::report(store, f, scope, window, now)
    })
    .await?;
    report.line_survival = line_survival_of(state, filter, &reader.scope).await?;
    Ok(report)
}

/// One row of the workflows table.
pub(crate) struct WorkflowRow {
    pub name: String,
    pub totals: crate::read::report::Totals,
    pub rates: crate::read::report::TypeStats,
    /// `read::rollup::trend_of` its last four weeks against the four before.
    pub trend: &'static str,
}

/// The workflows `reader` sees under `filter`, by name.
pub(crate) async fn workflow_rows(
    state: &State,
    reader: &Reader,
    filter: &ReadFilter,
) -> Result<Vec<WorkflowRow>, ApiError> {
    let now = state.shared.clock.now();
    let (sums, trends) = blocking(state, filter, &reader.scope, move |store, f, scope| {
        Ok((
            crate::read::rollup::by_workflow(store, f, scope)?,
            crate::read::rollup::trends(store, f, scope, now)?,
        ))
    })
    .await?;
    Ok(sums
        .into_iter()
        .map(|(name, s)| {
            let (totals, rates) = s.overall();
            let trend = trends.get(&name).copied().unwrap_or("–");
            WorkflowRow {
                name,
                totals,
                rates,
                trend,
            }
        })
        .collect())
}

/// Runs shown on a workflow's page, at most.
pub const RUNS_SHOWN: usize = 50;

/// The most recent runs `reader` sees under `filter` (`read::rollup::recent_runs`),
/// and whether older ones exist unshown.
pub(crate) async fn recent_runs(
    state: &State,
    reader: &Reader,
    filter: &ReadFilter,
) -> Result<(Vec<crate::read::rollup::RunRow>, bool), ApiError> {
    let now = state.shared.clock.now();
    blocking(state, filter, &reader.scope, move |store, f, scope| {
        crate::read::rollup::recent_runs(store, f, scope, now, RUNS_SHOWN, PAGE_SCAN)
    })
    .await
}

/// Line survival per workflow of what `scope` may see under `filter`.
pub(crate) async fn line_survival_of(
    state: &State,
    filter: &ReadFilter,
    scope: &RepoScope,
) -> Result<BTreeMap<String, LineTotals>, ApiError> {
    blocking(state, filter, scope, line_survival).await
}

pub async fn report(
    StateExtractor(state): StateExtractor<State>,
    reader: Reader,
    _place: ReadPermit,
    QueryPairs(pairs): QueryPairs,
) -> Result<Json<Report>, ApiError> {
    let (filter, rest) = ReadFilter::parse(&pairs, &["window"])?;
    let window = rest.get("window").map(String::as_str);
    Ok(Json(report_of(&state, &reader, &filter, window).await?))
}
