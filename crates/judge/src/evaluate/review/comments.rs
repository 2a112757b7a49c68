//! `create_pull_request_review_comment` and `reply_to_pull_request_review_comment`:
//! did the inline comment (or reply) lead to a resolution or a reply, or was it
//! removed? Seed 000 §7 rows, in the order they are checked:
//!
//! | state | outcome |
//! |---|---|
//! | our comment deleted by a visible non-bot (or minimized, when its node id is known) | rejected/strong `deleted` / `minimized` |
//! | the thread holding our comment resolved by a visible non-bot | accepted/strong `thread_resolved` |
//! | a visible non-bot replied in the thread after our comment | accepted/medium `acted_on` |
//! | PR merged or closed with neither | ignored/weak `no_engagement` |
//! | PR open | pending/weak `awaiting_reply` |
//!
//! For a reply the seed allows "ignored or rejected" when the PR closes without
//! action; nothing in the thread says the reply was wrong, so it is ignored.
//! Not implementable from webhooks: "a follow-up commit touches the commented
//! lines" (`synchronize` does not list files) and "outdated and merged".

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};

use super::super::common::{
    cite, class_name, gone, is_closed, is_merged, missing_reference, missing_state, unobserved,
};
use super::super::EvalContext;
use super::{action_slack, target_id, u64_field};
use safe_outcomes_model::{
    Evaluation, EvidenceStrength as S, Observation, ObservationKind as K, OutcomeStatus as O,
    Signal, TargetKind,
};

pub fn create_review_comment(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = missing_reference(ctx) {
        return e;
    }
    let Some(ours) = target_id(ctx, TargetKind::ReviewComment) else {
        return no_comment_id();
    };
    judge(ctx, Thread::gather(ctx, Some(ours), None))
}

/// The target is the reply when its id is known; otherwise it is the comment
/// replied to (`extra.comment_id`), and the reply is found through it.
pub fn reply_to_review_comment(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = missing_reference(ctx) {
        return e;
    }
    let replied_to = u64_field(ctx.record, "comment_id");
    let ours = target_id(ctx, TargetKind::ReviewComment).filter(|id| Some(*id) != replied_to);
    let root = replied_to.or_else(|| target_id(ctx, TargetKind::ReviewComment));
    if ours.is_none() && root.is_none() {
        return no_comment_id();
    }
    judge(ctx, Thread::gather(ctx, ours, root)).detail("reply_id_known", ours.is_some())
}

/// General rule 1: the PR is named, but not the output's own comment.
fn no_comment_id() -> Evaluation {
    missing_state("The record names neither the review comment's id nor the comment it replies to.")
        .unresolved()
}

/// Our comment and the review thread it sits in, as far as observed.
struct Thread {
    /// Our own comment's id, when known.
    ours: Option<u64>,
    /// Ids of comments in the same thread (ours, what it replies to, replies).
    ids: BTreeSet<u64>,
    /// Events from this time on follow our comment.
    since: DateTime<Utc>,
}

impl Thread {
    fn gather(ctx: &EvalContext, ours: Option<u64>, root: Option<u64>) -> Thread {
        let mut ids: BTreeSet<u64> = ours.into_iter().chain(root).collect();
        let created: Vec<(u64, Option<u64>)> = ctx
            .observations
            .iter()
            .filter_map(|o| match o.event {
                K::ReviewCommentCreated {
                    comment_id,
                    in_reply_to,
                    ..
                } => Some((comment_id, in_reply_to)),
                _ => None,
            })
            .collect();
        // A reply names the comment it answers; follow those links both ways
        // until the set stops growing.
        loop {
            let before = ids.len();
            for (id, parent) in &created {
                if let Some(p) = parent {
                    if ids.contains(id) || ids.contains(p) {
                        ids.insert(*id);
                        ids.insert(*p);
                    }
                }
            }
            if ids.len() == before {
                break;
            }
        }
        let posted = ours.and_then(|id| {
            ctx.observations
                .iter()
                .find(|o| matches!(o.event, K::ReviewCommentCreated { comment_id, .. } if comment_id == id))
                .map(|o| o.at)
        });
        Thread {
            ours,
            ids,
            since: posted.unwrap_or(safe_outcomes_model::sane_time::minus(
                ctx.record.executed_at,
                action_slack(),
            )),
        }
    }

    fn touches(&self, comment_ids: &[u64]) -> bool {
        comment_ids.iter().any(|id| self.ids.contains(id))
    }

