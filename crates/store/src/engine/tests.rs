//! Engine conformance: the same table of key/value and unit-of-work cases
//! run against sled and a real PostgreSQL (`SAFE_OUTCOMES_TEST_PG`, or a
//! cluster this process starts with `scripts/pg-cluster`), plus what only
//! PostgreSQL offers: claims, advisory locks, dedupe across writers.

use std::sync::Arc;

use super::*;
use crate::inbox::{Dedup, Enqueued, InboxItem, InboxWriter};
use crate::{counter, keys, ReadStore, Store};

/// A PostgreSQL store standing for `dir` (`pg::test_database`).
fn pg_store(dir: &std::path::Path) -> Option<Store> {
    let admin = pg::test_admin_or_skip()?;
    Some(Store::on_pg(pg::test_database(&admin, dir).unwrap(), dir))
}

/// One store per engine, each in a directory of its own, with the
/// engine's name (for the assertions' messages).
fn stores() -> Vec<(tempfile::TempDir, Store, &'static str)> {
    let sled_dir = tempfile::tempdir().unwrap();
    let sled = Store::open_sled(sled_dir.path()).unwrap();
    let mut out = vec![(sled_dir, sled)];
    let pg_dir = tempfile::tempdir().unwrap();
    if let Some(pg) = pg_store(pg_dir.path()) {
        out.push((pg_dir, pg));
    }
    out.into_iter()
        .map(|(dir, store)| {
            let name = store.engine_name();
            (dir, store, name)
        })
        .collect()
}

fn collect(it: Iter) -> Vec<(Vec<u8>, Vec<u8>)> {
    it.map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
        .collect()
}

#[test]
fn point_reads_writes_and_removals_agree() {
    for (_dir, store, name) in stores() {
        let db = store.db();
        assert!(db.get(b"o/a").unwrap().is_none(), "{name}");
        db.insert(b"o/a", b"1").unwrap();
        db.insert(b"o/a", b"2").unwrap();
        assert_eq!(&*db.get(b"o/a").unwrap().unwrap(), b"2", "{name}");
        assert!(db.contains_key(b"o/a").unwrap(), "{name}");
        db.remove(b"o/a").unwrap();
        assert!(!db.contains_key(b"o/a").unwrap(), "{name}");
        // Counters read as 8 big-endian bytes on both engines.
        store.set_counter_for_tests("x", 41);
        assert_eq!(store.counter("x"), 41, "{name}");
        // A named tree is apart from the main key space.
        let tree = db.open_tree("attribution").unwrap();
        tree.insert(b"l/1", b"t").unwrap();
        assert_eq!(&*tree.get(b"l/1").unwrap().unwrap(), b"t", "{name}");
        assert!(db.get(b"l/1").unwrap().is_none(), "{name}");
        let main = collect(db.iter());
        assert!(
            main.iter()
                .all(|(k, _)| !k.starts_with(b"l/") && k[0] != 0xFF),
            "{name}: the tree is not in iter()"
        );
    }
}

#[test]
fn scans_and_ranges_page_through_in_key_order() {
    for (_dir, store, name) in stores() {
        let db = store.db();
        let mut batch = Batch::default();
        // More than a page (256) under one prefix, and neighbours around it.
        for i in 0..700u32 {
            batch.insert(format!("b/t/{i:05}"), i.to_be_bytes());
        }
        batch.insert(b"b/s", b"before");
        batch.insert(b"b/u", b"after");
        db.apply_batch(batch).unwrap();
        let scanned = collect(db.scan_prefix(b"b/t/"));
        assert_eq!(scanned.len(), 700, "{name}");
        assert!(
            scanned.windows(2).all(|w| w[0].0 < w[1].0),
            "{name}: ordered"
        );
        assert_eq!(scanned[699].1, 699u32.to_be_bytes(), "{name}");
        let from: Vec<u8> = b"b/t/00690".to_vec();
        // Up to the end of `b/` (other keys, the rollups' marker `m/` and
        // the format mark `v/`, lie beyond it).
        let tail = collect(db.range(from..b"b0".to_vec()));
        assert_eq!(tail.len(), 11, "{name}: 690..699, b/u");
        let bounded = collect(db.range(b"b/t/00010".to_vec()..b"b/t/00020".to_vec()));
        assert_eq!(bounded.len(), 10, "{name}");
        let inclusive = collect(db.range(b"b/t/00010".to_vec()..=b"b/t/00020".to_vec()));
        assert_eq!(inclusive.len(), 11, "{name}");
        assert_eq!(db.scan_prefix(b"b/").keys().count(), 702, "{name}");
        let others = collect(db.iter())
            .iter()
            .filter(|(k, _)| !k.starts_with(b"b/"))
            .count();
        assert_eq!(db.len(), 702 + others, "{name}");
    }
}

