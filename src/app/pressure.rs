//! Ingest pressure: how hard webhook deliveries are arriving, as the inbox
//! writer sees it, so the worker can give way to ingest while it is saturated.
//! The inbox is durable, so work the worker puts off is delayed, never lost;
//! and it only slows down, it never stops, so a backlog always drains.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Items in one group commit that mean handlers are queueing behind the
/// flush: at a steady 1,000 deliveries/s a commit carries one or two.
const SATURATED_BATCH: u64 = 8;

/// A large commit counts as pressure for this long after it.
const PRESSURE_LASTS: Duration = Duration::from_millis(20);

/// Under pressure, the worker works this long...
pub(crate) const WORK_SLICE: Duration = Duration::from_millis(2);
/// ...then sleeps this long: a fifth of one core instead of a whole one.
pub(crate) const GIVE_WAY: Duration = Duration::from_millis(8);

/// The last group commit's size and time, shared by the writer and the worker.
pub struct IngestPressure {
    epoch: Instant,
    /// Milliseconds after `epoch` of the last saturated commit, plus one
    /// (0: never).
    last_saturated_ms: AtomicU64,
    /// Times the worker gave way, for `/status`.
    gave_way: AtomicU64,
    /// Off only to measure what giving way is worth (`bench ingest`).
    enabled: AtomicBool,
    /// How long a large commit counts as pressure (`PRESSURE_LASTS`).
    lasts: Duration,
}

impl Default for IngestPressure {
    fn default() -> Self {
        IngestPressure {
            epoch: Instant::now(),
            last_saturated_ms: AtomicU64::new(0),
            gave_way: AtomicU64::new(0),
            enabled: AtomicBool::new(true),
            lasts: PRESSURE_LASTS,
        }
    }
}

impl IngestPressure {
    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64 + 1
    }

    /// The writer committed `items` deliveries in one flush.
    pub fn committed(&self, items: u64) {
        if items >= SATURATED_BATCH {
            self.last_saturated_ms
                .store(self.now_ms(), Ordering::Relaxed);
        }
    }

    /// Let the worker run flat out whatever the load (for comparison).
    pub(crate) fn set_enabled(&self, enabled: bool) {
        self.enabled.store(enabled, Ordering::Relaxed);
    }

    /// True while ingest is saturated: a large commit happened just now.
    pub fn saturated(&self) -> bool {
        if !self.enabled.load(Ordering::Relaxed) {
            return false;
        }
        let last = self.last_saturated_ms.load(Ordering::Relaxed);
        last != 0 && self.now_ms().saturating_sub(last) <= self.lasts.as_millis() as u64
    }

    /// Called by the worker at each pause it may take: after a work slice,
    /// it sleeps if ingest is saturated. Returns true when it gave way.
    pub(crate) fn maybe_give_way(&self, slice_started: &mut Instant) -> bool {
        if slice_started.elapsed() < WORK_SLICE {
            return false;
        }
        let saturated = self.saturated();
        if saturated {
            self.gave_way.fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(GIVE_WAY);
        }
        *slice_started = Instant::now();
        saturated
    }

    /// Times the worker gave way since start.
    pub fn gave_way(&self) -> u64 {
        self.gave_way.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pressure that lasts `lasts` after a large commit (no test depends on
    /// how fast this machine schedules it).
    fn pressure(lasts: Duration) -> IngestPressure {
        IngestPressure {
            lasts,
            ..IngestPressure::default()
        }
    }

    #[test]
    fn only_a_recent_large_commit_is_pressure() {
        let p = pressure(Duration::from_secs(600));
        assert!(!p.saturated(), "nothing committed yet");
        p.committed(SATURATED_BATCH - 1);
        assert!(!p.saturated(), "a small commit is normal load");
        p.committed(SATURATED_BATCH);
        assert!(p.saturated());
        p.set_enabled(false);
        assert!(!p.saturated(), "switched off");

        let brief = pressure(Duration::from_millis(1));
        brief.committed(SATURATED_BATCH);
        std::thread::sleep(Duration::from_millis(20));
        assert!(!brief.saturated(), "pressure passes");
    }

    #[test]
    fn the_worker_sleeps_only_after_a_slice_and_only_under_pressure() {
        let p = pressure(Duration::from_secs(600));
        p.committed(100);
        // A slice that has just begun (an instant in the future reads as
        // no time elapsed).
        let mut fresh = Instant::now() + Duration::from_secs(600);
        assert!(!p.maybe_give_way(&mut fresh), "the slice is not used up");
        assert_eq!(p.gave_way(), 0);

        let mut used = Instant::now() - WORK_SLICE * 2;
        let before = Instant::now();
        assert!(p.maybe_give_way(&mut used));
        assert!(before.elapsed() >= GIVE_WAY);
        assert_eq!(p.gave_way(), 1);

        let calm = pressure(Duration::from_secs(600));
        let mut used = Instant::now() - WORK_SLICE * 2;
        assert!(!calm.maybe_give_way(&mut used), "no pressure, no pause");
        assert_eq!(calm.gave_way(), 0);
    }
}
