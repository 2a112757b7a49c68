//! Workflows and checks (seed 000 §7 "Workflows"): `dispatch_workflow`,
//! `call_workflow`, `dispatch_repository` and `create_check_run`.
//!
//! A dispatched run is judged by GitHub's own report of it (`workflow_run`),
//! which is not the workflow's claim about itself: success → accepted/strong
//! `workflow_success`, failure / cancelled / timed out → rejected/strong
//! `workflow_failed`, still running → pending/medium `workflow_pending`.
//!
//! Correlation, strongest first (`details.correlation`):
//! - `run_id`: the record names the run (Oct 2026 `metadata.run_id`);
//! - `workflow_ref_time`: a run of the named workflow, triggered by
//!   `workflow_dispatch`, first seen from 1 minute before to 10 minutes after
//!   execution, on the dispatched ref when known. Confidence drops to medium
//!   (one candidate on a known ref) or low (several, or no ref);
//! - `caller_run` (`call_workflow` only): a `workflow_call` worker runs as
//!   jobs of the calling run, so without a run id the caller's own run is the
//!   nearest evidence; it also reflects the caller's other jobs, so at most
//!   medium strength and low confidence;
//! - `repository_dispatch_time` (`dispatch_repository`): every
//!   `repository_dispatch` run first seen in the window; the event type is
//!   not in `workflow_run` payloads, so confidence is low.
//!
//! A run first seen only at completion (a long run whose earlier deliveries
//! were missed) falls outside the time window; after 24h without a match the
//! outcome is unknown/none `missing_run_id`. gh-aw's "succeeded but produced
//! no expected artifact" row cannot be observed from webhooks; a `neutral` or
//! `skipped` run is the nearest thing (ignored/weak `workflow_no_effect`).

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};

use super::common::{cite, is_closed, is_merged, merge_obs, missing_reference, unobserved};
use super::EvalContext;
use safe_outcomes_model::sane_time::{minus, plus};
use safe_outcomes_model::{
    ActorClass, Confidence, Evaluation, EvidenceStrength as S, Observation, ObservationKind as K,
    OutcomeStatus as O, Signal, TargetKind,
};

/// Hours without a matching run before `missing_run_id`.
const RUN_WAIT_HOURS: i64 = 24;
/// How far before execution a dispatched run may be first seen (the manifest
/// line is written after the dispatch call returns).
const BEFORE_SLACK_MINUTES: i64 = 1;
/// How long after execution a dispatched run may first be seen.
const AFTER_WINDOW_MINUTES: i64 = 10;

const FAILED: &[&str] = &[
    "failure",
    "cancelled",
    "timed_out",
    "startup_failure",
    "stale",
];

/// What a workflow run's observations add up to.
struct Run<'a> {
    run_id: u64,
    /// The latest state: highest attempt, then latest time.
    latest: &'a Observation,
    first_seen: DateTime<Utc>,
    earlier_attempt_failed: bool,
}

fn run_fields(o: &Observation) -> Option<(u64, &str, &str, Option<&str>, u64)> {
    match &o.event {
        K::WorkflowRun {
            run_id,
            trigger,
            status,
            conclusion,
            run_attempt,
            ..
        } => Some((
            *run_id,
            trigger.as_str(),
            status.as_str(),
            conclusion.as_deref(),
            *run_attempt,
        )),
        _ => None,
    }
}

/// Every run seen, by id.
fn runs<'a>(ctx: &EvalContext<'a>) -> BTreeMap<u64, Run<'a>> {
    let mut out: BTreeMap<u64, Run<'a>> = BTreeMap::new();
    for o in ctx.observations {
        let Some((id, _, status, conclusion, attempt)) = run_fields(o) else {
            continue;
        };
        let failed = status == "completed" && conclusion.is_some_and(|c| FAILED.contains(&c));
        let run = out.entry(id).or_insert(Run {
            run_id: id,
            latest: o,
            first_seen: o.at,
            earlier_attempt_failed: false,
        });
        let latest_attempt = run_fields(run.latest).map_or(0, |f| f.4);
        if attempt >= latest_attempt {
            if attempt > latest_attempt
                && run_fields(run.latest)
                    .is_some_and(|f| f.2 == "completed" && f.3.is_some_and(|c| FAILED.contains(&c)))
            {
                run.earlier_attempt_failed = true;
            }
            run.latest = o;
        } else if failed {
            run.earlier_attempt_failed = true;
        }
        run.first_seen = run.first_seen.min(o.at);
    }
    out
}

