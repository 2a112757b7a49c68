//! The inbox's own file on a sled store: the part of the key space an ack
//! writes (`i/` — queued items, delivery ids and their expiry, committed
//! uploads — and the inbox counters) kept in a redb database,
//! `inbox.redb` in the store's directory, instead of in sled.
//!
//! Staged manifest chunks (`i/s/`) stay in sled: the worker removes a chunk
//! in the unit that stores its records, and only one file makes those two
//! writes one (a chunk removed in the journal, whose commits are durable at
//! once, while its records waited in sled for a flush, was lost by a
//! SIGKILL between the two). A worker's unit writes nothing of the journal
//! (`Unit::commit` checks it in debug builds).
//!
//! Why: sled 0.34's concurrency control is one lock for the whole process
//! (`sled-0.34.7/src/concurrency_control.rs`): every iterator step and `get`
//! takes its shared side once a batch has run, every `apply_batch` its
//! exclusive side, and a waiting exclusive taker queues new shared ones. An
//! ack whose group commit went through sled waited for the dashboard's reads
//! in flight and for the worker's commit queued among them (measured in
//! BENCHMARKS.md, 2026-11-26). redb is copy-on-write: its readers never
//! block its one writer, and nothing else in the process takes its lock, so
//! an ack waits only for its own group commit.
//!
//! `Engine::Sled` routes every key `holds` names here, so the typed methods
//! (the inbox writer, claims, dead letters, migration, compaction) are the
//! same on every engine. A batch that writes keys of both files is applied
//! here first, then to sled: only offline tools do (replaying dead letters),
//! and the worker never does — it records how far it processed in sled
//! (`counter::INBOX_DONE`) and the journal drops processed items once the
//! worker says they are durable there (`release_through`), a few with each
//! commit of the journal's own writer (`TRIM_BATCH`).
//!
//! Durability: each commit is written to the file before it returns (which
//! survives the process being killed); with `Durability::PowerLoss` it is
//! also `fdatasync`ed. See docs/store.md.

use std::fmt;
use std::fs::OpenOptions;
use std::io;
use std::ops::Bound;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use redb::backends::FileBackend;
use redb::{Database, ReadableTable, ReadableTableMetadata, StorageBackend, TableDefinition};

use super::super::{counter, keys, Result, StoreError};
use super::Op;

/// The file, in the store's directory.
pub const FILE: &str = "inbox.redb";

/// The one table: keys and values exactly as `store::keys` makes them.
const KV: TableDefinition<&[u8], &[u8]> = TableDefinition::new("inbox");

/// redb's page cache: the queue is read once, just after it is written.
const CACHE_BYTES: usize = 16 * 1024 * 1024;

/// Processed items a commit drops, at most: this many, or as many as the
/// commit writes keys if that is more (the rest go with later commits).
/// The drop is part of an ack's commit, so it is kept small: with 512 the
/// acks' p99 at 1,000/s while the worker drained a 100k backlog was
/// 6.1–7.4 ms, with 64 3.3–3.4 ms, with none 2.6 ms (`bench ingest`,
/// BENCHMARKS.md 2026-11-26 10:00). Sized by the commit, dropping keeps up
/// with a worker that drains faster than deliveries arrive.
const TRIM_BATCH: usize = 64;

/// Entries read by the first page of a scan: the worker reads the queue
/// `INBOX_READ` (16) items at a time, and a first page of 256 copied 240
/// values it dropped unread (5.3 of the drain's 40.8 µs per event in
/// `bench replay`, BENCHMARKS.md 2026-11-27 morning).
const FIRST_PAGE: usize = 16;

/// Entries read per page of a scan, at most: each page reads twice as many
/// as the one before, from `FIRST_PAGE` up to this.
const PAGE: usize = 256;

/// The first key after every `i/` key.
const INBOX_END: &[u8] = b"i0";

/// The first key after every staged chunk (`i/s/`).
const STAGED_END: &[u8] = b"i/s0";

/// True for the keys kept in the journal: everything under `i/` but the
/// staged chunks (`i/s/`, sled's: see above), and the counters of received
/// and duplicate deliveries.
pub fn holds(key: &[u8]) -> bool {
    (key.starts_with(keys::INBOX) && !key.starts_with(keys::MANIFEST_STAGED))
        || counter_keys().iter().any(|k| k.as_slice() == key)
}

