//! The inbox writer on a sled store: acks from the log, the journal filled
//! after them.
//!
//! The writer thread (`write_loop`) takes a group of requests, answers each
//! one already known as a duplicate (its id in the journal's dedupe index or
//! among the items logged and not yet moved), appends the rest to the
//! inbox's log (`inbox_log`) in one write (one `fdatasync` with
//! `Durability::PowerLoss`), and answers the webhook deliveries. The mover
//! thread (`move_loop`) reads the log in order and writes what it read into
//! the journal in one commit: the items under their inbox sequence, their
//! dedupe keys, the counters and how far it moved (`counter::INBOX_MOVED`),
//! dropping a repeated id there. The other items (manifests, reconcile
//! results) are answered after that commit, with their sequence, as before
//! the log: their answer says "duplicate", and a streamed manifest's chunks
//! are kept from the sweep by a marker the same commit writes.
//!
//! A crash between any two steps: frames written and not answered are moved
//! and processed once (the client sends them again and the mover drops the
//! repeat); frames moved are past `INBOX_MOVED`, which their own commit
//! wrote, so they are never moved twice; a torn group at the log's end was
//! not answered and is cut off at open; `Store::open` moves what the log
//! holds past `INBOX_MOVED` before anything else reads the inbox
//! (`drain_at_open`).

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot, watch};

use super::{next_group, prune_when_due, remember_delivery, remembered, seen_before, BUSY_GROUP};
use super::{Dedup, Enqueued, InboxError, InboxItem, OnStored, Request};
use crate::inbox_log::{remove_through, Log, LogError, Reader};
use crate::{counter, keys, Batch, Result, Store, StoreError};

/// Frames the mover writes into the journal in one commit, at most.
const MOVE_ITEMS: usize = 4096;

/// How long the mover sleeps when woken by nothing (the prune clock).
const IDLE_WAIT: Duration = Duration::from_millis(200);

/// How long the mover lets groups gather before a move nobody waits on
/// (deliveries are answered once written): a journal commit has a fixed
/// cost, paid once a move, so at 1,000 deliveries/s a move a delivery cost
/// the mover about a third of a core (`bench ingest`, "cores used",
/// 2026-12-06). Not when a manifest or reconcile result waits for its
/// answer, nor once `GATHER_BYTES` are written and unmoved.
const GATHER_WAIT: Duration = Duration::from_millis(5);
const GATHER_BYTES: u64 = 1 << 20;

/// Most items the log may hold ahead of the journal: past it (a mover
/// slower than the acks, or failing) the writer answers 503 until the
/// mover catches up, so that the ids it keeps for the unmoved frames
/// (`Pending`, about 200 B each) and the log on disk stay bounded.
const MAX_UNMOVED: usize = 200_000;

/// The steps between which a test stops the writer or the mover as a kill
/// would (`tests`): after writing part of a group, after writing it (before
/// any answer), after the mover read frames, after its commit (before its
/// answers), after its answers (before removing segments).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    Torn,
    Written,
    Read,
    Committed,
    Answered,
}

/// Where a test stops a thread: never outside tests.
#[derive(Default)]
pub(crate) struct Crash {
    #[cfg(test)]
    pub(crate) at: Mutex<Option<(Step, usize)>>,
    /// Set once a step was hit: both threads stop, as both die in a kill.
    killed: AtomicBool,
}

impl Crash {
    /// Whether the thread stops at `step`, this time.
    fn hit(&self, step: Step) -> bool {
        #[cfg(test)]
        if let Some((at, n)) = self.at.lock().expect("crash lock").as_mut() {
            if *at == step {
                *n -= 1;
                if *n == 0 {
                    self.killed.store(true, Ordering::SeqCst);
                }
            }
        }
        let _ = step;
        self.killed()
    }

    /// Whether a test stopped the threads.
    fn killed(&self) -> bool {
        self.killed.load(Ordering::SeqCst)
    }
}

