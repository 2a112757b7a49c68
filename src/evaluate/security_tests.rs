//! Table tests for the code-scanning evaluators (seed 000 §7 rows).

use serde_json::json;

use crate::evaluate::testkit::*;
use crate::model::{Actor, Confidence, Observation, ObservationKind as K, Target, TargetKind};

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

fn autofix() -> crate::model::ExecutionRecord {
    record("autofix_code_scanning_alert").target(Target {
        number: Some(42),
        ..Target::named(REPO, TargetKind::CodeScanningAlert, "")
    })
}

#[test]
fn autofix_code_scanning_alert_table() {
    let a = |h, who, action, state, reason| alert(h, who, 42, action, state, reason, "js/xss");
    run(vec![
        case(
            "alert fixed by a code change",
            autofix(),
            vec![a(10.0, github(), "fixed", "fixed", None)],
            24.0,
            (ACCEPTED, STRONG, "alert_fixed"),
        ),
        case(
            "dismissed as false positive by a human: triage, not fix",
            autofix(),
            vec![a(
                10.0,
                human("alice"),
                "closed_by_user",
                "dismissed",
                Some("false positive"),
            )],
            24.0,
            (ACCEPTED, MEDIUM, "dismissed_triaged"),
        ),
        case(
            "dismissed by a bot is no verdict",
            autofix(),
            vec![a(
                10.0,
                bot("triage[bot]"),
                "closed_by_user",
                "dismissed",
                Some("won't fix"),
            )],
            24.0,
            (IGNORED, WEAK, "lifecycle"),
        ),
        case(
            "fixed then reopened is open again",
            autofix(),
            vec![
                a(10.0, github(), "fixed", "fixed", None),
                a(20.0, github(), "reopened", "open", None),
            ],
            24.0,
            (PENDING, WEAK, "awaiting_fix"),
        ),
        case(
            "still open after the 7-day window",
            autofix(),
            vec![a(-48.0, github(), "created", "open", None)],
            8.0 * 24.0,
            (PENDING, WEAK, "alert_open"),
        ),
        case(
            "no event seen yet",
            autofix(),
            vec![],
            24.0,
            (PENDING, WEAK, "awaiting_fix"),
        ),
        case(
            "another alert's fix does not count",
            autofix(),
            vec![alert(10.0, github(), 43, "fixed", "fixed", None, "js/xss")],
            24.0,
            (PENDING, WEAK, "awaiting_fix"),
        ),
        case(
            "no alert number",
            autofix().no_target(),
            vec![],
            24.0,
            (UNKNOWN, NONE, "missing_reference"),
        ),
    ]);
}

fn created() -> crate::model::ExecutionRecord {
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
    run(vec![
        case(
            "alert fixed",
            created(),
            vec![born(), ours(30.0, github(), "fixed", "fixed", None)],
            48.0,
            (ACCEPTED, STRONG, "alert_fixed"),
        ),
        case(
            "triaged: assigned by a human",
            created(),
            vec![
                born(),
                ours(3.0, human("alice"), "updated_assignment", "open", None),
            ],
            24.0,
            (ACCEPTED, MEDIUM, "triaged"),
        ),
        case(
            "dismissed as won't fix by a human: acknowledged",
            created(),
            vec![
                born(),
                ours(
                    3.0,
                    human("alice"),
                    "closed_by_user",
                    "dismissed",
                    Some("won't fix"),
                ),
            ],
            24.0,
            (ACCEPTED, MEDIUM, "dismissed_triaged"),
        ),
        case(
            "dismissed as false positive by a human: rejected",
            created(),
            vec![
                born(),
                ours(
                    3.0,
                    human("alice"),
                    "closed_by_user",
                    "dismissed",
                    Some("false positive"),
                ),
            ],
            24.0,
            (REJECTED, MEDIUM, "dismissed_false_positive"),
        ),
        case(
            "open with no activity",
            created(),
            vec![born()],
            24.0,
            (PENDING, WEAK, "alert_open"),
        ),
        case(
            "open with no activity after 30 days",
            created(),
            vec![born()],
            31.0 * 24.0,
            (IGNORED, WEAK, "no_engagement"),
        ),
        case(
            "an alert of another rule on the file does not count",
            created(),
            vec![alert(0.5, github(), 8, "created", "open", None, "js/xss")],
            24.0,
            (UNKNOWN, NONE, "target_unobserved"),
        ),
        case(
            "an alert created before the upload is someone else's",
            created(),
            vec![
                ours(-5.0, github(), "created", "open", None),
                ours(3.0, github(), "fixed", "fixed", None),
            ],
            24.0,
            (UNKNOWN, NONE, "target_unobserved"),
        ),
        unobserved_case("nothing seen", created()),
    ]);
    // The correlation is weak: never high confidence.
    let e = eval(
        &created(),
        vec![born(), ours(30.0, github(), "fixed", "fixed", None)],
        48.0,
    );
    assert_eq!(e.confidence, Confidence::Medium);
    assert_eq!(e.details["correlation"], "file_rule_time");
    assert_eq!(e.details["alert_number"], 7);
}
