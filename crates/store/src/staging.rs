//! Staged manifest chunks: how a manifest of any size reaches the worker
//! without anyone holding all of its records.
//!
//! The ingest handler parses a manifest line by line and writes the records in
//! chunks under `i/s/{upload}{chunk}` as it goes. Only when the whole body is
//! read and accepted does it enqueue one small `InboxItem::ManifestChunks`
//! naming the upload, once the chunks are durable (`make_durable`); the inbox
//! writer stores that item together with the upload's `i/c/{upload}` marker.
//! The worker then applies the chunks one by one, each in its own commit that
//! also removes the chunk. A rejected or abandoned upload is discarded.
//!
//! While its body is read, an upload holds a lease (`upload:{id}`, renewed
//! with every chunk). Chunks of an upload with no commit marker whose lease
//! ran out — the process or replica reading it was killed — are swept by
//! whichever process looks next (`sweep`, run by every worker now and then),
//! while the other replicas go on.

use std::time::Duration;

use super::{decode, encode, keys, Result, Store};
use safe_outcomes_model::ExecutionRecord;

/// How long an upload's lease lasts without a new chunk: a body that stalls
/// longer is abandoned (the server's body timeout is far shorter).
pub(crate) const UPLOAD_LEASE: Duration = Duration::from_secs(120);

/// The name of an upload's lease.
fn lease(upload: u64) -> String {
    format!("upload:{upload}")
}

/// A new upload id, unique across restarts and replicas, with its lease.
pub fn new_upload(store: &Store) -> Result<u64> {
    new_upload_for(store, UPLOAD_LEASE)
}

/// `new_upload` with a lease of `ttl` (tests: one that runs out soon).
pub(crate) fn new_upload_for(store: &Store, ttl: Duration) -> Result<u64> {
    let upload = store.db().generate_id()?;
    store.take_lease(&lease(upload), ttl)?;
    Ok(upload)
}

/// Store one chunk of an upload's records (not flushed: `make_durable`
/// does, once, before the upload is enqueued), renewing the upload's lease.
pub fn put_chunk(
    store: &Store,
    upload: u64,
    chunk: u32,
    records: &[ExecutionRecord],
) -> Result<()> {
    store.take_lease(&lease(upload), UPLOAD_LEASE)?;
    store
        .db()
        .insert(keys::staged_chunk(upload, chunk), encode(&records))?;
    Ok(())
}

/// Make the chunks staged so far as durable as an acknowledged inbox item
/// (`Store::flush_durable`; PostgreSQL's commits already are): on sled the
/// item's commit is the journal's, and does not flush sled.
pub fn make_durable(store: &Store) -> Result<()> {
    store.flush_durable()
}

/// One chunk's records; `None` once the worker has applied it.
pub fn chunk(store: &Store, upload: u64, chunk: u32) -> Result<Option<Vec<ExecutionRecord>>> {
    let key = keys::staged_chunk(upload, chunk);
    match store.db().get(&key)? {
        Some(bytes) => Ok(Some(decode(&key, &bytes)?)),
        None => Ok(None),
    }
}

/// Remove every chunk of an upload that will not be committed.
pub fn discard(store: &Store, upload: u64) -> Result<()> {
    let db = store.db();
    for key in db.scan_prefix(keys::staged_upload(upload)).keys() {
        db.remove(key?)?;
    }
    store.release_lease(&lease(upload))
}

