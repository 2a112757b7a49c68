//! Table tests for the metadata evaluators (seed 000 §7 "Labels, Metadata,
//! and Planning" rows): milestones, issue types and fields, replaced labels
//! and sub-issue links.

use serde_json::json;

use crate::evaluate::testkit::*;
use safe_outcomes_model::{ItemSnapshot, Observation, ObservationKind as K, Target, TargetKind};

fn milestoned(m: &str) -> K {
    K::Milestoned {
        milestone: m.into(),
    }
}

fn numbered(s: ItemSnapshot, n: u64) -> ItemSnapshot {
    ItemSnapshot {
        milestone_number: Some(n),
        ..s
    }
}

fn in_milestone(s: ItemSnapshot, m: &str) -> ItemSnapshot {
    ItemSnapshot {
        milestone: Some(m.into()),
        ..s
    }
}

#[test]
fn assign_milestone_table() {
    let r = || record("assign_milestone").meta("milestone_number", json!(2));
    let titled = || r().meta("milestone_title", json!("v2"));
    // The workflow's own milestoning, which names the title.
    let ours = || obs(-0.01, workflow_actor(), milestoned("v2")).snap(in_milestone(open(), "v2"));
    run_rows!(titled(), 24.0;
        "same milestone after the window": [ours()] => (ACCEPTED, MEDIUM, "milestone_assigned"), on r();
        "same milestone, window not passed": [ours()] => (PENDING, WEAK, "milestone_assigned"), at 2.0;
        "changed by a human (gh-aw: different milestone not accepted)":
            [ours(), obs(3.0, human("alice"), milestoned("v3")).snap(in_milestone(open(), "v3"))] => (REJECTED, MEDIUM, "milestone_removed"), on r();
        "removed by a human":
            [ours(), obs(3.0, human("alice"), K::Demilestoned { milestone: "v2".into() }).snap(open())] => (REJECTED, STRONG, "milestone_removed");
        "removed by a bot":
            [ours(), obs(3.0, bot("triage[bot]"), K::Demilestoned { milestone: "v2".into() }).snap(open())] => (UNKNOWN, WEAK, "state_changed_by_bot");
        "completed under the milestone":
            [ours(), obs(30.0, human("alice"), K::Closed).snap(in_milestone(closed_as(Some("completed")), "v2"))] => (ACCEPTED, STRONG, "completed_under_milestone"), at 48.0;
        "only a number, no change after: trusted, hedged":
            [obs(1.0, human("alice"), comment(5)).snap(in_milestone(open(), "v2"))] => (ACCEPTED, MEDIUM, "milestone_assigned"), on r();
        "target deleted": [ours(), obs(3.0, human("alice"), K::Deleted)] => (UNKNOWN, NONE, "deleted");
        + unobserved_case("target never seen", titled());
        "no milestone recorded": [ours()] => (UNKNOWN, NONE, "missing_execution_state"), on record("assign_milestone");
        "milestone deleted by a person (rule 15)":
            [ours(), milestone_deleted(30.0, human("alice"))] => (REJECTED, WEAK, "milestone_removed"), at 48.0;
        "milestone deleted after the window":
            [ours(), milestone_deleted(30.0, human("alice"))] => (ACCEPTED, MEDIUM, "milestone_assigned");
        "milestone deleted by a bot":
            [ours(), milestone_deleted(30.0, bot("cleanup[bot]"))] => (UNKNOWN, WEAK, "state_changed_by_bot"), at 48.0;
        "milestone deleted, nobody named (the API's 404)":
            [ours(), milestone_deleted(30.0, None)] => (REJECTED, WEAK, "milestone_removed"), at 48.0;
        "milestone deleted, the item read without it since":
            [ours(), milestone_deleted(30.0, human("alice")), obs(31.0, human("bob"), comment(6)).snap(open())] => (REJECTED, WEAK, "milestone_removed"), at 48.0;
        "completed under the milestone, then the milestone deleted":
            [ours(), obs(20.0, human("alice"), K::Closed).snap(in_milestone(closed_as(Some("completed")), "v2")), milestone_deleted(30.0, human("alice"))] => (ACCEPTED, STRONG, "completed_under_milestone"), at 48.0;
        "removed by a person, then the milestone deleted: the removal decides":
            [ours(), obs(3.0, human("bob"), K::Demilestoned { milestone: "v2".into() }).snap(open()), milestone_deleted(30.0, human("alice"))] => (REJECTED, STRONG, "milestone_removed"), at 48.0;
        "moved to another milestone, then ours deleted: the move decides":
            [ours(), obs(3.0, human("bob"), milestoned("v3")).snap(in_milestone(open(), "v3")), milestone_deleted(30.0, human("alice"))] => (REJECTED, MEDIUM, "milestone_removed"), at 48.0;
        "numbers settle it: the same title, another milestone's number":
            [ours(), obs(3.0, human("alice"), milestoned("v2")).snap(numbered(in_milestone(open(), "v2"), 3))] => (REJECTED, MEDIUM, "milestone_removed");
        "numbers settle it: the same number":
            [obs(-0.01, workflow_actor(), milestoned("v2")).snap(numbered(in_milestone(open(), "v2"), 2))] => (ACCEPTED, MEDIUM, "milestone_assigned");
        "only a number, a person set another milestone since":
            [obs(3.0, human("alice"), milestoned("v3")).snap(in_milestone(open(), "v3"))] => (REJECTED, MEDIUM, "milestone_removed"), on r();
        "only a number, ours named by our own event, a bot moved it":
            [ours(), obs(3.0, bot("triage[bot]"), milestoned("v3")).snap(in_milestone(open(), "v3"))] => (UNKNOWN, WEAK, "state_changed_by_bot"), on r();
        "the after-state's milestone is the number, not a title":
            [ours()] => (ACCEPTED, MEDIUM, "milestone_assigned"), on r().after(json!({"milestone": 2}));
        "milestone deleted, another set since":
            [ours(), milestone_deleted(30.0, human("alice")), obs(31.0, human("bob"), milestoned("v3")).snap(in_milestone(open(), "v3"))] => (REJECTED, MEDIUM, "milestone_removed"), at 48.0;
    );
    let hedged = eval(
        &r(),
        vec![obs(1.0, human("alice"), comment(5)).snap(in_milestone(open(), "v2"))],
        24.0,
    );
    assert_eq!(hedged.confidence, safe_outcomes_model::Confidence::Low);
}

