//! `add_comment` (and `comment_memory`): did a person reply to the comment,
//! react to it, or remove it? Rules, in the order checked (seed 000 §7:
//! create_issue "Open with non-bot comment, reaction, or triage",
//! create_discussion "Non-bot replies or meaningful reactions accepted
//! medium"; DESIGN §5: only a visible non-bot other than the workflow's own
//! actor is human evidence):
//!
//! | state | outcome |
//! |---|---|
//! | our comment deleted by a visible non-bot | rejected/strong `deleted` |
//! | our comment deleted by anyone else | unknown/none `deleted` |
//! | a visible non-bot replied on the thread after the comment | accepted/medium `acted_on` |
//! | a visible non-bot reacted to our comment with +1, heart, hooray or rocket after it was posted | accepted/medium `acted_on` |
//! | a visible non-bot reacted with -1 or confused, and no positive human engagement | rejected/medium `reacted_negatively` |
//! | someone nobody can see replied or reacted (positive, or of unknown kind: a rollup's count without reactors) | accepted/weak `acted_on`, `details.engaged_by = "unseen"` (rule 8) |
//! | someone nobody can see reacted negatively | rejected/weak `reacted_negatively` (rule 8) |
//! | nothing human for 7 days | ignored/weak `no_engagement` |
//! | otherwise | pending/weak `awaiting_reply` |
//!
//! Reactions come from the API (no webhook carries them), read at the
//! window checkpoints by `github::signals`; bot reactors never count. A
//! reaction rollup on the comment object (`reactions.total_count` and the
//! per-content counts) names no reactors: what it counts beyond the reactor
//! list is evidence of actors nobody can see (rule 8), never of absence.

use super::common::{
    deletion, engaged_by_unseen, is_closed, missing_reference, missing_state, no_engagement_yet,
    unobserved, unseen_engagement, ISSUE_IGNORE_WINDOW,
};
use super::EvalContext;
use safe_outcomes_model::{
    ActorClass, Evaluation, EvidenceStrength as S, ObservationKind as K, OutcomeStatus as O, Signal,
};

pub fn add_comment(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = missing_reference(ctx) {
        return e;
    }
    let Some(ours) = ctx.record.target.as_ref().and_then(|t| t.id) else {
        return missing_state("The record names the thread but not the comment's id, so the comment cannot be told from others.").unresolved();
    };
    if !ctx.target_seen() {
        return unobserved();
    }
    if let Some(e) = deleted(ctx, ours) {
        return e;
    }
    // Replies count from our comment's own creation time when we saw it.
    let posted = ctx
        .observations
        .iter()
        .find(|o| matches!(o.event, K::CommentCreated { comment_id, .. } if comment_id == ours))
        .map_or(ctx.record.executed_at, |o| o.at);
    let is_reply = |o: &&safe_outcomes_model::Observation| {
        o.at >= posted
            && matches!(o.event, K::CommentCreated { comment_id, .. } if comment_id != ours)
    };
    let human_replies: Vec<_> = ctx
        .observations
        .iter()
        .filter(is_reply)
        .filter(|o| ctx.is_human(o))
        .collect();
    let bot_replies = ctx
        .observations
        .iter()
        .filter(is_reply)
        .filter(|o| !ctx.is_human(o))
        .count();
    let reactions: Vec<_> = ctx
        .observations
        .iter()
        .filter(|o| o.at >= posted && ctx.is_human(o))
        .filter(|o| matches!(o.event, K::Reacted { comment_id: Some(c), .. } if c == ours))
        .collect();
    let liked = reactions
        .iter()
        .find(|o| o.event.reaction_polarity() == Some(true));
    let disliked = reactions
        .iter()
        .find(|o| o.event.reaction_polarity() == Some(false));
    // Rule 8: replies and reactions on ours by actors nobody can see (a
    // rollup's counts, an author not shown).
    let unseen =
        |o: &&safe_outcomes_model::Observation| ctx.actor_class(o) == ActorClass::UnknownActor;
    let on_ours = |o: &&safe_outcomes_model::Observation| {
        is_reply(o)
            || matches!(o.event, K::Reacted { comment_id: Some(c), .. } if c == ours && o.at >= posted)
    };
    let unseen_engaged = unseen_engagement(ctx).filter(on_ours).find(unseen);
    let unseen_disliked = ctx
        .observations
        .iter()
        .filter(on_ours)
        .filter(unseen)
        .find(|o| o.event.reaction_polarity() == Some(false));
    let e = if let Some(first) = human_replies.first() {
        Evaluation::new(O::Accepted, S::Medium, Signal::ActedOn)
            .decided_by(&first.id, first.at)
            .note("A visible non-bot actor replied on the thread after the comment.")
    } else if let Some(r) = liked {
        Evaluation::new(O::Accepted, S::Medium, Signal::ActedOn)
            .decided_by(&r.id, r.at)
            .note("A visible non-bot actor reacted positively to the comment.")
    } else if let Some(r) = disliked {
        Evaluation::new(O::Rejected, S::Medium, Signal::ReactedNegatively)
            .decided_by(&r.id, r.at)
            .note("A visible non-bot actor reacted negatively to the comment, and no one engaged positively.")
    } else if let Some(o) = unseen_engaged {
        engaged_by_unseen(
            Evaluation::new(O::Accepted, S::Medium, Signal::ActedOn)
                .note("Someone replied to or reacted to the comment."),
            o,
        )
    } else if let Some(o) = unseen_disliked {
        engaged_by_unseen(
            Evaluation::new(O::Rejected, S::Medium, Signal::ReactedNegatively)
                .note("Someone reacted negatively to the comment, and no one engaged positively."),
            o,
        )
    } else {
        // gh-aw calls a bot follow-up pending/medium; a bot is not human
        // evidence (seed §6), so it stays weak here.
        no_engagement_yet(
            ctx,
            ISSUE_IGNORE_WINDOW,
            "No visible non-bot actor replied within 7 days.",
            (
                Signal::AwaitingReply,
                "No visible non-bot actor has replied yet.",
            ),
        )
    };
    e.detail("human_replies", human_replies.len())
        .detail("human_reactions", reactions.len())
        .detail("bot_followups", bot_replies)
        .detail("thread_closed", is_closed(ctx))
}

