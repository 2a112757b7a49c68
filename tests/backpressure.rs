//! Backpressure: with the worker stopped (standing for one that fell far
//! behind), a burst of deliveries is absorbed into the inbox on disk. Memory
//! stays bounded, every delivery is acknowledged, and `/status` shows the
//! backlog. 10k deliveries by default, 100k with SAFE_OUTCOMES_LONG=1.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::TestApp;
use safe_outcomes::bench::payloads::{issue, IssueEvent};
use safe_outcomes::bench::rss_bytes;

fn burst() -> usize {
    if std::env::var_os("SAFE_OUTCOMES_LONG").is_some() {
        100_000
    } else {
        10_000
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_goes_to_disk_not_memory_and_status_shows_the_backlog() {
    let n = burst();
    let dir = tempfile::tempdir().unwrap();
    let start = "2026-10-01T00:00:00Z".parse().unwrap();
    let t = TestApp::start_with(dir.path(), start, false).await;
    // A few distinct small bodies; each delivery has its own id.
    let bodies: Arc<Vec<Vec<u8>>> = Arc::new(
        (0..64u64)
            .map(|i| {
                issue(&IssueEvent {
                    repo: "acme/widgets",
                    number: 100 + i,
                    action: "labeled",
                    at: start,
                    sender: "maria-lopez",
                    gh_aw_run: None,
                    label: Some("bug"),
                    comment_id: None,
                })
                .to_string()
                .into_bytes()
            })
            .collect(),
    );
    // Warm up allocator and connections before the baseline.
    for i in 0..200 {
        let a = t
            .client
            .deliver("issues", &format!("warm-{i}"), &bodies[i % 64])
            .await
            .unwrap();
        assert_eq!(a.status, 202);
    }
    let rss_before = rss_bytes();
    let size_before = t.app.store.size_on_disk();
    let next = Arc::new(AtomicUsize::new(0));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..32 {
        let (client, bodies, next) = (t.client.clone(), bodies.clone(), next.clone());
        tasks.spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    return;
                }
                let a = client
                    .deliver("issues", &format!("burst-{i}"), &bodies[i % 64])
                    .await
                    .unwrap();
                assert_eq!(a.status, 202, "{}", a.body);
            }
        });
    }
    while let Some(r) = tasks.join_next().await {
        r.unwrap();
    }
    let rss_after = rss_bytes();
    t.app.store.flush().unwrap();
    let size_after = t.app.store.size_on_disk();

    let status = t.client.get("/status").await.unwrap();
    let backlog = status.body["deliveries"]["backlog"]
        .as_u64()
        .or_else(|| status.body["backlog"].as_u64())
        .unwrap_or_else(|| panic!("no backlog in {}", status.body));
    assert_eq!(backlog, (n + 200) as u64, "{}", status.body);
    assert_eq!(t.app.store.backlog(), (n + 200) as u64);

    let grown = rss_after.saturating_sub(rss_before);
    let on_disk = size_after.saturating_sub(size_before);
    eprintln!(
        "{n} deliveries: RSS {} → {} MiB (+{} MiB), store +{} MiB",
        rss_before >> 20,
        rss_after >> 20,
        grown >> 20,
        on_disk >> 20
    );
    // The inbox is on disk: at least ~200 B per item there...
    assert!(on_disk >= (n as u64) * 200, "store grew only {on_disk} B");
    // ...while memory stays within sled's bounded cache plus slack.
    assert!(
        grown < 160 * 1024 * 1024,
        "RSS grew by {} MiB for {n} deliveries",
        grown >> 20
    );
    t.stop().await;
}
