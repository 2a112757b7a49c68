//! `issue_comment` and `pull_request_review` events: filed under the issue or
//! PR thread they sit on, with that item's state as the snapshot.

use super::payload::parse_time;
use super::{discovery, Ctx, NormResult, Output};
use crate::model::markers::comment_flags;
use crate::model::ObservationKind;

pub(super) fn normalize(ctx: &Ctx) -> NormResult {
    if ctx.event == "issue_comment" {
        issue_comment(ctx)
    } else {
        review(ctx)
    }
}

/// The events this family normalizes: `issue_comment` and `pull_request_review`.
pub(super) const EVENTS: super::Events = &[
    ("issue_comment", normalize),
    ("pull_request_review", normalize),
];

fn issue_comment(ctx: &Ctx) -> NormResult {
    let issue = ctx.p.issue.as_ref().ok_or("`issue_comment` has no issue")?;
    let number = issue.number.ok_or("`issue_comment` issue has no number")?;
    let comment = ctx.p.comment.as_ref();
    let action = ctx.action();
    let own = [("created", comment.and_then(|c| c.created_at.as_ref()))];
    let updated = comment.and_then(|c| c.updated_at.as_ref());
    let at = ctx.fact_time("issue_comment", &own, updated, issue.updated_at.as_ref())?;

    let kind = comment_kind(
        ctx,
        comment.and_then(|c| c.id),
        comment.and_then(|c| c.body.as_deref()),
    );

    let mut out = Output::on_thread(ctx, number, at, kind, issue.snapshot(issue.is_pr(false)));
    if let (Some(c), "created") = (comment, action) {
        out.discoveries
            .extend(discovery::for_comment(ctx, c, number, at));
    }
    Ok(out)
}

/// What a comment event (`issue_comment` or `discussion_comment`) did to
/// comment `id`, whose text is `body`; markers tell ours and expiry notices.
pub(super) fn comment_kind(ctx: &Ctx, id: Option<u64>, body: Option<&str>) -> ObservationKind {
    match (ctx.action(), id) {
        ("created", Some(comment_id)) => {
            let (agent_marker, lifecycle_marker) = comment_flags(body);
            ObservationKind::CommentCreated {
                comment_id,
                agent_marker,
                lifecycle_marker,
                challenge: crate::model::challenge::challenge(body),
            }
        }
        ("edited", Some(comment_id)) => ObservationKind::CommentEdited { comment_id },
        ("deleted", Some(comment_id)) => ObservationKind::CommentDeleted { comment_id },
        _ => ctx.other(),
    }
}

fn review(ctx: &Ctx) -> NormResult {
    let pr = ctx
        .p
        .pull_request
        .as_ref()
        .ok_or("`pull_request_review` has no pull_request")?;
    let number = pr.number.ok_or("`pull_request_review` PR has no number")?;
    let review = ctx.p.review.as_ref();
    let submitted = parse_time(review.and_then(|r| r.submitted_at.as_ref()));
    let pr_updated = parse_time(pr.updated_at.as_ref());
    let action = ctx.action();
    // A dismissal or edit happens after the submission; the later of the two
    // times we have is the best lower bound for it.
    let at = match action {
        "submitted" => submitted.or(pr_updated),
        _ => submitted.max(pr_updated),
    }
    .ok_or_else(|| format!("`pull_request_review.{action}` has no timestamp"))?;

    let id = review.and_then(|r| r.id);
    let kind = match (action, id) {
        ("submitted", Some(review_id)) => ObservationKind::ReviewSubmitted {
            review_id,
            state: review
                .and_then(|r| r.state.as_deref())
                .unwrap_or("")
                .to_ascii_lowercase(),
        },
        ("dismissed", Some(review_id)) => ObservationKind::ReviewDismissed { review_id },
        _ => ctx.other(),
    };
    Ok(Output::on_thread(ctx, number, at, kind, pr.snapshot(true)))
}
