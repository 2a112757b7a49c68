use std::sync::atomic::Ordering;

use super::*;
use crate::app::App;
use crate::model::clock::Clock;
use crate::store::inbox::Enqueued;

fn delivery(id: &str) -> InboxItem {
    delivery_observing(id, &[])
}

/// A delivery filing one observation (id `obs-<id>`) under each target.
fn delivery_observing(id: &str, targets: &[&str]) -> InboxItem {
    let at = chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap();
    InboxItem::Delivery {
        delivery_id: id.into(),
        event: "issues".into(),
        action: Some("edited".into()),
        received_at: at,
        observations: targets
            .iter()
            .map(|t| Observation {
                id: format!("obs-{id}"),
                at,
                target: t.to_string(),
                actor: None,
                event: ObservationKind::Opened,
                snapshot: None,
            })
            .collect(),
        discoveries: Vec::new(),
        installation_change: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_item_is_dead_lettered_and_the_queue_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let app = App::start(dir.path(), Clock::System).unwrap();
    app.wait_ready().await;
    // The second item stored (sequence 2) panics when processed.
    app.store.set_counter_for_tests("test_panic_at", 2);
    for id in ["d-1", "d-2", "d-3"] {
        let stored = app.writer.enqueue(delivery(id)).await.unwrap();
        assert!(matches!(stored, Enqueued::Stored(_)));
    }
    app.wait_idle().await;
    assert_eq!(app.shared.worker_death(), None, "the worker lives on");
    assert_eq!(app.shared.dead_letters.load(Ordering::Relaxed), 1);
    assert_eq!(app.shared.processed_total.load(Ordering::Relaxed), 3);
    assert_eq!(app.store.backlog(), 0);
    let letters = app.store.dead_letters().unwrap();
    assert_eq!(letters.len(), 1);
    assert_eq!(letters[0].seq, 2);
    assert_eq!(letters[0].attempts, 1, "a panic is not retried");
    assert!(letters[0].error.contains("injected failure"), "{letters:?}");
    assert_eq!(letters[0].item(), Some(delivery("d-2")));
    assert!(app.shared.last_error().unwrap().contains("dead letters"));
    app.shutdown();
}

/// Two workers (two replicas' stores on one PostgreSQL database) drain
/// one inbox at once: every item is processed exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_workers_on_one_database_process_every_item_exactly_once() {
    if crate::store::pg::test_pg_from_env().is_none() {
        return eprintln!("SKIPPED: set SAFE_OUTCOMES_TEST_PG to run on PostgreSQL");
    }
    let dir = tempfile::tempdir().unwrap();
    let app = App::start_without_worker(dir.path(), Clock::System).unwrap();
    assert!(app.store.is_pg());
    let n = 300;
    for i in 0..n {
        let target = format!("acme/r#{}", i % 7);
        let item = delivery_observing(&format!("d-{i}"), &[target.as_str()]);
        assert!(matches!(
            app.writer.enqueue(item).await,
            Ok(Enqueued::Stored(_))
        ));
    }
    let other = Store::open(&dir.path().join("store")).unwrap();
    let workers = [app.store.clone(), other].map(|store| {
        let shared = app.shared.clone();
        std::thread::spawn(move || {
            let mut worker = Worker::new(store, shared);
            worker.drain_inbox();
            worker.processed
        })
    });
    let counts: Vec<u64> = workers.map(|w| w.join().unwrap()).into();
    let store = &app.store;
    assert_eq!(store.counter(counter::PROCESSED), n, "{counts:?}");
    assert_eq!(store.backlog(), 0);
    assert_eq!(store.oldest_queued_seq(), None);
    assert!(store.dead_letters().unwrap().is_empty());
    let filed: usize = (0..7)
        .map(|t| store.observations(&[format!("acme/r#{t}")]).unwrap().len())
        .sum();
    assert_eq!(filed as u64, n, "every item's observation, once");
    app.shutdown();
}

/// Items stored while no worker runs are drained in one unit of work;
/// the middle one fails after filing its observations: none of its
/// writes are committed, and those of the items around it are.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_item_failing_midway_in_a_unit_leaves_nothing_half_written() {
    let dir = tempfile::tempdir().unwrap();
    let app = App::start_without_worker(dir.path(), Clock::System).unwrap();
    for (id, targets) in [
        ("d-1", &["acme/r#1"][..]),
        ("d-2", &["acme/r#1", "acme/r#2"][..]),
        ("d-3", &["acme/r#3"][..]),
    ] {
        let stored = app.writer.enqueue(delivery_observing(id, targets)).await;
        assert!(matches!(stored, Ok(Enqueued::Stored(_))));
    }
    app.store.set_counter_for_tests("test_panic_at", 2);
    let (store, shared) = (app.store.clone(), app.shared.clone());
    let mut worker = Worker::new(store.clone(), shared);
    worker.drain_inbox();
    let ids = |t: &str| -> Vec<String> {
        store
            .observations(&[t.to_string()])
            .unwrap()
            .into_iter()
            .map(|o| o.id)
            .collect()
    };
    assert_eq!(ids("acme/r#1"), ["obs-d-1"], "d-2's copy is not kept");
    assert!(ids("acme/r#2").is_empty(), "d-2 wrote nothing");
    assert_eq!(ids("acme/r#3"), ["obs-d-3"]);
    assert_eq!(store.backlog(), 0);
    assert_eq!(store.counter(counter::PROCESSED), 3);
    let letters = store.dead_letters().unwrap();
    assert_eq!(letters.iter().map(|l| l.seq).collect::<Vec<_>>(), [2]);
    app.shutdown();
}
