//! Workflow, check and revert outcomes end to end through the real router:
//! manifest lines, then webhooks, then the exported outcome records.

use crate::common;
use chrono::{DateTime, Utc};
use common::TestApp;
use safe_outcomes::ingest::client::Step;
use serde_json::{json, Value};

const REPO: &str = "acme/widgets";

fn t(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

fn repo() -> Value {
    json!({"name": "widgets", "full_name": REPO, "owner": {"login": "acme"}})
}

fn hook(at: &str, event: &str, delivery: &str, mut payload: Value) -> Step {
    payload["repository"] = repo();
    Step::Webhook {
        at: t(at),
        event: event.into(),
        delivery: delivery.into(),
        payload,
    }
}

fn manifest(at: &str, run_id: u64, lines: Vec<Value>) -> Step {
    Step::Manifest {
        at: t(at),
        repo: REPO.into(),
        run_id,
        workflow: Some("orchestrator".into()),
        lines,
        raw_lines: vec![],
    }
}

fn human() -> Value {
    json!({"login": "octocat", "type": "User"})
}

fn bot() -> Value {
    json!({"login": "github-actions[bot]", "type": "Bot"})
}

fn run_event(at: &str, action: &str, id: u64, conclusion: Option<&str>) -> Step {
    hook(
        at,
        "workflow_run",
        &format!("wr-{id}-{action}"),
        json!({
            "action": action,
            "workflow_run": {
                "id": id, "path": ".github/workflows/worker.lock.yml", "head_branch": "main",
                "head_sha": "abc1234", "event": "workflow_dispatch",
                "status": if action == "completed" { "completed" } else { "queued" },
                "conclusion": conclusion, "run_attempt": 1,
                "created_at": "2026-06-01T12:00:30Z", "updated_at": at
            },
            "sender": bot()
        }),
    )
}

/// An outcome's status and human-check signal, as strings.
fn status_and_signal(o: &safe_outcomes::model::OutcomeRecord) -> (&str, &str) {
    (o.outcome_status.as_str(), o.human_check_signal.as_str())
}

#[tokio::test]
async fn dispatched_runs_are_judged_by_run_id_and_by_workflow_and_time() {
    let dir = tempfile::tempdir().unwrap();
    let app = TestApp::start(dir.path(), t("2026-06-01T12:00:00Z")).await;
    app.play(&[
        manifest(
            "2026-06-01T12:00:20Z",
            500,
            vec![
                json!({"type": "dispatch_workflow", "workflow_name": "worker", "ref": "main",
                    "metadata": {"run_id": 700}, "timestamp": "2026-06-01T12:00:10Z"}),
                json!({"type": "dispatch_workflow", "workflow_name": "worker", "ref": "main",
                    "timestamp": "2026-06-01T12:00:10Z"}),
            ],
        ),
        run_event("2026-06-01T12:00:31Z", "requested", 701, None),
        run_event("2026-06-01T12:05:00Z", "completed", 700, Some("failure")),
        run_event("2026-06-01T12:06:00Z", "completed", 701, Some("success")),
    ])
    .await;
    let out = app.outcomes().await;
    let by_id = &out["acme/widgets:500:0"];
    assert_eq!(status_and_signal(by_id), ("rejected", "workflow_failed"));
    assert_eq!(by_id.details["correlation"], "run_id");
    let by_time = &out["acme/widgets:500:1"];
    assert_eq!(status_and_signal(by_time), ("accepted", "workflow_success"));
    assert_eq!(by_time.details["correlation"], "workflow_ref_time");
    assert_eq!(by_time.details["run_id"], 701);
    assert!(by_time.dedicated_evaluator);
    app.stop().await;
}

#[tokio::test]
async fn a_revert_of_the_pushed_commit_reaches_the_push_output() {
    let dir = tempfile::tempdir().unwrap();
    let app = TestApp::start(dir.path(), t("2026-06-01T12:00:00Z")).await;
    let pr = |action: &str, at: &str, head: &str, sender: Value| {
        json!({
            "action": action, "number": 42, "before": "c0c0c0c0c0", "after": head,
            "pull_request": {
                "number": 42, "title": "Cache registry", "body": "", "state": "open",
                "merged": false, "draft": false, "user": bot(),
                "head": {"ref": "ci-coach-1", "sha": head}, "base": {"ref": "main", "sha": "b0"},
                "created_at": "2026-05-31T10:00:00Z", "updated_at": at
            },
            "sender": sender
        })
    };
    app.play(&[
        hook(
            "2026-06-01T12:00:05Z",
            "pull_request",
            "pr-sync-1",
            pr("synchronize", "2026-06-01T12:00:05Z", "c1c1c1c1c1", bot()),
        ),
        manifest(
            "2026-06-01T12:00:20Z",
            501,
            vec![json!({"type": "push_to_pull_request_branch",
                "url": "https://github.com/acme/widgets/pull/42",
                "metadata": {"commit_sha": "c1c1c1c1c1"}, "timestamp": "2026-06-01T12:00:10Z"})],
        ),
        hook(
            "2026-06-01T12:10:00Z",
            "check_run",
            "cr-1",
            json!({"action": "completed", "check_run": {
                "id": 9, "name": "test", "head_sha": "c1c1c1c1c1", "status": "completed",
                "conclusion": "failure", "completed_at": "2026-06-01T12:10:00Z",
                "app": {"slug": "github-actions"}}, "sender": bot()}),
        ),
        // A human reverts the agent's commit on the PR branch.
        hook(
            "2026-06-01T15:00:00Z",
            "push",
            "push-revert-1",
            json!({"ref": "refs/heads/ci-coach-1", "before": "c1c1c1c1c1", "after": "d2d2d2d2d2",
                "forced": false,
                "commits": [{"id": "d2d2d2d2d2", "timestamp": "2026-06-01T15:00:00Z",
                    "message": "Revert \"Cache registry\"\n\nThis reverts commit c1c1c1c1c1."}],
                "head_commit": {"id": "d2d2d2d2d2", "timestamp": "2026-06-01T15:00:00Z"},
                "sender": human()}),
        ),
    ])
    .await;
    // Read the store: the export of a single record parses as one JSON value.
    let push = app
        .app
        .store
        .output("acme/widgets:501:0")
        .unwrap()
        .and_then(|s| s.outcome)
        .expect("the push output has an outcome");
    assert_eq!(
        (
            push.outcome_status.as_str(),
            push.evidence_strength.as_str(),
            push.human_check_signal.as_str()
        ),
        ("rejected", "strong", "commit_reverted"),
        "{push:?}"
    );
    assert_eq!(push.details["ci"], "failure");
    app.stop().await;
}
