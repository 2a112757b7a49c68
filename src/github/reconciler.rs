//! The reconciler: a task that evaluates outputs whose targets the App never
//! heard about (installed late, webhooks lost) from the GitHub API instead.
//!
//! Outputs come to it three ways:
//! - from the worker, when a manifest registers an output none of whose
//!   watch keys has any observation (`ReconcileRequests`, like the
//!   publisher's `PrChanges`);
//! - at start-up: outputs still `pending`/`unknown` (or never assessed)
//!   whose targets have no webhook observation, at most
//!   `ReconcilerOptions::startup_batch` of them (500 by default), those never
//!   observed at all first, then those known only from earlier reconciles;
//! - on demand, `POST /api/v1/outputs/{id}/reconcile`.
//!
//! For each it picks the installation its reads go through
//! (`installations::reading_installation`: none, or an output outside its
//! own installation by the tenancy rule: skipped, logged and counted),
//! fetches the target's state (`fetch`), judges the attempt
//! (`ingest::reconcile::judge`), adds the signals no webhook carries that
//! the output's past windows need (`signals::read_now`: an output judged
//! after the fact has passed the checkpoints where the signal fetcher reads
//! them) and hands the result to the worker as an
//! `InboxItem::Reconciled`, durable like a delivery. A transient failure
//! (the client's retry budget ran out) is tried again later with backoff,
//! at most `max_attempts` times per request; a terminal one (404 on the
//! output's own object is deletion, a refused request) is not.
//!
//! The queue lives in memory: after a restart the start-up scan finds what
//! is still unresolved.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::client::GitHubClient;
use super::fetch;
use super::installations::reading_installation;
use super::signals;
use super::task;
use crate::ingest::reconcile::{judge, required_endpoints};
use crate::ingest::tenancy::{TenancyStats, Where};
use crate::model::clock::Clock;
use crate::model::{Observation, ObservationKind, OutcomeStatus};
use crate::store::inbox::{InboxItem, InboxWriter};
use crate::store::{Store, StoreError};

/// What the reconciler is asked.
pub(crate) enum ReconcileMsg {
    /// Reconcile this output (id or alias) as soon as possible.
    Request(String),
    /// A new manifest output whose target was never seen: wait the grace
    /// period (its webhooks usually follow the manifest within seconds), and
    /// reconcile only if it is still unseen then.
    RequestIfUnseen(String),
}

/// The worker's and the API's side: ask for an output to be reconciled.
#[derive(Clone, Debug)]
pub struct ReconcileRequests(task::Sender<ReconcileMsg>);

impl ReconcileRequests {
    /// Queue an output; false when the reconciler has stopped.
    pub(crate) fn request(&self, output_id: String) -> bool {
        self.0.send(ReconcileMsg::Request(output_id))
    }

    /// Queue an output the App has seen nothing of yet (see `RequestIfUnseen`).
    pub(crate) fn request_if_unseen(&self, output_id: String) -> bool {
        self.0.send(ReconcileMsg::RequestIfUnseen(output_id))
    }
}

/// The reconciler's end of the channel.
pub(crate) type ReconcilerInbox = task::Inbox<ReconcileMsg>;

pub(crate) fn channel() -> (ReconcileRequests, ReconcilerInbox) {
    task::channel_of(ReconcileRequests)
}

#[derive(Debug, Clone)]
pub struct ReconcilerOptions {
    /// Attempts per request before giving up (the first included).
    pub max_attempts: u32,
    /// Wait before the second attempt; doubles per failure.
    pub retry_min: Duration,
    pub retry_max: Duration,
    /// Most outputs queued by the start-up scan.
    pub startup_batch: usize,
    /// How long a new manifest output waits for its webhooks before it is
    /// reconciled from the API.
    pub unseen_grace: Duration,
}

impl Default for ReconcilerOptions {
    fn default() -> ReconcilerOptions {
        ReconcilerOptions {
            max_attempts: 5,
            retry_min: Duration::from_secs(60),
            retry_max: Duration::from_secs(60 * 60),
            startup_batch: 500,
            unseen_grace: Duration::from_secs(10 * 60),
        }
    }
}

/// What the reconciler did, for logs and tests.
#[derive(Debug, Default)]
pub struct ReconcileStats {
    /// Attempts whose result went to the worker.
    pub attempts: AtomicU64,
    /// Attempts that found the output's own object gone.
    pub deleted: AtomicU64,
    /// Attempts that failed (transient or terminal).
    pub failed: AtomicU64,
    /// Requests dropped after `max_attempts` transient failures.
    pub gave_up: AtomicU64,
    /// Outputs skipped: no active installation covers the repository.
    pub skipped_no_installation: AtomicU64,
    /// Outputs skipped: unknown id, or nothing the API can be asked about.
    pub skipped_other: AtomicU64,
}

