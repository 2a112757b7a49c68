//! GitHub failures read as what the operator must do: `serve` in App mode
//! against a GitHub that cannot be reached, refuses the App's credentials,
//! rate-limits it, or fails on its side. Each class gets one log line of its
//! own, naming the request (method and path) and what to do, and
//! `/status` says the same; nothing else claims a different fault (an
//! unreachable GitHub is not "did not accept the credentials"), and no bare
//! line from the HTTP client comes without context.

use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::routing::any;
use axum::Router;
use serde_json::Value;
use std::time::{Duration, Instant};

use crate::common::serve::ServeChild;

/// A GitHub that answers every request with `status` and `headers`.
async fn github_answering(status: u16, headers: &[(&'static str, &'static str)]) -> String {
    let mut map = HeaderMap::new();
    for (k, v) in headers {
        map.insert(*k, HeaderValue::from_static(v));
    }
    let app = Router::new().fallback(any(move || {
        let map = map.clone();
        async move {
            (
                StatusCode::from_u16(status).unwrap(),
                map,
                r#"{"message":"answered by the test","documentation_url":"https://docs.github.com"}"#,
            )
        }
    }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

/// A URL where nothing listens.
fn nothing_listening() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    drop(l);
    url
}

/// `serve` in App mode against `api`; waits until `/status` shows a GitHub
/// failure, returns it and the log.
async fn serve_against(api: &str) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let key = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/github/test-app-key.pem"
    );
    let mut serve = ServeChild::start(
        dir.path(),
        &[
            ("APP_ID", "4242"),
            ("PRIVATE_KEY_PATH", key),
            ("GITHUB_API_URL", api),
            ("LOG_LEVEL", "info"),
        ],
    )
    .await;
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(45);
    let failure = loop {
        let status: Value = http
            .get(format!("{}/status", serve.url))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let failure = status["github"]["last_error"].clone();
        if !failure.is_null() {
            break failure;
        }
        assert!(
            Instant::now() < deadline,
            "no GitHub failure on /status: {status}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    // Let the log lines of the failure land.
    tokio::time::sleep(Duration::from_millis(500)).await;
    serve.terminate().await;
    (failure, serve.output())
}

/// The failure lines of the log: ERROR or WARN lines.
fn problem_lines(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|l| l.contains("ERROR") || l.contains("WARN"))
        .collect()
}

fn check(failure: &Value, log: &str, class: &str, summary: &str, advice: &str) {
    assert_eq!(failure["class"], class, "{failure}");
    // GET /app (the credentials check) or another App-level call, as
    // GitHub's description names it: method and path.
    let request = failure["request"].as_str().unwrap();
    assert!(request.starts_with("GET /app"), "{failure}");
    assert!(
        failure["what_to_do"].as_str().unwrap().contains(advice),
        "{failure}"
    );
    let lines = problem_lines(log);
    let naming: Vec<_> = lines.iter().filter(|l| l.contains(summary)).collect();
    assert_eq!(naming.len(), 1, "one line for the class: {lines:#?}");
    assert!(
        naming[0].contains(" failed (")
            && naming[0].contains("GET /app")
            && naming[0].contains(advice),
        "{}",
        naming[0]
    );
    assert!(
        !lines.iter().any(|l| l.contains("octocrab")),
        "no line without context: {lines:#?}"
    );
    assert!(
        !log.contains("PRIVATE KEY") && !log.contains("Bearer "),
        "no secret in the log"
    );
}

/// `serve` against a GitHub answering `status` with `headers` reports the
/// failure as `class`, in one log line naming `summary`, with `advice`.
async fn answering_reads_as(
    status: u16,
    headers: &[(&'static str, &'static str)],
    class: &str,
    summary: &str,
    advice: &str,
) {
    let api = github_answering(status, headers).await;
    let (failure, log) = serve_against(&api).await;
    check(&failure, &log, class, summary, advice);
}

#[tokio::test]
async fn an_unreachable_github_reads_as_unreachable_not_as_refused_credentials() {
    let (failure, log) = serve_against(&nothing_listening()).await;
    check(
        &failure,
        &log,
        "unreachable",
        "GitHub could not be reached",
        "GITHUB_API_URL",
    );
    assert!(!log.contains("did not accept"), "{log}");
}

#[tokio::test]
async fn refused_credentials_read_as_refused_credentials() {
    answering_reads_as(
        401,
        &[],
        "credentials_refused",
        "GitHub refused the App's credentials",
        "APP_ID",
    )
    .await;
}

#[tokio::test]
async fn a_rate_limit_reads_as_a_rate_limit() {
    answering_reads_as(
        403,
        &[
            ("x-ratelimit-remaining", "0"),
            ("x-ratelimit-reset", "4102444800"),
        ],
        "rate_limited",
        "GitHub rate-limited the App",
        "reset",
    )
    .await;
}

#[tokio::test]
async fn a_github_server_error_reads_as_githubs_failure() {
    answering_reads_as(
        502,
        &[],
        "server_error",
        "GitHub failed on its side",
        "githubstatus.com",
    )
    .await;
}