/// General rule 15's limit: a removal the item's own history shows (an
/// `issues.demilestoned` delivery or a `demilestoned` timeline entry) is
/// seed 000 §7 assign_milestone "Milestone removed — rejected — strong" by
/// whoever it names, whether it came long before the milestone's deletion
/// or with it (GitHub may send one for each item a deletion empties), and
/// whoever deleted. The deletion then adds nothing: the verdict is the
/// removal's alone. The API path dates a deletion at the read that got the
/// 404 and names nobody, so it cannot tell a removal that came with the
/// deletion from an earlier one; one rule for both keeps the paths alike.
#[test]
fn a_removal_the_item_shows_decides_whatever_the_deletion() {
    let r = || {
        record("assign_milestone")
            .meta("milestone_number", json!(2))
            .meta("milestone_title", json!("v2"))
    };
    let ours = || obs(-0.01, workflow_actor(), milestoned("v2")).snap(in_milestone(open(), "v2"));
    let removal = |h: f64, who: Option<safe_outcomes_model::Actor>| {
        obs(
            h,
            who,
            K::Demilestoned {
                milestone: "v2".into(),
            },
        )
        .snap(open())
    };
    // Who removed it, and the seed's row for the removal alone (a bot's is
    // no human verdict, rule 8; one nobody is named for, rule 4).
    let removers = [
        (human("bob"), (REJECTED, STRONG, "milestone_removed")),
        (bot("triage[bot]"), (UNKNOWN, WEAK, "state_changed_by_bot")),
        (None, (REJECTED, MEDIUM, "milestone_removed")),
    ];
    let deleters = [human("alice"), bot("cleanup[bot]"), None];
    // The deletion's hour against the removal's at 30h: the same minute
    // either side, the same instant, ten hours after.
    let deleted_at = [29.99, 30.0, 30.01, 40.0];
    for (who, row) in &removers {
        let alone = eval(&r(), vec![ours(), removal(30.0, who.clone())], 48.0);
        let (status, strength, signal) = alone.triple();
        assert_eq!((status, strength, signal.as_str()), *row, "{alone:?}");
        for by in &deleters {
            for h in deleted_at {
                let o = vec![
                    ours(),
                    removal(30.0, who.clone()),
                    milestone_deleted(h, by.clone()),
                ];
                let e = eval(&r(), o, 48.0);
                let what = format!("removal by {who:?}, deletion by {by:?} at {h}h: {e:?}");
                assert_eq!(e.triple(), alone.triple(), "{what}");
                assert_eq!(e.confidence, alone.confidence, "{what}");
                assert!(e.details.get("milestone_deleted").is_none(), "{what}");
            }
        }
    }
}