/// The verdict one run gives.
fn run_verdict(run: &Run, correlation: &str) -> Evaluation {
    let (_, trigger, status, conclusion, attempt) =
        run_fields(run.latest).expect("runs() holds only workflow runs");
    let completed = status == "completed";
    let e = match conclusion.filter(|_| completed) {
        Some("success") => Evaluation::new(O::Accepted, S::Strong, Signal::WorkflowSuccess)
            .note("The dispatched run completed successfully."),
        Some(c) if FAILED.contains(&c) => {
            Evaluation::new(O::Rejected, S::Strong, Signal::WorkflowFailed)
                .note("The dispatched run failed, was cancelled or timed out.")
        }
        Some("neutral" | "skipped") => {
            Evaluation::new(O::Ignored, S::Weak, Signal::WorkflowNoEffect)
                .note("The dispatched run completed without doing anything (neutral or skipped).")
        }
        _ => Evaluation::new(O::Pending, S::Medium, Signal::WorkflowPending).note(
            "The dispatched run has not completed (queued, in progress or awaiting approval).",
        ),
    };
    let workflow = match &run.latest.event {
        K::WorkflowRun { workflow, .. } => workflow.clone(),
        _ => String::new(),
    };
    let e = e
        .detail("run_id", run.run_id)
        .detail("run_status", status)
        .detail("run_conclusion", conclusion)
        .detail("run_attempt", attempt)
        .detail("earlier_attempt_failed", run.earlier_attempt_failed)
        .detail("trigger", trigger)
        .detail("workflow", workflow)
        .detail("correlation", correlation);
    if completed {
        e.decided_by(&run.latest.id, run.latest.at)
    } else {
        cite(e, run.latest)
    }
}

/// `approve_workflow_run`: the approval lets a waiting run (e.g. from a fork)
/// proceed. The run going on to completion is the approval taking effect
/// (medium: the run's own result is about the code, not the approval); a
/// cancelled run is the approval undone or overruled.
pub fn approve_workflow_run(ctx: &EvalContext) -> Evaluation {
    let Some(wanted) = ctx.record.target.as_ref().and_then(|t| t.id) else {
        return no_correlation();
    };
    let wanted = Some(wanted);
    let all = runs(ctx);
    let Some(run) = wanted.and_then(|id| all.get(&id)) else {
        return no_run(ctx, "approved run");
    };
    let (_, _, status, conclusion, _) =
        run_fields(run.latest).expect("runs() holds only workflow runs");
    let e = match (status, conclusion) {
        ("completed", Some("cancelled")) => {
            Evaluation::new(O::Rejected, S::Medium, Signal::WorkflowCancelled)
                .note("The approved run was cancelled.")
        }
        ("completed", _) => Evaluation::new(O::Accepted, S::Medium, Signal::RunProceeded)
            .note("The approved run went on and completed."),
        _ => Evaluation::new(O::Pending, S::Weak, Signal::WorkflowPending)
            .note("The approved run has not completed yet."),
    };
    let e = e
        .detail("run_id", run.run_id)
        .detail("run_status", status)
        .detail("run_conclusion", conclusion);
    if status == "completed" {
        e.decided_by(&run.latest.id, run.latest.at)
    } else {
        cite(e, run.latest)
    }
}

