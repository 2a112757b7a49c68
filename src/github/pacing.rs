//! Pacing the App's content-creating calls (check-run creates and updates)
//! within GitHub's secondary limits: at most 80 a minute and 500 an hour
//! per installation (GitHub's documented secondary rate limits for
//! content-creating requests; docs/backfill.md). The publisher
//! asks before each write ([`Pacer::wait`]); a write that would pass a limit
//! waits until the oldest write of the limiting window has aged out, instead
//! of drawing a 403 that costs a minute's back-off. `/status` shows the
//! writes in each window and how many were made to wait
//! (`github.check_runs.pacing`).
//!
//! Real time (`Instant`), not the App's clock: GitHub counts in real time.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Serialize;

/// GitHub's limits on content-creating requests.
pub(crate) const PER_MINUTE: usize = 80;
pub(crate) const PER_HOUR: usize = 500;

const MINUTE: Duration = Duration::from_secs(60);
const HOUR: Duration = Duration::from_secs(3600);

/// Recent writes per installation; counts of the waits.
#[derive(Debug, Default)]
pub struct Pacer {
    writes: Mutex<BTreeMap<u64, VecDeque<Instant>>>,
    paced: Mutex<u64>,
}

/// What `/status` shows of the pacing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PacingStatus {
    pub limit_per_minute: usize,
    pub limit_per_hour: usize,
    /// Writes in the last minute and hour, for the busiest installation.
    pub last_minute: usize,
    pub last_hour: usize,
    /// Writes that waited for a window to free up, since start.
    pub paced: u64,
}

impl Pacer {
    /// How long a write for `installation` must wait at `now` (zero: go).
    pub fn wait(&self, installation: u64, now: Instant) -> Duration {
        let mut all = self.writes.lock().expect("pacer lock");
        let w = all.entry(installation).or_default();
        while w.front().is_some_and(|t| now.duration_since(*t) >= HOUR) {
            w.pop_front();
        }
        let in_minute: Vec<&Instant> = w
            .iter()
            .filter(|t| now.duration_since(**t) < MINUTE)
            .collect();
        let mut wait = Duration::ZERO;
        if in_minute.len() >= PER_MINUTE {
            let oldest = in_minute[in_minute.len() - PER_MINUTE];
            wait = wait.max(MINUTE.saturating_sub(now.duration_since(*oldest)));
        }
        if w.len() >= PER_HOUR {
            let oldest = w[w.len() - PER_HOUR];
            wait = wait.max(HOUR.saturating_sub(now.duration_since(oldest)));
        }
        if !wait.is_zero() {
            *self.paced.lock().expect("pacer lock") += 1;
        }
        wait
    }

    /// A write was made for `installation` at `now`.
    pub fn wrote(&self, installation: u64, now: Instant) {
        let mut all = self.writes.lock().expect("pacer lock");
        all.entry(installation).or_default().push_back(now);
    }

    pub fn status(&self, now: Instant) -> PacingStatus {
        let all = self.writes.lock().expect("pacer lock");
        let count = |w: &VecDeque<Instant>, span: Duration| {
            w.iter().filter(|t| now.duration_since(**t) < span).count()
        };
        PacingStatus {
            limit_per_minute: PER_MINUTE,
            limit_per_hour: PER_HOUR,
            last_minute: all.values().map(|w| count(w, MINUTE)).max().unwrap_or(0),
            last_hour: all.values().map(|w| count(w, HOUR)).max().unwrap_or(0),
            paced: *self.paced.lock().expect("pacer lock"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_81st_write_in_a_minute_waits_for_the_first_to_age_out() {
        let p = Pacer::default();
        let t0 = Instant::now();
        for i in 0..PER_MINUTE {
            let at = t0 + Duration::from_millis(i as u64 * 100);
            assert_eq!(p.wait(1, at), Duration::ZERO);
            p.wrote(1, at);
        }
        let now = t0 + Duration::from_secs(10);
        assert_eq!(p.wait(1, now), Duration::from_secs(50));
        assert_eq!(p.wait(2, now), Duration::ZERO, "per installation");
        assert_eq!(p.wait(1, t0 + MINUTE), Duration::ZERO);
        let s = p.status(now);
        assert_eq!((s.last_minute, s.paced), (PER_MINUTE, 1));
    }

    #[test]
    fn the_501st_write_in_an_hour_waits_for_the_hour() {
        let p = Pacer::default();
        let t0 = Instant::now();
        // 500 writes, 79 a minute: never the minute limit.
        for i in 0..PER_HOUR {
            let at = t0 + Duration::from_secs(i as u64 * 60 / 79);
            assert_eq!(p.wait(1, at), Duration::ZERO, "write {i}");
            p.wrote(1, at);
        }
        let now = t0 + Duration::from_secs(40 * 60);
        assert_eq!(p.wait(1, now), Duration::from_secs(20 * 60));
        assert_eq!(
            p.wait(1, t0 + HOUR + Duration::from_secs(1)),
            Duration::ZERO
        );
    }
}
