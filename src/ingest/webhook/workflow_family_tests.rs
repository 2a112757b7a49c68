//! Normalization tests for `workflow_run`, `check_run`, `check_suite`,
//! `code_scanning_alert`, `release`, and revert detection in `push` and
//! `pull_request`: the project's own fixtures, and every shared example.

use chrono::{DateTime, Utc};

use crate::ingest::webhook::discussions::test_fixtures::{
    assert_mangled_fixtures_normalize, own_fixture as own, relevant_delivery as relevant,
    targets_of,
};
use crate::ingest::webhook::{normalize, Normalized};
use crate::model::observation::body_hash;
use crate::model::{Actor, ObservationKind as K};

fn t(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

#[test]
fn workflow_run_is_filed_under_run_file_and_stem() {
    let d = relevant("workflow_run", &own("workflow_run/completed.dispatch.json"));
    assert_eq!(
        targets_of(&d),
        vec![
            "acme/widgets#workflow_run:30433642",
            "acme/widgets#workflow:worker.lock.yml",
            "acme/widgets#workflow:worker",
        ]
    );
    let o = &d.observations[0];
    assert_eq!(o.at, t("2026-05-30T12:04:10Z"));
    assert_eq!(
        o.event,
        K::WorkflowRun {
            run_id: 30433642,
            workflow: ".github/workflows/worker.lock.yml".into(),
            head_branch: Some("main".into()),
            head_sha: Some("acb5820ced9479c074f688cc328bf03f341a511d".into()),
            trigger: "workflow_dispatch".into(),
            status: "completed".into(),
            conclusion: Some("success".into()),
            run_attempt: 1,
        }
    );
    assert!(d
        .observations
        .iter()
        .all(|x| x.event == o.event && x.at == o.at));
    // Redelivery gives the same observations.
    assert_eq!(
        relevant("workflow_run", &own("workflow_run/completed.dispatch.json")),
        d
    );
}

#[test]
fn repository_dispatch_runs_are_also_filed_under_the_pseudo_workflow() {
    let d = relevant(
        "workflow_run",
        &own("workflow_run/requested.repository_dispatch.json"),
    );
    assert_eq!(
        targets_of(&d),
        vec![
            "acme/widgets#workflow_run:30433700",
            "acme/widgets#workflow:deploy.yml",
            "acme/widgets#workflow:deploy",
            "acme/widgets#workflow:repository_dispatch",
        ]
    );
    assert!(
        matches!(&d.observations[0].event, K::WorkflowRun { status, conclusion: None, .. } if status == "queued")
    );
}

#[test]
fn check_runs_are_filed_under_commit_and_id() {
    let d = relevant("check_run", &own("check_run/completed.json"));
    assert_eq!(
        targets_of(&d),
        vec!["acme/widgets#commit:ddd444", "acme/widgets#check_run:4242"]
    );
    let o = &d.observations[0];
    assert_eq!(o.at, t("2026-05-30T15:31:00Z"));
    assert_eq!(
        o.event,
        K::CheckRun {
            check_run_id: 4242,
            name: "test".into(),
            head_sha: "ddd444".into(),
            status: "completed".into(),
            conclusion: Some("timed_out".into()),
            app: Some("github-actions".into()),
        }
    );
}

#[test]
fn a_rerequest_also_keeps_the_action_on_the_check_run() {
    let d = relevant("check_run", &own("check_run/rerequested.json"));
    assert_eq!(d.observations.len(), 3);
    assert!(matches!(d.observations[0].event, K::CheckRun { .. }));
    let last = &d.observations[2];
    assert_eq!(last.target, "acme/widgets#check_run:5151");
    assert_eq!(
        last.event,
        K::Other {
            event: "check_run".into(),
            action: "rerequested".into()
        }
    );
    assert_eq!(last.actor, Some(Actor::new("octocat", "User")));
}

#[test]
fn check_suites_are_filed_under_the_commit() {
    let d = relevant("check_suite", &own("check_suite/completed.json"));
    assert_eq!(targets_of(&d), vec!["acme/widgets#commit:ddd444"]);
    assert_eq!(d.observations[0].at, t("2026-05-30T15:31:05Z"));
    assert!(
        matches!(&d.observations[0].event, K::CheckSuite { conclusion: Some(c), .. } if c == "failure")
    );
}

#[test]
fn code_scanning_alerts_are_filed_by_number_and_path() {
    let d = relevant(
        "code_scanning_alert",
        &own("code_scanning_alert/fixed.json"),
    );
    assert_eq!(
        targets_of(&d),
        vec![
            "acme/widgets#code_scanning_alert:42",
            "acme/widgets#code_scanning_alert:path:src/db.js",
        ]
    );
    let o = &d.observations[0];
    assert_eq!(o.at, t("2026-05-31T10:00:00Z"), "fixed_at, not updated_at");
    assert_eq!(
        o.event,
        K::AlertChanged {
            alert_number: 42,
            state: "fixed".into(),
            action: "fixed".into(),
            dismissed_reason: None,
            rule_id: Some("js/sql-injection".into()),
        }
    );
    // The manifest side builds the same key for the same file.
    let line = serde_json::json!({"type": "create_code_scanning_alert", "file": "./src/db.js"});
    let target = crate::ingest::targets::refine(
        "create_code_scanning_alert",
        line.as_object().unwrap(),
        "acme/widgets",
        None,
    )
    .unwrap();
    assert_eq!(target.key(), d.observations[1].target);
}

#[test]
fn release_edits_carry_the_previous_body() {
    let d = relevant("release", &own("release/edited.json"));
    assert_eq!(
        targets_of(&d),
        vec!["acme/widgets#release:v1.2.0", "acme/widgets#release:v1.2.0"]
    );
    // No updated_at on releases: the latest time in the payload (an asset).
    assert_eq!(d.observations[0].at, t("2026-05-30T08:00:00Z"));
    assert_eq!(
        d.observations[0].event,
        K::ReleaseChanged {
            release_id: 17372790,
            tag: "v1.2.0".into(),
            action: "edited".into(),
            draft: false,
            prerelease: false,
            name: Some("v1.2.0 (final)".into()),
            body_hash: body_hash("Old notes"),
        }
    );
    assert_eq!(
        d.observations[1].event,
        K::Edited {
            title_from: Some("v1.2.0".into()),
            body_hash_from: Some(body_hash("Agent notes")),
            base_from: None,
        }
    );
}

#[test]
fn a_revert_commit_is_filed_under_the_reverted_commit() {
    let d = relevant("push", &own("push/revert.json"));
    assert_eq!(
        targets_of(&d),
        vec![
            "acme/widgets#ref:main",
            "acme/widgets#commit:0123456789abcdef0123456789abcdef01234567",
        ]
    );
    assert_eq!(
        d.observations[1].event,
        K::Reverted {
            by: "aaa111".into(),
            reverted_sha: Some("0123456789abcdef0123456789abcdef01234567".into()),
            landed: true,
        }
    );
    assert_eq!(d.observations[1].at, t("2026-06-02T09:00:00Z"));
    // The same revert pushed to another branch (GitHub's revert button makes
    // `revert-N-…` first) has not landed.
    let mut on_branch: serde_json::Value =
        serde_json::from_slice(&own("push/revert.json")).unwrap();
    on_branch["ref"] = "refs/heads/revert-42-fix".into();
    on_branch["repository"]["default_branch"] = "main".into();
    let d = relevant("push", on_branch.to_string().as_bytes());
    assert!(matches!(
        d.observations[1].event,
        K::Reverted { landed: false, .. }
    ));
    // The ordinary push fixture has no revert.
    assert_eq!(
        relevant("push", &own("push/push.json")).observations.len(),
        1
    );
}

#[test]
fn reverted_sha_parsing() {
    use super::super::push::reverted_sha;
    assert_eq!(
        reverted_sha("Revert \"x\"\n\nThis reverts commit ABCDEF1234.").as_deref(),
        Some("abcdef1234")
    );
    assert_eq!(reverted_sha("This reverts commit abc."), None, "too short");
    assert_eq!(reverted_sha("Reverts a thing"), None);
}

#[test]
fn a_merged_revert_pr_is_filed_under_the_reverted_pr() {
    let d = relevant("pull_request", &own("pull_request/closed.revert.json"));
    assert_eq!(targets_of(&d), vec!["acme/widgets#57", "acme/widgets#42"]);
    let o = &d.observations[1];
    assert_eq!(o.at, t("2026-06-02T09:00:00Z"));
    assert_eq!(
        o.event,
        K::Reverted {
            by: "#57".into(),
            reverted_sha: None,
            landed: true,
        }
    );
    // Not merged: no revert.
    let mut v: serde_json::Value =
        serde_json::from_slice(&own("pull_request/closed.revert.json")).unwrap();
    v["pull_request"]["merged"] = false.into();
    v["pull_request"]["merged_at"] = serde_json::Value::Null;
    let d = relevant("pull_request", &serde_json::to_vec(&v).unwrap());
    assert_eq!(d.observations.len(), 1);
    // The ordinary merged PR fixture is not a revert.
    let d = relevant("pull_request", &own("pull_request/closed.merged.json"));
    assert_eq!(d.observations.len(), 1);
}

#[test]
fn mentions_are_the_bodys_own_repository_numbers_once_each() {
    use super::super::threads::mentioned;
    let repo = "acme/widgets";
    let cases: [(&str, &[u64]); 8] = [
        ("Reverts #42", &[42]),
        ("Fixes #7, see #9 and #7 again", &[7, 9]),
        ("Reverts acme/widgets#42 (and Acme/Widgets#43)", &[42, 43]),
        ("see other/repo#9 and x/y#10", &[]),
        ("an entity &#39; and abc#12 and issue#13", &[]),
        ("#5 at the start; (#6) in brackets", &[5, 6]),
        ("no number: # and #x", &[]),
        ("", &[]),
    ];
    for (body, want) in cases {
        assert_eq!(mentioned(body, repo), want.to_vec(), "{body:?}");
    }
}

#[test]
fn reverted_pr_parsing() {
    use super::super::threads::reverted_pr;
    assert_eq!(
        reverted_pr("Reverts acme/widgets#42", "acme/widgets"),
        Some(42)
    );
    assert_eq!(reverted_pr("Reverts #42", "acme/widgets"), Some(42));
    assert_eq!(reverted_pr("Reverts other/repo#42", "acme/widgets"), None);
    assert_eq!(
        reverted_pr("This undoes #7 (see x/y#9)", "acme/widgets"),
        Some(7)
    );
    assert_eq!(reverted_pr("see x/y#9 and &#39;", "acme/widgets"), None);
    assert_eq!(reverted_pr("no reference", "acme/widgets"), None);
}

#[test]
fn releases_and_alerts_without_a_time_of_their_own_are_ignored() {
    let reopened = serde_json::json!({
        "action": "reopened",
        "alert": {"number": 1, "created_at": "2020-07-22T14:06:31Z", "state": "open"},
        "repository": {"full_name": "acme/widgets"}
    });
    match normalize(
        "code_scanning_alert",
        "d",
        &serde_json::to_vec(&reopened).unwrap(),
    )
    .unwrap()
    {
        Normalized::Ignored { reason } => assert!(reason.contains("timestamp"), "{reason}"),
        other => panic!("{other:?}"),
    }
    let odd = serde_json::json!({
        "action": "published",
        "release": {"tag_name": 5},
        "repository": {"full_name": "acme/widgets"}
    });
    assert!(matches!(
        normalize("release", "d", &serde_json::to_vec(&odd).unwrap()).unwrap(),
        Normalized::Ignored { .. }
    ));
}

const EVENTS: [&str; 5] = [
    "workflow_run",
    "check_run",
    "check_suite",
    "code_scanning_alert",
    "release",
];

/// Every shared example of these events normalizes without error or panic,
/// and every one with a time of its own is relevant.
#[test]
fn every_shared_payload_of_these_events_normalizes() {
    let Some(root) = crate::model::shared_data::shared_path("fixtures/webhooks") else {
        return;
    };
    let mut seen = 0;
    for event in EVENTS {
        let Ok(dir) = std::fs::read_dir(root.join(event)) else {
            println!("skipped: no shared `{event}` examples");
            continue;
        };
        for f in dir.flatten() {
            let path = f.path();
            let body = std::fs::read(&path).unwrap();
            let got =
                normalize(event, "d", &body).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            seen += 1;
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            match got {
                Normalized::Relevant(d) => {
                    assert!(!d.observations.is_empty(), "{name}");
                    assert!(
                        d.observations
                            .iter()
                            .all(|o| !matches!(o.event, K::Other { .. }) || event == "check_run"),
                        "{event}/{name}: {:?}",
                        d.observations
                    );
                }
                // Only octokit's old `reopened` alert lacks a time of its own.
                Normalized::Ignored { reason } => assert!(
                    event == "code_scanning_alert" && name == "reopened.json",
                    "{event}/{name} ignored: {reason}"
                ),
            }
        }
    }
    println!("{seen} shared payloads normalized");
}

/// Junk in any top-level or second-level field never errors or panics.
#[test]
fn mangled_fields_never_error_or_panic() {
    let files = [
        ("workflow_run", "workflow_run/completed.dispatch.json"),
        ("check_run", "check_run/completed.json"),
        ("check_suite", "check_suite/completed.json"),
        ("code_scanning_alert", "code_scanning_alert/fixed.json"),
        ("release", "release/edited.json"),
        ("push", "push/revert.json"),
        ("pull_request", "pull_request/closed.revert.json"),
    ];
    assert_mangled_fixtures_normalize(&files);
}