/// What the writer, the mover and the handles share.
pub(super) struct Shared {
    /// The position after the last group written (and answered).
    written: AtomicU64,
    /// The position the journal holds everything before.
    moved: watch::Sender<u64>,
    /// Duplicates the writer answered, not yet counted in the journal.
    answered_duplicates: AtomicU64,
    closed: AtomicBool,
    /// The mover's thread ended (closed, or it died): nothing more moves.
    mover_stopped: AtomicBool,
    wake: (Mutex<bool>, Condvar),
    crash: Crash,
}

impl Shared {
    fn notify(&self) {
        let (lock, cv) = &self.wake;
        *lock.lock().expect("wake lock") = true;
        cv.notify_one();
    }

    fn wait(&self, timeout: Duration) {
        let (lock, cv) = &self.wake;
        let woken = lock.lock().expect("wake lock");
        let (mut woken, _) = cv
            .wait_timeout_while(woken, timeout, |w| !*w)
            .expect("wake lock");
        *woken = false;
    }

    /// True once the mover's thread ended while the writer was still open.
    pub(super) fn mover_stopped(&self) -> bool {
        self.mover_stopped.load(Ordering::Acquire) && !self.closed.load(Ordering::Acquire)
    }

    /// Resolves once everything written so far is in the journal, or the
    /// mover stopped (nothing more will be).
    pub(super) async fn settled(&self) {
        let target = self.written.load(Ordering::Acquire);
        let mut moved = self.moved.subscribe();
        let _ = moved
            .wait_for(|m| *m >= target || self.mover_stopped.load(Ordering::Acquire))
            .await;
    }
}

/// Marks the mover stopped when its thread ends, by a return or a panic,
/// and wakes whoever waits for it to move.
struct MoverGone(Arc<Shared>);

impl Drop for MoverGone {
    fn drop(&mut self) {
        self.0.mover_stopped.store(true, Ordering::Release);
        self.0.moved.send_modify(|_| {});
    }
}

/// One item as the log holds it: what the mover needs, without decoding.
struct Logged<'a> {
    kind: Kind,
    key: &'a str,
    item: &'a [u8],
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A webhook delivery: its id expires after the dedupe window.
    Delivery,
    /// A manifest or reconcile result: a digest that does not expire.
    Other,
    /// A streamed manifest's upload: it gets a committed-upload marker.
    Upload(u64),
}

impl Logged<'_> {
    /// `[kind][upload u64 BE, kind 2 only][key length u32 LE][key][item]`.
    fn encode(item: &InboxItem, key: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(key.len() + 16);
        match item {
            InboxItem::Delivery { .. } => out.push(0),
            InboxItem::ManifestChunks { upload, .. } => {
                out.push(2);
                out.extend_from_slice(&upload.to_be_bytes());
            }
            _ => out.push(1),
        }
        out.extend_from_slice(&(key.len() as u32).to_le_bytes());
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(&crate::codec::encode_item(item));
        out
    }

    fn decode(bytes: &[u8]) -> Option<Logged<'_>> {
        let (kind, rest) = match *bytes.first()? {
            0 => (Kind::Delivery, &bytes[1..]),
            1 => (Kind::Other, &bytes[1..]),
            2 => {
                let upload = u64::from_be_bytes(bytes.get(1..9)?.try_into().ok()?);
                (Kind::Upload(upload), &bytes[9..])
            }
            _ => return None,
        };
        let len = u32::from_le_bytes(rest.get(0..4)?.try_into().ok()?) as usize;
        let key = std::str::from_utf8(rest.get(4..4 + len)?).ok()?;
        Some(Logged {
            kind,
            key,
            item: &rest[4 + len..],
        })
    }
}

/// The log's error as the store's: a damaged frame refuses the store
/// (exit 8, naming the segment); an I/O error is the journal's kind, which
/// reopens the store (`heal`).
fn log_error(e: LogError) -> StoreError {
    match e {
        LogError::Corrupt { path, at } => crate::open_checks::Refusal::Corrupt {
            detail: format!("a damaged frame at byte {at} is followed by more data"),
            file: path,
            advice: crate::open_checks::LOG_ADVICE,
        }
        .into(),
        e @ LogError::Io { .. } => StoreError::JournalIo(e.to_string()),
    }
}

