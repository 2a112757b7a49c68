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
    close_actor_unknown, closer, hedge, human_after, is_closed, lifecycle, precheck, window_passed,
    Closer, ISSUE_IGNORE_WINDOW,
};
use super::EvalContext;
use crate::model::{Evaluation, EvidenceStrength as S, ObservationKind as K, OutcomeStatus as O};

/// Did the discussion get an answer or engagement, or get closed as unwanted?
pub fn create_discussion(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = precheck(ctx, true) {
        return e;
    }
    let replies = human_after(ctx)
        .filter(|o| matches!(o.event, K::CommentCreated { .. }))
        .count();
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
    let e = Evaluation::new(O::Accepted, S::Strong, "answered")
        .decided_by(&last.id, last.at)
        .detail("answer_comment_id", comment_id)
        .note("A comment was marked as the discussion's answer.");
    match ctx.actor_class(last) {
        crate::model::ActorClass::VisibleNonBotActor => Some(e),
        // The chooser was not visible: the answer stands, with less confidence.
        crate::model::ActorClass::SystemActor | crate::model::ActorClass::UnknownActor => {
            Some(hedge(e))
        }
        _ => None,
    }
}

fn closed(ctx: &EvalContext) -> Evaluation {
    let reason = ctx.latest_snapshot().and_then(|s| s.state_reason.clone());
    let e = match closer(ctx) {
        Closer::Lifecycle(c) => lifecycle(ctx, c),
        Closer::Unknown(c) => close_actor_unknown(c),
        Closer::Human(c) => {
            let (status, strength, signal, note) = match reason.as_deref() {
                Some("duplicate") => (
                    O::Rejected,
                    S::Strong,
                    "closed_duplicate",
                    "A visible non-bot actor closed the discussion as a duplicate.",
                ),
                Some("outdated") => (
                    O::Rejected,
                    S::Medium,
                    "closed_outdated",
                    "A visible non-bot actor closed the discussion as outdated.",
                ),
                Some("resolved") => (
                    O::Accepted,
                    S::Medium,
                    "resolved",
                    "A visible non-bot actor closed the discussion as resolved.",
                ),
                _ => (
                    O::Unknown,
                    S::Weak,
                    "closed",
                    "A visible non-bot actor closed the discussion without a reason.",
                ),
            };
            Evaluation::new(status, strength, signal)
                .decided_by(&c.id, c.at)
                .note(note)
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
        return Evaluation::new(O::Accepted, S::Medium, "human_reply")
            .decided_by(&o.id, o.at)
            .note("A visible non-bot actor replied to, labeled, edited or reacted positively to the discussion.");
    }
    if window_passed(ctx, ISSUE_IGNORE_WINDOW) {
        return Evaluation::new(O::Ignored, S::Weak, "no_engagement")
            .note("The discussion has had no visible non-bot engagement for 7 days.");
    }
    Evaluation::new(O::Pending, S::Weak, "awaiting_engagement")
        .note("The discussion is open and has had no visible non-bot engagement yet.")
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
    use crate::model::{ItemSnapshot, Observation, ObservationKind as K, Target, TargetKind};

    fn discussion(kind: &str) -> crate::model::ExecutionRecord {
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
        run(vec![
            case(
                "a human heart on the discussion",
                r(),
                vec![created(), obs(3.0, human("bob"), reacted("heart", None))],
                24.0,
                (ACCEPTED, MEDIUM, "human_reply"),
            ),
            case(
                "a bot heart on the discussion is not engagement",
                r(),
                vec![created(), obs(3.0, bot("app[bot]"), reacted("heart", None))],
                24.0,
                (PENDING, WEAK, "awaiting_engagement"),
            ),
            case(
                "answer marked",
                r(),
                vec![
                    created(),
                    obs(4.0, human("bob"), comment(777)),
                    obs(6.0, human("alice"), K::Answered { comment_id: 777 }),
                ],
                24.0,
                (ACCEPTED, STRONG, "answered"),
            ),
            case(
                "answer marked then unmarked",
                r(),
                vec![
                    created(),
                    obs(6.0, human("alice"), K::Answered { comment_id: 777 }),
                    obs(7.0, human("alice"), K::Unanswered { comment_id: 777 }),
                ],
                200.0,
                (IGNORED, WEAK, "no_engagement"),
            ),
            case(
                "non-bot reply",
                r(),
                vec![created(), obs(3.0, human("bob"), comment(5))],
                24.0,
                (ACCEPTED, MEDIUM, "human_reply"),
            ),
            case(
                "bot reply is not engagement",
                r(),
                vec![created(), obs(3.0, bot("helper[bot]"), comment(5))],
                24.0,
                (PENDING, WEAK, "awaiting_engagement"),
            ),
            case(
                "closed as duplicate by a human",
                r(),
                vec![created(), closed(human("alice"), Some("duplicate"))],
                24.0,
                (REJECTED, STRONG, "closed_duplicate"),
            ),
            case(
                "closed as outdated by a human",
                r(),
                vec![created(), closed(human("alice"), Some("outdated"))],
                24.0,
                (REJECTED, MEDIUM, "closed_outdated"),
            ),
            case(
                "closed as resolved by a human",
                r(),
                vec![created(), closed(human("alice"), Some("resolved"))],
                24.0,
                (ACCEPTED, MEDIUM, "resolved"),
            ),
            case(
                "closed by a bot",
                r(),
                vec![created(), closed(bot("stale[bot]"), Some("outdated"))],
                24.0,
                (IGNORED, WEAK, "lifecycle"),
            ),
            case(
                "deleted (spam) by a human",
                r(),
                vec![created(), obs(2.0, human("alice"), K::Deleted)],
                24.0,
                (REJECTED, STRONG, "deleted"),
            ),
            case(
                "no engagement after the window",
                r(),
                vec![created()],
                168.0,
                (IGNORED, WEAK, "no_engagement"),
            ),
            unobserved_case("nothing seen", r()),
        ]);
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
        run(vec![
            case(
                "retained after the window",
                r(),
                vec![ours()],
                24.0,
                (ACCEPTED, MEDIUM, "state_retained"),
            ),
            case(
                "reverted by a human",
                r(),
                vec![
                    ours(),
                    obs(2.0, human("alice"), title_edit("new")).snap(titled("old")),
                ],
                24.0,
                (REJECTED, STRONG, "state_reverted"),
            ),
            case(
                "labels replaced by a human",
                discussion("update_discussion")
                    .before(json!({"labels": ["a"]}))
                    .after(json!({"labels": ["b"]})),
                vec![obs(2.0, human("alice"), unlabeled("b")).snap(with_labels(d(open()), &["c"]))],
                24.0,
                (REJECTED, STRONG, "state_replaced"),
            ),
            case(
                "no after state",
                discussion("update_discussion"),
                vec![ours()],
                24.0,
                (UNKNOWN, NONE, "missing_execution_state"),
            ),
        ]);
    }

    #[test]
    fn close_discussion_table() {
        let r = || discussion("close_discussion");
        let ours = || obs(-0.01, workflow_actor(), K::Closed).snap(d(closed_as(Some("resolved"))));
        run(vec![
            case(
                "still closed after the window",
                r(),
                vec![ours()],
                24.0,
                (ACCEPTED, MEDIUM, "closed"),
            ),
            case(
                "closed, window not passed",
                r(),
                vec![ours()],
                2.0,
                (PENDING, WEAK, "closed"),
            ),
            case(
                "reopened by a human",
                r(),
                vec![
                    ours(),
                    obs(3.0, human("alice"), K::Reopened).snap(d(open())),
                ],
                24.0,
                (REJECTED, STRONG, "reopened"),
            ),
            case(
                "deleted",
                r(),
                vec![ours(), obs(3.0, human("alice"), K::Deleted)],
                24.0,
                (UNKNOWN, NONE, "deleted"),
            ),
            unobserved_case("nothing seen", r()),
        ]);
    }
}
