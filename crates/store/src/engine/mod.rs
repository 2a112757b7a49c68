//! The store's engines: the ordered key space of `store::keys` kept either
//! in one embedded sled tree (the default) or in a PostgreSQL table
//! (`pg`, several replicas on one database). `Engine` mirrors the sled calls
//! the typed methods make (get, insert, scans, batches), returning owned
//! bytes, so every typed method and every record encoding is shared; what
//! only PostgreSQL can do (row claims, advisory locks, a real sequence, unique
//! keys across replicas) is asked of it through the store's own methods.

pub mod added;
pub mod embedded;
pub mod heal;
pub mod journal;
pub mod pg;

use std::collections::BTreeMap;
use std::ops::{Bound, Deref, RangeBounds};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use super::{Result, StoreError};

/// Random reads the engines made in this process: each point read (`get`,
/// `contains_key`, `take`, and sled's read of a counter or sum a batch adds
/// to), and each start of a range or prefix scan (the seek to its first
/// key; the keys after it are read in order). Counted so
/// that `bench scale` can say how many random reads an event costs,
/// whatever the machine's caches make each one cost.
static RANDOM_READS: AtomicU64 = AtomicU64::new(0);

/// The random reads (`RANDOM_READS`) made so far in this process.
pub fn random_reads() -> u64 {
    RANDOM_READS.load(Ordering::Relaxed)
}

/// Whether each random read is also counted by its key's family
/// (`reads_by_family`): off unless a bench asks, since it takes a lock.
static BY_FAMILY_ON: AtomicBool = AtomicBool::new(false);
static BY_FAMILY: Mutex<BTreeMap<String, u64>> = Mutex::new(BTreeMap::new());

/// Count the random reads by key family from now (`on`), or stop; either
/// way the counts so far are cleared.
pub fn count_reads_by_family(on: bool) {
    BY_FAMILY_ON.store(on, Ordering::Relaxed);
    BY_FAMILY.lock().unwrap_or_else(|e| e.into_inner()).clear();
}

/// The random reads counted by family since `count_reads_by_family(true)`:
/// a key's family is its prefix up to its first `/` (`o/`, `b/`, …), or its
/// second under the shared prefixes (`n/r/`, `i/q/`, `g/r`…; `keys.rs`).
pub fn reads_by_family() -> BTreeMap<String, u64> {
    BY_FAMILY.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

fn count_read(key: &[u8]) {
    RANDOM_READS.fetch_add(1, Ordering::Relaxed);
    if BY_FAMILY_ON.load(Ordering::Relaxed) {
        let family = String::from_utf8_lossy(family(key)).into_owned();
        *BY_FAMILY
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(family)
            .or_default() += 1;
    }
}

/// The family of `key`: up to its first `/`, or its second under `n/`,
/// `i/` and `g/` (which hold families of their own).
fn family(key: &[u8]) -> &[u8] {
    let end = |from: usize| {
        key[from..]
            .iter()
            .position(|b| *b == b'/')
            .map_or(key.len(), |i| from + i + 1)
    };
    let first = end(0);
    match key.get(..first) {
        Some(b"n/" | b"i/") => &key[..end(first)],
        Some(b"g/") => &key[..(first + 1).min(key.len())],
        _ => &key[..first.min(16)],
    }
}

/// A key or value as read: sled's shared buffer, or bytes read from PostgreSQL.
#[derive(Debug, Clone)]
pub enum Bytes {
    Sled(sled::IVec),
    Owned(Vec<u8>),
}

impl Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Sled(v) => v,
            Bytes::Owned(v) => v,
        }
    }
}

impl AsRef<[u8]> for Bytes {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl PartialEq<[u8]> for Bytes {
    fn eq(&self, other: &[u8]) -> bool {
        **self == *other
    }
}

/// One write of a batch.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    Insert(Vec<u8>, Vec<u8>),
    Remove(Vec<u8>),
    /// Add to the counter under this `m/` key (PostgreSQL: `value = value +
    /// delta`, so replicas never lose each other's counts).
    Add(Vec<u8>, i64),
    /// Add element-wise to the counts packed under this key (`pack`; a
    /// missing key or element counts as 0). PostgreSQL adds them in the
    /// row (`so_add_packed`), so replicas never lose each other's counts.
    AddAll(Vec<u8>, Vec<i64>),
}