/// Open the log of `store` (cutting a torn tail) and move into the journal
/// whatever it holds past `counter::INBOX_MOVED`: every acknowledged item is
/// in the journal before anything reads the inbox. Called by `Store::open`.
pub(crate) fn drain_at_open(store: &Store) -> Result<()> {
    let moved = store.try_counter(counter::INBOX_MOVED)?;
    let sync = store.durability == crate::Durability::PowerLoss;
    let log =
        Log::open(store.path.as_path(), moved, sync, store.syncs.clone()).map_err(log_error)?;
    let end = log.end();
    drop(log);
    let mut mover = Mover::new(
        store,
        Dedup::default(),
        log_start(store.path.as_path(), moved)?,
    );
    while mover.reader.pos() < end {
        let before = mover.reader.pos();
        let group = Group {
            upto: end,
            answered_duplicates: 0,
        };
        mover.move_group(store, group, &mut BTreeMap::new(), &Crash::default())?;
        if mover.reader.pos() == before {
            break;
        }
    }
    remove_through(&store.path.join(crate::inbox_log::DIR), mover.reader.pos())
        .map_err(log_error)?;
    Ok(())
}

/// Where the mover starts: `moved`, or the log's first segment if it starts
/// later (a journal put back from before the log's oldest segment).
fn log_start(store_dir: &Path, moved: u64) -> Result<u64> {
    let first = crate::inbox_log::first_segment(&store_dir.join(crate::inbox_log::DIR))
        .map_err(log_error)?;
    Ok(first.map_or(moved, |f| f.max(moved)))
}

/// Start the writer and the mover on a sled store. A log that does not
/// open leaves a writer that answers every request with the error (503).
pub(super) fn start(
    store: Store,
    mut rx: mpsc::Receiver<Request>,
    on_stored: OnStored,
    dedup: Dedup,
    crash: Crash,
) -> (Option<Arc<Shared>>, std::thread::JoinHandle<()>) {
    match open_log(&store) {
        Ok((log, start)) => {
            let threads = Threads {
                on_stored,
                dedup,
                crash,
            };
            let (shared, handle) = spawn(store, log, start, rx, threads);
            (Some(shared), handle)
        }
        Err(e) => {
            tracing::error!(error = %e, "opening the inbox log");
            let handle = std::thread::Builder::new()
                .name("inbox-writer".into())
                .spawn(move || {
                    while let Some(req) = rx.blocking_recv() {
                        let _ = req.reply.send(Err(InboxError::Write(e.to_string())));
                    }
                })
                .expect("spawn the inbox writer");
            (None, handle)
        }
    }
}

/// The log, opened for appending, and where the mover starts.
fn open_log(store: &Store) -> Result<(Log, u64)> {
    let moved = store.try_counter(counter::INBOX_MOVED)?;
    let sync = store.durability == crate::Durability::PowerLoss;
    let log =
        Log::open(store.path.as_path(), moved, sync, store.syncs.clone()).map_err(log_error)?;
    let start = log_start(store.path.as_path(), moved)?;
    Ok((log, start))
}

/// What the two threads are started with.
struct Threads {
    on_stored: OnStored,
    dedup: Dedup,
    crash: Crash,
}

fn spawn(
    store: Store,
    log: Log,
    start: u64,
    rx: mpsc::Receiver<Request>,
    threads: Threads,
) -> (Arc<Shared>, std::thread::JoinHandle<()>) {
    let Threads {
        on_stored,
        dedup,
        crash,
    } = threads;
    let shared = Arc::new(Shared {
        written: AtomicU64::new(log.end()),
        moved: watch::channel(start).0,
        answered_duplicates: AtomicU64::new(0),
        closed: AtomicBool::new(false),
        mover_stopped: AtomicBool::new(false),
        wake: (Mutex::new(false), Condvar::new()),
        crash,
    });
    let (waiters_tx, waiters_rx) = std::sync::mpsc::channel();
    let mover = {
        let (store, shared) = (store.clone(), shared.clone());
        let mover = Mover::new(&store, dedup.clone(), start);
        std::thread::Builder::new()
            .name("inbox-mover".into())
            .spawn(move || move_loop(store, mover, shared, waiters_rx, on_stored))
            .expect("spawn the inbox mover")
    };
    let writer_shared = shared.clone();
    let writer_dedup = dedup.clone();
    let handle = std::thread::Builder::new()
        .name("inbox-writer".into())
        .spawn(move || {
            super::upgrade_at_start(&store, &writer_dedup);
            let mut writer = Writer {
                store,
                log: Some(log),
                shared: writer_shared,
                pending: Pending::default(),
                waiters: waiters_tx,
                dedup: writer_dedup,
            };
            writer.run(rx);
            writer.shared.closed.store(true, Ordering::Release);
            writer.shared.notify();
            let _ = mover.join();
        })
        .expect("spawn the inbox writer");
    (shared, handle)
}