/// Remove the chunks of uploads that were never committed and whose lease
/// ran out (the process reading the body died, or gave up), and the
/// leases that expired. Any process may run it at any time: a live upload
/// holds its lease. Returns the number of chunks removed.
pub fn sweep(store: &Store) -> Result<usize> {
    let db = store.db();
    let mut removed = 0;
    // (upload, its chunks may go): decided once per upload.
    let mut decided: Option<(u64, bool)> = None;
    for key in db.scan_prefix(keys::MANIFEST_STAGED).keys() {
        let key = key?;
        let upload = key[keys::MANIFEST_STAGED.len()..]
            .get(..8)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_be_bytes);
        let orphan = match (upload, decided) {
            (None, _) => true,
            (Some(u), Some((d, orphan))) if u == d => orphan,
            (Some(u), _) => {
                let orphan = !db.contains_key(keys::manifest_committed(u))?
                    && store.lease_abandoned(&lease(u), UPLOAD_LEASE)?;
                decided = Some((u, orphan));
                orphan
            }
        };
        if orphan {
            db.remove(key)?;
            removed += 1;
        }
    }
    store.drop_expired_leases()?;
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(i: u64) -> ExecutionRecord {
        ExecutionRecord {
            id: format!("o/r:1:{i}"),
            output_type: "create_issue".into(),
            repo: "o/r".into(),
            run_id: Some(1),
            index: Some(i),
            executed_at: chrono::Utc::now(),
            ..ExecutionRecord::default()
        }
    }

    #[test]
    fn sweep_keeps_committed_and_leased_uploads_and_removes_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db")).unwrap();
        let short = Duration::from_secs(2);
        let (kept, dropped) = (
            new_upload_for(&store, short).unwrap(),
            new_upload_for(&store, short).unwrap(),
        );
        let streaming = new_upload(&store).unwrap();
        assert_ne!(kept, dropped);
        for upload in [kept, dropped, streaming] {
            put_chunk(&store, upload, 0, &[record(1)]).unwrap();
            put_chunk(&store, upload, 1, &[record(2), record(3)]).unwrap();
        }
        // put_chunk renewed the leases for the usual time: run them short.
        for upload in [kept, dropped] {
            store.take_lease(&lease(upload), short).unwrap();
        }
        store
            .db()
            .insert(keys::manifest_committed(kept), [])
            .unwrap();
        assert_eq!(sweep(&store).unwrap(), 0, "every lease is live");
        std::thread::sleep(Duration::from_millis(2500));
        assert_eq!(sweep(&store).unwrap(), 2, "the expired, uncommitted upload");
        assert_eq!(chunk(&store, kept, 1).unwrap().unwrap().len(), 2);
        assert!(chunk(&store, dropped, 0).unwrap().is_none());
        assert!(
            chunk(&store, streaming, 1).unwrap().is_some(),
            "still leased"
        );
        discard(&store, kept).unwrap();
        assert!(chunk(&store, kept, 0).unwrap().is_none());
    }

    /// On PostgreSQL the chunks of an upload a killed replica was reading
    /// are swept by another replica once none of the killed one's
    /// connections is left — not two minutes later, when its lease would
    /// run out — while an upload a live replica streams, and one whose
    /// holder went away within `ORPHAN_GRACE`, are left alone.
    #[test]
    fn a_killed_replicas_upload_is_swept_by_another_once_its_connections_are_gone() {
        let Some(admin) = crate::pg::test_admin_or_skip() else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let open = || {
            let pg = crate::pg::test_database(&admin, dir.path()).unwrap();
            Store::on_pg(pg, dir.path())
        };
        let (killed, streaming, sweeping) = (open(), open(), open());
        let cut_off = new_upload(&killed).unwrap();
        put_chunk(&killed, cut_off, 0, &[record(1)]).unwrap();
        // Its lease taken 20 s ago: past the grace, 100 s still to run.
        let pg = sweeping.db().pg().unwrap();
        pg.execute_for_tests(&format!(
            "UPDATE leases SET expires_at = now() + interval '100 seconds' \
             WHERE name = 'upload:{cut_off}'"
        ))
        .unwrap();
        let live = new_upload(&streaming).unwrap();
        put_chunk(&streaming, live, 0, &[record(2)]).unwrap();
        assert_eq!(sweep(&sweeping).unwrap(), 0, "its holder is connected");
        drop(killed);
        // A replica killed just after it took its lease: within the grace.
        let just_now = open();
        let recent = new_upload(&just_now).unwrap();
        put_chunk(&just_now, recent, 0, &[record(3)]).unwrap();
        drop(just_now);
        let started = std::time::Instant::now();
        let mut swept = 0;
        while swept == 0 && started.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(50));
            swept = sweep(&sweeping).unwrap();
        }
        assert_eq!(
            swept, 1,
            "the cut-off upload is swept once its holder is gone"
        );
        assert!(chunk(&sweeping, cut_off, 0).unwrap().is_none());
        assert!(
            chunk(&sweeping, live, 0).unwrap().is_some(),
            "the live one stays"
        );
        assert!(
            chunk(&sweeping, recent, 0).unwrap().is_some(),
            "within the grace"
        );
    }
}