/// General rule 1: a run output names its run (a valid run id) or at least
/// the workflow to find its run by; without either it cannot be judged.
fn no_correlation() -> Evaluation {
    Evaluation::new(O::Unknown, S::None, Signal::MissingRunId)
        .note("The record names neither a valid run id nor the workflow, so no run can be matched to it.")
        .unresolved()
}

/// No run found: pending for a day, then gh-aw's `missing_run_id`.
fn no_run(ctx: &EvalContext, what: &str) -> Evaluation {
    if ctx.elapsed() < Duration::hours(RUN_WAIT_HOURS) {
        return Evaluation::new(O::Pending, S::Weak, Signal::WorkflowPending)
            .detail("run_found", false)
            .note(format!("No {what} has been seen yet."));
    }
    Evaluation::new(O::Unknown, S::None, Signal::MissingRunId)
        .unresolved()
        .detail("run_found", false)
        .note(format!("No {what} was seen within 24 hours of execution."))
}

/// A workflow name as a comparable stem: `.github/workflows/ci.yml`, `ci.yml`
/// and `ci` all give `ci`; `worker.lock.yml` and `worker.md` give `worker`.
fn stem(name: &str) -> String {
    let file = name.trim().rsplit('/').next().unwrap_or("");
    let file = [".yml", ".yaml", ".md"]
        .iter()
        .find_map(|ext| file.strip_suffix(ext))
        .unwrap_or(file);
    file.strip_suffix(".lock")
        .unwrap_or(file)
        .to_ascii_lowercase()
}

/// Runs first seen in the dispatch window, with `trigger`, matching `keep`.
fn runs_in_window<'a, 'r>(
    ctx: &EvalContext<'a>,
    all: &'r BTreeMap<u64, Run<'a>>,
    triggers: &[&str],
    keep: impl Fn(&Observation) -> bool,
) -> Vec<&'r Run<'a>> {
    let from = minus(
        ctx.record.executed_at,
        Duration::minutes(BEFORE_SLACK_MINUTES),
    );
    let to = plus(
        ctx.record.executed_at,
        Duration::minutes(AFTER_WINDOW_MINUTES),
    );
    let mut found: Vec<&Run> = all
        .values()
        .filter(|r| r.first_seen >= from && r.first_seen <= to)
        .filter(|r| run_fields(r.latest).is_some_and(|f| triggers.contains(&f.1)))
        .filter(|r| keep(r.latest))
        .collect();
    found.sort_by_key(|r| (r.first_seen, r.run_id));
    found
}

/// Did the dispatched workflow run successfully?
pub fn dispatch_workflow(ctx: &EvalContext) -> Evaluation {
    judge_dispatch(ctx, &["workflow_dispatch"])
}

/// A `workflow_call` worker: by run id, else the calling run itself.
pub fn call_workflow(ctx: &EvalContext) -> Evaluation {
    let by_id = ctx.targets(TargetKind::WorkflowRun);
    if !by_id {
        let all = runs(ctx);
        if let Some(run) = ctx.record.run_id.and_then(|id| all.get(&id)) {
            let e = run_verdict(run, "caller_run");
            let e = if e.strength == S::Strong {
                Evaluation {
                    strength: S::Medium,
                    ..e
                }
            } else {
                e
            };
            return e
                .confidence(Confidence::Low)
                .note("Judged by the calling run, whose result also reflects its other jobs.");
        }
        if ctx.record.target.is_none() && ctx.record.run_id.is_some() {
            return no_run(ctx, "event for the calling run");
        }
    }
    judge_dispatch(ctx, &["workflow_dispatch", "workflow_call"])
}