/// Ids logged and not yet moved, with the position after their frame.
#[derive(Default)]
struct Pending {
    ids: HashMap<String, u64>,
    order: VecDeque<(u64, String)>,
}

impl Pending {
    /// Forget the ids the journal now holds.
    fn moved_through(&mut self, moved: u64) {
        while self.order.front().is_some_and(|(end, _)| *end <= moved) {
            let (end, key) = self.order.pop_front().expect("front");
            if self.ids.get(&key) == Some(&end) {
                self.ids.remove(&key);
            }
        }
    }

    fn add(&mut self, key: String, end: u64) {
        self.ids.insert(key.clone(), end);
        self.order.push_back((end, key));
    }
}

/// An answer the mover gives once the item's frame is moved.
type Waiter = (
    u64,
    oneshot::Sender<std::result::Result<Enqueued, InboxError>>,
);

struct Writer {
    store: Store,
    /// `None` after a write whose bytes could not be cut back: opened again
    /// (which cuts them) before the next group.
    log: Option<Log>,
    shared: Arc<Shared>,
    pending: Pending,
    waiters: std::sync::mpsc::Sender<Waiter>,
    dedup: Dedup,
}

impl Writer {
    fn run(&mut self, mut rx: mpsc::Receiver<Request>) {
        let mut busy = false;
        while let Some(requests) = next_group(&mut rx, busy) {
            busy = requests.len() >= BUSY_GROUP;
            self.pending.moved_through(*self.shared.moved.borrow());
            if self.shared.crash.killed() || !self.group(requests) {
                return;
            }
        }
    }

    /// Answer the known duplicates, log the rest, answer the deliveries.
    /// False when a test stopped the writer here.
    fn group(&mut self, requests: Vec<Request>) -> bool {
        let store = self.store.pinned();
        let now = (self.dedup.now)();
        let mut in_group = HashSet::new();
        let mut logged = Vec::new();
        let mut payloads = Vec::new();
        let mut duplicates = 0;
        for req in requests {
            let key = req.item.dedupe_key();
            let pending = &self.pending.ids;
            let seen = seen_before(&in_group, &key, |_| {
                Ok(pending.contains_key(&key) || remembered(&store, &self.dedup, now, &key)?)
            });
            match seen {
                Ok(true) => {
                    duplicates += 1;
                    let _ = req.reply.send(Ok(Enqueued::Duplicate));
                }
                Err(e) => {
                    let _ = req.reply.send(Err(e));
                }
                Ok(false) => {
                    payloads.push(Logged::encode(&req.item, &key));
                    in_group.insert(key.clone());
                    logged.push((key, req));
                }
            }
        }
        if duplicates > 0 {
            self.shared
                .answered_duplicates
                .fetch_add(duplicates, Ordering::Relaxed);
            self.shared.notify();
        }
        if payloads.is_empty() {
            return true;
        }
        if let Some(why) = self.refusal() {
            for (_, req) in logged {
                let _ = req.reply.send(Err(InboxError::Write(why.clone())));
            }
            return true;
        }
        if self.shared.crash.hit(Step::Torn) {
            #[cfg(test)]
            if let Some(log) = &mut self.log {
                log.append_torn(&payloads);
            }
            return false;
        }
        match self.append(&payloads) {
            Ok(_) if self.shared.crash.hit(Step::Written) => return false,
            Ok(ends) => self.answer(logged, ends),
            Err(e) => {
                tracing::error!(error = %e, "inbox log write failed");
                // As an I/O error of the store's files: readiness says so,
                // and the store reopens once writes pass again (`heal`).
                store.db().report(&log_error(e.clone_for_report()));
                for (_, req) in logged {
                    let _ = req.reply.send(Err(InboxError::Write(e.to_string())));
                }
            }
        }
        true
    }

