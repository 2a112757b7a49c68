//! Outputs discovered from webhooks alone: an issue, PR, comment or review
//! comment whose body carries a gh-aw `Output` marker is registered when it is
//! created, so it is tracked even before (or without) the run's manifest.

use chrono::{DateTime, Utc};

use super::payload::{parse_time, Comment, Item};
use super::Ctx;
use crate::model::execution::Sources;
use crate::model::markers::{parse_marker, GhAwMarker, MarkerKind};
use crate::model::OutputType;
use crate::model::{ExecutionRecord, Target, TargetKind};

/// A `create_issue` / `create_pull_request` discovered from `opened`.
pub(super) fn for_item(
    ctx: &Ctx,
    item: &Item,
    number: u64,
    is_pr: bool,
    at: DateTime<Utc>,
) -> Option<ExecutionRecord> {
    let marker = output_marker(item.body.as_deref())?;
    let (kind, output_type, local) = if is_pr {
        (
            TargetKind::PullRequest,
            "create_pull_request",
            format!("pr-{number}"),
        )
    } else {
        (TargetKind::Issue, "create_issue", format!("issue-{number}"))
    };
    let mut target = Target::thread(ctx.repo, kind, number);
    target.url = item.html_url.clone();
    target.node_id = item.node_id.clone();
    let created = parse_time(item.created_at.as_ref()).unwrap_or(at);
    Some(record(ctx, output_type, &local, marker, target, created))
}

/// An `add_comment` discovered from `issue_comment.created`.
pub(super) fn for_comment(
    ctx: &Ctx,
    comment: &Comment,
    parent: u64,
    at: DateTime<Utc>,
) -> Option<ExecutionRecord> {
    let (marker, id, target, created) =
        comment_output(ctx, comment, TargetKind::Comment, parent, at)?;
    Some(record(
        ctx,
        "add_comment",
        &format!("comment-{id}"),
        marker,
        target,
        created,
    ))
}

/// A `create_pull_request_review_comment` (or, when it answers another
/// comment, a `reply_to_pull_request_review_comment`) discovered from
/// `pull_request_review_comment.created`. A reply keeps the comment it
/// answers as `extra.comment_id`, the field gh-aw's tool call names it by.
pub(super) fn for_review_comment(
    ctx: &Ctx,
    comment: &Comment,
    in_reply_to: Option<u64>,
    parent: u64,
    at: DateTime<Utc>,
) -> Option<ExecutionRecord> {
    let (marker, id, target, created) =
        comment_output(ctx, comment, TargetKind::ReviewComment, parent, at)?;
    let output_type = match in_reply_to {
        Some(_) => OutputType::ReplyToPullRequestReviewComment,
        None => OutputType::CreatePullRequestReviewComment,
    };
    let mut r = record(
        ctx,
        output_type.as_str(),
        &format!("review-comment-{id}"),
        marker,
        target,
        created,
    );
    if let Some(root) = in_reply_to {
        r.extra.insert("comment_id".to_string(), root.into());
    }
    Some(r)
}

/// What a comment discovered as an agent output starts from: its marker, its
/// id, its target (a comment of `kind` on thread `parent`) and when it was
/// made (`at` when the comment does not say).
fn comment_output(
    ctx: &Ctx,
    comment: &Comment,
    kind: TargetKind,
    parent: u64,
    at: DateTime<Utc>,
) -> Option<(GhAwMarker, u64, Target, DateTime<Utc>)> {
    let marker = output_marker(comment.body.as_deref())?;
    let id = comment.id?;
    let mut target = Target::comment(ctx.repo, kind, id, Some(parent));
    target.url = comment.html_url.clone();
    target.node_id = comment.node_id.clone();
    let created = parse_time(comment.created_at.as_ref()).unwrap_or(at);
    Some((marker, id, target, created))
}

/// Only agent outputs count: not activation, expiry or failure notices.
fn output_marker(body: Option<&str>) -> Option<GhAwMarker> {
    parse_marker(body?).filter(|m| m.kind == MarkerKind::Output)
}

/// The agent the marker names (engine, its version, model), kept in the
/// record's metadata for the opentraces export (`export::mapping::agent`).
fn marker_agent(marker: &GhAwMarker) -> serde_json::Map<String, serde_json::Value> {
    [
        ("engine", &marker.engine),
        ("engine_version", &marker.engine_version),
        ("model", &marker.model),
    ]
    .into_iter()
    // Text anyone can write into a body: short, printable values only.
    .filter_map(|(k, v)| {
        let v = v
            .as_deref()
            .filter(|v| v.len() <= 100 && !v.chars().any(char::is_control))?;
        Some((k.to_string(), v.into()))
    })
    .collect()
}

fn record(
    ctx: &Ctx,
    output_type: &str,
    local: &str,
    marker: GhAwMarker,
    target: Target,
    executed_at: DateTime<Utc>,
) -> ExecutionRecord {
    let metadata = marker_agent(&marker);
    ExecutionRecord {
        id: ExecutionRecord::output_id(ctx.repo, marker.run_id, local),
        output_type: output_type.to_string(),
        repo: ctx.repo.to_string(),
        run_id: marker.run_id,
        index: None,
        // A marker is text anyone can write into a body: a workflow name that
        // fails the boundary check (controls, overlong) is dropped.
        workflow: marker
            .workflow_id
            .or(marker.workflow_name)
            .filter(|w| crate::model::ident::workflow_name(w).is_ok()),
        target: Some(target),
        executed_at,
        // The sender of the creating event is the identity the workflow wrote as.
        actor: ctx.p.sender.as_ref().and_then(|s| s.login.clone()),
        provider: None,
        temporary_id: None,
        before_state: Default::default(),
        after_state: Default::default(),
        metadata,
        labels_added: Vec::new(),
        labels_before: None,
        extra: Default::default(),
        sources: Sources {
            manifest: false,
            webhook: true,
        },
    }
}
