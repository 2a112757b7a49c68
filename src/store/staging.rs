//! Staged manifest chunks: how a manifest of any size reaches the worker
//! without anyone holding all of its records.
//!
//! The ingest handler parses a manifest line by line and writes the records in
//! chunks under `i/s/{upload}{chunk}` as it goes. Only when the whole body is
//! read and accepted does it enqueue one small `InboxItem::ManifestChunks`
//! naming the upload; the inbox writer stores that item together with the
//! upload's `i/c/{upload}` marker, in the flush that makes the chunks durable.
//! The worker then applies the chunks one by one, each in its own commit that
//! also removes the chunk. A rejected or abandoned upload is discarded; chunks
//! left by a crash before the commit have no marker and are swept at start-up.

use super::{decode, encode, keys, Result, Store};
use crate::model::ExecutionRecord;

/// A new upload id, unique across restarts (sled's persistent id generator).
pub fn new_upload(store: &Store) -> Result<u64> {
    store.db().generate_id()
}

/// Store one chunk of an upload's records (not flushed: the inbox writer's
/// flush of the commit item covers it).
pub fn put_chunk(
    store: &Store,
    upload: u64,
    chunk: u32,
    records: &[ExecutionRecord],
) -> Result<()> {
    store
        .db()
        .insert(keys::staged_chunk(upload, chunk), encode(&records))?;
    Ok(())
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
    Ok(())
}

/// Remove the chunks of uploads that were never committed (the process died
/// while reading their body). Call before the server accepts requests.
/// Returns the number of chunks removed.
///
/// On PostgreSQL another replica may be streaming an upload right now (its
/// chunks have no marker yet): the sweep runs only when no other instance
/// is connected to the database, and leaves orphans for a later start
/// otherwise (they cost room, never a record).
pub fn sweep(store: &Store) -> Result<usize> {
    let db = store.db();
    if let Some(pg) = db.pg() {
        if pg.others_connected()? {
            return Ok(0);
        }
    }
    let mut removed = 0;
    for key in db.scan_prefix(keys::MANIFEST_STAGED).keys() {
        let key = key?;
        let upload = key[keys::MANIFEST_STAGED.len()..]
            .get(..8)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_be_bytes);
        let committed = match upload {
            Some(upload) => db.contains_key(keys::manifest_committed(upload))?,
            None => false,
        };
        if !committed {
            db.remove(key)?;
            removed += 1;
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(i: u64) -> ExecutionRecord {
        let line = format!(r#"{{"type":"create_issue","repo":"o/r","number":{i}}}"#);
        let defaults = crate::ingest::manifest::ManifestDefaults::default();
        crate::ingest::manifest::parse_manifest(&line, &defaults, chrono::Utc::now())
            .records
            .remove(0)
    }

    #[test]
    fn sweep_keeps_committed_uploads_and_removes_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db")).unwrap();
        let (kept, dropped) = (new_upload(&store).unwrap(), new_upload(&store).unwrap());
        assert_ne!(kept, dropped);
        for upload in [kept, dropped] {
            put_chunk(&store, upload, 0, &[record(1)]).unwrap();
            put_chunk(&store, upload, 1, &[record(2), record(3)]).unwrap();
        }
        store
            .db()
            .insert(keys::manifest_committed(kept), [])
            .unwrap();
        assert_eq!(sweep(&store).unwrap(), 2);
        assert_eq!(chunk(&store, kept, 1).unwrap().unwrap().len(), 2);
        assert!(chunk(&store, dropped, 0).unwrap().is_none());
        discard(&store, kept).unwrap();
        assert!(chunk(&store, kept, 0).unwrap().is_none());
    }

    /// On PostgreSQL a replica's start-up sweep leaves alone the chunks of
    /// an upload another replica may be streaming.
    #[test]
    fn the_sweep_waits_for_a_start_with_no_other_replica_on_postgres() {
        let admin = match crate::store::pg::test_admin_url() {
            Ok(url) => url,
            Err(e) if std::env::var("CI").is_ok() => panic!("no PostgreSQL in CI: {e}"),
            Err(e) => return eprintln!("SKIPPED: {e}"),
        };
        let dir = tempfile::tempdir().unwrap();
        let open = || {
            let pg = crate::store::pg::test_database(&admin, dir.path()).unwrap();
            Store::on_pg(pg, dir.path())
        };
        let (starting, streaming) = (open(), open());
        let upload = new_upload(&streaming).unwrap();
        put_chunk(&streaming, upload, 0, &[record(1)]).unwrap();
        assert_eq!(sweep(&starting).unwrap(), 0, "another replica is connected");
        assert!(chunk(&starting, upload, 0).unwrap().is_some());
        drop(streaming);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let mut swept = 0;
        while swept == 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
            swept = sweep(&starting).unwrap();
        }
        assert_eq!(swept, 1, "alone: the orphan is swept");
    }
}
