//! Which API paths the fetcher must GET for an output, per type: the primary
//! object first (its 404/410 means the object is gone), then supplementary
//! lists (a 404 there is not deletion). Paths are relative to
//! `repos/{owner}/{repo}/` of the target's repository; GraphQL results use the
//! `graphql/...` keys documented in `super`.

use serde_json::Value;

use super::{ApiState, Endpoint};
use crate::model::OutputType;
use crate::model::{ExecutionRecord, TargetKind};

/// The endpoints for `record`, primary first. Empty when the record names
/// nothing the API can be asked about (the evaluator then decides alone).
pub(crate) fn required_endpoints(record: &ExecutionRecord) -> Vec<Endpoint> {
    let Some(paths) = paths_for(record) else {
        return Vec::new();
    };
    paths
        .into_iter()
        .enumerate()
        .map(|(i, path)| Endpoint {
            path,
            primary: i == 0,
        })
        .collect()
}

/// Endpoints that only the first responses reveal: what landed on the base
/// branch after a merged PR (`compare/MERGE...BASE`, for reverts), the
/// compare of a pushed commit with the merge commit, the PRs a timeline
/// cross-references (for `assign_to_agent`), and the milestone an
/// `assign_milestone` item no longer holds. All supplementary.
pub(crate) fn follow_up_endpoints(record: &ExecutionRecord, state: &ApiState) -> Vec<Endpoint> {
    let supplementary = |path: String| Endpoint {
        path,
        primary: false,
    };
    let Some(n) = thread_number(record) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let output_type = OutputType::from(record.output_type.as_str());
    let pr = state.responses.get(&format!("pulls/{n}"));
    let merge = pr
        .filter(|p| p.get("merged").and_then(Value::as_bool) == Some(true))
        .and_then(|p| p.get("merge_commit_sha"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty());
    let base = pr
        .and_then(|p| p.pointer("/base/ref"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty());
    // What landed on the base branch after a merged PR (the compare's
    // commits), where a `This reverts commit …` of its merge or of a pushed
    // commit would be: a revert is read from the API as from `push` webhooks.
    if let (
        OutputType::CreatePullRequest
        | OutputType::PushToPullRequestBranch
        | OutputType::MergePullRequest,
        Some(m),
        Some(b),
    ) = (&output_type, merge, base)
    {
        out.push(supplementary(format!("compare/{m}...{b}")));
    }
    match output_type {
        OutputType::PushToPullRequestBranch => {
            if let (Some(sha), Some(merge)) = (pushed_sha(record), merge) {
                out.push(supplementary(format!("compare/{sha}...{merge}")));
            }
        }
        OutputType::AssignToAgent => {
            let timeline = state.responses.get(&format!("issues/{n}/timeline"));
            for e in timeline.map(super::rest::items).unwrap_or_default() {
                let source = e.pointer("/source/issue");
                let is_pr = source.and_then(|s| s.get("pull_request")).is_some();
                let number = source.and_then(|s| s.get("number")).and_then(Value::as_u64);
                // The PR, and its reviews: a person's approval of the
                // agent's PR is read as the `pull_request_review` webhook
                // gives it.
                if let (Some("cross-referenced"), true, Some(m)) =
                    (e.get("event").and_then(Value::as_str), is_pr, number)
                {
                    out.push(supplementary(format!("pulls/{m}")));
                    out.push(supplementary(format!("pulls/{m}/reviews")));
                }
            }
        }
        // A milestone the item no longer holds may have been deleted (its
        // deletion takes it off every item without a timeline entry the
        // model knows of): its own read says so by a 404 (rule 15).
        OutputType::AssignMilestone => {
            let issue = state.responses.get(&format!("issues/{n}"));
            let holds = issue
                .and_then(|i| i.pointer("/milestone/number"))
                .and_then(Value::as_u64);
            if let (Some(m), Some(_)) = (record.milestone_number(), issue) {
                if holds != Some(m) {
                    out.push(supplementary(format!("milestones/{m}")));
                }
            }
        }
        // The base a PR had before a later change: REST's `base_ref_changed`
        // names who and when, not the branches; GraphQL's names both, as the
        // `pull_request.edited` webhook's `changes.base.ref.from` does.
        OutputType::UpdatePullRequest => {
            let timeline = state.responses.get(&format!("issues/{n}/timeline"));
            let changed = timeline.map(super::rest::items).unwrap_or_default();
            if changed
                .iter()
                .any(|e| e.get("event").and_then(Value::as_str) == Some("base_ref_changed"))
            {
                out.push(supplementary(format!("graphql/base_changes/{n}")));
            }
        }
        _ => {}
    }
    out
}

/// The commit a push recorded (Oct 2026 `metadata.commit_sha`, May 2026
/// `after_state.head_sha`).
pub(crate) fn pushed_sha(record: &ExecutionRecord) -> Option<&str> {
    record
        .metadata
        .get("commit_sha")
        .or_else(|| record.after_state.get("head_sha"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// The issue or PR number the output sits on (its own, or its parent's).
pub(crate) fn thread_number(record: &ExecutionRecord) -> Option<u64> {
    let t = record.target.as_ref()?;
    match t.kind {
        k if k.is_thread() => t.number,
        TargetKind::Discussion => t.number,
        _ => t.parent_number.or(t.number),
    }
}

/// The (parent, child) a `link_sub_issue` record names: the target is the
/// child (`sub_issue_number` else), its parent `parent_number` (or
/// `parent_issue_number`), as the mapper reads them.
pub(crate) fn link_of(record: &ExecutionRecord) -> Option<(u64, u64)> {
    let t = record.target.as_ref()?;
    let field = |k: &str| record.field_str(k).and_then(|s| s.parse::<u64>().ok());
    let child = t.number.or_else(|| field("sub_issue_number"))?;
    let parent = t.parent_number.or_else(|| field("parent_issue_number"))?;
    Some((parent, child))
}

/// The runs a repository dispatch may have started: `repository_dispatch`
/// runs created from a minute before the execution on (the manifest line is
/// written after the dispatch returns, as the evaluator's window allows); a
/// listing, which the fetch pages.
pub(crate) fn dispatched_runs(record: &ExecutionRecord) -> String {
    let since = crate::model::sane_time::minus(record.executed_at, chrono::Duration::minutes(1))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    format!("actions/runs?event=repository_dispatch&created=%3E%3D{since}")
}

/// `commits/{sha}/check-runs?check_name={name}` of a `create_check_run`
/// record: the check runs of its name on its commit (one page: a commit
/// has few runs of one name).
pub(crate) fn same_name_runs(record: &ExecutionRecord) -> Option<String> {
    let sha = record.target.as_ref()?.name.clone()?;
    let name = record
        .field_str("name")
        .or_else(|| record.field_str("check_name"))?;
    let name: String = name
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    Some(format!(
        "commits/{sha}/check-runs?check_name={name}&per_page=100"
    ))
}

fn paths_for(record: &ExecutionRecord) -> Option<Vec<String>> {
    let t = record.target.as_ref();
    let n = thread_number(record);
    let issue = |n: u64| vec![format!("issues/{n}"), format!("issues/{n}/timeline")];
    // A thread's conversation comments and its reviews are read from its
    // timeline (`commented`, `reviewed`: the same objects, ids and times as
    // `issues/{n}/comments` and `pulls/{n}/reviews`), never from those lists
    // beside it: two more reads of one thread that could not change a verdict
    // (`map` keeps one observation an id; docs/evaluation.md "What each path
    // reads").
    let pr_activity = |n: u64| {
        vec![
            format!("pulls/{n}"),
            format!("pulls/{n}/commits"),
            format!("issues/{n}/timeline"),
        ]
    };
    // The PR's commits too: a push after a review answers it ("changes
    // requested, then addressed by commits"), and only the commits list
    // names the GitHub user who pushed (the timeline's `committed` names a
    // git identity; its `head_ref_force_pushed`, read with the commits,
    // names who forced).
    // And the inline comments: a person's reply to one of the review's
    // comments answers it (`pull_request_review_comment` on the webhook path).
    // The reviews list stays their primary object (gh-aw's evaluator reads
    // it; a conformance case may carry nothing else).
    let reviews_first = |n: u64| {
        vec![
            format!("pulls/{n}/reviews"),
            format!("pulls/{n}"),
            format!("pulls/{n}/commits"),
            format!("pulls/{n}/comments"),
            format!("issues/{n}/timeline"),
        ]
    };
    let meta_str = |k: &str| record.field_str(k).map(str::to_string);
    let meta_u64 = |k: &str| {
        record
            .metadata
            .get(k)
            .or_else(|| record.extra.get(k))
            .and_then(crate::model::wire::github_id)
    };
    Some(match OutputType::from(record.output_type.as_str()) {
        OutputType::CreatePullRequest if t.is_some_and(|t| t.kind == TargetKind::Issue) => {
            issue(n?)
        }
        OutputType::CreatePullRequest | OutputType::PushToPullRequestBranch => pr_activity(n?),
        OutputType::ClosePullRequest | OutputType::MergePullRequest => {
            let n = n?;
            vec![format!("pulls/{n}"), format!("issues/{n}/timeline")]
        }
        // An update is kept by a person's later edit of a field it compares,
        // a push (`head_sha`) included: the pushes are the PR's commits (the
        // timeline's `committed` names no GitHub user).
        OutputType::UpdatePullRequest => {
            let n = n?;
            vec![
                format!("pulls/{n}"),
                format!("pulls/{n}/commits"),
                format!("issues/{n}/timeline"),
            ]
        }
        OutputType::CreateIssue => issue(n?),
        OutputType::AddComment | OutputType::CommentMemory => {
            let id = t.and_then(|t| t.id)?;
            let mut v = vec![format!("issues/comments/{id}")];
            if let Some(p) = t.and_then(|t| t.parent_number) {
                v.push(format!("issues/{p}/comments"));
                v.push(format!("issues/{p}"));
            }
            v
        }
        OutputType::AddLabels | OutputType::RemoveLabels | OutputType::ReplaceLabel => {
            let n = n?;
            vec![
                format!("issues/{n}/labels"),
                format!("issues/{n}"),
                format!("issues/{n}/timeline"),
            ]
        }
        // A requested reviewer acts by reviewing, commenting, or writing an
        // inline comment (`pull_request_review_comment` on the webhook path).
        // Its reviews from their list, where `latest_review_pending` reads
        // a review still being written (`PENDING`, no submission time).
        OutputType::AddReviewer => {
            let n = n?;
            vec![
                format!("pulls/{n}/requested_reviewers"),
                format!("pulls/{n}/reviews"),
                format!("pulls/{n}"),
                format!("pulls/{n}/comments"),
                format!("issues/{n}/timeline"),
            ]
        }
        // A link shows on both ends: the child's timeline and `parent`, the
        // parent's timeline and `sub_issues` (the `sub_issues` webhook names
        // both), each read, none left to another.
        OutputType::LinkSubIssue if link_of(record).is_some() => {
            let (parent, child) = link_of(record)?;
            vec![
                format!("issues/{child}"),
                format!("issues/{child}/timeline"),
                format!("issues/{child}/parent"),
                format!("issues/{parent}/sub_issues"),
                format!("issues/{parent}/timeline"),
            ]
        }
        // gh-aw judges these from the review list; the PR is context.
        OutputType::SubmitPullRequestReview | OutputType::DismissPullRequestReview => {
            reviews_first(n?)
        }
        // Readiness is judged from the draft state, the reviews and the
        // close; its rules count no pushes and no inline comments.
        OutputType::MarkPullRequestAsReadyForReview => {
            let n = n?;
            vec![
                format!("pulls/{n}/reviews"),
                format!("pulls/{n}"),
                format!("issues/{n}/timeline"),
            ]
        }
        OutputType::CreatePullRequestReviewComment
        | OutputType::ReplyToPullRequestReviewComment => {
            let n = n?;
            let first = match t.filter(|t| t.kind == TargetKind::ReviewComment) {
                Some(rc) => format!("pulls/comments/{}", rc.id?),
                None => format!("pulls/{n}/comments"),
            };
            // The PR too: a comment on a PR merged or closed since is judged
            // with it, as the webhook path judges it.
            vec![
                first,
                format!("graphql/review_threads/{n}"),
                format!("pulls/{n}"),
            ]
        }
        OutputType::ResolvePullRequestReviewThread => {
            let n = n?;
            vec![format!("graphql/review_threads/{n}"), format!("pulls/{n}")]
        }
        OutputType::HideComment => {
            let node = t
                .and_then(|t| t.node_id.clone())
                .or_else(|| meta_str("comment_id"))?;
            vec![format!("graphql/minimized/{node}")]
        }
        OutputType::CreateDiscussion
        | OutputType::UpdateDiscussion
        | OutputType::CloseDiscussion => {
            vec![format!("graphql/discussion/{}", n?)]
        }
        OutputType::DispatchWorkflow
        | OutputType::CallWorkflow
        | OutputType::ApproveWorkflowRun
        | OutputType::DispatchRepository => {
            let run =
                meta_u64("run_id").or_else(|| t.filter(|t| t.kind == TargetKind::WorkflowRun)?.id);
            match (run, OutputType::from(record.output_type.as_str())) {
                (Some(run), _) => vec![format!("actions/runs/{run}")],
                // A repository dispatch answers no run id: the runs it
                // started are listed by their trigger, from execution on.
                (None, OutputType::DispatchRepository) => vec![dispatched_runs(record)],
                (None, _) => return None,
            }
        }
        OutputType::CreateCheckRun => {
            let id = t.filter(|t| t.kind == TargetKind::CheckRun)?.id?;
            // And the PR it reports on: its merge or close over the check's
            // result is the check's verdict (`pull_request` on the webhook
            // path).
            let mut v = vec![format!("check-runs/{id}")];
            v.extend(n.map(|n| format!("pulls/{n}")));
            // Who closed it (`check_upheld` asks for a visible non-bot's
            // close): its timeline, as the `pull_request.closed` sender.
            v.extend(n.map(|n| format!("issues/{n}/timeline")));
            // And the check runs of its name on its commit: a later one
            // replaced it (`check_superseded`; `check_run.created` on the
            // webhook path).
            v.extend(same_name_runs(record));
            v
        }
        OutputType::CreateCodeScanningAlert | OutputType::AutofixCodeScanningAlert => {
            let alert = meta_u64("alert_number").or_else(|| {
                let t = t.filter(|t| t.kind == TargetKind::CodeScanningAlert)?;
                t.number.or(t.id)
            })?;
            vec![format!("code-scanning/alerts/{alert}")]
        }
        OutputType::UpdateRelease => {
            let tag = t
                .filter(|t| t.kind == TargetKind::Release)
                .and_then(|t| t.name.clone())
                .or_else(|| meta_str("tag"))?;
            vec![format!("releases/tags/{tag}")]
        }
        // The project the output created: whether it is closed, since when.
        OutputType::CreateProject => {
            let number = t.filter(|t| t.kind == TargetKind::Project)?.number?;
            vec![format!("graphql/project/{number}")]
        }
        OutputType::Noop
        | OutputType::MissingTool
        | OutputType::MissingData
        | OutputType::ReportIncomplete => return None,
        // Issue-side metadata, assignments, sub-issues and anything unknown on
        // a thread: the item and its timeline.
        _ => match t?.kind {
            TargetKind::PullRequest => {
                let n = n?;
                vec![format!("pulls/{n}"), format!("issues/{n}/timeline")]
            }
            TargetKind::Issue => issue(n?),
            _ => return None,
        },
    })
}
