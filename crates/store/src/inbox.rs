//! The durable inbox and its group-commit writer.
//!
//! Handlers hand an `InboxItem` to one writer thread and await its reply. The
//! writer takes everything that queued up while it was writing, writes it in
//! one commit, and only then replies: a delivery is durable before its 2xx,
//! and one write (and with `Durability::PowerLoss` one `fdatasync`) serves the
//! whole batch. On sled the inbox's keys are the journal's
//! (`engine::journal`): an ack never takes sled's lock; on PostgreSQL the
//! group is one transaction.

use std::collections::HashSet;
use std::sync::Arc;
use std::thread::JoinHandle;

use chrono::{DateTime, Utc};
use tokio::sync::{mpsc, oneshot};

pub use super::inbox_item::InboxItem;

mod logged;
use super::{counter, encode, keys, Store};
pub(crate) use logged::drain_at_open;

/// Most items written per flush.
const MAX_BATCH: usize = 2048;

/// How long a webhook delivery's id is remembered to refuse a redelivery
/// of it: GitHub lets a delivery be redelivered for 3 days; 8 leaves room.
pub(crate) const DEFAULT_DEDUP_WINDOW: chrono::Duration = chrono::Duration::days(8);

/// Expired dedupe keys removed per group commit, at most.
const PRUNE_BATCH: usize = 1024;

/// How often (by the writer's clock) expired dedupe keys are looked for.
const PRUNE_EVERY: chrono::Duration = chrono::Duration::seconds(60);

/// The clock the writer dates dedupe keys with.
pub type Now = Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>;

/// How long delivery ids are remembered, and by which clock.
#[derive(Clone)]
pub struct Dedup {
    pub window: chrono::Duration,
    pub now: Now,
}

impl Default for Dedup {
    /// The window `store::configure` set (`DEDUP_WINDOW_HOURS`, `serve
    /// --dedup-window-hours`), else 8 days; system time.
    fn default() -> Self {
        let window = super::settings()
            .dedup_window_hours
            .filter(|h| *h > 0)
            .map_or(DEFAULT_DEDUP_WINDOW, chrono::Duration::hours);
        Dedup {
            window,
            now: Arc::new(Utc::now),
        }
    }
}

impl InboxItem {
    fn dedupe_key(&self) -> String {
        match self {
            InboxItem::Delivery { delivery_id, .. } => delivery_id.clone(),
            InboxItem::Manifest { key, .. } | InboxItem::ManifestChunks { key, .. } => {
                format!("manifest:{key}")
            }
            // The same findings at the same time are one item; anything
            // else found is a new one, even within the same instant.
            InboxItem::Reconciled {
                output_id,
                fetched_at,
                observations,
                failure,
            } => {
                use sha2::{Digest, Sha256};
                let digest = Sha256::digest(encode(&(observations, failure)));
                format!(
                    "reconcile:{output_id}:{}:{}",
                    fetched_at.timestamp_nanos_opt().unwrap_or_default(),
                    hex::encode(&digest[..8])
                )
            }
        }
    }
}

/// What happened to an enqueued item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enqueued {
    /// Stored under this inbox sequence number.
    Stored(u64),
    /// Seen before (same `X-GitHub-Delivery`): nothing stored.
    Duplicate,
    /// A webhook delivery on a sled store, written to the inbox's log
    /// (`inbox_log`): the mover files it in the journal under the next
    /// sequence, or drops it there if it repeats an id logged meanwhile.
    Logged,
}

#[derive(Debug, thiserror::Error)]
pub enum InboxError {
    #[error("inbox is shut down")]
    Closed,
    #[error("inbox write failed: {0}")]
    Write(String),
}

struct Request {
    item: InboxItem,
    reply: oneshot::Sender<Result<Enqueued, InboxError>>,
}

/// Handle to the writer thread; cheap to clone.
#[derive(Clone)]
pub struct InboxWriter {
    tx: mpsc::Sender<Request>,
    /// On sled: the log's positions, written and moved.
    log: Option<Arc<logged::Shared>>,
}

/// Called after each flushed batch with the highest stored sequence, the
/// number of items the batch stored, and the duplicates seen so far.
pub(crate) type OnStored = Arc<dyn Fn(u64, u64, u64) + Send + Sync>;

