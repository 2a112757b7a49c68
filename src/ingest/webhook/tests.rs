//! Tests over the project's own small fixtures (fixtures/webhooks) and, when
//! present, the octokit example payloads in ../shared.

use std::path::{Path, PathBuf};

use chrono::{TimeZone, Utc};

use super::discussions::test_fixtures::{
    assert_mangled_fixtures_normalize, own_fixture as own, relevant_delivery as relevant,
};
use super::*;
use crate::model::observation::{body_hash, PushedCommit};
use crate::model::{Actor, Target, TargetKind};

fn ignored_reason(event: &str, body: &str) -> String {
    match normalize(event, "d-1", body.as_bytes()).expect("no error") {
        Normalized::Ignored { reason } => reason,
        Normalized::Relevant(d) => panic!("relevant: {d:?}"),
    }
}

fn only(d: &NormalizedDelivery) -> &Observation {
    assert_eq!(d.observations.len(), 1, "{:?}", d.observations);
    &d.observations[0]
}

fn t(s: &str) -> chrono::DateTime<Utc> {
    s.parse().unwrap()
}

#[test]
fn issue_opened_with_a_gh_aw_footer_is_discovered() {
    let d = relevant("issues", &own("issues/opened.gh-aw.json"));
    assert_eq!(d.event, "issues");
    assert_eq!(d.action.as_deref(), Some("opened"));
    assert_eq!(d.repo.as_deref(), Some("acme/widgets"));
    assert_eq!(d.installation_id, Some(555));
    let o = only(&d);
    assert_eq!(o.id, "d-1/0");
    assert_eq!(o.at, t("2026-05-30T12:00:01Z"));
    assert_eq!(o.target, "acme/widgets#41");
    assert_eq!(o.event, ObservationKind::Opened);
    assert_eq!(o.actor, Some(Actor::new("github-actions[bot]", "Bot")));
    let s = o.snapshot.as_ref().unwrap();
    assert_eq!(s.kind, Some(TargetKind::Issue));
    assert_eq!(
        (s.state.as_str(), s.labels.clone()),
        ("open", vec!["ci-coach".to_string()])
    );

    assert_eq!(d.discoveries.len(), 1);
    let r = &d.discoveries[0];
    assert_eq!(r.id, "acme/widgets:1234567890:issue-41");
    assert_eq!(r.output_type, "create_issue");
    assert_eq!(r.run_id, Some(1234567890));
    assert_eq!(r.workflow.as_deref(), Some("ci-coach"));
    assert_eq!(r.executed_at, t("2026-05-30T12:00:01Z"));
    assert_eq!(r.actor.as_deref(), Some("github-actions[bot]"));
    assert!(r.sources.webhook && !r.sources.manifest);
    let mut want = Target::thread("acme/widgets", TargetKind::Issue, 41);
    want.url = Some("https://github.com/acme/widgets/issues/41".into());
    want.node_id = Some("I_kwDOAbc123".into());
    assert_eq!(r.target.as_ref(), Some(&want));
    // Redelivery gives the same result.
    assert_eq!(relevant("issues", &own("issues/opened.gh-aw.json")), d);
}

#[test]
fn pull_request_closed_merged() {
    let d = relevant("pull_request", &own("pull_request/closed.merged.json"));
    let o = only(&d);
    assert_eq!(o.event, ObservationKind::Closed);
    assert_eq!(o.at, t("2026-05-31T09:30:00Z"), "closed_at, not updated_at");
    assert_eq!(o.target, "acme/widgets#42");
    let s = o.snapshot.as_ref().unwrap();
    assert!(s.merged && !s.draft);
    assert_eq!(s.kind, Some(TargetKind::PullRequest));
    assert_eq!(s.state, "closed");
    assert_eq!(s.labels, vec!["ci-coach", "automation"]);
    assert_eq!(s.assignees, vec!["bob"]);
    assert_eq!(s.milestone.as_deref(), Some("v1.2"));
    assert_eq!(s.base.as_deref(), Some("main"));
    assert_eq!(s.head_ref.as_deref(), Some("ci-coach-0123456789abcdef"));
    assert_eq!(s.head_sha.as_deref(), Some("bbb222"));
    assert_eq!(s.requested_reviewers, vec!["carol"]);
    assert_eq!(s.requested_teams, vec!["infra"]);
    assert_eq!(s.author, Some(Actor::new("github-actions[bot]", "Bot")));
    assert_eq!(s.merged_by, Some(Actor::new("alice", "User")));
    assert_eq!(
        s.body_hash,
        body_hash("Caches ~/.cargo/registry.\n\n<!-- gh-aw-workflow-id: ci-coach -->")
    );
    assert!(d.discoveries.is_empty(), "closed is not a creation");
}

