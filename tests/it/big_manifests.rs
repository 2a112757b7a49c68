//! Manifests at and over the caps: the line cap refuses the whole post with
//! 413 and stores nothing, a line over the byte cap is rejected with its
//! reason while the rest count, a manifest of many chunks arrives whole, and
//! a post cut off midway stores nothing. (Memory under a big manifest is
//! measured in `tests/backpressure.rs`, a binary of its own.)

use std::time::Duration;

use safe_outcomes::http::Limits;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::closed_doors::serve_with;
use crate::common::{TestApp, TOKEN};
use safe_outcomes::store::ReadStore;

fn start() -> chrono::DateTime<chrono::Utc> {
    "2026-10-01T00:00:00Z".parse().unwrap()
}

/// `n` manifest lines, one issue each.
fn lines(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                r#"{{"type":"create_issue","repo":"o/r","number":{}}}"#,
                i + 1
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Store keys of staged manifest chunks and commit markers.
fn staged(t: &TestApp) -> usize {
    t.dump()
        .iter()
        .filter(|(k, _)| k.starts_with("i/s/") || k.starts_with("i/c/"))
        .count()
}

/// Post `n` manifest lines as run `run` of `o/r`; the answer, whatever it is.
async fn post_lines(t: &TestApp, run: u64, n: usize) -> safe_outcomes::ingest::client::Answer {
    t.client
        .post_manifest("o/r", run, None, lines(n))
        .await
        .unwrap()
}

#[tokio::test]
async fn one_line_over_the_line_cap_is_a_413_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let t = TestApp::start(dir.path(), start()).await;
    let cap = Limits::default().manifest_max_lines;
    assert_eq!(cap, 100_000, "the documented cap");
    let before = t.dump_state();
    // Blank lines do not count toward the cap.
    let body = format!("{}\n\n\n{}", lines(cap), r#"{"type":"noop"}"#);
    let answer = t.client.post_manifest("o/r", 9, None, body).await.unwrap();
    assert_eq!(answer.status, 413, "{}", answer.body);
    assert_eq!(answer.body["error"], "too_many_lines");
    let detail = answer.body["detail"].as_str().unwrap();
    assert!(
        detail.contains("100000") && detail.contains("nothing was stored"),
        "{detail}"
    );
    t.unchanged(&before, "nothing is stored").await;
    t.stop().await;
}

#[tokio::test]
async fn a_line_over_the_byte_cap_is_rejected_with_its_reason_and_the_rest_count() {
    let dir = tempfile::tempdir().unwrap();
    let t = TestApp::start(dir.path(), start()).await;
    let cap = Limits::default().manifest_max_line_bytes;
    let long = format!(
        r#"{{"type":"create_issue","repo":"o/r","number":2,"body":"{}"}}"#,
        "x".repeat(cap)
    );
    let body = [
        r#"{"type":"create_issue","repo":"o/r","number":1}"#,
        long.as_str(),
        r#"{"type":"create_issue","repo":"o/r","number":3}"#,
    ]
    .join("\n");
    let answer = t.client.post_manifest("o/r", 7, None, body).await.unwrap();
    assert_eq!(answer.status, 202, "{}", answer.body);
    assert_eq!(answer.body["accepted"], 2);
    assert_eq!(answer.body["rejected_total"], 1);
    let rejected = &answer.body["rejected"][0];
    assert_eq!(rejected["line"], 2);
    let reason = rejected["error"].as_str().unwrap();
    assert!(
        reason.contains(&format!("{} bytes", long.len())) && reason.contains("65536"),
        "{reason}"
    );
    // The long line still counts for the index: ids stay stable.
    assert_eq!(
        answer.body["outputs"],
        serde_json::json!(["o/r:7:0", "o/r:7:2"])
    );
    assert_eq!(t.settled_outcomes().await.len(), 2);
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manifest_of_many_chunks_arrives_whole_and_its_chunks_are_gone() {
    let dir = tempfile::tempdir().unwrap();
    let t = TestApp::start(dir.path(), start()).await;
    let n = 2_345;
    let answer = post_lines(&t, 11, n).await;
    assert_eq!(answer.status, 202, "{}", answer.body);
    assert_eq!(answer.body["accepted"], n);
    // The answer lists the first ids and counts the rest.
    assert_eq!(answer.body["outputs"].as_array().unwrap().len(), 1000);
    assert_eq!(answer.body["outputs_omitted"], n - 1000);
    let outcomes = t.settled_outcomes().await;
    assert_eq!(outcomes.len(), n);
    assert!(outcomes.contains_key("o/r:11:2344"));
    assert_eq!(staged(&t), 0, "applied chunks are removed");

    // The same post again is a duplicate and leaves nothing staged.
    let before = t.dump_state();
    let again = post_lines(&t, 11, n).await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(again.body["duplicate"], true);
    t.unchanged(&before, "nothing is stored").await;
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manifest_cut_off_midway_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let t = serve_with(
        dir.path(),
        Limits {
            body_timeout: Duration::from_secs(5),
            ..Limits::default()
        },
    )
    .await;
    let before = t.dump_state();
    // Enough lines for several staged chunks, then the client vanishes.
    let body = lines(3_000);
    let mut stream = TcpStream::connect(t.server.addr).await.unwrap();
    let head = format!(
        "POST /api/v1/manifests?repo=o/r&run_id=12 HTTP/1.1\r\nHost: x\r\n\
         Authorization: Bearer {TOKEN}\r\nContent-Type: application/x-ndjson\r\n\
         Content-Length: {}\r\n\r\n",
        body.len() + 1000
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    // Give the server time to stage what it got, then hang up.
    tokio::time::sleep(Duration::from_millis(500)).await;
    stream.shutdown().await.unwrap();
    let mut rest = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut rest)).await;
    // The handler notices, answers 400 and discards; wait until it has.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while staged(&t) > 0 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    t.unchanged(&before, "nothing of the cut post stays").await;
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_restart_committed_chunks_are_applied_orphans_swept_and_a_bad_chunk_skipped() {
    let dir = tempfile::tempdir().unwrap();
    // Acknowledged, then the process stops before its worker ran.
    let t = TestApp::start_with(dir.path(), start(), false).await;
    let answer = post_lines(&t, 21, 1_200).await;
    assert_eq!(answer.status, 202, "{}", answer.body);
    let chunks: Vec<Vec<u8>> = t
        .app
        .store
        .scan_raw(b"i/s/")
        .unwrap()
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(chunks.len(), 3, "1,200 lines are 3 chunks of at most 500");
    let store = &t.app.store;
    // The second chunk went bad on disk; a post the process died reading
    // left a chunk with no commit.
    store
        .put_raw_for_tests(&chunks[1], b"\x02not a chunk")
        .unwrap();
    let mut orphan = b"i/s/".to_vec();
    orphan.extend_from_slice(&u64::MAX.to_be_bytes());
    orphan.extend_from_slice(&0u32.to_be_bytes());
    store.put_raw_for_tests(&orphan, &chunks[0]).unwrap();
    t.app.store.flush().unwrap();
    t.stop().await;

    let t = TestApp::start(dir.path(), start()).await;
    t.settle().await;
    assert_eq!(staged(&t), 0, "nothing staged is left");
    // The good chunks count; the bad one is skipped and said so.
    assert_eq!(t.outcomes().await.len(), 700);
    let status = t.get("/status").await;
    let error = status.body["last_error"].as_str().unwrap_or_default();
    assert!(error.contains("undecodable manifest chunk 1"), "{error}");
    t.stop().await;
}
