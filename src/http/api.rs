//! The read API: outputs, one output with its history, a run's outcomes shaped
//! like `gh aw outcomes RUN --json`, and the report (the export is
//! `http::export`). Every endpoint authenticates through `Reader` (what it may
//! see) and takes the cuts of `ReadFilter` plus its own parameters; an unknown
//! parameter is a 400. The dashboard reads through the same functions
//! (`report_of`, `run_view`, `output_detail`, `admitted_outcomes`).
//!
//! The report reads the rollups (`read::rollup`), at any window, `latest`
//! or `mature`. The dashboard's pages that need the outputs themselves
//! (lists, sparklines, the trend at one maturity) read them through
//! `admitted_outcomes`: only the repositories the reader's scope sees, and
//! never more than `SCAN_LIMIT` outputs (a 503 asking for narrower cuts).
//!
//! Every answer is a type here (or the record's own), so the OpenAPI document
//! (`http::openapi`) is generated from what is sent, and the outcome record's
//! field names are the names everywhere (docs/export.md, "One vocabulary").

use std::collections::BTreeMap;

use axum::extract::Path;
use axum::routing::get;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::budget::blocking;
use super::read::{QueryPairs, Read, ReadFilter, Reader, RepoScope};
use super::{ApiError, Mount, State};
use crate::judge::assess::{judged_as_of, transitions, Transition};
use crate::model::{ExecutionRecord, Observation, OutcomeRecord, OutcomeStatus};
use crate::read::line_survival::{line_survival, LineTotals};
use crate::read::report::{awaiting, parse_window, schedule, Report, Schedule, Totals};

const DEFAULT_PAGE: usize = 100;
pub(crate) const MAX_PAGE: usize = 1000;
/// Outputs a page of `GET /api/v1/outputs` looks at, at most: when the cuts
/// leave fewer than a page among them, the page is shorter and its
/// `next_cursor` goes on from where it stopped.
pub(crate) const PAGE_SCAN: usize = 20_000;
/// Outputs a dashboard page that reads the outputs themselves
/// (`admitted_outcomes`) holds at most: past it the page asks for
/// narrower cuts instead of reading on.
pub(crate) const SCAN_LIMIT: usize = 5 * PAGE_SCAN;

/// The read API's endpoints (`GET /api/v1/outputs/{id}`, `get_output`, is
/// routed by `http::reconcile`, which shares its route).
pub fn routes(_: &Mount) -> Router<State> {
    Router::new()
        .route("/api/v1/outputs", get(list_outputs))
        .route("/api/v1/runs/{owner}/{repo}/{run_id}", get(run_outcomes))
        .route("/api/v1/report", get(report))
        .route("/api/v1/me", get(me))
}

/// A page of `GET /api/v1/outputs`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct OutputsPage {
    /// Outcome records, in output id order, each with its next window and
    /// when it is due (or `verdict_final`).
    pub items: Vec<crate::read::listed::ListedOutput>,
    /// Pass as `cursor=` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}

/// `GET /api/v1/outputs/{id}`: one output with its history.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct OutputDetail {
    /// Null until the output is first evaluated.
    pub outcome: Option<OutcomeRecord>,
    pub execution: ExecutionRecord,
    /// Where the output stands in its windows: the next one and when it is
    /// due, and whether the verdict is final.
    pub schedule: Schedule,
    /// Each change of verdict, with the observation that caused it.
    pub transitions: Vec<Transition>,
    /// The facts observed on the output's targets, in time order.
    #[schema(value_type = Vec<ObservationDoc>)]
    pub observations: Vec<Observation>,
}

