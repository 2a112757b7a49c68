//! A kill between any two steps of the ack path and the move: every
//! acknowledged item is filed in the journal once, whatever was sent again.

use super::*;
use crate::inbox::tests::delivery;
use crate::inbox::InboxWriter;

/// 40 webhook deliveries, two of them sent twice, and 6 reconcile results
/// (answered once moved).
fn items() -> Vec<InboxItem> {
    let mut items: Vec<InboxItem> = (0..40).map(|i| delivery(&format!("d-{i}"))).collect();
    for i in 0..6 {
        items.insert(
            i * 7,
            InboxItem::Reconciled {
                output_id: format!("o/r:{i}:0"),
                fetched_at: chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
                observations: Vec::new(),
                failure: Some(format!("failure {i}")),
            },
        );
    }
    items.push(delivery("d-3"));
    items.push(delivery("d-17"));
    items
}

type Answer = std::result::Result<Enqueued, InboxError>;

/// Send `items` five at a time (so groups form); each with its answer.
async fn send_all(writer: &InboxWriter, items: Vec<InboxItem>) -> Vec<(InboxItem, Answer)> {
    let mut out = Vec::new();
    for wave in items.chunks(5) {
        let sends = wave.iter().map(|item| {
            let writer = writer.clone();
            let item = item.clone();
            async move { (item.clone(), writer.enqueue(item).await) }
        });
        out.extend(futures_util::future::join_all(sends).await);
    }
    out
}

/// The dedupe keys of the items the journal's queue holds, in order.
fn queued(store: &Store) -> Vec<String> {
    store
        .inbox_items(1, usize::MAX)
        .unwrap()
        .into_iter()
        .map(|(seq, bytes)| crate::inbox::decode_item(seq, &bytes).unwrap().dedupe_key())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_between_any_two_steps_loses_no_acknowledged_item_and_files_none_twice() {
    let all = items();
    let distinct: HashSet<String> = all.iter().map(InboxItem::dedupe_key).collect();
    for step in [
        Step::Torn,
        Step::Written,
        Step::Read,
        Step::Committed,
        Step::Answered,
    ] {
        for n in [1, 2, 5] {
            let dir = tempfile::tempdir().unwrap();
            let store = Store::open_sled(dir.path()).unwrap();
            let (writer, thread) = InboxWriter::start_stopping(store.clone(), step, n);
            let answers = send_all(&writer, all.clone()).await;
            drop(writer);
            thread.join().unwrap();
            let acked: Vec<String> = answers
                .iter()
                .filter(|(_, a)| a.is_ok())
                .map(|(item, _)| item.dedupe_key())
                .collect();
            let unanswered: Vec<InboxItem> = answers
                .into_iter()
                .filter(|(_, a)| a.is_err())
                .map(|(item, _)| item)
                .collect();
            assert!(
                !unanswered.is_empty(),
                "{step:?} {n}: the kill came too late"
            );
            drop(store);

            // Restarted: what got no answer is sent again (as GitHub
            // redelivers), and two acknowledged ones are redelivered too.
            let store = Store::open_sled(dir.path()).unwrap();
            for key in &acked {
                assert!(
                    queued(&store).contains(key),
                    "{step:?} {n}: {key} was acknowledged, and is not in the journal after a restart"
                );
            }
            let (writer, thread) =
                InboxWriter::start_with(store.clone(), Arc::new(|_, _, _| {}), Dedup::default());
            let mut again = unanswered;
            again.extend(all.iter().take(2).cloned());
            for (item, answer) in send_all(&writer, again).await {
                assert!(answer.is_ok(), "{step:?} {n}: {item:?}: {answer:?}");
            }
            writer.settled().await;
            let queue = queued(&store);
            let filed: HashSet<String> = queue.iter().cloned().collect();
            assert_eq!(filed.len(), queue.len(), "{step:?} {n}: filed twice");
            assert_eq!(filed, distinct, "{step:?} {n}");
            assert_eq!(store.counter(counter::RECEIVED), distinct.len() as u64);
            drop(writer);
            thread.join().unwrap();
            // Everything moved: only the segment appends go to is left.
            let log_dir = dir.path().join(crate::inbox_log::DIR);
            assert_eq!(
                std::fs::read_dir(&log_dir).unwrap().count(),
                1,
                "{step:?} {n}"
            );
        }
    }
}

/// Frames the log holds past `INBOX_MOVED` at open are moved before
/// anything reads the inbox; a log that moved everything is not moved again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opening_the_store_moves_what_the_log_holds() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_sled(dir.path()).unwrap();
    let (writer, thread) = InboxWriter::start_stopping(store.clone(), Step::Read, 1);
    let answers = send_all(
        &writer,
        (0..5).map(|i| delivery(&format!("g-{i}"))).collect(),
    )
    .await;
    drop(writer);
    thread.join().unwrap();
    let acked = answers.iter().filter(|(_, a)| a.is_ok()).count();
    assert!(acked >= 1, "{answers:?}");
    assert!(
        queued(&store).is_empty(),
        "the mover stopped before its commit"
    );
    drop(store);
    let store = Store::open_sled(dir.path()).unwrap();
    assert_eq!(queued(&store).len(), acked);
    drop(store);
    let store = Store::open_sled(dir.path()).unwrap();
    assert_eq!(queued(&store).len(), acked, "moved once");
    assert_eq!(store.counter(counter::RECEIVED), acked as u64);
}

