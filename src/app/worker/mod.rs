//! The worker: the single writer of outputs and observations. It drains the
//! inbox in order, files observations, merges and registers outputs, and
//! re-assesses only the outputs watching a touched target. It also takes the
//! checkpoints that come due on the schedule. When an output's outcome
//! changes, it tells the check-run publisher (if any) which PRs it bears on,
//! after the change is committed. It also files installation changes, and
//! the results of API reconciliation; it asks the reconciler (if any) to
//! reconcile manifest outputs whose targets it has never seen, and queues
//! completed gh-aw runs for the manifest harvester (`github::harvest`).

use std::collections::{BTreeSet, HashMap};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use crate::app::state::Shared;
use crate::github::checks::prs_touched;
use crate::github::harvest::{self, RunRef};
use crate::github::installations::{self, InstallationAction, InstallationChange};
use crate::judge::assess::{assess, next_checkpoint};
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

/// Tries of an item whose processing returns an error, before it is moved
/// to the dead letters.
const MAX_ATTEMPTS: u32 = 3;

/// Why an item was moved aside.
#[derive(Debug)]
struct Failure {
    error: String,
    attempts: u32,
    /// Another replica holds a lock the item needs (PostgreSQL): it is
    /// left in the inbox for a later unit, not moved aside.
    busy: bool,
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

/// The message of a caught panic (`panic!` gives a `&str` or a `String`).
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_string())
}

/// Test hook: a counter named `test_panic_at` holding an inbox sequence
/// makes processing that item panic once its observations are filed (unit
/// tests of the dead-letter path and of units of work failing midway).
#[cfg(test)]
fn fail_for_tests(store: &Store, seq: u64) {
    if store.counter("test_panic_at") == seq {
        panic!("injected failure at inbox item {seq}");
    }
}

/// How often the worker looks at the schedule on its own.
const SCHEDULE_POLL: Duration = Duration::from_secs(15);

/// Most due checkpoints taken per batch.
const SCHEDULE_BATCH: usize = 512;

/// Inbox items read from the store at a time while a unit gathers them.
const INBOX_READ: usize = 16;

/// Most inbox items in one unit of work...
const UNIT_ITEMS: usize = 64;
/// ...and the longest a unit goes on taking items before it commits: short,
/// so that the commit (sled's process-wide write lock) is short too.
const UNIT_TIME: Duration = Duration::from_millis(1);
/// On PostgreSQL there is no process-wide write lock, and every commit is a
/// round trip and a WAL flush: a unit goes on for longer (up to `UNIT_ITEMS`).
const UNIT_TIME_SHARED: Duration = Duration::from_millis(100);

/// When the inbox is drained, the worker flushes its commits unless the
/// store was flushed less than this long ago (the inbox writer's flushes
/// carry them too while deliveries arrive). While it drains it does not
/// flush: after a crash, whatever was not flushed is redone from the inbox.
const FLUSH_EVERY: Duration = Duration::from_secs(1);

/// The worker's thread runs at this nice value: the acceptor and the inbox
/// writer get the cores first, by construction.
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
    }
}

/// Lower the calling thread's scheduling priority (Linux: nice is per thread).
fn lower_priority() {
    // SAFETY: setpriority only reads its arguments; `0` is the calling thread.
    let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, WORKER_NICE) };
    if rc != 0 {
        tracing::debug!("could not lower the worker's priority");
    }
}

pub struct Worker {
    store: Store,
    shared: std::sync::Arc<Shared>,
    processed: u64,
    /// Repository → installation already filed, so ordinary deliveries do
    /// not rewrite the mapping.
    seen_installations: HashMap<String, u64>,
    /// No inbox item below this sequence is left: scans start here instead of
    /// at the front of the queue, which sled leaves strewn with emptied leaves.
    next_seq: u64,
    cache: ObservationCache,
    outputs: OutputCache,
}

impl Worker {
    pub fn new(store: Store, shared: std::sync::Arc<Shared>) -> Worker {
        let processed = store.counter(counter::PROCESSED);
        Worker {
            store,
            shared,
            processed,
            seen_installations: HashMap::new(),
            next_seq: 0,
            cache: ObservationCache::default(),
            outputs: OutputCache::default(),
        }
    }

