//! The worker: the single writer of outputs and observations. It drains the
//! inbox in order, files observations, merges and registers outputs, and
//! re-assesses only the outputs watching a touched target. It also takes the
//! checkpoints that come due on the schedule. When an output's outcome
//! changes, it tells the check-run publisher (if any) which PRs it bears on,
//! after the change is committed. It also files installation changes, and
//! the results of API reconciliation; it asks the reconciler (if any) to
//! reconcile manifest outputs whose targets it has never seen, and queues
//! completed gh-aw runs for the manifest harvester (`github::harvest`).
//!
//! Here: the thread's loop. The unit of work is in `unit`, its steps in
//! `discover` (register outputs), `observe` (file observations), `reassess`
//! and `checkpoints`, `renamed` (renamed repositories' names); failures and panics in `dead_letters`.

mod checkpoints;
mod dead_letters;

#[cfg(test)]
use dead_letters::fail_for_tests;
pub(crate) use dead_letters::panic_message;
use dead_letters::Failure;
mod discover;
mod observe;
mod prefetch;
mod reassess;
mod renamed;
#[cfg(test)]
mod tests;
mod unit;

use std::collections::{BTreeSet, HashMap};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use crate::app::state::Shared;
use crate::github::checks::prs_touched;
use crate::github::harvest::{self, RunRef};
use crate::github::installations::{self, InstallationAction, InstallationChange};
use crate::judge::assess::{assess, judged_as_of, next_checkpoint};
use crate::model::target::{commit_key, is_linkable_key, ref_key, TargetKind};
use crate::model::{ExecutionRecord, Observation, ObservationKind, Target};
use crate::store::cache::{ObservationCache, OutputCache};
use crate::store::inbox::InboxItem;
use crate::store::{counter, staging, ReadStore, Result, Store, StoreError, StoredOutput, Unit};

/// Messages to the worker thread.
pub enum WorkerMsg {
    /// New inbox items were stored.
    Wake,
    /// Take due checkpoints now; reply when done.
    Tick(Option<std::sync::mpsc::Sender<()>>),
}

/// How long the worker waits before it tries again items another replica
/// held locked.
const BUSY_PAUSE: Duration = Duration::from_millis(20);

/// Take the lock on `key` for the unit, or fail the item as busy.
fn lock(unit: &Unit, key: &str) -> Result<()> {
    if unit.try_lock(key)? {
        Ok(())
    } else {
        Err(StoreError::Busy(key.to_string()))
    }
}

/// How often the worker sweeps what expired leases left (`sweep_when_due`).
const SWEEP_EVERY: Duration = Duration::from_secs(60);

/// How often the worker looks at the schedule on its own.
const SCHEDULE_POLL: Duration = Duration::from_secs(15);

/// How often the worker looks again while the store reopens after an I/O
/// error (`store::heal`).
const RETRY_POLL: Duration = Duration::from_millis(250);

/// Most due checkpoints taken per batch.
const SCHEDULE_BATCH: usize = 512;

/// Inbox items read from the store at a time while a unit gathers them.
const INBOX_READ: usize = 16;

/// Most inbox items in one unit of work on sled...
const UNIT_ITEMS: usize = 128;
/// ...and the longest a unit goes on taking items before it commits: short,
/// so that the commit (sled's process-wide write lock, which readers wait
/// behind) is short too, and long enough that what every commit pays
/// whatever its size (sled seals and hands its log buffer to an IO thread
/// twice, the unit's counters, each record written once however many of the
/// unit's items changed it) is spread over many items: an event's drain
/// cost 26 µs at 1 ms (64 items), 23.5 µs at 2–8 ms, 25 µs at 16 ms
/// (docs/store.md, "How long a unit of work is").
const UNIT_TIME: Duration = Duration::from_millis(2);
/// On PostgreSQL there is no process-wide write lock, and every commit is a
/// round trip and a WAL flush: a unit goes on for longer, up to this many
/// items (the claim of a unit, `Unit::claim_inbox`). What a unit pays
/// whatever its size (the claim, two read-ahead rounds, the commit's
/// statements and its WAL flush) came to 70% of a replayed event's time at
/// 64 items (docs/postgres.md, "Engine").
const UNIT_ITEMS_SHARED: usize = 256;
/// ...and this many while other replicas contend for the same items
/// (`Worker::shared_unit_items`).
const UNIT_ITEMS_CONTENDED: usize = 64;
const UNIT_TIME_SHARED: Duration = Duration::from_millis(100);

