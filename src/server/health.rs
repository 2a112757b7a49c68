//! Health: `/ping`, `/status` and `/metrics`. No repository data here.

use std::sync::atomic::Ordering;

use axum::extract::State as StateExtractor;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::Json;
use serde_json::json;

use super::State;
use crate::store::counter;

pub async fn ping() -> &'static str {
    "PONG"
}

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

/// 200, or 503 once the worker thread has died (`worker: "dead"`, with why).
pub async fn status(StateExtractor(state): StateExtractor<State>) -> impl IntoResponse {
    let f = figures(&state);
    let code = match f.worker_death {
        Some(_) => StatusCode::SERVICE_UNAVAILABLE,
        None => StatusCode::OK,
    };
    let body = Json(json!({
        "version": env!("CARGO_PKG_VERSION"),
        "mode": if state.listen_only { "listen-only" } else { "app" },
        "uptime_seconds": f.uptime,
        "store_bytes": f.store_bytes,
        // What an acknowledged delivery survives (README "Durability").
        "durability": state.store.durability().as_str(),
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
        "last_error": state.shared.last_error(),
        "github": {
            "api_calls": state.shared.github_calls.total(),
            "api_calls_by_installation": state.shared.github_calls.by_installation(),
            "redeliveries_requested": state.store.counter(counter::REDELIVERIES),
            "manifests_harvested": state.store.counter(counter::HARVESTED),
            "reconcile": state.shared.reconcile_stats.snapshot(),
            "backfill": state.store.backfill_totals().ok(),
        },
    }));
    (code, body)
}

pub async fn metrics(StateExtractor(state): StateExtractor<State>) -> impl IntoResponse {
    let f = figures(&state);
    let lines = [
        (
            "safe_outcomes_deliveries_received_total",
            "counter",
            "Deliveries stored in the inbox.",
            f.received,
        ),
        (
            "safe_outcomes_deliveries_processed_total",
            "counter",
            "Inbox items processed.",
            f.processed,
        ),
        (
            "safe_outcomes_deliveries_backlog",
            "gauge",
            "Inbox items not yet processed.",
            f.received.saturating_sub(f.processed),
        ),
        (
            "safe_outcomes_deliveries_duplicate_total",
            "counter",
            "Deliveries seen before.",
            f.duplicates,
        ),
        (
            "safe_outcomes_deliveries_ignored_total",
            "counter",
            "Deliveries of events or actions not used.",
            f.ignored,
        ),
        (
            "safe_outcomes_requests_rejected_total",
            "counter",
            "Requests refused as invalid.",
            f.rejected,
        ),
        (
            "safe_outcomes_worker_gave_way_total",
            "counter",
            "Pauses the worker took to give way to saturated ingest.",
            f.gave_way,
        ),
        (
            "safe_outcomes_dead_letters",
            "gauge",
            "Inbox items moved aside after failing (see `safe-outcomes dead-letters`).",
            f.dead_letters,
        ),
        (
            "safe_outcomes_worker_up",
            "gauge",
            "1 while the worker thread runs, 0 once it has died.",
            u64::from(f.worker_death.is_none()),
        ),
        (
            "safe_outcomes_outputs_tracked",
            "gauge",
            "Safe outputs tracked.",
            f.outputs,
        ),
        (
            "safe_outcomes_store_bytes",
            "gauge",
            "Size of the store on disk.",
            f.store_bytes,
        ),
        (
            "safe_outcomes_uptime_seconds",
            "gauge",
            "Seconds since start.",
            f.uptime,
        ),
    ];
    let mut body = String::new();
    for (name, kind, help, value) in lines {
        body.push_str(&format!(
            "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}\n"
        ));
    }
    let name = "safe_outcomes_reconcile_total";
    body.push_str(&format!(
        "# HELP {name} Outputs reconciled from the GitHub API, by result.\n# TYPE {name} counter\n"
    ));
    for (result, n) in state.shared.reconcile_stats.snapshot() {
        body.push_str(&format!("{name}{{result=\"{result}\"}} {n}\n"));
    }
    backfill_metrics(&state, &mut body);
    // Per installation id (no repository names).
    let name = "safe_outcomes_github_api_calls_total";
    body.push_str(&format!(
        "# HELP {name} GitHub API requests made, per installation.\n# TYPE {name} counter\n"
    ));
    for (installation, n) in state.shared.github_calls.by_installation() {
        body.push_str(&format!("{name}{{installation=\"{installation}\"}} {n}\n"));
    }
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], body)
}

/// The backfill's progress: runs and outputs counters, jobs per state.
fn backfill_metrics(state: &State, body: &mut String) {
    let Ok(t) = state.store.backfill_totals() else {
        return;
    };
    let name = "safe_outcomes_backfill_runs_total";
    body.push_str(&format!(
        "# HELP {name} gh-aw runs the backfill found, harvested and gave up.\n# TYPE {name} counter\n"
    ));
    for (stage, n) in [
        ("found", t.runs_found),
        ("harvested", t.runs_harvested),
        ("failed", t.runs_failed),
    ] {
        body.push_str(&format!("{name}{{stage=\"{stage}\"}} {n}\n"));
    }
    let name = "safe_outcomes_backfill_outputs_total";
    body.push_str(&format!(
        "# HELP {name} Outputs the backfill evaluated from the API, or found observed.\n# TYPE {name} counter\n"
    ));
    for (how, n) in [
        ("evaluated", t.outputs_evaluated),
        ("observed", t.outputs_observed),
    ] {
        body.push_str(&format!("{name}{{result=\"{how}\"}} {n}\n"));
    }
    let name = "safe_outcomes_backfill_jobs";
    body.push_str(&format!(
        "# HELP {name} Backfill jobs (one per repository), by state.\n# TYPE {name} gauge\n"
    ));
    for s in ["listing", "harvesting", "paused", "done"] {
        let n = t.jobs.get(s).copied().unwrap_or(0);
        body.push_str(&format!("{name}{{state=\"{s}\"}} {n}\n"));
    }
}
