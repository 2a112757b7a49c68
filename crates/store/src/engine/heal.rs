//! Self-healing of the embedded store after an I/O error.
//!
//! After one failed write (a full disk: `ENOSPC`) neither embedded file
//! recovers by itself: sled keeps its error flag and answers every later
//! call with it, redb answers "Previous I/O error occurred. Please close and
//! re-open the database". So the first I/O error any operation meets closes
//! both (`Handle::with` reports it) and a thread of its own reopens them,
//! with backoff, until a probe write (`Embedded::probe`) passes; meanwhile
//! every operation fails fast with `StoreError::Unavailable` (a 503 with
//! `Retry-After`) and readiness (`/ready`, `/status`) says why.
//!
//! Reopening is what a restart does, in the process: sled's writes that
//! were not flushed are gone, and the journal still holds every item the
//! worker had not flushed as processed (`Store::release_inbox_through`), so
//! nothing acknowledged is lost. The reopened files are a new generation:
//! a handle pinned to the old one (a unit of work, the worker, one group
//! commit of the inbox writer) fails instead of writing to the new files
//! what it computed from the old ones, and the worker starts again from
//! the store's durable state (`Worker::resync`).
//!
//! sled and redb each hold a lock on their file until the last handle to
//! them is gone: the old set is dropped once no operation holds it (up to
//! `CLOSE_WAIT`), and the reopen waits for the locks (`REOPEN_LOCK_WAIT`).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use arc_swap::ArcSwapOption;
use parking_lot::Mutex;

use super::embedded::Embedded;
use super::Engine;
use crate::{Durability, Result, Store, StoreError};

/// The first wait between reopen attempts; each failed one doubles it...
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
/// ...up to this.
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// How long the old files are waited on to be let go by operations in
/// flight before they are dropped anyway.
const CLOSE_WAIT: Duration = Duration::from_secs(5);
/// How long one reopen attempt waits for the old files' locks.
const REOPEN_LOCK_WAIT: Duration = Duration::from_secs(2);

/// Why the store cannot write now, and since when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trouble {
    /// The I/O error that closed the store, or the last reopen's failure.
    pub cause: String,
    /// Seconds since the store closed.
    pub for_seconds: u64,
    /// Reopen attempts that failed so far.
    pub failed_attempts: u32,
}

/// What every clone of a sled store shares: the open files (none while
/// they reopen) and the state of a heal.
pub struct Live {
    parts: ArcSwapOption<Embedded>,
    path: PathBuf,
    durability: Durability,
    /// The generation of the files open now, or last open.
    generation: AtomicU64,
    /// Reopens that succeeded since the process started.
    reopens: AtomicU64,
    state: Mutex<State>,
    /// Tests: every operation and reopen fails with `ENOSPC` while set.
    #[cfg(test)]
    injected: std::sync::atomic::AtomicBool,
}

#[derive(Default)]
struct State {
    /// Set while the store is closed or reopening.
    trouble: Option<(String, Instant)>,
    failed_attempts: u32,
}

/// A sled store's engine handle: cheap to clone; optionally pinned to one
/// generation of the files.
#[derive(Clone)]
pub struct Handle {
    live: Arc<Live>,
    pinned: Option<u64>,
}

impl Handle {
    /// A handle on freshly opened files (generation 0).
    pub(crate) fn new(parts: Embedded, path: PathBuf, durability: Durability) -> Handle {
        let live = Live {
            generation: AtomicU64::new(parts.generation),
            parts: ArcSwapOption::from_pointee(parts),
            path,
            durability,
            reopens: AtomicU64::new(0),
            state: Mutex::new(State::default()),
            #[cfg(test)]
            injected: Default::default(),
        };
        Handle {
            live: Arc::new(live),
            pinned: None,
        }
    }

    /// Run `f` on the open files; an I/O error it returns closes them and
    /// starts a heal. Fails at once while the store is closed, and on a
    /// pinned handle once the files were reopened.
    pub(crate) fn with<T>(&self, f: impl FnOnce(&Embedded) -> Result<T>) -> Result<T> {
        let guard = self.live.parts.load();
        let Some(parts) = guard.as_ref() else {
            return Err(self.live.closed());
        };
        if self.pinned.is_some_and(|g| g != parts.generation) {
            return Err(StoreError::Unavailable(
                "the store was reopened after an I/O error since this work began".into(),
            ));
        }
        let generation = parts.generation;
        #[cfg(test)]
        let f = |parts: &Embedded| match self.live.injected.load(Ordering::Relaxed) {
            true => Err(injected_enospc()),
            false => f(parts),
        };
        let result = f(parts);
        drop(guard);
        if let Err(e) = &result {
            self.live.failed(e, generation);
        }
        result
    }

    /// This handle, pinned to the generation open now.
    pub(crate) fn pinned(&self) -> Handle {
        Handle {
            live: self.live.clone(),
            pinned: Some(self.generation()),
        }
    }

    /// The generation open now (or last open, while reopening), or the one
    /// this handle is pinned to.
    pub fn generation(&self) -> u64 {
        self.pinned
            .unwrap_or_else(|| self.live.generation.load(Ordering::Acquire))
    }

