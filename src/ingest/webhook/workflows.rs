//! `workflow_run`, `check_run` and `check_suite` events.
//!
//! A workflow run is filed under its run id and under its workflow file
//! (`ci.yml`), and also under the file's stem (`ci`, `worker` for
//! `worker.lock.yml`) because gh-aw names dispatched workflows without an
//! extension. Runs triggered by `repository_dispatch` are also filed under the
//! pseudo workflow `repository_dispatch`, which is what `dispatch_repository`
//! outputs watch (the dispatched workflow is not known in advance).
//!
//! Check runs and suites are filed under their commit (the worker copies
//! commit-keyed observations to every PR whose head or merge commit it is),
//! and check runs also under their own id, where a `rerequested` or
//! `requested_action` also leaves an `Other` naming the action.
//!
//! The time of a check run is its `completed_at`, else `started_at`; a
//! re-request carries no time of its own, so it is dated by those too.

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::Value;

use super::payload::parse_time;
use super::{Ctx, Fact, NormResult, Output};
use crate::model::target::{commit_key, object_key};
use crate::model::{ObservationKind, TargetKind};

/// The pseudo workflow name `repository_dispatch` runs are also filed under.
pub(crate) const REPOSITORY_DISPATCH: &str = "repository_dispatch";

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Body {
    workflow_run: Option<Run>,
    check_run: Option<Check>,
    check_suite: Option<Suite>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Run {
    id: Option<u64>,
    path: Option<String>,
    name: Option<String>,
    head_branch: Option<String>,
    head_sha: Option<String>,
    event: Option<String>,
    status: Option<String>,
    conclusion: Option<String>,
    run_attempt: Option<u64>,
    created_at: Option<Value>,
    run_started_at: Option<Value>,
    updated_at: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct App {
    slug: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Check {
    id: Option<u64>,
    name: Option<String>,
    head_sha: Option<String>,
    status: Option<String>,
    conclusion: Option<String>,
    app: Option<App>,
    started_at: Option<Value>,
    completed_at: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Suite {
    id: Option<u64>,
    head_sha: Option<String>,
    status: Option<String>,
    conclusion: Option<String>,
    app: Option<App>,
    created_at: Option<Value>,
    updated_at: Option<Value>,
}

pub(super) fn normalize(ctx: &Ctx) -> NormResult {
    let body: Body = super::payload::shaped(ctx)?;
    match ctx.event {
        "workflow_run" => workflow_run(ctx, body.workflow_run),
        "check_run" => check_run(ctx, body.check_run),
        _ => check_suite(ctx, body.check_suite),
    }
}

/// The events this family normalizes: `workflow_run`, `check_run` and `check_suite`.
pub(super) const EVENTS: super::Events = &[
    ("workflow_run", normalize),
    ("check_run", normalize),
    ("check_suite", normalize),
];

/// The file name of a workflow path: `.github/workflows/ci.yml` → `ci.yml`.
pub(crate) fn workflow_file(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// A workflow's name without extension: `ci.yml` → `ci`, `worker.lock.yml`
/// → `worker` (gh-aw names workflows without `.md`/`.lock.yml`).
pub(crate) fn workflow_stem(name: &str) -> &str {
    let file = workflow_file(name);
    let file = file
        .strip_suffix(".yml")
        .or_else(|| file.strip_suffix(".yaml"))
        .or_else(|| file.strip_suffix(".md"))
        .unwrap_or(file);
    file.strip_suffix(".lock").unwrap_or(file)
}

/// When an `event`'s object happened: the first of its `times` (in the
/// order GitHub's fields are trusted) that parses; refused when none does.
fn first_time<const N: usize>(
    event: &str,
    times: [&Option<Value>; N],
) -> Result<DateTime<Utc>, String> {
    times
        .into_iter()
        .find_map(|t| parse_time(t.as_ref()))
        .ok_or_else(|| format!("`{event}` has no timestamp"))
}

fn workflow_run(ctx: &Ctx, run: Option<Run>) -> NormResult {
    let run = run.ok_or_else(|| ctx.lacks("run"))?;
    let run_id = run.id.ok_or("`workflow_run` has no run id")?;
    let times = [&run.updated_at, &run.run_started_at, &run.created_at];
    let at = first_time("workflow_run", times)?;
    // The path names the file; very old payloads only have a display name.
    let workflow = run
        .path
        .clone()
        .filter(|p| !p.is_empty())
        .or_else(|| run.name.clone())
        .unwrap_or_default();
    let trigger = run.event.clone().unwrap_or_default();
    let kind = match ctx.action() {
        "requested" | "in_progress" | "completed" => ObservationKind::WorkflowRun {
            run_id,
            workflow: workflow.clone(),
            head_branch: run.head_branch.clone(),
            head_sha: run.head_sha.clone(),
            trigger: trigger.clone(),
            status: run
                .status
                .clone()
                .unwrap_or_else(|| ctx.action().to_string()),
            conclusion: run.conclusion.clone(),
            run_attempt: run.run_attempt.unwrap_or(1),
        },
        _ => ctx.other(),
    };
    let mut keys = vec![object_key(
        ctx.repo,
        TargetKind::WorkflowRun,
        &run_id.to_string(),
    )];
    let file = workflow_file(&workflow);
    let stem = workflow_stem(&workflow);
    for name in [file, stem] {
        let key = object_key(ctx.repo, TargetKind::Workflow, name);
        if !name.is_empty() && !keys.contains(&key) {
            keys.push(key);
        }
    }
    if trigger == REPOSITORY_DISPATCH {
        keys.push(object_key(
            ctx.repo,
            TargetKind::Workflow,
            REPOSITORY_DISPATCH,
        ));
    }
    Ok(Output::facts(at, keys, kind))
}

/// The id and head sha of a check run or suite (`what`); refused, naming
/// what is missing, without them.
fn id_and_head(
    what: &str,
    id: Option<u64>,
    head_sha: Option<&String>,
) -> Result<(u64, String), String> {
    let id = id.ok_or_else(|| format!("`{what}` has no id"))?;
    let sha = head_sha
        .filter(|s| !s.is_empty())
        .ok_or_else(|| format!("`{what}` has no head sha"))?;
    Ok((id, sha.clone()))
}

fn check_run(ctx: &Ctx, check: Option<Check>) -> NormResult {
    let check = check.ok_or_else(|| ctx.lacks("check run"))?;
    let (id, sha) = id_and_head("check_run", check.id, check.head_sha.as_ref())?;
    let at = first_time("check_run", [&check.completed_at, &check.started_at])?;
    let kind = match ctx.action() {
        "created" | "completed" | "rerequested" | "requested_action" => ObservationKind::CheckRun {
            check_run_id: id,
            name: check.name.clone().unwrap_or_default(),
            head_sha: sha.clone(),
            status: check.status.clone().unwrap_or_default(),
            conclusion: check.conclusion.clone(),
            app: check.app.and_then(|a| a.slug),
        },
        _ => ctx.other(),
    };
    let own_key = object_key(ctx.repo, TargetKind::CheckRun, &id.to_string());
    let mut out = Output::facts(at, vec![commit_key(ctx.repo, &sha), own_key.clone()], kind);
    // `CheckRun` does not say who asked for what; a re-request (someone
    // disputing the result) is also kept as the action, on the check run only.
    if matches!(ctx.action(), "rerequested" | "requested_action") {
        out.observations.push(Fact {
            at,
            target: own_key,
            kind: ctx.other(),
            snapshot: None,
        });
    }
    Ok(out)
}

fn check_suite(ctx: &Ctx, suite: Option<Suite>) -> NormResult {
    let suite = suite.ok_or_else(|| ctx.lacks("suite"))?;
    let (id, sha) = id_and_head("check_suite", suite.id, suite.head_sha.as_ref())?;
    let at = first_time("check_suite", [&suite.updated_at, &suite.created_at])?;
    let kind = match ctx.action() {
        "requested" | "rerequested" | "completed" => ObservationKind::CheckSuite {
            check_suite_id: id,
            head_sha: sha.clone(),
            status: suite.status.clone().unwrap_or_default(),
            conclusion: suite.conclusion.clone(),
            app: suite.app.and_then(|a| a.slug),
        },
        _ => ctx.other(),
    };
    Ok(Output::facts(at, vec![commit_key(ctx.repo, &sha)], kind))
}

#[cfg(test)]
#[path = "workflow_family_tests.rs"]
mod tests;