/// Our comment deleted: by a visible non-bot it is a rejection; otherwise
/// (the workflow tidying up, a bot) it says nothing about reception.
fn deleted(ctx: &EvalContext, ours: u64) -> Option<Evaluation> {
    let obs = ctx
        .observations
        .iter()
        .find(|o| matches!(o.event, K::CommentDeleted { comment_id } if comment_id == ours))?;
    Some(deletion(ctx, obs, "comment"))
}

#[cfg(test)]
mod tests {
    use crate::evaluate::testkit::*;
    use safe_outcomes_model::ObservationKind as K;

    fn ours() -> safe_outcomes_model::Observation {
        obs(-0.01, workflow_actor(), comment(COMMENT_ID))
    }

    /// The counts the verdict carries: a person's reply is no bot's
    /// follow-up, and a bot's is no person's reply.
    #[test]
    fn replies_are_counted_by_who_wrote_them() {
        let o = vec![
            ours(),
            obs(3.0, human("alice"), comment(901)),
            obs(4.0, bot("app[bot]"), comment(902)),
            obs(5.0, bot("app[bot]"), comment(903)),
        ];
        let e = eval(&record("add_comment"), o, 24.0);
        assert_eq!(e.details["human_replies"], 1, "{e:?}");
        assert_eq!(e.details["bot_followups"], 2, "{e:?}");
    }