impl InboxWriter {
    pub fn start(store: Store, on_stored: OnStored) -> (InboxWriter, JoinHandle<()>) {
        Self::start_with(store, on_stored, Dedup::default())
    }

    /// `start`, with the dedupe window and clock given.
    pub fn start_with(
        store: Store,
        on_stored: OnStored,
        dedup: Dedup,
    ) -> (InboxWriter, JoinHandle<()>) {
        let (tx, rx) = mpsc::channel(16 * 1024);
        if store.is_pg() {
            let handle = std::thread::Builder::new()
                .name("inbox-writer".into())
                .spawn(move || pg_write_loop(store, rx, on_stored, dedup))
                .expect("spawn inbox writer");
            return (InboxWriter { tx, log: None }, handle);
        }
        let (log, handle) = logged::start(store, rx, on_stored, dedup, Default::default());
        (InboxWriter { tx, log }, handle)
    }

    /// `start` on sled, its writer or mover stopping at the `n`th time it
    /// reaches `step`, as a kill there would (tests).
    #[cfg(test)]
    pub(crate) fn start_stopping(
        store: Store,
        step: logged::Step,
        n: usize,
    ) -> (InboxWriter, JoinHandle<()>) {
        let (tx, rx) = mpsc::channel(16 * 1024);
        let crash = logged::Crash::default();
        *crash.at.lock().expect("crash lock") = Some((step, n));
        let on_stored: OnStored = Arc::new(|_, _, _| {});
        let (log, handle) = logged::start(store, rx, on_stored, Dedup::default(), crash);
        (InboxWriter { tx, log }, handle)
    }

    /// Resolves once every item answered so far is in the inbox's journal
    /// (on sled the mover files logged deliveries after their answer;
    /// on PostgreSQL at once).
    pub async fn settled(&self) {
        if let Some(log) = &self.log {
            log.settled().await;
        }
    }

    /// True once the inbox's mover stopped while the store is open (on
    /// sled; a panic, say): acknowledgements are refused from then on and
    /// only a restart starts it again, so readiness says so.
    pub fn mover_stopped(&self) -> bool {
        self.log.as_ref().is_some_and(|log| log.mover_stopped())
    }

    /// Store an item durably; returns once it is flushed to disk.
    pub async fn enqueue(&self, item: InboxItem) -> Result<Enqueued, InboxError> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Request { item, reply })
            .await
            .map_err(|_| InboxError::Closed)?;
        rx.await.map_err(|_| InboxError::Closed)?
    }
}

/// Whether an item with dedupe `key` was stored before (or earlier in this
/// batch). A failed read is an error, never "not seen": storing a possible
/// duplicate would process it twice.
fn seen_before(
    in_batch: &HashSet<String>,
    key: &str,
    stored: impl Fn(Vec<u8>) -> super::Result<bool>,
) -> Result<bool, InboxError> {
    if in_batch.contains(key) {
        return Ok(true);
    }
    stored(keys::inbox_delivery(key))
        .map_err(|e| InboxError::Write(format!("reading the dedupe index: {e}")))
}

/// Whether dedupe key `key` is remembered at `now`: stored, and, for a
/// webhook delivery's (which holds the time it was stored), stored within
/// the window — an expired key not yet pruned is already forgotten, so the
/// writer and the mover, which prune at different times, agree.
fn remembered(store: &Store, dedup: &Dedup, now: DateTime<Utc>, key: &str) -> super::Result<bool> {
    let Some(value) = store.db().get(keys::inbox_delivery(key))? else {
        return Ok(false);
    };
    let stored_ms = value
        .get(8..16)
        .and_then(|b| <[u8; 8]>::try_from(b).ok())
        .map(i64::from_be_bytes);
    let oldest = (now - dedup.window).timestamp_millis();
    Ok(stored_ms.is_none_or(|ms| ms >= oldest))
}

/// Remember a webhook delivery id stored under `seq` at `at`: its dedupe
/// key holds the sequence and the time, and an expiry entry dated `at`
/// lets the writer drop it one window later (`prune_expired`).
fn remember_delivery(batch: &mut super::Batch, id: &str, seq: u64, at: DateTime<Utc>) {
    let value = [seq.to_be_bytes(), at.timestamp_millis().to_be_bytes()].concat();
    batch.insert(keys::inbox_delivery(id), value);
    batch.insert(keys::dedup_expiry(at, id), []);
}

