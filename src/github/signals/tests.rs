//! Tests of what each output needs read, when, and how a batch is built.

use serde_json::json;

use super::*;
use crate::judge::evaluate::testkit::{human, obs, record, review, RecordExt};

/// The reading checkpoints: every type read at 7d is read again at the
/// last window (30d), so that a reaction given after the first read is
/// dated before the 30d window closes, as a read after the fact dates
/// it; a read after the fact is due exactly when one of the fetcher's
/// would have been (open then, or rejected by a negative reaction alone).
#[test]
fn types_read_at_7d_are_read_again_at_30d_and_after_the_fact_alike() {
    use crate::judge::evaluate::testkit::{comment, exec_time, reacted, workflow_actor};
    for t in [
        "add_comment",
        "comment_memory",
        "create_issue",
        "create_discussion",
    ] {
        let r = record(t);
        assert!(reads_at(&r, 168) && reads_at(&r, 720), "{t}");
        assert!(!reads_at(&r, 1) && !reads_at(&r, 24), "{t}");
    }
    assert_eq!(reading_checkpoints(&record("create_pull_request")), &[720]);
    assert_eq!(
        reading_checkpoints(&record("add_reviewer")),
        &[24, 168, 720]
    );
    let day = |d: i64| exec_time() + chrono::Duration::days(d);
    for t in ["add_comment", "comment_memory"] {
        let r = ExecutionRecord {
            output_type: t.into(),
            ..record("add_comment")
        };
        let ours = obs(-0.01, workflow_actor(), comment(900));
        let silent = vec![ours.clone()];
        assert!(!read_due(&r, &silent, day(3)), "{t}: before 7d");
        assert!(read_due(&r, &silent, day(8)), "{t}: silent at 7d");
        assert!(read_due(&r, &silent, day(31)), "{t}: silent at 30d");
        let replied = vec![ours.clone(), obs(2.0, human("alice"), comment(901))];
        assert!(!read_due(&r, &replied, day(31)), "{t}: a reply decided");
        let disliked = vec![ours, obs(2.0, human("alice"), reacted("-1", Some(900)))];
        assert!(read_due(&r, &disliked, day(31)), "{t}: a +1 outweighs a -1");
    }
    let rejected = |signal: &str| OutcomeRecord {
        outcome_status: OutcomeStatus::Rejected,
        human_check_signal: signal.into(),
        ..crate::judge::assess::assess(&record("add_comment"), &[], day(8))
    };
    assert!(open_to_signals(Some(&rejected("reacted_negatively"))));
    assert!(!open_to_signals(Some(&rejected("deleted"))));
    let accepted = |strength| OutcomeRecord {
        outcome_status: OutcomeStatus::Accepted,
        evidence_strength: strength,
        human_check_signal: "acted_on".into(),
        ..rejected("acted_on")
    };
    assert!(open_to_signals(Some(&accepted(EvidenceStrength::Weak))));
    assert!(!open_to_signals(Some(&accepted(EvidenceStrength::Medium))));
}

#[test]
fn each_type_needs_its_own_signals() {
    let comment = needs(&record("add_comment"), &[]);
    assert_eq!(comment.rest, vec!["issues/comments/900/reactions"]);
    assert!(comment.item.is_none());
    let issue = needs(&record("create_issue"), &[]);
    assert_eq!(
        issue.item,
        Some(Item {
            repo: "o/r".into(),
            number: 7,
            kind: TargetKind::Issue
        })
    );
    assert!(needs(&record("add_labels"), &[]).is_empty());
    assert!(!wants(&record("add_labels")));
}

#[test]
fn memberships_are_asked_for_reviewers_outside_the_requested_users() {
    let r = record("add_reviewer")
        .meta("requested_reviewers", json!(["alice"]))
        .meta("requested_team_reviewers", json!(["acme/infra"]));
    let seen = vec![
        obs(2.0, human("frank"), review(1, "approved")),
        obs(3.0, human("alice"), review(2, "approved")),
        obs(-1.0, human("zed"), review(3, "approved")),
    ];
    assert_eq!(
        needs(&r, &seen).memberships,
        vec!["orgs/o/teams/infra/memberships/frank"]
    );
}

#[test]
fn one_query_names_every_item_once() {
    let items = [
        Item {
            repo: "o/r".into(),
            number: 1,
            kind: TargetKind::Issue,
        },
        Item {
            repo: "o/\"x".into(),
            number: 2,
            kind: TargetKind::PullRequest,
        },
    ];
    let q = batch_query(&items.iter().collect::<Vec<_>>());
    assert!(q.contains("s0: repository(owner: \"o\", name: \"r\") { issue(number: 1)"));
    assert!(q.contains("s1: repository(owner: \"o\", name: \"\\\"x\") { pullRequest(number: 2)"));
    assert_eq!(q.matches("CLOSED_EVENT").count(), 1);
}

#[test]
fn an_item_missing_from_the_answer_is_unread() {
    let item = Item {
        repo: "o/r".into(),
        number: 1,
        kind: TargetKind::Issue,
    };
    let mut state = ApiState::default();
    let data = json!({"s0": null, "__errors": [{"type": "FORBIDDEN"}]});
    assert!(item_state(&item, &data, "s0", &mut state).is_err());
    assert!(state.responses.is_empty());
    let data =
        json!({"s0": {"issue": {"reactions": {"nodes": []}, "timelineItems": {"nodes": []}}}});
    assert!(item_state(&item, &data, "s0", &mut state).is_ok());
    assert_eq!(state.responses["issues/1/reactions"], json!([]));
}
