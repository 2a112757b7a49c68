//! Discussion evaluators (seed 000 §7 "Issues and Discussions"):
//! `create_discussion`, `update_discussion` (judged exactly like
//! `update_issue`: a discussion's snapshot carries the same title, body hash,
//! state and labels) and `close_discussion` (judged like `close_issue`).
//!
//! Not implemented: "discussion converted or linked to an issue or PR" (no
//! webhook reports the link). "Meaningful reactions" are a positive
//! reaction (`+1`, heart, hooray, rocket) by a visible non-bot on the
//! discussion, read by the checkpoint signals fetch (`github::signals`):
//! accepted/medium like a reply. Closing as `resolved` by a human, which the seed does not list,
//! is accepted/medium; as `outdated`, rejected/medium.

use super::common::{
    actor_unseen, closer, hedge, human_after, human_comments, is_closed, lifecycle,
    no_engagement_yet, precheck, Closer, ISSUE_IGNORE_WINDOW,
};
use super::EvalContext;
use safe_outcomes_model::{
    Evaluation, EvidenceStrength as S, ObservationKind as K, OutcomeStatus as O, Signal,
};

/// Did the discussion get an answer or engagement, or get closed as unwanted?
pub fn create_discussion(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = precheck(ctx, true) {
        return e;
    }
    let replies = human_comments(ctx);
    let e = answered(ctx)
        .or_else(|| is_closed(ctx).then(|| closed(ctx)))
        .unwrap_or_else(|| engagement(ctx));
    e.detail("closed", is_closed(ctx))
        .detail("human_replies", replies)
}

/// An answer marked (and not unmarked since) by a visible non-bot actor.
fn answered(ctx: &EvalContext) -> Option<Evaluation> {
    let last = ctx
        .after_execution()
        .filter(|o| matches!(o.event, K::Answered { .. } | K::Unanswered { .. }))
        .last()?;
    let K::Answered { comment_id } = last.event else {
        return None;
    };
    let e = Evaluation::new(O::Accepted, S::Strong, Signal::Answered)
        .decided_by(&last.id, last.at)
        .detail("answer_comment_id", comment_id)
        .note("A comment was marked as the discussion's answer.");
    match ctx.actor_class(last) {
        safe_outcomes_model::ActorClass::VisibleNonBotActor => Some(e),
        // The chooser was not visible: the answer stands, with less confidence.
        safe_outcomes_model::ActorClass::SystemActor
        | safe_outcomes_model::ActorClass::UnknownActor => Some(hedge(e)),
        _ => None,
    }
}

/// Closed: the reason decides (seed 000 §7 create_discussion "Closed as
/// duplicate, spam, or off-topic — rejected — strong"; `resolved` and
/// `outdated`, which the seed does not list, as the module doc says).
/// Automation's close is lifecycle. The rows do not ask who closed it, and
/// GitHub's API never shows a discussion's closer (only the webhook's sender
/// does), so a closer nobody can see still decides, with low confidence
/// (rule 8).
fn closed(ctx: &EvalContext) -> Evaluation {
    let reason = ctx
        .latest_state_snapshot()
        .and_then(|s| s.state_reason.clone());
    let (status, strength, signal, note) = match reason.as_deref() {
        Some("duplicate") => (
            O::Rejected,
            S::Strong,
            Signal::ClosedDuplicate,
            "The discussion was closed as a duplicate.",
        ),
        Some("outdated") => (
            O::Rejected,
            S::Medium,
            Signal::ClosedOutdated,
            "The discussion was closed as outdated.",
        ),
        Some("resolved") => (
            O::Accepted,
            S::Medium,
            Signal::Resolved,
            "The discussion was closed as resolved.",
        ),
        _ => (
            O::Unknown,
            S::Weak,
            Signal::Closed,
            "The discussion was closed without a reason.",
        ),
    };
    let verdict = || Evaluation::new(status, strength, signal).note(note);
    let e = match closer(ctx) {
        Closer::Lifecycle(c) => lifecycle(ctx, c),
        Closer::Human(c) => verdict()
            .decided_by(&c.id, c.at)
            .detail("closed_by_type", "visible_non_bot_actor"),
        Closer::Unknown(c) => {
            actor_unseen(verdict(), "closed", c.or_else(|| ctx.latest_snapshot_obs()))
        }
    };
    e.detail("state_reason", reason)
}

/// Open: human replies or triage accept; silence past 7 days is `ignored`.
fn engagement(ctx: &EvalContext) -> Evaluation {
    let engaged = human_after(ctx).find(|o| {
        matches!(
            o.event,
            K::CommentCreated { .. } | K::Labeled { .. } | K::Edited { .. } | K::Reacted { .. }
        )
    });
    if let Some(o) = engaged {
        return Evaluation::new(O::Accepted, S::Medium, Signal::HumanReply)
            .decided_by(&o.id, o.at)
            .note("A visible non-bot actor replied to, labeled, edited or reacted positively to the discussion.");
    }
    no_engagement_yet(
        ctx,
        ISSUE_IGNORE_WINDOW,
        "The discussion has had no visible non-bot engagement for 7 days.",
        (
            Signal::AwaitingEngagement,
            "The discussion is open and has had no visible non-bot engagement yet.",
        ),
    )
}