/// How often the worker flushes its commits (when the inbox is drained, and
/// while it drains), and then lets the journal drop the items they processed
/// (`Store::release_inbox_through`). After a crash, whatever was not flushed
/// is redone from the journal, which still holds it.
const FLUSH_EVERY: Duration = Duration::from_secs(1);

/// The worker's thread runs at this nice value (`WORKER_NICE` overrides
/// it): the acceptor and the inbox writer get the cores first.
const WORKER_NICE: i32 = 10;

/// What processing items leaves to do once their unit is committed.
#[derive(Default)]
struct Effects {
    changed: Vec<Target>,
    new_heads: BTreeSet<String>,
    unobserved: Vec<String>,
    harvests: BTreeSet<RunRef>,
    backfill: bool,
    new_outputs: u64,
    /// Items moved to the dead letters, with why.
    dead: Vec<(u64, String)>,
    /// Outputs the items touched, judged once after the unit's last item
    /// (`Worker::judge_unit`); empty while items are judged one by one.
    judge: BTreeSet<String>,
}

impl Effects {
    fn absorb(&mut self, other: Effects) {
        self.changed.extend(other.changed);
        self.new_heads.extend(other.new_heads);
        self.unobserved.extend(other.unobserved);
        self.harvests.extend(other.harvests);
        self.backfill |= other.backfill;
        self.new_outputs += other.new_outputs;
        self.dead.extend(other.dead);
        self.judge.extend(other.judge);
    }
}

pub struct Worker {
    /// The store, pinned to the opening of its files the worker's state
    /// was read from: after a reopen (`store::heal`) every call fails until
    /// the worker starts again from the reopened files (`resync`).
    store: Store,
    /// The store as the App holds it (not pinned).
    base: Store,
    shared: std::sync::Arc<Shared>,
    processed: u64,
    /// Repository → installation already filed, so ordinary deliveries do
    /// not rewrite the mapping.
    seen_installations: HashMap<String, u64>,
    /// The name a delivery's repository is keyed by (`renamed`), by
    /// (installation, repository id, name now): read once, not twice an
    /// event. Only the worker files renames (`file_installation`, which
    /// drops it); dropped with the other caches (`forget_cached`).
    keyed_names: HashMap<(u64, Option<u64>, String), Option<String>>,
    /// No inbox item below this sequence is left: scans start here instead of
    /// at the front of the queue, which sled leaves strewn with emptied leaves.
    next_seq: u64,
    /// The inbox sequence through which the worker's commits are flushed
    /// and released to the journal (sled), and when that was last done.
    released: u64,
    last_release: Instant,
    cache: ObservationCache,
    outputs: OutputCache,
    /// The unit epoch this worker's last commit left (PostgreSQL): while it
    /// stands, no other replica wrote since and the caches hold (`prefetch`).
    epoch: Option<u64>,
    /// When a unit of this worker's was last rolled back because another
    /// replica committed while it ran (`StoreError::Stale`): for a while
    /// after, its units expect nothing of the caches (`prefetch`).
    contended: Option<Instant>,
    /// When the next sweep of expired leases' leftovers is due.
    next_sweep: Instant,
    /// Items through this inbox sequence are judged after each item: a
    /// unit whose judging failed is done again that way, so that the
    /// failure is set aside with the one item it belongs to
    /// (`Worker::judges_once`: on sled the unit's first item decides, on
    /// PostgreSQL each item's own sequence).
    judge_each_through: u64,
}

