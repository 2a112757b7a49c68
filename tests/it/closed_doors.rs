//! The server's doors under a hostile world, over real sockets to the real
//! server on 127.0.0.1: idle connections beyond any sane number, connections
//! beyond the cap, a body that trickles, and bodies beyond the in-flight
//! budget. Every loop here is bounded in count and in time.

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use safe_outcomes::http::{Limits, RouterOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::{TestApp, SECRET, TOKEN};

fn start() -> chrono::DateTime<chrono::Utc> {
    "2026-10-01T00:00:00Z".parse().unwrap()
}

/// The test App behind a server with these limits (router and connections).
pub async fn serve_with(dir: &Path, limits: Limits) -> TestApp {
    let options = RouterOptions {
        limits,
        ..RouterOptions::default()
    };
    TestApp::start_with_options(dir, start(), true, options).await
}

/// GET /ping on a fresh connection; the status, or why there was none.
async fn ping(addr: SocketAddr, within: Duration) -> Result<u16, String> {
    let http = reqwest::Client::builder()
        .timeout(within)
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    http.get(format!("http://{addr}/ping"))
        .send()
        .await
        .map(|r| r.status().as_u16())
        .map_err(|e| e.to_string())
}

/// Open `n` connections that never send a byte.
async fn idle_connections(addr: SocketAddr, n: usize) -> Vec<TcpStream> {
    let mut open = Vec::with_capacity(n);
    for _ in 0..n {
        open.push(TcpStream::connect(addr).await.expect("connect"));
    }
    open
}

/// Read what the server sends until it closes (or `within` passes):
/// the status code of the response, if one came.
async fn read_status(stream: &mut TcpStream, within: Duration) -> Option<u16> {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + within;
    while let Ok(Ok(n)) = tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
        if got.windows(4).any(|w| w == b"\r\n\r\n") {
            break;
        }
    }
    let head = String::from_utf8_lossy(&got);
    head.strip_prefix("HTTP/1.1 ")
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse().ok())
}

