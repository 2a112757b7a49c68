//! Raw webhook requests for the tests of refused input (`bad_input`,
//! `hostile_input`): the headers GitHub sends, signed over a body, changed
//! one header at a time, and posted exactly as given; and the check that a
//! refusal stored nothing.

use crate::common::{TestApp, SECRET};
use safe_outcomes::ingest::signature::sign;
use serde_json::{json, Value};

/// The webhook path the test App serves.
pub const HOOK: &str = "/api/github/webhooks";

pub type Headers = Vec<(&'static str, String)>;

/// The headers GitHub sends with delivery `delivery` of `event`, signed over
/// `body`.
pub fn signed(body: &[u8], event: &str, delivery: &str) -> Headers {
    vec![
        ("content-type", "application/json".into()),
        ("x-github-event", event.into()),
        ("x-github-delivery", delivery.into()),
        ("x-hub-signature-256", sign(SECRET, body)),
    ]
}

/// `headers` with `name` set to `value` (last), or left out (`None`).
pub fn with(mut headers: Headers, name: &'static str, value: Option<String>) -> Headers {
    headers.retain(|(k, _)| *k != name);
    if let Some(v) = value {
        headers.push((name, v));
    }
    headers
}

/// POST `body` with `headers` to the webhook; the status and the answer
/// (as JSON, or as a JSON string when it is not JSON).
pub async fn post(t: &TestApp, headers: &[(&str, String)], body: Vec<u8>) -> (u16, Value) {
    let mut req = reqwest::Client::new().post(format!("{}{HOOK}", t.server.url()));
    for (k, v) in headers {
        req = req.header(*k, v);
    }
    let resp = req.body(body).send().await.unwrap();
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(json!(text)))
}

/// The time the refused-input tests' App starts at.
pub fn start() -> chrono::DateTime<chrono::Utc> {
    "2026-10-01T00:00:00Z".parse().unwrap()
}

/// Once the worker is idle, the store is still `before`.
pub async fn assert_unchanged(t: &TestApp, before: &[(String, String)]) {
    t.app.wait_idle().await;
    assert_eq!(
        t.dump(),
        before,
        "refused requests must not change the store"
    );
}

/// POST `body` with `headers` and check the refusal: status `expected` and a
/// JSON error body (`error`, `detail`); `name` says which case failed.
pub async fn assert_refused(
    t: &TestApp,
    name: &str,
    headers: &[(&str, String)],
    body: Vec<u8>,
    expected: u16,
) {
    let (status, answer) = post(t, headers, body).await;
    assert_eq!(status, expected, "{name}: {answer}");
    assert!(
        answer["error"].is_string() && answer["detail"].is_string(),
        "{name}: JSON error body, got {answer}"
    );
}

/// A fresh App for one test, with the directory that must outlive it.
pub async fn fresh_app() -> (tempfile::TempDir, TestApp) {
    let dir = tempfile::tempdir().unwrap();
    let t = TestApp::start(dir.path(), start()).await;
    (dir, t)
}