/// Did the discussion stay closed? Seed row "non-bot comments indicate the
/// close was wrong" needs comment bodies, which observations do not carry.
pub fn close_discussion(ctx: &EvalContext) -> Evaluation {
    super::issue::close_retention(ctx, "discussion")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::evaluate::testkit::*;
    use safe_outcomes_model::{
        ItemSnapshot, Observation, ObservationKind as K, Target, TargetKind,
    };

    fn discussion(kind: &str) -> safe_outcomes_model::ExecutionRecord {
        record(kind).target(Target::thread(REPO, TargetKind::Discussion, 12))
    }

    fn d(s: ItemSnapshot) -> ItemSnapshot {
        ItemSnapshot {
            kind: Some(TargetKind::Discussion),
            ..s
        }
    }

    fn created() -> Observation {
        opened_by_workflow(d(open()))
    }

    #[test]
    fn create_discussion_table() {
        let r = || discussion("create_discussion");
        let closed = |who, reason| obs(5.0, who, K::Closed).snap(d(closed_as(reason)));
        run_rows!(r(), 24.0;
            "a human heart on the discussion":
                [created(), obs(3.0, human("bob"), reacted("heart", None))] => (ACCEPTED, MEDIUM, "human_reply");
            "a bot heart on the discussion is not engagement":
                [created(), obs(3.0, bot("app[bot]"), reacted("heart", None))] => (PENDING, WEAK, "awaiting_engagement");
            "answer marked":
                [created(), obs(4.0, human("bob"), comment(777)), obs(6.0, human("alice"), K::Answered { comment_id: 777 })] => (ACCEPTED, STRONG, "answered");
            "answer marked, who marked it not shown (the API names no chooser)":
                [created(), obs(4.0, human("bob"), comment(777)), obs(6.0, None, K::Answered { comment_id: 777 })] => (ACCEPTED, STRONG, "answered");
            "answer marked by a bot is not a person's choice":
                [created(), obs(6.0, bot("app[bot]"), K::Answered { comment_id: 777 })] => (PENDING, WEAK, "awaiting_engagement");
            "answer marked then unmarked":
                [created(), obs(6.0, human("alice"), K::Answered { comment_id: 777 }), obs(7.0, human("alice"), K::Unanswered { comment_id: 777 })] => (IGNORED, WEAK, "no_engagement"), at 200.0;
            "non-bot reply": [created(), obs(3.0, human("bob"), comment(5))] => (ACCEPTED, MEDIUM, "human_reply");
            "bot reply is not engagement":
                [created(), obs(3.0, bot("helper[bot]"), comment(5))] => (PENDING, WEAK, "awaiting_engagement");
            "closed as duplicate by a human":
                [created(), closed(human("alice"), Some("duplicate"))] => (REJECTED, STRONG, "closed_duplicate");
            "closed as outdated by a human":
                [created(), closed(human("alice"), Some("outdated"))] => (REJECTED, MEDIUM, "closed_outdated");
            "closed as resolved by a human":
                [created(), closed(human("alice"), Some("resolved"))] => (ACCEPTED, MEDIUM, "resolved");
            "closed by a bot": [created(), closed(bot("stale[bot]"), Some("outdated"))] => (IGNORED, WEAK, "lifecycle");
            "deleted (spam) by a human": [created(), obs(2.0, human("alice"), K::Deleted)] => (REJECTED, STRONG, "deleted");
            "no engagement after the window": [created()] => (IGNORED, WEAK, "no_engagement"), at 168.0;
            + unobserved_case("nothing seen", r());
        );
    }

    #[test]
    fn update_discussion_table() {
        let r = || {
            discussion("update_discussion")
                .before(json!({"title": "old"}))
                .after(json!({"title": "new"}))
        };
        let titled = |t: &str| ItemSnapshot {
            title: t.into(),
            ..d(open())
        };
        let ours = || obs(-0.01, workflow_actor(), title_edit("old")).snap(titled("new"));
        run_rows!(r(), 24.0;
            "retained after the window": [ours()] => (ACCEPTED, MEDIUM, "state_retained");
            "reverted by a human":
                [ours(), obs(2.0, human("alice"), title_edit("new")).snap(titled("old"))] => (REJECTED, STRONG, "state_reverted");
            "labels replaced by a human":
                [obs(2.0, human("alice"), unlabeled("b")).snap(with_labels(d(open()), &["c"]))] => (REJECTED, STRONG, "state_replaced"), on discussion("update_discussion").before(json!({"labels": ["a"]})).after(json!({"labels": ["b"]}));
            "no after state": [ours()] => (UNKNOWN, NONE, "missing_execution_state"), on discussion("update_discussion");
        );
    }

    #[test]
    fn close_discussion_table() {
        let r = || discussion("close_discussion");
        let ours = || obs(-0.01, workflow_actor(), K::Closed).snap(d(closed_as(Some("resolved"))));
        run_rows!(r(), 24.0;
            "still closed after the window": [ours()] => (ACCEPTED, MEDIUM, "closed");
            "closed, window not passed": [ours()] => (PENDING, WEAK, "closed"), at 2.0;
            "reopened by a human":
                [ours(), obs(3.0, human("alice"), K::Reopened).snap(d(open()))] => (REJECTED, STRONG, "reopened");
            "a person says the close was wrong": [ours(), obs(5.0, human("alice"), challenge(3))] => (REJECTED, MEDIUM, "close_challenged");
            "deleted": [ours(), obs(3.0, human("alice"), K::Deleted)] => (UNKNOWN, NONE, "deleted");
            + unobserved_case("nothing seen", r());
        );
    }
}