/// A `milestone.deleted` delivery, filed under the milestone's key with the
/// milestone as its snapshot (which shows no milestone of an item).
fn milestone_deleted(hours: f64, actor: Option<safe_outcomes_model::Actor>) -> Observation {
    let o = obs(
        hours,
        actor,
        K::MilestoneChanged {
            milestone: "v2".into(),
            action: "deleted".into(),
        },
    );
    Observation {
        target: format!("{REPO}#milestone:2"),
        ..o
    }
    .snap(ItemSnapshot {
        kind: Some(TargetKind::Milestone),
        state: "open".into(),
        title: "v2".into(),
        ..ItemSnapshot::default()
    })
}

fn typed(s: ItemSnapshot, t: Option<&str>) -> ItemSnapshot {
    ItemSnapshot {
        issue_type: t.map(str::to_string),
        ..s
    }
}

#[test]
fn set_issue_type_table() {
    let r = || record("set_issue_type").extra("issue_type", json!("Bug"));
    let ours = || {
        obs(
            0.0,
            workflow_actor(),
            K::IssueTyped {
                issue_type: "Bug".into(),
            },
        )
        .snap(typed(open(), Some("Bug")))
    };
    run_rows!(r(), 24.0;
        "type still set after the window": [ours()] => (ACCEPTED, MEDIUM, "state_retained");
        "type still set, window not passed": [ours()] => (PENDING, WEAK, "state_retained"), at 3.0;
        "changed by a human":
            [ours(), obs(2.0, human("alice"), K::IssueTyped { issue_type: "Feature".into() }).snap(typed(open(), Some("Feature")))] => (REJECTED, MEDIUM, "issue_type_changed");
        "cleared by a human":
            [ours(), obs(2.0, human("alice"), K::IssueUntyped { issue_type: "Bug".into() }).snap(typed(open(), None))] => (REJECTED, STRONG, "issue_type_cleared");
        "changed by a bot":
            [ours(), obs(2.0, bot("triage[bot]"), K::IssueTyped { issue_type: "Task".into() }).snap(typed(open(), Some("Task")))] => (UNKNOWN, WEAK, "state_changed_by_bot");
        "completed with the type":
            [ours(), obs(10.0, human("alice"), K::Closed).snap(typed(closed_as(Some("completed")), Some("bug")))] => (ACCEPTED, STRONG, "completed_with_type");
        "cannot read the type": [obs(1.0, human("alice"), comment(3)).snap(open())] => (UNKNOWN, NONE, "issue_type_unreadable");
        "clearing retained":
            [obs(0.0, workflow_actor(), K::IssueUntyped { issue_type: "Bug".into() }).snap(open())] => (ACCEPTED, MEDIUM, "state_retained"), on record("set_issue_type").extra("issue_type", json!(""));
        "no type recorded": [ours()] => (UNKNOWN, NONE, "missing_execution_state"), on record("set_issue_type");
    );
}