/// A segment damaged before its end refuses the store, naming the segment
/// and what to do (exit 8 for `serve`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_segment_refuses_the_store_by_name() {
    let dir = tempfile::tempdir().unwrap();
    drop(Store::open_sled(dir.path()).unwrap());
    // Three items written and not moved, as a kill leaves them.
    let mut log = Log::open(dir.path(), 0, false, Default::default()).unwrap();
    let frames: Vec<Vec<u8>> = (0..3)
        .map(|i| {
            let item = delivery(&format!("g-{i}"));
            Logged::encode(&item, &item.dedupe_key())
        })
        .collect();
    log.append(&frames).unwrap();
    drop(log);
    let log_dir = dir.path().join(crate::inbox_log::DIR);
    let segment = std::fs::read_dir(&log_dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut bytes = std::fs::read(&segment).unwrap();
    assert!(bytes.len() > 100, "frames not moved are left");
    bytes[12] ^= 0xff;
    std::fs::write(&segment, bytes).unwrap();
    let refused = Store::open_sled(dir.path()).err().expect("refused");
    let StoreError::Refused(crate::open_checks::Refusal::Corrupt { file, advice, .. }) = &refused
    else {
        panic!("{refused}");
    };
    assert_eq!(file, &segment);
    assert_eq!(*advice, crate::open_checks::LOG_ADVICE);
}

/// A mover that stopped (its thread ended: a panic, say) moves nothing
/// more: the writer answers 503 rather than acknowledge what would never
/// be processed, and `settled` does not wait for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_mover_refuses_acks_and_settles() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_sled(dir.path()).unwrap();
    let (writer, thread) = InboxWriter::start(store.clone(), Arc::new(|_, _, _| {}));
    assert!(matches!(
        writer.enqueue(delivery("before")).await,
        Ok(Enqueued::Logged)
    ));
    let shared = writer.log.clone().expect("a sled store logs");
    assert!(!writer.mover_stopped());
    // What `MoverGone` does when the mover's thread ends.
    drop(MoverGone(shared.clone()));
    assert!(writer.mover_stopped(), "readiness must say so");
    let refused = writer.enqueue(delivery("after")).await;
    assert!(
        matches!(&refused, Err(InboxError::Write(why)) if why.contains("mover stopped")),
        "{refused:?}"
    );
    tokio::time::timeout(Duration::from_secs(5), shared.settled())
        .await
        .expect("settled returns once the mover stopped");
    drop(writer);
    thread.join().unwrap();
}

/// A store that reopens after an I/O error (`heal`) while acknowledged
/// items wait in the log: the running mover files them and tells the App
/// (`on_stored`: the counts and the worker's wake) as soon as the store is
/// back, within the second `/status` waits for it — not after the rest of
/// a backoff grown over two seconds of failed moves (up to 5 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn items_logged_before_the_store_reopens_are_filed_and_counted_by_the_mover() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_sled(dir.path()).unwrap();
    let counted = Arc::new(AtomicU64::new(0));
    let seen = counted.clone();
    let (writer, thread) = InboxWriter::start(
        store.clone(),
        Arc::new(move |_, items, _| {
            seen.fetch_add(items, Ordering::SeqCst);
        }),
    );
    let ids = ["r-1", "r-2", "r-3"];
    let sends = ids.iter().map(|id| writer.enqueue(delivery(id)));
    for answer in futures_util::future::join_all(sends).await {
        assert!(matches!(answer, Ok(Enqueued::Logged)), "{answer:?}");
    }
    // Before the mover's gather ends: its moves fail for two seconds (its
    // backoff grows to 3.2 s), and the store closes.
    store.inject_io_errors(true);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(store.write_trouble().is_some(), "the store closed");
    store.inject_io_errors(false);
    let closed = std::time::Instant::now();
    while store.write_trouble().is_some() {
        assert!(
            closed.elapsed() < Duration::from_secs(10),
            "the store never reopened"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::timeout(Duration::from_secs(1), writer.settled())
        .await
        .expect("the mover files the log within a second of the reopen");
    assert_eq!(store.reopens(), 1);
    assert_eq!(counted.load(Ordering::SeqCst), 3, "every item counted once");
    assert_eq!(queued(&store), ids.map(|id| delivery(id).dedupe_key()));
    drop(writer);
    thread.join().unwrap();
}
