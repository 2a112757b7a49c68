//! Check runs, check suites and code scanning alerts as JSON, in the shapes
//! of GitHub's descriptions (`@octokit/openapi`: `check-run`,
//! `check-suite`, `code-scanning-alert`; `@octokit/openapi-webhooks`: the
//! `check_run`, `check_suite` and `code_scanning_alert` payloads), used by
//! the REST answers and the webhook payloads alike.

use serde_json::{json, Value};

use super::{api, html, iso, opt_iso, user};
use crate::bench::github_model::history::Actor;
use crate::bench::github_model::world::{Alert, CheckRun, World};

/// The App's own slug (as `GET /app` answers it): its check runs and
/// suites are the ones GitHub sends `rerequested`/`requested_action` and
/// `check_suite.requested`/`rerequested` to.
pub const OUR_APP: &str = "safe-outcomes-test";
/// The App behind a workflow token's check runs.
pub const ACTIONS_APP: &str = "github-actions";

/// The bot a GitHub App acts as.
pub fn app_bot(slug: &str) -> Actor {
    Actor::bot(&format!("{slug}[bot]"))
}

/// A GitHub App (`integration`) by its slug.
pub fn app(slug: &str) -> Value {
    let id = if slug == OUR_APP {
        crate::bench::github_model::APP_ID
    } else {
        15_368
    };
    json!({"id": id, "slug": slug, "node_id": format!("A_{id}"), "name": slug,
           "owner": {"login": "github", "id": 9_919, "type": "Organization"},
           "description": "", "external_url": format!("https://github.com/apps/{slug}"),
           "html_url": format!("https://github.com/apps/{slug}"),
           "created_at": "2018-07-30T09:30:17Z", "updated_at": "2024-04-10T20:33:16Z",
           "permissions": {"checks": "write", "metadata": "read"}, "events": []})
}

/// The id GitHub gives the check suite of `app` on `head_sha`.
pub(crate) fn suite_id(app: &str, head_sha: &str) -> u64 {
    crate::bench::github_model::webhooks::repo_id(&format!("{app}@{head_sha}")) + 20_000_000_000
}

/// The PRs whose head is `sha` (`pull_requests` of a check run or suite).
fn pulls_at(w: &World, sha: &str) -> Vec<Value> {
    w.threads
        .values()
        .filter_map(|t| Some((t.number, t.pr.as_ref()?)))
        .filter(|(_, pr)| pr.head_sha == sha)
        .map(|(n, pr)| {
            json!({"url": format!("{}/pulls/{n}", api(w)), "id": 900_000_000 + n, "number": n,
                   "head": {"ref": pr.head_ref, "sha": sha, "repo": {"id": 1, "url": api(w), "name": w.repo}},
                   "base": {"ref": "main", "sha": "0".repeat(40), "repo": {"id": 1, "url": api(w), "name": w.repo}}})
        })
        .collect()
}

/// A check suite (`check-suite`): its status and conclusion from its runs.
pub fn check_suite(w: &World, app_slug: &str, head_sha: &str) -> Value {
    let runs: Vec<&CheckRun> = w.suite_runs(app_slug, head_sha).collect();
    let done = !runs.is_empty() && runs.iter().all(|r| r.completed.is_some());
    let conclusions: Vec<&str> = runs
        .iter()
        .filter_map(|r| r.completed.as_ref().map(|c| c.1.as_str()))
        .collect();
    let conclusion = done.then(|| {
        [
            "failure",
            "cancelled",
            "timed_out",
            "action_required",
            "success",
        ]
        .into_iter()
        .find(|c| conclusions.contains(c))
        .unwrap_or("neutral")
    });
    let created = runs.iter().map(|r| r.created_at).min();
    let updated = runs
        .iter()
        .map(|r| r.completed.as_ref().map_or(r.created_at, |c| c.0))
        .max();
    let id = suite_id(app_slug, head_sha);
    json!({"id": id, "node_id": format!("CS_{id}"), "head_branch": null, "head_sha": head_sha,
           "status": if done { "completed" } else { "queued" }, "conclusion": conclusion,
           "url": format!("{}/check-suites/{id}", api(w)), "before": null, "after": head_sha,
           "pull_requests": pulls_at(w, head_sha), "app": app(app_slug),
           "latest_check_runs_count": runs.len(),
           "check_runs_url": format!("{}/check-suites/{id}/check-runs", api(w)),
           "created_at": opt_iso(created), "updated_at": opt_iso(updated),
           "rerequestable": true, "runs_rerequestable": true})
}

