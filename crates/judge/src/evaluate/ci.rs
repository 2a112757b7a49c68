//! CI reduction (seed 002): all check runs on one commit reduced to
//! `success | failure | pending`, and flaky evidence (seed 003, DESIGN §7).
//!
//! The latest result per check name wins, so a re-run replaces the earlier
//! result. Any failure-like conclusion makes the commit `failure`; otherwise
//! anything not completed makes it `pending`; only all success / neutral /
//! skipped is `success`. A check that failed and then passed on the same
//! commit is `deferred_nondeterministic`, and only when both results were
//! observed. This is evidence in `details`, never a verdict by itself: a
//! flaky check never turns a rejection into an acceptance.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::EvalContext;
use safe_outcomes_model::{Evaluation, Observation, ObservationKind as K};

/// Conclusions that make a commit red (the seed 002 awk list, lower-case).
const FAILURE_LIKE: &[&str] = &[
    "failure",
    "timed_out",
    "cancelled",
    "action_required",
    "startup_failure",
    "stale",
];

/// States `gh pr checks` reports in place of a conclusion while running.
const PENDING_LIKE: &[&str] = &["pending", "queued", "in_progress", "waiting", "requested"];

/// The reduced CI state of a commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CiState {
    Success,
    Failure,
    Pending,
}

impl CiState {
    pub fn as_str(self) -> &'static str {
        match self {
            CiState::Success => "success",
            CiState::Failure => "failure",
            CiState::Pending => "pending",
        }
    }
}

/// What the check runs on one commit add up to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CiSummary {
    pub state: CiState,
    /// Distinct check names seen.
    pub checks: usize,
    /// Names whose latest result is failure-like.
    pub failing: Vec<String>,
    /// Names that failed and later passed on the same commit.
    pub nondeterministic: Vec<String>,
}

/// One check result's class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Result {
    Passed,
    Failed,
    Running,
}

fn classify(status: &str, conclusion: Option<&str>) -> Result {
    let conclusion = conclusion.map(str::to_ascii_lowercase);
    match conclusion.as_deref() {
        Some(c) if FAILURE_LIKE.contains(&c) => Result::Failed,
        Some(c) if PENDING_LIKE.contains(&c) => Result::Running,
        // A conclusion is final; GitHub sets it only on completion.
        Some(c) if !c.is_empty() => Result::Passed,
        _ if status.eq_ignore_ascii_case("completed") => Result::Passed,
        _ => Result::Running,
    }
}

/// Reduce the check runs on `sha` among `observations` (sorted by time) with
/// `at <= until`; `None` when no check run on the commit was seen.
pub fn reduce<'a>(
    observations: impl IntoIterator<Item = &'a Observation>,
    sha: &str,
    until: DateTime<Utc>,
) -> Option<CiSummary> {
    let mut latest: BTreeMap<&str, Result> = BTreeMap::new();
    let mut failed_once: BTreeSet<&str> = BTreeSet::new();
    let mut flaky: BTreeSet<&str> = BTreeSet::new();
    for o in observations.into_iter().filter(|o| o.at <= until) {
        let K::CheckRun {
            name,
            head_sha,
            status,
            conclusion,
            ..
        } = &o.event
        else {
            continue;
        };
        if !head_sha.eq_ignore_ascii_case(sha) {
            continue;
        }
        let result = classify(status, conclusion.as_deref());
        match result {
            Result::Failed => {
                failed_once.insert(name);
            }
            Result::Passed if failed_once.contains(name.as_str()) => {
                flaky.insert(name);
            }
            _ => {}
        }
        latest.insert(name, result);
    }
    if latest.is_empty() {
        return None;
    }
    let failing: Vec<String> = latest
        .iter()
        .filter(|(_, r)| **r == Result::Failed)
        .map(|(n, _)| n.to_string())
        .collect();
    let state = if !failing.is_empty() {
        CiState::Failure
    } else if latest.values().any(|r| *r == Result::Running) {
        CiState::Pending
    } else {
        CiState::Success
    };
    Some(CiSummary {
        state,
        checks: latest.len(),
        failing,
        // A check that failed, passed, then failed again is red, not flaky-green.
        nondeterministic: flaky
            .into_iter()
            .filter(|n| latest.get(n) == Some(&Result::Passed))
            .map(str::to_string)
            .collect(),
    })
}

/// Record a summary in `details`: `ci`, `ci_checks`, `ci_failing` and, when
/// any, `deferred_nondeterministic`.
pub fn annotate(mut e: Evaluation, ci: Option<&CiSummary>) -> Evaluation {
    let Some(ci) = ci else {
        return e;
    };
    e = e
        .detail("ci", ci.state.as_str())
        .detail("ci_checks", ci.checks)
        .detail("ci_failing", ci.failing.clone());
    if !ci.nondeterministic.is_empty() {
        e = e.detail(
            "deferred_nondeterministic",
            Value::from(ci.nondeterministic.clone()),
        );
    }
    e
}