    /// An error met outside `with` (an `fdatasync`): an I/O error starts a
    /// heal of the generation open now.
    pub(crate) fn report(&self, error: &StoreError) {
        self.live.failed(error, self.generation());
    }

    /// Why the store cannot write now, if it cannot.
    pub fn trouble(&self) -> Option<Trouble> {
        let state = self.live.state.lock();
        state.trouble.as_ref().map(|(cause, since)| Trouble {
            cause: cause.clone(),
            for_seconds: since.elapsed().as_secs(),
            failed_attempts: state.failed_attempts,
        })
    }

    /// Reopens that succeeded since the process started.
    pub fn reopens(&self) -> u64 {
        self.live.reopens.load(Ordering::Relaxed)
    }
}

impl Live {
    /// The error of an operation while the store is closed.
    fn closed(&self) -> StoreError {
        let cause = self.state.lock().trouble.as_ref().map(|(c, _)| c.clone());
        StoreError::Unavailable(format!(
            "the store is reopening after an I/O error ({})",
            cause.unwrap_or_else(|| "closed".into())
        ))
    }

    /// `error` came from the files of `generation`: if it is an I/O error
    /// on the files open now, close them and heal (once).
    fn failed(self: &Arc<Live>, error: &StoreError, generation: u64) {
        if !error.is_io() || generation != self.generation.load(Ordering::Acquire) {
            return;
        }
        {
            let mut state = self.state.lock();
            if state.trouble.is_some() {
                return;
            }
            state.trouble = Some((error.to_string(), Instant::now()));
            state.failed_attempts = 0;
        }
        tracing::error!(%error, "store I/O error: closing the store to reopen it");
        let weak = Arc::downgrade(self);
        let spawned = std::thread::Builder::new()
            .name("store-heal".into())
            .spawn(move || heal(weak));
        if let Err(e) = spawned {
            tracing::error!(error = %e, "cannot start the store's reopen thread");
        }
    }

    /// Take the files out of service and drop them once no operation
    /// holds them (or `CLOSE_WAIT` passed).
    fn close(&self) {
        let Some(old) = self.parts.swap(None) else {
            return;
        };
        let started = Instant::now();
        while Arc::strong_count(&old) > 1 && started.elapsed() < CLOSE_WAIT {
            std::thread::sleep(Duration::from_millis(10));
        }
        drop(old);
    }

    /// Open the files again as the next generation and probe them.
    fn reopen(&self) -> Result<Embedded> {
        #[cfg(test)]
        if self.injected.load(Ordering::Relaxed) {
            return Err(injected_enospc());
        }
        let started = Instant::now();
        let store = loop {
            match Store::reopen_with(&self.path, self.durability) {
                Err(e) if e.is_lock() && started.elapsed() < REOPEN_LOCK_WAIT => {
                    std::thread::sleep(Duration::from_millis(50));
                }
                other => break other?,
            }
        };
        let mut parts = take_parts(store)?;
        parts.generation = self.generation.load(Ordering::Acquire) + 1;
        parts.probe()?;
        Ok(parts)
    }

    /// Put reopened files in service: the store is healthy again.
    fn install(&self, parts: Embedded) {
        let generation = parts.generation;
        self.parts.store(Some(Arc::new(parts)));
        self.generation.store(generation, Ordering::Release);
        self.reopens.fetch_add(1, Ordering::Relaxed);
        let mut state = self.state.lock();
        let down = state.trouble.take().map(|(_, since)| since.elapsed());
        tracing::warn!(
            generation,
            after = ?down,
            attempts = state.failed_attempts + 1,
            "store reopened after an I/O error; writes resume"
        );
        state.failed_attempts = 0;
    }

    /// A reopen failed: say why, and how long until the next.
    fn attempt_failed(&self, error: &StoreError) -> Duration {
        let mut state = self.state.lock();
        state.failed_attempts += 1;
        if let Some((cause, _)) = state.trouble.as_mut() {
            *cause = format!("reopening the store: {error}");
        }
        let wait = backoff(state.failed_attempts);
        tracing::warn!(%error, retry_in = ?wait, "the store could not be reopened yet");
        wait
    }
}

/// The wait after `failed` failed attempts: doubling from `FIRST_BACKOFF`
/// up to `MAX_BACKOFF`.
fn backoff(failed: u32) -> Duration {
    let doublings = failed.saturating_sub(1).min(16);
    FIRST_BACKOFF
        .saturating_mul(1 << doublings)
        .min(MAX_BACKOFF)
}

/// The heal's thread: close, then reopen until it takes. It holds the
/// store only while it works on it: a store dropped meanwhile (shutdown)
/// ends it.
fn heal(weak: Weak<Live>) {
    if let Some(live) = weak.upgrade() {
        live.close();
    }
    loop {
        let Some(live) = weak.upgrade() else {
            return;
        };
        let wait = match live.reopen() {
            Ok(parts) => return live.install(parts),
            Err(e) => live.attempt_failed(&e),
        };
        drop(live);
        std::thread::sleep(wait);
    }
}