#[test]
fn a_batch_is_all_or_nothing_and_its_last_write_wins() {
    for (_dir, store, name) in stores() {
        let db = store.db();
        let mut batch = Batch::default();
        batch.insert(b"o/k", b"first");
        batch.remove(b"o/k");
        batch.insert(b"o/k", b"last");
        batch.insert(b"o/gone", b"x");
        batch.remove(b"o/gone");
        batch.add(keys::counter("c"), 2);
        batch.add(keys::counter("c"), 3);
        db.apply_batch(batch).unwrap();
        assert_eq!(&*db.get(b"o/k").unwrap().unwrap(), b"last", "{name}");
        assert!(db.get(b"o/gone").unwrap().is_none(), "{name}");
        assert_eq!(store.counter("c"), 5, "{name}");
    }
}

fn obs(id: &str, secs: i64) -> safe_outcomes_model::Observation {
    safe_outcomes_model::Observation {
        id: id.into(),
        at: chrono::DateTime::from_timestamp(1_800_000_000 + secs, 0).unwrap(),
        target: "o/r#1".into(),
        actor: None,
        event: safe_outcomes_model::ObservationKind::Opened,
        snapshot: None,
    }
}

fn ids(store: &impl ReadStore) -> Vec<String> {
    store
        .observations_of("o/r#1")
        .unwrap()
        .into_iter()
        .map(|o| o.id)
        .collect()
}

#[test]
fn units_read_their_writes_roll_back_to_savepoints_and_commit_at_once() {
    for (_dir, store, name) in stores() {
        let mut unit = store.begin();
        unit.put_observation("o/r#1", &obs("kept", 1));
        let sp = unit.savepoint();
        unit.put_observation("o/r#1", &obs("undone", 2));
        assert_eq!(ids(&unit), ["kept", "undone"], "{name}");
        unit.rollback_to(sp);
        assert_eq!(ids(&unit), ["kept"], "{name}");
        assert!(ids(&store).is_empty(), "{name}: nothing before commit");
        unit.count_processed(0, 2);
        unit.commit().unwrap();
        assert_eq!(ids(&store), ["kept"], "{name}");
        assert_eq!(store.counter(counter::PROCESSED), 2, "{name}");

        // A unit that fails midway (dropped: never committed) leaves nothing.
        let mut failed = store.begin();
        failed.put_observation("o/r#1", &obs("half", 3));
        failed.count_processed(2, 1);
        assert_eq!(ids(&failed), ["kept", "half"], "{name}");
        drop(failed);
        assert_eq!(ids(&store), ["kept"], "{name}");
        assert_eq!(store.counter(counter::PROCESSED), 2, "{name}");
    }
}

/// The inbox items (their sequence numbers) `unit` claims, at most `limit`.
fn claimed(unit: &crate::unit::Unit, limit: usize) -> Vec<u64> {
    let items = unit.claim_inbox(0, limit).unwrap();
    items.into_iter().map(|(seq, _)| seq).collect()
}

#[test]
fn claims_and_locks_keep_two_units_apart_on_postgres() {
    let dir = tempfile::tempdir().unwrap();
    let Some(store) = pg_store(dir.path()) else {
        return;
    };
    let mut batch = Batch::default();
    for seq in 1..=6u64 {
        batch.insert(keys::inbox_queue(seq), b"item");
    }
    store.db().apply_batch(batch).unwrap();
    let (a, b) = (store.begin(), store.begin());
    let (first, second) = (claimed(&a, 4), claimed(&b, 4));
    assert_eq!(first, [1, 2, 3, 4]);
    assert_eq!(second, [5, 6], "rows the other unit claimed are skipped");
    assert!(a.try_lock("acme/r:1:0").unwrap());
    assert!(
        a.try_lock("acme/r:1:0").unwrap(),
        "a unit's own lock is its own"
    );
    assert!(!b.try_lock("acme/r:1:0").unwrap(), "never waits, says no");
    drop(a);
    assert!(b.try_lock("acme/r:1:0").unwrap(), "rolled back: let go");
    let again = claimed(&store.begin(), 10);
    assert_eq!(
        again,
        [1, 2, 3, 4],
        "a's claims were let go; b still holds 5, 6"
    );
    // Session locks (publisher, leaders) are exclusive until dropped.
    let pg = store.db().pg().unwrap();
    let held = pg.try_session_lock("leader:redelivery").unwrap();
    assert!(held.is_some());
    assert!(pg.try_session_lock("leader:redelivery").unwrap().is_none());
    drop(held);
    assert!(pg.try_session_lock("leader:redelivery").unwrap().is_some());
}

