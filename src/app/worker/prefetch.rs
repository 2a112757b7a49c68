//! Saying ahead what a unit's items will read (`store::ReadPlan`), so that
//! on PostgreSQL a unit of 64 items reads its locks, records and scans in
//! two round trips instead of a few per item; and keeping the caches across
//! units: they stay as long as no other replica's unit committed since this
//! worker's last commit (the unit epoch read with the first round, checked
//! again by the commit, `Unit::commit_after`). On sled both are no-ops.

use super::*;
use crate::store::ReadPlan;

/// How long after a stale unit (or one that found an item busy) the
/// worker's caches are dropped at every commit (`Worker::commit`) and its
/// units are smaller (`shared_unit_items`).
const CONTENDED: Duration = Duration::from_secs(5);

impl Worker {
    /// Items a unit claims on PostgreSQL: `UNIT_ITEMS_SHARED`, or
    /// `UNIT_ITEMS_CONTENDED` for `CONTENDED` after a unit found an item
    /// another replica holds, or went stale — where the locks a large
    /// unit takes for all its items hold the other replica back, and
    /// what it claims and reads ahead beyond its first busy item is
    /// wasted.
    pub(super) fn shared_unit_items(&self) -> usize {
        match self.contended.is_some_and(|at| at.elapsed() < CONTENDED) {
            true => UNIT_ITEMS_CONTENDED,
            false => UNIT_ITEMS_SHARED,
        }
    }

    /// Read ahead what `items` will ask for, in two rounds: what the items
    /// name (their outputs, targets, refs), then the outputs watching those
    /// targets — and the `due` outputs (checkpoints) — and what they watch. Drops the caches when another
    /// replica committed since this worker's last commit. Returns the epoch
    /// the unit's commit must still find (`None`: nothing cached is relied on).
    pub(super) fn prefetch(
        &mut self,
        unit: &Unit,
        items: &[&InboxItem],
        due: &[String],
    ) -> Result<Option<u64>> {
        if !unit.is_shared() {
            return Ok(None);
        }
        let mut plan = ReadPlan::default();
        let mut targets = BTreeSet::new();
        for item in items {
            plan_item(item, &mut plan, &mut targets);
        }
        let epoch = unit.prefetch(plan)?;
        if self.epoch.is_some() && epoch != self.epoch {
            self.forget_cached();
        }
        let mut plan = ReadPlan::default();
        let mut ids: BTreeSet<String> = due.iter().cloned().collect();
        for target in &targets {
            ids.extend(unit.outputs_on(target)?);
            if is_linkable_key(target) {
                for thread in unit.threads_on_ref(target)? {
                    plan_target(&thread, &mut plan);
                    ids.extend(unit.outputs_on(&thread).unwrap_or_default());
                }
            }
        }
        for id in &ids {
            plan.lock(id);
            match self.outputs.peek(id) {
                Some(stored) => {
                    for key in stored.execution.watch_keys() {
                        plan.lock(&key);
                        if !self.cache.has(&key) {
                            plan.observations(&key);
                        }
                    }
                }
                None => plan.output(id),
            }
        }
        if !plan.is_empty() {
            unit.prefetch(plan)?;
        }
        Ok(self.epoch)
    }

    /// Commit a unit of the worker's, expecting the unit epoch at `expect`
    /// (PostgreSQL): the caches are kept on success, dropped otherwise.
    /// While other replicas commit as busily (a unit of this worker's was
    /// stale within `CONTENDED`), they are dropped after every commit too:
    /// the next unit reads afresh and expects nothing, so it is never
    /// done twice (a unit of 256 items redone costs more than its reads).
    pub(super) fn commit(&mut self, unit: Unit, expect: Option<u64>) -> Result<()> {
        match unit.commit_after(expect) {
            Ok(epoch) => {
                self.epoch = epoch;
                if self.contended.is_some_and(|at| at.elapsed() < CONTENDED) {
                    // The caches only: the unit's outcome spans are
                    // released with its effects.
                    self.cache.clear();
                    self.outputs.clear();
                    self.seen_installations.clear();
                    self.keyed_names.clear();
                    self.epoch = None;
                }
                Ok(())
            }
            Err(e) => {
                if matches!(e, StoreError::Stale) {
                    self.contended = Some(Instant::now());
                }
                self.forget_cached();
                Err(e)
            }
        }
    }
}

/// A target an item files observations under: its lock, its observations,
/// the outputs watching it.
fn plan_target(target: &str, plan: &mut ReadPlan) {
    plan.lock(target);
    plan.observations(target);
    plan.outputs_on(target);
}

/// An output an item registers or reassesses.
fn plan_record(record: &ExecutionRecord, plan: &mut ReadPlan) {
    plan.lock(&record.id);
    plan.output(&record.id);
    if let Some(target) = &record.target {
        let key = target.key();
        plan.lock(&format!("type:{key}:{}", record.output_type));
        plan.type_index(&key, &record.output_type);
    }
    for key in record.watch_keys() {
        plan_target(&key, plan);
    }
}

/// What one item will read (`Worker::process` and its steps).
fn plan_item(item: &InboxItem, plan: &mut ReadPlan, targets: &mut BTreeSet<String>) {
    let observations = match item {
        InboxItem::Delivery {
            observations,
            discoveries,
            ..
        } => {
            discoveries.iter().for_each(|r| plan_record(r, plan));
            observations.as_slice()
        }
        InboxItem::Manifest { records, .. } => {
            records.iter().for_each(|r| plan_record(r, plan));
            &[]
        }
        InboxItem::Reconciled {
            output_id,
            observations,
            ..
        } => {
            plan.lock(output_id);
            plan.output(output_id);
            observations.as_slice()
        }
        InboxItem::ManifestChunks { .. } => &[],
    };
    for obs in observations {
        plan_target(&obs.target, plan);
        targets.insert(obs.target.clone());
        if is_linkable_key(&obs.target) {
            plan.threads_on_ref(&obs.target);
        }
        for key in super::observe::linked_refs(obs) {
            plan.link(&key, &obs.target);
            plan.observations(&key);
        }
    }
}