/// A check run (`check-run`), its suite and app inside.
pub fn check_run(w: &World, r: &CheckRun) -> Value {
    let (status, completed_at, conclusion) = match &r.completed {
        Some((at, c)) => (
            "completed",
            Value::String(iso(*at)),
            Value::String(c.clone()),
        ),
        None => ("in_progress", Value::Null, Value::Null),
    };
    let suite = check_suite(w, &r.app, &r.head_sha);
    json!({
        "id": r.id, "node_id": format!("CR_{}", r.id), "head_sha": r.head_sha,
        "external_id": "", "url": format!("{}/check-runs/{}", api(w), r.id),
        "html_url": format!("{}/runs/{}", html(w), r.id), "details_url": format!("{}/runs/{}", html(w), r.id),
        "status": status, "conclusion": conclusion, "started_at": iso(r.created_at),
        "completed_at": completed_at, "name": r.name,
        "output": {"title": r.name, "summary": "", "text": null, "annotations_count": 0,
                   "annotations_url": format!("{}/check-runs/{}/annotations", api(w), r.id)},
        "check_suite": {"id": suite["id"], "node_id": suite["node_id"], "head_branch": null,
                        "head_sha": r.head_sha, "status": suite["status"],
                        "conclusion": suite["conclusion"], "url": suite["url"], "before": null,
                        "after": r.head_sha, "pull_requests": suite["pull_requests"],
                        "app": suite["app"], "created_at": suite["created_at"],
                        "updated_at": suite["updated_at"]},
        "app": app(&r.app), "pull_requests": pulls_at(w, &r.head_sha),
    })
}

/// A code scanning alert (`code-scanning-alert`): its state now, who
/// dismissed it and why, its latest instance on the default branch.
pub fn alert(w: &World, a: &Alert) -> Value {
    let dismissed = a.dismissed.as_ref();
    json!({
        "number": a.number, "created_at": iso(a.created_at), "updated_at": iso(a.updated_at),
        "url": format!("{}/code-scanning/alerts/{}", api(w), a.number),
        "html_url": format!("{}/security/code-scanning/{}", html(w), a.number),
        "instances_url": format!("{}/code-scanning/alerts/{}/instances", api(w), a.number),
        "state": a.state.rest(), "fixed_at": opt_iso(a.fixed_at),
        "dismissed_by": dismissed.map(|d| user(&d.0)), "dismissed_at": opt_iso(dismissed.map(|d| d.1)),
        "dismissed_reason": dismissed.map(|d| d.2.clone()), "dismissed_comment": null,
        "rule": {"id": a.rule, "severity": "warning", "security_severity_level": "medium",
                 "description": format!("Rule {}", a.rule), "name": a.rule, "tags": ["security"]},
        "tool": {"name": "CodeQL", "guid": null, "version": "2.19.0"},
        "most_recent_instance": {"ref": "refs/heads/main", "analysis_key": ".github/workflows/codeql.yml:analyze",
            "environment": "{}", "category": ".github/workflows/codeql.yml:analyze", "state": a.state.rest(),
            "commit_sha": "0".repeat(40), "message": {"text": format!("Rule {}", a.rule)},
            "location": {"path": a.path, "start_line": 3, "end_line": 3, "start_column": 1, "end_column": 9},
            "classifications": []},
    })
}