    /// The last (un)resolution of our thread after our comment.
    fn last_resolution<'a>(&self, ctx: &EvalContext<'a>) -> Option<&'a Observation> {
        ctx.observations.iter().rev().find(|o| {
            o.at >= self.since
                && match &o.event {
                    K::ThreadResolved { comment_ids, .. }
                    | K::ThreadUnresolved { comment_ids, .. } => self.touches(comment_ids),
                    _ => false,
                }
        })
    }

    /// Replies in our thread after our comment, by anyone.
    fn replies<'a, 'c>(
        &'c self,
        ctx: &'c EvalContext<'a>,
    ) -> impl Iterator<Item = &'a Observation> + 'c {
        ctx.observations.iter().filter(move |o| {
            o.at >= self.since
                && matches!(o.event, K::ReviewCommentCreated { comment_id, in_reply_to: Some(parent), .. }
                    if Some(comment_id) != self.ours && self.ids.contains(&parent))
        })
    }
}

fn judge(ctx: &EvalContext, thread: Thread) -> Evaluation {
    if !ctx.target_seen() {
        return unobserved();
    }
    if let Some(e) = removed(ctx, &thread) {
        return e;
    }
    if let Some(e) = gone(ctx, false) {
        return e;
    }
    let human_replies: Vec<&Observation> =
        thread.replies(ctx).filter(|o| ctx.is_human(o)).collect();
    let resolution = thread.last_resolution(ctx);
    let resolved = resolution.filter(|o| matches!(o.event, K::ThreadResolved { .. }));
    let e = if let Some(r) = resolved.filter(|o| ctx.is_human(o)) {
        Evaluation::new(O::Accepted, S::Strong, Signal::ThreadResolved)
            .decided_by(&r.id, r.at)
            .note("A visible non-bot actor resolved the review thread holding the comment.")
    } else if let Some(first) = human_replies.first() {
        Evaluation::new(O::Accepted, S::Medium, Signal::ActedOn)
            .decided_by(&first.id, first.at)
            .note("A visible non-bot actor replied in the review thread after the comment.")
    } else if is_merged(ctx) || is_closed(ctx) {
        Evaluation::new(O::Ignored, S::Weak, Signal::NoEngagement).note(
            "The PR was merged or closed with no visible non-bot reply or resolution in the thread.",
        )
    } else {
        Evaluation::new(O::Pending, S::Weak, Signal::AwaitingReply)
            .note("The PR is open and no visible non-bot actor has replied or resolved the thread.")
    };
    let e = e
        .detail("human_replies", human_replies.len())
        .detail("thread_resolved", resolved.is_some())
        .detail(
            "resolved_by_type",
            resolved.map(|o| class_name(ctx.actor_class(o))),
        )
        .detail("merged", is_merged(ctx))
        .detail("closed", is_closed(ctx));
    match resolved {
        Some(r) if e.signal != Signal::ThreadResolved => cite(e, r),
        _ => e,
    }
}