/// Bring the dedupe keys of earlier versions up to date:
/// - a key stored before keys expired (an 8-byte value) is dated now, so it
///   expires one window from now;
/// - a GitHub delivery id keyed as its text moves to its time-ordered key
///   (`keys::inbox_delivery`), with its value, so a redelivery of it is still
///   found (its expiry entry names the id, and prunes the new key).
///
/// Only the keys kept as text are read: the time-ordered ones sort before
/// them (`keys::TIME_ORDERED`), so a start does not read the window's
/// deliveries again, and the keys this moves are not met twice. Committed
/// every `UPGRADE_BATCH` keys, so a window of millions of keys never sits in
/// one batch. Returns how many keys changed.
fn upgrade_dedup_keys(store: &Store, now: DateTime<Utc>) -> super::Result<usize> {
    let text_keys = [keys::INBOX_DELIVERY, &[keys::TIME_ORDERED + 1]].concat();
    let end = super::engine::prefix_end(keys::INBOX_DELIVERY).expect("prefix end");
    let mut batch = super::Batch::default();
    let mut changed = 0;
    for item in store.db().range(text_keys..end) {
        let (k, v) = item?;
        let Some(id) = keys::suffix(&k, keys::INBOX_DELIVERY) else {
            continue;
        };
        let key = keys::inbox_delivery(&id);
        let delivery = !id.starts_with("manifest") && !id.starts_with("reconcile:");
        let undated = <[u8; 8]>::try_from(v.as_ref())
            .ok()
            .filter(|_| delivery)
            .map(u64::from_be_bytes);
        if undated.is_none() && key == k.as_ref() {
            continue;
        }
        if key != k.as_ref() {
            batch.remove(&k);
        }
        match undated {
            Some(seq) => remember_delivery(&mut batch, &id, seq, now),
            None => batch.insert(key, &v),
        }
        changed += 1;
        if changed % UPGRADE_BATCH == 0 {
            store.db().apply_batch(std::mem::take(&mut batch))?;
        }
    }
    if !batch.ops.is_empty() {
        store.db().apply_batch(batch)?;
    }
    Ok(changed)
}

/// `upgrade_dedup_keys` when the writer starts, before its first group; a
/// failure is logged (the keys are looked for again at the next start).
fn upgrade_at_start(store: &Store, dedup: &Dedup) {
    if let Err(e) = upgrade_dedup_keys(store, (dedup.now)()) {
        tracing::error!(error = %e, "upgrading the dedupe keys of earlier versions");
    }
}

/// Dedupe keys an upgrade commits at once (`upgrade_dedup_keys`).
const UPGRADE_BATCH: usize = 10_000;

/// Put into `batch` the removal of up to `PRUNE_BATCH` dedupe keys stored
/// before `now - window`. Returns how many, and the ids.
fn prune_expired(
    store: &Store,
    dedup: &Dedup,
    now: DateTime<Utc>,
    batch: &mut super::Batch,
) -> super::Result<HashSet<String>> {
    let end = keys::dedup_expiry(now - dedup.window, "");
    let mut pruned = HashSet::new();
    for item in store.db().range(keys::DEDUP_EXPIRY.to_vec()..end) {
        let (k, _) = item?;
        if let Some((_, id)) = keys::parse_dedup_expiry(&k) {
            batch.remove(keys::inbox_delivery(&id));
            pruned.insert(id);
        }
        batch.remove(k);
        if pruned.len() >= PRUNE_BATCH {
            break;
        }
    }
    Ok(pruned)
}

/// A group at least this large means acks arrive faster than the writer
/// commits them: the next group waits `COMMIT_DELAY` to gather more.
const BUSY_GROUP: usize = 4;

