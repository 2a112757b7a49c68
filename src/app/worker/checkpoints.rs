//! The checkpoints (1h, 24h, 7d, 30d after execution) that came due on the
//! schedule: each taken once, in due order, in batches.

use super::*;

impl Worker {
    /// Re-assess every output whose next checkpoint is due.
    /// On PostgreSQL the due checkpoints are claimed by the unit, and one
    /// whose output another replica holds is left due for a later pass.
    pub(crate) fn take_due_checkpoints(&mut self) {
        loop {
            let now = self.shared.clock.now();
            let mut unit = self.store.begin();
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
            let ids: Vec<String> = due.iter().map(|(_, id)| id.clone()).collect();
            let expect = match self.prefetch(&unit, &[], &ids) {
                Ok(expect) => expect,
                Err(e) => {
                    self.shared.record_error(format!("reading ahead: {e}"));
                    return;
                }
            };
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
            match result.and_then(|_| self.commit(unit, expect)) {
                Ok(()) => {}
                // Another replica wrote what the caches held: again, afresh.
                Err(StoreError::Stale) => continue,
                Err(e) => {
                    self.shared.record_error(format!("taking checkpoints: {e}"));
                    return;
                }
            }
            self.notify_prs(&changed, BTreeSet::new());
            if let Some(spans) = self.shared.outcome_spans.get() {
                spans.release();
            }
            if let (Some(hook), false) = (self.shared.signal_requests.get(), signals.is_empty()) {
                hook.due(signals);
            }
            if busy {
                return;
            }
        }
    }
}