/// The journal's `i/` keys, as two half-open ranges: `[i/, i/s/)` and
/// `[i/s0, i0)` (the staged chunks between them are sled's).
fn inbox_ranges() -> [(&'static [u8], &'static [u8]); 2] {
    [
        (keys::INBOX, keys::MANIFEST_STAGED),
        (STAGED_END, INBOX_END),
    ]
}

/// Whether reads skip this entry: a queued item the worker processed, or
/// the committed-upload marker of one (it holds its item's sequence). They
/// stay stored until the journal drops them (`release_through`).
fn hidden(key: &[u8], value: &[u8], processed: u64) -> bool {
    if let Some(seq) = keys::inbox_seq(key) {
        return seq <= processed;
    }
    key.starts_with(keys::MANIFEST_COMMITTED)
        && <[u8; 8]>::try_from(value).is_ok_and(|v| u64::from_be_bytes(v) <= processed)
}

/// The sequence a sled batch records as processed through, if it does.
pub(crate) fn processed_in(ops: &[Op]) -> Option<u64> {
    let key = keys::counter(counter::INBOX_DONE);
    ops.iter().rev().find_map(|op| match op {
        Op::Insert(k, v) if *k == key => <[u8; 8]>::try_from(v.as_slice())
            .ok()
            .map(u64::from_be_bytes),
        _ => None,
    })
}

fn counter_keys() -> &'static [Vec<u8>; 3] {
    static KEYS: std::sync::OnceLock<[Vec<u8>; 3]> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        [
            keys::counter(counter::DUPLICATES),
            keys::counter(counter::RECEIVED),
            keys::counter(counter::INBOX_MOVED),
        ]
    })
}

/// redb's error as the store's: an I/O error (or redb's refusal after
/// one) is `JournalIo`, which reopens the store (`store::heal`).
fn err(e: impl Into<redb::Error>) -> StoreError {
    match e.into() {
        e @ (redb::Error::Io(_) | redb::Error::PreviousIo) => StoreError::JournalIo(e.to_string()),
        e => StoreError::Journal(e.to_string()),
    }
}

/// The file under redb, syncing only when acks must survive a power loss.
#[derive(Debug)]
struct JournalFile {
    file: FileBackend,
    sync: bool,
    syncs: Arc<AtomicU64>,
}

impl StorageBackend for JournalFile {
    fn len(&self) -> std::result::Result<u64, io::Error> {
        self.file.len()
    }
    fn read(&self, offset: u64, len: usize) -> std::result::Result<Vec<u8>, io::Error> {
        self.file.read(offset, len)
    }
    fn set_len(&self, len: u64) -> std::result::Result<(), io::Error> {
        self.file.set_len(len)
    }
    /// Every write reached the file (the OS) before this is called: with
    /// `sync` off that is the promise (a killed process loses nothing).
    fn sync_data(&self, eventual: bool) -> std::result::Result<(), io::Error> {
        if !self.sync {
            return Ok(());
        }
        self.syncs.fetch_add(1, Ordering::Relaxed);
        self.file.sync_data(eventual)
    }
    fn write(&self, offset: u64, data: &[u8]) -> std::result::Result<(), io::Error> {
        self.file.write(offset, data)
    }
}

/// The inbox's database; cheap to clone.
#[derive(Clone)]
pub struct Journal(Arc<Inner>);

struct Inner {
    db: Database,
    /// Inbox items up to this sequence are processed (`counter::INBOX_DONE`
    /// as sled's last batch left it): reads no longer see them.
    processed: AtomicU64,
    /// Inbox items up to this sequence are processed and durable in sled:
    /// they may be dropped.
    done: AtomicU64,
    /// The `done` the committed-upload markers were last swept at: a
    /// marker holds its item's sequence, above every item processed when it
    /// was written, so they need sweeping again only once `done` moves.
    markers_swept: AtomicU64,
}

impl fmt::Debug for Journal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Journal").finish_non_exhaustive()
    }
}

