//! The read API: outputs, one output with its history, a run's outcomes shaped
//! like `gh aw outcomes RUN --json`, and the report (the export is
//! `http::export`). Every endpoint authenticates through `Reader` (what it may
//! see) and takes the cuts of `ReadFilter` plus its own parameters; an unknown
//! parameter is a 400. The dashboard reads through the same functions
//! (`report_of`, `run_view`, `output_detail`, `admitted_outcomes`).
//!
//! Every answer is a type here (or the record's own), so the OpenAPI document
//! (`http::openapi`) is generated from what is sent, and the outcome record's
//! field names are the names everywhere (docs/export.md, "One vocabulary").

use std::collections::BTreeMap;

use axum::extract::{Path, State as StateExtractor};
use axum::routing::get;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::budget::ReadPermit;
use super::read::{QueryPairs, ReadFilter, Reader, RepoScope};
use super::{ApiError, Mount, State};
use crate::judge::assess::{transitions, Transition};
use crate::model::{ExecutionRecord, Observation, OutcomeRecord, OutcomeStatus};
use crate::read::line_survival::{line_survival, LineTotals};
use crate::read::report::{parse_window, Report, Totals};

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

/// A page of `GET /api/v1/outputs`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct OutputsPage {
    /// Outcome records, in output id order.
    pub items: Vec<OutcomeRecord>,
    /// Pass as `cursor=` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}

/// `GET /api/v1/outputs/{id}`: one output with its history.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OutputDetail {
    /// Null until the output is first evaluated.
    pub outcome: Option<OutcomeRecord>,
    pub execution: ExecutionRecord,
    /// Each change of verdict, with the observation that caused it.
    pub transitions: Vec<Transition>,
    /// The facts observed on the output's targets, in time order.
    #[schema(value_type = Vec<crate::http::openapi::ObservationDoc>)]
    pub observations: Vec<Observation>,
}

pub async fn list_outputs(
    StateExtractor(state): StateExtractor<State>,
    reader: Reader,
    _place: ReadPermit,
    QueryPairs(pairs): QueryPairs,
) -> Result<Json<OutputsPage>, ApiError> {
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
    Ok(Json(OutputsPage {
        items,
        next_cursor: next,
    }))
}

/// One output as `GET /api/v1/outputs/{id}` and the dashboard show it.
pub(crate) async fn output_detail(
    state: &State,
    reader: &Reader,
    filter: &ReadFilter,
    id: &str,
) -> Result<OutputDetail, ApiError> {
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
    Ok(OutputDetail {
        outcome: stored.outcome,
        execution: stored.execution,
        transitions: history,
        observations,
    })
}

pub async fn get_output(
    StateExtractor(state): StateExtractor<State>,
    reader: Reader,
    _place: ReadPermit,
    QueryPairs(pairs): QueryPairs,
    Path(id): Path<String>,
) -> Result<Json<OutputDetail>, ApiError> {
    let (filter, _) = ReadFilter::parse(&pairs, &[])?;
    Ok(Json(output_detail(&state, &reader, &filter, &id).await?))
}

/// One item of a run: the outcome record itself, and, for `/api/v1` only,
/// the names `gh aw outcomes RUN --json` gives the same facts (deprecated
/// aliases: read the record's names).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RunItem {
    #[serde(flatten)]
    pub record: OutcomeRecord,
    /// Deprecated alias of `safe_output_type`.
    #[serde(rename = "type")]
    #[schema(deprecated)]
    pub type_alias: String,
    /// Deprecated alias of `target.url`.
    #[schema(deprecated)]
    pub object_url: Option<String>,
    /// Deprecated alias of `target.number` (or `target.parent_number`).
    #[schema(deprecated)]
    pub object_number: Option<u64>,
    /// Deprecated alias of `target.repo`.
    #[schema(deprecated)]
    pub repo: Option<String>,
    /// Deprecated alias of `human_check_signal`.
    #[schema(deprecated)]
    pub signal: String,
    /// Deprecated alias of `notes`.
    #[schema(deprecated)]
    pub detail: String,
    /// Deprecated alias of `time_to_acceptance_hours`.
    #[schema(deprecated)]
    pub time_to_outcome_hours: Option<f64>,
    /// Deprecated alias of `actor_summary.visible_non_bot_actor_count`.
    #[schema(deprecated)]
    pub human_actor_count: u32,
    /// Deprecated alias of `evaluated_at`.
    #[schema(deprecated)]
    pub checked_at: DateTime<Utc>,
}

impl RunItem {
    fn of(o: &OutcomeRecord) -> RunItem {
        let target = o.target.as_ref();
        RunItem {
            type_alias: o.safe_output_type.clone(),
            object_url: target.and_then(|t| t.url.clone()),
            object_number: target.and_then(|t| t.number.or(t.parent_number)),
            repo: target.map(|t| t.repo.clone()),
            signal: o.human_check_signal.clone(),
            detail: o.notes.clone(),
            time_to_outcome_hours: o.time_to_acceptance_hours,
            human_actor_count: o.actor_summary.visible_non_bot_actor_count,
            checked_at: o.evaluated_at,
            record: o.clone(),
        }
    }
}

/// A run's counts: the report's totals (same names), and `accepted`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RunSummary {
    #[serde(flatten)]
    pub totals: Totals,
    /// Accepted at any strength (`accepted_strong + accepted_medium + accepted_weak`).
    pub accepted: u64,
    /// Deprecated alias of `total_safe_outputs`.
    #[schema(deprecated)]
    pub total: u64,
}

/// `GET /api/v1/runs/{owner}/{repo}/{run_id}`, shaped like
/// `gh aw outcomes RUN --json`: `{run_id, workflow, items, summary}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RunView {
    pub run_id: u64,
    pub repo: String,
    pub workflow: Option<String>,
    pub items: Vec<RunItem>,
    pub summary: RunSummary,
}

/// A run's outcomes shaped like `gh aw outcomes RUN --json`; `None` when the
/// reader sees no output of it under `filter`.
pub(crate) async fn run_view(
    state: &State,
    reader: &Reader,
    filter: &ReadFilter,
    repo: &str,
    run_id: u64,
) -> Result<Option<RunView>, ApiError> {
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
    let (totals, _) = Report::overall(&outcomes);
    let accepted = outcomes
        .iter()
        .filter(|o| o.outcome_status == OutcomeStatus::Accepted)
        .count() as u64;
    Ok(Some(RunView {
        run_id,
        repo: repo.to_string(),
        workflow: outcomes.iter().find_map(|o| o.workflow.clone()),
        items: outcomes.iter().map(RunItem::of).collect(),
        summary: RunSummary {
            total: totals.total_safe_outputs,
            totals,
            accepted,
        },
    }))
}

pub async fn run_outcomes(
    StateExtractor(state): StateExtractor<State>,
    reader: Reader,
    _place: ReadPermit,
    QueryPairs(pairs): QueryPairs,
    Path((owner, repo, run_id)): Path<(String, String, u64)>,
) -> Result<Json<RunView>, ApiError> {
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