    /// Why nothing more may be logged now: the mover stopped, or the log
    /// holds `MAX_UNMOVED` items it has not moved yet (a 503 until it has).
    fn refusal(&self) -> Option<String> {
        if self.shared.mover_stopped.load(Ordering::Acquire) {
            return Some("the inbox's mover stopped: nothing logged now would be processed".into());
        }
        (self.pending.order.len() >= MAX_UNMOVED).then(|| {
            format!(
                "the inbox's log holds {} items the journal has not taken yet; try again shortly",
                self.pending.order.len()
            )
        })
    }

    fn append(&mut self, payloads: &[Vec<u8>]) -> std::result::Result<Vec<u64>, LogError> {
        if self.log.is_none() {
            let store = &self.store;
            let sync = store.durability == crate::Durability::PowerLoss;
            let moved = *self.shared.moved.borrow();
            self.log = Some(Log::open(
                store.path.as_path(),
                moved,
                sync,
                store.syncs.clone(),
            )?);
        }
        let log = self.log.as_mut().expect("opened");
        let appended = log.append(payloads);
        if let Err(LogError::Io { .. }) = &appended {
            if log.end() != self.shared.written.load(Ordering::Relaxed) {
                self.log = None;
            }
        }
        appended
    }

    /// The group is written: deliveries are answered now, other items once
    /// moved (their waiters go to the mover before `written` moves on, so
    /// the mover that reads their frames has them).
    fn answer(&mut self, logged: Vec<(String, Request)>, ends: Vec<u64>) {
        let mut now = Vec::new();
        for ((key, req), end) in logged.into_iter().zip(&ends) {
            self.pending.add(key, *end);
            if matches!(req.item, InboxItem::Delivery { .. }) {
                now.push(req.reply);
            } else {
                let _ = self.waiters.send((*end, req.reply));
            }
        }
        let end = *ends.last().expect("a frame");
        self.shared.written.store(end, Ordering::Release);
        self.shared.notify();
        for reply in now {
            let _ = reply.send(Ok(Enqueued::Logged));
        }
    }
}

/// The mover's state: where it reads, and the counters it writes.
struct Mover {
    reader: Reader,
    dedup: Dedup,
    next_prune: chrono::DateTime<chrono::Utc>,
    generation: u64,
    /// The last move failed: read the journal's counters again first.
    resync: bool,
    seq: u64,
    duplicates: u64,
}

impl Mover {
    fn new(store: &Store, dedup: Dedup, pos: u64) -> Mover {
        Mover {
            reader: Reader::new(store.path.as_path(), pos),
            next_prune: (dedup.now)(),
            dedup,
            generation: store.generation(),
            resync: false,
            seq: store.counter(counter::RECEIVED),
            duplicates: store.counter(counter::DUPLICATES),
        }
    }