impl Journal {
    /// Open (or create) the journal in the store directory `dir`; `sync`:
    /// `fdatasync` at every commit, counted in `syncs`.
    pub fn open(dir: &Path, sync: bool, syncs: Arc<AtomicU64>) -> Result<Journal> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(dir.join(FILE))
            .map_err(|e| StoreError::JournalIo(format!("{}: {e}", dir.join(FILE).display())))?;
        let backend = JournalFile {
            file: FileBackend::new(file).map_err(err)?,
            sync,
            syncs,
        };
        let db = Database::builder()
            .set_cache_size(CACHE_BYTES)
            .create_with_backend(backend)
            .map_err(err)?;
        let tx = db.begin_write().map_err(err)?;
        tx.open_table(KV).map_err(err)?;
        tx.commit().map_err(err)?;
        Ok(Journal(Arc::new(Inner {
            db,
            processed: AtomicU64::new(0),
            done: AtomicU64::new(0),
            markers_swept: AtomicU64::new(0),
        })))
    }

    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let tx = self.0.db.begin_read().map_err(err)?;
        let table = tx.open_table(KV).map_err(err)?;
        let value = table.get(key).map_err(err)?;
        let processed = self.processed();
        Ok(value
            .map(|v| v.value().to_vec())
            .filter(|v| !hidden(key, v, processed)))
    }

    /// Up to `limit` entries in `(start, end)`, in key order, as stored
    /// (processed items included).
    fn raw_page(
        &self,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let tx = self.0.db.begin_read().map_err(err)?;
        let table = tx.open_table(KV).map_err(err)?;
        let mut out = Vec::new();
        for entry in table.range::<&[u8]>((start, end)).map_err(err)? {
            let (k, v) = entry.map_err(err)?;
            out.push((k.value().to_vec(), v.value().to_vec()));
            if out.len() >= limit {
                break;
            }
        }
        Ok(out)
    }

    /// Through which sequence the worker's commits processed the inbox.
    fn processed(&self) -> u64 {
        self.0.processed.load(Ordering::Relaxed)
    }

    /// sled's batch that recorded `counter::INBOX_DONE` = `seq` is applied:
    /// from now on reads do not see the items through `seq`, as if that
    /// batch had removed them.
    pub(crate) fn set_processed(&self, seq: u64) {
        self.0.processed.fetch_max(seq, Ordering::Relaxed);
    }

    /// The entries in `(start, end)`, read a page at a time.
    pub fn pages(&self, start: Bound<Vec<u8>>, end: Bound<Vec<u8>>) -> Pages {
        Pages {
            journal: self.clone(),
            next: Some(start),
            end,
            page: std::collections::VecDeque::new(),
            size: FIRST_PAGE,
        }
    }

    /// Number of entries reads see.
    pub(crate) fn visible_entries(&self) -> Result<usize> {
        let tx = self.0.db.begin_read().map_err(err)?;
        let table = tx.open_table(KV).map_err(err)?;
        let stored = table.len().map_err(err)? as usize;
        let processed = self.processed();
        let last = keys::inbox_queue(processed);
        let markers_end = super::prefix_end(keys::MANIFEST_COMMITTED).expect("prefix end");
        let mut not_seen = 0;
        for range in [
            (keys::INBOX_QUEUE, Bound::Included(last.as_slice())),
            (
                keys::MANIFEST_COMMITTED,
                Bound::Excluded(markers_end.as_slice()),
            ),
        ] {
            let bounds = (Bound::Included(range.0), range.1);
            for entry in table.range::<&[u8]>(bounds).map_err(err)? {
                let (k, v) = entry.map_err(err)?;
                not_seen += usize::from(hidden(k.value(), v.value(), processed));
            }
        }
        Ok(stored - not_seen)
    }

    /// Apply `ops` in one commit (with `Op::Add` read and summed), and drop
    /// up to `TRIM_BATCH` (or `ops.len()`) processed items with it.
    pub fn apply(&self, ops: Vec<Op>) -> Result<()> {
        let written = ops.len();
        let tx = self.0.db.begin_write().map_err(err)?;
        {
            let mut table = tx.open_table(KV).map_err(err)?;
            for op in ops {
                match op {
                    Op::Insert(k, v) => {
                        table.insert(k.as_slice(), v.as_slice()).map_err(err)?;
                    }
                    Op::Remove(k) => {
                        table.remove(k.as_slice()).map_err(err)?;
                    }
                    Op::Add(k, delta) => {
                        let now = table
                            .get(k.as_slice())
                            .map_err(err)?
                            .and_then(|v| v.value().try_into().ok().map(u64::from_be_bytes))
                            .unwrap_or(0);
                        let value = (now as i64).saturating_add(delta).max(0) as u64;
                        table
                            .insert(k.as_slice(), value.to_be_bytes().as_slice())
                            .map_err(err)?;
                    }
                    Op::AddAll(k, _) => {
                        return Err(StoreError::Journal(format!(
                            "packed counts under {} do not belong in the inbox",
                            String::from_utf8_lossy(&k)
                        )))
                    }
                }
            }
            self.trim(&mut table, TRIM_BATCH.max(written))?;
        }
        tx.commit().map_err(err)
    }

    /// Remove `key` and return what it held, in one commit.
    pub fn take(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let tx = self.0.db.begin_write().map_err(err)?;
        let value = {
            let mut table = tx.open_table(KV).map_err(err)?;
            let value = table.remove(key).map_err(err)?;
            value.map(|v| v.value().to_vec())
        };
        tx.commit().map_err(err)?;
        Ok(value)
    }

    /// Items up to `seq` are processed, and that is durable in sled: later
    /// commits may drop them (and the committed-upload markers of items up
    /// to it).
    pub(crate) fn release_through(&self, seq: u64) {
        self.0.done.fetch_max(seq, Ordering::Relaxed);
    }

    /// Drop up to `limit` released items, and the upload markers of
    /// released items (a marker holds its item's sequence).
    fn trim(&self, table: &mut redb::Table<&[u8], &[u8]>, limit: usize) -> Result<()> {
        let done = self.0.done.load(Ordering::Relaxed);
        if done == 0 {
            return Ok(());
        }
        let last = keys::inbox_queue(done);
        let mut gone: Vec<Vec<u8>> = Vec::new();
        for entry in table
            .range::<&[u8]>(keys::INBOX_QUEUE..=last.as_slice())
            .map_err(err)?
        {
            let (k, _) = entry.map_err(err)?;
            gone.push(k.value().to_vec());
            if gone.len() >= limit {
                break;
            }
        }
        // The markers are read only when `done` moved (this runs in every
        // ack's commit); one a failed commit kept goes at the next move.
        if self.0.markers_swept.swap(done, Ordering::Relaxed) < done {
            let end = super::prefix_end(keys::MANIFEST_COMMITTED).expect("prefix end");
            for entry in table
                .range::<&[u8]>(keys::MANIFEST_COMMITTED..end.as_slice())
                .map_err(err)?
            {
                let (k, v) = entry.map_err(err)?;
                let seq = <[u8; 8]>::try_from(v.value()).map(u64::from_be_bytes);
                if seq.is_ok_and(|s| s <= done) {
                    gone.push(k.value().to_vec());
                }
            }
        }
        for k in gone {
            table.remove(k.as_slice()).map_err(err)?;
        }
        Ok(())
    }

    /// Move the journal's keys a sled store of an earlier version kept in
    /// sled here, and record in sled how far its inbox was processed (the
    /// items left queued are the unprocessed ones). The journal's commit is
    /// durable before sled lets go of them: stopped between the two, the
    /// next open moves the same keys again.
    pub(crate) fn adopt_from(&self, db: &sled::Db) -> Result<()> {
        let mut moved = Vec::new();
        for entry in db.scan_prefix(keys::INBOX) {
            let (k, v) = entry?;
            if holds(&k) {
                moved.push((k.to_vec(), v.to_vec()));
            }
        }
        for k in counter_keys() {
            if let Some(v) = db.get(k)? {
                moved.push((k.clone(), v.to_vec()));
            }
        }
        if moved.is_empty() {
            return Ok(());
        }
        let received = moved
            .iter()
            .find(|(k, _)| *k == keys::counter(counter::RECEIVED))
            .and_then(|(_, v)| <[u8; 8]>::try_from(v.as_slice()).ok())
            .map_or(0, u64::from_be_bytes);
        let first_queued = moved.iter().find_map(|(k, _)| keys::inbox_seq(k));
        let done = first_queued.map_or(received, |s| s.saturating_sub(1));
        let mut ops = Vec::new();
        let mut forget = sled::Batch::default();
        for (k, v) in moved {
            forget.remove(k.as_slice());
            // Markers of earlier versions are empty: theirs items are
            // queued, so they go once everything received by now is done.
            let v = if k.starts_with(keys::MANIFEST_COMMITTED) && v.is_empty() {
                received.to_be_bytes().to_vec()
            } else {
                v
            };
            ops.push(Op::Insert(k, v));
        }
        self.apply(ops)?;
        forget.insert(
            keys::counter(counter::INBOX_DONE).as_slice(),
            &done.to_be_bytes(),
        );
        db.apply_batch(forget)?;
        db.flush()?;
        Ok(())
    }
}