/// True when the server has closed the connection (EOF or reset) within `within`.
async fn closed_by_server(stream: &mut TcpStream, within: Duration) -> bool {
    let mut buf = [0u8; 64];
    matches!(
        tokio::time::timeout(within, stream.read(&mut buf)).await,
        Ok(Ok(0)) | Ok(Err(_))
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eleven_hundred_idle_connections_do_not_take_the_server_offline() {
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits {
        header_timeout: Duration::from_secs(2),
        ..Limits::default()
    };
    let t = serve_with(dir.path(), limits).await;
    let mut idle = idle_connections(t.server.addr, 1100).await;
    let asked = Instant::now();
    assert_eq!(ping(t.server.addr, Duration::from_secs(5)).await, Ok(200));
    let status = t.get("/status").await;
    assert_eq!(status.status, 200, "{}", status.body);
    assert!(
        asked.elapsed() < Duration::from_secs(5),
        "answers took {:?} with 1,100 idle connections open",
        asked.elapsed()
    );
    // They are closed once idle past the header timeout: their descriptors
    // and buffers are not held forever.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mut still_open = 0;
    for stream in &mut idle {
        if !closed_by_server(stream, Duration::from_millis(20)).await {
            still_open += 1;
        }
    }
    assert_eq!(still_open, 0, "idle connections left open");
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_are_closed_and_over_the_cap_ping_still_answers() {
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits {
        max_connections: 16,
        header_timeout: Duration::from_secs(1),
        ..Limits::default()
    };
    let t = serve_with(dir.path(), limits).await;
    // More than the cap: 16 are served, the rest wait in the backlog.
    let mut idle = idle_connections(t.server.addr, 40).await;
    let asked = Instant::now();
    assert_eq!(ping(t.server.addr, Duration::from_secs(10)).await, Ok(200));
    let waited = asked.elapsed();
    assert!(
        waited < Duration::from_secs(6),
        "/ping waited {waited:?} behind idle connections"
    );
    // The first idle connection was served, and closed for idling.
    assert!(closed_by_server(&mut idle[0], Duration::from_secs(3)).await);
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_trickles_is_cut_after_the_body_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits {
        body_timeout: Duration::from_secs(1),
        ..Limits::default()
    };
    let t = serve_with(dir.path(), limits).await;
    let before = t.dump_state();
    let mut stream = TcpStream::connect(t.server.addr).await.unwrap();
    let head = format!(
        "POST /api/v1/manifests?repo=o/r&run_id=5 HTTP/1.1\r\nHost: x\r\n\
         Authorization: Bearer {TOKEN}\r\nContent-Type: application/x-ndjson\r\n\
         Content-Length: 4000\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let sent = Instant::now();
    let (mut reader, mut writer) = stream.into_split();
    // One byte every 100 ms: 4,000 bytes would take 400 s. Bounded: 60 bytes.
    let trickle = tokio::spawn(async move {
        let line = br#"{"type":"create_issue","number":1}"#;
        for byte in line.iter().cycle().take(60) {
            if writer.write_all(&[*byte]).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while let Ok(Ok(n)) = tokio::time::timeout(Duration::from_secs(5), reader.read(&mut buf)).await
    {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    let cut_after = sent.elapsed();
    trickle.abort();
    let answer = String::from_utf8_lossy(&got);
    assert!(
        answer.starts_with("HTTP/1.1 408"),
        "expected a 408, got {answer:?}"
    );
    assert!(
        cut_after >= Duration::from_secs(1) && cut_after < Duration::from_secs(4),
        "cut after {cut_after:?}"
    );
    t.unchanged(&before, "a cut body stores nothing").await;
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_beyond_the_in_flight_budget_get_503_with_retry_after() {
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits {
        body_budget: 64 * 1024,
        budget_wait: Duration::from_millis(200),
        ..Limits::default()
    };
    let t = serve_with(dir.path(), limits).await;
    let url = format!("{}/api/github/webhooks", t.server.url());
    // A slow sender holds 65,000 of the 65,536 budget bytes.
    let mut holder = TcpStream::connect(t.server.addr).await.unwrap();
    let head = "POST /api/github/webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
                X-GitHub-Event: issues\r\nX-GitHub-Delivery: slow\r\nX-Hub-Signature-256: sha256=00\r\n\
                Content-Length: 65000\r\n\r\n{";
    holder.write_all(head.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;

    let body = serde_json::json!({"action": "opened", "padding": "x".repeat(2000)}).to_string();
    let send = || {
        reqwest::Client::new()
            .post(&url)
            .header("content-type", "application/json")
            .header("x-github-event", "issues")
            .header("x-github-delivery", "d-budget")
            .header(
                "x-hub-signature-256",
                safe_outcomes::ingest::signature::sign(SECRET, body.as_bytes()),
            )
            .body(body.clone())
            .send()
    };
    let before = t.dump_state();
    let refused = send().await.unwrap();
    assert_eq!(refused.status(), 503);
    assert_eq!(
        refused.headers()["retry-after"].to_str().unwrap(),
        "2",
        "503 tells when to come back"
    );
    t.unchanged(&before, "a refused body stores nothing").await;

    // The slow sender goes away: its bytes are given back.
    drop(holder);
    let deadline = Instant::now() + Duration::from_secs(5);
    let status = loop {
        let status = send().await.unwrap().status().as_u16();
        if status != 503 || Instant::now() > deadline {
            break status;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(status < 300, "after the budget is free: {status}");
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chunked_body_beyond_the_budget_gets_503() {
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits {
        body_budget: 16 * 1024,
        ..Limits::default()
    };
    let t = serve_with(dir.path(), limits).await;
    let before = t.dump_state();
    let mut stream = TcpStream::connect(t.server.addr).await.unwrap();
    let head = "POST /api/github/webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
                X-GitHub-Event: issues\r\nX-GitHub-Delivery: chunked\r\nTransfer-Encoding: chunked\r\n\r\n";
    stream.write_all(head.as_bytes()).await.unwrap();
    // 32 KiB in 4 KiB chunks: twice the budget.
    let chunk = format!("1000\r\n{}\r\n", "x".repeat(4096));
    for _ in 0..8 {
        if stream.write_all(chunk.as_bytes()).await.is_err() {
            break;
        }
    }
    let _ = stream.write_all(b"0\r\n\r\n").await;
    assert_eq!(
        read_status(&mut stream, Duration::from_secs(5)).await,
        Some(503)
    );
    t.unchanged(&before, "nothing is stored").await;
    t.stop().await;
}
