//! Table tests for the code-scanning evaluators (seed 000 §7 rows).

use serde_json::json;

use crate::evaluate::testkit::*;
use safe_outcomes_model::{
    Actor, Confidence, Observation, ObservationKind as K, Target, TargetKind,
};

/// The actor GitHub's analysis events arrive with (an organization).
fn github() -> Option<Actor> {
    Some(Actor::new("github", "Organization"))
}

fn alert(
    h: f64,
    who: Option<Actor>,
    number: u64,
    action: &str,
    state: &str,
    reason: Option<&str>,
    rule: &str,
) -> Observation {
    obs(
        h,
        who,
        K::AlertChanged {
            alert_number: number,
            state: state.into(),
            action: action.into(),
            dismissed_reason: reason.map(str::to_string),
            rule_id: Some(rule.into()),
        },
    )
}

fn autofix() -> safe_outcomes_model::ExecutionRecord {
    record("autofix_code_scanning_alert").target(Target {
        number: Some(42),
        ..Target::named(REPO, TargetKind::CodeScanningAlert, "")
    })
}

#[test]
fn autofix_code_scanning_alert_table() {
    let a = |h, who, action, state, reason| alert(h, who, 42, action, state, reason, "js/xss");
    run_rows!(autofix(), 24.0;
        "alert fixed by a code change": [a(10.0, github(), "fixed", "fixed", None)] => (ACCEPTED, STRONG, "alert_fixed");
        "dismissed as false positive by a human: triage, not fix":
            [a(10.0, human("alice"), "closed_by_user", "dismissed", Some("false positive"))] => (ACCEPTED, MEDIUM, "dismissed_triaged");
        "dismissed by a bot is no verdict":
            [a(10.0, bot("triage[bot]"), "closed_by_user", "dismissed", Some("won't fix"))] => (IGNORED, WEAK, "lifecycle");
        "dismissed by a human, then found on another branch by the analysis: still the human's":
            [a(10.0, human("alice"), "closed_by_user", "dismissed", Some("won't fix")), a(20.0, github(), "appeared_in_branch", "dismissed", Some("won't fix"))] => (ACCEPTED, MEDIUM, "dismissed_triaged");
        "fixed then reopened is open again":
            [a(10.0, github(), "fixed", "fixed", None), a(20.0, github(), "reopened", "open", None)] => (PENDING, WEAK, "awaiting_fix");
        "still open after the 7-day window":
            [a(-48.0, github(), "created", "open", None)] => (PENDING, WEAK, "alert_open"), at 8.0 * 24.0;
        "dismissed by a person, then seen dismissed by nobody named: the dismissal decides":
            [a(10.0, human("alice"), "closed_by_user", "dismissed", Some("won't fix")), a(20.0, None, "appeared_in_branch", "dismissed", Some("won't fix"))] => (ACCEPTED, MEDIUM, "dismissed_triaged");
        "dismissed, the dismisser not shown (rule 2)":
            [a(10.0, None, "closed_by_user", "dismissed", Some("won't fix"))] => (UNKNOWN, WEAK, "evaluation_error");
        "alert still open within the 7-day fix window":
            [a(-48.0, github(), "created", "open", None)] => (PENDING, WEAK, "awaiting_fix"), at 6.0 * 24.0;
        "no event seen yet": [] => (PENDING, WEAK, "awaiting_fix");
        "another alert's fix does not count":
            [alert(10.0, github(), 43, "fixed", "fixed", None, "js/xss")] => (PENDING, WEAK, "awaiting_fix");
        "no alert number": [] => (UNKNOWN, NONE, "missing_reference"), on autofix().no_target();
    );
}

fn created() -> safe_outcomes_model::ExecutionRecord {
    record("create_code_scanning_alert")
        .target(Target::named(
            REPO,
            TargetKind::CodeScanningAlert,
            "path:src/db.js",
        ))
        .extra("ruleIdSuffix", json!("sql-injection"))
        .extra("file", json!("src/db.js"))
}

#[test]
fn create_code_scanning_alert_table() {
    let ours = |h, who, action, state, reason| {
        alert(h, who, 7, action, state, reason, "gh-aw/sql-injection")
    };
    let born = || ours(0.5, github(), "created", "open", None);
    run_rows!(created(), 24.0;
        "alert fixed": [born(), ours(30.0, github(), "fixed", "fixed", None)] => (ACCEPTED, STRONG, "alert_fixed"), at 48.0;
        "triaged: assigned by a human":
            [born(), ours(3.0, human("alice"), "updated_assignment", "open", None)] => (ACCEPTED, MEDIUM, "triaged");
        "dismissed as won't fix by a human: acknowledged":
            [born(), ours(3.0, human("alice"), "closed_by_user", "dismissed", Some("won't fix"))] => (ACCEPTED, MEDIUM, "dismissed_triaged");
        "dismissed as false positive by a human: rejected":
            [born(), ours(3.0, human("alice"), "closed_by_user", "dismissed", Some("false positive"))] => (REJECTED, MEDIUM, "dismissed_false_positive");
        "open with no activity": [born()] => (PENDING, WEAK, "alert_open");
        "open with no activity after 30 days": [born()] => (IGNORED, WEAK, "no_engagement"), at 31.0 * 24.0;
        "open with no activity at 29 days": [born()] => (PENDING, WEAK, "alert_open"), at 29.0 * 24.0;
        "an alert of another rule on the file does not count":
            [alert(0.5, github(), 8, "created", "open", None, "js/xss")] => (UNKNOWN, NONE, "target_unobserved");
        "an alert created before the upload is someone else's":
            [ours(-5.0, github(), "created", "open", None), ours(3.0, github(), "fixed", "fixed", None)] => (UNKNOWN, NONE, "target_unobserved");
        + unobserved_case("nothing seen", created());
    );
    // The correlation is weak: never high confidence.
    let e = eval(
        &created(),
        vec![born(), ours(30.0, github(), "fixed", "fixed", None)],
        48.0,
    );
    assert_eq!(e.confidence, Confidence::Medium);
    assert_eq!(e.details["correlation"], "file_rule_time");
    assert_eq!(e.details["alert_number"], 7);
    // A weak verdict keeps its low confidence.
    let open = eval(&created(), vec![born()], 24.0);
    assert_eq!(open.confidence, Confidence::Low, "{open:?}");
    // Two alerts match: the decided one is judged, with low confidence.
    let other = |h, action, state, reason| {
        alert(
            h,
            human("alice"),
            9,
            action,
            state,
            reason,
            "gh-aw/sql-injection",
        )
    };
    let two = eval(
        &created(),
        vec![
            born(),
            other(0.6, "created", "open", None),
            ours(
                3.0,
                human("alice"),
                "closed_by_user",
                "dismissed",
                Some("won't fix"),
            ),
            other(10.0, "updated_assignment", "open", None),
        ],
        24.0,
    );
    assert_eq!(two.signal.as_str(), "dismissed_triaged", "{two:?}");
    assert_eq!(two.details["alert_number"], 7);
    assert_eq!(two.details["matching_alerts"], 2);
    assert_eq!(two.confidence, Confidence::Low);
    // Created at the first minute of the upload's slack: ours.
    let edge = eval(
        &created(),
        vec![ours(-1.0 / 6.0, github(), "created", "open", None)],
        24.0,
    );
    assert_eq!(edge.signal.as_str(), "alert_open", "{edge:?}");
}
