//! Health: `/ping` (liveness), `/ready` (readiness: the store can write,
//! the worker runs), `/status` and `/metrics` (OpenMetrics through
//! `prometheus-client`). No repository data here: the outputs gauge is
//! labelled by status, strength and type, by workflow only when the operator
//! opts in (`METRICS_WORKFLOW_LABELS`), never by repository.
//!
//! Who may scrape (`MetricsOptions`, docs/auth.md "Metrics"): on the main
//! listener, a bearer `METRICS_TOKEN` (unset: the `API_TOKEN`; neither:
//! nobody); with `METRICS_ADDR`, `/metrics` moves to that listener of its
//! own (`metrics_router`; the Prometheus convention), where it needs
//! `METRICS_TOKEN` only when one is set, and the main listener answers 404.

use std::sync::atomic::Ordering;

use axum::extract::State as StateExtractor;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;

use super::body::require_bearer;
use super::{ApiError, State};
use crate::github::calls::ApiHealth;
use crate::read::report::tally::OutputTally;
use crate::store::counter;

/// Who may read `/metrics`, and what it says.
#[derive(Clone, Debug, Default)]
pub struct MetricsOptions {
    /// The bearer `/metrics` requires (`METRICS_TOKEN`); unset: the API
    /// token on the main listener, nothing on its own listener.
    pub token: Option<crate::settings::Secret>,
    /// `/metrics` is served on a listener of its own (`METRICS_ADDR`): the
    /// main listener's answers 404.
    pub own_listener: bool,
    /// Label the outputs gauge by workflow (`METRICS_WORKFLOW_LABELS`).
    pub workflow_labels: bool,
}

/// `/status` and `/ping` (no auth, no repository data) and `/metrics`
/// (a bearer; see the module's docs).
pub fn routes(_: &super::Mount) -> axum::Router<State> {
    use axum::routing::get;
    axum::Router::new()
        .route("/status", get(status))
        .route("/ping", get(ping))
        .route("/ready", get(ready))
        .route("/metrics", get(metrics))
}

pub async fn ping() -> &'static str {
    "PONG"
}

/// Readiness: 200 while the store can write and the worker runs, else 503
/// with `Retry-After` and why (a store reopening after an I/O error, a
/// database that does not answer, a dead worker). `/ping` stays liveness.
pub async fn ready(StateExtractor(state): StateExtractor<State>) -> Response {
    let store = state.store.clone();
    // PostgreSQL is asked now: off the async threads.
    let trouble = tokio::task::spawn_blocking(move || store.write_trouble())
        .await
        .unwrap_or_else(|e| {
            Some(crate::store::heal::Trouble {
                cause: format!("checking the store failed: {e}"),
                for_seconds: 0,
                failed_attempts: 0,
            })
        });
    let worker_death = state.shared.worker_death();
    // The inbox's mover (sled) stopped: every ack is refused until a restart.
    let inbox_stopped = state.writer.mover_stopped();
    let ready = trouble.is_none() && worker_death.is_none() && !inbox_stopped;
    let body = Json(json!({
        "ready": ready,
        "store": store_json(&state, trouble.as_ref()),
        "worker": if worker_death.is_some() { "dead" } else { "running" },
        "worker_error": worker_death,
        "inbox": if inbox_stopped { "stopped" } else { "running" },
    }));
    if ready {
        return (StatusCode::OK, body).into_response();
    }
    let retry = [(header::RETRY_AFTER, RETRY_AFTER_SECS.to_string())];
    (StatusCode::SERVICE_UNAVAILABLE, retry, body).into_response()
}

/// Seconds `/ready` and `/status` tell a client to wait when not ready.
const RETRY_AFTER_SECS: u64 = 2;

/// Whether the store can write, and if not why (`/ready`, `/status`).
fn store_json(state: &State, trouble: Option<&crate::store::heal::Trouble>) -> serde_json::Value {
    json!({
        "engine": state.store.engine_name(),
        "writable": trouble.is_none(),
        "cause": trouble.map(|t| &t.cause),
        "for_seconds": trouble.map(|t| t.for_seconds),
        "failed_reopen_attempts": trouble.map(|t| t.failed_attempts),
        "reopens": state.store.reopens(),
    })
}

