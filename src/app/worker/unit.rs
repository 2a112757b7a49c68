//! The unit of work: inbox items gathered into one store transaction, each
//! item processed under a savepoint (a failing or panicking item is set aside
//! as a dead letter, `dead_letters`), and what the committed unit leaves to do.

use super::*;

impl Worker {
    /// Process every stored inbox item, oldest first, many per unit of work.
    /// While ingest is saturated the worker works in slices and sleeps
    /// between them (`pressure`): the deliveries are durable, the handlers
    /// need the cores. An item that cannot be processed is moved to the dead
    /// letters and the queue goes on; only a store that cannot even take
    /// that move stops it.
    pub fn drain_inbox(&mut self) {
        self.resync();
        let mut slice = Instant::now();
        loop {
            self.shared.pressure.maybe_give_way(&mut slice);
            match self.process_unit() {
                Ok(true) => self.release_when_due(),
                Ok(false) => break,
                Err(e) => {
                    self.shared.record_error(e);
                    break;
                }
            }
        }
        // Idle: make the worker's commits durable if they were not lately
        // (sled's own flusher is off: `Store::open`).
        self.release_when_due();
        if let Err(e) = self.store.flush_if_older(FLUSH_EVERY) {
            self.shared.record_error(format!("flushing the store: {e}"));
        }
    }

    /// Every `FLUSH_EVERY`, on sled: flush the worker's commits (as durable
    /// as the store's `Durability`), then let the journal drop the inbox
    /// items they processed. Nothing to do on PostgreSQL, whose commits
    /// removed them.
    fn release_when_due(&mut self) {
        let through = self.next_seq.saturating_sub(1);
        if self.store.is_pg()
            || through <= self.released
            || self.last_release.elapsed() < FLUSH_EVERY
        {
            return;
        }
        match self.store.flush_durable() {
            Ok(()) => {
                self.store.release_inbox_through(through);
                self.released = through;
                self.last_release = Instant::now();
            }
            Err(e) => self.shared.record_error(format!("flushing the store: {e}")),
        }
    }

    /// Process inbox items in one unit of work, up to `UNIT_ITEMS` or
    /// `UNIT_TIME` (on PostgreSQL `UNIT_ITEMS_SHARED`, `UNIT_TIME_SHARED`);
    /// an item that needs a unit of its own (it writes through
    /// `github::` helpers, or commits chunk by chunk) ends the unit before
    /// it, or is alone in it. Returns false when the inbox is empty, an
    /// error when the inbox cannot be read or the unit could not be
    /// committed (the store is failing: stop until woken again).
    pub(super) fn process_unit(&mut self) -> std::result::Result<bool, String> {
        let started = Instant::now();
        let mut unit = self.store.begin();
        let shared = unit.is_shared();
        let (unit_items, unit_time) = if shared {
            (self.shared_unit_items(), UNIT_TIME_SHARED)
        } else {
            (UNIT_ITEMS, UNIT_TIME)
        };
        let mut effects = Effects::default();
        let (mut count, mut last) = (0u64, None::<u64>);
        let (mut busy, mut chunks) = (false, false);
        // The epoch the commit must find for what the caches held when the
        // unit began (PostgreSQL, `prefetch`).
        let mut expect = None;
        let mut pending = std::collections::VecDeque::new();
        loop {
            if pending.is_empty() {
                // On PostgreSQL a unit's items are claimed at once (what
                // other replicas hold is skipped; items left busy lie below
                // `next_seq`) and their reads prefetched together.
                let first = if shared { 0 } else { self.next_seq };
                let from = last.map_or(first, |l| l + 1);
                let want = if shared {
                    unit_items - count as usize
                } else {
                    INBOX_READ
                };
                let claimed: Vec<_> = unit
                    .claim_inbox(from, want)
                    .map_err(|e| format!("reading the inbox: {e}"))?
                    .into_iter()
                    .map(|(seq, bytes)| {
                        let item = crate::store::inbox::decode_item(seq, &bytes);
                        (seq, bytes, item)
                    })
                    .collect();
                if shared && !claimed.is_empty() {
                    let decoded: Vec<&InboxItem> = claimed
                        .iter()
                        .filter_map(|(_, _, i)| i.as_ref().ok())
                        .collect();
                    let items = self.processed_together(&decoded, count == 0);
                    let at_start = self
                        .prefetch(&unit, &items, &[])
                        .map_err(|e| format!("reading ahead: {e}"))?;
                    if count == 0 {
                        expect = at_start;
                    }
                }
                pending.extend(claimed);
            }
            let Some((seq, bytes, item)) = pending.pop_front() else {
                break;
            };
            let alone = item.as_ref().is_ok_and(|i| self.needs_own_unit(i));
            if alone && count > 0 {
                break;
            }
            chunks |= matches!(item, Ok(InboxItem::ManifestChunks { .. }));
            let sp = unit.savepoint();
            let outcome = match item {
                Ok(item) => self.process_guarded(&mut unit, seq, item, &bytes),
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
            if alone || count as usize >= unit_items || started.elapsed() >= unit_time {
                break;
            }
        }
        if busy {
            self.contended = Some(Instant::now());
        }
        let Some(last) = last else {
            drop(unit);
            if busy {
                // Another replica holds what the first item needs.
                std::thread::sleep(BUSY_PAUSE);
            }
            return Ok(busy);
        };
        let judge = std::mem::take(&mut effects.judge);
        if let Err(error) = self.judge_unit(&mut unit, &judge, &mut effects) {
            // Which item the failure belongs to is not known: the unit is
            // done again, each item's outputs judged after it, so that the
            // failing item is set aside alone (`process_guarded`).
            drop(unit);
            self.forget_cached();
            self.judge_each_through = last;
            tracing::warn!(%error, through = last, "judging a unit's outputs; its items are done again one by one");
            return Ok(true);
        }
        unit.count_processed(self.processed, count);
        // A streamed manifest's chunks committed units of their own, each
        // checked: what this unit holds from before is what they left.
        let expect = if chunks { self.epoch } else { expect };
        match self.commit(unit, expect) {
            Ok(()) => {}
            // Another replica wrote what the caches held: done again, afresh.
            Err(StoreError::Stale) => return Ok(true),
            Err(e) => return Err(format!("committing inbox items up to {last}: {e}")),
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

    /// Of the items claimed, those this unit will process: up to the first
    /// that needs a unit of its own, or that one alone when it comes first
    /// (`first`). A manifest's chunks are applied in units of their own,
    /// which must not find their locks held by this one: nothing of them.
    fn processed_together<'a>(&self, items: &[&'a InboxItem], first: bool) -> Vec<&'a InboxItem> {
        match items.iter().position(|i| self.needs_own_unit(i)) {
            Some(0) if first => items[..1]
                .iter()
                .copied()
                .filter(|i| !matches!(i, InboxItem::ManifestChunks { .. }))
                .collect(),
            Some(n) => items[..n].to_vec(),
            None => items.to_vec(),
        }
    }

