//! What a unit's items will read, said once for the whole unit: on
//! PostgreSQL the unit then reads it in one round trip (its locks, records
//! and scans, `pg::Pg::prefetch`) instead of one round trip per read; on
//! sled, where a read is a memory access, nothing happens. The plan is a
//! guess that costs nothing when wrong: what it missed is read when asked
//! for, what it named needlessly is only read.

use super::{keys, Result, Unit};

/// Reads and locks a unit's items will ask for, in the store's own terms.
#[derive(Debug, Default)]
pub struct ReadPlan(super::pg::Prefetch);

impl ReadPlan {
    /// The lock named `name` (`Unit::try_lock`).
    pub fn lock(&mut self, name: &str) {
        self.0.locks.push(name.to_string());
    }

    /// The observations filed under `target` (`observations_of`).
    pub fn observations(&mut self, target: &str) {
        self.0.prefixes.push(keys::observations_of(target));
    }

    /// The outputs watching `target` (`Unit::outputs_on`).
    pub fn outputs_on(&mut self, target: &str) {
        self.0.prefixes.push(keys::outputs_on(target));
    }

    /// The threads on a branch or commit (`Unit::threads_on_ref`).
    pub fn threads_on_ref(&mut self, ref_key: &str) {
        self.0.prefixes.push(keys::threads_on_ref(ref_key));
    }

    /// Whether `ref_key` is linked to `thread` (`ReadStore::is_linked`).
    pub fn link(&mut self, ref_key: &str, thread: &str) {
        self.0.gets.push(keys::ref_link(ref_key, thread));
    }

    /// An output by id, through its alias (`Unit::output`).
    pub fn output(&mut self, id: &str) {
        self.0.gets.push(keys::alias(id));
        self.0.gets.push(keys::output(id));
    }

    /// The output of a type on a target (`Unit::output_of_type_on`).
    pub fn type_index(&mut self, target: &str, output_type: &str) {
        self.0.gets.push(keys::type_index(target, output_type));
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Unit {
    /// Read what `plan` names ahead (PostgreSQL: one round trip; the unit
    /// answers those reads from what it read). Returns the unit epoch as it
    /// stands on PostgreSQL (`Unit::commit_after`), `None` on sled.
    pub fn prefetch(&self, plan: ReadPlan) -> Result<Option<u64>> {
        match self.engine().pg() {
            Some(pg) => pg.prefetch(plan.0).map(Some),
            None => Ok(None),
        }
    }
}