pub(crate) async fn list_outputs(
    Read(state, reader, ..): Read<Reader>,
    QueryPairs(pairs): QueryPairs,
) -> Result<Json<OutputsPage>, ApiError> {
    let (filter, rest) = ReadFilter::parse(&pairs, &["cursor", "limit"])?;
    let limit = match rest.get("limit") {
        // The document's `limit`: an int64 from 0; past 1000 it is 1000.
        Some(l) => match l.parse::<i64>() {
            Ok(n) if n >= 0 => usize::try_from(n).unwrap_or(MAX_PAGE),
            _ => {
                return Err(ApiError::bad_request(format!(
                    "limit {l:?} is not a whole number from 0 to {}",
                    i64::MAX
                )))
            }
        },
        None => DEFAULT_PAGE,
    }
    .clamp(1, MAX_PAGE);
    let cursor = rest.get("cursor").cloned();
    let store = state.store.clone();
    let (items, next) = state
        .reads
        .run(move || -> Result<_, ApiError> {
            Ok(crate::read::rollup::page_of_outputs(
                &store,
                &filter,
                &reader.scope,
                cursor.as_deref(),
                limit,
                PAGE_SCAN,
            )?)
        })
        .await??;
    Ok(Json(OutputsPage {
        items: items
            .into_iter()
            .map(crate::read::listed::ListedOutput::of)
            .collect(),
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
    let now = judged_as_of(stored.outcome.as_ref(), state.shared.clock.now());
    let history = transitions(&stored.execution, &observations, now);
    let windows = stored
        .outcome
        .as_ref()
        .map(|o| o.windows.clone())
        .unwrap_or_default();
    Ok(OutputDetail {
        schedule: schedule(stored.execution.executed_at, &windows),
        outcome: stored.outcome,
        execution: stored.execution,
        transitions: history,
        observations,
    })
}

pub(crate) async fn get_output(
    Read(state, reader, ..): Read<Reader>,
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
pub(crate) struct RunItem {
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
pub(crate) struct RunSummary {
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
pub(crate) struct RunView {
    pub run_id: u64,
    pub repo: String,
    pub workflow: Option<String>,
    pub items: Vec<RunItem>,
    pub summary: RunSummary,
    /// Outputs by the window they await next (`1h`, `24h`, `7d`, `30d`),
    /// and under `final` those whose verdict is final.
    pub awaiting: BTreeMap<String, u64>,
}

/// The outcomes of one run that `reader` sees under `filter` (empty when
/// none).
pub(crate) async fn run_records(
    state: &State,
    reader: &Reader,
    filter: &ReadFilter,
    repo: &str,
    run_id: u64,
) -> Result<Vec<OutcomeRecord>, ApiError> {
    if filter.repo.as_deref().is_some_and(|r| r != repo) || !reader.scope.allows(repo) {
        return Ok(Vec::new());
    }
    let run_filter = ReadFilter {
        repo: Some(repo.to_string()),
        ..filter.clone()
    };
    let prefix = format!("{repo}:{run_id}:");
    collect(state, &run_filter, &reader.scope, prefix).await
}

/// The run view of `outcomes`, all of `repo`'s run `run_id`.
pub(crate) fn run_view_of(repo: &str, run_id: u64, outcomes: &[OutcomeRecord]) -> RunView {
    let (totals, _) = Report::overall(outcomes);
    let accepted = outcomes
        .iter()
        .filter(|o| o.outcome_status == OutcomeStatus::Accepted)
        .count() as u64;
    RunView {
        run_id,
        repo: repo.to_string(),
        workflow: outcomes.iter().find_map(|o| o.workflow.clone()),
        items: outcomes.iter().map(RunItem::of).collect(),
        summary: RunSummary {
            total: totals.total_safe_outputs,
            totals,
            accepted,
        },
        awaiting: awaiting(outcomes)
            .into_iter()
            .map(|(w, n)| (w.to_string(), n))
            .collect(),
    }
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
    let outcomes = run_records(state, reader, filter, repo, run_id).await?;
    Ok((!outcomes.is_empty()).then(|| run_view_of(repo, run_id, &outcomes)))
}

pub(crate) async fn run_outcomes(
    Read(state, reader, ..): Read<Reader>,
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
    state
        .reads
        .run(move || -> Result<Vec<OutcomeRecord>, ApiError> {
            let mut out = Vec::new();
            for stored in filter.scan(&store, &scope, &prefix, None) {
                out.extend(stored?.outcome);
            }
            Ok(out)
        })
        .await?
}

/// The outcomes `scope` may see under `filter`, read from the outputs
/// themselves: only the repositories the scope sees (`read::rollup::
/// repositories`), at most `SCAN_LIMIT` of them (past it, a 503 asking for
/// narrower cuts: memory stays bounded).
pub(crate) async fn admitted_outcomes(
    state: &State,
    filter: &ReadFilter,
    scope: &RepoScope,
) -> Result<Vec<OutcomeRecord>, ApiError> {
    let store = state.store.clone();
    let (filter, scope) = (filter.clone(), scope.clone());
    state.reads.run(move || -> Result<Vec<OutcomeRecord>, ApiError> {
        let prefixes = crate::read::rollup::output_prefixes(&store, &filter, &scope)?;
        let mut out = Vec::new();
        for prefix in prefixes {
            for stored in filter.scan(&store, &scope, &prefix, None) {
                out.extend(stored?.outcome);
                if out.len() > SCAN_LIMIT {
                    return Err(ApiError::unavailable(format!(
                        "more than {SCAN_LIMIT} outputs under these cuts; narrow them (since, until, repo, workflow) to read them one by one"
                    )));
                }
            }
        }
        Ok(out)
    })
    .await?
}

/// The window of a report's `window=`: a checkpoint name, `mature`, or
/// `None` for `latest` (each output's latest outcome, the default).
fn report_window(window: Option<&str>) -> Result<Option<&'static str>, ApiError> {
    match window {
        None | Some("latest") => Ok(None),
        Some("mature") => Ok(Some("mature")),
        Some(w) => parse_window(w).map(Some).ok_or_else(|| {
            ApiError::bad_request(format!(
                "window {w:?} is not one of 1h, 24h, 7d, 30d, latest, mature"
            ))
        }),
    }
}

/// The report of what `reader` may see under `filter`, at `window`: a
/// checkpoint name, `latest` (the default: each output's latest outcome) or
/// `mature` (the latest window every output in scope has reached), read
/// from the rollups.
pub(crate) async fn report_of(
    state: &State,
    reader: &Reader,
    filter: &ReadFilter,
    window: Option<&str>,
) -> Result<Report, ApiError> {
    let window = report_window(window)?;
    let now = state.shared.clock.now();
    let mut report = blocking(state, filter, &reader.scope, move |store, f, scope| {
        crate::read::rollup::report(store, f, scope, window, now)
    })
    .await?;
    report.line_survival = line_survival_of(state, filter, &reader.scope).await?;
    Ok(report)
}

/// The rollup summary of what `scope` may see under `filter`
/// (`read::rollup::summary`: report, windows awaited, the form's choices),
/// at a cost set by the cells in range, never by the outputs in it.
pub(crate) async fn summary_of(
    state: &State,
    filter: &ReadFilter,
    scope: &RepoScope,
) -> Result<crate::read::rollup::Summary, ApiError> {
    let now = state.shared.clock.now();
    blocking(state, filter, scope, move |store, f, scope| {
        crate::read::rollup::summary(store, f, scope, None, now)
    })
    .await
}

/// Runs shown on a workflow's page, at most.
pub(crate) const RUNS_SHOWN: usize = 50;

/// Line survival per workflow of what `scope` may see under `filter`.
pub(crate) async fn line_survival_of(
    state: &State,
    filter: &ReadFilter,
    scope: &RepoScope,
) -> Result<BTreeMap<String, LineTotals>, ApiError> {
    blocking(state, filter, scope, line_survival).await
}

pub async fn report(
    Read(state, reader, ..): Read<Reader>,
    QueryPairs(pairs): QueryPairs,
) -> Result<Json<Report>, ApiError> {
    let (filter, rest) = ReadFilter::parse(&pairs, &["window"])?;
    let window = rest.get("window").map(String::as_str);
    Ok(Json(report_of(&state, &reader, &filter, window).await?))
}

/// The issue or PR number an output's target is, or sits on.
pub(crate) fn thread_of(t: &crate::model::Target) -> Option<u64> {
    if t.kind.is_thread() {
        t.number
    } else {
        t.parent_number
    }
}

/// The title of each issue or PR named in `threads` (`(repo, number)`), from
/// its latest snapshot that carries one.
pub(crate) async fn thread_titles(
    state: &State,
    threads: std::collections::BTreeSet<(String, u64)>,
) -> Result<BTreeMap<(String, u64), String>, ApiError> {
    let store = state.store.clone();
    state
        .reads
        .run(move || -> Result<_, ApiError> {
            let mut titles = BTreeMap::new();
            for (repo, number) in threads {
                let key = crate::model::target::thread_key(&repo, number);
                let title = store
                    .observations(&[key])?
                    .into_iter()
                    .rev()
                    .filter_map(|o| o.snapshot)
                    .map(|s| s.title)
                    .find(|t| !t.is_empty());
                if let Some(t) = title {
                    titles.insert((repo, number), t);
                }
            }
            Ok(titles)
        })
        .await?
}

/// A pull request with the outputs on it that `reader` may see, as its
/// check run shows them; `None` when it is not a PR with tracked outputs
/// the reader sees (outside the scope looks exactly like absent).
pub(crate) async fn pull_request(
    state: &State,
    reader: &Reader,
    repo: &str,
    number: u64,
) -> Result<Option<crate::github::checks::PrState>, ApiError> {
    if !reader.scope.allows(repo) {
        return Ok(None);
    }
    let store = state.store.clone();
    let key = crate::model::target::thread_key(repo, number);
    let scope = reader.scope.clone();
    state
        .reads
        .run(move || -> Result<_, ApiError> {
            let Some(mut pr) = crate::github::checks::pr_state(&store, &key)? else {
                return Ok(None);
            };
            pr.outcomes.retain(|o| {
                // Its own repository and its target's, as `RepoScope::sees`.
                scope.allows(o.safe_output_id.split(':').next().unwrap_or(""))
                    && o.target.as_ref().is_none_or(|t| scope.allows(&t.repo))
            });
            Ok((!pr.outcomes.is_empty()).then_some(pr))
        })
        .await?
}

/// Who did something.
#[derive(Serialize, ToSchema)]
pub(crate) struct ActorDoc {
    pub login: String,
    /// GitHub's account type: `User`, `Bot`, `Organization`, `Mannequin`.
    #[serde(rename = "type")]
    pub account_type: String,
}

/// One fact observed about a target, with GitHub's own timestamp. Its
/// `kind` says what happened (`opened`, `closed`, `merged`, `labeled`, …);
/// each kind has its own further fields.
#[derive(Serialize, ToSchema)]
pub(crate) struct ObservationDoc {
    pub id: String,
    pub at: DateTime<Utc>,
    /// The key of the target it is filed under.
    pub target: String,
    pub kind: String,
    pub actor: Option<ActorDoc>,
    /// The issue or PR state after the event, when the delivery carried it.
    #[schema(value_type = Option<Object>)]
    pub snapshot: Option<serde_json::Value>,
    /// The fields of its `kind` (`before`/`after` of a push, `state` of a
    /// review, `label` of a label event, …).
    #[serde(flatten)]
    pub fields: std::collections::HashMap<String, serde_json::Value>,
}

/// `GET /api/v1/me`: who is reading, and which repositories they may see.
/// With a bearer, the bearer's holder (`bearer`: `api_token`, or
/// `read_token` with its issuer and installation); a cookie sent along is
/// not read. Without one, the session's viewer.
pub async fn me(
    reader: Reader,
    axum::extract::State(state): axum::extract::State<State>,
    headers: axum::http::HeaderMap,
) -> Result<Json<serde_json::Value>, ApiError> {
    let mut who = match headers.contains_key(axum::http::header::AUTHORIZATION) {
        true => bearer_holder(&state, &headers)?,
        false => {
            let session = state.auth.session(&headers).ok().flatten();
            serde_json::json!({
                "login": session.as_ref().map(|s| s.login.clone()),
                "session": session.map(|s| s.kind),
            })
        }
    };
    match reader.scope {
        RepoScope::All => who["scope"] = serde_json::json!("all"),
        RepoScope::Only(repos) => {
            who["scope"] = serde_json::json!("repositories");
            who["repositories"] = serde_json::json!(repos);
        }
    }
    Ok(Json(who))
}

/// Who holds the bearer of a request `Reader` accepted: the operator's API
/// token, or a read token (its issuer and installation).
fn bearer_holder(
    state: &State,
    headers: &axum::http::HeaderMap,
) -> Result<serde_json::Value, ApiError> {
    match crate::http::auth::tokens::bearer_record(
        &state.auth,
        headers,
        crate::settings::exposed(&state.api_token),
    )? {
        Some(t) => Ok(serde_json::json!({
            "login": t.issuer_login, "session": null, "bearer": "read_token",
            "installation": t.installation, "account": t.account,
        })),
        None => Ok(serde_json::json!({"login": null, "session": null, "bearer": "api_token"})),
    }
}
