//! Table tests for the workflow and check evaluators (seed 000 §7 rows, and
//! the documented design for `create_check_run`).

use serde_json::json;

use crate::evaluate::testkit::*;
use crate::model::{Confidence, Observation, ObservationKind as K, Target, TargetKind};

fn run_obs(
    h: f64,
    id: u64,
    workflow: &str,
    trigger: &str,
    branch: &str,
    status: &str,
    conclusion: Option<&str>,
) -> Observation {
    obs(
        h,
        workflow_actor(),
        K::WorkflowRun {
            run_id: id,
            workflow: format!(".github/workflows/{workflow}"),
            head_branch: Some(branch.into()),
            head_sha: Some("abc1234".into()),
            trigger: trigger.into(),
            status: status.into(),
            conclusion: conclusion.map(str::to_string),
            run_attempt: 1,
        },
    )
}

/// Run 9 of `ci.yml`, dispatched on main.
fn run9(h: f64, status: &str, conclusion: Option<&str>) -> Observation {
    run_obs(
        h,
        9,
        "ci.yml",
        "workflow_dispatch",
        "main",
        status,
        conclusion,
    )
}

fn by_run_id() -> crate::model::ExecutionRecord {
    let mut t = Target::named(REPO, TargetKind::WorkflowRun, "ci.yml");
    t.id = Some(9);
    record("dispatch_workflow")
        .target(t)
        .meta("run_id", json!(9))
}

fn by_name(name: &str, git_ref: Option<&str>) -> crate::model::ExecutionRecord {
    let mut t = Target::named(REPO, TargetKind::Workflow, name);
    t.git_ref = git_ref.map(str::to_string);
    record("dispatch_workflow").target(t)
}

#[test]
fn dispatch_workflow_table() {
    run(vec![
        case(
            "run completed successfully",
            by_run_id(),
            vec![
                run9(0.0, "requested", None),
                run9(0.2, "completed", Some("success")),
            ],
            1.0,
            (ACCEPTED, STRONG, "workflow_success"),
        ),
        case(
            "run failed",
            by_run_id(),
            vec![run9(0.2, "completed", Some("failure"))],
            1.0,
            (REJECTED, STRONG, "workflow_failed"),
        ),
        case(
            "run cancelled",
            by_run_id(),
            vec![run9(0.2, "completed", Some("cancelled"))],
            1.0,
            (REJECTED, STRONG, "workflow_failed"),
        ),
        case(
            "run timed out",
            by_run_id(),
            vec![run9(0.2, "completed", Some("timed_out"))],
            1.0,
            (REJECTED, STRONG, "workflow_failed"),
        ),
        case(
            "run still in progress",
            by_run_id(),
            vec![run9(0.1, "in_progress", None)],
            1.0,
            (PENDING, MEDIUM, "workflow_pending"),
        ),
        case(
            "success after the as-of time is not seen yet",
            by_run_id(),
            vec![
                run9(0.1, "in_progress", None),
                run9(5.0, "completed", Some("success")),
            ],
            1.0,
            (PENDING, MEDIUM, "workflow_pending"),
        ),
        case(
            "skipped run had no effect",
            by_run_id(),
            vec![run9(0.2, "completed", Some("skipped"))],
            1.0,
            (IGNORED, WEAK, "workflow_no_effect"),
        ),
        case(
            "run id known, nothing seen yet",
            by_run_id(),
            vec![],
            1.0,
            (PENDING, WEAK, "workflow_pending"),
        ),
        case(
            "run id known, nothing seen after a day",
            by_run_id(),
            vec![],
            25.0,
            (UNKNOWN, NONE, "target_unobserved"),
        ),
        case(
            "no run id: matched by workflow, ref and time",
            by_name("ci.yml", Some("main")),
            vec![run9(0.05, "completed", Some("success"))],
            1.0,
            (ACCEPTED, STRONG, "workflow_success"),
        ),
        case(
            "no run id: bare gh-aw name matches the lock file",
            by_name("worker", Some("main")),
            vec![run_obs(
                0.05,
                3,
                "worker.lock.yml",
                "workflow_dispatch",
                "main",
                "completed",
                Some("failure"),
            )],
            1.0,
            (REJECTED, STRONG, "workflow_failed"),
        ),
        case(
            "no run id: a run on another ref does not match",
            by_name("ci.yml", Some("release")),
            vec![run9(0.05, "completed", Some("success"))],
            1.0,
            (PENDING, WEAK, "workflow_pending"),
        ),
        case(
            "no run id: a push-triggered run does not match",
            by_name("ci.yml", None),
            vec![run_obs(
                0.05,
                4,
                "ci.yml",
                "push",
                "main",
                "completed",
                Some("success"),
            )],
            1.0,
            (PENDING, WEAK, "workflow_pending"),
        ),
        case(
            "no run id: a run started before the dispatch does not match",
            by_name("ci.yml", None),
            vec![run9(-0.5, "completed", Some("success"))],
            1.0,
            (PENDING, WEAK, "workflow_pending"),
        ),
        case(
            "no run id: a run first seen 11 minutes later does not match",
            by_name("ci.yml", None),
            vec![run9(11.0 / 60.0, "completed", Some("success"))],
            1.0,
            (PENDING, WEAK, "workflow_pending"),
        ),
        case(
            "no matching run after 24h",
            by_name("ci.yml", None),
            vec![],
            25.0,
            (UNKNOWN, NONE, "missing_run_id"),
        ),
        case(
            "no run id and no workflow: the record lacks its correlation (rule 1)",
            record("dispatch_workflow").no_target(),
            vec![],
            1.0,
            (UNKNOWN, NONE, "missing_execution_state"),
        ),
    ]);
}