impl ReconcileStats {
    pub(crate) fn snapshot(&self) -> BTreeMap<&'static str, u64> {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        BTreeMap::from([
            ("attempts", get(&self.attempts)),
            ("deleted", get(&self.deleted)),
            ("failed", get(&self.failed)),
            ("gave_up", get(&self.gave_up)),
            (
                "skipped_no_installation",
                get(&self.skipped_no_installation),
            ),
            ("skipped_other", get(&self.skipped_other)),
        ])
    }
}

fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

/// What reconciling one output did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) enum Reconciled {
    /// Observations (possibly none) went to the worker.
    Observed(usize),
    /// The output's own object is gone.
    Deleted,
    /// The attempt failed; `retry` when it is worth another later.
    Failed {
        retry: bool,
        detail: String,
    },
    Skipped(&'static str),
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum ReconcileError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("handing the result to the worker: {0}")]
    Inbox(String),
}

/// An output waiting for an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pending {
    due: Instant,
    failures: u32,
    /// Skip the attempt if webhooks have told us about the target meanwhile.
    only_if_unseen: bool,
}

/// Handle on the running reconciler.
pub struct ReconcilerHandle {
    task: task::Handle<ReconcileMsg>,
    stats: Arc<ReconcileStats>,
}

impl ReconcilerHandle {
    /// Attempt everything queued now and wait until done: the tests' sync point.
    pub async fn flush(&self) {
        self.task.flush(false).await
    }

    pub fn stats(&self) -> &Arc<ReconcileStats> {
        &self.stats
    }

    /// Stop without draining the queue (the start-up scan finds it again).
    pub async fn stop(self) {
        self.task.stop().await
    }
}

/// The reconciler's queue: outputs by id, each with when it is due.
struct ReconcileQueue {
    reconciler: Reconciler,
    queue: BTreeMap<String, Pending>,
}

impl task::Queue for ReconcileQueue {
    type Work = ReconcileMsg;

    fn take(&mut self, msg: ReconcileMsg) {
        match msg {
            ReconcileMsg::Request(id) => {
                self.queue.insert(id, fresh());
            }
            ReconcileMsg::RequestIfUnseen(id) => {
                let later = self.reconciler.after_grace();
                self.queue.entry(id).or_insert(later);
            }
        }
    }

    fn next_due(&self) -> Option<Instant> {
        self.queue.values().map(|p| p.due).min()
    }

    /// A flush attempts everything queued, due or not.
    async fn run(&mut self, why: task::Run) {
        let all = matches!(why, task::Run::Flush { .. });
        self.reconciler.attempt_due(&mut self.queue, all).await
    }
}

pub(crate) struct Reconciler {
    store: Store,
    clock: Clock,
    client: Arc<GitHubClient>,
    writer: InboxWriter,
    options: ReconcilerOptions,
    stats: Arc<ReconcileStats>,
    tenancy: Arc<TenancyStats>,
}

impl Reconciler {
    pub(crate) fn new(
        store: Store,
        clock: Clock,
        client: Arc<GitHubClient>,
        writer: InboxWriter,
        options: ReconcilerOptions,
    ) -> Reconciler {
        Reconciler {
            store,
            clock,
            client,
            writer,
            options,
            stats: Arc::default(),
            tenancy: Arc::default(),
        }
    }

    /// Count outputs the tenancy rule refuses to read for into these stats
    /// (the App's) instead of the reconciler's own.
    pub(crate) fn with_tenancy(mut self, stats: Arc<TenancyStats>) -> Reconciler {
        self.tenancy = stats;
        self
    }

    /// Count into these stats (the App's, shown on `/status` and `/metrics`)
    /// instead of the reconciler's own.
    pub(crate) fn with_stats(mut self, stats: Arc<ReconcileStats>) -> Reconciler {
        self.stats = stats;
        self
    }

    /// Run on a tokio task, starting with the start-up scan. `requests`
    /// must be the sender paired with `inbox`.
    pub(crate) fn spawn(
        self,
        requests: &ReconcileRequests,
        inbox: ReconcilerInbox,
    ) -> ReconcilerHandle {
        let stats = self.stats.clone();
        let task = task::Handle::spawn(&requests.0, inbox, async move {
            let queue = self.startup_queue();
            ReconcileQueue {
                reconciler: self,
                queue,
            }
        });
        ReconcilerHandle { task, stats }
    }

