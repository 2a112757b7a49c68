//! Hostile input at the webhook: truncated, mislabelled, oversized (declared
//! and chunked), malformed, deeply nested, huge, or signed for something else.
//! Each gets its documented status and a JSON error (docs/architecture.md, "HTTP surface"), the
//! process stays up, and the store does not change.

use crate::common;
use crate::raw_webhook::{
    self, assert_refused, assert_unchanged, fresh_app, post, with, Headers, HOOK,
};
use std::time::Duration;

use common::{TestApp, SECRET};
use safe_outcomes::ingest::signature::sign;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn issue_body() -> Vec<u8> {
    std::fs::read(common::manifest_dir().join("fixtures/webhooks/issues/opened.gh-aw.json"))
        .unwrap()
}

/// Headers GitHub sends, signed over `body`.
fn signed(body: &[u8], event: &str) -> Headers {
    raw_webhook::signed(body, event, "hostile-1")
}

fn without(h: Headers, name: &'static str) -> Headers {
    with(h, name, None)
}

fn replaced(h: Headers, name: &'static str, value: &str) -> Headers {
    with(h, name, Some(value.to_string()))
}

/// Send raw bytes on a fresh connection; returns the status line's code, if any.
async fn raw_request(t: &TestApp, head: &str, chunks: Vec<Vec<u8>>) -> Option<u16> {
    let mut stream = TcpStream::connect(t.server.addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    for chunk in chunks {
        // The server may answer and close before all is sent: stop writing then.
        if stream.write_all(&chunk).await.is_err() {
            break;
        }
    }
    let _ = stream.shutdown().await;
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut answer)).await;
    let text = String::from_utf8_lossy(&answer);
    text.split_whitespace().nth(1).and_then(|c| c.parse().ok())
}

async fn assert_alive(t: &TestApp) {
    let pong = reqwest::get(format!("{}/ping", t.server.url()))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(pong, "PONG");
}

/// A hostile test's end: the server still answers and the store is still
/// `before`; then the server stops.
async fn stop_unharmed(t: TestApp, before: &[(String, String)]) {
    assert_alive(&t).await;
    assert_unchanged(&t, before).await;
    t.stop().await;
}

#[tokio::test]
async fn hostile_bodies_and_headers_get_their_documented_errors() {
    let (_dir, t) = fresh_app().await;
    let body = issue_body();
    let before = t.dump();

    let truncated = body[..body.len() / 2].to_vec();
    let nested_open = [b"{\"a\":".to_vec(), vec![b'['; 100_000]].concat();
    let nested_closed = [
        b"{\"a\":".to_vec(),
        vec![b'['; 100_000],
        vec![b']'; 100_000],
        b"}".to_vec(),
    ]
    .concat();
    let mut bad_utf8 = body.clone();
    let at = bad_utf8.iter().position(|b| *b == b'"').unwrap() + 1;
    bad_utf8.insert(at, 0xc3);
    bad_utf8.insert(at + 1, 0x28);
    let huge_top_array = format!("[{}1]", "1,".repeat(2_000_000)).into_bytes();
    let other_body = br#"{"action":"opened"}"#.to_vec();

    // Hostile bodies, each signed as itself.
    let bodies: [(&str, &[u8], u16); 6] = [
        ("truncated body", &truncated, 400),
        ("empty body", b"", 400),
        ("invalid UTF-8 in a string", &bad_utf8, 400),
        ("100k unclosed [", &nested_open, 400),
        ("100k nested arrays", &nested_closed, 400),
        ("a 4 MB top-level array", &huge_top_array, 400),
    ];
    for (name, bytes, expected) in bodies {
        let headers = signed(bytes, "issues");
        assert_refused(&t, name, &headers, bytes.to_vec(), expected).await;
        assert_alive(&t).await;
    }
    // The good body under hostile headers.
    let good = || signed(&body, "issues");
    let form = "application/x-www-form-urlencoded";
    let sig = "x-hub-signature-256";
    let headers = [
        (
            "content type text/plain",
            replaced(good(), "content-type", "text/plain"),
            415,
        ),
        (
            "content type form",
            replaced(good(), "content-type", form),
            415,
        ),
        ("no content type", without(good(), "content-type"), 415),
        ("no signature", without(good(), sig), 401),
        ("empty signature", replaced(good(), sig, ""), 401),
        (
            "signature for another body",
            replaced(good(), sig, &sign(SECRET, &other_body)),
            401,
        ),
        (
            "signature with another secret",
            replaced(good(), sig, &sign("guess", &body)),
            401,
        ),
        ("no event header", without(good(), "x-github-event"), 400),
        (
            "no delivery header",
            without(good(), "x-github-delivery"),
            400,
        ),
        (
            "delivery id over 128 bytes",
            replaced(good(), "x-github-delivery", &"d".repeat(129)),
            400,
        ),
    ];
    for (name, headers, expected) in headers {
        assert_refused(&t, name, &headers, body.clone(), expected).await;
        assert_alive(&t).await;
    }
    stop_unharmed(t, &before).await;
}