    /// Items whose processing writes through `github::` helpers that read
    /// the store itself (installations, harvest, backfill), or commits
    /// chunk by chunk: they get a unit of work of their own.
    pub(super) fn needs_own_unit(&self, item: &InboxItem) -> bool {
        match item {
            InboxItem::Delivery {
                observations,
                installation_change,
                ..
            } => {
                installation_change
                    .as_ref()
                    .is_some_and(|c| !self.already_filed(c))
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
    pub(super) fn apply_effects(&mut self, effects: Effects) {
        self.shared
            .outputs_tracked
            .fetch_add(effects.new_outputs, std::sync::atomic::Ordering::Relaxed);
        for (seq, error) in &effects.dead {
            self.shared.dead_lettered(*seq, error);
        }
        self.notify_prs(&effects.changed, effects.new_heads);
        if let Some(spans) = self.shared.outcome_spans.get() {
            spans.release();
        }
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

    pub(super) fn process(
        &mut self,
        unit: &mut Unit,
        seq: u64,
        item: InboxItem,
    ) -> Result<Effects> {
        let mut fx = Effects::default();
        let mut outputs = BTreeSet::new();
        let mut touched = BTreeSet::new();
        match item {
            InboxItem::Delivery {
                mut observations,
                mut discoveries,
                installation_change,
                ..
            } => {
                self.deliver_under_keyed_name(
                    installation_change.as_ref(),
                    &mut observations,
                    &mut discoveries,
                )?;
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
                    outputs.extend(self.upsert_output(unit, record, &mut fx)?);
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
                        // What a read for an output brings back is filed
                        // for it only within its own repositories.
                        if !crate::ingest::tenancy::within_reach(&stored.execution, &obs.target) {
                            let at = crate::ingest::tenancy::Where::Reconcile;
                            self.shared.tenancy.add(at, "outside_reach", 1);
                            continue;
                        }
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
        fail_for_tests(&self.store, seq)?;
        for target in &touched {
            // A replica registering an output on this target waits for
            // these observations, or they for it (`reassess` locks too).
            lock(unit, target)?;
            outputs.extend(self.cache.outputs_on(&*unit, target)?.iter().cloned());
        }
        if self.judges_once(unit, seq) {
            if unit.is_shared() {
                for id in &outputs {
                    self.lock_for_judging(unit, id)?;
                }
            }
            fx.judge = outputs;
        } else {
            for id in &outputs {
                fx.changed.extend(self.reassess(unit, id)?);
            }
        }
        Ok(fx)
    }
}