#[derive(Debug)]
struct Figures {
    received: u64,
    processed: u64,
    duplicates: u64,
    ignored: u64,
    rejected: u64,
    outputs: u64,
    store_bytes: u64,
    uptime: u64,
    gave_way: u64,
    dead_letters: u64,
    worker_death: Option<String>,
}

/// The figures, from memory: the inbox counters are mirrored by the writer
/// and the worker, so `/status` answers while a large commit holds sled.
fn figures(state: &State) -> Figures {
    let mut f = memory_figures(state);
    // PostgreSQL: replicas share one inbox, so the counts are the
    // database's (each replica's memory knows only its own work).
    if state.store.is_pg() {
        let read = |name| state.store.try_counter(name).ok();
        if let (Some(r), Some(p), Some(d)) = (
            read(counter::RECEIVED),
            read(counter::PROCESSED),
            read(counter::DUPLICATES),
        ) {
            (f.received, f.processed, f.duplicates) = (r, p, d);
        }
    }
    f
}

fn memory_figures(state: &State) -> Figures {
    let shared = &state.shared;
    Figures {
        received: shared.received.load(Ordering::Relaxed),
        processed: shared.processed_total.load(Ordering::Relaxed),
        duplicates: shared.duplicates.load(Ordering::Relaxed),
        dead_letters: shared.dead_letters.load(Ordering::Relaxed),
        worker_death: shared.worker_death(),
        ignored: state.shared.ignored.load(Ordering::Relaxed),
        rejected: state.shared.rejected.load(Ordering::Relaxed),
        outputs: state.shared.outputs_tracked.load(Ordering::Relaxed),
        store_bytes: state.store.size_on_disk(),
        uptime: state.shared.started.elapsed().as_secs(),
        gave_way: state.shared.pressure.gave_way(),
    }
}

/// `/status`'s `database`: the engine, whether it answers, and its last
/// error with when, `resolved` once a statement has succeeded since.
fn database_status(state: &State, health: Option<&crate::store::pg::Health>) -> serde_json::Value {
    json!({
        "engine": state.store.engine_name(),
        "reachable": health.is_none_or(|h| h.reachable),
        "last_error": health.and_then(|h| h.last_error.clone()),
        "last_error_at": health.and_then(|h| h.last_error_at),
        "resolved": health.and_then(|h| Some(h.answered_since(h.last_error_at?))),
    })
}

/// True when an error recorded at `at` came from the database (the engine
/// words its errors "database: …") and the database has answered since.
fn resolved_by_database(
    message: &str,
    at: chrono::DateTime<chrono::Utc>,
    health: Option<&crate::store::pg::Health>,
) -> bool {
    message.contains("database: ") && health.is_some_and(|h| h.reachable && h.answered_since(at))
}

/// How long `/status` waits for the acknowledged items to be filed.
const STATUS_SETTLE: std::time::Duration = std::time::Duration::from_secs(1);