/// Counts as stored for `Op::AddAll`: 32-bit big-endian signed integers.
pub(crate) fn pack(counts: &[i64]) -> Vec<u8> {
    let len = counts.iter().rposition(|c| *c != 0).map_or(0, |i| i + 1);
    counts[..len]
        .iter()
        .flat_map(|c| (*c as i32).to_be_bytes())
        .collect()
}

/// The counts of `pack`ed bytes.
pub(crate) fn unpack(bytes: &[u8]) -> Vec<i64> {
    packed_counts(bytes).collect()
}

/// The counts of `pack`ed bytes, one by one (no vector).
pub(crate) fn packed_counts(bytes: &[u8]) -> impl Iterator<Item = i64> + '_ {
    bytes
        .chunks_exact(4)
        .map(|c| i32::from_be_bytes([c[0], c[1], c[2], c[3]]) as i64)
}

/// `a + b` element-wise.
pub(crate) fn add_packed(a: &[u8], b: &[i64]) -> Vec<u8> {
    let mut sum = unpack(a);
    if sum.len() < b.len() {
        sum.resize(b.len(), 0);
    }
    for (s, d) in sum.iter_mut().zip(b) {
        *s += d;
    }
    pack(&sum)
}

/// Writes applied together, all or nothing (sled's `Batch`, engine-neutral).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Batch {
    pub(crate) ops: Vec<Op>,
}

impl Batch {
    pub fn insert(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) {
        self.ops
            .push(Op::Insert(key.as_ref().to_vec(), value.as_ref().to_vec()));
    }

    pub fn remove(&mut self, key: impl AsRef<[u8]>) {
        self.ops.push(Op::Remove(key.as_ref().to_vec()));
    }

    /// Add `delta` to the counter under `key` (an `m/` key).
    pub fn add(&mut self, key: impl AsRef<[u8]>, delta: i64) {
        self.ops.push(Op::Add(key.as_ref().to_vec(), delta));
    }

    /// Add `counts` element-wise to the counts under `key` (`Op::AddAll`).
    pub(crate) fn add_all(&mut self, key: impl AsRef<[u8]>, counts: Vec<i64>) {
        self.ops.push(Op::AddAll(key.as_ref().to_vec(), counts));
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    pub fn len(&self) -> usize {
        self.ops.len()
    }
}

/// Which engine holds the store: sled (with the inbox's keys in a journal
/// file of their own, `journal`), reached through a handle that reopens
/// both after an I/O error (`store::heal`), or PostgreSQL.
#[derive(Clone)]
pub enum Engine {
    Sled(heal::Handle),
    Pg(pg::Pg),
}

/// Key-ordered (key, value) pairs of a scan.
pub struct Iter(IterInner);

enum IterInner {
    Sled(sled::Iter),
    Pg(pg::Pages),
    Journal(journal::Pages),
    /// A sled scan and a journal scan of one range, merged in key order
    /// (their keys never meet: `journal::holds`).
    Both(Box<Merge>),
    /// The scan could not begin (the store is reopening): this error, once.
    Failed(Option<StoreError>),
}

struct Merge {
    sled: std::iter::Peekable<sled::Iter>,
    journal: std::iter::Peekable<journal::Pages>,
}

impl Iterator for Merge {
    type Item = Result<(Bytes, Bytes)>;
    fn next(&mut self) -> Option<Self::Item> {
        let journal_first = match (self.sled.peek(), self.journal.peek()) {
            (None, None) => return None,
            (None, Some(_)) | (Some(Ok(_)), Some(Err(_))) => true,
            (Some(_), None) | (Some(Err(_)), Some(_)) => false,
            (Some(Ok((a, _))), Some(Ok((b, _)))) => b.as_slice() < a.as_ref(),
        };
        if journal_first {
            self.journal.next().map(journal_entry)
        } else {
            self.sled.next().map(sled_entry)
        }
    }
}

fn sled_entry(r: sled::Result<(sled::IVec, sled::IVec)>) -> Result<(Bytes, Bytes)> {
    r.map(|(k, v)| (Bytes::Sled(k), Bytes::Sled(v)))
        .map_err(StoreError::from)
}

fn journal_entry(r: Result<(Vec<u8>, Vec<u8>)>) -> Result<(Bytes, Bytes)> {
    r.map(|(k, v)| (Bytes::Owned(k), Bytes::Owned(v)))
}

impl Iterator for Iter {
    type Item = Result<(Bytes, Bytes)>;
    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            IterInner::Sled(it) => it.next().map(sled_entry),
            IterInner::Pg(pages) => pages.next(),
            IterInner::Journal(pages) => pages.next().map(journal_entry),
            IterInner::Both(merge) => merge.next(),
            IterInner::Failed(e) => e.take().map(Err),
        }
    }
}

