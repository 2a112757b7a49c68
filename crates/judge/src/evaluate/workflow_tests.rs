//! Table tests for the workflow and check evaluators (seed 000 §7 rows, and
//! the documented design for `create_check_run`).

use serde_json::json;

use crate::evaluate::testkit::*;
use safe_outcomes_model::{
    Confidence, Observation, ObservationKind as K, Signal, Target, TargetKind,
};

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

fn by_run_id() -> safe_outcomes_model::ExecutionRecord {
    let mut t = Target::named(REPO, TargetKind::WorkflowRun, "ci.yml");
    t.id = Some(9);
    record("dispatch_workflow")
        .target(t)
        .meta("run_id", json!(9))
}

fn by_name(name: &str, git_ref: Option<&str>) -> safe_outcomes_model::ExecutionRecord {
    let mut t = Target::named(REPO, TargetKind::Workflow, name);
    t.git_ref = git_ref.map(str::to_string);
    record("dispatch_workflow").target(t)
}

#[test]
fn dispatch_workflow_table() {
    run_rows!(by_run_id(), 1.0;
        "run completed successfully":
            [run9(0.0, "requested", None), run9(0.2, "completed", Some("success"))] => (ACCEPTED, STRONG, "workflow_success");
        "run failed": [run9(0.2, "completed", Some("failure"))] => (REJECTED, STRONG, "workflow_failed");
        "run cancelled": [run9(0.2, "completed", Some("cancelled"))] => (REJECTED, STRONG, "workflow_failed");
        "run timed out": [run9(0.2, "completed", Some("timed_out"))] => (REJECTED, STRONG, "workflow_failed");
        "run still in progress": [run9(0.1, "in_progress", None)] => (PENDING, MEDIUM, "workflow_pending");
        "success after the as-of time is not seen yet":
            [run9(0.1, "in_progress", None), run9(5.0, "completed", Some("success"))] => (PENDING, MEDIUM, "workflow_pending");
        "skipped run had no effect": [run9(0.2, "completed", Some("skipped"))] => (IGNORED, WEAK, "workflow_no_effect");
        "run id known, nothing seen yet": [] => (PENDING, WEAK, "workflow_pending");
        "run id known, nothing seen after a day": [] => (UNKNOWN, NONE, "target_unobserved"), at 25.0;
        "no run id: matched by workflow, ref and time":
            [run9(0.05, "completed", Some("success"))] => (ACCEPTED, STRONG, "workflow_success"), on by_name("ci.yml", Some("main"));
        "no run id: bare gh-aw name matches the lock file":
            [run_obs(0.05, 3, "worker.lock.yml", "workflow_dispatch", "main", "completed", Some("failure"))] => (REJECTED, STRONG, "workflow_failed"), on by_name("worker", Some("main"));
        "no run id: a run on another ref does not match":
            [run9(0.05, "completed", Some("success"))] => (PENDING, WEAK, "workflow_pending"), on by_name("ci.yml", Some("release"));
        "no run id: a push-triggered run does not match":
            [run_obs(0.05, 4, "ci.yml", "push", "main", "completed", Some("success"))] => (PENDING, WEAK, "workflow_pending"), on by_name("ci.yml", None);
        "no run id: a run started before the dispatch does not match":
            [run9(-0.5, "completed", Some("success"))] => (PENDING, WEAK, "workflow_pending"), on by_name("ci.yml", None);
        "no run id: a run first seen 11 minutes later does not match":
            [run9(11.0 / 60.0, "completed", Some("success"))] => (PENDING, WEAK, "workflow_pending"), on by_name("ci.yml", None);
        "no matching run after 24h": [] => (UNKNOWN, NONE, "missing_run_id"), on by_name("ci.yml", None), at 25.0;
        "no matching run at the 24h checkpoint itself": [] => (UNKNOWN, NONE, "missing_run_id"), on by_name("ci.yml", None), at 24.0;
        "run id known, nothing seen at the 24h checkpoint itself": [] => (UNKNOWN, NONE, "target_unobserved"), at 24.0;
        "no run id: a run of another workflow does not match":
            [run_obs(0.05, 5, "lint.yml", "workflow_dispatch", "main", "completed", Some("success"))] => (PENDING, WEAK, "workflow_pending"), on by_name("ci.yml", Some("main"));
        "no run id and no workflow: the record lacks its correlation (rule 1)":
            [] => (UNKNOWN, NONE, "missing_run_id"), on record("dispatch_workflow").no_target();
    );
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

    // One candidate but no ref: any run of the workflow could be it.
    let e = eval(
        &by_name("ci.yml", None),
        vec![run9(0.05, "completed", Some("success"))],
        1.0,
    );
    assert_eq!(e.details["candidate_runs"], 1);
    assert_eq!(e.confidence, Confidence::Low);

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
    assert_eq!(e.triple(), (ACCEPTED, STRONG, Signal::WorkflowSuccess));
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
    assert_eq!(e.triple(), (ACCEPTED, STRONG, Signal::WorkflowSuccess));
    assert_eq!(e.details["earlier_attempt_failed"], true);
    assert_eq!(e.details["run_attempt"], 2);
    assert_eq!(e.details["workflow"], ".github/workflows/ci.yml");
    // Two attempts seen in the order given: what the details say of the
    // earlier attempt and of the one that decides.
    let (s, f) = ("success", "failure");
    #[rustfmt::skip]
    let cases = [
        ("a re-run of a success", [(0.2, 1, s), (0.5, 2, s)], false, 2),
        ("the same attempt seen twice is no earlier one", [(0.2, 1, f), (0.3, 1, f)], false, 1),
        ("a failed earlier attempt seen late", [(0.3, 2, s), (0.5, 1, f)], true, 2),
        ("a successful earlier attempt seen late", [(0.3, 2, s), (0.5, 1, s)], false, 2),
    ];
    for (why, seen, failed, decided) in cases {
        let attempts = seen.iter().map(|&(h, n, c)| attempt(h, n, c)).collect();
        let e = eval(&by_run_id(), attempts, 1.0);
        assert_eq!(e.details["earlier_attempt_failed"], json!(failed), "{why}");
        assert_eq!(e.details["run_attempt"], json!(decided), "{why}");
    }
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
    run_rows!(named(), 1.0;
        "by run id, success":
            [run9(0.2, "completed", Some("success"))] => (ACCEPTED, STRONG, "workflow_success"), on record("call_workflow").target(by_id.clone()).meta("run_id", json!(9));
        "caller run succeeded": [caller("success")] => (ACCEPTED, MEDIUM, "workflow_success");
        "caller run failed": [caller("failure")] => (REJECTED, MEDIUM, "workflow_failed");
        "nothing seen after a day": [] => (UNKNOWN, NONE, "missing_run_id"), at 25.0;
        "the caller's run unseen: the worker's own run, by name and time":
            [run_obs(0.05, 9, "worker.yml", "workflow_call", "main", "completed", Some("success"))] => (ACCEPTED, STRONG, "workflow_success");
    );
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
    run_rows!(r(), 1.0;
        "the dispatched run succeeded":
            [rd(0.05, 1, "deploy.yml", "completed", Some("success"))] => (ACCEPTED, STRONG, "workflow_success");
        "one of two listening workflows failed":
            [rd(0.05, 1, "deploy.yml", "completed", Some("success")), rd(0.06, 2, "notify.yml", "completed", Some("failure"))] => (REJECTED, STRONG, "workflow_failed");
        "still running": [rd(0.05, 1, "deploy.yml", "in_progress", None)] => (PENDING, MEDIUM, "workflow_pending");
        "one listening workflow succeeded, another still running":
            [rd(0.05, 1, "deploy.yml", "completed", Some("success")), rd(0.06, 2, "notify.yml", "in_progress", None)] => (PENDING, MEDIUM, "workflow_pending");
        "a listener skipped, another succeeded: the success decides":
            [rd(0.05, 1, "notify.yml", "completed", Some("skipped")), rd(0.06, 2, "deploy.yml", "completed", Some("success"))] => (ACCEPTED, STRONG, "workflow_success");
        "an earlier dispatch's run does not count":
            [rd(-2.0, 1, "deploy.yml", "completed", Some("success"))] => (UNKNOWN, NONE, "missing_run_id"), at 25.0;
    );
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
    run_rows!(r(), 24.0;
        "passing check, PR merged":
            [check(0.0, 55, "success"), merge(5.0, human("alice"))] => (ACCEPTED, MEDIUM, "check_retained_and_merged");
        "failing check, PR merged anyway":
            [check(0.0, 55, "failure"), merge(5.0, human("alice"))] => (REJECTED, MEDIUM, "merged_over_failing_check");
        "re-requested by a human":
            [check(-0.01, 55, "failure"), rerequest(-0.01, human("bob"))] => (REJECTED, MEDIUM, "check_rerequested");
        "re-requested by a bot is no verdict":
            [check(0.0, 55, "failure"), rerequest(1.0, bot("ci[bot]"))] => (PENDING, WEAK, "target_exists_only");
        "superseded by a later check of the same name":
            [check(0.0, 55, "failure"), check(2.0, 56, "success")] => (IGNORED, WEAK, "check_superseded");
        "failing check, PR closed unmerged by a human":
            [check(0.0, 55, "failure"), obs(3.0, human("alice"), K::Closed).snap(snapshot("closed"))] => (ACCEPTED, MEDIUM, "check_upheld");
        "failing check, PR closed by a bot: no person upheld it":
            [check(0.0, 55, "failure"), obs(3.0, bot("stale[bot]"), K::Closed).snap(snapshot("closed"))] => (PENDING, WEAK, "target_exists_only");
        "check exists, PR open":
            [check(0.0, 55, "success"), obs(1.0, human("bob"), comment(3)).snap(open())] => (PENDING, WEAK, "target_exists_only");
        + unobserved_case("check never seen", r());
        "no id: matched by the recorded name":
            [check(0.0, 77, "success")] => (PENDING, WEAK, "target_exists_only"), on record("create_check_run").target(Target::named(REPO, TargetKind::Commit, "abc1234")).extra("name", json!("agent-review"));
    );
}