    /// Outputs left unresolved and never seen through webhooks.
    fn startup_queue(&self) -> BTreeMap<String, Pending> {
        let mut queue = BTreeMap::new();
        match startup_candidates(&self.store, self.options.startup_batch) {
            Ok(ids) => {
                if !ids.is_empty() {
                    tracing::info!(
                        count = ids.len(),
                        "reconciling unresolved outputs never seen through webhooks"
                    );
                }
                for id in ids {
                    queue.insert(id, fresh());
                }
            }
            Err(e) => tracing::warn!(error = %e, "start-up reconciliation scan failed"),
        }
        queue
    }

    async fn attempt_due(&self, queue: &mut BTreeMap<String, Pending>, all: bool) {
        for (id, mut pending) in task::take_due(queue, Instant::now(), all, |p| p.due) {
            if pending.only_if_unseen && (self.seen_since(&id) || self.backfill_owns(&id)) {
                bump(&self.stats.skipped_other);
                continue;
            }
            let (result, retry_at) = match self.reconcile_output(&id).await {
                Ok(r) => r,
                Err(e) => {
                    // Our own store or inbox failed: the fetch was not filed.
                    tracing::warn!(output = %id, error = %e, "reconcile could not be filed");
                    (
                        Reconciled::Failed {
                            retry: true,
                            detail: e.to_string(),
                        },
                        None,
                    )
                }
            };
            tracing::debug!(output = %id, ?result, "reconciled");
            let Reconciled::Failed {
                retry: true,
                detail,
            } = result
            else {
                continue;
            };
            pending.failures += 1;
            if pending.failures >= self.options.max_attempts {
                bump(&self.stats.gave_up);
                tracing::warn!(output = %id, attempts = pending.failures, %detail, "reconcile keeps failing; giving up until asked again");
                continue;
            }
            let wait = self.backoff(pending.failures).max(
                retry_at
                    .and_then(|at| (at - self.clock.now()).to_std().ok())
                    .unwrap_or_default(),
            );
            tracing::info!(output = %id, attempt = pending.failures, wait_secs = wait.as_secs(), %detail, "reconcile failed; will try again");
            pending.due = Instant::now() + wait;
            // It was attempted because it was unseen; its own failure
            // observation must not cancel the retry.
            pending.only_if_unseen = false;
            // A request that came in meanwhile keeps its own entry.
            queue.entry(id).or_insert(pending);
        }
    }

    fn after_grace(&self) -> Pending {
        Pending {
            due: Instant::now() + self.options.unseen_grace,
            only_if_unseen: true,
            ..fresh()
        }
    }

    /// True when observations of the output's target have arrived.
    fn seen_since(&self, id: &str) -> bool {
        match self.store.output(id) {
            Ok(Some(stored)) => self
                .store
                .has_observations(&stored.execution.watch_keys())
                .unwrap_or(false),
            _ => false,
        }
    }

    /// True when a backfill will evaluate the output (`github::backfill`).
    fn backfill_owns(&self, id: &str) -> bool {
        match self.store.output(id) {
            Ok(Some(stored)) => self
                .store
                .backfill_owns(&stored.execution.repo, stored.execution.run_id)
                .unwrap_or(false),
            _ => false,
        }
    }

    fn backoff(&self, failures: u32) -> Duration {
        crate::github::retry::doubling(self.options.retry_min, self.options.retry_max, failures)
    }

    /// One attempt for one output: fetch, judge, hand to the worker. Also
    /// returns when GitHub said to come back (rate limits).
    pub(crate) async fn reconcile_output(
        &self,
        id: &str,
    ) -> Result<(Reconciled, Option<chrono::DateTime<chrono::Utc>>), ReconcileError> {
        let Some(stored) = self.store.output(id)? else {
            bump(&self.stats.skipped_other);
            return Ok((Reconciled::Skipped("unknown output"), None));
        };
        let record = stored.execution;
        if required_endpoints(&record).is_empty() {
            bump(&self.stats.skipped_other);
            return Ok((
                Reconciled::Skipped("nothing the API can be asked about"),
                None,
            ));
        }
        let installation = match reading_installation(&self.store, &record)? {
            Ok(installation) => installation,
            Err(refusal) => {
                // Stored before the rule, or the installations changed: an
                // installation's token never reads for another's output.
                self.tenancy.refused(Where::Reconcile, &record.id, &refusal);
                return Ok((
                    Reconciled::Skipped("the output names a repository outside its installation"),
                    None,
                ));
            }
        };
        let Some(installation) = installation else {
            bump(&self.stats.skipped_no_installation);
            tracing::info!(output = %record.id, "not reconciled: no active installation covers its repository");
            return Ok((
                Reconciled::Skipped("no active installation for the repository"),
                None,
            ));
        };
        let mut fetched = fetch::fetch(&self.client, installation, &record).await;
        let fetched_at = self.clock.now();
        fetched.state.read_at = Some(fetched_at);
        let mut attempt = judge(&record, &fetched.state, fetched_at);
        if attempt.failure.is_none() && !is_deletion(&attempt.observations) {
            self.add_signals(
                installation,
                &record,
                &fetched.state,
                &mut attempt.observations,
            )
            .await;
        }
        let result = match &attempt.failure {
            Some(detail) => {
                bump(&self.stats.failed);
                let messages: Vec<String> =
                    fetched.messages.iter().map(|(_, m)| m.clone()).collect();
                Reconciled::Failed {
                    retry: attempt.retry,
                    detail: if messages.is_empty() {
                        detail.clone()
                    } else {
                        format!("{detail} ({})", messages.join("; "))
                    },
                }
            }
            None if is_deletion(&attempt.observations) => {
                bump(&self.stats.deleted);
                Reconciled::Deleted
            }
            None => Reconciled::Observed(attempt.observations.len()),
        };
        let failure = match &result {
            Reconciled::Failed { detail, .. } => Some(detail.clone()),
            _ => None,
        };
        self.writer
            .enqueue(InboxItem::Reconciled {
                output_id: record.id.clone(),
                fetched_at,
                observations: attempt.observations,
                failure,
            })
            .await
            .map_err(|e| ReconcileError::Inbox(e.to_string()))?;
        bump(&self.stats.attempts);
        Ok((result, fetched.retry_at))
    }
}