#[test]
fn pull_request_edited_keeps_previous_values() {
    let d = relevant("pull_request", &own("pull_request/edited.json"));
    let o = only(&d);
    assert_eq!(
        o.event,
        ObservationKind::Edited {
            title_from: Some("Old title".into()),
            body_hash_from: Some(body_hash("Old body")),
            base_from: Some("develop".into()),
        }
    );
    assert_eq!(o.at, t("2026-05-30T13:00:00Z"));
    let s = o.snapshot.as_ref().unwrap();
    assert_eq!(s.body_hash, body_hash(""), "null body hashes as empty");
    assert!(s.draft);
}

#[test]
fn agent_comment_on_a_pr_is_discovered() {
    let d = relevant("issue_comment", &own("issue_comment/created.gh-aw.json"));
    let o = only(&d);
    assert_eq!(
        o.event,
        ObservationKind::CommentCreated {
            comment_id: 9001,
            agent_marker: true,
            lifecycle_marker: false,
            challenge: false
        }
    );
    assert_eq!(o.target, "acme/widgets#42");
    assert_eq!(
        o.snapshot.as_ref().unwrap().kind,
        Some(TargetKind::PullRequest)
    );
    let r = &d.discoveries[0];
    assert_eq!(d.discoveries.len(), 1);
    assert_eq!(r.id, "acme/widgets:2222:comment-9001");
    assert_eq!(r.output_type, "add_comment");
    assert_eq!(r.workflow.as_deref(), Some("pr-reviewer"));
    assert_eq!(r.actor.as_deref(), Some("release-bot-pat"));
    let tg = r.target.as_ref().unwrap();
    assert_eq!(
        (tg.kind, tg.id, tg.parent_number),
        (TargetKind::Comment, Some(9001), Some(42))
    );
    assert_eq!(tg.node_id.as_deref(), Some("IC_kwDO9001"));
}

#[test]
fn a_markers_workflow_name_with_control_characters_is_dropped() {
    let body = "ok\n<!-- gh-aw-agentic-workflow: PR Reviewer, id: 2222, workflow_id: rev\u{1b}[2J\u{202E}, run: https://github.com/acme/widgets/actions/runs/2222 -->";
    let d = relevant("issue_comment", &comment_with_body("created", body));
    assert_eq!(d.discoveries.len(), 1);
    assert_eq!(d.discoveries[0].workflow, None);
}

/// The own comment fixture with its body replaced.
fn comment_with_body(action: &str, body: &str) -> Vec<u8> {
    let mut v: serde_json::Value =
        serde_json::from_slice(&own("issue_comment/created.gh-aw.json")).unwrap();
    v["action"] = action.into();
    v["comment"]["body"] = body.into();
    serde_json::to_vec(&v).unwrap()
}

/// A created comment with `body`: asserts it discovers nothing; its
/// observation's markers (agent, lifecycle, challenge).
fn created_comment_markers(body: &str) -> (bool, bool, bool) {
    let d = relevant("issue_comment", &comment_with_body("created", body));
    assert!(d.discoveries.is_empty());
    match only(&d).event {
        ObservationKind::CommentCreated {
            agent_marker,
            lifecycle_marker,
            challenge,
            ..
        } => (agent_marker, lifecycle_marker, challenge),
        ref other => panic!("not a created comment: {other:?}"),
    }
}