impl Iter {
    /// The keys only.
    pub fn keys(self) -> impl Iterator<Item = Result<Bytes>> {
        self.map(|r| r.map(|(k, _)| k))
    }
}

/// Owned copies of a range's bounds.
pub(crate) fn owned_bounds<K: AsRef<[u8]>, R: RangeBounds<K>>(
    range: &R,
) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
    let own = |b: Bound<&K>| match b {
        Bound::Included(k) => Bound::Included(k.as_ref().to_vec()),
        Bound::Excluded(k) => Bound::Excluded(k.as_ref().to_vec()),
        Bound::Unbounded => Bound::Unbounded,
    };
    (own(range.start_bound()), own(range.end_bound()))
}

/// The smallest key greater than every key starting with `prefix` (`None`:
/// no such key, the prefix is all 0xFF).
pub(crate) fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xFF {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

impl Engine {
    /// True on PostgreSQL.
    pub fn is_pg(&self) -> bool {
        matches!(self, Engine::Pg(_))
    }

    /// The PostgreSQL engine, if it is one.
    pub fn pg(&self) -> Option<&pg::Pg> {
        match self {
            Engine::Pg(pg) => Some(pg),
            Engine::Sled(..) => None,
        }
    }

    /// The inbox's journal (sled only; `None` while the store reopens).
    pub fn journal(&self) -> Option<journal::Journal> {
        match self {
            Engine::Sled(h) => h.with(|s| Ok(s.journal.clone())).ok(),
            Engine::Pg(_) => None,
        }
    }

    /// The same engine, bound to the files open now (sled: operations fail
    /// once the store has reopened since; PostgreSQL: unchanged).
    pub fn pinned(&self) -> Engine {
        match self {
            Engine::Sled(h) => Engine::Sled(h.pinned()),
            Engine::Pg(pg) => Engine::Pg(pg.clone()),
        }
    }

    /// A failure seen outside the engine's own calls (an `fdatasync` of
    /// sled's log): an I/O error makes the store reopen (`heal`).
    pub fn report(&self, error: &StoreError) {
        if let Engine::Sled(h) = self {
            h.report(error);
        }
    }

    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Bytes>> {
        count_read(key.as_ref());
        match self {
            Engine::Sled(h) => h.with(|s| s.get(key.as_ref())),
            Engine::Pg(pg) => Ok(pg.get(key.as_ref())?.map(Bytes::Owned)),
        }
    }

    pub fn contains_key(&self, key: impl AsRef<[u8]>) -> Result<bool> {
        match self {
            Engine::Sled(h) => {
                count_read(key.as_ref());
                h.with(|s| s.contains_key(key.as_ref()))
            }
            Engine::Pg(_) => Ok(self.get(key)?.is_some()),
        }
    }

    pub fn insert(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        match self {
            Engine::Sled(h) => h.with(|s| s.insert(key.as_ref(), value.as_ref())),
            Engine::Pg(_) => {
                let mut batch = Batch::default();
                batch.insert(key, value);
                self.apply_batch(batch)
            }
        }
    }

    pub fn remove(&self, key: impl AsRef<[u8]>) -> Result<()> {
        match self {
            Engine::Sled(h) => h.with(|s| s.remove(key.as_ref())),
            Engine::Pg(_) => {
                let mut batch = Batch::default();
                batch.remove(key);
                self.apply_batch(batch)
            }
        }
    }

    /// Remove `key` and return what it held, with one winner when several
    /// callers (threads, replicas) take the same key at once: sled's own
    /// atomic remove (the journal's: one commit); on PostgreSQL a
    /// transaction that takes the key's advisory lock, reads and deletes (a
    /// caller that finds the lock held gets `None`: another one is taking it).
    pub fn take(&self, key: impl AsRef<[u8]>) -> Result<Option<Bytes>> {
        count_read(key.as_ref());
        match self {
            Engine::Sled(h) => h.with(|s| s.take(key.as_ref())),
            Engine::Pg(pg) => {
                let key = key.as_ref();
                let tx = pg.pinned();
                if !tx.try_xact_lock(&format!("take:{}", hex::encode(key)))? {
                    return Ok(None);
                }
                let value = tx.get(key)?;
                if value.is_some() {
                    let mut batch = Batch::default();
                    batch.remove(key);
                    tx.apply(batch)?;
                }
                tx.commit()?;
                Ok(value.map(Bytes::Owned))
            }
        }
    }

    /// Every key starting with `prefix`, in key order.
    pub(crate) fn scan_prefix(&self, prefix: impl AsRef<[u8]>) -> Iter {
        count_read(prefix.as_ref());
        match self {
            Engine::Sled(h) => h
                .with(|s| Ok(s.scan_prefix(prefix.as_ref())))
                .unwrap_or_else(Iter::failed),
            Engine::Pg(pg) => Iter(IterInner::Pg(pg.scan_prefix(prefix.as_ref()))),
        }
    }

    /// The keys in `range`, in key order.
    pub fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Iter {
        let (start, end) = owned_bounds(&range);
        count_read(match &start {
            Bound::Included(k) | Bound::Excluded(k) => k,
            Bound::Unbounded => &[],
        });
        match self {
            Engine::Sled(h) => h
                .with(|s| Ok(s.range(start, end)))
                .unwrap_or_else(Iter::failed),
            Engine::Pg(pg) => Iter(IterInner::Pg(pg.pages(start, end))),
        }
    }

    /// Every key of the store, in key order.
    pub fn iter(&self) -> Iter {
        self.range::<Vec<u8>, _>(..)
    }

    /// Number of keys (a full count on PostgreSQL).
    pub fn len(&self) -> usize {
        match self {
            Engine::Sled(h) => h.with(|s| Ok(s.len())).unwrap_or(0),
            Engine::Pg(pg) => pg.len().unwrap_or(0),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Apply every write of `batch` at once. On sled the journal's keys
    /// are one commit of the journal, the rest one batch of sled's, in that
    /// order (`journal`: only offline tools write both at once).
    pub(crate) fn apply_batch(&self, batch: Batch) -> Result<()> {
        match self {
            Engine::Sled(h) => h.with(|s| s.apply_batch(batch)),
            Engine::Pg(pg) => pg.apply(batch),
        }
    }

    /// Make every write durable (PostgreSQL: every commit already is; the
    /// journal's commits are as durable as the store's `Durability`).
    pub fn flush(&self) -> Result<()> {
        match self {
            Engine::Sled(h) => h.with(|s| s.flush()),
            Engine::Pg(_) => Ok(()),
        }
    }

    /// A new id, unique across restarts (and replicas).
    pub(crate) fn generate_id(&self) -> Result<u64> {
        match self {
            Engine::Sled(h) => h.with(|s| s.generate_id()),
            Engine::Pg(pg) => pg.next_upload_id(),
        }
    }

    /// A named keyspace apart from the main one.
    pub(crate) fn open_tree(&self, name: &str) -> Result<Tree> {
        match self {
            Engine::Sled(h) => h.with(|s| s.open_tree(name)),
            Engine::Pg(pg) => Ok(Tree::Pg(pg.clone(), pg::tree_prefix(name))),
        }
    }
}

impl Iter {
    /// A scan that could not begin: yields `error` once.
    fn failed(error: StoreError) -> Iter {
        Iter(IterInner::Failed(Some(error)))
    }
}

impl Op {
    /// The key the write is to.
    pub fn key(&self) -> &[u8] {
        match self {
            Op::Insert(k, _) | Op::Remove(k) | Op::Add(k, _) | Op::AddAll(k, _) => k,
        }
    }
}

/// Whether `write_sled` pages a batch's leaves in before taking sled's lock:
/// yes, unless the App's settings say `SAFE_OUTCOMES_PAGE_IN=0` (for `bench
/// ingest`'s before/after on one build; `Settings::page_in`).
fn page_in_first() -> bool {
    crate::settings().page_in
}

/// Pages of sled's log a batch moves out of the segments queued for
/// cleaning, per write in it, at most (`sled::Tree::clean_segments`, a
/// vendored addition: vendor/sled/PATCHES.md). sled cleans from its flusher
/// thread, which the store does not run (`Store::open_with`); without this,
/// only page consolidations cleaned, one page each, and the file grew to
/// 2.4 times its compacted size (docs/store.md, "Reclaiming the log").
const CLEAN_PAGES_PER_WRITE: usize = 1;

/// Apply a batch to one sled tree (the main one or a named one), then
/// clean as many pages of the log as it wrote (`CLEAN_PAGES_PER_WRITE`).
/// The batch is written by then: cleaning that fails is logged, and the
/// batch's result stays a success (the next write meets sled's error).
fn apply_sled(db: &sled::Tree, batch: Batch, added: Option<&added::Added>) -> Result<()> {
    let writes = batch.ops.len();
    write_sled(db, batch, added)?;
    if let Err(e) = db.clean_segments(writes * CLEAN_PAGES_PER_WRITE) {
        tracing::warn!(error = %e, "cleaning sled's log after a batch failed");
    }
    Ok(())
}

/// Write a batch to one sled tree, with the additions of `Op::Add` and
/// `Op::AddAll` read and summed first: from what the additions last left
/// (`remembered`, the main tree's), else from sled.
fn write_sled(db: &sled::Tree, batch: Batch, remembered: Option<&added::Added>) -> Result<()> {
    if page_in_first() {
        // sled's `apply_batch` holds its process-wide write lock while it
        // pages in every leaf the batch writes into, and every read of
        // sled (the dashboard's, the API's) queues behind it: read each key
        // first, outside the lock, so the leaves are in the cache when the
        // lock is taken (docs/store.md). The acks' journal is not sled's.
        for op in &batch.ops {
            if let Op::Insert(k, _) | Op::Remove(k) = op {
                db.get(k)?;
            }
        }
    }
    let mut sled_batch = sled::Batch::default();
    // The keys some `Add` or `AddAll` adds to: only theirs are remembered
    // below (a batch of 100,000 records must not hold a second copy).
    let added: std::collections::HashSet<Vec<u8>> = batch
        .ops
        .iter()
        .filter_map(|op| match op {
            Op::Add(k, _) | Op::AddAll(k, _) => Some(k.clone()),
            _ => None,
        })
        .collect();
    // Counter values as this batch leaves them so far.
    let mut counters: std::collections::HashMap<Vec<u8>, u64> = Default::default();
    // Packed counts as this batch leaves them so far.
    let mut sums: std::collections::HashMap<Vec<u8>, Vec<u8>> = Default::default();
    // Held from the first read to the last update (`added`'s doc).
    let mut kept = remembered.map(added::Added::lock);
    // What an added-to key holds once the batch is written (empty: nothing),
    // and the other keys written (`kept` forgets them).
    let mut left: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    let mut written: Vec<Vec<u8>> = Vec::new();
    // What an added-to key holds before the batch: remembered, else read.
    let stored = |k: &[u8]| -> Result<Vec<u8>> {
        if let Some(v) = kept.as_ref().and_then(|kept| kept.get(k)) {
            return Ok(v.clone());
        }
        count_read(k);
        Ok(db.get(k)?.map(|v| v.to_vec()).unwrap_or_default())
    };
    for op in batch.ops {
        match op {
            Op::Insert(k, v) => {
                if added.contains(&k) {
                    if let Ok(bytes) = <[u8; 8]>::try_from(v.as_slice()) {
                        counters.insert(k.clone(), u64::from_be_bytes(bytes));
                    }
                    sums.insert(k.clone(), v.clone());
                    left.push((k.clone(), v.clone()));
                } else {
                    written.push(k.clone());
                }
                sled_batch.insert(k, v)
            }
            Op::Remove(k) => {
                if added.contains(&k) {
                    counters.insert(k.clone(), 0);
                    sums.insert(k.clone(), Vec::new());
                    left.push((k.clone(), Vec::new()));
                } else {
                    written.push(k.clone());
                }
                sled_batch.remove(k)
            }
            Op::AddAll(k, delta) => {
                let now = match sums.get(&k) {
                    Some(v) => v.clone(),
                    None => stored(&k)?,
                };
                let value = add_packed(&now, &delta);
                sums.insert(k.clone(), value.clone());
                left.push((k.clone(), value.clone()));
                if value.is_empty() {
                    // Every count back to 0: nothing left to keep.
                    sled_batch.remove(k);
                } else {
                    sled_batch.insert(k, value);
                }
            }
            Op::Add(k, delta) => {
                let now = match counters.get(&k) {
                    Some(v) => *v,
                    None => <[u8; 8]>::try_from(stored(&k)?.as_slice())
                        .map(u64::from_be_bytes)
                        .unwrap_or(0),
                };
                let value = (now as i64).saturating_add(delta).max(0) as u64;
                counters.insert(k.clone(), value);
                left.push((k.clone(), value.to_be_bytes().to_vec()));
                sled_batch.insert(k, &value.to_be_bytes());
            }
        }
    }
    db.apply_batch(sled_batch)?;
    if let Some(kept) = kept.as_mut() {
        for k in written {
            kept.forget(&k);
        }
        for (k, v) in left {
            kept.put(k, v);
        }
    }
    Ok(())
}

/// A named keyspace (sled: a tree of its own; PostgreSQL: keys under
/// `pg::tree_prefix`, above the main key space).
pub(crate) enum Tree {
    Sled(sled::Tree),
    Pg(pg::Pg, Vec<u8>),
}

impl Tree {
    /// The keys in `start..end` of the tree, in key order (on PostgreSQL
    /// with the tree's prefix in front: `strip` takes it off).
    pub fn range(&self, start: Vec<u8>, end: Vec<u8>) -> Iter {
        count_read(b"tree/");
        match self {
            Tree::Sled(t) => Iter(IterInner::Sled(t.range(start..end))),
            Tree::Pg(pg, tree) => Iter(IterInner::Pg(pg.pages(
                Bound::Included([tree.as_slice(), &start].concat()),
                Bound::Excluded([tree.as_slice(), &end].concat()),
            ))),
        }
    }

    /// A key as read from the tree, without the tree's own prefix.
    pub(crate) fn strip<'k>(&self, key: &'k [u8]) -> &'k [u8] {
        match self {
            Tree::Sled(_) => key,
            Tree::Pg(_, tree) => key.strip_prefix(tree.as_slice()).unwrap_or(key),
        }
    }

    /// Apply every write of `batch` to the tree at once.
    pub(crate) fn apply_batch(&self, batch: Batch) -> Result<()> {
        match self {
            Tree::Sled(t) => apply_sled(t, batch, None),
            Tree::Pg(pg, prefix) => {
                let inside = |k: Vec<u8>| [prefix.as_slice(), &k].concat();
                let ops = batch
                    .ops
                    .into_iter()
                    .map(|op| match op {
                        Op::Insert(k, v) => Op::Insert(inside(k), v),
                        Op::Remove(k) => Op::Remove(inside(k)),
                        Op::Add(k, d) => Op::Add(inside(k), d),
                        Op::AddAll(k, d) => Op::AddAll(inside(k), d),
                    })
                    .collect();
                pg.apply(Batch { ops })
            }
        }
    }

    /// Every key under `prefix` in the tree, in key order (on PostgreSQL
    /// the keys come with the tree's own prefix in front).
    pub(crate) fn scan_prefix(&self, prefix: impl AsRef<[u8]>) -> Iter {
        count_read(b"tree/");
        match self {
            Tree::Sled(t) => Iter(IterInner::Sled(t.scan_prefix(prefix))),
            Tree::Pg(pg, tree) => {
                let full = [tree.as_slice(), prefix.as_ref()].concat();
                let end = prefix_end(&full).map_or(Bound::Unbounded, Bound::Excluded);
                Iter(IterInner::Pg(pg.pages(Bound::Included(full), end)))
            }
        }
    }

    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Bytes>> {
        count_read(b"tree/");
        match self {
            Tree::Sled(t) => Ok(t.get(key)?.map(Bytes::Sled)),
            Tree::Pg(pg, prefix) => {
                let k = [prefix.as_slice(), key.as_ref()].concat();
                Ok(pg.get(&k)?.map(Bytes::Owned))
            }
        }
    }

    pub fn insert(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        match self {
            Tree::Sled(t) => {
                t.insert(key.as_ref(), value.as_ref())?;
                Ok(())
            }
            Tree::Pg(pg, prefix) => {
                let mut batch = Batch::default();
                batch.insert([prefix.as_slice(), key.as_ref()].concat(), value);
                pg.apply(batch)
            }
        }
    }
}

#[cfg(test)]
mod tests;
