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
        let replied = vec![ours.clone(), obs(0.5, human("alice"), comment(901))];
        assert!(
            !read_due(&r, &replied, day(31)),
            "{t}: a reply decided every window"
        );
        // A reply after the 1h window decides the latest outcome, not the
        // 1h window: the first read (7d) may find a reaction inside the
        // hour; nothing later can.
        let replied_late = vec![ours.clone(), obs(2.0, human("alice"), comment(901))];
        assert!(!read_due(&r, &replied_late, day(3)), "{t}: before 7d");
        assert!(
            read_due(&r, &replied_late, day(8)),
            "{t}: the 1h window is open"
        );
        let disliked = vec![ours, obs(2.0, human("alice"), reacted("-1", Some(900)))];
        assert!(read_due(&r, &disliked, day(31)), "{t}: a +1 outweighs a -1");
    }
    let rejected = |signal: &str| OutcomeRecord {
        outcome_status: OutcomeStatus::Rejected,
        human_check_signal: signal.into(),
        ..crate::judge::assess::assess(&record("add_comment"), &[], day(8))
    };
    let r = record("add_comment");
    assert!(open_to_signals(&r, Some(&rejected("reacted_negatively"))));
    assert!(!open_to_signals(&r, Some(&rejected("deleted"))));
    let accepted = |strength| OutcomeRecord {
        outcome_status: OutcomeStatus::Accepted,
        evidence_strength: strength,
        human_check_signal: "acted_on".into(),
        windows: Default::default(),
        ..rejected("acted_on")
    };
    assert!(open_to_signals(&r, Some(&accepted(EvidenceStrength::Weak))));
    assert!(!open_to_signals(
        &r,
        Some(&accepted(EvidenceStrength::Medium))
    ));
}

/// A decided latest outcome with an earlier window still open is read at
/// the first reading checkpoint only (the read that first sees reactions
/// given inside that window), and never once the object is gone.
#[test]
fn earlier_open_windows_are_read_at_the_first_reading_only() {
    use crate::judge::evaluate::testkit::{comment, exec_time, workflow_actor};
    let r = record("add_comment");
    let day = |d: i64| exec_time() + chrono::Duration::days(d);
    let history = vec![
        obs(-0.01, workflow_actor(), comment(900)),
        obs(2.0, human("alice"), comment(901)),
    ];
    let at = |d| crate::judge::assess::assess(&r, &history, day(d));
    let first = at(8);
    assert_eq!(first.outcome_status, OutcomeStatus::Accepted);
    assert!(
        open_to_signals(&r, Some(&first)),
        "1h is open at the 7d read"
    );
    assert!(!open_to_signals(&r, Some(&at(31))), "the 7d read saw it");
    let gone = OutcomeRecord {
        outcome_status: OutcomeStatus::Rejected,
        human_check_signal: "comment_deleted".into(),
        ..first
    };
    assert!(!open_to_signals(&r, Some(&gone)), "nothing left to read");
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
            kind: TargetKind::Issue,
            node: None
        })
    );
    assert!(needs(&record("add_labels"), &[]).is_empty());
    assert!(!wants(&record("add_labels")));
}

/// A comment whose node id its delivery gave is read in the batch, and
/// its answer lands where REST's list would.
#[test]
fn a_comment_with_a_node_id_is_read_in_the_batch() {
    let mut r = record("add_comment");
    if let Some(t) = r.target.as_mut() {
        t.node_id = Some("IC_kwDOx".into());
    }
    let need = needs(&r, &[]);
    assert!(need.rest.is_empty());
    let item = need.item.expect("the comment is a batch item");
    let q = batch_query(&[&item]);
    assert!(q.contains("s0: node(id: \"IC_kwDOx\") { ... on IssueComment { reactions("));
    let data = json!({"s0": {"reactions": {"nodes": [
        {"databaseId": 5, "content": "HEART", "createdAt": "2026-01-01T00:00:00Z",
         "user": {"login": "carol", "__typename": "User"}}]}}});
    let mut state = ApiState::default();
    batch::item_state(&item, &data, "s0", &mut state).expect("answered");
    let listed = &state.responses["issues/comments/900/reactions"];
    assert_eq!(listed[0]["databaseId"], 5);
    let missing = json!({"s0": null});
    assert!(batch::item_state(&item, &missing, "s0", &mut ApiState::default()).is_err());
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
            node: None,
        },
        Item {
            repo: "o/\"x".into(),
            number: 2,
            kind: TargetKind::PullRequest,
            node: None,
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
        node: None,
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