#[test]
fn set_issue_field_table() {
    let r = || {
        record("set_issue_field")
            .extra("field_name", json!("Priority"))
            .extra("value", json!("P1"))
    };
    let status = || {
        record("set_issue_field")
            .extra("field_name", json!("Status"))
            .extra("value", json!("Todo"))
    };
    let ours = || {
        obs(
            0.0,
            workflow_actor(),
            field("Priority", Some("P3"), Some("P1")),
        )
    };
    run_rows!(r(), 24.0;
        "still the intended value": [ours()] => (ACCEPTED, MEDIUM, "state_retained");
        "reconciled value equals the intended one, before the window":
            [obs(2.0, None, field("priority", None, Some("p1")))] => (PENDING, WEAK, "state_retained"), at 2.0;
        "advanced to a later stage by a human":
            [obs(-0.01, workflow_actor(), field("Status", None, Some("Todo"))), obs(5.0, human("alice"), field("Status", Some("Todo"), Some("In Progress")))] => (ACCEPTED, STRONG, "field_advanced"), on status();
        "changed away by a human":
            [ours(), obs(3.0, human("alice"), field("Priority", Some("P1"), Some("P2")))] => (REJECTED, MEDIUM, "state_replaced");
        "reverted by a human":
            [ours(), obs(3.0, human("alice"), field("Priority", Some("P1"), Some("P3")))] => (REJECTED, MEDIUM, "state_reverted");
        "removed by a human":
            [ours(), obs(3.0, human("alice"), field("Priority", Some("P1"), None))] => (REJECTED, STRONG, "field_removed");
        "changed by a bot":
            [ours(), obs(3.0, bot("sync[bot]"), field("Priority", Some("P1"), Some("P2")))] => (UNKNOWN, WEAK, "state_changed_by_bot");
        "a person set the intended value: retained, not advanced":
            [obs(3.0, human("alice"), field("Priority", Some("P3"), Some("P1")))] => (ACCEPTED, MEDIUM, "state_retained");
        "ours unseen, a person set it back to the value seen before execution":
            [obs(-5.0, human("alice"), field("Priority", None, Some("P3"))), obs(3.0, human("bob"), field("Priority", Some("P1"), Some("P3")))] => (REJECTED, MEDIUM, "state_reverted");
        "ours unseen, a person set a third value":
            [obs(-5.0, human("alice"), field("Priority", None, Some("P3"))), obs(3.0, human("bob"), field("Priority", Some("P1"), Some("P2")))] => (REJECTED, MEDIUM, "state_replaced");
        "a change at the first second of the slack is since execution":
            [obs(-1.0 / 6.0, human("alice"), field("Priority", Some("P3"), Some("P2")))] => (REJECTED, MEDIUM, "state_replaced");
        "moved within the same stage by a person is no advance":
            [obs(-0.01, workflow_actor(), field("Status", None, Some("Todo"))), obs(5.0, human("alice"), field("Status", Some("Todo"), Some("Ready")))] => (REJECTED, MEDIUM, "state_replaced"), on status();
        "issue deleted by a human": [ours(), obs(3.0, human("alice"), K::Deleted)] => (REJECTED, STRONG, "deleted");
        "cannot read the field": [obs(1.0, human("alice"), comment(3)).snap(open())] => (UNKNOWN, NONE, "field_unreadable");
        "only a value from before execution":
            [obs(-5.0, human("alice"), field("Priority", None, Some("P3")))] => (UNKNOWN, NONE, "field_unreadable");
        "no value recorded":
            [ours()] => (UNKNOWN, NONE, "missing_execution_state"), on record("set_issue_field").extra("field_name", json!("Priority"));
    );
}