#[test]
fn activation_and_expiry_comments_are_not_outputs() {
    let activation = "Agent started\n<!-- gh-aw-workflow-id: CI Coach -->\n<!-- gh-aw-comment-type: reaction -->";
    assert_eq!(created_comment_markers(activation), (false, false, false));
    let expiry = "> Closed by [x](u)\n<!-- gh-aw-expired-comments -->\n<!-- gh-aw-agentic-workflow: W, run: https://github.com/o/r/actions/runs/8 -->";
    assert_eq!(created_comment_markers(expiry), (false, true, false));
    // Edits and deletes are facts, not discoveries.
    let d = relevant(
        "issue_comment",
        &comment_with_body("edited", "<!-- gh-aw-workflow-id: w -->"),
    );
    assert_eq!(
        only(&d).event,
        ObservationKind::CommentEdited { comment_id: 9001 }
    );
    assert!(d.discoveries.is_empty());
    let d = relevant("issue_comment", &comment_with_body("deleted", ""));
    assert_eq!(
        only(&d).event,
        ObservationKind::CommentDeleted { comment_id: 9001 }
    );
}

#[test]
fn review_state_is_lowercased() {
    let d = relevant(
        "pull_request_review",
        &own("pull_request_review/submitted.json"),
    );
    let o = only(&d);
    assert_eq!(
        o.event,
        ObservationKind::ReviewSubmitted {
            review_id: 7001,
            state: "approved".into()
        }
    );
    assert_eq!(o.at, t("2026-05-31T09:00:00Z"));
    assert_eq!(o.target, "acme/widgets#42");

    let mut v: serde_json::Value =
        serde_json::from_slice(&own("pull_request_review/submitted.json")).unwrap();
    v["action"] = "dismissed".into();
    let d = relevant("pull_request_review", &serde_json::to_vec(&v).unwrap());
    assert_eq!(
        only(&d).event,
        ObservationKind::ReviewDismissed { review_id: 7001 }
    );
    assert_eq!(
        only(&d).at,
        t("2026-05-31T09:00:01Z"),
        "not before the PR's last update"
    );
    v["action"] = "edited".into();
    let d = relevant("pull_request_review", &serde_json::to_vec(&v).unwrap());
    assert_eq!(
        only(&d).event,
        ObservationKind::Other {
            event: "pull_request_review".into(),
            action: "edited".into()
        }
    );
}

#[test]
fn push_to_a_branch() {
    let d = relevant("push", &own("push/push.json"));
    assert_eq!(d.action, None);
    let o = only(&d);
    assert_eq!(o.target, "acme/widgets#ref:ci-coach-0123456789abcdef");
    assert_eq!(
        o.at,
        Utc.timestamp_opt(1780153215, 0).unwrap(),
        "pushed_at as unix seconds"
    );
    assert_eq!(
        o.event,
        ObservationKind::Pushed {
            git_ref: "ci-coach-0123456789abcdef".into(),
            before: "bbb222".into(),
            after: "ddd444".into(),
            forced: true,
            commits: vec![
                PushedCommit {
                    sha: "ccc333".into(),
                    message: "Cache registry".into(),
                    ..Default::default()
                },
                PushedCommit {
                    sha: "ddd444".into(),
                    message: "ci: trigger checks".into(),
                    ..Default::default()
                },
            ],
        }
    );
    assert!(o.snapshot.is_none());
    // A string pushed_at also works; no time at all is ignored, not "now".
    let mut v: serde_json::Value = serde_json::from_slice(&own("push/push.json")).unwrap();
    v["repository"]["pushed_at"] = "1780153215".into();
    assert_eq!(
        only(&relevant("push", &serde_json::to_vec(&v).unwrap())).at,
        o.at
    );
    v["repository"]["pushed_at"] = serde_json::Value::Null;
    assert!(ignored_reason("push", &v.to_string()).contains("timestamp"));
    v["head_commit"] =
        serde_json::json!({"id": "ddd444", "timestamp": "2026-05-30T15:00:10+00:00"});
    assert_eq!(
        only(&relevant("push", &serde_json::to_vec(&v).unwrap())).at,
        t("2026-05-30T15:00:10Z")
    );
}