fn delivery(id: &str) -> InboxItem {
    InboxItem::Delivery {
        delivery_id: id.into(),
        event: "issues".into(),
        action: Some("edited".into()),
        received_at: chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
        observations: Vec::new(),
        discoveries: Vec::new(),
        installation_change: None,
    }
}

/// Two writers (two replicas' stores on one database) given the same
/// delivery ids at once store each exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_delivery_id_sent_to_two_writers_at_once_is_stored_once() {
    let dir = tempfile::tempdir().unwrap();
    let Some(one) = pg_store(dir.path()) else {
        return;
    };
    let two = pg_store(dir.path()).unwrap();
    let writer =
        |s: &Store| InboxWriter::start_with(s.clone(), Arc::new(|_, _, _| {}), Dedup::default());
    let ((w1, t1), (w2, t2)) = (writer(&one), writer(&two));
    let mut tasks = Vec::new();
    for i in 0..50 {
        for w in [w1.clone(), w2.clone()] {
            tasks.push(tokio::spawn(async move {
                w.enqueue(delivery(&format!("g-{i}"))).await
            }));
        }
    }
    let mut stored = Vec::new();
    let mut duplicates = 0;
    for t in tasks {
        match t.await.unwrap().unwrap() {
            Enqueued::Stored(seq) => stored.push(seq),
            Enqueued::Duplicate => duplicates += 1,
            Enqueued::Logged => unreachable!("PostgreSQL has no log"),
        }
    }
    stored.sort_unstable();
    stored.dedup();
    assert_eq!(
        stored.len(),
        50,
        "each id stored once, under its own number"
    );
    assert_eq!(duplicates, 50);
    assert_eq!(one.counter(counter::RECEIVED), 50);
    assert_eq!(one.counter(counter::DUPLICATES), 50);
    assert_eq!(one.db().scan_prefix(keys::INBOX_QUEUE).count(), 50);
    drop((w1, w2));
    t1.join().unwrap();
    t2.join().unwrap();
}

/// The store API answers from inside a current-thread runtime (where a
/// `block_on` would panic): the statement runs on the engine's own runtime
/// and the caller waits for its answer.
#[tokio::test]
async fn the_postgres_engine_works_from_a_current_thread_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let Some(store) = pg_store(dir.path()) else {
        return;
    };
    store.db().insert(b"o/x", b"y").unwrap();
    assert_eq!(&*store.db().get(b"o/x").unwrap().unwrap(), b"y");
    let mut unit = store.begin();
    unit.put_observation("o/r#1", &obs("a", 1));
    unit.commit().unwrap();
    assert_eq!(ids(&store), ["a"]);
}