/// How long a busy writer waits before taking its next group, as
/// PostgreSQL's `commit_delay` does while `commit_siblings` transactions
/// are open. A commit's own cost — copying the B-tree's path to the keys it
/// changes, checksums, the header — is paid once a group, whatever its size:
/// at saturation (`bench ingest`, 64 in flight) groups held about 4 items
/// without the wait and about 11 with it, and the journal's writer went from
/// 21% to 15% of the process's CPU (BENCHMARKS.md, 2026-11-26, night).
/// An ack waits at most this much more, and only while the writer is busy:
/// at 1,000 deliveries/s the acks' p99 stayed 2–3 ms, beside a draining
/// backlog too. On PostgreSQL a group is one transaction: the same holds.
const COMMIT_DELAY: std::time::Duration = std::time::Duration::from_millis(1);

/// The next group of requests to commit together: the first to arrive and
/// whatever else is waiting (after `COMMIT_DELAY` when `busy`), up to
/// `MAX_BATCH`; None once closed.
fn next_group(rx: &mut mpsc::Receiver<Request>, busy: bool) -> Option<Vec<Request>> {
    let mut requests = vec![rx.blocking_recv()?];
    if busy {
        std::thread::sleep(COMMIT_DELAY);
    }
    while requests.len() < MAX_BATCH {
        match rx.try_recv() {
            Ok(r) => requests.push(r),
            Err(_) => break,
        }
    }
    Some(requests)
}

/// Put the removal of expired dedupe keys into `batch` when a prune is due
/// (again at once while a full batch of them was found); returns what it
/// removes. A failed prune is logged and tried again later.
fn prune_when_due(
    store: &Store,
    dedup: &Dedup,
    now: DateTime<Utc>,
    next_prune: &mut DateTime<Utc>,
    batch: &mut super::Batch,
) -> HashSet<String> {
    if now < *next_prune {
        return HashSet::new();
    }
    match prune_expired(store, dedup, now, batch) {
        Ok(ids) => {
            *next_prune = if ids.len() >= PRUNE_BATCH {
                now
            } else {
                now + PRUNE_EVERY
            };
            ids
        }
        Err(e) => {
            tracing::warn!(error = %e, "pruning expired dedupe keys");
            HashSet::new()
        }
    }
}

/// The PostgreSQL writer: the same group commit as `write_loop`, in one
/// transaction (`pg::Pg::enqueue_group`): the dedupe keys inserted with
/// `ON CONFLICT DO NOTHING` (so two replicas given one delivery id store it
/// once), numbers from the inbox sequence, counters added to; the replies
/// go out after COMMIT.
fn pg_write_loop(store: Store, mut rx: mpsc::Receiver<Request>, on_stored: OnStored, dedup: Dedup) {
    let pg = store.db().pg().expect("a PostgreSQL store").clone();
    let mut seq = store.last_inbox_seq().unwrap_or(0);
    let mut duplicates = store.counter(counter::DUPLICATES);
    upgrade_at_start(&store, &dedup);
    let mut next_prune = (dedup.now)();
    let mut busy = false;
    while let Some(requests) = next_group(&mut rx, busy) {
        busy = requests.len() >= BUSY_GROUP;
        let now = (dedup.now)();
        let mut prune = super::Batch::default();
        prune_when_due(&store, &dedup, now, &mut next_prune, &mut prune);
        let prune: Vec<Vec<u8>> = prune
            .ops
            .into_iter()
            .filter_map(|op| match op {
                super::engine::Op::Remove(k) => Some(k),
                _ => None,
            })
            .collect();
        // Repeats inside the group are duplicates of their first.
        let mut in_batch = HashSet::new();
        let mut entries = Vec::new();
        let mut slots = Vec::with_capacity(requests.len());
        for req in &requests {
            let key = req.item.dedupe_key();
            if !in_batch.insert(key.clone()) {
                slots.push(None);
                continue;
            }
            let delivery = matches!(req.item, InboxItem::Delivery { .. });
            slots.push(Some(entries.len()));
            entries.push(super::pg::GroupEntry {
                dedupe_key: keys::inbox_delivery(&key),
                item: super::codec::encode_item(&req.item),
                expiry: delivery.then(|| (keys::dedup_expiry(now, &key), now.timestamp_millis())),
                marker: match &req.item {
                    InboxItem::ManifestChunks { upload, .. } => {
                        Some(keys::manifest_committed(*upload))
                    }
                    _ => None,
                },
            });
        }
        match pg.enqueue_group(prune, entries) {
            Ok(numbers) => {
                let (start_seq, start_dups) = (seq, duplicates);
                let mut stored = 0;
                let results: Vec<Enqueued> = slots
                    .iter()
                    .map(|slot| match slot.and_then(|i| numbers[i]) {
                        Some(n) => {
                            seq = seq.max(n);
                            stored += 1;
                            Enqueued::Stored(n)
                        }
                        None => {
                            duplicates += 1;
                            Enqueued::Duplicate
                        }
                    })
                    .collect();
                if stored > 0 || duplicates > start_dups {
                    on_stored(seq.max(start_seq), stored, duplicates);
                }
                for (req, result) in requests.into_iter().zip(results) {
                    let _ = req.reply.send(Ok(result));
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "inbox write failed");
                for req in requests {
                    let _ = req.reply.send(Err(InboxError::Write(e.to_string())));
                }
            }
        }
    }
}