#[test]
fn errors_only_for_non_objects() {
    assert!(matches!(
        normalize("issues", "d", b"{not json"),
        Err(WebhookError::MalformedJson(_))
    ));
    assert!(matches!(
        normalize("issues", "d", b""),
        Err(WebhookError::MalformedJson(_))
    ));
    assert!(matches!(
        normalize("issues", "d", b"[]"),
        Err(WebhookError::NotAnObject)
    ));
    assert!(matches!(
        normalize("nope", "d", b"42"),
        Err(WebhookError::NotAnObject)
    ));
}

#[test]
fn odd_deliveries_are_ignored_with_a_reason() {
    assert!(ignored_reason("star", "{}").contains("unknown event"));
    assert!(
        ignored_reason("installation", r#"{"action":"created"}"#).contains("no installation id")
    );
    assert!(
        ignored_reason("ping", r#"{"zen":"Keep it logically awesome."}"#).contains("not handled")
    );
    // Valid JSON, wrong shape.
    assert!(ignored_reason("issues", r#"{"action":"opened","issue":"nope"}"#).contains("shape"));
    assert!(
        ignored_reason("issues", r#"{"action":"opened","issue":{"number":1}}"#)
            .contains("repository")
    );
    let repo = r#""repository":{"full_name":"o/r"}"#;
    assert!(
        ignored_reason("issues", &format!(r#"{{"action":"opened",{repo}}}"#)).contains("no item")
    );
    assert!(ignored_reason(
        "issues",
        &format!(r#"{{"action":"opened","issue":{{"number":1}},{repo}}}"#)
    )
    .contains("timestamp"));
    assert!(ignored_reason("push", &format!(r#"{{{repo}}}"#)).contains("ref"));
}

/// A family's own fields of the wrong type: the delivery is ignored, and the
/// reason names the event whose shape was unexpected (`payload::shaped`).
#[test]
fn a_family_body_of_the_wrong_shape_is_ignored_naming_its_event() {
    let repo = r#""repository":{"id":1,"full_name":"o/r"},"pull_request":{"number":1}"#;
    for (event, action, field) in [
        ("discussion", "created", "discussion"),
        ("membership", "added", "team"),
        ("code_scanning_alert", "created", "alert"),
        ("milestone", "created", "milestone"),
        ("repository", "renamed", "changes"),
        ("sub_issues", "sub_issue_added", "sub_issue"),
        ("release", "published", "release"),
        ("projects_v2_item", "edited", "projects_v2_item"),
        ("workflow_run", "completed", "workflow_run"),
        ("pull_request_review_comment", "created", "comment"),
    ] {
        let body = format!(r#"{{"action":"{action}",{repo},"{field}":7}}"#);
        let reason = ignored_reason(event, &body);
        let expected = format!("unexpected `{event}` payload shape");
        assert!(reason.contains(&expected), "{event}: {reason}");
    }
}

#[test]
fn unknown_actions_of_known_events_are_kept_as_other() {
    let body = r#"{"action":"pinned","issue":{"number":3,"state":"open","updated_at":"2026-01-01T00:00:00Z","type":{"name":"Bug"}},"repository":{"name":"r","owner":{"login":"o"}},"sender":{"login":"x"}}"#;
    let d = relevant("issues", body.as_bytes());
    let o = only(&d);
    assert_eq!(
        o.event,
        ObservationKind::Other {
            event: "issues".into(),
            action: "pinned".into()
        }
    );
    assert_eq!(o.target, "o/r#3");
    assert_eq!(o.actor, Some(Actor::new("x", "")));
    // A known action missing what it needs also degrades to Other.
    let body = body.replace("pinned", "labeled");
    assert!(matches!(
        only(&relevant("issues", body.as_bytes())).event,
        ObservationKind::Other { .. }
    ));
}

/// The octokit examples in ../shared, when that directory exists.
fn shared_fixtures() -> Option<Vec<(String, PathBuf)>> {
    let root = crate::model::shared_data::shared_path("fixtures/webhooks")?;
    let dirs = std::fs::read_dir(&root).unwrap();
    let mut out = Vec::new();
    for dir in dirs.flatten().filter(|d| d.path().is_dir()) {
        let event = dir.file_name().to_string_lossy().into_owned();
        for f in std::fs::read_dir(dir.path()).unwrap().flatten() {
            if f.path().extension().is_some_and(|e| e == "json") {
                out.push((event.clone(), f.path()));
            }
        }
    }
    out.sort();
    Some(out)
}

fn shared(event: &str, file: &str) -> Option<NormalizedDelivery> {
    let fixtures = shared_fixtures()?;
    let (_, path) = fixtures
        .iter()
        .find(|(e, p)| e == event && p.file_name().unwrap() == file)?;
    Some(relevant(event, &std::fs::read(path).unwrap()))
}

#[test]
fn every_shared_payload_normalizes_without_error() {
    let Some(fixtures) = shared_fixtures() else {
        return;
    };
    assert!(!fixtures.is_empty());
    let handled = [
        "issues",
        "issue_comment",
        "pull_request",
        "pull_request_review",
        "pull_request_review_comment",
        "pull_request_review_thread",
        "push",
    ];
    // Tested in their own modules (several observations per delivery).
    let own_tests = [
        "discussion",
        "discussion_comment",
        "projects_v2_item",
        "milestone",
        "workflow_run",
        "check_run",
        "check_suite",
        "code_scanning_alert",
        "release",
    ];
    for (event, path) in fixtures {
        if own_tests.contains(&event.as_str()) {
            continue;
        }
        let body = std::fs::read(&path).unwrap();
        let got =
            normalize(&event, "d", &body).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if event.starts_with("installation") {
            // Installation bookkeeping: no observation, an installation change.
            let Normalized::Relevant(d) = got else {
                panic!("{} ignored", path.display())
            };
            assert!(d.observations.is_empty() && d.installation_change.is_some());
            continue;
        }
        match (handled.contains(&event.as_str()), got) {
            (true, Normalized::Relevant(d)) => {
                assert_eq!(d.observations.len(), 1, "{}", path.display());
                assert_eq!(d.event, event);
            }
            (true, Normalized::Ignored { reason }) => {
                panic!("{} ignored: {reason}", path.display())
            }
            (false, Normalized::Relevant(_)) => panic!("{} should be ignored", path.display()),
            (false, Normalized::Ignored { .. }) => {}
        }
    }
}

#[test]
fn specific_shared_payloads() {
    let Some(d) = shared("issues", "labeled.json") else {
        return;
    };
    assert_eq!(
        only(&d).event,
        ObservationKind::Labeled {
            label: "bug".into()
        }
    );
    assert_eq!(only(&d).target, "Codertocat/Hello-World#1");

    let d = shared("pull_request_review", "submitted.json").unwrap();
    assert!(
        matches!(&only(&d).event, ObservationKind::ReviewSubmitted { state, .. } if state == "commented")
    );

    let d = shared("pull_request", "synchronize.json").unwrap();
    assert!(matches!(
        only(&d).event,
        ObservationKind::Synchronize { .. }
    ));

    let d = shared("pull_request", "review_requested.json").unwrap();
    assert!(matches!(
        only(&d).event,
        ObservationKind::ReviewRequested {
            reviewer: Some(_),
            ..
        }
    ));

    // A tag deletion: no head_commit, pushed_at is unix seconds.
    let d = shared("push", "push.json").unwrap();
    assert!(
        matches!(&only(&d).event, ObservationKind::Pushed { git_ref, .. } if git_ref == "refs/tags/simple-tag")
    );

    let d = shared("issue_comment", "created.json").unwrap();
    assert!(matches!(
        only(&d).event,
        ObservationKind::CommentCreated {
            agent_marker: false,
            ..
        }
    ));
    assert!(d.discoveries.is_empty());

    // Octokit's opened issue carries no marker; with one it is discovered.
    let d = shared("issues", "opened.json").unwrap();
    assert_eq!(only(&d).event, ObservationKind::Opened);
    assert!(d.discoveries.is_empty());
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/fixtures/webhooks/issues/opened.json");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    v["issue"]["body"] = "Report\n<!-- gh-aw-workflow-id: triage -->".into();
    let d = relevant("issues", &serde_json::to_vec(&v).unwrap());
    assert_eq!(d.discoveries.len(), 1);
    let r = &d.discoveries[0];
    assert_eq!((r.run_id, r.workflow.as_deref()), (None, Some("triage")));
    assert!(r.id.ends_with(":norun:issue-1"), "{}", r.id);
}

#[test]
fn mangled_fields_never_error_or_panic() {
    let files = [
        ("issues", "issues/opened.gh-aw.json"),
        ("pull_request", "pull_request/closed.merged.json"),
        ("pull_request", "pull_request/edited.json"),
        ("issue_comment", "issue_comment/created.gh-aw.json"),
        ("pull_request_review", "pull_request_review/submitted.json"),
        ("push", "push/push.json"),
    ];
    assert_mangled_fixtures_normalize(&files);
}

#[test]
fn a_time_outside_2000_to_2200_is_refused_naming_its_field() {
    let base: serde_json::Value = serde_json::from_slice(&own("issues/opened.gh-aw.json")).unwrap();
    let mut v = base.clone();
    v["pull_request"] = v["issue"].take();
    v["pull_request"]["created_at"] = 8_210_266_012_799i64.into();
    let got = normalize("pull_request", "d", &serde_json::to_vec(&v).unwrap());
    let Err(WebhookError::TimeOutOfRange(e)) = got else {
        panic!("{got:?}");
    };
    assert_eq!(e.field, "pull_request.created_at");
    for (field, value) in [
        ("created_at", serde_json::json!("1999-12-31T23:59:59Z")),
        ("updated_at", serde_json::json!("2200-01-01T00:00:00Z")),
        ("closed_at", serde_json::json!(99_999_999_999_999i64)),
        ("created_at", serde_json::json!("-5")),
    ] {
        let mut v = base.clone();
        v["issue"][field] = value.clone();
        let got = normalize("issues", "d", &serde_json::to_vec(&v).unwrap());
        assert!(
            matches!(&got, Err(WebhookError::TimeOutOfRange(e)) if e.field == format!("issue.{field}")),
            "{field}={value}: {got:?}"
        );
    }
    // In range, and `null`: as before.
    let mut v = base;
    v["issue"]["closed_at"] = serde_json::Value::Null;
    v["issue"]["created_at"] = "2199-12-31T23:59:59Z".into();
    assert!(normalize("issues", "d", &serde_json::to_vec(&v).unwrap()).is_ok());
}

/// The events named by more than one of `tables`, each once.
fn claimed_twice<'a>(tables: &[Vec<&'a str>]) -> Vec<&'a str> {
    let mut seen = std::collections::BTreeSet::new();
    let mut twice = std::collections::BTreeSet::new();
    for event in tables.iter().flatten() {
        if !seen.insert(*event) {
            twice.insert(*event);
        }
    }
    twice.into_iter().collect()
}

#[test]
fn no_event_is_claimed_by_two_families() {
    let mut tables: Vec<Vec<&str>> = FAMILIES
        .iter()
        .map(|family| family.iter().map(|(event, _)| *event).collect())
        .collect();
    tables.push(installations::EVENTS.to_vec());
    assert_eq!(claimed_twice(&tables), Vec::<&str>::new());
    // The check itself sees a second claim.
    tables.push(vec!["push"]);
    assert_eq!(claimed_twice(&tables), vec!["push"]);
}

/// The families' tables name exactly the events of fixtures/webhooks (one
/// directory per handled event): an event dropped from a table, or a table
/// row without a fixture, fails here.
#[test]
fn the_families_handle_exactly_the_events_with_fixtures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/webhooks");
    let mut fixtures: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|d| d.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    fixtures.sort();
    let mut handled: Vec<String> = HANDLED_EVENTS.iter().map(|e| e.to_string()).collect();
    handled.sort();
    assert_eq!(handled, fixtures);
    for event in HANDLED_EVENTS {
        assert!(normalizer_of(event).is_some(), "{event}");
    }
    for event in installations::EVENTS.iter().chain(&["ping", "star"]) {
        assert!(normalizer_of(event).is_none(), "{event}");
        assert!(!HANDLED_EVENTS.contains(event), "{event}");
    }
}