#[test]
fn replace_label_table() {
    let r = || {
        record("replace_label")
            .before(json!({"labels": ["old"]}))
            .after(json!({"labels": ["new"]}))
    };
    let by_name = || {
        record("replace_label")
            .extra("old_label", json!("old"))
            .extra("new_label", json!("new"))
    };
    let ours = || obs(-0.01, workflow_actor(), labeled("new")).snap(with_labels(open(), &["new"]));
    run_rows!(r(), 24.0;
        "gh-aw: retained replacement with unrelated label":
            [ours(), obs(2.0, human("alice"), labeled("unrelated")).snap(with_labels(open(), &["new", "unrelated"]))] => (ACCEPTED, MEDIUM, "state_retained");
        "retained, window not passed": [ours()] => (PENDING, WEAK, "state_retained"), on by_name(), at 2.0;
        "old label re-added and new removed by a human":
            [ours(), obs(3.0, human("alice"), labeled("old")).snap(with_labels(open(), &["new", "old"])), obs(3.1, human("alice"), unlabeled("new")).snap(with_labels(open(), &["old"]))] => (REJECTED, STRONG, "state_reverted");
        "new label removed by a human, old one not back: replaced (as add_labels)":
            [ours(), obs(3.0, human("alice"), unlabeled("new")).snap(open())] => (REJECTED, STRONG, "state_replaced"), on by_name();
        "old label re-added by a bot":
            [ours(), obs(3.0, bot("triage[bot]"), labeled("old")).snap(with_labels(open(), &["new", "old"]))] => (UNKNOWN, WEAK, "state_changed_by_bot");
        "nothing recorded": [ours()] => (UNKNOWN, NONE, "missing_execution_state"), on record("replace_label");
    );
}

/// An observation filed under the parent issue (#40) instead of the child (#7).
fn on_parent(mut o: Observation) -> Observation {
    o.target = format!("{REPO}#40");
    o
}

#[test]
fn link_sub_issue_table() {
    let r = || {
        record("link_sub_issue").target(Target {
            parent_number: Some(40),
            ..Target::thread(REPO, TargetKind::Issue, NUMBER)
        })
    };
    let added = || K::SubIssueAdded {
        parent: 40,
        child: NUMBER,
    };
    let removed = || K::SubIssueRemoved {
        parent: 40,
        child: NUMBER,
    };
    // sub_issues events are filed under both issues.
    let ours = || {
        vec![
            on_parent(obs(-0.01, workflow_actor(), added()).snap(open())),
            obs(-0.01, workflow_actor(), added()).snap(open()),
        ]
    };
    let with = |extra: Vec<Observation>| {
        let mut v = ours();
        v.extend(extra);
        v
    };
    run_rows!(r(), 24.0;
        "link still present after the window": ours() => (ACCEPTED, MEDIUM, "state_retained");
        "link present, window not passed": ours() => (PENDING, WEAK, "state_retained"), at 3.0;
        "unlinked by a human":
            with(vec![on_parent(obs(5.0, human("alice"), removed()).snap(open())), obs(5.0, human("alice"), removed()).snap(open())]) => (REJECTED, STRONG, "sub_issue_unlinked");
        "unlinked by a bot":
            with(vec![obs(5.0, bot("sync[bot]"), removed()).snap(open())]) => (UNKNOWN, WEAK, "state_changed_by_bot");
        "sub-issue closed as duplicate by a human":
            with(vec![obs(6.0, human("alice"), K::Closed).snap(closed_as(Some("duplicate")))]) => (REJECTED, MEDIUM, "closed_not_planned");
        "sub-issue closed as not planned by a bot is no person's verdict":
            with(vec![obs(6.0, bot("stale[bot]"), K::Closed).snap(closed_as(Some("not_planned")))]) => (ACCEPTED, MEDIUM, "state_retained");
        "parent closed as not planned is not the sub-issue":
            with(vec![on_parent(obs(6.0, human("alice"), K::Closed).snap(closed_as(Some("not_planned"))))]) => (ACCEPTED, MEDIUM, "state_retained");
        "parent deleted": with(vec![on_parent(obs(6.0, human("alice"), K::Deleted))]) => (UNKNOWN, NONE, "deleted");
        "link never seen": [obs(1.0, human("alice"), comment(3)).snap(open())] => (UNKNOWN, NONE, "link_unobserved");
        + unobserved_case("nothing seen", r());
        "no parent recorded": ours() => (UNKNOWN, NONE, "missing_execution_state"), on record("link_sub_issue");
    );
}
