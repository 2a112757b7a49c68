//! Security: the read API needs the bearer token; the open health endpoints
//! say nothing about repositories; secrets never reach the logs.

use crate::answers;
use crate::common;
use std::collections::BTreeSet;

use common::serve::ServeChild;
use common::{TestApp, TOKEN};
use safe_outcomes::ingest::client::DEMO_SCENARIO as SCENARIO;
use safe_outcomes::ingest::client::{parse_scenario, Client, Step};
use safe_outcomes::ingest::signature::sign;

fn steps() -> Vec<Step> {
    parse_scenario(SCENARIO).unwrap()
}

/// Titles of the issues and PRs in the demo scenario.
fn titles(steps: &[Step]) -> BTreeSet<String> {
    steps
        .iter()
        .filter_map(|s| match s {
            Step::Webhook { payload, .. } => ["issue", "pull_request"]
                .iter()
                .find_map(|k| payload[*k]["title"].as_str())
                .map(str::to_string),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_read_api_refuses_requests_without_the_bearer_token() {
    let (_dir, t) = TestApp::fresh_demo().await;
    let http = reqwest::Client::new();
    for path in [
        "/api/v1/outputs",
        "/api/v1/outputs?repo=acme/widgets",
        "/api/v1/outputs/acme/widgets:2101:0",
        "/api/v1/runs/acme/widgets/2101",
        "/api/v1/report",
        "/api/v1/export.jsonl",
    ] {
        let url = format!("{}{path}", t.server.url());
        for auth in [
            None,
            Some("Bearer ".to_string()),
            Some("Bearer wrong".to_string()),
            Some(format!("Basic {TOKEN}")),
            Some(format!("Bearer {TOKEN}x")),
        ] {
            let mut req = http.get(&url);
            if let Some(a) = &auth {
                req = req.header("authorization", a);
            }
            let resp = req.send().await.unwrap();
            assert_eq!(resp.status(), 401, "{path} with {auth:?}");
            let body = resp.text().await.unwrap();
            assert!(!body.contains("acme/"), "{path} leaked data: {body}");
        }
        let ok = http.get(&url).bearer_auth(TOKEN).send().await.unwrap();
        assert_eq!(ok.status(), 200, "{path} with the token");
    }
    t.stop().await;
}

#[tokio::test]
async fn status_and_metrics_reveal_no_repository_names_or_titles() {
    let dir = tempfile::tempdir().unwrap();
    let steps = steps();
    let titles = titles(&steps);
    assert!(titles.len() > 5, "{titles:?}");
    let t = TestApp::demo(dir.path()).await;
    let http = reqwest::Client::new();
    for path in ["/status", "/metrics", "/ping"] {
        let req = http
            .get(format!("{}{path}", t.server.url()))
            .bearer_auth(TOKEN);
        let body = answers::text(req).await;
        for needle in ["acme/", "widgets", "maria-lopez", "github-actions"] {
            assert!(!body.contains(needle), "{path} shows {needle:?}:\n{body}");
        }
        for title in &titles {
            assert!(!body.contains(title.as_str()), "{path} shows {title:?}");
        }
    }
    t.stop().await;
}

#[tokio::test]
async fn secrets_never_appear_in_the_logs() {
    let secret = "whsec-7c1d0f9e2b-do-not-log";
    let token = "apitok-5a8e33c1f0-do-not-log";
    let key_body = "MIIEowIBAAKCAQEA1s9bKdoNotLogThisKeyMaterial";
    let private_key =
        format!("-----BEGIN RSA PRIVATE KEY-----\n{key_body}\n-----END RSA PRIVATE KEY-----\n");
    let dir = tempfile::tempdir().unwrap();
    let mut serve = ServeChild::start(
        dir.path(),
        &[
            ("WEBHOOK_SECRET", secret),
            ("API_TOKEN", token),
            ("PRIVATE_KEY", &private_key),
            ("LOG_LEVEL", "debug"),
        ],
    )
    .await;
    let client = Client::new(&serve.url, Some(secret.into()), Some(token.into()));
    for step in steps().iter().take(30) {
        client.send_step(step).await.unwrap();
    }
    // Refused requests log their reason: a bad signature, a wrong token.
    let body = br#"{"action":"opened"}"#;
    let bad = Client::new(
        &serve.url,
        Some("not-the-secret".into()),
        Some("nope".into()),
    );
    assert_eq!(
        bad.deliver("issues", "bad-1", body).await.unwrap().status,
        401
    );
    let http = reqwest::Client::new();
    let resp = http
        .post(format!("{}/api/github/webhooks", serve.url))
        .header("content-type", "application/json")
        .header("x-github-event", "issues")
        .header("x-github-delivery", "bad-2")
        .header("x-hub-signature-256", sign(secret, b"another body"))
        .body(body.to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    assert_eq!(bad.get("/api/v1/report").await.unwrap().status, 401);
    assert_eq!(
        client.get("/api/v1/export.jsonl").await.unwrap().status,
        200
    );
    serve.terminate().await;
    let logs = serve.output();
    assert!(logs.contains("listening on"), "{logs}");
    assert!(
        logs.contains("webhook refused"),
        "debug logs were captured: {logs}"
    );
    for needle in [
        secret,
        token,
        key_body,
        "PRIVATE KEY",
        &sign(secret, body)[7..],
    ] {
        assert!(!logs.contains(needle), "the logs contain {needle:?}");
    }
}