/// 200, or 503 (with `Retry-After`) once the worker thread has died
/// (`worker: "dead"`, with why), while the database is unreachable, or while
/// the store cannot write (`database.store`: reopening after an I/O error).
/// Per-installation figures only for a bearer `API_TOKEN` or `METRICS_TOKEN`.
pub async fn status(StateExtractor(state): StateExtractor<State>, headers: HeaderMap) -> Response {
    let operator = [
        crate::settings::exposed(&state.api_token),
        crate::settings::exposed(&state.metrics.token),
    ]
    .into_iter()
    .any(|t| require_bearer(&headers, t, "API_TOKEN").is_ok());
    // On sled the inbox's mover files what was acknowledged a few
    // milliseconds after the answer: the counts include it once it has
    // (waited for at most `STATUS_SETTLE`, so a busy mover never holds up
    // the answer).
    let _ = tokio::time::timeout(STATUS_SETTLE, state.writer.settled()).await;
    let f = figures(&state);
    // PostgreSQL: checked now; an unreachable database is a 503 with why.
    let db_health = state.store.database_health();
    let db_down = db_health.as_ref().is_some_and(|h| !h.reachable);
    // sled: closed and reopening after an I/O error (`store::heal`).
    let trouble = match &db_health {
        Some(h) if !h.reachable => Some(crate::store::heal::Trouble {
            cause: h.last_error.clone().unwrap_or_else(|| "unreachable".into()),
            for_seconds: 0,
            failed_attempts: 0,
        }),
        Some(_) => None,
        None => state.store.write_trouble(),
    };
    let code = match (&f.worker_death, db_down || trouble.is_some()) {
        (Some(_), _) | (None, true) => StatusCode::SERVICE_UNAVAILABLE,
        (None, false) => StatusCode::OK,
    };
    let mut database = database_status(&state, db_health.as_ref());
    database["store"] = store_json(&state, trouble.as_ref());
    let health = state.shared.github_calls.health();
    let (last_error, last_error_at, resolved) = match state.shared.last_error_at() {
        Some((message, at)) => {
            let resolved = resolved_by_database(&message, at, db_health.as_ref());
            (Some(message), Some(at), resolved)
        }
        None => (
            health.last_failure.as_ref().map(|f| f.message.clone()),
            None,
            false,
        ),
    };
    let body = Json(json!({
        "version": env!("CARGO_PKG_VERSION"),
        "mode": mode(state.listen_only, &health),
        "uptime_seconds": f.uptime,
        "store_bytes": f.store_bytes,
        // What an acknowledged delivery survives (README "Durability").
        "durability": state.store.durability().as_str(),
        "database": database,
        "deliveries": {
            "received": f.received,
            "processed": f.processed,
            "backlog": f.received.saturating_sub(f.processed),
            "worker_gave_way": f.gave_way,
            "duplicates": f.duplicates,
            "ignored": f.ignored,
            "rejected": f.rejected,
        },
        "outputs_tracked": f.outputs,
        "worker": if f.worker_death.is_some() { "dead" } else { "running" },
        "worker_error": f.worker_death,
        "dead_letters": f.dead_letters,
        "tenancy": tenancy(&state),
        "last_error": last_error,
        "last_error_at": last_error_at,
        // A database error the database has answered since (`resolved_by_database`).
        "last_error_resolved": resolved,
        "github": {
            "credentials": credentials(state.listen_only, &health),
            "installations_seen": state.store.active_installations().map(|i| i.len()).ok(),
            "last_error": health.last_failure,
            "last_success_at": health.last_success_at,
            "consecutive_failures": health.consecutive_failures,
            "errors_by_kind": health.failures_by_kind,
            "check_runs": {
                "failures": health.check_run_failures,
                "last_failure": health.last_check_run_failure.as_ref().map(|(e, _)| e),
                "last_failure_at": health.last_check_run_failure.as_ref().map(|(_, at)| at),
                "pacing": state.shared.github_calls.pacing.status(std::time::Instant::now()),
            },
            "api_calls": state.shared.github_calls.total(),
            "api_calls_by_installation": operator.then(|| state.shared.github_calls.by_installation()),
            "redeliveries_requested": state.store.counter(counter::REDELIVERIES),
            "manifests_harvested": state.store.counter(counter::HARVESTED),
            "reconcile": state.shared.reconcile_stats.snapshot(),
            "backfill": state.store.backfill_totals().ok(),
        },
    }));
    let mut response = (code, body).into_response();
    if code == StatusCode::SERVICE_UNAVAILABLE {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, RETRY_AFTER_SECS.into());
    }
    response
}

/// What the tenancy rule refused (docs/auth.md, "Tenancy"): counts by
/// where and why, never a repository name.
fn tenancy(state: &State) -> serde_json::Value {
    let rows = state.shared.tenancy.rows();
    let mut refused = serde_json::Map::new();
    for (at, kind, n) in &rows {
        let entry = refused.entry(*at).or_insert_with(|| json!({}));
        entry[*kind] = json!(n);
    }
    json!({
        "refused_total": rows.iter().map(|(_, _, n)| n).sum::<u64>(),
        "refused": refused,
    })
}