/// Whether a range of keys reaches into the journal's keys (it may say yes
/// for a range that holds none: the scan is then merged, still correct).
pub(crate) fn overlaps(start: &Bound<Vec<u8>>, end: &Bound<Vec<u8>>) -> bool {
    let below_end = |k: &[u8]| match end {
        Bound::Included(e) => k <= e.as_slice(),
        Bound::Excluded(e) => k < e.as_slice(),
        Bound::Unbounded => true,
    };
    let above_start = |k: &[u8]| match start {
        Bound::Included(s) => k >= s.as_slice(),
        Bound::Excluded(s) => k > s.as_slice(),
        Bound::Unbounded => true,
    };
    // [lo, hi) meets the range when the range starts before hi and ends
    // after lo.
    let meets = |(lo, hi): (&[u8], &[u8])| {
        let starts_before_hi = match start {
            Bound::Included(s) | Bound::Excluded(s) => s.as_slice() < hi,
            Bound::Unbounded => true,
        };
        let ends_after_lo = match end {
            Bound::Included(e) => e.as_slice() >= lo,
            Bound::Excluded(e) => e.as_slice() > lo,
            Bound::Unbounded => true,
        };
        starts_before_hi && ends_after_lo
    };
    inbox_ranges().into_iter().any(meets)
        || counter_keys()
            .iter()
            .any(|k| above_start(k) && below_end(k))
}