/// A store left at schema version 1 (only `kv`, counters and sequences)
/// upgrades in place when opened: version 2 is applied and `outcomes` is
/// filled from the outcome records it already holds, the rest untouched.
#[test]
fn a_store_on_schema_version_1_upgrades_in_place() {
    let Some(admin) = pg::test_admin_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let old = pg::test_database_at(&admin, dir.path(), 1).unwrap();
    assert_eq!(old.schema_version().unwrap(), 1);
    // What version 1 wrote: records in `kv` only (written here as raw SQL,
    // since this version's statements need version 2's relations).
    let mut values = Vec::new();
    for i in 0..1200 {
        let id = format!("o/r:{i}:0");
        let stored = match i % 3 {
            0 => crate::test_output(&id, "w"),
            1 => crate::test_judged_output(&id, "w", "accepted"),
            _ => crate::test_judged_output(&id, "w", "rejected"),
        };
        let key = hex::encode(keys::output(&id));
        let value = hex::encode(crate::codec::encode_output(&stored));
        values.push(format!("('\\x{key}', '\\x{value}')"));
    }
    old.execute_for_tests(&format!(
        "INSERT INTO kv (k, v) VALUES {}",
        values.join(",")
    ))
    .unwrap();
    old.execute_for_tests("INSERT INTO counters VALUES ('deliveries_received', 5)")
        .unwrap();
    drop(old);

    let store = Store::on_pg(pg::test_database(&admin, dir.path()).unwrap(), dir.path());
    let pg = store.db().pg().unwrap();
    assert_eq!(
        pg.schema_version().unwrap(),
        3,
        "upgraded to the latest version"
    );
    let rows = pg.outcome_rows().unwrap();
    assert_eq!(rows.len(), 800, "every judged output, none of the others");
    for (id, record) in &rows {
        let outcome = store.output(id).unwrap().unwrap().outcome.unwrap();
        assert_eq!(record, &serde_json::to_value(&outcome).unwrap(), "{id}");
    }
    assert_eq!(store.output_count(), 1200);
    assert_eq!(store.counter(counter::RECEIVED), 5);
    // And the upgraded store goes on writing both together.
    let mut unit = store.begin();
    unit.put_output(&crate::test_output("o/r:0:0", "w"))
        .unwrap();
    unit.put_output(&crate::test_judged_output("o/r:9999:0", "w", "pending"))
        .unwrap();
    unit.commit().unwrap();
    let rows = pg.outcome_rows().unwrap();
    assert_eq!(rows.len(), 801);
    assert!(rows
        .iter()
        .any(|(id, r)| id == "o/r:9999:0" && r["outcome_status"] == "pending"));
}

/// What PostgreSQL's types cannot hold as the App may have it — a NUL in a
/// workflow name, a year past 9999, a run id past `bigint` — never fails
/// the commit of an outcome: the row is written, the record in `kv` whole.
#[test]
fn hostile_values_in_an_outcome_never_fail_its_commit() {
    let dir = tempfile::tempdir().unwrap();
    let Some(store) = pg_store(dir.path()) else {
        return;
    };
    let mut stored = crate::test_judged_output("o/r:\0:1", "evil\0flow", "accepted");
    let far = chrono::DateTime::from_timestamp(8_210_266_012_799, 0).unwrap();
    let outcome = stored.outcome.as_mut().unwrap();
    outcome.created_at = far;
    outcome.evaluated_at = far;
    outcome.run_id = Some(u64::MAX);
    if let Some(t) = outcome.target.as_mut() {
        t.number = Some(u64::MAX);
    }
    stored.execution.id = "o/r:\0:1".into();
    let mut unit = store.begin();
    unit.put_output(&stored).unwrap();
    unit.commit().unwrap();
    assert_eq!(store.output("o/r:\0:1").unwrap().unwrap(), stored);
    let rows = store.db().pg().unwrap().outcome_rows().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].0, "o/r:\u{FFFD}:1");
    assert_eq!(rows[0].1["workflow"], "evil\u{FFFD}flow");
    // And it leaves the relation when the output does.
    let mut unit = store.begin();
    unit.retire_output("o/r:\0:1", "o/r:2:0", &[]).unwrap();
    unit.commit().unwrap();
    assert!(store.db().pg().unwrap().outcome_rows().unwrap().is_empty());
}

/// The length of a sled store's log (its `db` file; the journal apart).
fn log_bytes(dir: &std::path::Path) -> u64 {
    std::fs::metadata(dir.join("db")).map_or(0, |m| m.len())
}