/// `listen-only` without `APP_ID`; with it, `app` only while GitHub is not
/// refusing the credentials and the calls are not all failing.
fn mode(listen_only: bool, health: &ApiHealth) -> &'static str {
    if listen_only {
        "listen-only"
    } else if health.credentials.as_ref().is_some_and(|c| !c.verified) {
        "app-credentials-refused"
    } else if health.failing() {
        "app-failing"
    } else if health.credentials.is_none() {
        "app-unverified"
    } else {
        "app"
    }
}

/// `verified`, `refused` (with GitHub's answer) or `unchecked`.
fn credentials(listen_only: bool, health: &ApiHealth) -> serde_json::Value {
    match (&health.credentials, listen_only) {
        (_, true) => json!({"state": "none"}),
        (None, false) => json!({"state": "unchecked"}),
        (Some(c), false) => json!({
            "state": if c.verified { "verified" } else { "refused" },
            "at": c.at,
            "detail": c.detail,
        }),
    }
}

/// `/metrics` on the main listener: 404 when it has a listener of its own,
/// else the bearer `METRICS_TOKEN` (or, unset, the `API_TOKEN`).
pub async fn metrics(StateExtractor(state): StateExtractor<State>, headers: HeaderMap) -> Response {
    if state.metrics.own_listener {
        return ApiError::not_found("/metrics is served on METRICS_ADDR").into_response();
    }
    let token = crate::settings::exposed(&state.metrics.token)
        .or(crate::settings::exposed(&state.api_token));
    match require_bearer(&headers, token, "METRICS_TOKEN (or API_TOKEN)") {
        Ok(()) => scrape(&state, &headers).await.into_response(),
        Err(e) => refused(&state, e),
    }
}

/// `/metrics` on its own listener (`METRICS_ADDR`): `METRICS_TOKEN` when one
/// is set, else whoever reaches the listener.
pub(crate) async fn metrics_on_own_listener(
    StateExtractor(state): StateExtractor<State>,
    headers: HeaderMap,
) -> Response {
    if let Some(token) = crate::settings::exposed(&state.metrics.token) {
        if let Err(e) = require_bearer(&headers, Some(token), "METRICS_TOKEN") {
            return refused(&state, e);
        }
    }
    scrape(&state, &headers).await.into_response()
}

/// Count and log a refused scrape like any refused request.
fn refused(state: &State, e: ApiError) -> Response {
    state.shared.rejected.fetch_add(1, Ordering::Relaxed);
    tracing::warn!(status = %e.status, detail = %e.detail, "metrics scrape refused");
    e.into_response()
}

/// One scrape, in the format the scraper asks for (`exposition`).
async fn scrape(state: &State, headers: &HeaderMap) -> impl IntoResponse {
    let format = super::exposition::Format::negotiate(
        headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()),
    );
    let snapshot = Snapshot::take(state).await;
    let mut registry = Registry::default();
    registry.register_collector(Box::new(snapshot));
    let mut body = String::new();
    // Writing into a String cannot fail.
    let _ = prometheus_client::encoding::text::encode(&mut body, &registry);
    (
        [(header::CONTENT_TYPE, format.content_type())],
        format.render(body),
    )
}