#[tokio::test]
async fn valid_but_unwanted_json_is_acknowledged_and_stores_nothing() {
    let (_dir, t) = fresh_app().await;
    let before = t.dump();
    // A huge array inside an event we do not handle, and events we do not know.
    let labels: Vec<Value> = (0..200_000)
        .map(|i| json!({"name": format!("l{i}")}))
        .collect();
    let big = serde_json::to_vec(&json!({"action": "created", "labels": labels})).unwrap();
    for (event, body) in [
        ("sponsorship", big),
        ("ping", br#"{"zen":"Keep it logically awesome."}"#.to_vec()),
        ("x-made-up-event", br#"{"action":"exploded"}"#.to_vec()),
    ] {
        let (status, answer) = post(&t, &signed(&body, event), body).await;
        assert_eq!(status, 200, "{event}: {answer}");
        assert_eq!(answer["status"], "ignored", "{event}: {answer}");
    }
    stop_unharmed(t, &before).await;
}

#[tokio::test]
async fn oversized_bodies_are_refused_declared_or_chunked() {
    let (_dir, t) = fresh_app().await;
    let before = t.dump();
    let addr = t.server.addr;
    let head = |extra: &str| {
        format!(
            "POST {HOOK} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
             x-github-event: issues\r\nx-github-delivery: big-1\r\n\
             x-hub-signature-256: sha256=00\r\n{extra}\r\n"
        )
    };
    // Declared too large: refused before the body is read.
    let declared = raw_request(
        &t,
        &head(&format!("content-length: {}\r\n", 26 * 1024 * 1024)),
        vec![vec![b' '; 64 * 1024]],
    )
    .await;
    assert_eq!(declared, Some(413));
    // Chunked, no Content-Length: refused once past 25 MiB.
    let mut chunks = Vec::new();
    let piece = vec![b' '; 1024 * 1024];
    for _ in 0..26 {
        let mut c = format!("{:x}\r\n", piece.len()).into_bytes();
        c.extend_from_slice(&piece);
        c.extend_from_slice(b"\r\n");
        chunks.push(c);
    }
    chunks.push(b"0\r\n\r\n".to_vec());
    let chunked = raw_request(&t, &head("transfer-encoding: chunked\r\n"), chunks).await;
    assert_eq!(chunked, Some(413));
    // A body cut short of its declared length: the connection ends, nothing is stored.
    let short = raw_request(&t, &head("content-length: 100000\r\n"), vec![issue_body()]).await;
    assert!(short.is_none_or(|s| s >= 400), "{short:?}");
    stop_unharmed(t, &before).await;
}

/// Every name a delivery carries into a store key is checked with the
/// `model::ident` rules: a bad repository (in `full_name` or in its parts),
/// an installation's repository or account, or a branch, gets a 400 naming
/// the field, and the store does not change. The same deliveries with good
/// names are stored.
#[tokio::test]
async fn a_bad_name_in_a_delivery_is_refused_and_stores_nothing() {
    let (_dir, t) = fresh_app().await;
    let issue: Value = serde_json::from_slice(&issue_body()).unwrap();
    let bad_repos = [
        "acme/widgets#7",
        "acme/wid gets",
        "acme/..",
        "-acme/widgets",
        "acme/widgets:1",
        "acme/w\u{0}x",
        "acme/<img src=x>",
    ];
    let mut cases: Vec<(String, &str, Value, &str)> = Vec::new();
    for bad in bad_repos {
        let mut body = issue.clone();
        body["repository"]["full_name"] = json!(bad);
        cases.push((
            format!("full_name {bad:?}"),
            "issues",
            body,
            "repository.full_name",
        ));
        let (owner, name) = bad.split_once('/').unwrap();
        let mut body = issue.clone();
        body["repository"] = json!({"name": name, "owner": {"login": owner}});
        cases.push((
            format!("parts {bad:?}"),
            "issues",
            body,
            "repository.full_name",
        ));
        let installation = json!({"action": "created",
            "installation": {"id": 5, "account": {"login": "acme", "id": 7}},
            "repositories": [{"full_name": "acme/ok"}, {"full_name": bad}]});
        cases.push((
            format!("installation {bad:?}"),
            "installation",
            installation,
            "repositories[].full_name",
        ));
    }
    let account =
        json!({"action": "created", "installation": {"id": 5, "account": {"login": "ac/me"}}});
    cases.push((
        "account".into(),
        "installation",
        account,
        "installation.account.login",
    ));
    let push = json!({"ref": "refs/heads/main\u{0}x", "before": "a", "after": "b",
        "repository": {"full_name": "acme/widgets", "pushed_at": 1790000000}, "installation": {"id": 5},
        "commits": [], "head_commit": null});
    cases.push(("branch".into(), "push", push, "a key it names"));
    let before = t.dump();
    for (n, (name, event, body, field)) in cases.iter().enumerate() {
        let bytes = serde_json::to_vec(body).unwrap();
        let (status, answer) = post(
            &t,
            &raw_webhook::signed(&bytes, event, &format!("bad-name-{n}")),
            bytes,
        )
        .await;
        assert_eq!(status, 400, "{name}: {answer}");
        let detail = answer["detail"].as_str().unwrap_or_default();
        assert!(
            detail.starts_with(&format!("`{field}` is refused")),
            "{name}: {answer}"
        );
    }
    assert_unchanged(&t, &before).await;
    // The same deliveries with good names are taken.
    let mut good = issue.clone();
    good["repository"]["full_name"] = json!("acme/widgets");
    let bytes = serde_json::to_vec(&good).unwrap();
    let (status, answer) = post(
        &t,
        &raw_webhook::signed(&bytes, "issues", "good-name"),
        bytes,
    )
    .await;
    assert_eq!(status, 202, "{answer}");
    t.stop().await;
}