    /// Move the frames up to `upto` (at most `MOVE_ITEMS`) into the journal
    /// in one commit; answer the waiters of the frames moved. On an error
    /// nothing moved: the reader is back where it was. `None`: a test
    /// stopped the mover here.
    fn move_group(
        &mut self,
        store: &Store,
        group: Group,
        waiters: &mut BTreeMap<u64, Waiter>,
        crash: &Crash,
    ) -> Result<Option<Moved>> {
        let store = store.pinned();
        let (before_seq, before_dups) = (self.seq, self.duplicates);
        if self.resync || store.generation() != self.generation {
            self.resync(&store)?;
        }
        let from = self.reader.pos();
        let frames = self
            .reader
            .read(group.upto, MOVE_ITEMS)
            .map_err(log_error)?;
        if crash.hit(Step::Read) {
            return Ok(None);
        }
        let (start_seq, start_dups) = (self.seq, self.duplicates);
        self.duplicates += group.answered_duplicates;
        let built = self.build(&store, &frames);
        let written = built.and_then(|(batch, results)| {
            store.db().apply_batch(batch)?;
            Ok(results)
        });
        match written {
            Ok(_) if crash.hit(Step::Committed) => Ok(None),
            Ok(results) => {
                let mut answers = Vec::new();
                for (end, result) in results {
                    if let Some((_, reply)) = waiters.remove(&end) {
                        answers.push((reply, result));
                    }
                }
                // Frames a commit reported as failed had filed (found by
                // `resync`): filed, their sequence not known here.
                let later = waiters.split_off(&(self.reader.pos() + 1));
                for (_, (_, reply)) in std::mem::replace(waiters, later) {
                    answers.push((reply, Enqueued::Logged));
                }
                Ok(Some(Moved {
                    seq: self.seq,
                    stored: self.seq.saturating_sub(before_seq),
                    duplicates: self.duplicates,
                    changed: self.duplicates != before_dups || self.seq != before_seq,
                    answers,
                }))
            }
            Err(e) => {
                (self.seq, self.duplicates) = (start_seq, start_dups);
                self.reader.rewind(from);
                self.resync = true;
                Err(e)
            }
        }
    }

    /// Before the first move after a failed one or a reopen (`heal`): the
    /// counters and the position as the journal holds them. A commit that
    /// reported an error may have been written all the same: what it filed
    /// is not filed again, and its sequences are not handed out again.
    fn resync(&mut self, store: &Store) -> Result<()> {
        let moved = store.try_counter(counter::INBOX_MOVED)?;
        self.seq = store.try_counter(counter::RECEIVED)?;
        self.duplicates = store.try_counter(counter::DUPLICATES)?;
        if moved > self.reader.pos() {
            self.reader.rewind(moved);
        }
        self.generation = store.generation();
        self.resync = false;
        Ok(())
    }

    /// The journal's batch for `frames`: each new item under the next
    /// sequence, with its dedupe key; a repeated id dropped and counted;
    /// the counters and the position moved through. Returns the batch and
    /// each frame's result by its end.
    fn build(
        &mut self,
        store: &Store,
        frames: &[(u64, Vec<u8>)],
    ) -> Result<(Batch, Vec<(u64, Enqueued)>)> {
        let mut batch = Batch::default();
        let now = (self.dedup.now)();
        let pruned = prune_when_due(store, &self.dedup, now, &mut self.next_prune, &mut batch);
        let mut in_batch = HashSet::new();
        let mut results = Vec::with_capacity(frames.len());
        for (end, payload) in frames {
            let logged = Logged::decode(payload).ok_or_else(|| StoreError::Decode {
                key: format!("inbox log position {end}"),
                error: "not an inbox log frame".into(),
            })?;
            let key = logged.key;
            let seen = in_batch.contains(key)
                || (!pruned.contains(key) && remembered(store, &self.dedup, now, key)?);
            if seen {
                self.duplicates += 1;
                results.push((*end, Enqueued::Duplicate));
                continue;
            }
            self.seq += 1;
            batch.insert(keys::inbox_queue(self.seq), logged.item);
            match logged.kind {
                Kind::Delivery => remember_delivery(&mut batch, key, self.seq, now),
                Kind::Other => batch.insert(keys::inbox_delivery(key), self.seq.to_be_bytes()),
                Kind::Upload(upload) => {
                    batch.insert(keys::inbox_delivery(key), self.seq.to_be_bytes());
                    batch.insert(keys::manifest_committed(upload), self.seq.to_be_bytes());
                }
            }
            in_batch.insert(key.to_string());
            results.push((*end, Enqueued::Stored(self.seq)));
        }
        Store::set_counter(&mut batch, counter::RECEIVED, self.seq);
        Store::set_counter(&mut batch, counter::DUPLICATES, self.duplicates);
        Store::set_counter(&mut batch, counter::INBOX_MOVED, self.reader.pos());
        Ok((batch, results))
    }
}