/// Everything one scrape reports, read once (the store's figures off the
/// async threads), then encoded by `prometheus-client`.
#[derive(Debug)]
struct Snapshot {
    figures: Figures,
    reconcile: Vec<(String, u64)>,
    calls_by_installation: Vec<(String, u64)>,
    api_errors: Vec<(&'static str, u64)>,
    check_run_failures: u64,
    tenancy: Vec<(&'static str, &'static str, u64)>,
    backfill: Option<crate::store::backfill::BackfillTotals>,
    outputs: Arc<OutputTally>,
}

impl Snapshot {
    async fn take(state: &State) -> Snapshot {
        let figures = figures(state);
        let outputs = output_tally(state, state.metrics.workflow_labels).await;
        Snapshot {
            figures,
            reconcile: state
                .shared
                .reconcile_stats
                .snapshot()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            calls_by_installation: state
                .shared
                .github_calls
                .by_installation()
                .into_iter()
                .collect(),
            api_errors: state
                .shared
                .github_calls
                .errors_by_kind()
                .into_iter()
                .collect(),
            check_run_failures: state.shared.github_calls.check_run_failures(),
            tenancy: state.shared.tenancy.rows(),
            backfill: state.store.backfill_totals().ok(),
            outputs,
        }
    }
}

/// One metric with one value, no labels.
fn single<M: EncodeMetric>(
    e: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    metric: M,
) -> Result<(), std::fmt::Error> {
    metric.encode(e.encode_descriptor(name, help, None, metric.metric_type())?)
}

/// One metric with a value per label set.
fn family<L: EncodeLabelSet, M: EncodeMetric>(
    e: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    kind: prometheus_client::metrics::MetricType,
    rows: impl IntoIterator<Item = (L, M)>,
) -> Result<(), std::fmt::Error> {
    let mut m = e.encode_descriptor(name, help, None, kind)?;
    for (labels, metric) in rows {
        metric.encode(m.encode_family(&labels)?)?;
    }
    Ok(())
}

fn counter(n: u64) -> ConstCounter<u64> {
    ConstCounter::new(n)
}

fn gauge(n: u64) -> ConstGauge<i64> {
    ConstGauge::new(i64::try_from(n).unwrap_or(i64::MAX))
}

impl Collector for Snapshot {
    fn encode(&self, mut e: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let f = &self.figures;
        let e = &mut e;
        single(
            e,
            "safe_outcomes_deliveries_received",
            "Deliveries stored in the inbox.",
            counter(f.received),
        )?;
        single(
            e,
            "safe_outcomes_deliveries_processed",
            "Inbox items processed.",
            counter(f.processed),
        )?;
        single(
            e,
            "safe_outcomes_deliveries_backlog",
            "Inbox items not yet processed.",
            gauge(f.received.saturating_sub(f.processed)),
        )?;
        single(
            e,
            "safe_outcomes_deliveries_duplicate",
            "Deliveries seen before.",
            counter(f.duplicates),
        )?;
        single(
            e,
            "safe_outcomes_deliveries_ignored",
            "Deliveries of events or actions not used.",
            counter(f.ignored),
        )?;
        single(
            e,
            "safe_outcomes_requests_rejected",
            "Requests refused as invalid.",
            counter(f.rejected),
        )?;
        single(
            e,
            "safe_outcomes_worker_gave_way",
            "Pauses the worker took to give way to saturated ingest.",
            counter(f.gave_way),
        )?;
        single(
            e,
            "safe_outcomes_dead_letters",
            "Inbox items moved aside after failing (see `safe-outcomes dead-letters`).",
            gauge(f.dead_letters),
        )?;
        single(
            e,
            "safe_outcomes_worker_up",
            "1 while the worker thread runs, 0 once it has died.",
            gauge(u64::from(f.worker_death.is_none())),
        )?;
        single(
            e,
            "safe_outcomes_outputs_tracked",
            "Safe outputs tracked.",
            gauge(f.outputs),
        )?;
        single(
            e,
            "safe_outcomes_store_bytes",
            "Size of the store on disk.",
            gauge(f.store_bytes),
        )?;
        single(
            e,
            "safe_outcomes_uptime_seconds",
            "Seconds since start.",
            gauge(f.uptime),
        )?;
        let kind = prometheus_client::metrics::MetricType::Counter;
        family(
            e,
            "safe_outcomes_reconcile",
            "Outputs reconciled from the GitHub API, by result.",
            kind,
            self.reconcile
                .iter()
                .map(|(r, n)| ([("result", r.as_str())], counter(*n))),
        )?;
        self.encode_backfill(e)?;
        // Per installation id (no repository names).
        family(
            e,
            "safe_outcomes_github_api_calls",
            "GitHub API requests made, per installation.",
            kind,
            self.calls_by_installation
                .iter()
                .map(|(i, n)| ([("installation", i.as_str())], counter(*n))),
        )?;
        family(
            e,
            "safe_outcomes_github_api_errors",
            "GitHub API calls that failed after the client's retries, by kind.",
            kind,
            self.api_errors
                .iter()
                .map(|(k, n)| ([("kind", *k)], counter(*n))),
        )?;
        family(
            e,
            "safe_outcomes_tenancy_refused",
            "Manifest lines, outputs and reads refused as outside the output's installation, by where and why.",
            kind,
            self.tenancy
                .iter()
                .map(|(at, why, n)| ([("path", *at), ("reason", *why)], counter(*n))),
        )?;
        single(
            e,
            "safe_outcomes_check_run_failures",
            "Check-run publishes that failed (retried later with backoff).",
            counter(self.check_run_failures),
        )?;
        family(e, "safe_outcomes_outputs",
            "Safe outputs by latest outcome: outcome_status, evidence_strength, safe_output_type (custom types as \"custom\") and, when METRICS_WORKFLOW_LABELS is on, workflow (the busiest, the rest as \"other\").",
            prometheus_client::metrics::MetricType::Gauge,
            self.outputs.rows.iter().map(|(k, n)| {
                let mut labels = vec![("outcome_status", k.0.as_str()), ("evidence_strength", k.1.as_str()), ("safe_output_type", k.2.as_str())];
                labels.extend(k.3.as_deref().map(|w| ("workflow", w)));
                (labels, gauge(*n))
            }))
    }
}

impl Snapshot {
    /// The backfill's progress: runs and outputs counters, jobs per state.
    fn encode_backfill(&self, e: &mut DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let Some(t) = &self.backfill else {
            return Ok(());
        };
        let kind = prometheus_client::metrics::MetricType::Counter;
        family(
            e,
            "safe_outcomes_backfill_runs",
            "gh-aw runs the backfill found, harvested and gave up.",
            kind,
            [
                ("found", t.runs_found),
                ("harvested", t.runs_harvested),
                ("failed", t.runs_failed),
            ]
            .map(|(stage, n)| ([("stage", stage)], counter(n))),
        )?;
        family(
            e,
            "safe_outcomes_backfill_outputs",
            "Outputs the backfill evaluated from the API, or found observed.",
            kind,
            [
                ("evaluated", t.outputs_evaluated),
                ("observed", t.outputs_observed),
            ]
            .map(|(how, n)| ([("result", how)], counter(n))),
        )?;
        family(
            e,
            "safe_outcomes_backfill_jobs",
            "Backfill jobs (one per repository), by state.",
            prometheus_client::metrics::MetricType::Gauge,
            ["listing", "harvesting", "paused", "done"]
                .map(|s| ([("state", s)], gauge(t.jobs.get(s).copied().unwrap_or(0)))),
        )
    }
}

/// How long a count of the outputs serves scrapes before the store is read
/// again (a scrape must not walk a million records every 15 s).
pub(crate) const OUTPUT_TALLY_TTL: std::time::Duration = std::time::Duration::from_secs(60);

/// The tally, from the cache while fresh, else read from the store on a
/// blocking thread (one reader at a time: concurrent scrapes wait for it).
async fn output_tally(state: &State, workflows: bool) -> Arc<OutputTally> {
    let cache = state.shared.output_tally.clone();
    let store = state.store.clone();
    let read = tokio::task::spawn_blocking(move || {
        let mut cached = cache.lock().expect("output tally lock");
        if let Some((at, tally)) = cached.as_ref() {
            if at.elapsed() < OUTPUT_TALLY_TTL {
                return tally.clone();
            }
        }
        let rows = crate::read::rollup::metric_rows(&store).unwrap_or_default();
        let tally = Arc::new(OutputTally::from_rows(rows, workflows));
        *cached = Some((std::time::Instant::now(), tally.clone()));
        tally
    });
    read.await.unwrap_or_default()
}
