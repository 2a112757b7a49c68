//! The helpers every family shares, pinned in this crate by cases a person
//! would check (the App's `rules_tests` run the general rules of
//! docs/evaluation.md over every type through the API mapping; these are the
//! same rules at the judge's own level, so `cargo mutants -p
//! safe-outcomes-judge` sees them): the 7-day window, who acted as the
//! details name it, rule 8's engagement nobody can see, rule 10's close and
//! reopen without the item's state, rule 11's recorded before-states, and
//! rule 12's roles at the time of the act.

use serde_json::json;

use super::*;
use crate::evaluate::testkit::*;
use crate::evaluate::EvalContext;
use safe_outcomes_model::{Confidence, ExecutionRecord, Observation, ObservationKind as K};

fn created() -> Observation {
    opened_by_workflow(open())
}

/// Someone nobody can see (a deleted account, GitHub's `ghost`).
fn ghost() -> Option<safe_outcomes_model::Actor> {
    human("ghost")
}

/// Seed 000 §7 create_issue "No interaction after 7 days — ignored — weak":
/// six days of silence are still pending.
#[test]
fn an_issue_is_ignored_after_seven_days_not_before() {
    run_rows!(record("create_issue"), 24.0;
        "six days without interaction": [created()] => (PENDING, WEAK, "awaiting_triage"), at 6.0 * 24.0;
        "seven days without interaction": [created()] => (IGNORED, WEAK, "no_engagement"), at 7.0 * 24.0;
    );
}

/// The details name who acted by class: a deletion, a transfer and an
/// automation's close.
#[test]
fn who_acted_is_named_by_class() {
    let r = record("create_issue");
    let by = |actor, event: K, key: &str| {
        let e = eval(&r, vec![created(), obs(3.0, actor, event)], 24.0);
        e.details[key].clone()
    };
    assert_eq!(
        by(human("alice"), K::Deleted, "deleted_by_type"),
        "visible_non_bot_actor"
    );
    assert_eq!(by(ghost(), K::Deleted, "deleted_by_type"), "unknown_actor");
    assert_eq!(by(None, K::Deleted, "deleted_by_type"), "system_actor");
    assert_eq!(
        by(bot("mover[bot]"), K::Transferred, "transferred_by_type"),
        "bot_actor"
    );
    let close = obs(30.0, workflow_actor(), K::Closed).snap(closed_as(Some("not_planned")));
    let e = eval(&r, vec![created(), close.clone()], 48.0);
    assert_eq!(e.signal.as_str(), "lifecycle");
    assert_eq!(e.details["closed_by_type"], "same_workflow_actor");
    assert_eq!(
        e.evidence,
        vec![close.id.clone()],
        "the close is cited once"
    );
    let e = eval(&r, vec![created(), close.clone(), close.clone()], 48.0);
    assert_eq!(e.evidence, vec![close.id], "cited once even if seen twice");
}

/// Rule 8: engagement by someone nobody can see is never absence. A
/// comment, a positive reaction, or a rollup's count of no known kind
/// (`any`) keeps an issue pending past its 7 days; a 👎 or 👀 is no
/// engagement.
#[test]
fn engagement_nobody_can_see_keeps_it_pending() {
    let week = 8.0 * 24.0;
    run_rows!(record("create_issue"), week;
        "a comment whose author is not shown": [created(), obs(5.0, ghost(), comment(1))] => (PENDING, WEAK, "awaiting_triage");
        "a +1 whose reactor is not shown": [created(), obs(5.0, ghost(), reacted("+1", None))] => (PENDING, WEAK, "awaiting_triage");
        "a rollup's count of no known kind": [created(), obs(5.0, ghost(), reacted("any", None))] => (PENDING, WEAK, "awaiting_triage");
        "a -1 whose reactor is not shown": [created(), obs(5.0, ghost(), reacted("-1", None))] => (IGNORED, WEAK, "no_engagement");
        "eyes whose reactor is not shown": [created(), obs(5.0, ghost(), reacted("eyes", None))] => (IGNORED, WEAK, "no_engagement");
        "a bot's comment": [created(), obs(5.0, bot("ci[bot]"), comment(1))] => (IGNORED, WEAK, "no_engagement");
    );
    let r = record("create_issue");
    let unseen = eval(&r, vec![created(), obs(5.0, ghost(), comment(1))], week);
    assert_eq!(unseen.details["unseen_engagement"], 1, "{unseen:?}");
    let early = eval(&r, vec![created(), obs(5.0, ghost(), comment(1))], 24.0);
    assert_eq!(early.details["unseen_engagement"], 1, "{early:?}");
    let plain = eval(&r, vec![created()], 24.0);
    assert_eq!(plain.signal.as_str(), "awaiting_triage");
    assert!(
        !plain.details.contains_key("unseen_engagement"),
        "nothing unseen, nothing said: {plain:?}"
    );
}