#[test]
fn a_sled_store_reuses_the_space_of_what_it_rewrites() {
    // A store as the worker writes it: a large key space, and batches of
    // a few writes each to keys anywhere in it, so most writes add a piece
    // to a node rather than rewrite it, and what they replace is garbage in
    // sled's log. The batches clean as many pages as they write
    // (`CLEAN_PAGES_PER_WRITE`), so the log stays a small multiple of what
    // is live; with no cleaning it grew with every write. Every value
    // reads back as last written, before and after the store is opened
    // again: moving pages and truncating the file lose nothing.
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_sled(dir.path()).unwrap();
    let (keys, writes, per_batch) = (20_000u64, 200_000u64, 10u64);
    let mut batch = Batch::default();
    for k in 0..keys {
        batch.insert(format!("o/{k:08}"), [0u8; 100]);
    }
    store.db().apply_batch(batch).unwrap();
    let mut written = vec![0u8; keys as usize];
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut sizes = Vec::new();
    for n in 0..writes / per_batch {
        let mut batch = Batch::default();
        for _ in 0..per_batch {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let (k, fill) = (rng % keys, (n % 251) as u8);
            batch.insert(format!("o/{k:08}"), [fill; 100]);
            written[k as usize] = fill;
        }
        store.db().apply_batch(batch).unwrap();
        if (n + 1) % 2_000 == 0 {
            store.flush().unwrap();
            sizes.push(log_bytes(dir.path()));
        }
    }
    // What is live: each key (11 bytes) and its value.
    let live = keys * (100 + 11);
    // Measured here: 7.3–9.4 MB all along with cleaning; without it
    // 9.4 MB after the first 20,000 writes and 15.2–16.8 MB at the end.
    // With other tests writing beside it, one flush's size can stand
    // above the rest (16.3 MB once, then 7.9 MB at the next): the median,
    // and the smallest of the last three, are what cleaning keeps down.
    let mut sorted = sizes.clone();
    sorted.sort_unstable();
    let median = sorted[sorted.len() / 2];
    assert!(
        median <= 5 * live,
        "the log held a median of {median} bytes for {live} live (by 20,000 writes: {sizes:?})"
    );
    let first = sizes[0];
    let last = *sizes[sizes.len() - 3..].iter().min().unwrap();
    assert!(
        last <= first + 2 * 1024 * 1024,
        "the log kept growing, {first} → {last} bytes (by 20,000 writes: {sizes:?})"
    );
    let reads_back = |store: &Store, when: &str| {
        for (k, fill) in written.iter().enumerate() {
            let value = store.db().get(format!("o/{k:08}")).unwrap();
            assert_eq!(value.as_deref(), Some(&[*fill; 100][..]), "key {k}, {when}");
        }
    };
    reads_back(&store, "as written");
    drop(store);
    reads_back(&Store::open_sled(dir.path()).unwrap(), "opened again");
}

#[test]
fn a_store_written_from_another_stores_io_buffers_reads_back_only_its_own() {
    // sled hands each segment of its log a buffer, and the vendored sled
    // keeps freed buffers for the next segments, of any store in the
    // process (vendor/sled/PATCHES.md, "IO buffers reused"). A reused
    // buffer still holds the bytes of the store that wrote it last: both
    // stores here start at the same log offsets, so any of those bytes
    // written out or read back as a message would show up as a key of the
    // first store, or a value it wrote, in the second after it is opened
    // again.
    let write = |dir: &std::path::Path, prefix: &str, keys: u32, fill: u8| {
        let store = Store::open_sled(dir).unwrap();
        for chunk in 0..keys / 100 {
            let mut batch = Batch::default();
            for k in chunk * 100..(chunk + 1) * 100 {
                batch.insert(format!("{prefix}{k:08}"), [fill; 200]);
            }
            store.db().apply_batch(batch).unwrap();
        }
        store.flush().unwrap();
    };
    let (first, second) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // About 14 of sled's 512 KiB segments, then about 1 and a half: the
    // second store's last segment ends part-way through a used buffer.
    write(first.path(), "a/", 30_000, 1);
    let reused = sled::reused_io_buffers();
    write(second.path(), "b/", 3_300, 2);
    assert!(
        sled::reused_io_buffers() > reused,
        "the second store wrote into no freed buffer"
    );
    let store = Store::open_sled(second.path()).unwrap();
    let all = collect(store.db().scan_prefix(b""));
    let keys: Vec<_> = all.iter().filter(|(k, _)| k.starts_with(b"b/")).collect();
    assert_eq!(keys.len(), 3_300, "the second store's keys");
    assert!(keys.iter().all(|(_, v)| v.as_slice() == [2u8; 200]));
    assert!(
        !all.iter().any(|(k, _)| k.starts_with(b"a/")),
        "a key of the first store in the second"
    );
}

/// One write of `what_additions_left_is_what_sled_holds`: on a counter key
/// (`m/…`) or a packed-counts key (`g/…`), in a batch or directly.
#[derive(Debug, Clone)]
enum Write {
    Add(usize, i64),
    AddAll(usize, Vec<i64>),
    Insert(usize, u8),
    Remove(usize),
    InsertAlone(usize, u8),
    RemoveAlone(usize),
    Take(usize),
}

