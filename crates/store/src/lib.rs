//! The store: inbox, outputs, observations, indexes, schedule and
//! counters, all in one tree (see `keys` for the layout).
//! On PostgreSQL the same key space, units of work and records live in the
//! database (`engine`). Nothing outside this room names sled or PostgreSQL
//! (`boundary` tests it).
//!
//! May import: `model`.

mod app_records;
pub use app_records::CheckRunRecord;
mod app_state;
pub mod attribution;
pub mod backfill;
#[cfg(test)]
mod boundary;
pub mod cache;
pub mod codec;
pub mod compact;
pub mod dead_letters;
pub mod engine;
pub use engine::heal;
pub mod inbox;
mod inbox_item;
pub(crate) mod inbox_log;
mod installations;
pub mod keys;
mod layout;
pub(crate) mod leases;
pub mod migrate;
pub mod open_checks;
pub(crate) mod prefetch;
mod repeats;
pub mod repo_names;
pub mod rollup;
pub mod staging;
pub(crate) mod unit;
pub mod web_state;

pub use engine::pg;
pub use engine::{Batch, Engine};
pub use prefetch::ReadPlan;
pub use unit::{ExternalBatch, ReadStore, Savepoint, TargetEntries, Unit};
pub use web_state::{Expiring, Space};

use std::collections::BTreeMap;
use std::path::Path;

use serde::{de::DeserializeOwned, Deserialize, Serialize};

use safe_outcomes_model::{ExecutionRecord, Observation, OutcomeRecord};

/// Store errors: sled I/O, PostgreSQL, or a record that no longer decodes.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("store I/O: {0}")]
    Sled(#[from] sled::Error),
    /// The PostgreSQL engine failed (unreachable, timed out, refused).
    #[error("{0}")]
    Database(String),
    #[error("corrupt record under {key}: {error}")]
    Decode { key: String, error: String },
    #[error("{0}")]
    InterruptedCompaction(String),
    /// The inbox's journal file failed (sled stores: `engine::journal`).
    #[error("inbox journal: {0}")]
    Journal(String),
    /// Another replica's unit holds the lock on this key (PostgreSQL): the
    /// item is left for a later unit.
    #[error("busy: another replica holds {0}")]
    Busy(String),
    /// Another replica's unit committed while this unit relied on what the
    /// worker had cached (PostgreSQL): the unit was rolled back, to be done
    /// again with the caches dropped.
    #[error("stale: another replica committed while this unit used cached records")]
    Stale,
    /// The journal's file could not be read or written (an I/O error, or
    /// redb refusing every call after one): the store reopens (`heal`).
    #[error("inbox journal I/O: {0}")]
    JournalIo(String),
    /// The store is closed while it reopens after an I/O error, or was
    /// reopened since the unit of work that asked began (`heal`).
    #[error("store unavailable: {0}")]
    Unavailable(String),
    /// The store was refused at open (`open_checks`): what and what to do.
    #[error(transparent)]
    Refused(#[from] open_checks::Refusal),
}

impl StoreError {
    /// An I/O error of an embedded file: what closes and reopens the
    /// store (`heal`).
    pub fn is_io(&self) -> bool {
        matches!(
            self,
            StoreError::Sled(sled::Error::Io(_)) | StoreError::JournalIo(_)
        )
    }

    /// The store cannot read or write now, and may later: the client is
    /// answered 503 with `Retry-After`, and the worker leaves the item in
    /// the inbox instead of setting it aside. A record that does not decode
    /// is not one: no retry will change it.
    pub fn is_unavailable(&self) -> bool {
        !matches!(self, StoreError::Decode { .. } | StoreError::Refused(_))
    }

    /// Another handle of this process (or another process) still holds the
    /// store's lock.
    pub(crate) fn is_lock(&self) -> bool {
        self.to_string().contains("lock")
    }
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// An output as stored: what was executed and its latest outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredOutput {
    pub execution: ExecutionRecord,
    pub outcome: Option<OutcomeRecord>,
    /// The opentraces `trace_id` of this output (a random UUID given when it
    /// is first stored; absent in stores written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
}

/// Durable counters shown on `/status` and `/metrics`.
pub mod counter {
    pub const RECEIVED: &str = "deliveries_received";
    pub const PROCESSED: &str = "deliveries_processed";
    pub const DUPLICATES: &str = "deliveries_duplicate";
    /// On sled: the inbox sequence processed through, in order, by the
    /// worker's last commit (the journal drops items up to it once that
    /// commit is flushed: `Store::release_inbox_through`).
    pub const INBOX_DONE: &str = "inbox_done_through";
    /// On sled: the position of the inbox's log (`inbox_log`) the journal
    /// holds everything before; written in the journal, in the commit that
    /// files what was moved.
    pub(crate) const INBOX_MOVED: &str = "inbox_log_moved_through";
    pub const OUTPUTS: &str = "outputs_tracked";
    /// Redeliveries of missed webhook deliveries asked of GitHub (`github::redelivery`).
    pub const REDELIVERIES: &str = "redeliveries_requested";
    /// gh-aw runs whose manifest artifact was harvested (`github::harvest`).
    pub const HARVESTED: &str = "manifests_harvested";
    /// Times the sled store was reopened after an I/O error (`heal`).
    pub(crate) const STORE_REOPENS: &str = "store_reopens";
}

/// Whether opening a sled store moves the inbox's log into the journal
/// (at the process's open) or leaves it to the running mover (a reopen
/// after an I/O error, `heal`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Drain {
    Log,
    LeaveToTheMover,
}

