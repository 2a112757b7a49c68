//! Dead letters: an inbox item whose processing fails (after `MAX_ATTEMPTS`
//! tries, its writes undone before each) or panics is set aside, visible on
//! `/status` and `/metrics` and replayable, and the worker goes on. An item
//! another replica holds locked is not a failure: it stays in the inbox.

use super::*;

/// Tries of an item whose processing returns an error, before it is moved
/// to the dead letters.
pub(super) const MAX_ATTEMPTS: u32 = 3;

/// Why an item was moved aside.
#[derive(Debug)]
pub(super) struct Failure {
    pub(super) error: String,
    pub(super) attempts: u32,
    /// Another replica holds a lock the item needs (PostgreSQL), or the
    /// store cannot read or write now: it is left in the inbox for a later
    /// unit, not moved aside.
    pub(super) busy: bool,
}

/// A failure of the store itself, not of the item: its files failing or
/// reopening (`store::heal`).
fn is_outage(e: &StoreError) -> bool {
    e.is_io() || matches!(e, StoreError::Unavailable(_))
}

/// The message of a caught panic (`panic!` gives a `&str` or a `String`).
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_string())
}

/// Test hook: a counter named `test_panic_at` holding an inbox sequence
/// makes processing that item panic once its observations are filed (unit
/// tests of the dead-letter path and of units of work failing midway);
/// one named `test_error_at` makes it fail with an error instead, as many
/// times as the counter `test_errors_left` says.
#[cfg(test)]
pub(super) fn fail_for_tests(store: &Store, seq: u64) -> Result<()> {
    if store.counter("test_panic_at") == seq {
        panic!("injected failure at inbox item {seq}");
    }
    let left = store.counter("test_errors_left");
    if store.counter("test_error_at") == seq && left > 0 {
        store.set_counter_for_tests("test_errors_left", left - 1);
        return Err(StoreError::Database(format!(
            "injected error at inbox item {seq}"
        )));
    }
    Ok(())
}

/// Test hook: judging an output panics when one of its observations' ids
/// names `panic-when-judged` (the dead-letter path of a failure found only
/// when the unit's outputs are judged, `Worker::judge_unit`).
#[cfg(test)]
pub(super) fn panic_judging_for_tests(observations: &[Observation]) {
    if let Some(o) = observations
        .iter()
        .find(|o| o.id.contains("panic-when-judged"))
    {
        panic!("injected failure judging {}", o.target);
    }
}

impl Worker {
    /// Process one item into the unit, catching panics. An error is retried
    /// (it may have been passing) up to `MAX_ATTEMPTS`, its writes undone
    /// before each try, on the item decoded again from its stored `bytes`
    /// (the first try takes `item`: copying every item for a retry that
    /// almost never comes was about 1 µs of an event's drain); a panic is
    /// not retried.
    pub(super) fn process_guarded(
        &mut self,
        unit: &mut Unit,
        seq: u64,
        item: InboxItem,
        bytes: &[u8],
    ) -> std::result::Result<Effects, Failure> {
        let sp = unit.savepoint();
        let mut attempts = 0;
        let mut first = Some(item);
        loop {
            attempts += 1;
            let item = match first.take() {
                Some(item) => item,
                None => match crate::store::inbox::decode_item(seq, bytes) {
                    Ok(item) => item,
                    Err(e) => {
                        return Err(Failure {
                            error: e.to_string(),
                            attempts,
                            busy: false,
                        })
                    }
                },
            };
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.process(unit, seq, item)
            }));
            // The failed item's writes may be half done: undo them, and
            // forget what we cached.
            let error = match run {
                Ok(Ok(effects)) => return Ok(effects),
                // Not the item's fault: another replica holds a lock it
                // needs, or the store cannot read or write now (a full
                // disk; the store reopens by itself, `store::heal`).
                Ok(Err(e)) if matches!(e, StoreError::Busy(_)) || is_outage(&e) => {
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
}