    /// Run until the message channel closes.
    pub fn run(mut self, rx: Receiver<WorkerMsg>) {
        lower_priority();
        self.drain_inbox();
        self.take_due_checkpoints();
        self.shared.mark_ready();
        loop {
            match rx.recv_timeout(SCHEDULE_POLL) {
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
        }
    }

    /// Process every stored inbox item, oldest first, many per unit of work.
    /// While ingest is saturated the worker works in slices and sleeps
    /// between them (`pressure`): the deliveries are durable, the handlers
    /// need the cores. An item that cannot be processed is moved to the dead
    /// letters and the queue goes on; only a store that cannot even take
    /// that move stops it.
    pub fn drain_inbox(&mut self) {
        let mut slice = Instant::now();
        loop {
            self.shared.pressure.maybe_give_way(&mut slice);
            match self.process_unit() {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => {
                    self.shared.record_error(e);
                    break;
                }
            }
        }
        // Idle: make the worker's commits durable, unless a group commit of
        // the inbox writer just did (sled's own flusher is off: `Store::open`).
        if let Err(e) = self.store.flush_if_older(FLUSH_EVERY) {
            self.shared.record_error(format!("flushing the store: {e}"));
        }
    }

    /// Process inbox items in one unit of work, up to `UNIT_ITEMS` or
    /// `UNIT_TIME`; an item that needs a unit of its own (it writes through
    /// `github::` helpers, or commits chunk by chunk) ends the unit before
    /// it, or is alone in it. Returns false when the inbox is empty, an
    /// error when the inbox cannot be read or the unit could not be
    /// committed (the store is failing: stop until woken again).
    fn process_unit(&mut self) -> std::result::Result<bool, String> {
        let started = Instant::now();
        let mut unit = self.store.begin();
        let shared = unit.is_shared();
        if shared {
            // Other replicas write too: nothing cached may outlive a unit.
            self.forget_cached();
        }
        let mut effects = Effects::default();
        let (mut count, mut last) = (0u64, None::<u64>);
        let mut busy = false;
        let mut pending = std::collections::VecDeque::new();
        loop {
            if pending.is_empty() {
                // On PostgreSQL items are claimed (what other replicas hold
                // is skipped), and items left busy lie below `next_seq`.
                let first = if shared { 0 } else { self.next_seq };
                let from = last.map_or(first, |l| l + 1);
                pending.extend(
                    unit.claim_inbox(from, INBOX_READ)
                        .map_err(|e| format!("reading the inbox: {e}"))?,
                );
            }
            let Some((seq, bytes)) = pending.pop_front() else {
                break;
            };
            let item = crate::store::inbox::decode_item(seq, &bytes);
            let alone = item.as_ref().is_ok_and(|i| self.needs_own_unit(i));
            if alone && count > 0 {
                break;
            }
            let sp = unit.savepoint();
            let outcome = match item {
                Ok(item) => self.process_guarded(&mut unit, seq, item),
                Err(e) => Err(Failure {
                    error: e.to_string(),
                    attempts: 1,
                    busy: false,
                }),
            };
            match outcome {
                Ok(done) => effects.absorb(done),
                Err(failure) if failure.busy => {
                    // Left in the inbox: the commit lets go of its claim.
                    unit.rollback_to(sp);
                    self.forget_cached();
                    busy = true;
                    break;
                }
                Err(failure) => {
                    // Nothing of the failed item is kept, only its move aside.
                    unit.rollback_to(sp);
                    self.forget_cached();
                    let now = self.shared.clock.now();
                    let error = failure.error.clone();
                    unit.dead_letter(seq, &bytes, failure.error, failure.attempts, now);
                    effects.dead.push((seq, error));
                }
            }
            unit.remove_inbox_item(seq);
            count += 1;
            last = Some(seq);
            let unit_time = if shared { UNIT_TIME_SHARED } else { UNIT_TIME };
            if alone || count as usize >= UNIT_ITEMS || started.elapsed() >= unit_time {
                break;
            }
        }
        let Some(last) = last else {
            drop(unit);
            if busy {
                // Another replica holds what the first item needs.
                std::thread::sleep(BUSY_PAUSE);
            }
            return Ok(busy);
        };
        unit.count_processed(self.processed, count);
        if let Err(e) = unit.commit() {
            self.forget_cached();
            return Err(format!("committing inbox items up to {last}: {e}"));
        }
        self.processed += count;
        self.shared
            .processed_total
            .store(self.processed, std::sync::atomic::Ordering::Relaxed);
        let mut done_up_to = last;
        if shared {
            // Items may be processed out of order across replicas: what is
            // done is everything below the oldest item still queued.
            if let Some(oldest) = self.store.oldest_queued_seq() {
                done_up_to = done_up_to.min(oldest.saturating_sub(1));
            }
        } else {
            self.next_seq = last + 1;
        }
        self.apply_effects(effects);
        self.shared.publish_processed(done_up_to);
        Ok(true)
    }

    /// Items whose processing writes through `github::` helpers that read
    /// the store itself (installations, harvest, backfill), or commits
    /// chunk by chunk: they get a unit of work of their own.
    fn needs_own_unit(&self, item: &InboxItem) -> bool {
        match item {
            InboxItem::Delivery {
                observations,
                installation_change,
                ..
            } => {
                installation_change.is_some()
                    || (self.shared.harvest_requests.is_some()
                        && observations
                            .iter()
                            .any(|o| RunRef::from_observation(o).is_some()))
            }
            InboxItem::ManifestChunks { .. } => true,
            InboxItem::Manifest { .. } | InboxItem::Reconciled { .. } => false,
        }
    }

    /// What a committed unit leaves to do: tell the hooks, count.
    fn apply_effects(&mut self, effects: Effects) {
        self.shared
            .outputs_tracked
            .fetch_add(effects.new_outputs, std::sync::atomic::Ordering::Relaxed);
        for (seq, error) in &effects.dead {
            self.shared.dead_lettered(*seq, error);
        }
        self.notify_prs(&effects.changed, effects.new_heads);
        self.request_reconciles(effects.unobserved);
        if let Some(hook) = &self.shared.harvest_requests {
            for run in effects.harvests {
                hook.request(run);
            }
        }
        if let (true, Some(hook)) = (effects.backfill, &self.shared.backfill_requests) {
            hook.wake();
        }
    }

    /// Process one item into the unit, catching panics. An error is retried
    /// (it may have been passing) up to `MAX_ATTEMPTS`, its writes undone
    /// before each try; a panic is not retried.
    fn process_guarded(
        &mut self,
        unit: &mut Unit,
        seq: u64,
        item: InboxItem,
    ) -> std::result::Result<Effects, Failure> {
        let sp = unit.savepoint();
        let mut attempts = 0;
        loop {
            attempts += 1;
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.process(unit, seq, item.clone())
            }));
            // The failed item's writes may be half done: undo them, and
            // forget what we cached.
            let error = match run {
                Ok(Ok(effects)) => return Ok(effects),
                Ok(Err(e @ StoreError::Busy(_))) => {
                    return Err(Failure {
                        error: e.to_string(),
                        attempts,
                        busy: true,
                    });
                }
                Ok(Err(e)) => e.to_string(),
                Err(panic) => {
                    return Err(Failure {
                        error: format!("panicked: {}", panic_message(&*panic)),
                        attempts,
                        busy: false,
                    });
                }
            };
            unit.rollback_to(sp);
            self.forget_cached();
            if attempts >= MAX_ATTEMPTS {
                return Err(Failure {
                    error,
                    attempts,
                    busy: false,
                });
            }
        }
    }

    fn process(&mut self, unit: &mut Unit, seq: u64, item: InboxItem) -> Result<Effects> {
        let _ = seq;
        let mut fx = Effects::default();
        let mut outputs = BTreeSet::new();
        let mut touched = BTreeSet::new();
        match item {
            InboxItem::Delivery {
                observations,
                discoveries,
                installation_change,
                ..
            } => {
                if let Some(change) = installation_change {
                    self.file_installation(&change, unit.external_batch())?;
                    if let Some(hook) = &self.shared.backfill_requests {
                        let now = self.shared.clock.now();
                        fx.backfill =
                            hook.plan_change(&self.store, &change, now, unit.external_batch())?;
                    }
                }
                // A new head commit needs its own check run even when no
                // outcome changed.
                fx.new_heads.extend(
                    observations
                        .iter()
                        .filter(|o| matches!(o.event, ObservationKind::Synchronize { .. }))
                        .map(|o| o.target.clone()),
                );
                for record in discoveries {
                    outputs.insert(self.upsert_output(unit, record, &mut fx)?);
                }
                if self.shared.harvest_requests.is_some() {
                    for run in observations.iter().filter_map(RunRef::from_observation) {
                        if harvest::queue(&self.store, &run, unit.external_batch())? {
                            fx.harvests.insert(run);
                        }
                    }
                }
                for obs in observations {
                    self.file_observation(unit, obs, &mut touched)?;
                }
            }
            InboxItem::Manifest { records, .. } => {
                self.upsert_manifest_records(unit, records, &mut outputs, &mut fx)?;
            }
            InboxItem::ManifestChunks { upload, chunks, .. } => {
                for chunk in 0..chunks {
                    self.process_chunk(upload, chunk)?;
                }
                unit.uncommit_upload(upload);
            }
            InboxItem::Reconciled {
                output_id,
                fetched_at,
                observations,
                failure,
            } => {
                let id = unit.canonical(&output_id)?;
                if let Some(stored) = unit.output(&id)? {
                    for obs in observations {
                        self.file_observation(unit, obs, &mut touched)?;
                    }
                    let target = stored.execution.watch_keys().into_iter().next();
                    if let (Some(detail), Some(target)) = (failure, target) {
                        let failed = Observation {
                            id: format!("reconcile_failed:{id}:{}", fetched_at.timestamp_millis()),
                            at: fetched_at,
                            target,
                            actor: None,
                            event: ObservationKind::ReconcileFailed { detail },
                            snapshot: None,
                        };
                        self.file_observation(unit, failed, &mut touched)?;
                    }
                    outputs.insert(id);
                }
            }
        }
        // After the item's observations are filed: a failure here is one
        // midway through the item's writes.
        #[cfg(test)]
        fail_for_tests(&self.store, seq);
        for target in &touched {
            // A replica registering an output on this target waits for
            // these observations, or they for it (`reassess` locks too).
            lock(unit, target)?;
            outputs.extend(unit.outputs_on(target)?);
        }
        for id in &outputs {
            fx.changed.extend(self.reassess(unit, id)?);
        }
        Ok(fx)
    }

    /// Register a manifest's records; collects the outputs to re-assess and
    /// those never observed (to reconcile).
    fn upsert_manifest_records(
        &mut self,
        unit: &mut Unit,
        records: Vec<ExecutionRecord>,
        outputs: &mut BTreeSet<String>,
        fx: &mut Effects,
    ) -> Result<()> {
        for record in records {
            let id = self.upsert_output(unit, record, fx)?;
            if self.shared.reconcile_requests.is_some() && self.never_observed(unit, &id)? {
                fx.unobserved.push(id.clone());
            }
            outputs.insert(id);
        }
        Ok(())
    }

    /// Apply one staged chunk of a streamed manifest in its own commit, which
    /// also removes the chunk: memory is one chunk's worth whatever the size
    /// of the manifest, and after a crash the applied chunks are not redone.
    fn process_chunk(&mut self, upload: u64, chunk: u32) -> Result<()> {
        let mut unit = self.store.begin();
        let records = match staging::chunk(&self.store, upload, chunk) {
            Ok(Some(records)) => records,
            Ok(None) => return Ok(()),
            Err(e @ crate::store::StoreError::Decode { .. }) => {
                // A chunk that cannot decode would block the queue forever.
                self.shared.record_error(format!(
                    "dropped undecodable manifest chunk {chunk} of upload {upload}: {e}"
                ));
                unit.remove_staged_chunk(upload, chunk);
                return unit.commit();
            }
            Err(e) => return Err(e),
        };
        let (mut outputs, mut fx) = (BTreeSet::new(), Effects::default());
        self.upsert_manifest_records(&mut unit, records, &mut outputs, &mut fx)?;
        for id in &outputs {
            fx.changed.extend(self.reassess(&mut unit, id)?);
        }
        unit.remove_staged_chunk(upload, chunk);
        unit.commit()?;
        self.apply_effects(fx);
        Ok(())
    }

    fn request_reconciles(&self, unobserved: Vec<String>) {
        if let Some(hook) = &self.shared.reconcile_requests {
            for id in unobserved {
                hook.request_if_unseen(id);
            }
        }
    }

    /// After a failed write the store is the truth: drop the caches.
    fn forget_cached(&mut self) {
        self.cache.clear();
        self.outputs.clear();
        self.seen_installations.clear();
    }

    /// True when the API can be asked about an output and nothing at all
    /// has been filed under its watch keys (its target was never seen: the
    /// App was installed late, or webhooks were lost).
    fn never_observed(&self, unit: &Unit, id: &str) -> Result<bool> {
        let Some(stored) = unit.output(id)? else {
            return Ok(false);
        };
        if crate::ingest::reconcile::required_endpoints(&stored.execution).is_empty() {
            return Ok(false);
        }
        Ok(!unit.has_observations(&stored.execution.watch_keys())?)
    }

    /// File an installation change; a `Seen` already filed is skipped.
    fn file_installation(
        &mut self,
        change: &InstallationChange,
        batch: &mut crate::store::ExternalBatch,
    ) -> Result<()> {
        let id = change.installation_id;
        let seen = change.action == InstallationAction::Seen;
        if seen
            && change
                .repos_added
                .iter()
                .all(|r| self.seen_installations.get(r) == Some(&id))
        {
            return Ok(());
        }
        installations::apply(&self.store, change, batch)?;
        for repo in &change.repos_added {
            self.seen_installations.insert(repo.clone(), id);
        }
        if !seen {
            // Removals and status changes: forget the shortcut.
            self.seen_installations.clear();
        }
        Ok(())
    }

    /// Tell the check-run publisher which PRs the changed outputs bear on.
    fn notify_prs(&self, changed: &[Target], mut prs: BTreeSet<String>) {
        let Some(hook) = &self.shared.pr_changes else {
            return;
        };
        for target in changed {
            match prs_touched(&self.store, target) {
                Ok(keys) => prs.extend(keys),
                Err(e) => tracing::warn!(error = %e, "finding the PRs of a changed output"),
            }
        }
        for pr in prs {
            hook.changed(pr);
        }
    }

    /// Store an observation under its target, and under the PRs whose head
    /// branch, head commit or merge commit it concerns. Idempotent: the key is
    /// deterministic.
    fn file_observation(
        &mut self,
        unit: &mut Unit,
        obs: Observation,
        touched: &mut BTreeSet<String>,
    ) -> Result<()> {
        if is_linkable_key(&obs.target) {
            for thread in unit.threads_on_ref(&obs.target)? {
                let copy = Observation {
                    target: thread.clone(),
                    ..obs.clone()
                };
                unit.put_observation(&thread, &copy);
                self.cache.inserted(&thread, &copy);
                touched.insert(thread);
            }
        }
        if let Some(snap) = obs
            .snapshot
            .as_ref()
            .filter(|s| s.kind == Some(TargetKind::PullRequest))
        {
            let repo = obs.target.split('#').next().unwrap_or_default();
            let merge_commit = snap.merge_commit_sha.as_ref().filter(|_| snap.merged);
            let linked = [
                snap.head_ref.as_ref().map(|r| ref_key(repo, r)),
                snap.head_sha.as_ref().map(|s| commit_key(repo, s)),
                merge_commit.map(|s| commit_key(repo, s)),
            ];
            for key in linked.into_iter().flatten() {
                self.link_ref(unit, &key, &obs.target)?;
            }
        }
        unit.put_observation(&obs.target, &obs);
        self.cache.inserted(&obs.target, &obs);
        touched.insert(obs.target);
        Ok(())
    }

    /// Link a branch or commit to a PR, copying what was filed under it before.
    fn link_ref(&mut self, unit: &mut Unit, ref_key: &str, thread: &str) -> Result<()> {
        if unit.is_linked(ref_key, thread)? {
            return Ok(());
        }
        for obs in unit.observations_of(ref_key)? {
            let copy = Observation {
                target: thread.to_string(),
                ..obs
            };
            unit.put_observation(thread, &copy);
            self.cache.inserted(thread, &copy);
        }
        unit.link(ref_key, thread);
        Ok(())
    }

    /// Register an output, or merge it into the one already known for the same
    /// object (a webhook discovery and a manifest line are one output).
    /// Returns the canonical id.
    fn upsert_output(
        &mut self,
        unit: &mut Unit,
        record: ExecutionRecord,
        fx: &mut Effects,
    ) -> Result<String> {
        let target_key = record.target.as_ref().map(|t| t.key());
        lock(unit, &record.id)?;
        if let Some(tk) = &target_key {
            lock(unit, &format!("type:{tk}:{}", record.output_type))?;
        }
        let by_object = match &target_key {
            Some(tk) => unit.output_of_type_on(tk, &record.output_type)?,
            None => None,
        };
        let same_id = unit.output(&record.id)?.map(|s| s.execution.id);
        let existing = match (same_id, by_object) {
            (Some(id), _) => Some(id),
            (None, Some(id)) => {
                let other = unit.output(&id)?;
                // Two manifest lines on one object are two outputs; only a
                // webhook discovery and a manifest line are one.
                other
                    .filter(|o| o.execution.sources.manifest != record.sources.manifest)
                    .map(|o| o.execution.id)
            }
            (None, None) => None,
        };
        let stored = match existing {
            Some(old_id) => {
                lock(unit, &old_id)?;
                let mut stored = unit.output(&old_id)?.expect("looked up above");
                stored.execution.merge(record);
                stored
                    .trace_id
                    .get_or_insert_with(crate::model::ident::new_trace_id);
                let new_id = stored.execution.id.clone();
                if new_id != old_id {
                    self.outputs.forget(&old_id);
                    unit.retire_output(&old_id, &new_id, &stored.execution.watch_keys());
                }
                stored
            }
            None => {
                fx.new_outputs += 1;
                StoredOutput {
                    execution: record,
                    outcome: None,
                    trace_id: Some(crate::model::ident::new_trace_id()),
                }
            }
        };
        let id = stored.execution.id.clone();
        unit.put_output(&stored);
        self.outputs.written(&stored);
        Ok(id)
    }

    /// Recompute an output's outcome from its observations, as of now.
    /// Returns the output's target when its outcome changed.
    fn reassess(&mut self, unit: &mut Unit, id: &str) -> Result<Option<Target>> {
        // Replicas: whoever holds the output and its targets sees every
        // committed observation of them; the other leaves its item for later.
        lock(unit, id)?;
        let Some(stored) = self.outputs.get_mut(&*unit, id)? else {
            return Ok(None);
        };
        let watch = stored.execution.watch_keys();
        for key in &watch {
            lock(unit, key)?;
        }
        let observations = self.cache.observations(&*unit, &watch)?;
        let now = self.shared.clock.now();
        let outcome = assess(&stored.execution, &observations, now);
        if let Some(due) = next_checkpoint(stored.execution.executed_at, now) {
            unit.schedule(due, &stored.execution.id)?;
        }
        if stored.outcome.as_ref() != Some(&outcome) {
            stored.outcome = Some(outcome);
            unit.put_output_record(stored);
            return Ok(stored.execution.target.clone());
        }
        Ok(None)
    }

    /// A due output a signal could still change whose type reads signals no webhook
    /// carries (`github::signals`), when a signals fetcher is plugged in.
    fn wants_signals(&mut self, unit: &Unit, id: &str) -> Result<bool> {
        if self.shared.signal_requests.get().is_none() {
            return Ok(false);
        }
        let Some(stored) = self.outputs.get_mut(unit, id)? else {
            return Ok(false);
        };
        use crate::github::signals;
        // The checkpoint just taken: the latest one passed.
        let elapsed = self.shared.clock.now() - stored.execution.executed_at;
        let taken = crate::model::CHECKPOINTS
            .iter()
            .map(|(_, h)| *h)
            .filter(|h| chrono::Duration::hours(*h) <= elapsed)
            .max();
        Ok(signals::open_to_signals(stored.outcome.as_ref())
            && signals::wants(&stored.execution)
            && taken.is_some_and(|h| signals::reads_at(&stored.execution, h)))
    }

    /// Re-assess every output whose next checkpoint is due.
    /// On PostgreSQL the due checkpoints are claimed by the unit, and one
    /// whose output another replica holds is left due for a later pass.
    pub fn take_due_checkpoints(&mut self) {
        loop {
            let now = self.shared.clock.now();
            let mut unit = self.store.begin();
            if unit.is_shared() {
                self.forget_cached();
            }
            let due = match unit.claim_due(now, SCHEDULE_BATCH) {
                Ok(due) => due,
                Err(e) => {
                    self.shared
                        .record_error(format!("reading the schedule: {e}"));
                    return;
                }
            };
            if due.is_empty() {
                return;
            }
            let mut result = Ok(());
            let mut changed = Vec::new();
            let mut signals = Vec::new();
            let mut busy = false;
            for (due_at, id) in &due {
                let sp = unit.savepoint();
                unit.unschedule(*due_at, id);
                let canonical = unit.canonical(id);
                match canonical.and_then(|canonical| {
                    let target = self.reassess(&mut unit, &canonical)?;
                    if self.wants_signals(&unit, &canonical)? {
                        signals.push(canonical);
                    }
                    Ok(target)
                }) {
                    Ok(target) => changed.extend(target),
                    Err(StoreError::Busy(_)) => {
                        unit.rollback_to(sp);
                        self.forget_cached();
                        busy = true;
                    }
                    Err(e) => result = Err(e),
                }
            }
            if let Err(e) = result.and_then(|_| unit.commit()) {
                self.forget_cached();
                self.shared.record_error(format!("taking checkpoints: {e}"));
                return;
            }
            self.notify_prs(&changed, BTreeSet::new());
            if let (Some(hook), false) = (self.shared.signal_requests.get(), signals.is_empty()) {
                hook.due(signals);
            }
            if busy {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use super::*;
    use crate::app::App;
    use crate::model::clock::Clock;
    use crate::store::inbox::Enqueued;

    fn delivery(id: &str) -> InboxItem {
        delivery_observing(id, &[])
    }

    /// A delivery filing one observation (id `obs-<id>`) under each target.
    fn delivery_observing(id: &str, targets: &[&str]) -> InboxItem {
        let at = chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        InboxItem::Delivery {
            delivery_id: id.into(),
            event: "issues".into(),
            action: Some("edited".into()),
            received_at: at,
            observations: targets
                .iter()
                .map(|t| Observation {
                    id: format!("obs-{id}"),
                    at,
                    target: t.to_string(),
                    actor: None,
                    event: ObservationKind::Opened,
                    snapshot: None,
                })
                .collect(),
            discoveries: Vec::new(),
            installation_change: None,
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_panicking_item_is_dead_lettered_and_the_queue_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let app = App::start(dir.path(), Clock::System).unwrap();
        app.wait_ready().await;
        // The second item stored (sequence 2) panics when processed.
        app.store.set_counter_for_tests("test_panic_at", 2);
        for id in ["d-1", "d-2", "d-3"] {
            let stored = app.writer.enqueue(delivery(id)).await.unwrap();
            assert!(matches!(stored, Enqueued::Stored(_)));
        }
        app.wait_idle().await;
        assert_eq!(app.shared.worker_death(), None, "the worker lives on");
        assert_eq!(app.shared.dead_letters.load(Ordering::Relaxed), 1);
        assert_eq!(app.shared.processed_total.load(Ordering::Relaxed), 3);
        assert_eq!(app.store.backlog(), 0);
        let letters = app.store.dead_letters().unwrap();
        assert_eq!(letters.len(), 1);
        assert_eq!(letters[0].seq, 2);
        assert_eq!(letters[0].attempts, 1, "a panic is not retried");
        assert!(letters[0].error.contains("injected failure"), "{letters:?}");
        assert_eq!(letters[0].item(), Some(delivery("d-2")));
        assert!(app.shared.last_error().unwrap().contains("dead letters"));
        app.shutdown();
    }

    /// Two workers (two replicas' stores on one PostgreSQL database) drain
    /// one inbox at once: every item is processed exactly once.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_workers_on_one_database_process_every_item_exactly_once() {
        if crate::store::pg::test_pg_from_env().is_none() {
            return eprintln!("SKIPPED: set SAFE_OUTCOMES_TEST_PG to run on PostgreSQL");
        }
        let dir = tempfile::tempdir().unwrap();
        let app = App::start_without_worker(dir.path(), Clock::System).unwrap();
        assert!(app.store.is_pg());
        let n = 300;
        for i in 0..n {
            let target = format!("acme/r#{}", i % 7);
            let item = delivery_observing(&format!("d-{i}"), &[target.as_str()]);
            assert!(matches!(
                app.writer.enqueue(item).await,
                Ok(Enqueued::Stored(_))
            ));
        }
        let other = Store::open(&dir.path().join("store")).unwrap();
        let workers = [app.store.clone(), other].map(|store| {
            let shared = app.shared.clone();
            std::thread::spawn(move || {
                let mut worker = Worker::new(store, shared);
                worker.drain_inbox();
                worker.processed
            })
        });
        let counts: Vec<u64> = workers.map(|w| w.join().unwrap()).into();
        let store = &app.store;
        assert_eq!(store.counter(counter::PROCESSED), n, "{counts:?}");
        assert_eq!(store.backlog(), 0);
        assert_eq!(store.oldest_queued_seq(), None);
        assert!(store.dead_letters().unwrap().is_empty());
        let filed: usize = (0..7)
            .map(|t| store.observations(&[format!("acme/r#{t}")]).unwrap().len())
            .sum();
        assert_eq!(filed as u64, n, "every item's observation, once");
        app.shutdown();
    }

    /// Items stored while no worker runs are drained in one unit of work;
    /// the middle one fails after filing its observations: none of its
    /// writes are committed, and those of the items around it are.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_item_failing_midway_in_a_unit_leaves_nothing_half_written() {
        let dir = tempfile::tempdir().unwrap();
        let app = App::start_without_worker(dir.path(), Clock::System).unwrap();
        for (id, targets) in [
            ("d-1", &["acme/r#1"][..]),
            ("d-2", &["acme/r#1", "acme/r#2"][..]),
            ("d-3", &["acme/r#3"][..]),
        ] {
            let stored = app.writer.enqueue(delivery_observing(id, targets)).await;
            assert!(matches!(stored, Ok(Enqueued::Stored(_))));
        }
        app.store.set_counter_for_tests("test_panic_at", 2);
        let (store, shared) = (app.store.clone(), app.shared.clone());
        let mut worker = Worker::new(store.clone(), shared);
        worker.drain_inbox();
        let ids = |t: &str| -> Vec<String> {
            store
                .observations(&[t.to_string()])
                .unwrap()
                .into_iter()
                .map(|o| o.id)
                .collect()
        };
        assert_eq!(ids("acme/r#1"), ["obs-d-1"], "d-2's copy is not kept");
        assert!(ids("acme/r#2").is_empty(), "d-2 wrote nothing");
        assert_eq!(ids("acme/r#3"), ["obs-d-3"]);
        assert_eq!(store.backlog(), 0);
        assert_eq!(store.counter(counter::PROCESSED), 3);
        let letters = store.dead_letters().unwrap();
        assert_eq!(letters.iter().map(|l| l.seq).collect::<Vec<_>>(), [2]);
        app.shutdown();
    }
}