#[test]
fn correlation_and_confidence_are_reported() {
    let e = eval(
        &by_run_id(),
        vec![run9(0.2, "completed", Some("success"))],
        1.0,
    );
    assert_eq!(e.details["correlation"], "run_id");
    assert_eq!(e.confidence, Confidence::High);
    assert_eq!(e.decided_at, Some(at(0.2)));

    let e = eval(
        &by_name("ci.yml", Some("main")),
        vec![run9(0.05, "completed", Some("success"))],
        1.0,
    );
    assert_eq!(e.details["correlation"], "workflow_ref_time");
    assert_eq!(e.confidence, Confidence::Medium);

    // No ref and two candidates: the earliest wins, with low confidence.
    let e = eval(
        &by_name("ci.yml", None),
        vec![
            run9(0.05, "completed", Some("success")),
            run_obs(
                0.1,
                10,
                "ci.yml",
                "workflow_dispatch",
                "dev",
                "completed",
                Some("failure"),
            ),
        ],
        1.0,
    );
    assert_eq!(e.triple(), (ACCEPTED, STRONG, "workflow_success"));
    assert_eq!(e.details["candidate_runs"], 2);
    assert_eq!(e.confidence, Confidence::Low);
}

#[test]
fn a_rerun_attempt_replaces_the_first() {
    let attempt = |h: f64, n: u64, conclusion: &str| {
        let mut o = run9(h, "completed", Some(conclusion));
        if let K::WorkflowRun { run_attempt, .. } = &mut o.event {
            *run_attempt = n;
        }
        o
    };
    let e = eval(
        &by_run_id(),
        vec![attempt(0.2, 1, "failure"), attempt(0.5, 2, "success")],
        1.0,
    );
    assert_eq!(e.triple(), (ACCEPTED, STRONG, "workflow_success"));
    assert_eq!(e.details["earlier_attempt_failed"], true);
    assert_eq!(e.details["run_attempt"], 2);
}

#[test]
fn call_workflow_table() {
    let caller = |conclusion: &str| {
        run_obs(
            0.3,
            123,
            "orchestrator.lock.yml",
            "issues",
            "main",
            "completed",
            Some(conclusion),
        )
    };
    let named =
        || record("call_workflow").target(Target::named(REPO, TargetKind::Workflow, "worker"));
    let mut by_id = Target::named(REPO, TargetKind::WorkflowRun, "worker");
    by_id.id = Some(9);
    run(vec![
        case(
            "by run id, success",
            record("call_workflow")
                .target(by_id.clone())
                .meta("run_id", json!(9)),
            vec![run9(0.2, "completed", Some("success"))],
            1.0,
            (ACCEPTED, STRONG, "workflow_success"),
        ),
        case(
            "caller run succeeded",
            named(),
            vec![caller("success")],
            1.0,
            (ACCEPTED, MEDIUM, "workflow_success"),
        ),
        case(
            "caller run failed",
            named(),
            vec![caller("failure")],
            1.0,
            (REJECTED, MEDIUM, "workflow_failed"),
        ),
        case(
            "nothing seen after a day",
            named(),
            vec![],
            25.0,
            (UNKNOWN, NONE, "missing_run_id"),
        ),
    ]);
    let e = eval(&named(), vec![caller("success")], 1.0);
    assert_eq!(e.details["correlation"], "caller_run");
    assert_eq!(e.confidence, Confidence::Low);
}

#[test]
fn dispatch_repository_table() {
    let r = || {
        record("dispatch_repository").target(Target::named(
            REPO,
            TargetKind::Workflow,
            "repository_dispatch",
        ))
    };
    let rd = |h: f64, id: u64, wf: &str, status: &str, c: Option<&str>| {
        run_obs(h, id, wf, "repository_dispatch", "main", status, c)
    };
    run(vec![
        case(
            "the dispatched run succeeded",
            r(),
            vec![rd(0.05, 1, "deploy.yml", "completed", Some("success"))],
            1.0,
            (ACCEPTED, STRONG, "workflow_success"),
        ),
        case(
            "one of two listening workflows failed",
            r(),
            vec![
                rd(0.05, 1, "deploy.yml", "completed", Some("success")),
                rd(0.06, 2, "notify.yml", "completed", Some("failure")),
            ],
            1.0,
            (REJECTED, STRONG, "workflow_failed"),
        ),
        case(
            "still running",
            r(),
            vec![rd(0.05, 1, "deploy.yml", "in_progress", None)],
            1.0,
            (PENDING, MEDIUM, "workflow_pending"),
        ),
        case(
            "an earlier dispatch's run does not count",
            r(),
            vec![rd(-2.0, 1, "deploy.yml", "completed", Some("success"))],
            25.0,
            (UNKNOWN, NONE, "missing_run_id"),
        ),
    ]);
    let e = eval(
        &r(),
        vec![rd(0.05, 1, "deploy.yml", "completed", Some("success"))],
        1.0,
    );
    assert_eq!(e.confidence, Confidence::Low);
    assert_eq!(e.details["correlation"], "repository_dispatch_time");
}