impl Reconciler {
    /// The signals no webhook carries (reactions, team memberships), read
    /// at this evaluation: an output judged from the API after the fact has
    /// passed the checkpoints where the signal fetcher would have read them,
    /// and its past windows need them. A failed read is logged and left out
    /// (the fetcher tries again at the checkpoints still ahead).
    ///
    /// What they read completes the fetched `state`, and the whole is mapped
    /// again: a reaction rollup on the output's own comment or item then
    /// counts only what the dated reactor list read with it does not show
    /// (each listed reaction is dated at its `created_at`, by its reactor).
    async fn add_signals(
        &self,
        installation: u64,
        record: &crate::model::ExecutionRecord,
        state: &crate::ingest::reconcile::ApiState,
        observations: &mut Vec<Observation>,
    ) {
        let now = self.clock.now();
        match signals::read_now(&self.client, installation, record, observations, now).await {
            Ok(found) if found.responses.is_empty() => {}
            Ok(found) => {
                let mut whole = state.clone();
                for (path, answer) in found.responses {
                    whole.responses.entry(path).or_insert(answer);
                }
                *observations = crate::ingest::reconcile::observations_from_api(record, &whole);
            }
            Err(e) => {
                tracing::info!(output = %record.id, error = %e, "signals not read with the reconcile")
            }
        }
    }
}

fn fresh() -> Pending {
    Pending {
        due: Instant::now(),
        failures: 0,
        only_if_unseen: false,
    }
}

fn is_deletion(observations: &[Observation]) -> bool {
    observations.iter().any(|o| {
        o.actor.is_none()
            && o.id.ends_with(":gone")
            && matches!(
                o.event,
                ObservationKind::Deleted
                    | ObservationKind::CommentDeleted { .. }
                    | ObservationKind::ReviewCommentDeleted { .. }
            )
    })
}

/// True for observations that did not come from a webhook: read from the
/// API (`api:` ids) or a failed reconcile.
pub(crate) fn from_reconcile(o: &Observation) -> bool {
    o.id.starts_with("api:") || matches!(o.event, ObservationKind::ReconcileFailed { .. })
}

/// Outputs to reconcile at start-up: unresolved (`pending`/`unknown`, or
/// never assessed), something to fetch, and no webhook observation of their
/// targets, and not left to a backfill in progress. Never-observed ones
/// first, then those known only from the API; at most `limit`.
pub fn startup_candidates(store: &Store, limit: usize) -> Result<Vec<String>, StoreError> {
    let mut never = Vec::new();
    let mut api_only = Vec::new();
    for stored in store.outputs("", None) {
        if never.len() >= limit {
            break;
        }
        let stored = stored?;
        let unresolved = stored.outcome.as_ref().is_none_or(|o| {
            matches!(
                o.outcome_status,
                OutcomeStatus::Pending | OutcomeStatus::Unknown
            )
        });
        if !unresolved || required_endpoints(&stored.execution).is_empty() {
            continue;
        }
        // A backfill in progress evaluates it (once).
        if store.backfill_owns(&stored.execution.repo, stored.execution.run_id)? {
            continue;
        }
        let observations = store.observations(&stored.execution.watch_keys())?;
        if observations.is_empty() {
            never.push(stored.execution.id);
        } else if observations.iter().all(from_reconcile) {
            api_only.push(stored.execution.id);
        }
    }
    never.extend(api_only);
    never.truncate(limit);
    Ok(never)
}