/// Add the CI reduction of `sha` to `e`, and `merged_over_red_ci` when the
/// commit was red at `merge` (the PR stays merged: the flag is evidence).
pub fn for_merge(
    ctx: &EvalContext,
    sha: Option<&str>,
    merge: Option<&Observation>,
    e: Evaluation,
) -> Evaluation {
    let Some(sha) = sha.filter(|s| !s.is_empty()) else {
        return e;
    };
    let now = reduce(ctx.observations, sha, ctx.as_of);
    let e = annotate(e, now.as_ref());
    let red_at_merge = merge.is_some_and(|m| {
        reduce(ctx.observations, sha, m.at).is_some_and(|c| c.state == CiState::Failure)
    });
    if red_at_merge {
        e.detail("merged_over_red_ci", true)
    } else {
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::testkit::{at, bot, obs};

    fn check(h: f64, name: &str, sha: &str, status: &str, conclusion: Option<&str>) -> Observation {
        obs(
            h,
            bot("github-actions[bot]"),
            K::CheckRun {
                check_run_id: 1,
                name: name.into(),
                head_sha: sha.into(),
                status: status.into(),
                conclusion: conclusion.map(str::to_string),
                app: Some("github-actions".into()),
            },
        )
    }

    fn done(h: f64, name: &str, conclusion: &str) -> Observation {
        check(h, name, "s1", "completed", Some(conclusion))
    }

    /// (name, checks, want state or None, want nondeterministic)
    type Row = (
        &'static str,
        Vec<Observation>,
        Option<CiState>,
        Vec<&'static str>,
    );

    #[test]
    fn reduction_table() {
        #[rustfmt::skip]
        let rows: Vec<Row> = vec![
            ("no checks", vec![], None, vec![]),
            ("all green", vec![done(1.0, "build", "success"), done(1.0, "lint", "success")], Some(CiState::Success), vec![]),
            ("neutral and skipped count as green", vec![done(1.0, "a", "neutral"), done(1.0, "b", "skipped")], Some(CiState::Success), vec![]),
            ("one failure is red", vec![done(1.0, "build", "success"), done(1.0, "lint", "failure")], Some(CiState::Failure), vec![]),
            ("every failure-like conclusion is red", FAILURE_LIKE.iter().enumerate().map(|(i, c)| done(1.0 + i as f64, c, c)).collect(), Some(CiState::Failure), vec![]),
            ("upper-case conclusions (gh pr checks) are read too", vec![done(1.0, "build", "TIMED_OUT")], Some(CiState::Failure), vec![]),
            ("queued or in progress is pending", vec![done(1.0, "build", "success"), check(1.0, "lint", "s1", "in_progress", None)], Some(CiState::Pending), vec![]),
            ("failure beats pending", vec![done(1.0, "build", "failure"), check(1.0, "lint", "s1", "queued", None)], Some(CiState::Failure), vec![]),
            ("a re-run replaces the earlier result: flaky", vec![done(1.0, "test", "failure"), done(2.0, "test", "success")], Some(CiState::Success), vec!["test"]),
            ("passed then failed is red, not flaky", vec![done(1.0, "test", "success"), done(2.0, "test", "failure")], Some(CiState::Failure), vec![]),
            ("failed, passed, failed again is red", vec![done(1.0, "test", "failure"), done(2.0, "test", "success"), done(3.0, "test", "failure")], Some(CiState::Failure), vec![]),
            ("re-run still running after a failure is pending, not flaky", vec![done(1.0, "test", "failure"), check(2.0, "test", "s1", "in_progress", None)], Some(CiState::Pending), vec![]),
            ("other commits do not count", vec![done(1.0, "build", "success"), check(1.0, "build2", "s2", "completed", Some("failure"))], Some(CiState::Success), vec![]),
            ("results after the cut do not count", vec![done(1.0, "test", "failure"), done(9.0, "test", "success")], Some(CiState::Failure), vec![]),
            ("a pending-like conclusion (gh pr checks) is pending", vec![done(1.0, "build", "success"), check(1.0, "lint", "s1", "", Some("QUEUED"))], Some(CiState::Pending), vec![]),
            ("an empty conclusion while in progress is pending", vec![check(1.0, "lint", "s1", "in_progress", Some(""))], Some(CiState::Pending), vec![]),
            ("a conclusion is final, whatever the status says", vec![check(1.0, "build", "s1", "", Some("success"))], Some(CiState::Success), vec![]),
            ("completed with no conclusion read is green", vec![check(1.0, "build", "s1", "completed", None)], Some(CiState::Success), vec![]),
        ];
        let mut failures = Vec::new();
        for (name, checks, want, flaky) in rows {
            let got = reduce(&checks, "s1", at(5.0));
            let state = got.as_ref().map(|s| s.state);
            let nondet: Vec<String> = got
                .as_ref()
                .map(|s| s.nondeterministic.clone())
                .unwrap_or_default();
            if state != want || nondet != flaky {
                failures.push(format!("{name}: want {want:?} {flaky:?}, got {got:?}"));
            }
        }
        assert!(failures.is_empty(), "\n{}", failures.join("\n"));
    }

    #[test]
    fn details_carry_the_reduction() {
        let checks = vec![done(1.0, "test", "failure"), done(2.0, "test", "success")];
        let ci = reduce(&checks, "s1", at(5.0));
        let e = annotate(
            Evaluation::new(
                safe_outcomes_model::OutcomeStatus::Pending,
                safe_outcomes_model::EvidenceStrength::Weak,
                safe_outcomes_model::Signal::Open,
            ),
            ci.as_ref(),
        );
        assert_eq!(e.details["ci"], "success");
        assert_eq!(e.details["ci_checks"], 1);
        assert_eq!(
            e.details["deferred_nondeterministic"],
            serde_json::json!(["test"])
        );
        let none = annotate(
            Evaluation::new(
                safe_outcomes_model::OutcomeStatus::Pending,
                safe_outcomes_model::EvidenceStrength::Weak,
                safe_outcomes_model::Signal::Open,
            ),
            None,
        );
        assert!(!none.details.contains_key("ci"));
    }
}

/// CI as create_pull_request / push_to_pull_request_branch report it.
#[cfg(test)]
mod pr_tests {
    use serde_json::json;

    use crate::evaluate::testkit::*;
    use safe_outcomes_model::{Observation, ObservationKind as K};

    fn check(h: f64, name: &str, sha: &str, conclusion: Option<&str>) -> Observation {
        obs(
            h,
            bot("github-actions[bot]"),
            K::CheckRun {
                check_run_id: (h * 100.0) as u64,
                name: name.into(),
                head_sha: sha.into(),
                status: if conclusion.is_some() {
                    "completed"
                } else {
                    "in_progress"
                }
                .into(),
                conclusion: conclusion.map(str::to_string),
                app: Some("github-actions".into()),
            },
        )
    }

    fn opened() -> Observation {
        opened_by_workflow(with_head(open(), "h1"))
    }

    /// A PR the workflow opened (head `h1`), judged a day on.
    fn pr(observations: Vec<Observation>) -> safe_outcomes_model::Evaluation {
        eval(&record("create_pull_request"), observations, 24.0)
    }

    /// The `test` check on `h1`, done with `conclusion` at `h` hours.
    fn test_run(h: f64, conclusion: &str) -> Observation {
        check(h, "test", "h1", Some(conclusion))
    }

    fn merge(h: f64) -> Observation {
        obs(h, human("alice"), K::Closed).snap(with_head(merged(human("alice")), "h1"))
    }

    #[test]
    fn merged_over_red_ci_stays_merged() {
        let e = pr(vec![opened(), test_run(1.0, "failure"), merge(5.0)]);
        assert_eq!(
            e.triple(),
            (ACCEPTED, STRONG, safe_outcomes_model::Signal::Merged)
        );
        assert_eq!(e.details["ci"], "failure");
        assert_eq!(e.details["ci_checks"], 1);
        assert_eq!(e.details["merged_over_red_ci"], true);
    }

    #[test]
    fn green_at_merge_is_not_merged_over_red() {
        let e = pr(vec![
            opened(),
            test_run(1.0, "failure"),
            test_run(2.0, "success"),
            merge(5.0),
        ]);
        assert_eq!(e.details["ci"], "success");
        assert!(!e.details.contains_key("merged_over_red_ci"));
        assert_eq!(e.details["deferred_nondeterministic"], json!(["test"]));
    }

    #[test]
    fn flaky_evidence_never_turns_a_rejection_into_acceptance() {
        let e = pr(vec![
            opened(),
            test_run(1.0, "failure"),
            test_run(2.0, "success"),
            obs(5.0, human("alice"), K::Closed).snap(with_head(snapshot("closed"), "h1")),
        ]);
        assert_eq!(
            e.triple(),
            (
                REJECTED,
                STRONG,
                safe_outcomes_model::Signal::ClosedWithoutMerge
            )
        );
        assert_eq!(e.details["deferred_nondeterministic"], json!(["test"]));
    }

    #[test]
    fn open_pr_reports_pending_ci_on_its_latest_head() {
        let e = pr(vec![
            opened(),
            check(1.0, "test", "h0", Some("failure")),
            check(1.0, "test", "h1", None),
        ]);
        assert_eq!(
            e.triple(),
            (PENDING, WEAK, safe_outcomes_model::Signal::AwaitingReview)
        );
        assert_eq!(e.details["ci"], "pending");
    }

    #[test]
    fn push_reports_ci_on_the_pushed_commit() {
        let r = record("push_to_pull_request_branch").meta("commit_sha", json!("c1"));
        let e = eval(
            &r,
            vec![
                obs(-0.01, workflow_actor(), sync("c0", "c1")).snap(with_head(open(), "c1")),
                check(1.0, "build", "c1", Some("success")),
                check(1.0, "lint", "c1", Some("cancelled")),
            ],
            24.0,
        );
        assert_eq!(e.details["ci"], "failure");
        assert_eq!(e.details["ci_checks"], 2);
        assert_eq!(e.details["ci_failing"], json!(["lint"]));
    }

    #[test]
    fn no_checks_no_ci_details() {
        let e = pr(vec![opened()]);
        assert!(!e.details.contains_key("ci"));
    }
}