/// What an acknowledged delivery survives (`/status` `durability`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// sled's flush: written and `sync_file_range`d, which survives the
    /// process being killed, not a power loss (the drive's write cache is
    /// not flushed; sled issue #1452).
    ProcessCrash,
    /// sled's flush, then `fdatasync` of its log file at every group commit
    /// of the inbox: the drive's cache is flushed before the 2xx.
    PowerLoss,
}

impl Durability {
    /// As the process's settings say (`configure`: `DURABILITY` or
    /// `serve --durability`, read by the App), else `ProcessCrash`.
    pub fn configured() -> Durability {
        settings().durability.unwrap_or(Durability::ProcessCrash)
    }

    /// As `/status` shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            Durability::ProcessCrash => "process_crash",
            Durability::PowerLoss => "power_loss",
        }
    }
}

/// The store's settings, set once per process before the store opens. The
/// store reads no environment variable: the App reads `DURABILITY`,
/// `DEDUP_WINDOW_HOURS` and `SAFE_OUTCOMES_PAGE_IN` (its settings table,
/// `settings::store_settings`, or `serve`'s flags) and passes them here;
/// a process that sets none (a test) gets the defaults.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// What an acknowledged write survives on sled (`None`: `ProcessCrash`).
    pub durability: Option<Durability>,
    /// How long delivery ids are remembered, in hours (> 0; `None`: 8 days).
    pub dedup_window_hours: Option<i64>,
    /// Page a batch's leaves in before taking sled's lock (`engine::write_sled`).
    pub page_in: bool,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            durability: None,
            dedup_window_hours: None,
            page_in: true,
        }
    }
}

static SETTINGS: std::sync::OnceLock<Settings> = std::sync::OnceLock::new();

/// Set the process's store settings; false when they were set already
/// (the first ones stay).
pub fn configure(settings: Settings) -> bool {
    SETTINGS.set(settings).is_ok()
}

/// The settings `configure` set, if any.
pub(crate) fn settings() -> Settings {
    SETTINGS.get().copied().unwrap_or_default()
}

/// How long to wait for a previous instance to let go of the store's lock.
pub const STORE_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// sled's page cache: 16 MiB. At 1M outputs the process held 308 MiB
/// against 424 with 64 MiB, at 10% more per event, with every read of
/// `bench reads` within its target (the cold `/metrics` read that ruled
/// 16 MiB out reads the tally now); 8 MiB cost 26% per event for 17 MiB
/// less (docs/store.md, "Memory: the allocator and sled's cache").
const CACHE_BYTES: u64 = 16 * 1024 * 1024;