fn write_strategy() -> impl proptest::strategy::Strategy<Value = Write> {
    use proptest::prelude::*;
    let key = 0..4usize;
    prop_oneof![
        (key.clone(), -3..5i64).prop_map(|(k, d)| Write::Add(k, d)),
        (key.clone(), proptest::collection::vec(-2..4i64, 0..4))
            .prop_map(|(k, d)| Write::AddAll(k, d)),
        (key.clone(), any::<u8>()).prop_map(|(k, v)| Write::Insert(k, v)),
        key.clone().prop_map(Write::Remove),
        (key.clone(), any::<u8>()).prop_map(|(k, v)| Write::InsertAlone(k, v)),
        key.clone().prop_map(Write::RemoveAlone),
        key.prop_map(Write::Take),
    ]
}

/// Keys 0 and 1 are counters (`Add`), 2 and 3 packed counts (`AddAll`).
fn write_key(k: usize) -> Vec<u8> {
    if k < 2 {
        format!("m/c{k}").into_bytes()
    } else {
        format!("g/a{k}").into_bytes()
    }
}

/// A value `Insert` writes into key `k`: 8 bytes for a counter, packed
/// counts for the others.
fn inserted(k: usize, v: u8) -> Vec<u8> {
    if k < 2 {
        u64::from(v).to_be_bytes().to_vec()
    } else {
        pack(&[i64::from(v), 1])
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// What sled's additions remember (`added`) never differs from what
    /// sled holds: any mix of additions, inserts, removals and takes, in
    /// batches of several writes or alone, reads back as a model of them
    /// says (an addition starting from what the key holds).
    #[test]
    fn what_additions_left_is_what_sled_holds(
        steps in proptest::collection::vec(proptest::collection::vec(write_strategy(), 1..4), 1..24)
    ) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_sled(dir.path()).unwrap();
        let db = store.db();
        let mut model: std::collections::BTreeMap<Vec<u8>, Vec<u8>> = Default::default();
        for step in steps {
            let mut batch = Batch::default();
            for w in step {
                match w {
                    Write::Add(k, d) if k < 2 => {
                        let key = write_key(k);
                        let now = model.get(&key).and_then(|v| <[u8; 8]>::try_from(v.as_slice()).ok()).map_or(0, u64::from_be_bytes);
                        let after = (now as i64).saturating_add(d).max(0) as u64;
                        model.insert(key.clone(), after.to_be_bytes().to_vec());
                        batch.add(key, d);
                    }
                    Write::AddAll(k, d) if k >= 2 => {
                        let key = write_key(k);
                        let after = add_packed(model.get(&key).map_or(&[][..], |v| v), &d);
                        if after.is_empty() { model.remove(&key); } else { model.insert(key.clone(), after); }
                        batch.add_all(key, d);
                    }
                    Write::Add(..) | Write::AddAll(..) => {}
                    Write::Insert(k, v) => {
                        model.insert(write_key(k), inserted(k, v));
                        batch.insert(write_key(k), inserted(k, v));
                    }
                    Write::Remove(k) => {
                        model.remove(&write_key(k));
                        batch.remove(write_key(k));
                    }
                    Write::InsertAlone(k, v) => {
                        db.apply_batch(std::mem::take(&mut batch)).unwrap();
                        model.insert(write_key(k), inserted(k, v));
                        db.insert(write_key(k), inserted(k, v)).unwrap();
                    }
                    Write::RemoveAlone(k) => {
                        db.apply_batch(std::mem::take(&mut batch)).unwrap();
                        model.remove(&write_key(k));
                        db.remove(write_key(k)).unwrap();
                    }
                    Write::Take(k) => {
                        db.apply_batch(std::mem::take(&mut batch)).unwrap();
                        let was = model.remove(&write_key(k));
                        let taken = db.take(write_key(k)).unwrap().map(|v| v.to_vec());
                        proptest::prop_assert_eq!(taken, was);
                    }
                }
            }
            db.apply_batch(batch).unwrap();
            for k in 0..4 {
                let key = write_key(k);
                let held = db.get(&key).unwrap().map(|v| v.to_vec());
                // A counter at 0 is kept as 8 zero bytes; the model drops nothing.
                proptest::prop_assert_eq!(held, model.get(&key).cloned(), "key {}", k);
            }
        }
    }
}