/// Whether a range of keys lies within the journal's `i/` keys (it may say
/// no for one that does: the scan is then merged, still correct).
pub fn within(start: &Bound<Vec<u8>>, end: &Bound<Vec<u8>>) -> bool {
    let inside = |(lo, hi): (&[u8], &[u8])| {
        let start_in = match start {
            Bound::Included(s) | Bound::Excluded(s) => s.as_slice() >= lo,
            Bound::Unbounded => false,
        };
        let end_in = match end {
            Bound::Included(e) => e.as_slice() < hi,
            Bound::Excluded(e) => e.as_slice() <= hi,
            Bound::Unbounded => false,
        };
        start_in && end_in
    };
    inbox_ranges().into_iter().any(inside)
}

/// A scan of the journal, a page (one read transaction) at a time.
pub struct Pages {
    journal: Journal,
    /// Where the next page starts; `None` once the last page was read.
    next: Option<Bound<Vec<u8>>>,
    end: Bound<Vec<u8>>,
    page: std::collections::VecDeque<(Vec<u8>, Vec<u8>)>,
    /// Entries the next page reads (`FIRST_PAGE`, doubling up to `PAGE`).
    size: usize,
}

impl Iterator for Pages {
    type Item = Result<(Vec<u8>, Vec<u8>)>;
    fn next(&mut self) -> Option<Self::Item> {
        while self.page.is_empty() {
            let start = self.next.take()?;
            let page = self.journal.raw_page(
                start.as_ref().map(|s| s.as_slice()),
                self.end.as_ref().map(|e| e.as_slice()),
                self.size,
            );
            match page {
                Ok(page) => {
                    let full = page.len() == self.size;
                    self.size = (self.size * 2).min(PAGE);
                    if full {
                        self.next = page.last().map(|(k, _)| Bound::Excluded(k.clone()));
                    }
                    let processed = self.journal.processed();
                    self.page = page
                        .into_iter()
                        .filter(|(k, v)| !hidden(k, v, processed))
                        .collect();
                }
                Err(e) => return Some(Err(e)),
            }
        }
        self.page.pop_front().map(Ok)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fresh() -> (tempfile::TempDir, Journal) {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(dir.path(), false, Default::default()).unwrap();
        (dir, journal)
    }

    #[test]
    fn the_journal_holds_the_inbox_keys_and_nothing_else() {
        assert!(holds(&keys::inbox_queue(7)));
        assert!(holds(&keys::inbox_delivery("guid")));
        assert!(holds(&keys::manifest_committed(3)));
        assert!(holds(&keys::counter(counter::RECEIVED)));
        assert!(holds(&keys::counter(counter::DUPLICATES)));
        assert!(!holds(&keys::counter(counter::PROCESSED)));
        assert!(!holds(&keys::counter(counter::INBOX_DONE)));
        assert!(!holds(&keys::output("o/r:1:0")));
        assert!(!holds(b"i"));
        assert!(!holds(b"i0"));
        assert!(!holds(&keys::staged_chunk(3, 0)), "sled's: see the module");
        assert!(holds(b"i/s0"));
    }

    #[test]
    fn a_range_overlaps_the_journal_when_it_reaches_one_of_its_keys() {
        let inc = |k: &[u8]| Bound::Included(k.to_vec());
        let exc = |k: &[u8]| Bound::Excluded(k.to_vec());
        type Range = (Bound<Vec<u8>>, Bound<Vec<u8>>);
        // (range, overlaps, within)
        let cases: Vec<(Range, bool, bool)> = vec![
            ((Bound::Unbounded, Bound::Unbounded), true, false),
            ((inc(b"a"), exc(b"i/")), false, false),
            ((inc(b"a"), inc(b"i/")), true, false),
            ((inc(b"i/q/"), exc(b"i/r")), true, true),
            ((inc(b"h"), exc(b"j")), true, false),
            ((exc(b"i0"), Bound::Unbounded), true, false),
            ((exc(b"i0"), exc(b"m/")), false, false),
            ((inc(b"i0"), exc(b"m/")), false, false),
            ((inc(b"m/"), exc(b"m0")), true, false),
            ((inc(b"o/"), exc(b"o0")), false, false),
            (
                (inc(b"m/deliveries_received"), inc(b"m/deliveries_received")),
                true,
                false,
            ),
            // The staged chunks are sled's.
            ((inc(b"i/s/"), exc(b"i/s0")), false, false),
            (
                (inc(&keys::staged_upload(7)), Bound::Unbounded),
                true,
                false,
            ),
            ((inc(b"i/s/"), inc(b"i/s/\xff")), false, false),
            ((inc(b"i/r"), exc(b"i/s/")), true, true),
            ((inc(b"i/s0"), exc(b"i0")), true, true),
            ((inc(b"i/q/"), exc(b"i/t")), true, false),
        ];
        // The rule, checked against keys: a range holding a key of the
        // journal overlaps it, and one within it holds only its keys.
        let probes: Vec<Vec<u8>> = vec![
            keys::inbox_queue(0),
            keys::inbox_queue(u64::MAX),
            keys::inbox_delivery("g"),
            keys::manifest_committed(7),
            keys::staged_chunk(7, 0),
            keys::staged_chunk(u64::MAX, u32::MAX),
            b"i/".to_vec(),
            b"i/r".to_vec(),
            b"i/s/".to_vec(),
            b"i/s0".to_vec(),
            b"i/\xff\xff".to_vec(),
            b"i0".to_vec(),
            b"h".to_vec(),
            keys::counter(counter::RECEIVED),
            keys::counter(counter::DUPLICATES),
            keys::counter(counter::PROCESSED),
        ];
        for ((start, end), overlapping, inside_journal) in cases {
            let inside = |k: &[u8]| {
                let bounds = (
                    start.as_ref().map(|s| s.as_slice()),
                    end.as_ref().map(|e| e.as_slice()),
                );
                std::ops::RangeBounds::<&[u8]>::contains(&bounds, &k)
            };
            assert_eq!(overlaps(&start, &end), overlapping, "{start:?}..{end:?}");
            assert_eq!(within(&start, &end), inside_journal, "{start:?}..{end:?}");
            for probe in probes.iter().filter(|p| inside(p)) {
                if holds(probe) {
                    assert!(overlapping, "{start:?}..{end:?} holds {probe:?}");
                } else {
                    assert!(!inside_journal, "{start:?}..{end:?} holds {probe:?}");
                }
            }
        }
    }

    /// Items 1..=`n` queued, and `more` keys holding a sequence, in one commit.
    fn queue(journal: &Journal, n: u64, more: &[(Vec<u8>, u64)]) {
        let items = (1..=n).map(|seq| Op::Insert(keys::inbox_queue(seq), b"item".to_vec()));
        let more = more
            .iter()
            .map(|(k, seq)| Op::Insert(k.clone(), seq.to_be_bytes().to_vec()));
        journal.apply(items.chain(more).collect()).unwrap();
    }

    /// A scan returns every entry of its range once, in key order, whatever
    /// the range's length against the growing pages (16, 32, … 256) and
    /// wherever a page ends among the entries it hides; and a scan dropped
    /// after a few entries read only its first page.
    #[test]
    fn a_scan_reads_every_entry_once_across_its_growing_pages() {
        let (_dir, journal) = fresh();
        queue(&journal, 1200, &[]);
        let mut first = journal.pages(Bound::Included(keys::inbox_queue(1)), Bound::Unbounded);
        assert!(first.next().is_some());
        assert_eq!(
            first.page.len(),
            FIRST_PAGE - 1,
            "one page of FIRST_PAGE read"
        );
        let scan = |from: u64, to: u64| -> Vec<u64> {
            journal
                .pages(
                    Bound::Included(keys::inbox_queue(from)),
                    Bound::Excluded(keys::inbox_queue(to)),
                )
                .map(|e| keys::inbox_seq(&e.unwrap().0).unwrap())
                .collect()
        };
        for processed in [0, 5, 16, 47, 300] {
            journal.set_processed(processed);
            for (from, to) in [
                (1, 1),
                (1, 2),
                (1, 17),
                (1, 49),
                (3, 115),
                (1, 1201),
                (700, 1201),
            ] {
                let want: Vec<u64> = (from.max(processed + 1)..to).collect();
                assert_eq!(
                    scan(from, to),
                    want,
                    "from {from} to {to}, processed {processed}"
                );
            }
        }
    }

    #[test]
    fn released_items_and_their_markers_go_with_later_commits() {
        let (_dir, journal) = fresh();
        let marker = |upload, seq: u64| (keys::manifest_committed(upload), seq);
        queue(&journal, 1000, &[marker(9, 10), marker(8, 900)]);
        journal.release_through(600);
        journal.apply(Vec::new()).unwrap();
        let queued = |j: &Journal| {
            j.pages(
                Bound::Included(keys::INBOX_QUEUE.to_vec()),
                Bound::Excluded(b"i/r".to_vec()),
            )
            .count()
        };
        assert_eq!(queued(&journal), 1000 - TRIM_BATCH);
        assert!(journal.get(&keys::manifest_committed(9)).unwrap().is_none());
        assert!(journal.get(&keys::manifest_committed(8)).unwrap().is_some());
        // A commit that writes more keys drops as many.
        let writes: Vec<Op> = (0..200)
            .map(|n| Op::Insert(keys::inbox_delivery(&format!("d{n}")), vec![1]))
            .collect();
        journal.apply(writes).unwrap();
        assert_eq!(queued(&journal), 1000 - TRIM_BATCH - 200);
        while queued(&journal) > 400 {
            journal.apply(Vec::new()).unwrap();
        }
        assert_eq!(queued(&journal), 400, "601..=1000 stay");
        assert!(journal.get(&keys::inbox_queue(601)).unwrap().is_some());
        assert_eq!(
            journal.visible_entries().unwrap(),
            601,
            "400 items, a marker and 200 delivery ids"
        );
        // A marker written after a sweep goes once `done` passes it.
        queue(&journal, 0, &[marker(7, 1001)]);
        journal.release_through(1000);
        journal.apply(Vec::new()).unwrap();
        let stored = |upload| {
            let k = keys::manifest_committed(upload);
            let page = journal.raw_page(Bound::Included(&k), Bound::Included(&k), 1);
            !page.unwrap().is_empty()
        };
        assert!(!stored(8));
        assert!(stored(7), "its item is not processed");
        journal.apply(Vec::new()).unwrap();
        assert!(stored(7), "done did not move");
        journal.release_through(1001);
        journal.apply(Vec::new()).unwrap();
        assert!(!stored(7));
    }

    #[test]
    fn reads_see_no_processed_item_from_the_moment_sled_records_it() {
        let (_dir, journal) = fresh();
        let delivery_id = (keys::inbox_delivery("g"), 1);
        queue(
            &journal,
            600,
            &[(keys::manifest_committed(9), 10), delivery_id],
        );
        // What sled's batch records, and only that, hides them.
        let batch = vec![Op::Insert(
            keys::counter(counter::INBOX_DONE),
            300u64.to_be_bytes().to_vec(),
        )];
        journal.set_processed(processed_in(&batch).unwrap());
        let seen: Vec<u64> = journal
            .pages(
                Bound::Included(keys::INBOX_QUEUE.to_vec()),
                Bound::Unbounded,
            )
            .filter_map(|e| keys::inbox_seq(&e.unwrap().0))
            .collect();
        assert_eq!(seen, (301..=600).collect::<Vec<_>>());
        assert!(journal.get(&keys::inbox_queue(300)).unwrap().is_none());
        assert!(journal.get(&keys::inbox_queue(301)).unwrap().is_some());
        assert!(journal.get(&keys::manifest_committed(9)).unwrap().is_none());
        assert!(journal.get(&keys::inbox_delivery("g")).unwrap().is_some());
        assert_eq!(
            journal.visible_entries().unwrap(),
            301,
            "300 items and a delivery id"
        );
        // Not released: nothing is dropped.
        journal.apply(Vec::new()).unwrap();
        journal.set_processed(0);
        assert_eq!(
            journal.visible_entries().unwrap(),
            301,
            "processed only goes up"
        );
    }

    #[test]
    fn an_earlier_versions_inbox_moves_out_of_sled_once() {
        let dir = tempfile::tempdir().unwrap();
        let db = sled::open(dir.path().join("sled")).unwrap();
        db.insert(keys::inbox_queue(41), b"queued".as_slice())
            .unwrap();
        db.insert(keys::inbox_delivery("g"), 41u64.to_be_bytes().as_slice())
            .unwrap();
        db.insert(keys::manifest_committed(5), b"".as_slice())
            .unwrap();
        db.insert(keys::staged_chunk(5, 0), b"records".as_slice())
            .unwrap();
        db.insert(
            keys::counter(counter::RECEIVED),
            41u64.to_be_bytes().as_slice(),
        )
        .unwrap();
        db.insert(
            keys::counter(counter::PROCESSED),
            40u64.to_be_bytes().as_slice(),
        )
        .unwrap();
        let journal = Journal::open(dir.path(), false, Default::default()).unwrap();
        journal.adopt_from(&db).unwrap();
        journal.adopt_from(&db).unwrap();
        assert_eq!(
            db.scan_prefix(keys::INBOX).count(),
            1,
            "only the staged chunk stays in sled"
        );
        assert!(db.get(keys::staged_chunk(5, 0)).unwrap().is_some());
        assert!(db.get(keys::counter(counter::RECEIVED)).unwrap().is_none());
        assert!(db.get(keys::counter(counter::PROCESSED)).unwrap().is_some());
        let done = db.get(keys::counter(counter::INBOX_DONE)).unwrap().unwrap();
        assert_eq!(done.as_ref(), 40u64.to_be_bytes().as_slice());
        assert_eq!(
            journal.get(&keys::inbox_queue(41)).unwrap().unwrap(),
            b"queued"
        );
        assert_eq!(
            journal.get(&keys::manifest_committed(5)).unwrap().unwrap(),
            41u64.to_be_bytes().to_vec(),
            "an old marker goes once everything received is done"
        );
        assert_eq!(journal.visible_entries().unwrap(), 4);
    }
}