#[derive(Clone)]
pub struct Store {
    db: Engine,
    path: std::sync::Arc<std::path::PathBuf>,
    /// When the store was last flushed (`Store::flush`), as milliseconds
    /// after `opened`, plus one (0: never).
    flushed_ms: std::sync::Arc<std::sync::atomic::AtomicU64>,
    opened: std::time::Instant,
    durability: Durability,
    /// sled's log file, for `fdatasync` (`Durability::PowerLoss`).
    log: Option<std::sync::Arc<std::fs::File>>,
    /// `fdatasync`s done, for tests and `/status`.
    syncs: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

/// First byte of an LZ4-compressed record (JSON never starts with it).
const LZ4_RECORD: u8 = 0x01;

/// First byte of an LZ4 record compressed against `DICTIONARY_V1`.
const LZ4_DICT_V1: u8 = 0x02;

/// Typical records as stored (an observation of a PR, one of an issue, and a
/// stored output): the field names and common values every record repeats,
/// which LZ4 cannot find within one small record. Records compressed against
/// it point into it, so it never changes: a better one would be a v2.
const DICTIONARY_V1: &[u8] = include_bytes!("record_dictionary_v1.json");

/// Records above this size are stored compressed.
const COMPRESS_OVER: usize = 64;

/// A record as stored: JSON, LZ4-compressed against a dictionary of typical
/// records when it is not tiny. Records are mostly field names, URLs and
/// values that recur from record to record, so this takes a stored output
/// from ~1.9 KB of JSON to about a third, and lets sled's bounded cache hold
/// that many more.
pub fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    let json = serde_json::to_vec(value).expect("store records serialize");
    if json.len() <= COMPRESS_OVER {
        return json;
    }
    let mut out = vec![LZ4_DICT_V1];
    out.extend_from_slice(&lz4_flex::block::compress_prepend_size_with_dict(
        &json,
        DICTIONARY_V1,
    ));
    out
}

/// Decode a record written by `encode`, or by an earlier version of it
/// (plain JSON, LZ4 without a dictionary).
pub fn decode<T: DeserializeOwned>(key: &[u8], bytes: &[u8]) -> Result<T> {
    let corrupt = |error: String| StoreError::Decode {
        key: String::from_utf8_lossy(key).into_owned(),
        error,
    };
    let json = match bytes.split_first() {
        Some((&LZ4_RECORD, packed)) => {
            lz4_flex::decompress_size_prepended(packed).map_err(|e| corrupt(e.to_string()))?
        }
        Some((&LZ4_DICT_V1, packed)) => {
            lz4_flex::block::decompress_size_prepended_with_dict(packed, DICTIONARY_V1)
                .map_err(|e| corrupt(e.to_string()))?
        }
        _ => return serde_json::from_slice(bytes).map_err(|e| corrupt(e.to_string())),
    };
    serde_json::from_slice(&json).map_err(|e| corrupt(e.to_string()))
}

impl Store {
    /// Open the store at `path`: sled, or with `SAFE_OUTCOMES_TEST_PG` set
    /// a PostgreSQL database standing for this path (`pg::test_database`).
    pub fn open(path: &Path) -> Result<Store> {
        if let Some(admin) = pg::test_pg_from_env() {
            let store = Store::on_pg(pg::test_database(&admin, path)?, path);
            open_checks::at_open(&store)?;
            store.upgrade_at_open()?;
            return Ok(store);
        }
        Store::open_with(path, Durability::configured())
    }

    /// Open the store: on PostgreSQL when `database_url` is given, else the
    /// sled store at `path` (`open_waiting`). The one way `serve` opens it.
    pub fn open_engine(path: &Path, database_url: Option<&str>) -> Result<Store> {
        match database_url {
            Some(url) => {
                let store = Store::on_pg(pg::Pg::connect(url)?, path);
                open_checks::at_open(&store)?;
                store.upgrade_at_open()?;
                Ok(store)
            }
            None => Store::open_waiting(path, STORE_LOCK_WAIT),
        }
    }

    /// A store on a PostgreSQL database (`path` only names it in messages).
    pub fn on_pg(pg: pg::Pg, path: &Path) -> Store {
        // An ack waits for COMMIT: as durable as the database's settings.
        let durability = match pg.commits_are_synced() {
            Ok(true) => Durability::PowerLoss,
            _ => Durability::ProcessCrash,
        };
        Store {
            db: Engine::Pg(pg),
            path: std::sync::Arc::new(path.to_path_buf()),
            flushed_ms: Default::default(),
            opened: std::time::Instant::now(),
            durability,
            log: None,
            syncs: Default::default(),
        }
    }

    /// Open the sled store at `path`, whatever `SAFE_OUTCOMES_TEST_PG` says
    /// (compaction and tests of sled's own files).
    pub fn open_sled(path: &Path) -> Result<Store> {
        Store::open_with(path, Durability::configured())
    }

    /// Open the sled store with the given durability of acknowledged writes.
    pub(crate) fn open_with(path: &Path, durability: Durability) -> Result<Store> {
        Store::open_sled_files(path, durability, Drain::Log)
    }

