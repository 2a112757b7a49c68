//! The state the HTTP handlers, the inbox writer and the worker share: the
//! clock, the counters `/status` and `/metrics` read, the channels to the
//! App-mode GitHub tasks, and the watch points tests wait on. Below `app`
//! (which builds it), `server` and `worker` (which use it).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::watch;

use crate::app::pressure::IngestPressure;
use crate::github::backfill::{BackfillRequests, CaughtUp};
use crate::github::calls::ApiCalls;
use crate::github::harvest::HarvestRequests;
use crate::github::publisher::PrChanges;
use crate::github::reconciler::{ReconcileRequests, ReconcileStats};
use crate::ingest::tenancy::TenancyStats;
use crate::model::clock::Clock;
use crate::read::report::tally::OutputTally;

/// A count of the outputs and when it was taken.
pub(crate) type TallyAt = (Instant, Arc<OutputTally>);

/// State shared by the handlers, the writer and the worker.
pub struct Shared {
    pub clock: Clock,
    pub started: Instant,
    pub outputs_tracked: AtomicU64,
    /// Deliveries answered 2xx but not stored (unknown events and actions).
    pub ignored: AtomicU64,
    /// Requests refused (bad signature, malformed, too large, ...).
    pub rejected: AtomicU64,
    /// GitHub API requests made (App mode), for `/status` and `/metrics`.
    pub github_calls: Arc<ApiCalls>,
    /// What API reconciliation did (App mode; zeros when listening only).
    pub reconcile_stats: Arc<ReconcileStats>,
    /// What the tenancy rule refused, by where and why (`ingest::tenancy`).
    pub tenancy: Arc<TenancyStats>,
    /// Where the worker reports PRs whose outcomes changed (App mode only).
    pub pr_changes: Option<PrChanges>,
    /// Where the worker and the API ask for outputs to be reconciled from
    /// the GitHub API (App mode only).
    pub reconcile_requests: Option<ReconcileRequests>,
    /// Where the worker sends completed gh-aw runs to harvest (App mode only).
    pub harvest_requests: Option<HarvestRequests>,
    /// Where new installations and repositories are handed to the backfill
    /// of their recent gh-aw runs (App mode only).
    pub backfill_requests: Option<BackfillRequests>,
    /// Where the worker sends outputs a checkpoint made due, to read the
    /// signals no webhook carries (`github::signals`; App mode, set once
    /// after start).
    pub signal_requests: std::sync::OnceLock<crate::github::signals::SignalRequests>,
    /// The App's GitHub client (App mode; set once after start), for the
    /// re-check of a read token's issuer (`http::auth::issuer`).
    pub github: std::sync::OnceLock<Arc<crate::github::GitHubClient>>,
    /// Where the worker hands changed outcomes to the OTLP exporter
    /// (`app::otlp`; set once after start, when an OTLP endpoint is set).
    pub outcome_spans: std::sync::OnceLock<crate::app::otlp::SpanSink>,
    /// How hard deliveries are arriving; the worker gives way while ingest
    /// is saturated.
    pub pressure: IngestPressure,
    /// In-memory mirrors of the store's counters, so `/status` and
    /// `/metrics` never wait on sled (a large commit holds its lock).
    pub received: AtomicU64,
    pub processed_total: AtomicU64,
    pub duplicates: AtomicU64,
    /// Inbox items moved aside (`store::dead_letters`), now.
    pub dead_letters: AtomicU64,
    /// Why the worker thread died, once it has (`supervise`).
    pub(crate) worker_death: Mutex<Option<String>>,
    /// The last error recorded, and when.
    pub(crate) last_error: Mutex<Option<(String, chrono::DateTime<chrono::Utc>)>>,
    pub(crate) stored: watch::Sender<u64>,
    pub(crate) processed: watch::Sender<u64>,
    /// True once the worker has finished its start-up pass (backlog and
    /// checkpoints that came due while the App was down).
    pub(crate) ready: watch::Sender<bool>,
    /// The last count of the outputs for `/metrics`, and when it was taken.
    pub output_tally: Arc<Mutex<Option<TallyAt>>>,
}

impl Shared {
    pub(crate) fn record_error(&self, message: String) {
        tracing::error!("{message}");
        *self.last_error.lock().expect("last_error lock") = Some((message, chrono::Utc::now()));
    }

    pub fn last_error(&self) -> Option<String> {
        self.last_error_at().map(|(message, _)| message)
    }

    /// The last error recorded, with when.
    pub(crate) fn last_error_at(&self) -> Option<(String, chrono::DateTime<chrono::Utc>)> {
        self.last_error.lock().expect("last_error lock").clone()
    }

    /// An inbox item was moved to the dead letters.
    pub(crate) fn dead_lettered(&self, seq: u64, error: &str) {
        self.dead_letters.fetch_add(1, Ordering::Relaxed);
        self.record_error(format!(
            "inbox item {seq} moved to the dead letters: {error}"
        ));
    }

    /// The worker thread is gone: `/status` reports not ready from now on,
    /// and whoever waits on the worker is let go.
    pub(crate) fn worker_died(&self, reason: String) {
        self.record_error(format!("worker thread died: {reason}"));
        *self.worker_death.lock().expect("worker_death lock") = Some(reason);
        self.ready.send_replace(true);
        self.processed.send_modify(|_| {});
    }

    /// Why the worker died, if it has.
    pub(crate) fn worker_death(&self) -> Option<String> {
        self.worker_death.lock().expect("worker_death lock").clone()
    }

    pub(crate) fn mark_ready(&self) {
        self.ready.send_replace(true);
    }

    /// Wait until the worker has processed every item stored so far.
    pub(crate) async fn wait_caught_up(&self) {
        let stored = *self.stored.borrow();
        let mut processed = self.processed.subscribe();
        let _ = processed.wait_for(|p| *p >= stored).await;
    }

    pub(crate) fn publish_processed(&self, seq: u64) {
        self.processed.send_if_modified(|v| {
            let changed = seq > *v;
            *v = (*v).max(seq);
            changed
        });
    }
}

impl CaughtUp for Shared {
    fn wait_caught_up(
        &self,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + '_>> {
        Box::pin(Shared::wait_caught_up(self))
    }
}
