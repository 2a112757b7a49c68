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

use crate::assess::{assess, next_checkpoint};
use crate::github::checks::prs_touched;
use crate::github::harvest::{self, RunRef};
use crate::github::installations::{self, InstallationAction, InstallationChange};
use crate::model::target::{commit_key, is_linkable_key, ref_key, TargetKind};
use crate::model::{ExecutionRecord, Observation, ObservationKind, Target};
use crate::state::Shared;
use crate::store::cache::{ObservationCache, OutputCache};
use crate::store::inbox::InboxItem;
use crate::store::{counter, decode, encode, keys, staging, Result, Store, StoredOutput};

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
/// makes committing that item panic (unit tests of the dead-letter path).
#[cfg(test)]
fn fail_for_tests(store: &Store, seq: u64) {
    if store
        .db()
        .get(keys::counter("test_panic_at"))
        .ok()
        .flatten()
        .as_deref()
        == Some(&seq.to_be_bytes()[..])
    {
        panic!("injected failure at inbox item {seq}");
    }
}

/// How often the worker looks at the schedule on its own.
const SCHEDULE_POLL: Duration = Duration::from_secs(15);

/// Most due checkpoints taken per batch.
const SCHEDULE_BATCH: usize = 512;

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

    /// Process every stored inbox item, oldest first. While ingest is
    /// saturated the worker works in slices and sleeps between them
    /// (`pressure`): the deliveries are durable, the handlers need the cores.
    /// An item that cannot be processed is moved to the dead letters and the
    /// queue goes on; only a store that cannot even take that move stops it.
    pub fn drain_inbox(&mut self) {
        let mut slice = Instant::now();
        loop {
            self.shared.pressure.maybe_give_way(&mut slice);
            let next = self
                .store
                .db()
                .range(keys::inbox_queue(self.next_seq)..)
                .next();
            let (key, value) = match next {
                Some(Ok(kv)) => kv,
                Some(Err(e)) => {
                    self.shared.record_error(format!("reading the inbox: {e}"));
                    break;
                }
                None => break,
            };
            if !key.starts_with(keys::INBOX_QUEUE) {
                break;
            }
            let seq = key[keys::INBOX_QUEUE.len()..]
                .try_into()
                .map(u64::from_be_bytes)
                .unwrap_or(0);
            self.next_seq = seq;
            if let Err(failure) = self.process_guarded(seq, &key, &value) {
                if let Err(e) = self.dead_letter(seq, &value, &failure) {
                    self.shared.record_error(format!(
                        "inbox item {seq} failed ({}) and could not be moved aside: {e}",
                        failure.error
                    ));
                    break;
                }
            }
            self.shared.publish_processed(seq);
        }
    }

    /// Process one stored item, catching panics. An error is retried (it may
    /// have been passing) up to `MAX_ATTEMPTS`; a panic or an undecodable
    /// record is not.
    fn process_guarded(
        &mut self,
        seq: u64,
        key: &[u8],
        value: &[u8],
    ) -> std::result::Result<(), Failure> {
        let item: InboxItem = decode(key, value).map_err(|e| Failure {
            error: e.to_string(),
            attempts: 1,
        })?;
        let mut attempts = 0;
        loop {
            attempts += 1;
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.process(seq, item.clone())
            }));
            // The failed item's writes may be half done: forget what we cached.
            let error = match run {
                Ok(Ok(())) => return Ok(()),
                Ok(Err(e)) => e.to_string(),
                Err(panic) => {
                    self.forget_cached();
                    return Err(Failure {
                        error: format!("panicked: {}", panic_message(&*panic)),
                        attempts,
                    });
                }
            };
            self.forget_cached();
            if attempts >= MAX_ATTEMPTS {
                return Err(Failure { error, attempts });
            }
        }
    }

    /// Move item `seq` (its stored bytes) to the dead letters, in the commit
    /// that removes it from the inbox.
    fn dead_letter(&mut self, seq: u64, value: &[u8], failure: &Failure) -> Result<()> {
        if !self.store.db().contains_key(keys::inbox_queue(seq))? {
            // It failed after its commit (telling the publisher): it is done.
            self.shared.record_error(format!(
                "after processing inbox item {seq}: {}",
                failure.error
            ));
            return Ok(());
        }
        let mut batch = sled::Batch::default();
        Store::dead_letter_into(
            &mut batch,
            seq,
            value,
            failure.error.clone(),
            failure.attempts,
            self.shared.clock.now(),
        );
        self.finish(seq, batch)?;
        self.shared.dead_lettered(seq, &failure.error);
        Ok(())
    }

    fn process(&mut self, seq: u64, item: InboxItem) -> Result<()> {
        #[cfg(test)]
        fail_for_tests(&self.store, seq);
        let mut outputs = BTreeSet::new();
        let mut touched = BTreeSet::new();
        let mut batch = sled::Batch::default();
        let mut new_heads = BTreeSet::new();
        let mut unobserved = Vec::new();
        let mut harvests = BTreeSet::new();
        let mut backfill = false;
        match item {
            InboxItem::Delivery {
                observations,
                discoveries,
                installation_change,
                ..
            } => {
                if let Some(change) = installation_change {
                    self.file_installation(&change, &mut batch)?;
                    if let Some(hook) = &self.shared.backfill_requests {
                        let now = self.shared.clock.now();
                        backfill = hook.plan_change(&self.store, &change, now, &mut batch)?;
                    }
                }
                // A new head commit needs its own check run even when no
                // outcome changed.
                new_heads.extend(
                    observations
                        .iter()
                        .filter(|o| matches!(o.event, ObservationKind::Synchronize { .. }))
                        .map(|o| o.target.clone()),
                );
                for record in discoveries {
                    outputs.insert(self.upsert_output(record)?);
                }
                if self.shared.harvest_requests.is_some() {
                    for run in observations.iter().filter_map(RunRef::from_observation) {
                        if harvest::queue(&self.store, &run, &mut batch)? {
                            harvests.insert(run);
                        }
                    }
                }
                for obs in observations {
                    self.file_observation(obs, &mut touched)?;
                }
            }
            InboxItem::Manifest { records, .. } => {
                self.upsert_manifest_records(records, &mut outputs, &mut unobserved)?;
            }
            InboxItem::ManifestChunks { upload, chunks, .. } => {
                for chunk in 0..chunks {
                    self.process_chunk(upload, chunk)?;
                }
                batch.remove(keys::manifest_committed(upload));
            }
            InboxItem::Reconciled {
                output_id,
                fetched_at,
                observations,
                failure,
            } => {
                let id = self.store.canonical_id(&output_id)?;
                if let Some(stored) = self.store.output(&id)? {
                    for obs in observations {
                        self.file_observation(obs, &mut touched)?;
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
                        self.file_observation(failed, &mut touched)?;
                    }
                    outputs.insert(id);
                }
            }
        }
        for target in &touched {
            outputs.extend(self.store.outputs_on(target)?);
        }
        let mut changed = Vec::new();
        for id in &outputs {
            changed.extend(self.reassess(id, &mut batch)?);
        }
        self.finish(seq, batch)?;
        self.notify_prs(&changed, new_heads);
        self.request_reconciles(unobserved);
        if let Some(hook) = &self.shared.harvest_requests {
            for run in harvests {
                hook.request(run);
            }
        }
        if let (true, Some(hook)) = (backfill, &self.shared.backfill_requests) {
            hook.wake();
        }
        Ok(())
    }

    /// Register a manifest's records; collects the outputs to re-assess and
    /// those never observed (to reconcile).
    fn upsert_manifest_records(
        &mut self,
        records: Vec<ExecutionRecord>,
        outputs: &mut BTreeSet<String>,
        unobserved: &mut Vec<String>,
    ) -> Result<()> {
        for record in records {
            let id = self.upsert_output(record)?;
            if self.shared.reconcile_requests.is_some() && self.never_observed(&id)? {
                unobserved.push(id.clone());
            }
            outputs.insert(id);
        }
        Ok(())
    }

    /// Apply one staged chunk of a streamed manifest in its own commit, which
    /// also removes the chunk: memory is one chunk's worth whatever the size
    /// of the manifest, and after a crash the applied chunks are not redone.
    fn process_chunk(&mut self, upload: u64, chunk: u32) -> Result<()> {
        let records = match staging::chunk(&self.store, upload, chunk) {
            Ok(Some(records)) => records,
            Ok(None) => return Ok(()),
            Err(e @ crate::store::StoreError::Decode { .. }) => {
                // A chunk that cannot decode would block the queue forever.
                self.shared.record_error(format!(
                    "dropped undecodable manifest chunk {chunk} of upload {upload}: {e}"
                ));
                self.store.db().remove(keys::staged_chunk(upload, chunk))?;
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        let (mut outputs, mut unobserved) = (BTreeSet::new(), Vec::new());
        self.upsert_manifest_records(records, &mut outputs, &mut unobserved)?;
        let mut batch = sled::Batch::default();
        let mut changed = Vec::new();
        for id in &outputs {
            changed.extend(self.reassess(id, &mut batch)?);
        }
        batch.remove(keys::staged_chunk(upload, chunk));
        self.store.db().apply_batch(batch)?;
        self.notify_prs(&changed, BTreeSet::new());
        self.request_reconciles(unobserved);
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
    }

    /// True when the API can be asked about an output and nothing at all
    /// has been filed under its watch keys (its target was never seen: the
    /// App was installed late, or webhooks were lost).
    fn never_observed(&self, id: &str) -> Result<bool> {
        let Some(stored) = self.store.output(id)? else {
            return Ok(false);
        };
        if crate::reconcile::required_endpoints(&stored.execution).is_empty() {
            return Ok(false);
        }
        Ok(!self
            .store
            .has_observations(&stored.execution.watch_keys())?)
    }

    /// File an installation change; a `Seen` already filed is skipped.
    fn file_installation(
        &mut self,
        change: &InstallationChange,
        batch: &mut sled::Batch,
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

    /// Commit the item's results together with its removal from the inbox.
    fn finish(&mut self, seq: u64, mut batch: sled::Batch) -> Result<()> {
        batch.remove(keys::inbox_queue(seq));
        Store::set_counter(&mut batch, counter::PROCESSED, self.processed + 1);
        self.store.db().apply_batch(batch)?;
        self.processed += 1;
        self.shared
            .processed_total
            .store(self.processed, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// Store an observation under its target, and under the PRs whose head
    /// branch, head commit or merge commit it concerns. Idempotent: the key is
    /// deterministic.
    fn file_observation(&mut self, obs: Observation, touched: &mut BTreeSet<String>) -> Result<()> {
        let db = self.store.db().clone();
        if is_linkable_key(&obs.target) {
            for thread in self.store.threads_on_ref(&obs.target)? {
                let copy = Observation {
                    target: thread.clone(),
                    ..obs.clone()
                };
                db.insert(keys::observation(&thread, copy.at, &copy.id), encode(&copy))?;
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
                self.link_ref(&key, &obs.target)?;
            }
        }
        db.insert(
            keys::observation(&obs.target, obs.at, &obs.id),
            encode(&obs),
        )?;
        self.cache.inserted(&obs.target, &obs);
        touched.insert(obs.target);
        Ok(())
    }

    /// Link a branch or commit to a PR, copying what was filed under it before.
    fn link_ref(&mut self, ref_key: &str, thread: &str) -> Result<()> {
        let db = self.store.db().clone();
        let link = keys::ref_link(ref_key, thread);
        if db.contains_key(&link)? {
            return Ok(());
        }
        for item in db.scan_prefix(keys::observations_of(ref_key)) {
            let (k, v) = item?;
            let obs: Observation = decode(&k, &v)?;
            let copy = Observation {
                target: thread.to_string(),
                ..obs
            };
            db.insert(keys::observation(thread, copy.at, &copy.id), encode(&copy))?;
            self.cache.inserted(thread, &copy);
        }
        db.insert(link, &[])?;
        Ok(())
    }

    /// Register an output, or merge it into the one already known for the same
    /// object (a webhook discovery and a manifest line are one output).
    /// Returns the canonical id.
    fn upsert_output(&mut self, record: ExecutionRecord) -> Result<String> {
        let db = self.store.db().clone();
        let target_key = record.target.as_ref().map(|t| t.key());
        let by_object = match &target_key {
            Some(tk) => self.store.output_of_type_on(tk, &record.output_type)?,
            None => None,
        };
        let same_id = self.store.output(&record.id)?.map(|s| s.execution.id);
        let existing = match (same_id, by_object) {
            (Some(id), _) => Some(id),
            (None, Some(id)) => {
                let other = self.store.output(&id)?;
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
                let mut stored = self.store.output(&old_id)?.expect("looked up above");
                stored.execution.merge(record);
                stored
                    .trace_id
                    .get_or_insert_with(crate::model::ident::new_trace_id);
                let new_id = stored.execution.id.clone();
                if new_id != old_id {
                    self.outputs.forget(&old_id);
                    db.remove(keys::output(&old_id))?;
                    db.insert(keys::alias(&old_id), new_id.as_bytes())?;
                    for key in stored.execution.watch_keys() {
                        db.remove(keys::target_index(&key, &old_id))?;
                    }
                }
                stored
            }
            None => {
                self.shared
                    .outputs_tracked
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                StoredOutput {
                    execution: record,
                    outcome: None,
                    trace_id: Some(crate::model::ident::new_trace_id()),
                }
            }
        };
        let id = stored.execution.id.clone();
        for key in stored.execution.watch_keys() {
            db.insert(keys::target_index(&key, &id), &[])?;
        }
        if let Some(t) = &stored.execution.target {
            db.insert(
                keys::type_index(&t.key(), &stored.execution.output_type),
                id.as_bytes(),
            )?;
        }
        db.insert(keys::output(&id), encode(&stored))?;
        self.outputs.written(&stored);
        Ok(id)
    }

    /// Recompute an output's outcome from its observations, as of now.
    /// Returns the output's target when its outcome changed.
    fn reassess(&mut self, id: &str, batch: &mut sled::Batch) -> Result<Option<Target>> {
        let Some(stored) = self.outputs.get_mut(&self.store, id)? else {
            return Ok(None);
        };
        let watch = stored.execution.watch_keys();
        let observations = self.cache.observations(&self.store, &watch)?;
        let now = self.shared.clock.now();
        let outcome = assess(&stored.execution, &observations, now);
        if let Some(due) = next_checkpoint(stored.execution.executed_at, now) {
            batch.insert(keys::schedule(due, &stored.execution.id), &[]);
        }
        if stored.outcome.as_ref() != Some(&outcome) {
            stored.outcome = Some(outcome);
            batch.insert(keys::output(&stored.execution.id), encode(&*stored));
            return Ok(stored.execution.target.clone());
        }
        Ok(None)
    }

    /// A due output a signal could still change whose type reads signals no webhook
    /// carries (`github::signals`), when a signals fetcher is plugged in.
    fn wants_signals(&mut self, id: &str) -> Result<bool> {
        if self.shared.signal_requests.get().is_none() {
            return Ok(false);
        }
        let Some(stored) = self.outputs.get_mut(&self.store, id)? else {
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
    pub fn take_due_checkpoints(&mut self) {
        loop {
            let now = self.shared.clock.now();
            let end = keys::schedule(now, "\u{10FFFF}");
            let due: Vec<(sled::IVec, String)> = self
                .store
                .db()
                .range(keys::SCHEDULE.to_vec()..end)
                .take(SCHEDULE_BATCH)
                .filter_map(|r| r.ok())
                .filter_map(|(k, _)| keys::parse_schedule(&k).map(|(_, id)| (k, id)))
                .collect();
            if due.is_empty() {
                return;
            }
            let mut batch = sled::Batch::default();
            let mut result = Ok(());
            let mut changed = Vec::new();
            let mut signals = Vec::new();
            for (key, id) in &due {
                batch.remove(key.clone());
                let canonical = self.store.canonical_id(id);
                match canonical.and_then(|canonical| {
                    let target = self.reassess(&canonical, &mut batch)?;
                    if self.wants_signals(&canonical)? {
                        signals.push(canonical);
                    }
                    Ok(target)
                }) {
                    Ok(target) => changed.extend(target),
                    Err(e) => result = Err(e),
                }
            }
            if let Err(e) = result.and_then(|_| Ok(self.store.db().apply_batch(batch)?)) {
                self.forget_cached();
                self.shared.record_error(format!("taking checkpoints: {e}"));
                return;
            }
            self.notify_prs(&changed, BTreeSet::new());
            if let (Some(hook), false) = (self.shared.signal_requests.get(), signals.is_empty()) {
                hook.due(signals);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use super::*;
    use crate::app::App;
    use crate::clock::Clock;
    use crate::store::inbox::Enqueued;

    fn delivery(id: &str) -> InboxItem {
        InboxItem::Delivery {
            delivery_id: id.into(),
            event: "issues".into(),
            action: Some("edited".into()),
            received_at: chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
            observations: Vec::new(),
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
        app.store
            .db()
            .insert(keys::counter("test_panic_at"), &2u64.to_be_bytes())
            .unwrap();
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
}
