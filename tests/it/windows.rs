//! Checkpoints: each output keeps a snapshot at T+1h, 24h, 7d and 30d, taken
//! from the observations stamped before the checkpoint — also when the App was
//! down when a checkpoint came due.

use crate::common;
use chrono::{DateTime, Duration, Utc};
use common::{comparable, TestApp};
use safe_outcomes::ingest::client::Step;
use safe_outcomes::model::OutcomeStatus;
use serde_json::json;

fn t0() -> DateTime<Utc> {
    "2026-10-01T10:00:00Z".parse().unwrap()
}

fn pr(action: &str, at: DateTime<Utc>, sender: (&str, &str), merged: bool) -> serde_json::Value {
    let ts = at.to_rfc3339();
    json!({
        "action": action,
        "number": 1,
        "pull_request": {
            "number": 1, "node_id": "PR_1", "html_url": "https://github.com/o/r/pull/1",
            "title": "[ci-coach] Cache cargo registry", "body": "Speeds up CI.",
            "state": if action == "closed" { "closed" } else { "open" },
            "merged": merged, "merged_at": if merged { json!(ts) } else { json!(null) },
            "merged_by": if merged { json!({"login": sender.0, "type": sender.1}) } else { json!(null) },
            "draft": false, "user": {"login": "github-actions[bot]", "type": "Bot"},
            "labels": [], "assignees": [], "requested_reviewers": [], "requested_teams": [],
            "base": {"ref": "main", "sha": "b0"}, "head": {"ref": "ci-coach-cache", "sha": "h1"},
            "created_at": t0().to_rfc3339(), "updated_at": ts,
            "closed_at": if action == "closed" { json!(ts) } else { json!(null) }
        },
        "repository": {"full_name": "o/r", "name": "r", "owner": {"login": "o"}},
        "installation": {"id": 1},
        "sender": {"login": sender.0, "type": sender.1}
    })
}

fn review(at: DateTime<Utc>) -> serde_json::Value {
    let mut p = pr("submitted", at, ("alice", "User"), false);
    p["review"] = json!({"id": 77, "state": "approved", "submitted_at": at.to_rfc3339(),
                         "user": {"login": "alice", "type": "User"}});
    p
}

/// A PR opened at T0, approved at T0+2h, merged at T0+3d.
fn steps() -> Vec<Step> {
    let bot = ("github-actions[bot]", "Bot");
    vec![
        Step::Manifest {
            at: t0() + Duration::minutes(1),
            repo: "o/r".into(),
            run_id: 5,
            workflow: Some("ci-coach".into()),
            lines: vec![
                json!({"type": "create_pull_request", "number": 1, "url": "https://github.com/o/r/pull/1", "repo": "o/r", "timestamp": t0().to_rfc3339()}),
            ],
            raw_lines: vec![],
        },
        Step::Webhook {
            at: t0() + Duration::minutes(1),
            event: "pull_request".into(),
            delivery: "d1".into(),
            payload: pr("opened", t0(), bot, false),
        },
        Step::Webhook {
            at: t0() + Duration::hours(2),
            event: "pull_request_review".into(),
            delivery: "d2".into(),
            payload: review(t0() + Duration::hours(2)),
        },
        Step::Webhook {
            at: t0() + Duration::days(3),
            event: "pull_request".into(),
            delivery: "d3".into(),
            payload: pr("closed", t0() + Duration::days(3), ("bob", "User"), true),
        },
    ]
}

#[tokio::test]
async fn checkpoints_missed_while_down_equal_an_uninterrupted_run() {
    // Uninterrupted: the clock walks through every checkpoint with the App up.
    let dir = tempfile::tempdir().unwrap();
    let t = TestApp::start(dir.path(), t0()).await;
    t.play(&steps()).await;
    for hours in [1, 24, 24 * 7, 24 * 30, 24 * 31] {
        t.advance_to(t0() + Duration::hours(hours) + Duration::seconds(1))
            .await;
    }
    let reference = t.outcomes().await.remove("o/r:5:0").unwrap();
    t.stop().await;
    let w = &reference.windows;
    assert_eq!(w.keys().collect::<Vec<_>>(), vec!["1h", "24h", "7d", "30d"]);
    assert_eq!(w["1h"].outcome_status, OutcomeStatus::Pending);
    assert_eq!(
        w["24h"].outcome_status,
        OutcomeStatus::Pending,
        "open PR at 24 h is pending"
    );
    assert_eq!(w["7d"].outcome_status, OutcomeStatus::Accepted);
    assert_eq!(w["30d"].human_check_signal, "merged");

    // Interrupted: stop after the first delivery, before any checkpoint; the
    // later deliveries arrive after the App comes back 31 days later.
    let dir = tempfile::tempdir().unwrap();
    let all = steps();
    let t = TestApp::start(dir.path(), t0()).await;
    t.play(&all[..2]).await;
    t.stop().await;
    let later = t0() + Duration::days(31) + Duration::seconds(1);
    let t = TestApp::start(dir.path(), later).await;
    t.app.wait_ready().await;
    // The start-up pass took the checkpoints that came due while down.
    let before = t.outcomes().await.remove("o/r:5:0").unwrap();
    assert_eq!(before.windows.len(), 4, "{:?}", before.windows.keys());
    assert_eq!(before.windows["24h"].outcome_status, OutcomeStatus::Pending);
    // Late deliveries stamped before a checkpoint still count at that checkpoint.
    for step in &all[2..] {
        t.client.send_step(step).await.unwrap();
    }
    let recovered = t.settled_outcomes().await.remove("o/r:5:0").unwrap();
    t.stop().await;
    assert_eq!(recovered.windows, reference.windows);
    assert_eq!(comparable(recovered), comparable(reference));
}