/// An approval of run 9 (e.g. a fork PR's run waiting for approval).
fn approval() -> safe_outcomes_model::ExecutionRecord {
    let mut t = Target::named(REPO, TargetKind::WorkflowRun, "");
    t.name = None;
    t.id = Some(9);
    record("approve_workflow_run").target(t)
}

#[test]
fn approve_workflow_run_table() {
    run_rows!(approval(), 1.0;
        "the approved run completed (whatever its result)":
            [run9(0.5, "completed", Some("failure"))] => (ACCEPTED, MEDIUM, "run_proceeded");
        "the approved run was cancelled": [run9(0.5, "completed", Some("cancelled"))] => (REJECTED, MEDIUM, "workflow_cancelled");
        "the approved run is still going": [run9(0.5, "in_progress", None)] => (PENDING, WEAK, "workflow_pending");
        "another run completing says nothing":
            [run_obs(0.5, 10, "ci.yml", "pull_request", "main", "completed", Some("success"))] => (UNKNOWN, NONE, "missing_run_id"), at 30.0;
        "no record of which run":
            [] => (UNKNOWN, NONE, "missing_run_id"), on safe_outcomes_model::ExecutionRecord { target: None,..record("approve_workflow_run") };
    );
    // A completed run decides when it completed; one still going decides
    // nothing yet and is only cited.
    let done = eval(
        &approval(),
        vec![run9(0.5, "completed", Some("success"))],
        1.0,
    );
    assert_eq!(done.decided_at, Some(at(0.5)));
    let going = run9(0.5, "in_progress", None);
    let id = going.id.clone();
    let going = eval(&approval(), vec![going], 1.0);
    assert_eq!(going.decided_at, None);
    assert!(going.evidence.contains(&id), "{going:?}");
}