fn check(h: f64, id: u64, conclusion: &str) -> Observation {
    obs(
        h,
        workflow_actor(),
        K::CheckRun {
            check_run_id: id,
            name: "agent-review".into(),
            head_sha: "abc1234".into(),
            status: "completed".into(),
            conclusion: Some(conclusion.into()),
            app: Some("github-actions".into()),
        },
    )
}

#[test]
fn create_check_run_table() {
    let r = || {
        let mut t = Target::named(REPO, TargetKind::CheckRun, "abc1234");
        t.id = Some(55);
        t.parent_number = Some(NUMBER);
        record("create_check_run").target(t)
    };
    let merge = |h: f64, who| obs(h, who, K::Closed).snap(merged(human("alice")));
    let rerequest = |h: f64, who| {
        obs(
            h,
            who,
            K::Other {
                event: "check_run".into(),
                action: "rerequested".into(),
            },
        )
    };
    run(vec![
        case(
            "passing check, PR merged",
            r(),
            vec![check(0.0, 55, "success"), merge(5.0, human("alice"))],
            24.0,
            (ACCEPTED, MEDIUM, "check_retained_and_merged"),
        ),
        case(
            "failing check, PR merged anyway",
            r(),
            vec![check(0.0, 55, "failure"), merge(5.0, human("alice"))],
            24.0,
            (REJECTED, MEDIUM, "merged_over_failing_check"),
        ),
        case(
            "re-requested by a human",
            r(),
            vec![check(-0.01, 55, "failure"), rerequest(-0.01, human("bob"))],
            24.0,
            (REJECTED, MEDIUM, "check_rerequested"),
        ),
        case(
            "re-requested by a bot is no verdict",
            r(),
            vec![check(0.0, 55, "failure"), rerequest(1.0, bot("ci[bot]"))],
            24.0,
            (PENDING, WEAK, "target_exists_only"),
        ),
        case(
            "superseded by a later check of the same name",
            r(),
            vec![check(0.0, 55, "failure"), check(2.0, 56, "success")],
            24.0,
            (IGNORED, WEAK, "check_superseded"),
        ),
        case(
            "failing check, PR closed unmerged by a human",
            r(),
            vec![
                check(0.0, 55, "failure"),
                obs(3.0, human("alice"), K::Closed).snap(snapshot("closed")),
            ],
            24.0,
            (ACCEPTED, MEDIUM, "check_upheld"),
        ),
        case(
            "check exists, PR open",
            r(),
            vec![
                check(0.0, 55, "success"),
                obs(1.0, human("bob"), comment(3)).snap(open()),
            ],
            24.0,
            (PENDING, WEAK, "target_exists_only"),
        ),
        unobserved_case("check never seen", r()),
        case(
            "no id: matched by the recorded name",
            record("create_check_run")
                .target(Target::named(REPO, TargetKind::Commit, "abc1234"))
                .extra("name", json!("agent-review")),
            vec![check(0.0, 77, "success")],
            24.0,
            (PENDING, WEAK, "target_exists_only"),
        ),
    ]);
}

/// An approval of run 9 (e.g. a fork PR's run waiting for approval).
fn approval() -> crate::model::ExecutionRecord {
    let mut t = Target::named(REPO, TargetKind::WorkflowRun, "");
    t.name = None;
    t.id = Some(9);
    record("approve_workflow_run").target(t)
}

#[test]
fn approve_workflow_run_table() {
    run(vec![
        case(
            "the approved run completed (whatever its result)",
            approval(),
            vec![run9(0.5, "completed", Some("failure"))],
            1.0,
            (ACCEPTED, MEDIUM, "run_proceeded"),
        ),
        case(
            "the approved run was cancelled",
            approval(),
            vec![run9(0.5, "completed", Some("cancelled"))],
            1.0,
            (REJECTED, MEDIUM, "workflow_cancelled"),
        ),
        case(
            "the approved run is still going",
            approval(),
            vec![run9(0.5, "in_progress", None)],
            1.0,
            (PENDING, WEAK, "workflow_pending"),
        ),
        case(
            "another run completing says nothing",
            approval(),
            vec![run_obs(
                0.5,
                10,
                "ci.yml",
                "pull_request",
                "main",
                "completed",
                Some("success"),
            )],
            30.0,
            (UNKNOWN, NONE, "missing_run_id"),
        ),
        case(
            "no record of which run",
            crate::model::ExecutionRecord {
                target: None,
                ..record("approve_workflow_run")
            },
            vec![],
            1.0,
            (UNKNOWN, NONE, "missing_execution_state"),
        ),
    ]);
}
