//! Comment moderation: `hide_comment` (seed 000 §7 "Comment Moderation").
//!
//! Webhooks do not report minimization: `CommentMinimized` /
//! `CommentUnminimized` come from reconciliation (GraphQL `isMinimized`).
//! Deletions come from webhooks filed under the comment's own key (discussion
//! comments by node id; issue comments only when filed under that key).
//!
//! Rows: still minimized after 24h → accepted/medium `comment_hidden`
//! (pending/weak before); unminimized by a visible non-bot → rejected/strong
//! `comment_unhidden` (by automation → unknown/weak); deleted after hiding →
//! accepted/medium `comment_deleted`; nothing seen of the comment →
//! unknown/none `target_unobserved`; seen, but never its hidden state →
//! unknown/none `hidden_state_unobserved`.

use super::common::{missing_reference, missing_state, unobserved};
use super::metadata::{execution_start, moved_away, retained, since_execution};
use super::EvalContext;
use safe_outcomes_model::{
    Evaluation, EvidenceStrength as S, ObservationKind as K, OutcomeStatus as O, Signal,
};

/// Did the hidden state persist?
pub fn hide_comment(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = missing_reference(ctx) {
        return e;
    }
    // General rule 1: the output names the comment it hid, not only the thread.
    let names_comment = ctx.record.target.as_ref().is_some_and(|t| {
        t.kind == safe_outcomes_model::TargetKind::Comment
            && (t.id.is_some() || t.node_id.is_some())
    });
    if !names_comment {
        return missing_state(
            "The record does not name the hidden comment (its node id or database id).",
        )
        .unresolved();
    }
    if !ctx.target_seen() {
        return unobserved();
    }
    let node = ctx.record.target.as_ref().and_then(|t| t.node_id.clone());
    let ours = |id: &str| node.as_deref().is_none_or(|n| n == id);
    if let Some(del) = since_execution(ctx).find(|o| {
        matches!(
            o.event,
            K::CommentDeleted { .. } | K::ReviewCommentDeleted { .. } | K::Deleted
        )
    }) {
        return Evaluation::new(O::Accepted, S::Medium, Signal::CommentDeleted)
            .decided_by(&del.id, del.at)
            .note("The comment was deleted after being hidden, which completes the moderation.");
    }
    let last = ctx.observations.iter().rfind(|o| match &o.event {
        K::CommentMinimized {
            comment_node_id, ..
        }
        | K::CommentUnminimized { comment_node_id } => ours(comment_node_id),
        _ => false,
    });
    let unobserved_state = || {
        Evaluation::new(O::Unknown, S::None, Signal::HiddenStateUnobserved).note(
            "The comment was seen, but not whether it is hidden (that comes from reconciliation).",
        )
    };
    let Some(last) = last else {
        return unobserved_state();
    };
    match &last.event {
        K::CommentUnminimized { .. } => moved_away(
            ctx,
            Some(last).filter(|o| o.at >= execution_start(ctx)),
            (O::Rejected, S::Strong, Signal::CommentUnhidden),
            "The comment was unhidden.",
        ),
        K::CommentMinimized { reason, .. } => {
            retained(ctx, Signal::CommentHidden, "The comment's hidden state")
                .detail("reason", reason.clone())
        }
        _ => unobserved_state(),
    }
}

#[cfg(test)]
mod tests {
    use crate::evaluate::testkit::*;
    use safe_outcomes_model::{Observation, ObservationKind as K, Target, TargetKind};

    const NODE: &str = "IC_kwDOAbc900";

    fn r() -> safe_outcomes_model::ExecutionRecord {
        record("hide_comment").target(Target {
            id: None,
            node_id: Some(NODE.into()),
            ..Target::comment(REPO, TargetKind::Comment, 0, None)
        })
    }

    fn minimized(hours: f64, node: &str) -> Observation {
        obs(
            hours,
            None,
            K::CommentMinimized {
                comment_node_id: node.into(),
                reason: Some("spam".into()),
            },
        )
    }

    fn unminimized(hours: f64, who: Option<safe_outcomes_model::Actor>) -> Observation {
        obs(
            hours,
            who,
            K::CommentUnminimized {
                comment_node_id: NODE.into(),
            },
        )
    }

    #[test]
    fn hide_comment_table() {
        run_rows!(r(), 24.0;
            "still hidden after the window":
                [minimized(0.1, NODE), minimized(30.0, NODE)] => (ACCEPTED, MEDIUM, "comment_hidden"), at 30.0;
            "hidden, window not passed": [minimized(0.1, NODE)] => (PENDING, WEAK, "comment_hidden"), at 2.0;
            "unhidden by a human":
                [minimized(0.1, NODE), unminimized(5.0, human("alice"))] => (REJECTED, STRONG, "comment_unhidden");
            "unhidden by a bot":
                [minimized(0.1, NODE), unminimized(5.0, bot("mod[bot]"))] => (UNKNOWN, WEAK, "state_changed_by_bot");
            "deleted after hiding":
                [minimized(0.1, NODE), obs(3.0, human("alice"), K::CommentDeleted { comment_id: 900 })] => (ACCEPTED, MEDIUM, "comment_deleted");
            "another comment's state says nothing": [minimized(0.1, "IC_other")] => (UNKNOWN, NONE, "hidden_state_unobserved");
            + unobserved_case("gh-aw: nothing observed of the comment", r());
            + no_target_case(r());
            "a thread with a node id names no comment (rule 1)":
                [minimized(0.1, NODE)] => (UNKNOWN, NONE, "missing_execution_state"), on record("hide_comment").target(Target {
                    node_id: Some("I_kwDOAbc7".into()),
                    ..Target::thread(REPO, TargetKind::Issue, NUMBER)
                });
        );
    }
}