/// The files of a store just opened, taken out of it (the store is dropped).
fn take_parts(store: Store) -> Result<Embedded> {
    let Engine::Sled(handle) = &store.db else {
        return Err(StoreError::Unavailable(
            "a reopened sled store is not on sled".into(),
        ));
    };
    let parts = handle.live.parts.swap(None);
    drop(store);
    let parts = parts.ok_or_else(|| StoreError::Unavailable("the reopened store closed".into()))?;
    Arc::try_unwrap(parts).map_err(|_| {
        StoreError::Unavailable("the reopened store is still in use by its opening".into())
    })
}

impl Store {
    /// Why the store cannot write now (readiness: `/ready`, `/status`), or
    /// `None`. sled: closed or reopening after an I/O error; PostgreSQL:
    /// the database does not answer, checked now.
    pub fn write_trouble(&self) -> Option<Trouble> {
        match &self.db {
            Engine::Sled(handle) => handle.trouble(),
            Engine::Pg(pg) => pg.ping().err().map(|e| Trouble {
                cause: e.to_string(),
                for_seconds: 0,
                failed_attempts: 0,
            }),
        }
    }

    /// Which opening of the files the store is on (0 at start, one more
    /// per reopen; PostgreSQL: always 0). A pinned store says its own.
    pub fn generation(&self) -> u64 {
        match &self.db {
            Engine::Sled(handle) => handle.generation(),
            Engine::Pg(_) => 0,
        }
    }

    /// This store bound to the files open now: every operation fails
    /// (`StoreError::Unavailable`) once they were reopened, so what was
    /// computed from the old files is never written to the new ones (the
    /// worker, a group commit of the inbox). PostgreSQL: the same store.
    pub fn pinned(&self) -> Store {
        let mut store = self.clone();
        if let Engine::Sled(handle) = &self.db {
            store.db = Engine::Sled(handle.pinned());
        }
        store
    }

    /// Reopens after an I/O error since the process started (sled).
    pub fn reopens(&self) -> u64 {
        match &self.db {
            Engine::Sled(handle) => handle.reopens(),
            Engine::Pg(_) => 0,
        }
    }
}

/// What a full disk makes sled answer (tests: `Store::inject_io_errors`).
#[cfg(test)]
fn injected_enospc() -> StoreError {
    StoreError::Sled(sled::Error::Io(std::io::Error::from_raw_os_error(
        libc::ENOSPC,
    )))
}

#[cfg(test)]
impl Store {
    /// Tests: while `on`, every operation on the sled store, and every
    /// reopen, fails with `ENOSPC` — a full disk without a filesystem.
    pub(crate) fn inject_io_errors(&self, on: bool) {
        if let Engine::Sled(handle) = &self.db {
            handle.live.injected.store(on, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{counter, keys};

    /// Wait up to 10 s for `done`.
    fn eventually(done: impl Fn() -> bool) -> bool {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(10) {
            if done() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    #[test]
    fn an_io_error_closes_the_store_which_reopens_once_writes_pass_again() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_sled(dir.path()).unwrap();
        store.set_counter_for_tests("kept", 7);
        store.flush().unwrap();
        let before = store.pinned();
        assert_eq!(store.write_trouble(), None);

        store.inject_io_errors(true);
        let e = store.db().insert(keys::counter("lost"), 1u64.to_be_bytes());
        assert!(e.unwrap_err().is_io());
        let trouble = store
            .write_trouble()
            .expect("the store says it cannot write");
        assert!(trouble.cause.contains("No space left"), "{}", trouble.cause);
        // Closed: every call fails at once, as unavailable (a 503).
        assert!(eventually(|| matches!(
            store.try_counter("kept"),
            Err(StoreError::Unavailable(_))
        )));
        // Reopening fails while the disk stays full, and is tried again.
        assert!(eventually(|| store
            .write_trouble()
            .is_some_and(|t| t.failed_attempts >= 2)));
        assert!(store.write_trouble().unwrap().cause.contains("reopening"));

        store.inject_io_errors(false);
        assert!(eventually(|| store.write_trouble().is_none()), "reopened");
        assert_eq!(store.reopens(), 1);
        assert_eq!(store.generation(), 1);
        assert_eq!(store.counter("kept"), 7, "what was flushed is there");
        assert_eq!(store.counter(counter::STORE_REOPENS), 1, "the probe wrote");
        store.set_counter_for_tests("after", 1);
        assert_eq!(store.counter("after"), 1);
        // A handle pinned before the reopen never writes to the new files.
        assert!(matches!(
            before.try_counter("kept"),
            Err(StoreError::Unavailable(_))
        ));
        assert_eq!(store.pinned().try_counter("kept").unwrap(), 7);
    }

    #[test]
    fn backoff_doubles_from_100_ms_up_to_5_s() {
        let waits: Vec<u64> = (1..=8).map(|n| backoff(n).as_millis() as u64).collect();
        assert_eq!(waits, [100, 200, 400, 800, 1600, 3200, 5000, 5000]);
        assert_eq!(backoff(u32::MAX), MAX_BACKOFF);
    }
}