    /// Open the sled store's files again after an I/O error (`heal`), in a
    /// process whose inbox writer and mover still run: the log is theirs
    /// (the writer's open segment, the mover's position and its answers),
    /// so it is left to them, and no second reader opens it, cuts its tail
    /// or files from it beside them. The mover files what waits there once
    /// the store is back (`logged::wait_for_retry`).
    pub(crate) fn reopen_with(path: &Path, durability: Durability) -> Result<Store> {
        Store::open_sled_files(path, durability, Drain::LeaveToTheMover)
    }

    fn open_sled_files(path: &Path, durability: Durability, drain: Drain) -> Result<Store> {
        // sled would create an empty store where a compaction left none.
        if let Some(message) = compact::interrupted_compaction(path) {
            return Err(StoreError::InterruptedCompaction(message));
        }
        let db = sled::Config::new()
            .path(path)
            // sled caches up to 1 GiB by default; the inbox and the outputs
            // live on disk, and memory stays bounded whatever their size.
            .cache_capacity(CACHE_BYTES)
            // No background flusher: its flushes hold sled's lock while
            // they write, which would make the inbox writer's commit (the
            // acks) wait behind the worker's data. The inbox writer flushes
            // every group commit and the worker flushes its own (`worker`).
            .flush_every_ms(None);
        let db = open_checks::open_sled(path, db)?;
        let log = match durability {
            Durability::PowerLoss => Some(std::sync::Arc::new(
                std::fs::File::open(path.join("db")).map_err(sled::Error::Io)?,
            )),
            Durability::ProcessCrash => None,
        };
        let syncs: std::sync::Arc<std::sync::atomic::AtomicU64> = Default::default();
        let sync = durability == Durability::PowerLoss;
        let journal = open_checks::open_journal(path, || {
            engine::journal::Journal::open(path, sync, syncs.clone())
        })?;
        journal.adopt_from(&db)?;
        let parts = engine::embedded::Embedded {
            db,
            journal,
            generation: 0,
            added: Default::default(),
        };
        let store = Store {
            db: Engine::Sled(heal::Handle::new(parts, path.to_path_buf(), durability)),
            path: std::sync::Arc::new(path.to_path_buf()),
            flushed_ms: Default::default(),
            opened: std::time::Instant::now(),
            durability,
            log,
            syncs,
        };
        if let Some(journal) = store.db.journal() {
            // What sled holds as processed is durable: it may go.
            let done = store.counter(counter::INBOX_DONE);
            journal.set_processed(done);
            journal.release_through(done);
        }
        // Every acknowledged item into the journal before anything reads
        // the inbox (`inbox_log`).
        if drain == Drain::Log {
            inbox::drain_at_open(&store)?;
        }
        open_checks::at_open(&store)?;
        store.upgrade_at_open()?;
        Ok(store)
    }

    /// Open, waiting up to `wait` while another instance that is shutting
    /// down (a restart) still holds the file lock: sled lets go of it only
    /// when its last background thread ends. Any other error is returned.
    pub fn open_waiting(path: &Path, wait: std::time::Duration) -> Result<Store> {
        Store::open_waiting_with(path, wait, Store::open)
    }

    /// `open_waiting` on sled, whatever `SAFE_OUTCOMES_TEST_PG` says.
    pub fn open_sled_waiting(path: &Path, wait: std::time::Duration) -> Result<Store> {
        Store::open_waiting_with(path, wait, Store::open_sled)
    }

    fn open_waiting_with(
        path: &Path,
        wait: std::time::Duration,
        open: fn(&Path) -> Result<Store>,
    ) -> Result<Store> {
        let started = std::time::Instant::now();
        loop {
            match open(path) {
                Err(e) if e.is_lock() && started.elapsed() < wait => {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                other => return other,
            }
        }
    }

    /// Set a counter directly (tests: fault injection).
    #[cfg(any(test, feature = "test-hooks"))]
    #[doc(hidden)]
    pub fn set_counter_for_tests(&self, name: &str, value: u64) {
        let _ = self.db.insert(keys::counter(name), value.to_be_bytes());
    }

    /// The engine itself, for the store's own modules: everything
    /// outside `store/` goes through typed methods and units of work
    /// (`unit`); `store::boundary` tests that nothing else reaches sled.
    pub(crate) fn db(&self) -> &Engine {
        &self.db
    }

    /// Every record under `prefix`, decoded, in key order.
    pub(crate) fn decoded_under<T: DeserializeOwned>(&self, prefix: &[u8]) -> Result<Vec<T>> {
        let mut out = Vec::new();
        for item in self.db.scan_prefix(prefix) {
            let (k, v) = item?;
            out.push(decode(&k, &v)?);
        }
        Ok(out)
    }

    /// True when the store is on PostgreSQL.
    pub fn is_pg(&self) -> bool {
        self.db.is_pg()
    }

    /// The engine's name, as `/status` shows it.
    pub fn engine_name(&self) -> &'static str {
        if self.is_pg() {
            "postgres"
        } else {
            "sled"
        }
    }