/// Our comment deleted or minimized: by a visible non-bot it is a rejection;
/// otherwise (the workflow tidying up, a bot) it says nothing of reception.
fn removed(ctx: &EvalContext, thread: &Thread) -> Option<Evaluation> {
    let ours = thread.ours?;
    let node_id = ctx
        .record
        .target
        .as_ref()
        .and_then(|t| t.node_id.as_deref());
    let obs = ctx.observations.iter().find(|o| match &o.event {
        K::ReviewCommentDeleted { comment_id } => *comment_id == ours,
        K::CommentMinimized {
            comment_node_id, ..
        } => Some(comment_node_id.as_str()) == node_id,
        _ => false,
    })?;
    let signal = match obs.event {
        K::ReviewCommentDeleted { .. } => Signal::Deleted,
        _ => Signal::Minimized,
    };
    let class = class_name(ctx.actor_class(obs));
    Some(if ctx.is_human(obs) {
        Evaluation::new(O::Rejected, S::Strong, signal)
            .decided_by(&obs.id, obs.at)
            .detail("removed_by_type", class)
            .note("A visible non-bot actor removed the review comment.")
    } else {
        cite(
            Evaluation::new(O::Unknown, S::None, signal)
                .detail("removed_by_type", class)
                .note("The review comment was removed, but not by a visible non-bot actor."),
            obs,
        )
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::evaluate::testkit::*;
    use safe_outcomes_model::{Actor, Observation, ObservationKind as K, Target, TargetKind};

    const OURS: u64 = 500;
    const ROOT: u64 = 400;

    fn target(id: u64) -> Target {
        Target::comment(REPO, TargetKind::ReviewComment, id, Some(NUMBER))
    }

    fn created(h: f64, who: Option<Actor>, id: u64, parent: Option<u64>) -> Observation {
        obs(
            h,
            who,
            K::ReviewCommentCreated {
                comment_id: id,
                in_reply_to: parent,
                review_id: None,
                path: Some("src/lib.rs".into()),
                agent_marker: false,
            },
        )
        .snap(open())
    }

    fn resolved(h: f64, who: Option<Actor>, ids: &[u64]) -> Observation {
        obs(
            h,
            who,
            K::ThreadResolved {
                thread_id: "PRRT_1".into(),
                comment_ids: ids.to_vec(),
            },
        )
    }

    fn unresolved(h: f64, who: Option<Actor>, ids: &[u64]) -> Observation {
        obs(
            h,
            who,
            K::ThreadUnresolved {
                thread_id: "PRRT_1".into(),
                comment_ids: ids.to_vec(),
            },
        )
    }

    fn deleted(h: f64, who: Option<Actor>, id: u64) -> Observation {
        obs(h, who, K::ReviewCommentDeleted { comment_id: id })
    }

    fn merge(h: f64) -> Observation {
        obs(h, human("carol"), K::Closed).snap(merged(human("carol")))
    }

    #[test]
    fn create_pull_request_review_comment_table() {
        let r = || record("create_pull_request_review_comment").target(target(OURS));
        let ours = || created(-0.01, workflow_actor(), OURS, None);
        run_rows!(r(), 24.0;
            "thread resolved by a human":
                [ours(), resolved(3.0, human("alice"), &[OURS])] => (ACCEPTED, STRONG, "thread_resolved");
            "resolved after a human reply: resolution is stronger":
                [ours(), created(2.0, human("alice"), 501, Some(OURS)), resolved(3.0, human("alice"), &[OURS, 501])] => (ACCEPTED, STRONG, "thread_resolved");
            "resolved by the workflow itself is not evidence":
                [ours(), resolved(3.0, workflow_actor(), &[OURS])] => (PENDING, WEAK, "awaiting_reply");
            "resolved then unresolved by a human":
                [ours(), resolved(3.0, human("alice"), &[OURS]), unresolved(4.0, human("bob"), &[OURS])] => (PENDING, WEAK, "awaiting_reply");
            "a different thread resolved": [ours(), resolved(3.0, human("alice"), &[777])] => (PENDING, WEAK, "awaiting_reply");
            "human reply": [ours(), created(2.0, human("alice"), 501, Some(OURS))] => (ACCEPTED, MEDIUM, "acted_on");
            "bot reply only": [ours(), created(2.0, bot("ci[bot]"), 501, Some(OURS))] => (PENDING, WEAK, "awaiting_reply");
            "human comment on another thread is not a reply":
                [ours(), created(2.0, human("alice"), 601, None)] => (PENDING, WEAK, "awaiting_reply");
            "deleted by a human": [ours(), deleted(2.0, human("alice"), OURS)] => (REJECTED, STRONG, "deleted");
            "deleted by the workflow": [ours(), deleted(2.0, workflow_actor(), OURS)] => (UNKNOWN, NONE, "deleted");
            "minimized by a human":
                [ours(), obs(2.0, human("alice"), K::CommentMinimized { comment_node_id: "PRRC_500".into(), reason: Some("off-topic".into()) })] => (REJECTED, STRONG, "minimized"), on r().target({ let mut t = target(OURS); t.node_id = Some("PRRC_500".into()); t });
            "PR merged with no reply or resolution": [ours(), merge(30.0)] => (IGNORED, WEAK, "no_engagement"), at 48.0;
            "PR closed with no reply or resolution":
                [ours(), obs(30.0, human("carol"), K::Closed).snap(snapshot("closed"))] => (IGNORED, WEAK, "no_engagement"), at 48.0;
            "PR open, thread unresolved": [ours()] => (PENDING, WEAK, "awaiting_reply");
            "reply after the as-of time is not seen":
                [ours(), created(30.0, human("alice"), 501, Some(OURS))] => (PENDING, WEAK, "awaiting_reply");
            + unobserved_case("nothing observed", r());
            "no comment id":
                [ours()] => (UNKNOWN, NONE, "missing_execution_state"), on record("create_pull_request_review_comment");
            + no_target_case(r());
        );
    }

    #[test]
    fn reply_to_pull_request_review_comment_table() {
        // Reply id known: the target is the reply; comment_id is what it answers.
        let r = || {
            record("reply_to_pull_request_review_comment")
                .target(target(OURS))
                .extra("comment_id", json!(ROOT))
        };
        // Reply id unknown: the target is the comment replied to.
        let r_root = || {
            record("reply_to_pull_request_review_comment")
                .target(target(ROOT))
                .extra("comment_id", json!(ROOT))
        };
        let root = || created(-5.0, human("alice"), ROOT, None);
        let ours = || created(-0.01, workflow_actor(), OURS, Some(ROOT));
        run_rows!(r(), 24.0;
            "thread resolved by a human after the reply":
                [root(), ours(), resolved(3.0, human("alice"), &[ROOT, OURS])] => (ACCEPTED, STRONG, "thread_resolved");
            "resolution known only by the root comment's id":
                [root(), ours(), resolved(3.0, human("alice"), &[ROOT])] => (ACCEPTED, STRONG, "thread_resolved");
            "reply id unknown, thread resolved by a human":
                [root(), resolved(3.0, human("alice"), &[ROOT, OURS])] => (ACCEPTED, STRONG, "thread_resolved"), on r_root();
            "human continues the thread":
                [root(), ours(), created(2.0, human("alice"), 502, Some(ROOT))] => (ACCEPTED, MEDIUM, "acted_on");
            "human answers our reply directly":
                [root(), ours(), created(2.0, human("bob"), 502, Some(OURS))] => (ACCEPTED, MEDIUM, "acted_on");
            "reply id unknown, human continues the thread":
                [root(), created(2.0, human("alice"), 502, Some(ROOT))] => (ACCEPTED, MEDIUM, "acted_on"), on r_root();
            "human comment in the thread before our reply is not a response":
                [root(), created(-3.0, human("bob"), 450, Some(ROOT)), ours()] => (PENDING, WEAK, "awaiting_reply");
            "reply deleted by a human": [root(), ours(), deleted(2.0, human("alice"), OURS)] => (REJECTED, STRONG, "deleted");
            "the root deleted is not our reply deleted":
                [root(), ours(), deleted(2.0, human("alice"), ROOT)] => (PENDING, WEAK, "awaiting_reply");
            "PR closed without action":
                [root(), ours(), obs(30.0, human("carol"), K::Closed).snap(snapshot("closed"))] => (IGNORED, WEAK, "no_engagement"), at 48.0;
            "PR open": [root(), ours()] => (PENDING, WEAK, "awaiting_reply");
            "neither id known":
                [root()] => (UNKNOWN, NONE, "missing_execution_state"), on record("reply_to_pull_request_review_comment");
            "the comment replied to is itself a reply: the thread is found through its links":
                [root(), created(-4.0, human("bob"), 450, Some(ROOT)), ours(), created(2.0, human("alice"), 502, Some(ROOT))] => (ACCEPTED, MEDIUM, "acted_on"), on r().extra("comment_id", json!(450));
        );
    }

    /// gh-aw writes the manifest line after the API call returned, so when
    /// the comment's own creation was not delivered, what came in the two
    /// minutes before the line may already answer it; what came earlier
    /// cannot.
    #[test]
    fn with_the_comment_unseen_the_minutes_before_the_line_still_follow_it() {
        let r = || record("create_pull_request_review_comment").target(target(OURS));
        let pr = || obs(-5.0, human("alice"), K::Opened).snap(open());
        run_rows!(r(), 24.0;
            "a reply a minute before the line":
                [pr(), created(-1.0 / 60.0, human("alice"), 501, Some(OURS))] => (ACCEPTED, MEDIUM, "acted_on");
            "a resolution a minute before the line":
                [pr(), resolved(-1.0 / 60.0, human("alice"), &[OURS])] => (ACCEPTED, STRONG, "thread_resolved");
            "a reply three minutes before the line":
                [pr(), created(-3.0 / 60.0, human("alice"), 501, Some(OURS))] => (PENDING, WEAK, "awaiting_reply");
        );
    }

    /// A resolution that decided nothing (the workflow's own) is still
    /// cited as evidence, so a reader sees why the thread shows resolved.
    #[test]
    fn a_resolution_that_did_not_decide_is_cited() {
        let r = record("create_pull_request_review_comment").target(target(OURS));
        let res = resolved(3.0, workflow_actor(), &[OURS]);
        let id = res.id.clone();
        let ours = created(-0.01, workflow_actor(), OURS, None);
        let e = eval(&r, vec![ours, res], 24.0);
        assert_eq!(e.triple().2.as_str(), "awaiting_reply");
        assert!(e.evidence.contains(&id), "{e:?}");
        assert_eq!(e.details["thread_resolved"], true);
    }
}
