//! The read API over the demo scenario: one output with its history, one run
//! shaped like `gh aw outcomes RUN --json`, filters and pagination, the report.

use crate::common;
use common::TestApp;

#[tokio::test]
async fn one_output_comes_with_its_transitions_and_observations() {
    let (_dir, t) = TestApp::fresh_demo().await;
    let a = t.get("/api/v1/outputs/acme/widgets:2101:0").await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["outcome"]["human_check_signal"], "merged");
    assert_eq!(
        a.body["execution"]["safe_output_type"],
        "create_pull_request"
    );
    let transitions = a.body["transitions"].as_array().unwrap();
    let statuses: Vec<&str> = transitions
        .iter()
        .map(|t| t["outcome_status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses.first(), Some(&"pending"), "{transitions:?}");
    assert_eq!(statuses.last(), Some(&"accepted"), "{transitions:?}");
    // The change to accepted names the observation that caused it, and it is listed.
    let cause = transitions.last().unwrap()["observation"].as_str().unwrap();
    let observations = a.body["observations"].as_array().unwrap();
    assert!(
        observations.iter().any(|o| o["id"] == cause),
        "{cause} not among the observations"
    );

    let missing = t.get("/api/v1/outputs/acme/widgets:9:9").await;
    assert_eq!(missing.status, 404);
    assert!(missing.body["error"].is_string());
    t.stop().await;
}

#[tokio::test]
async fn a_run_is_shaped_like_gh_aw_outcomes_json() {
    let (_dir, t) = TestApp::fresh_demo().await;
    let a = t.get("/api/v1/runs/acme/widgets/4101").await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["run_id"], 4101);
    let items = a.body["items"].as_array().unwrap();
    assert_eq!(items.len(), 4);
    for item in items {
        for field in [
            "type",
            "outcome_status",
            "evidence_strength",
            "signal",
            "object_url",
            "repo",
        ] {
            assert!(!item[field].is_null(), "{field} missing in {item}");
        }
    }
    assert_eq!(a.body["summary"]["total"], 4);
    let none = t.get("/api/v1/runs/acme/widgets/1").await;
    assert_eq!(none.status, 404);
    t.stop().await;
}

#[tokio::test]
async fn outputs_filter_and_paginate() {
    let (_dir, t) = TestApp::fresh_demo().await;
    let a = t.get("/api/v1/outputs?repo=acme/docs").await;
    let docs = a.body["items"].as_array().unwrap();
    assert!(!docs.is_empty());
    assert!(docs.iter().all(|o| o["safe_output_id"]
        .as_str()
        .unwrap()
        .starts_with("acme/docs:")));
    let a = t
        .get("/api/v1/outputs?status=rejected&strength=strong")
        .await;
    let rejected = a.body["items"].as_array().unwrap();
    assert!(!rejected.is_empty());
    assert!(rejected
        .iter()
        .all(|o| o["outcome_status"] == "rejected" && o["evidence_strength"] == "strong"));
    assert_eq!(
        t.client
            .get("/api/v1/outputs?status=maybe")
            .await
            .unwrap()
            .status,
        400
    );

    // Walking the pages with the cursor gives every output exactly once.
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = crate::common::outputs_page(5, cursor.as_deref());
        let page = t.get(&path).await;
        for o in page.body["items"].as_array().unwrap() {
            seen.push(o["safe_output_id"].as_str().unwrap().to_string());
        }
        match page.body["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    let all = t.outcomes().await;
    assert_eq!(seen, all.keys().cloned().collect::<Vec<_>>());
    t.stop().await;
}

#[tokio::test]
async fn the_report_takes_a_window_and_a_repo() {
    let (_dir, t) = TestApp::fresh_demo().await;
    let latest = t.get("/api/v1/report").await;
    assert_eq!(latest.status, 200);
    let at_24h = t.get("/api/v1/report?window=24h").await;
    assert_eq!(at_24h.body["window"], "24h");
    // Fewer outputs are accepted at 24 h than at the end: PRs merge later.
    let accepted = |r: &serde_json::Value| {
        r["totals"]["accepted_strong"].as_u64().unwrap()
            + r["totals"]["accepted_medium"].as_u64().unwrap()
    };
    assert!(accepted(&at_24h.body) < accepted(&latest.body));
    let docs = t.get("/api/v1/report?repo=acme/docs").await;
    assert!(
        docs.body["totals"]["total_safe_outputs"].as_u64().unwrap()
            < latest.body["totals"]["total_safe_outputs"]
                .as_u64()
                .unwrap()
    );
    assert_eq!(
        t.client
            .get("/api/v1/report?window=2w")
            .await
            .unwrap()
            .status,
        400
    );
    t.stop().await;
}