    #[test]
    fn add_comment_table() {
        let r = || record("add_comment");
        run_rows!(r(), 24.0;
            "human reply after the comment": [ours(), obs(3.0, human("alice"), comment(901))] => (ACCEPTED, MEDIUM, "acted_on");
            "human comment before ours is not a reply":
                [obs(-1.0, human("alice"), comment(899)), ours()] => (PENDING, WEAK, "awaiting_reply");
            "bot follow-up only": [ours(), obs(3.0, bot("app[bot]"), comment(901))] => (PENDING, WEAK, "awaiting_reply");
            "workflow's own follow-up only":
                [ours(), obs(3.0, workflow_actor(), comment(901))] => (PENDING, WEAK, "awaiting_reply");
            "human +1 on our comment":
                [ours(), obs(3.0, human("alice"), reacted("+1", Some(COMMENT_ID)))] => (ACCEPTED, MEDIUM, "acted_on");
            "human rocket on our comment":
                [ours(), obs(3.0, human("alice"), reacted("rocket", Some(COMMENT_ID)))] => (ACCEPTED, MEDIUM, "acted_on");
            "bot +1 on our comment is not human":
                [ours(), obs(3.0, bot("app[bot]"), reacted("+1", Some(COMMENT_ID)))] => (PENDING, WEAK, "awaiting_reply");
            "workflow's own +1 on our comment is not human":
                [ours(), obs(3.0, workflow_actor(), reacted("+1", Some(COMMENT_ID)))] => (PENDING, WEAK, "awaiting_reply");
            "human +1 on another comment is not on ours":
                [ours(), obs(3.0, human("alice"), reacted("+1", Some(5)))] => (PENDING, WEAK, "awaiting_reply");
            "human -1 on our comment":
                [ours(), obs(3.0, human("alice"), reacted("-1", Some(COMMENT_ID)))] => (REJECTED, MEDIUM, "reacted_negatively");
            "human confused, past 7 days, still a rejection":
                [ours(), obs(3.0, human("alice"), reacted("confused", Some(COMMENT_ID)))] => (REJECTED, MEDIUM, "reacted_negatively"), at 8.0 * 24.0;
            "-1 and +1 by people: positive engagement wins":
                [ours(), obs(2.0, human("bob"), reacted("-1", Some(COMMENT_ID))), obs(3.0, human("alice"), reacted("heart", Some(COMMENT_ID)))] => (ACCEPTED, MEDIUM, "acted_on");
            "-1 and a human reply: the reply wins":
                [ours(), obs(2.0, human("bob"), reacted("-1", Some(COMMENT_ID))), obs(3.0, human("alice"), comment(901))] => (ACCEPTED, MEDIUM, "acted_on");
            "eyes says nothing":
                [ours(), obs(3.0, human("alice"), reacted("eyes", Some(COMMENT_ID)))] => (IGNORED, WEAK, "no_engagement"), at 8.0 * 24.0;
            "deleted by a human":
                [ours(), obs(2.0, human("alice"), K::CommentDeleted { comment_id: COMMENT_ID })] => (REJECTED, STRONG, "deleted");
            "deleted by the workflow":
                [ours(), obs(2.0, workflow_actor(), K::CommentDeleted { comment_id: COMMENT_ID })] => (UNKNOWN, NONE, "deleted");
            "another comment deleted is not ours":
                [ours(), obs(2.0, human("alice"), K::CommentDeleted { comment_id: 5 })] => (PENDING, WEAK, "awaiting_reply");
            "thread closed after the comment with no reply, past 7 days":
                [ours(), obs(5.0, human("alice"), K::Closed).snap(closed_as(Some("completed")))] => (IGNORED, WEAK, "no_engagement"), at 7.0 * 24.0;
            "thread closed with no reply, within 7 days":
                [ours(), obs(5.0, human("alice"), K::Closed).snap(closed_as(Some("completed")))] => (PENDING, WEAK, "awaiting_reply");
            "nothing within 7 days": [ours()] => (IGNORED, WEAK, "no_engagement"), at 8.0 * 24.0;
            "a reply whose author is not shown: one step weaker (rule 8)":
                [ours(), obs(3.0, human("ghost"), comment(901))] => (ACCEPTED, WEAK, "acted_on");
            "a +1 on ours whose reactor is not shown (rule 8)":
                [ours(), obs(3.0, human("ghost"), reacted("+1", Some(COMMENT_ID)))] => (ACCEPTED, WEAK, "acted_on");
            "a rollup's count on ours of no known kind (rule 8)":
                [ours(), obs(3.0, human("ghost"), reacted("any", Some(COMMENT_ID)))] => (ACCEPTED, WEAK, "acted_on");
            "a -1 on ours whose reactor is not shown (rule 8)":
                [ours(), obs(3.0, human("ghost"), reacted("-1", Some(COMMENT_ID)))] => (REJECTED, WEAK, "reacted_negatively");
            "a -1 on another comment whose reactor is not shown":
                [ours(), obs(3.0, human("ghost"), reacted("-1", Some(5)))] => (PENDING, WEAK, "awaiting_reply");
            "nothing yet": [ours()] => (PENDING, WEAK, "awaiting_reply"), at 1.0;
            "not yet observed": [] => (UNKNOWN, NONE, "target_unobserved"), at 1.0;
            "no target": [] => (UNKNOWN, NONE, "missing_reference"), on r().no_target(), at 1.0;
        );
    }

    #[test]
    fn reply_decides_and_counts() {
        let reply = obs(3.0, human("alice"), comment(901));
        let e = eval(&record("add_comment"), vec![ours(), reply.clone()], 24.0);
        assert_eq!(e.decided_at, Some(at(3.0)));
        assert_eq!(e.evidence, vec![reply.id]);
        assert_eq!(e.details["human_replies"], 1);
    }
}
