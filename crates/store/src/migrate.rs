//! `safe-outcomes migrate`: copy a sled store's key space into a
//! PostgreSQL store. The key space is the same on both engines, so this is
//! a copy in key order: idempotent (upserts), resumable (the last key copied
//! is recorded in the target after every batch, and a second run goes on
//! from there), then the inbox sequence and upload ids are moved past the
//! highest numbers the sled store used. Counters (`m/` keys) become rows of
//! `counters`; the `attribution` tree is copied whole (it is small).
//! While it copies, the target is marked `v/migrating` (`open_checks`):
//! `serve` refuses a database whose migration has not finished, and the
//! mark goes once the copy is whole.

use super::{engine::Batch, keys, open_checks, Result, Store, StoreError};

/// Keys copied per batch (and per progress record).
const COPY_BATCH: usize = 1000;

/// What a migration moved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Migrated {
    /// Keys of the main key space copied by this run.
    pub copied: u64,
    /// Keys copied by earlier runs (resumed after them).
    pub resumed_after: u64,
    pub counters: u64,
    pub attribution: u64,
    /// Where the inbox sequence now stands.
    pub inbox_seq: u64,
}

/// Copy `source` (a sled store) into `target` (a PostgreSQL store), from
/// where an earlier run on the same `source_name` stopped.
pub fn migrate(source: &Store, target: &Store, source_name: &str) -> Result<Migrated> {
    let Some(pg) = target.db().pg() else {
        return Err(StoreError::Database(
            "migrate: the target must be PostgreSQL".into(),
        ));
    };
    if source.is_pg() {
        return Err(StoreError::Database(
            "migrate: the source must be a sled store".into(),
        ));
    }
    // Until the copy is whole, `serve` refuses the database (`open_checks`).
    target
        .db()
        .insert(open_checks::MIGRATING_KEY, source_name.as_bytes())?;
    let mut done = Migrated::default();
    let progress = pg.migrate_progress(source_name)?;
    let (mut total, iter) = match &progress {
        Some((last, copied)) => {
            done.resumed_after = *copied;
            let start = std::ops::Bound::Excluded(last.clone());
            (
                *copied,
                source
                    .db()
                    .range::<Vec<u8>, _>((start, std::ops::Bound::Unbounded)),
            )
        }
        None => (0, source.db().iter()),
    };
    let mut batch = Batch::default();
    let mut last = Vec::new();
    let mut max_seq = 0;
    // How far sled's worker went: on PostgreSQL processed items are gone.
    let sled_only = keys::counter(super::counter::INBOX_DONE);
    for item in iter {
        let (k, v) = item?;
        if *k == *sled_only {
            continue;
        }
        if k.starts_with(keys::COUNTER) {
            done.counters += 1;
        }
        max_seq = max_seq.max(keys::inbox_seq(&k).unwrap_or(0));
        batch.insert(&k, &v);
        last = k.to_vec();
        done.copied += 1;
        if batch.len() >= COPY_BATCH {
            total += batch.len() as u64;
            target.db().apply_batch(std::mem::take(&mut batch))?;
            pg.save_migrate_progress(source_name, &last, total)?;
        }
    }
    if !batch.is_empty() {
        total += batch.len() as u64;
        target.db().apply_batch(batch)?;
        pg.save_migrate_progress(source_name, &last, total)?;
    }
    let (from, to) = (
        source.db().open_tree("attribution")?,
        target.db().open_tree("attribution")?,
    );
    if let (super::engine::Tree::Sled(tree), _) = (&from, &to) {
        for item in tree.iter() {
            let (k, v) = item?;
            to.insert(&k, &v)?;
            done.attribution += 1;
        }
    }
    // Numbers go on past the sled store's: its RECEIVED counter was its
    // last inbox number.
    let received = source.counter(super::counter::RECEIVED);
    pg.raise_inbox_seq(received.max(max_seq))?;
    pg.raise_upload_ids(source.db().generate_id()?)?;
    done.inbox_seq = pg.last_inbox_seq()?;
    target.db().remove(open_checks::MIGRATING_KEY)?;
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{counter, pg, StoredOutput};

    fn output(id: &str) -> StoredOutput {
        crate::test_output(id, "w")
    }

    #[test]
    fn a_sled_store_moves_to_postgres_whole_and_a_second_run_resumes() {
        let Some(admin) = pg::test_admin_or_skip() else {
            return;
        };
        let (from, to) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let source = Store::open_sled(from.path()).unwrap();
        let mut unit = source.begin();
        for i in 0..1500 {
            unit.put_output(&output(&format!("o/r:{i}:0"))).unwrap();
        }
        // Some judged: they become rows of the `outcomes` relation too.
        for i in 0..30 {
            let id = format!("o/r:{i}:0");
            unit.put_output(&crate::test_judged_output(&id, "ci-coach", "rejected"))
                .unwrap();
        }
        unit.set_counter(counter::PROCESSED, 1230);
        unit.commit().unwrap();
        // The inbox's keys (the journal's on sled), as the inbox writer
        // leaves them.
        source
            .put_raw_for_tests(&keys::counter(counter::RECEIVED), &1234u64.to_be_bytes())
            .unwrap();
        source
            .put_raw_for_tests(&keys::inbox_queue(1240), b"{}")
            .unwrap();
        let target = Store::on_pg(pg::test_database(&admin, to.path()).unwrap(), to.path());

        let first = migrate(&source, &target, "src").unwrap();
        assert_eq!(first.copied as usize, source.db().len());
        assert!(
            target
                .db()
                .get(open_checks::MIGRATING_KEY)
                .unwrap()
                .is_none(),
            "finished: the mark is gone"
        );
        open_checks::at_open(&target).unwrap();
        // Received, processed, and the marker that the rollups are built.
        assert_eq!(first.counters, 3);
        assert_eq!(first.inbox_seq, 1240, "past the highest inbox number");
        assert_eq!(target.output_count(), 1500);
        assert_eq!(
            target.output("o/r:700:0").unwrap(),
            Some(output("o/r:700:0"))
        );
        let rows = target.db().pg().unwrap().outcome_rows().unwrap();
        assert_eq!(rows.len(), 30, "one row per judged output");
        let judged = source.output("o/r:7:0").unwrap().unwrap().outcome.unwrap();
        let row = rows.iter().find(|(id, _)| id == "o/r:7:0").unwrap();
        assert_eq!(row.1, serde_json::to_value(&judged).unwrap());
        assert_eq!(target.counter(counter::RECEIVED), 1234);
        assert_eq!(target.backlog(), 4);
        assert_eq!(target.oldest_queued_seq(), Some(1240));

        // Resumable: a new key after the last copied one is all a rerun copies.
        source.put_raw_for_tests(b"z/new", b"1").unwrap();
        let second = migrate(&source, &target, "src").unwrap();
        assert_eq!((second.copied, second.resumed_after), (1, first.copied));
        assert_eq!(&*target.db().get(b"z/new").unwrap().unwrap(), b"1");
        // Idempotent: from scratch (another name) it copies again, same result.
        let again = migrate(&source, &target, "other").unwrap();
        assert_eq!(again.copied, first.copied + 1);
        assert_eq!(target.output_count(), 1500);
        assert_eq!(target.counter(counter::RECEIVED), 1234);
    }
}