fn judge_dispatch(ctx: &EvalContext, triggers: &[&str]) -> Evaluation {
    if ctx.record.target.is_none() {
        return no_correlation();
    }
    let target = ctx.record.target.as_ref().expect("checked above");
    let all = runs(ctx);
    if target.kind == TargetKind::WorkflowRun {
        let Some(id) = target.id else {
            return no_run(ctx, "run");
        };
        return match all.get(&id) {
            Some(run) => run_verdict(run, "run_id"),
            None if ctx.elapsed() < Duration::hours(RUN_WAIT_HOURS) => {
                no_run(ctx, "event for the dispatched run").detail("run_id", id)
            }
            None => unobserved().detail("run_id", id),
        };
    }
    let wanted = stem(target.name.as_deref().unwrap_or(""));
    let git_ref = target
        .git_ref
        .clone()
        .or_else(|| ctx.record.field_str("ref").map(str::to_string))
        .map(|r| r.trim_start_matches("refs/heads/").to_string());
    let candidates = runs_in_window(ctx, &all, triggers, |o| match &o.event {
        K::WorkflowRun {
            workflow,
            head_branch,
            ..
        } => {
            stem(workflow) == wanted
                && git_ref
                    .as_deref()
                    .is_none_or(|r| head_branch.as_deref() == Some(r))
        }
        _ => false,
    });
    let Some(first) = candidates.first() else {
        return no_run(ctx, "matching run of the dispatched workflow");
    };
    let confidence = if git_ref.is_some() && candidates.len() == 1 {
        Confidence::Medium
    } else {
        Confidence::Low
    };
    run_verdict(first, "workflow_ref_time")
        .detail("candidate_runs", candidates.len())
        .confidence(confidence)
}

/// Did the runs `repository_dispatch` started succeed?
pub fn dispatch_repository(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = missing_reference(ctx) {
        return e;
    }
    let all = runs(ctx);
    let candidates = runs_in_window(ctx, &all, &["repository_dispatch"], |_| true);
    if candidates.is_empty() {
        return no_run(ctx, "`repository_dispatch` run");
    }
    // Every workflow listening for the event type is part of the dispatch:
    // any failure fails it, any run still going keeps it pending.
    let verdicts: Vec<Evaluation> = candidates
        .iter()
        .map(|r| run_verdict(r, "repository_dispatch_time"))
        .collect();
    let rank = |e: &Evaluation| match e.signal {
        Signal::WorkflowFailed => 0,
        Signal::WorkflowPending => 1,
        Signal::WorkflowSuccess => 2,
        _ => 3,
    };
    let worst = verdicts
        .into_iter()
        .min_by_key(rank)
        .expect("candidates is not empty");
    worst
        .detail("candidate_runs", candidates.len())
        .confidence(Confidence::Low)
}

/// Our check run's identity and the observations of it.
struct OurCheck<'a> {
    latest: &'a Observation,
    name: String,
    head_sha: String,
    conclusion: Option<String>,
}

fn our_check<'a>(ctx: &EvalContext<'a>) -> Option<OurCheck<'a>> {
    let target = ctx.record.target.as_ref()?;
    let id = (target.kind == TargetKind::CheckRun)
        .then_some(target.id)
        .flatten();
    let name = ctx
        .record
        .field_str("name")
        .or_else(|| ctx.record.field_str("check_name"));
    let latest = ctx.observations.iter().rev().find(|o| match &o.event {
        K::CheckRun {
            check_run_id,
            name: n,
            ..
        } => match id {
            Some(id) => *check_run_id == id,
            None => name.is_some_and(|want| want == n),
        },
        _ => false,
    })?;
    let K::CheckRun {
        name,
        head_sha,
        conclusion,
        ..
    } = &latest.event
    else {
        return None;
    };
    Some(OurCheck {
        latest,
        name: name.clone(),
        head_sha: head_sha.clone(),
        conclusion: conclusion.clone(),
    })
}