/// What a move is asked to do: the frames up to `upto`, and the
/// duplicates the writer answered since the last move, to count.
#[derive(Clone, Copy)]
struct Group {
    upto: u64,
    answered_duplicates: u64,
}

/// What one move did, and the answers it owes: sent after `on_stored`
/// told the App how far the inbox reaches, so that whoever is answered
/// (the backfill's harvest, then `wait_caught_up`) sees its item counted.
struct Moved {
    seq: u64,
    stored: u64,
    duplicates: u64,
    changed: bool,
    answers: Vec<(
        oneshot::Sender<std::result::Result<Enqueued, InboxError>>,
        Enqueued,
    )>,
}

/// Backoff after a failed move, from 100 ms to 5 s.
fn backoff(failures: u32) -> Duration {
    Duration::from_millis((100u64 << failures.min(6)).min(5_000))
}

/// Sleep `wait` after a failed move, or less: the store reopened after an
/// I/O error (`heal`: what failed is likely to pass now, and what was
/// acknowledged meanwhile should be filed and counted at once, not after
/// the rest of a backoff of up to 5 s), or the writer closed.
fn wait_for_retry(store: &Store, shared: &Shared, wait: Duration) {
    const SLICE: Duration = Duration::from_millis(20);
    let generation = store.generation();
    let until = std::time::Instant::now() + wait;
    while std::time::Instant::now() < until {
        if store.generation() != generation
            || shared.closed.load(Ordering::Acquire)
            || shared.crash.killed()
        {
            return;
        }
        std::thread::sleep(SLICE.min(until.saturating_duration_since(std::time::Instant::now())));
    }
}

fn move_loop(
    store: Store,
    mut mover: Mover,
    shared: Arc<Shared>,
    waiters_rx: std::sync::mpsc::Receiver<Waiter>,
    on_stored: OnStored,
) {
    let _gone = MoverGone(shared.clone());
    let dir = store.path.join(crate::inbox_log::DIR);
    let mut waiters = BTreeMap::new();
    let mut failures = 0;
    let mut gathered = false;
    loop {
        if shared.crash.killed() {
            return;
        }
        let upto = shared.written.load(Ordering::Acquire);
        waiters.extend(waiters_rx.try_iter().map(|w| (w.0, w)));
        let answered = shared.answered_duplicates.swap(0, Ordering::Relaxed);
        if mover.reader.pos() >= upto && answered == 0 {
            if shared.closed.load(Ordering::Acquire) {
                return;
            }
            shared.wait(IDLE_WAIT);
            continue;
        }
        let unmoved = upto.saturating_sub(mover.reader.pos());
        if !gathered
            && waiters.is_empty()
            && unmoved < GATHER_BYTES
            && !shared.closed.load(Ordering::Acquire)
        {
            gathered = true;
            shared
                .answered_duplicates
                .fetch_add(answered, Ordering::Relaxed);
            std::thread::sleep(GATHER_WAIT);
            continue;
        }
        gathered = false;
        let group = Group {
            upto,
            answered_duplicates: answered,
        };
        match mover.move_group(&store, group, &mut waiters, &shared.crash) {
            Ok(None) => return,
            Ok(Some(moved)) => {
                failures = 0;
                if moved.changed {
                    on_stored(moved.seq, moved.stored, moved.duplicates);
                }
                for (reply, result) in moved.answers {
                    let _ = reply.send(Ok(result));
                }
                shared.moved.send_replace(mover.reader.pos());
                if shared.crash.hit(Step::Answered) {
                    return;
                }
                if let Err(e) = remove_through(&dir, mover.reader.pos()) {
                    tracing::warn!(error = %e, "removing moved inbox log segments");
                }
            }
            Err(e) => {
                shared
                    .answered_duplicates
                    .fetch_add(answered, Ordering::Relaxed);
                tracing::error!(error = %e, "moving the inbox log into the journal");
                failures += 1;
                wait_for_retry(&store, &shared, backoff(failures));
            }
        }
    }
}

#[cfg(test)]
mod tests;
