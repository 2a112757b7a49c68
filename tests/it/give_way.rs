//! Under saturated ingest the worker gives way: it works in short slices and
//! sleeps between them, leaving the cores to the handlers. It never stops: a
//! backlog stored during a storm is processed to the end, exactly once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::common::TestApp;
use safe_outcomes::app::worker::Worker;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_worker_gives_way_to_saturated_ingest_and_still_drains_the_backlog() {
    let dir = tempfile::tempdir().unwrap();
    let start = "2026-10-01T00:00:00Z".parse().unwrap();
    // The storm's deliveries are stored first, then one worker pass drains
    // them all (a pass long enough to be cut into slices).
    let t = TestApp::start_with(dir.path(), start, false).await;
    let n = 400u64;
    for i in 0..n {
        let body = crate::common::bug_labeled(100 + i % 50, start).to_string();
        let a = t
            .client
            .deliver("issues", &format!("storm-{i}"), body.as_bytes())
            .await
            .unwrap();
        assert_eq!(a.status, 202);
    }
    // Keep ingest "saturated" for the whole test, as a storm's large group
    // commits would: deterministic, whatever this machine's speed.
    let storm = Arc::new(AtomicBool::new(true));
    let pressure = {
        let (shared, storm) = (t.app.shared.clone(), storm.clone());
        std::thread::spawn(move || {
            while storm.load(Ordering::Relaxed) {
                shared.pressure.committed(64);
                std::thread::sleep(Duration::from_millis(1));
            }
        })
    };
    t.app.writer.settled().await;
    let (store, shared) = (t.app.store.clone(), t.app.shared.clone());
    let pass = tokio::task::spawn_blocking(move || Worker::new(store, shared).drain_inbox());
    tokio::time::timeout(Duration::from_secs(120), pass)
        .await
        .expect("the worker drains the backlog while giving way")
        .unwrap();
    storm.store(false, Ordering::Relaxed);
    pressure.join().unwrap();

    let status = t.get("/status").await;
    assert_eq!(status.body["deliveries"]["received"], n);
    assert_eq!(status.body["deliveries"]["processed"], n);
    assert_eq!(status.body["deliveries"]["backlog"], 0);
    let gave_way = status.body["deliveries"]["worker_gave_way"]
        .as_u64()
        .unwrap();
    assert!(gave_way > 0, "the worker never gave way: {status:?}");
    let metrics = t.get("/metrics").await;
    let text = metrics.body.as_str().unwrap_or_default().to_string();
    assert!(
        text.contains(&format!("safe_outcomes_worker_gave_way_total {gave_way}")),
        "{text}"
    );
}