/// Did the check run's verdict hold up?
///
/// Design (the seed has no rows for `create_check_run`):
/// - a visible non-bot re-requests it → rejected/medium `check_rerequested`
///   (the result was disputed);
/// - a later check of the same name on the same commit replaced it →
///   ignored/weak `check_superseded`;
/// - the PR on that commit merged: a passing check → accepted/medium
///   `check_retained_and_merged`; a failing one → rejected/medium
///   `merged_over_failing_check` (people merged over it);
/// - the PR closed unmerged by a visible non-bot: a failing check →
///   accepted/medium `check_upheld`; a passing one → ignored/weak
///   `closed_without_merge`;
/// - otherwise the check merely exists: pending/weak `target_exists_only`.
///
/// The PR is seen only when the manifest line names it (the check run's
/// `parent_number`); a check on a bare commit can never be accepted.
pub fn create_check_run(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = missing_reference(ctx) {
        return e;
    }
    let Some(check) = our_check(ctx) else {
        return unobserved();
    };
    let conclusion = check
        .conclusion
        .clone()
        .or_else(|| ctx.record.field_str("conclusion").map(str::to_string))
        .map(|c| c.to_ascii_lowercase());
    let failing = conclusion
        .as_deref()
        .is_some_and(|c| FAILED.contains(&c) || c == "action_required");
    let e = check_verdict(ctx, &check, failing);
    cite(e, check.latest)
        .detail("check_name", check.name.clone())
        .detail("head_sha", check.head_sha.clone())
        .detail("conclusion", conclusion)
}

fn check_verdict(ctx: &EvalContext, check: &OurCheck, failing: bool) -> Evaluation {
    let our_id = match &check.latest.event {
        K::CheckRun { check_run_id, .. } => *check_run_id,
        _ => 0,
    };
    // A re-request is dated by the check's own times (around execution), so
    // it is looked for among all observations, not only later ones.
    let rerequest = ctx.observations.iter().filter(|o| ctx.is_human(o)).find(|o| {
        matches!(&o.event, K::Other { event, action } if event == "check_run" && action == "rerequested")
    });
    if let Some(r) = rerequest {
        return Evaluation::new(O::Rejected, S::Medium, Signal::CheckRerequested)
            .decided_by(&r.id, r.at)
            .note("A visible non-bot actor re-requested the check run, disputing its result.");
    }
    let superseded = ctx.after_execution().find(|o| {
        matches!(&o.event, K::CheckRun { check_run_id, name, head_sha, .. }
            if *check_run_id != our_id && *name == check.name && *head_sha == check.head_sha)
    });
    if let Some(s) = superseded {
        return cite(
            Evaluation::new(O::Ignored, S::Weak, Signal::CheckSuperseded)
                .note("A later check run of the same name on the same commit replaced it."),
            s,
        );
    }
    if let Some(m) = is_merged(ctx).then(|| merge_obs(ctx)).flatten() {
        let by_human = ctx.is_human(m);
        let e = if failing {
            Evaluation::new(O::Rejected, S::Medium, Signal::MergedOverFailingCheck)
                .note("The PR was merged although the check run failed.")
        } else {
            Evaluation::new(O::Accepted, S::Medium, Signal::CheckRetainedAndMerged)
                .note("The check run's passing result stood and the PR was merged.")
        };
        let e = e.decided_by(&m.id, m.at);
        return if by_human {
            e
        } else {
            e.confidence(Confidence::Low)
        };
    }
    let human_close = ctx.observations.iter().rev().find(|o| {
        matches!(o.event, K::Closed) && ctx.actor_class(o) == ActorClass::VisibleNonBotActor
    });
    if let Some(c) = human_close.filter(|_| is_closed(ctx)) {
        return if failing {
            Evaluation::new(O::Accepted, S::Medium, Signal::CheckUpheld)
                .decided_by(&c.id, c.at)
                .note("The PR was closed without merge after the check run failed.")
        } else {
            cite(
                Evaluation::new(O::Ignored, S::Weak, Signal::ClosedWithoutMerge)
                    .note("The PR was closed without merge; the passing check did not matter."),
                c,
            )
        };
    }
    Evaluation::new(O::Pending, S::Weak, Signal::TargetExistsOnly)
        .note("The check run exists; nothing yet shows whether its result was acted on.")
}

#[cfg(test)]
#[path = "workflow_tests.rs"]
mod tests;