    /// The PostgreSQL engine's health (`None` on sled), checked now.
    pub fn database_health(&self) -> Option<pg::Health> {
        let pg = self.db.pg()?;
        let _ = pg.ping();
        Some(pg.health())
    }

    /// The highest inbox sequence number handed out.
    pub fn last_inbox_seq(&self) -> Result<u64> {
        match self.db.pg() {
            Some(pg) => pg.last_inbox_seq(),
            None => Ok(self.counter(counter::RECEIVED)),
        }
    }

    /// Make every write so far durable (see docs/store.md for what sled's
    /// flush promises).
    pub fn flush(&self) -> Result<()> {
        let started = self.opened.elapsed().as_millis() as u64 + 1;
        self.db.flush()?;
        self.flushed_ms
            .fetch_max(started, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// Make what the acks depend on as durable as `durability()` says: a
    /// flush, then with `PowerLoss` an `fdatasync` of sled's log file
    /// (which also flushes the drive's write cache). The inbox writer calls
    /// it once per group commit.
    pub fn flush_durable(&self) -> Result<()> {
        self.flush()?;
        if let Some(log) = &self.log {
            if let Err(e) = log.sync_data() {
                let e = StoreError::Sled(sled::Error::Io(e));
                self.db.report(&e);
                return Err(e);
            }
            self.syncs
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(())
    }

    /// What an acknowledged delivery survives.
    pub fn durability(&self) -> Durability {
        self.durability
    }

    #[cfg(test)]
    /// `fdatasync`s done since the store was opened.
    pub(crate) fn syncs(&self) -> u64 {
        self.syncs.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Flush unless a flush began less than `age` ago (the inbox writer
    /// flushes at every group commit, which carries the worker's commits
    /// too). Returns whether it flushed.
    pub fn flush_if_older(&self, age: std::time::Duration) -> Result<bool> {
        let last = self.flushed_ms.load(std::sync::atomic::Ordering::Relaxed);
        let now = self.opened.elapsed().as_millis() as u64 + 1;
        if last != 0 && now.saturating_sub(last) < age.as_millis() as u64 {
            return Ok(false);
        }
        self.flush()?;
        Ok(true)
    }

    /// Bytes of the files under the store's directory (sled's own figure
    /// reads 0 for a store that has no blob directory yet).
    pub fn size_on_disk(&self) -> u64 {
        compact::dir_bytes(&self.path)
    }

    /// Live key + value bytes and entry counts by key prefix (`o/`, `b/`,
    /// `n/c/`, …): what the records weigh, apart from sled's own overhead.
    /// Scans the whole tree; for benchmarks and diagnostics.
    pub fn live_bytes_by_prefix(&self) -> Result<BTreeMap<String, (u64, u64)>> {
        let mut sizes: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for item in self.db.iter() {
            let (k, v) = item?;
            let width = if k.starts_with(b"n/") || k.starts_with(b"i/") {
                4
            } else {
                2
            };
            let prefix = String::from_utf8_lossy(&k[..width.min(k.len())]).into_owned();
            let entry = sizes.entry(prefix).or_default();
            entry.0 += 1;
            entry.1 += (k.len() + v.len()) as u64;
        }
        Ok(sizes)
    }

    pub fn counter(&self, name: &str) -> u64 {
        self.try_counter(name).ok().unwrap_or(0)
    }

    /// A counter, or the error that kept it from being read (a database
    /// that is away is not a count of 0).
    pub fn try_counter(&self, name: &str) -> Result<u64> {
        Ok(self
            .db
            .get(keys::counter(name))?
            .and_then(|v| v.as_ref().try_into().ok().map(u64::from_be_bytes))
            .unwrap_or(0))
    }

    /// Put the new value of a counter into a batch (the caller tracks the value).
    pub(crate) fn set_counter(batch: &mut Batch, name: &str, value: u64) {
        batch.insert(keys::counter(name), value.to_be_bytes());
    }

    /// Put `delta` more of a counter into a batch: on sled its new value
    /// (read now), on PostgreSQL an addition (replicas add up).
    pub(crate) fn bump_counter(&self, batch: &mut Batch, name: &str, delta: u64) {
        if self.is_pg() {
            batch.add(keys::counter(name), delta as i64);
        } else {
            Store::set_counter(batch, name, self.counter(name) + delta);
        }
    }

    /// Resolve an output id through aliases left by manifest merges
    /// (`ReadStore::canonical`).
    pub fn canonical_id(&self, id: &str) -> Result<String> {
        ReadStore::canonical(self, id)
    }

    pub fn output(&self, id: &str) -> Result<Option<StoredOutput>> {
        Ok(self.resolve(id)?.map(|(_, stored)| stored))
    }

    /// All outputs whose id starts with `prefix`, from `after` (exclusive).
    pub fn outputs(
        &self,
        prefix: &str,
        after: Option<&str>,
    ) -> impl Iterator<Item = Result<StoredOutput>> + '_ {
        let start = match after {
            Some(a) => {
                let mut k = keys::output(a);
                k.push(0);
                k
            }
            None => keys::output(prefix),
        };
        let prefix_key = keys::output(prefix);
        self.db
            .range(start..)
            .take_while(move |r| r.as_ref().map_or(true, |(k, _)| k.starts_with(&prefix_key)))
            .map(|r| {
                let (k, v) = r?;
                codec::decode_output(&k, &v)
            })
    }

    /// Observations of the given targets, sorted by (`at`, `id`), without repeats.
    pub fn observations(&self, target_keys: &[String]) -> Result<Vec<Observation>> {
        let mut all: Vec<Observation> = Vec::new();
        for target in target_keys {
            for item in self.db.scan_prefix(keys::observations_of(target)) {
                let (k, v) = item?;
                all.push(codec::decode_observation(&k, &v)?);
            }
        }
        all.sort_by(|a, b| (a.at, &a.id).cmp(&(b.at, &b.id)));
        all.dedup_by(|a, b| a.id == b.id);
        Ok(all)
    }

    /// True when anything has been filed under any of the keys.
    pub fn has_observations(&self, target_keys: &[String]) -> Result<bool> {
        for key in target_keys {
            if let Some(item) = self.db.scan_prefix(keys::observations_of(key)).next() {
                item?;
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Ids of the outputs watching a target.
    pub fn outputs_on(&self, target_key: &str) -> Result<Vec<String>> {
        self.suffixes(&keys::outputs_on(target_key))
    }

    /// The output of a given type already filed on a target, if any.
    pub fn output_of_type_on(&self, target_key: &str, output_type: &str) -> Result<Option<String>> {
        Ok(self
            .db
            .get(keys::type_index(target_key, output_type))?
            .map(|v| String::from_utf8_lossy(&v).into_owned()))
    }

    /// Threads (PRs) whose head is the given branch.
    pub fn threads_on_ref(&self, ref_key: &str) -> Result<Vec<String>> {
        self.suffixes(&keys::threads_on_ref(ref_key))
    }

    /// True when a webhook delivery with this `X-GitHub-Delivery` GUID was
    /// stored (its inbox dedupe key exists; processed or not). Read-only.
    pub fn has_delivery(&self, guid: &str) -> Result<bool> {
        self.db.contains_key(keys::inbox_delivery(guid))
    }

    /// The first inbox sequence that may still be unprocessed: on sled one
    /// past `counter::INBOX_DONE` (the journal keeps processed items until
    /// their commit is flushed), on PostgreSQL 0 (processed items are gone).
    pub fn queue_start(&self) -> u64 {
        if self.is_pg() {
            0
        } else {
            self.counter(counter::INBOX_DONE) + 1
        }
    }

    /// The worker's commits through inbox sequence `seq` are flushed (with
    /// the store's durability): the journal may drop those items. Nothing
    /// on PostgreSQL, where the commit removed them.
    pub fn release_inbox_through(&self, seq: u64) {
        if let Some(journal) = self.db.journal() {
            journal.release_through(seq);
        }
    }

    /// Number of inbox entries not yet processed.
    pub fn backlog(&self) -> u64 {
        self.counter(counter::RECEIVED)
            .saturating_sub(self.counter(counter::PROCESSED))
    }
}

/// A lock held across replicas until dropped (`Store::try_lock`,
/// `Store::leader`): nothing on sled, where one process owns the store.
pub struct Held(#[allow(dead_code)] Option<pg::SessionLock>);

impl Store {
    /// Count every stored output into the rollups once, for a store written
    /// before they existed, then its cells into the sums cells and the
    /// tally, for a store written before those (`rollup`). Both run at open,
    /// before the worker: on PostgreSQL run them with one replica (outputs
    /// another replica's worker writes meanwhile may be counted twice).
    /// Outputs with landed lines add their line-survival counts
    /// (`attribution`).
    pub fn ensure_rollups(&self) -> Result<()> {
        self.build_rollups(&attribution::line_counts)
    }
}

impl Store {
    /// Take the lock named `key` across replicas, if no one holds it: on
    /// PostgreSQL a session advisory lock on a connection kept until the
    /// guard drops; on sled always granted.
    pub fn try_lock(&self, key: &str) -> Result<Option<Held>> {
        match self.db.pg() {
            Some(pg) => Ok(pg.try_session_lock(key)?.map(|l| Held(Some(l)))),
            None => Ok(Some(Held(None))),
        }
    }

    /// `try_lock`, waiting (asynchronously) up to `wait` for the holder.
    pub async fn lock(&self, key: &str, wait: std::time::Duration) -> Result<Held> {
        let deadline = std::time::Instant::now() + wait;
        loop {
            if let Some(held) = self.try_lock(key)? {
                return Ok(held);
            }
            if std::time::Instant::now() >= deadline {
                return Err(StoreError::Busy(key.to_string()));
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
    }

    /// Lead the task named `task` for as long as the guard lives, if no
    /// other replica does (`None`: another one leads; skip this round).
    pub fn leader(&self, task: &str) -> Result<Option<Held>> {
        self.try_lock(&format!("leader:{task}"))
    }
}

/// A store (`Store::open`) in a temporary directory of its own (tests):
/// the directory, which removes it when dropped, and the store.
#[cfg(test)]
pub(crate) fn temp_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    (dir, store)
}

/// A stored output of workflow `workflow` not judged yet (tests).
#[cfg(test)]
pub(crate) fn test_output(id: &str, workflow: &str) -> StoredOutput {
    let execution = serde_json::from_value(serde_json::json!({
        "id": id, "output_type": "create_issue", "repo": "o/r", "run_id": 1,
        "target": null, "executed_at": "2026-01-01T00:00:00Z", "workflow": workflow,
    }))
    .unwrap();
    StoredOutput {
        execution,
        outcome: None,
        trace_id: None,
    }
}

/// A stored output of workflow `workflow` judged `status` (tests).
#[cfg(test)]
pub(crate) fn test_judged_output(id: &str, workflow: &str, status: &str) -> StoredOutput {
    let mut stored = test_output(id, workflow);
    stored.outcome = Some(
        serde_json::from_value(serde_json::json!({
            "safe_output_id": id, "safe_output_type": "create_issue",
            "target": {"repo": "o/r", "kind": "issue", "number": 7,
                       "url": "https://github.com/o/r/issues/7"},
            "run_id": 1, "workflow": workflow,
            "created_at": "2026-01-01T00:00:00Z", "evaluated_at": "2026-01-02T00:00:00Z",
            "evaluation_window_hours": 24, "outcome_status": status,
            "evidence_strength": "strong", "human_check_signal": "issue_closed_completed",
            "target_resolved": true, "confidence": "high", "bot_aware": true,
            "actor_summary": {"visible_non_bot_actor_count": 1, "bot_actor_count": 0},
            "details": {}, "notes": "",
            "windows": {"24h": {"outcome_status": status, "evidence_strength": "strong",
                                "human_check_signal": "issue_closed_completed",
                                "evaluated_at": "2026-01-02T00:00:00Z"}},
            "dedicated_evaluator": true
        }))
        .unwrap(),
    );
    stored
}

/// Where the store lives under `DATA_DIR`.
pub fn path_in(data_dir: &Path) -> std::path::PathBuf {
    data_dir.join("store")
}

/// Open the store for an offline read (`report`): on PostgreSQL at
/// `database_url` (servers may run meanwhile), else the sled store under
/// `data_dir`, waiting `STORE_LOCK_WAIT` for a previous instance; the error
/// says what to do.
pub fn open_for_reading(data_dir: &Path, database_url: Option<&str>) -> anyhow::Result<Store> {
    let path = path_in(data_dir);
    if let Some(url) = database_url {
        return Ok(Store::on_pg(pg::Pg::connect(url)?, &path));
    }
    if !path.exists() {
        anyhow::bail!(
            "no store at {} (set --data-dir or DATA_DIR)",
            path.display()
        );
    }
    Store::open_waiting(&path, STORE_LOCK_WAIT).map_err(|e| match e {
        StoreError::Refused(refusal) => refusal.into(),
        e => {
            anyhow::anyhow!(
                "{e} — if a server is running on this DATA_DIR, use --server URL instead"
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power_loss_durability_fdatasyncs_the_log_at_each_durable_flush_and_the_journal_at_each_commit(
    ) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_with(dir.path(), Durability::PowerLoss).unwrap();
        assert_eq!(store.durability().as_str(), "power_loss");
        store.set_counter_for_tests("x", 1);
        let before = store.syncs();
        store.flush_durable().unwrap();
        store.flush_durable().unwrap();
        assert_eq!(store.syncs() - before, 2);
        // Each commit of the inbox's journal (an ack's group commit) too.
        store.db().insert(keys::inbox_queue(1), b"item").unwrap();
        assert!(store.syncs() - before > 2);
        drop(store);
        let crash_only = Store::open_with(dir.path(), Durability::ProcessCrash).unwrap();
        crash_only.flush_durable().unwrap();
        crash_only
            .db()
            .insert(keys::inbox_queue(2), b"item")
            .unwrap();
        assert_eq!(crash_only.syncs(), 0);
        assert_eq!(crash_only.durability().as_str(), "process_crash");
        assert_eq!(crash_only.counter("x"), 1);
    }

    #[test]
    fn records_round_trip_small_plain_and_large_compressed() {
        let small = vec!["a".to_string()];
        let bytes = encode(&small);
        assert_eq!(bytes, br#"["a"]"#);
        assert_eq!(decode::<Vec<String>>(b"k", &bytes).unwrap(), small);
        let large: Vec<String> = (0..200)
            .map(|i| format!("https://github.com/acme/r/{i}"))
            .collect();
        let bytes = encode(&large);
        assert_eq!(bytes[0], LZ4_DICT_V1);
        assert!(bytes.len() < serde_json::to_vec(&large).unwrap().len() / 2);
        assert_eq!(decode::<Vec<String>>(b"k", &bytes).unwrap(), large);
        assert!(decode::<Vec<String>>(b"k", &[LZ4_DICT_V1, 9, 9]).is_err());
        assert!(decode::<Vec<String>>(b"k", &[LZ4_RECORD, 9, 9]).is_err());
    }

    #[test]
    fn records_written_by_earlier_versions_still_decode() {
        let value: Vec<String> = (0..50).map(|i| format!("label-{i}")).collect();
        let json = serde_json::to_vec(&value).unwrap();
        let mut lz4 = vec![LZ4_RECORD];
        lz4.extend_from_slice(&lz4_flex::compress_prepend_size(&json));
        assert_eq!(decode::<Vec<String>>(b"k", &json).unwrap(), value);
        assert_eq!(decode::<Vec<String>>(b"k", &lz4).unwrap(), value);
    }

    #[test]
    fn the_dictionary_shrinks_a_typical_record_well_below_plain_lz4() {
        // The stored output in the dictionary, with other values: what a
        // store holds most of.
        let text = std::str::from_utf8(DICTIONARY_V1).unwrap();
        let output: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        let other = serde_json::to_string(&output)
            .unwrap()
            .replace("acme/widgets", "globex/payments-api")
            .replace("2101", "88231")
            .replace("ci-coach", "dependency-updater");
        let other: serde_json::Value = serde_json::from_str(&other).unwrap();
        let json = serde_json::to_vec(&other).unwrap();
        let plain_lz4 = lz4_flex::compress_prepend_size(&json).len();
        let with_dict = encode(&other).len();
        assert!(
            with_dict * 3 < plain_lz4 * 2,
            "{with_dict} B with the dictionary, {plain_lz4} B without"
        );
        assert_eq!(
            decode::<serde_json::Value>(b"k", &encode(&other)).unwrap(),
            other
        );
    }
}
