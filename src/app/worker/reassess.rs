//! Re-assessing the outputs that watch a touched target, and whether an
//! output wants the signals no webhook carries.

use super::*;

impl Worker {
    /// Whether `unit` judges the outputs item `seq` touches once, after
    /// its last item (`judge_unit`), or after the item. Once, but for the
    /// items of a unit whose judging failed (`judge_each_through`): on
    /// sled `next_seq` is the unit's first item, and moves only when a
    /// unit commits; on PostgreSQL, where units claim items out of order,
    /// the item's own sequence decides. On PostgreSQL the item takes the
    /// locks judging needs (`lock_for_judging`) before it counts as done,
    /// so the locks still decide which replica judges an output.
    pub(super) fn judges_once(&self, unit: &Unit, seq: u64) -> bool {
        match unit.is_shared() {
            true => seq > self.judge_each_through,
            false => self.next_seq > self.judge_each_through,
        }
    }

    /// Take now, for the rest of the unit, the locks `reassess` takes on
    /// output `id` (the output, every target it watches): an item whose
    /// outputs are judged after the unit's last item fails as busy here,
    /// and is left in the inbox, when another replica holds one of them,
    /// as it would judging after the item.
    pub(super) fn lock_for_judging(&mut self, unit: &Unit, id: &str) -> Result<()> {
        lock(unit, id)?;
        if let Some(stored) = self.outputs.get_mut(unit, id)? {
            for key in stored.execution.watch_keys() {
                lock(unit, &key)?;
            }
        }
        Ok(())
    }

    /// Judge, once, the outputs a unit's items touched (`Effects::judge`),
    /// after its last item: an output many items touch is judged, and its
    /// record, rollup cells and schedule written, once per unit instead of
    /// once per item (docs/store.md, "Judged once per unit"). The outcome
    /// is the same: it is computed from every observation filed, as of now.
    /// A failure or a panic is returned, for the unit to be done again
    /// item by item.
    pub(super) fn judge_unit(
        &mut self,
        unit: &mut Unit,
        ids: &BTreeSet<String>,
        fx: &mut Effects,
    ) -> std::result::Result<(), String> {
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut changed = Vec::new();
            for id in ids {
                changed.extend(self.reassess(unit, id)?);
            }
            Ok::<_, StoreError>(changed)
        }));
        match run {
            Ok(Ok(changed)) => {
                fx.changed.extend(changed);
                Ok(())
            }
            Ok(Err(e)) => Err(e.to_string()),
            Err(panic) => Err(format!("panicked: {}", panic_message(&*panic))),
        }
    }

    /// Recompute an output's outcome from its observations, as of now.
    /// Returns the output's target when its outcome changed.
    pub(super) fn reassess(&mut self, unit: &mut Unit, id: &str) -> Result<Option<Target>> {
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
        #[cfg(test)]
        dead_letters::panic_judging_for_tests(&observations);
        let now = judged_as_of(stored.outcome.as_ref(), self.shared.clock.now());
        let outcome = assess(&stored.execution, &observations, now);
        if let Some(due) = next_checkpoint(stored.execution.executed_at, now) {
            if !scheduled_already(stored, due) {
                unit.schedule(due, &stored.execution.id);
            }
        }
        if stored.outcome.as_ref() != Some(&outcome) {
            if let Some(spans) = self.shared.outcome_spans.get() {
                spans.stage(
                    crate::read::export::trace_id_of(stored),
                    outcome.clone(),
                    stored.execution.sources.manifest,
                );
            }
            let old = stored.clone();
            stored.outcome = Some(outcome);
            unit.replace_output_record(&old, stored)?;
            return Ok(stored.execution.target.clone());
        }
        Ok(None)
    }

    /// A due output a signal could still change whose type reads signals no webhook
    /// carries (`github::signals`), when a signals fetcher is plugged in.
    pub(super) fn wants_signals(&mut self, unit: &Unit, id: &str) -> Result<bool> {
        if self.shared.signal_requests.get().is_none() {
            return Ok(false);
        }
        let Some(stored) = self.outputs.get_mut(unit, id)? else {
            return Ok(false);
        };
        use crate::github::signals;
        // The checkpoint just taken: the latest one passed.
        let now = judged_as_of(stored.outcome.as_ref(), self.shared.clock.now());
        let elapsed = now - stored.execution.executed_at;
        let taken = crate::model::CHECKPOINTS
            .iter()
            .map(|(_, h)| *h)
            .filter(|h| chrono::Duration::hours(*h) <= elapsed)
            .max();
        Ok(
            signals::open_to_signals(&stored.execution, stored.outcome.as_ref())
                && signals::wants(&stored.execution)
                && taken.is_some_and(|h| signals::reads_at(&stored.execution, h)),
        )
    }
}

/// True when `due` is scheduled for this output already: the outcome on
/// record was judged (at its `evaluated_at`) by a `Worker::reassess`,
/// which scheduled the next checkpoint after then in the same unit; when
/// that is `due` too, no checkpoint came between, and only taking a
/// checkpoint (at or after its due time) removes one. The output's record
/// thus says what a read of the schedule would, without the read: at 1M
/// outputs that read paged a leaf in for every event (docs/store.md,
/// "Leaves an event reads"). A merge keeps the outcome but changes the id:
/// the entry stays under the old id, which `Unit::canonical` resolves when
/// it is taken.
fn scheduled_already(stored: &StoredOutput, due: chrono::DateTime<chrono::Utc>) -> bool {
    stored
        .outcome
        .as_ref()
        .is_some_and(|o| next_checkpoint(stored.execution.executed_at, o.evaluated_at) == Some(due))
}