/// Remember delivery ids as received at the times given, as the writer
/// would have (dedupe key and expiry entry), in commits of 20,000: what a
/// busy App's dedupe window holds, for `bench ingest --remembered`.
pub fn remember_deliveries(
    store: &Store,
    ids: impl IntoIterator<Item = (String, DateTime<Utc>)>,
) -> super::Result<usize> {
    let mut batch = super::Batch::default();
    let mut count = 0;
    for (id, at) in ids {
        remember_delivery(&mut batch, &id, 0, at);
        count += 1;
        if count % 20_000 == 0 {
            store.db().apply_batch(std::mem::take(&mut batch))?;
        }
    }
    store.db().apply_batch(batch)?;
    Ok(count)
}

/// Decode the inbox item stored under sequence `seq`.
pub fn decode_item(seq: u64, bytes: &[u8]) -> super::Result<InboxItem> {
    super::codec::decode_item(&super::keys::inbox_queue(seq), bytes)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Delivery `id`: an `issues.edited` with no observation (the dead
    /// letters' tests too).
    pub(crate) fn delivery(id: &str) -> InboxItem {
        InboxItem::Delivery {
            delivery_id: id.into(),
            event: "issues".into(),
            action: Some("edited".into()),
            received_at: DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
            observations: Vec::new(),
            discoveries: Vec::new(),
            installation_change: None,
        }
    }

    /// Enqueue `item` and wait until the mover has filed it.
    async fn send(writer: &InboxWriter, item: InboxItem) -> Result<Enqueued, InboxError> {
        let answer = writer.enqueue(item).await;
        writer.settled().await;
        answer
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn delivery_ids_expire_after_the_window_and_not_before() {
        let (_dir, store) = crate::temp_store();
        // Acknowledged: logged on sled (the inbox's log), stored on PostgreSQL.
        let pg = store.is_pg();
        let stored = |answer: &Result<Enqueued, InboxError>| match answer {
            Ok(Enqueued::Logged) => !pg,
            Ok(Enqueued::Stored(_)) => pg,
            _ => false,
        };
        // A dedupe key as an earlier version stored it: the sequence only.
        store
            .db()
            .insert(keys::inbox_delivery("old-guid"), 7u64.to_be_bytes())
            .unwrap();
        let t0 = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let clock = Arc::new(Mutex::new(t0));
        let now = clock.clone();
        let dedup = Dedup {
            window: chrono::Duration::hours(1),
            now: Arc::new(move || *now.lock().unwrap()),
        };
        // A GitHub delivery id keyed as its text by an earlier version,
        // dated and undated: both move to their time-ordered keys.
        let github = |n: u64| {
            safe_outcomes_model::ident::time_based_delivery_id(0x1eb_b361_5847_4f00 + n, 7, 0xabc)
        };
        let as_text = |id: &str| [keys::INBOX_DELIVERY, id.as_bytes()].concat();
        let dated = [8u64.to_be_bytes(), t0.timestamp_millis().to_be_bytes()].concat();
        store.db().insert(as_text(&github(1)), dated).unwrap();
        store
            .db()
            .insert(keys::dedup_expiry(t0, &github(1)), [])
            .unwrap();
        store
            .db()
            .insert(as_text(&github(2)), 9u64.to_be_bytes())
            .unwrap();
        let (writer, thread) =
            InboxWriter::start_with(store.clone(), Arc::new(|_, _, _| {}), dedup);
        let set = |minutes: i64| *clock.lock().unwrap() = t0 + chrono::Duration::minutes(minutes);
        assert!(stored(&send(&writer, delivery("g-1")).await));
        set(50);
        // A redelivery inside the window is still a duplicate; so is a key
        // of an earlier version (dated when this version first started).
        assert_eq!(
            send(&writer, delivery("g-1")).await.unwrap(),
            Enqueued::Duplicate
        );
        assert_eq!(
            send(&writer, delivery("old-guid")).await.unwrap(),
            Enqueued::Duplicate
        );
        for n in [1, 2] {
            assert_eq!(
                send(&writer, delivery(&github(n))).await.unwrap(),
                Enqueued::Duplicate,
                "a GitHub id stored as text by an earlier version"
            );
            assert!(store.db().get(as_text(&github(n))).unwrap().is_none());
        }
        set(59);
        assert_eq!(
            send(&writer, delivery("g-1")).await.unwrap(),
            Enqueued::Duplicate
        );
        // Past the window: pruned online by the next group commit.
        set(65);
        assert!(stored(&send(&writer, delivery("g-1")).await));
        assert!(stored(&send(&writer, delivery("old-guid")).await));
        for n in [1, 2] {
            assert!(
                stored(&send(&writer, delivery(&github(n))).await),
                "its moved key expired with the window"
            );
        }
        assert!(
            store.has_delivery("g-1").unwrap(),
            "stored again, remembered again"
        );
        set(66);
        assert_eq!(
            send(&writer, delivery("g-1")).await.unwrap(),
            Enqueued::Duplicate
        );
        let expiry_entries = store.db().scan_prefix(keys::DEDUP_EXPIRY).count();
        assert_eq!(expiry_entries, 4, "the expired entries are gone");
        drop(writer);
        thread.join().unwrap();
    }

    /// More text keys than one upgrade commit takes: every one moves, once,
    /// and is found as before.
    #[test]
    fn an_upgrade_moves_every_text_key_in_bounded_commits() {
        let (_dir, store) = crate::temp_store();
        let n = UPGRADE_BATCH as u64 * 2 + 123;
        let id = |i: u64| {
            safe_outcomes_model::ident::time_based_delivery_id((1 << 56) | (i * 977), 3, i)
        };
        let mut batch = super::super::Batch::default();
        let at = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        for i in 0..n {
            let value = [i.to_be_bytes(), at.timestamp_millis().to_be_bytes()].concat();
            batch.insert([keys::INBOX_DELIVERY, id(i).as_bytes()].concat(), value);
        }
        store.db().apply_batch(batch).unwrap();
        assert_eq!(upgrade_dedup_keys(&store, at).unwrap(), n as usize);
        assert_eq!(upgrade_dedup_keys(&store, at).unwrap(), 0, "once");
        for i in (0..n).step_by(997) {
            assert!(store.has_delivery(&id(i)).unwrap(), "{}", id(i));
        }
        let keys: Vec<_> = store.db().scan_prefix(keys::INBOX_DELIVERY).collect();
        assert_eq!(keys.len() as u64, n);
        assert!(keys
            .iter()
            .all(|item| keys::is_time_ordered_delivery(&item.as_ref().unwrap().0)));
    }

    #[test]
    fn a_failed_dedupe_read_is_an_error_not_unseen() {
        let none = HashSet::new();
        let failing = |_: Vec<u8>| -> super::super::Result<bool> {
            Err(sled::Error::Io(std::io::Error::other("disk gone")).into())
        };
        let e = seen_before(&none, "guid-1", failing).unwrap_err();
        assert!(e.to_string().contains("disk gone"), "{e}");
        assert!(seen_before(&none, "guid-1", |_| Ok(true)).unwrap());
        assert!(!seen_before(&none, "guid-1", |_| Ok(false)).unwrap());
        let batch: HashSet<String> = ["guid-1".to_string()].into();
        assert!(seen_before(&batch, "guid-1", failing).unwrap());
    }
}
