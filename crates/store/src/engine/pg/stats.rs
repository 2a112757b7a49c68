//! What the engine asked of the database in this process: round trips by
//! kind (each a wait of the calling thread for the database's answer, one
//! or several pipelined statements), the time the callers waited, and the
//! rows a unit's commit wrote. Counted so that `bench replay` can say where
//! a replayed event's time goes on PostgreSQL, whatever the machine's load.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// What a round trip was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trip {
    /// A point read the unit's memo could not answer.
    Get,
    /// A page of a scan.
    Scan,
    /// A claim of inbox items or checkpoints (`FOR UPDATE SKIP LOCKED`).
    Claim,
    /// An advisory lock asked for alone.
    Lock,
    /// A unit's read-ahead (`Pg::prefetch`).
    Prefetch,
    /// A unit's commit (`Pg::commit_unit`).
    Commit,
    /// A rollback of a unit not committed.
    Rollback,
    /// Anything else (batches outside units, the inbox's group commit, …).
    Other,
}

impl Trip {
    pub const ALL: [Trip; 8] = [
        Trip::Get,
        Trip::Scan,
        Trip::Claim,
        Trip::Lock,
        Trip::Prefetch,
        Trip::Commit,
        Trip::Rollback,
        Trip::Other,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Trip::Get => "get",
            Trip::Scan => "scan",
            Trip::Claim => "claim",
            Trip::Lock => "lock",
            Trip::Prefetch => "prefetch",
            Trip::Commit => "commit",
            Trip::Rollback => "rollback",
            Trip::Other => "other",
        }
    }
}

const KINDS: usize = Trip::ALL.len();

static TRIPS: [AtomicU64; KINDS] = [const { AtomicU64::new(0) }; KINDS];
static NANOS: [AtomicU64; KINDS] = [const { AtomicU64::new(0) }; KINDS];
/// Rows a unit's commit wrote: kv upserts and removals, counters, packed
/// sums, `outcomes` rows.
static ROWS: AtomicU64 = AtomicU64::new(0);
/// Statements a unit's commit sent.
static COMMIT_STATEMENTS: AtomicU64 = AtomicU64::new(0);
/// Time spent turning a unit's writes into the commit's parameters (the
/// `outcomes` rows' JSON among them), before its round trip.
static PREP_NANOS: AtomicU64 = AtomicU64::new(0);

/// The counters as they stand.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stats {
    pub trips: [u64; KINDS],
    pub nanos: [u64; KINDS],
    pub commit_rows: u64,
    pub commit_statements: u64,
    pub prep_nanos: u64,
}

impl Stats {
    /// What happened between `before` and `self`.
    pub fn since(&self, before: &Stats) -> Stats {
        let mut d = *self;
        for i in 0..KINDS {
            d.trips[i] -= before.trips[i];
            d.nanos[i] -= before.nanos[i];
        }
        d.commit_rows -= before.commit_rows;
        d.commit_statements -= before.commit_statements;
        d.prep_nanos -= before.prep_nanos;
        d
    }

    pub fn trips_of(&self, kind: Trip) -> u64 {
        self.trips[kind as usize]
    }

    pub fn seconds_of(&self, kind: Trip) -> f64 {
        self.nanos[kind as usize] as f64 / 1e9
    }

    pub fn total_trips(&self) -> u64 {
        self.trips.iter().sum()
    }

    pub fn total_seconds(&self) -> f64 {
        self.nanos.iter().sum::<u64>() as f64 / 1e9
    }
}

/// The counters so far in this process.
pub fn stats() -> Stats {
    let mut s = Stats::default();
    for i in 0..KINDS {
        s.trips[i] = TRIPS[i].load(Ordering::Relaxed);
        s.nanos[i] = NANOS[i].load(Ordering::Relaxed);
    }
    s.commit_rows = ROWS.load(Ordering::Relaxed);
    s.commit_statements = COMMIT_STATEMENTS.load(Ordering::Relaxed);
    s.prep_nanos = PREP_NANOS.load(Ordering::Relaxed);
    s
}

/// Count one round trip of `kind` that began at `started`.
pub(super) fn count(kind: Trip, started: Instant) {
    let nanos = started.elapsed().as_nanos() as u64;
    TRIPS[kind as usize].fetch_add(1, Ordering::Relaxed);
    NANOS[kind as usize].fetch_add(nanos, Ordering::Relaxed);
}

/// Count what a unit's commit wrote.
pub(super) fn count_commit(rows: u64, statements: u64, prep: Instant) {
    PREP_NANOS.fetch_add(prep.elapsed().as_nanos() as u64, Ordering::Relaxed);
    ROWS.fetch_add(rows, Ordering::Relaxed);
    COMMIT_STATEMENTS.fetch_add(statements, Ordering::Relaxed);
}
