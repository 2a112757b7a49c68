//! Bad input gets a clear error and changes nothing.

use crate::answers;
use crate::common;
use crate::raw_webhook::{
    assert_refused, assert_unchanged, fresh_app, post, signed, with, Headers,
};
use common::{SECRET, TOKEN};
use safe_outcomes::ingest::signature::sign;

fn good_headers(body: &[u8]) -> Headers {
    signed(body, "issues", "d-1")
}

#[tokio::test]
async fn every_bad_webhook_is_refused_with_its_status_and_stores_nothing() {
    let (_dir, t) = fresh_app().await;
    let body =
        std::fs::read(common::manifest_dir().join("fixtures/webhooks/issues/opened.gh-aw.json"))
            .unwrap();
    let before = t.dump();

    let malformed = b"{\"action\": \"opened\", ".to_vec();
    let huge = vec![b' '; 25 * 1024 * 1024 + 1];
    type Case<'a> = (&'a str, Vec<(&'a str, String)>, Vec<u8>, u16);
    let cases: Vec<Case> = vec![
        (
            "wrong signature",
            with(
                good_headers(&body),
                "x-hub-signature-256",
                Some(sign("not-the-secret", &body)),
            ),
            body.clone(),
            401,
        ),
        (
            "signature of another body",
            with(
                good_headers(&body),
                "x-hub-signature-256",
                Some(sign(SECRET, b"{}")),
            ),
            body.clone(),
            401,
        ),
        (
            "missing signature",
            with(good_headers(&body), "x-hub-signature-256", None),
            body.clone(),
            401,
        ),
        (
            "sha1 signature",
            with(
                good_headers(&body),
                "x-hub-signature-256",
                Some("sha1=abc".into()),
            ),
            body.clone(),
            401,
        ),
        (
            "malformed JSON",
            good_headers(&malformed),
            malformed.clone(),
            400,
        ),
        (
            "JSON that is not an object",
            good_headers(b"[1,2]"),
            b"[1,2]".to_vec(),
            400,
        ),
        (
            "invalid UTF-8",
            good_headers(b"{\"a\":\"\xff\"}"),
            b"{\"a\":\"\xff\"}".to_vec(),
            400,
        ),
        (
            "wrong content type",
            with(
                good_headers(&body),
                "content-type",
                Some("application/x-www-form-urlencoded".into()),
            ),
            body.clone(),
            415,
        ),
        (
            "missing event header",
            with(good_headers(&body), "x-github-event", None),
            body.clone(),
            400,
        ),
        (
            "missing delivery header",
            with(good_headers(&body), "x-github-delivery", None),
            body.clone(),
            400,
        ),
        ("over 25 MiB", good_headers(&huge), huge.clone(), 413),
    ];
    for (name, headers, body, expected) in cases {
        assert_refused(&t, name, &headers, body, expected).await;
    }
    assert_unchanged(&t, &before).await;

    // The process is still up and a good delivery still goes through.
    let (status, _) = post(&t, &good_headers(&body), body.clone()).await;
    assert_eq!(status, 202);
    t.stop().await;
}

#[tokio::test]
async fn unknown_events_and_actions_are_acknowledged_and_ignored() {
    let (_dir, t) = fresh_app().await;
    let before = t.dump();
    let body = br#"{"action":"created","sender":{"login":"x","type":"User"}}"#.to_vec();
    let headers = with(
        good_headers(&body),
        "x-github-event",
        Some("sponsorship".into()),
    );
    let (status, answer) = post(&t, &headers, body).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["status"], "ignored");
    assert_unchanged(&t, &before).await;
    t.stop().await;
}

/// (The read API without the token, or with a wrong one, is
/// `security::the_read_api_refuses_requests_without_the_bearer_token`.)
#[tokio::test]
async fn manifest_ingest_requires_the_bearer_token() {
    let (_dir, t) = fresh_app().await;
    let http = reqwest::Client::new();
    let before = t.dump();
    let resp = http
        .post(format!(
            "{}/api/v1/manifests?repo=o/r&run_id=1",
            t.server.url()
        ))
        .header("content-type", "application/x-ndjson")
        .body(r#"{"type":"create_issue","number":1}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    let resp = http
        .post(format!(
            "{}/api/v1/manifests?repo=o/r&run_id=1",
            t.server.url()
        ))
        .bearer_auth(TOKEN)
        .header("content-type", "application/pdf")
        .body(r#"{"type":"create_issue","number":1}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 415);
    // Health endpoints are open and say nothing about repositories.
    let status = answers::text(http.get(format!("{}/status", t.server.url()))).await;
    assert!(status.contains("\"backlog\""), "{status}");
    assert_eq!(
        answers::text(http.get(format!("{}/ping", t.server.url()))).await,
        "PONG"
    );
    assert_unchanged(&t, &before).await;
    t.stop().await;
}

#[tokio::test]
async fn a_manifest_line_that_does_not_parse_is_reported_and_the_rest_count() {
    let (_dir, t) = fresh_app().await;
    let body = [
        r#"{"type":"create_issue","url":"https://github.com/o/r/issues/5","number":5,"repo":"o/r","timestamp":"2026-10-01T00:00:00Z"}"#,
        r#"{"type":"create_issue", "number": "#,
        r#"{"type":"post_to_slack","timestamp":"2026-10-01T00:00:00Z"}"#,
        r#"[1,2,3]"#,
    ]
    .join("\n");
    let answer = t
        .client
        .post_manifest("o/r", 77, Some("triage"), body.clone())
        .await
        .unwrap();
    assert_eq!(answer.status, 202, "{}", answer.body);
    assert_eq!(answer.body["accepted"], 2);
    let rejected: Vec<u64> = answer.body["rejected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["line"].as_u64().unwrap())
        .collect();
    assert_eq!(rejected, vec![2, 4]);
    let outcomes = t.settled_outcomes().await;
    assert_eq!(
        outcomes.keys().collect::<Vec<_>>(),
        vec!["o/r:77:0", "o/r:77:2"]
    );
    let slack = &outcomes["o/r:77:2"];
    assert_ne!(
        slack.outcome_status,
        safe_outcomes::model::OutcomeStatus::Accepted
    );
    assert!(
        !slack.dedicated_evaluator,
        "an unknown type goes to the generic fallback"
    );

    // Posting the same manifest again changes nothing but the duplicate count.
    let before = t.dump_state();
    let again = t
        .client
        .post_manifest("o/r", 77, Some("triage"), body)
        .await
        .unwrap();
    assert_eq!(again.status, 200);
    assert_eq!(again.body["duplicate"], true);
    t.unchanged(&before, "nothing is stored").await;
    let before = t.dump();

    // A manifest with no usable line is a 400 and stores nothing.
    let answer = t
        .client
        .post_manifest("o/r", 78, None, "not json\n{\"no\":\"type\"}\n".into())
        .await
        .unwrap();
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert_eq!(answer.body["rejected"].as_array().unwrap().len(), 2);
    assert_unchanged(&t, &before).await;
    t.stop().await;
}