/// Rule 10: a close or reopen the timeline dates, without the item as it
/// then was, decides the state after the latest snapshot; a snapshot that
/// does not show the state (`""`) says nothing of it (rule 2), and one that
/// does decides even when its event is not a close.
#[test]
fn the_latest_state_is_read_through_closes_and_reopens() {
    let closed = || obs(5.0, human("alice"), K::Closed).snap(closed_as(Some("completed")));
    run_rows!(record("create_issue"), 24.0;
        "a close seen without the item's state":
            [created(), obs(5.0, human("alice"), K::Closed)] => (UNKNOWN, WEAK, "closed");
        "closed, then a reopen seen without the item's state":
            [created(), closed(), obs(6.0, human("bob"), K::Reopened)] => (PENDING, MEDIUM, "acted_on");
        "a comment showing the issue closed as completed, the close unseen":
            [created(), obs(6.0, human("bob"), comment(1)).snap(closed_as(Some("completed")))] => (ACCEPTED, STRONG, "completed");
    );
    let ours = || obs(-0.01, workflow_actor(), K::Closed).snap(closed_as(Some("completed")));
    run_rows!(record("close_issue"), 24.0;
        "closed, then a snapshot that does not show the state":
            [ours(), obs(5.0, human("bob"), comment(1)).snap(snapshot(""))] => (ACCEPTED, MEDIUM, "closed");
        "closed, then a snapshot showing it open":
            [ours(), obs(5.0, human("bob"), comment(1)).snap(open())] => (REJECTED, MEDIUM, "reopened");
    );
}

/// Seed 000 §7's "non-bot comment": the count is of people's comments
/// after execution, not a bot's or the workflow's.
#[test]
fn people_s_comments_are_counted() {
    let o = vec![
        created(),
        obs(1.0, human("alice"), comment(1)),
        obs(2.0, human("bob"), comment(2)),
        obs(3.0, bot("ci[bot]"), comment(3)),
        obs(4.0, workflow_actor(), comment(4)),
    ];
    let e = eval(&record("create_issue"), o, 24.0);
    assert_eq!(e.details["human_comments"], 2, "{e:?}");
}

/// `hedge` (public): one step less confident, high → medium → low.
#[test]
fn hedging_lowers_confidence_one_step() {
    let with =
        |c| Evaluation::new(ACCEPTED, STRONG, safe_outcomes_model::Signal::Merged).confidence(c);
    assert_eq!(hedge(with(Confidence::High)).confidence, Confidence::Medium);
    assert_eq!(hedge(with(Confidence::Medium)).confidence, Confidence::Low);
    assert_eq!(hedge(with(Confidence::Low)).confidence, Confidence::Low);
}

/// Rule 11: a before-state that already held what the output set is no
/// delta, read from `labelsBefore`, a number, a string or an object.
#[test]
fn a_before_state_that_already_held_it_is_no_delta() {
    let no_delta = (UNKNOWN, NONE, "no_state_delta");
    let labels = ExecutionRecord {
        labels_before: Some(strings(&["Bug"])),
        ..record("add_labels").labels_added(&["bug"])
    };
    let milestone = || record("assign_milestone").meta("milestone_number", json!(2));
    let typed = || record("set_issue_type").extra("issue_type", json!("Bug"));
    run(rows![
        "labelsBefore held the label": [created()] => no_delta, on labels, at 24.0;
        "the milestone's number before": [created()] => no_delta, on milestone().before(json!({"milestone": 2})), at 24.0;
        "the milestone as an object before": [created()] => no_delta, on milestone().before(json!({"milestone": {"number": 2, "title": "v2"}})), at 24.0;
        "the issue type's name before": [created()] => no_delta, on typed().before(json!({"issue_type": " bug "})), at 24.0;
        "the issue type as an object before": [created()] => no_delta, on typed().before(json!({"issue_type": {"name": "Bug"}})), at 24.0;
    ]);
}

/// The intended issue type may be recorded as an object (`{name}`).
#[test]
fn an_intended_value_may_be_an_object() {
    let r = record("set_issue_type").extra("issue_type", json!({"name": "Bug"}));
    let ours = obs(
        -0.01,
        workflow_actor(),
        K::IssueTyped {
            issue_type: "Bug".into(),
        },
    )
    .snap(safe_outcomes_model::ItemSnapshot {
        issue_type: Some("Bug".into()),
        ..open()
    });
    let e = eval(&r, vec![ours], 24.0);
    assert_eq!(e.triple().2.as_str(), "state_retained", "{e:?}");
}

/// Rule 12: an act counts only while the role is held at it; what happens
/// after the act does not undo it.
#[test]
fn a_role_is_judged_at_the_act() {
    let r = record("assign_to_user");
    let act = obs(5.0, human("bob"), comment(1));
    let ends = |k: &K| matches!(k, K::Unassigned { .. });
    let starts = |k: &K| matches!(k, K::Assigned { .. });
    // `with_act`: whether the act is among the observations (it need not
    // be: only what came before it counts either way).
    let holds_with = |others: Vec<Observation>, with_act: bool| {
        let mut o = others;
        if with_act {
            o.push(act.clone());
        }
        o.sort_by(|a, b| (a.at, &a.id).cmp(&(b.at, &b.id)));
        let ctx = EvalContext {
            record: &r,
            observations: &o,
            as_of: at(48.0),
        };
        holds_role_at(&ctx, &act, ends, starts)
    };
    let holds = |others| holds_with(others, true);
    let unassigned = |h| {
        obs(
            h,
            human("alice"),
            K::Unassigned {
                assignee: "bob".into(),
            },
        )
    };
    let assigned = |h| {
        obs(
            h,
            human("alice"),
            K::Assigned {
                assignee: "bob".into(),
            },
        )
    };
    assert!(holds(vec![]));
    assert!(!holds(vec![unassigned(2.0)]), "taken away before the act");
    assert!(holds(vec![unassigned(2.0), assigned(3.0)]), "given back");
    assert!(holds(vec![unassigned(9.0)]), "taken away after the act");
    assert!(
        holds_with(vec![unassigned(9.0)], false),
        "taken away after an act not among the observations"
    );
    assert!(!holds_with(vec![unassigned(2.0)], false));
}