impl Worker {
    pub fn new(base: Store, shared: std::sync::Arc<Shared>) -> Worker {
        let store = base.pinned();
        let processed = store.counter(counter::PROCESSED);
        // On sled the items up to `INBOX_DONE` are processed, even while the
        // journal still holds them.
        let next_seq = store.queue_start();
        Worker {
            store,
            base,
            shared,
            processed,
            seen_installations: HashMap::new(),
            keyed_names: HashMap::new(),
            next_seq,
            released: next_seq.saturating_sub(1),
            last_release: Instant::now(),
            cache: ObservationCache::default(),
            outputs: OutputCache::default(),
            epoch: None,
            contended: None,
            next_sweep: Instant::now(),
            judge_each_through: 0,
        }
    }

    /// Run until the message channel closes.
    pub fn run(mut self, rx: Receiver<WorkerMsg>) {
        crate::app::lower_priority(&crate::settings::WORKER_NICE, WORKER_NICE);
        self.sweep_when_due();
        self.drain_inbox();
        self.take_due_checkpoints();
        self.shared.mark_ready();
        loop {
            // While the store cannot write, look again soon: it reopens by
            // itself (`store::heal`), and what is queued must not wait for
            // the next delivery to wake the worker.
            let poll = if self.store_reopening() || self.resync_due() {
                RETRY_POLL
            } else {
                SCHEDULE_POLL
            };
            match rx.recv_timeout(poll) {
                Ok(WorkerMsg::Wake) => self.drain_inbox(),
                Ok(WorkerMsg::Tick(reply)) => {
                    self.drain_inbox();
                    self.take_due_checkpoints();
                    if let Some(reply) = reply {
                        let _ = reply.send(());
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    self.drain_inbox();
                    self.take_due_checkpoints();
                }
                Err(RecvTimeoutError::Disconnected) => break,
            }
            self.sweep_when_due();
        }
    }
}

impl Worker {
    /// Every `SWEEP_EVERY` (and when the worker starts): remove the staged
    /// chunks of uploads nobody committed whose lease ran out — a process
    /// or replica killed while reading the body — and expired leases.
    /// Every replica's worker does it; a live upload holds its lease.
    fn sweep_when_due(&mut self) {
        if Instant::now() < self.next_sweep {
            return;
        }
        self.next_sweep = Instant::now() + SWEEP_EVERY;
        match staging::sweep(&self.store) {
            Ok(0) => {}
            Ok(chunks) => tracing::info!(chunks, "removed uncommitted manifest chunks"),
            Err(e) => self
                .shared
                .record_error(format!("sweeping uncommitted manifest chunks: {e}")),
        }
    }
}

impl Worker {
    /// The sled store is closed, reopening after an I/O error (not asked
    /// of PostgreSQL, where it would be a round trip per message).
    fn store_reopening(&self) -> bool {
        !self.base.is_pg() && self.base.write_trouble().is_some()
    }

    /// The store's files were reopened since the worker's state was read.
    fn resync_due(&self) -> bool {
        self.base.generation() != self.store.generation()
    }

    /// After the store reopened (`store::heal`): start again from what the
    /// reopened files hold, as a restart would. sled's writes the worker
    /// had not flushed are gone, and the journal still holds their items
    /// (it drops only what a flush made durable): they are processed again.
    /// Nothing changes while the counters cannot be read (closed again).
    pub(super) fn resync(&mut self) {
        if !self.resync_due() {
            return;
        }
        let fresh = Worker::new(self.base.clone(), self.shared.clone());
        // Read as 0 if the files closed meanwhile: checked on the pinned
        // store, which fails unless the same opening stayed open.
        let done = fresh.next_seq.saturating_sub(1);
        let read_back = (
            fresh.store.try_counter(counter::PROCESSED),
            fresh.store.try_counter(counter::INBOX_DONE),
        );
        if !matches!(read_back, (Ok(p), Ok(d)) if p == fresh.processed && d == done) {
            return;
        }
        tracing::warn!(
            generation = fresh.store.generation(),
            from = fresh.next_seq,
            "the store was reopened: the worker starts again from its durable state"
        );
        let shared = &self.shared;
        shared
            .processed_total
            .store(fresh.processed, std::sync::atomic::Ordering::Relaxed);
        shared.outputs_tracked.store(
            fresh.store.output_count(),
            std::sync::atomic::Ordering::Relaxed,
        );
        *self = fresh;
    }
}
