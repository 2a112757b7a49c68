//! `submit_pull_request_review` and `dismiss_pull_request_review`.
//!
//! **submit_pull_request_review** (seed 000 §7). Our review is the target id or
//! `metadata.review_id`; its verdict is `metadata.review_event` /
//! `review_state` (or the line's `event`, or the observed review's state).
//! Rows, in the order they are checked:
//!
//! | state | outcome |
//! |---|---|
//! | our review dismissed by a visible non-bot | rejected/strong `review_dismissed` |
//! | a later human review with the opposite verdict (for a change request: an approval with no human commits in between) | rejected/medium `review_contradicted` |
//! | approved and the PR merged | accepted/strong `merged` |
//! | changes requested and a visible non-bot pushed commits after it | accepted/medium `changes_requested_addressed` |
//! | a visible non-bot replied to one of the review's inline comments | accepted/medium `acted_on` |
//! | PR closed unmerged by a visible non-bot (seed: contextual/medium): approved → rejected/medium; changes requested → accepted/medium (the PR did not go in as it was); comment-only → ignored/weak | `closed_without_merge_after_review` / `no_engagement` |
//! | closed by automation / by an unseen actor | ignored/weak `lifecycle` / unknown/weak `evaluation_error` |
//! | PR merged without our approval, and none of the above | ignored/weak `no_engagement` |
//! | PR open, our review still being written (state PENDING) | pending/medium `latest_review_pending` |
//! | PR open | pending/medium `review_submitted` |
//!
//! A dismissal by a bot or the workflow itself is not a human verdict and is
//! only reported in `details`. Commits count only when a visible non-bot
//! pushed them: the workflow pushing its own fixes is not evidence.
//!
//! **dismiss_pull_request_review** (no seed table; gh-aw added the type in Oct
//! 2026). Designed in the spirit of the review rows:
//!
//! | state | outcome |
//! |---|---|
//! | the dismissed review's author submits the same verdict again (any approve / request-changes verdict when the dismissed one is unknown), as a visible non-bot | rejected/medium `review_resubmitted` |
//! | PR merged after the dismissal | accepted/medium `merged` |
//! | PR closed unmerged | ignored/weak `closed_without_merge` |
//! | PR open 30 days with neither | ignored/weak `no_engagement` |
//! | PR open | pending/weak `awaiting_merge` |
//!
//! The author is the actor of the dismissed review's `ReviewSubmitted`, else
//! `review_author` / `reviewer` from the record; without one, resubmission
//! cannot be seen and only the PR's fate counts.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};

use super::super::common::{
    by_closer, cite, class_name, is_closed, is_merged, merge_obs, missing_reference, missing_state,
    no_engagement_yet, unseen_or_gone, unseen_reversal, PR_IGNORE_WINDOW,
};
use super::super::EvalContext;
use super::{target_id, u64_field, Verdict};
use safe_outcomes_model::{
    ActorClass, Evaluation, EvidenceStrength as S, Observation, ObservationKind as K,
    OutcomeStatus as O, Signal, TargetKind,
};

pub fn submit_review(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = missing_reference(ctx).or_else(|| no_review_id(ctx)) {
        return e;
    }
    if let Some(e) = unseen_or_gone(ctx, false) {
        return e;
    }
    let review = OurReview::gather(ctx);
    // General rule 3: judged on its own review only.
    if !review.seen {
        return Evaluation::new(O::Unknown, S::Weak, Signal::ReviewMissing)
            .detail("review_id", review.id)
            .note("The PR was observed, but not the review the output submitted: nothing about other reviews is borrowed for it.");
    }
    let e = judge_review(ctx, &review);
    e.detail("review_id", review.id)
        .detail("review_verdict", review.verdict.map(Verdict::as_str))
        .detail("merged", is_merged(ctx))
        .detail("closed", is_closed(ctx))
}

/// The review's own id, from the target or `metadata.review_id`.
fn review_id(ctx: &EvalContext) -> Option<u64> {
    target_id(ctx, TargetKind::Review).or_else(|| u64_field(ctx.record, "review_id"))
}

/// General rule 1: without its review's id, a review output cannot be told
/// from the other reviews on its PR.
fn no_review_id(ctx: &EvalContext) -> Option<Evaluation> {
    review_id(ctx).is_none().then(|| {
        missing_state("The record names no valid review id (metadata.review_id or the review URL), so the review cannot be told from others on the PR.")
    })
}

/// The review the workflow submitted, as far as the record and thread show.
struct OurReview<'a> {
    id: Option<u64>,
    verdict: Option<Verdict>,
    /// The review itself was observed (submitted, or dismissed).
    seen: bool,
    /// When it was submitted (observed, else execution time).
    at: DateTime<Utc>,
    dismissal: Option<&'a Observation>,
    /// Its latest observed state is `pending`: started, not submitted.
    unsubmitted: bool,
}

impl<'a> OurReview<'a> {
    fn gather(ctx: &EvalContext<'a>) -> OurReview<'a> {
        let id = review_id(ctx);
        let submitted = id.and_then(|id| {
            ctx.observations.iter().find(
                |o| matches!(o.event, K::ReviewSubmitted { review_id, .. } if review_id == id),
            )
        });
        let recorded = ["review_event", "review_state", "event"]
            .iter()
            .find_map(|k| ctx.record.field_str(k).and_then(Verdict::parse));
        let observed = submitted.and_then(|o| match &o.event {
            K::ReviewSubmitted { state, .. } => Verdict::parse(state),
            _ => None,
        });
        let dismissal = id.and_then(|id| {
            ctx.observations
                .iter()
                .find(|o| matches!(o.event, K::ReviewDismissed { review_id } if review_id == id))
        });
        OurReview {
            id,
            verdict: recorded.or(observed),
            seen: submitted.is_some() || dismissal.is_some(),
            at: submitted.map_or(ctx.record.executed_at, |o| o.at),
            dismissal,
            unsubmitted: id.is_some_and(|id| {
                ctx.observations
                    .iter()
                    .rfind(|o| matches!(o.event, K::ReviewSubmitted { review_id, .. } if review_id == id))
                    .is_some_and(|o| matches!(&o.event, K::ReviewSubmitted { state, .. } if state == "pending"))
            }),
        }
    }
}

fn judge_review(ctx: &EvalContext, review: &OurReview) -> Evaluation {
    if let Some(d) = review.dismissal.filter(|d| ctx.is_human(d)) {
        return Evaluation::new(O::Rejected, S::Strong, Signal::ReviewDismissed)
            .decided_by(&d.id, d.at)
            .note("A visible non-bot actor dismissed the review.");
    }
    // The API state shows a review DISMISSED without saying who did it. Only
    // people with write access (or the author) dismiss reviews, so it still
    // counts against the review, but not as strong human evidence.
    let unknown_dismisser = |d: &&Observation| {
        matches!(
            ctx.actor_class(d),
            ActorClass::SystemActor | ActorClass::UnknownActor
        )
    };
    if let Some(d) = review.dismissal.filter(unknown_dismisser) {
        return unseen_reversal(
            Evaluation::new(O::Rejected, S::Strong, Signal::ReviewDismissed)
                .decided_by(&d.id, d.at)
                .note("The review was dismissed."),
        );
    }
    let e = judge_standing_review(ctx, review);
    match review.dismissal {
        Some(d) => cite(
            e.detail("dismissed_by_type", class_name(ctx.actor_class(d))),
            d,
        ),
        None => e,
    }
}

fn judge_standing_review(ctx: &EvalContext, review: &OurReview) -> Evaluation {
    let later_human = |o: &&Observation| o.at > review.at && ctx.is_human(o);
    let human_pushes: Vec<&Observation> = ctx
        .observations
        .iter()
        .filter(later_human)
        // General rule 7: commits learned from the API are pushes too.
        .filter(|o| matches!(o.event, K::Synchronize { .. } | K::Pushed { .. }))
        .collect();
    let verdict = review.verdict;
    let contradiction = verdict.and_then(Verdict::opposite).and_then(|opposite| {
        ctx.observations.iter().filter(later_human).find(|o| {
            let K::ReviewSubmitted { state, review_id } = &o.event else {
                return false;
            };
            // A change request answered by new commits and then approved was addressed.
            Some(*review_id) != review.id
                && Verdict::parse(state) == Some(opposite)
                && !(verdict == Some(Verdict::ChangesRequested)
                    && human_pushes.iter().any(|p| p.at <= o.at))
        })
    });
    if let Some(c) = contradiction {
        return Evaluation::new(O::Rejected, S::Medium, Signal::ReviewContradicted)
            .decided_by(&c.id, c.at)
            .note("A visible non-bot actor later submitted a review with the opposite verdict.");
    }
    let merge = is_merged(ctx).then(|| merge_obs(ctx)).flatten();
    if let (Some(m), Some(Verdict::Approved)) = (merge, verdict) {
        return Evaluation::new(O::Accepted, S::Strong, Signal::Merged)
            .decided_by(&m.id, m.at)
            .note("The review approved the PR and the PR was merged.");
    }
    if let (Some(p), Some(Verdict::ChangesRequested)) = (human_pushes.first(), verdict) {
        return Evaluation::new(O::Accepted, S::Medium, Signal::ChangesRequestedAddressed)
            .decided_by(&p.id, p.at)
            .note("A visible non-bot actor pushed commits after the review requested changes.");
    }
    if let Some(reply) = human_reply_to_review(ctx, review) {
        return Evaluation::new(O::Accepted, S::Medium, Signal::ActedOn)
            .decided_by(&reply.id, reply.at)
            .note("A visible non-bot actor replied to one of the review's inline comments.");
    }
    if merge.is_some() {
        return Evaluation::new(O::Ignored, S::Weak, Signal::NoEngagement).note(
            "The PR was merged, but nothing shows the review (not an approval) was acted on.",
        );
    }
    if is_closed(ctx) {
        return closed_after_review(ctx, verdict);
    }
    // Seed: "PR still open with review pending — pending — medium"; a
    // review still being written (GitHub state PENDING) is gh-aw's
    // `latest_review_pending`, rated the same.
    if review.unsubmitted {
        return Evaluation::new(O::Pending, S::Medium, Signal::LatestReviewPending).note(
            "The output's review is still pending (started, not submitted) and the PR is open.",
        );
    }
    Evaluation::new(O::Pending, S::Medium, Signal::ReviewSubmitted)
        .note("The review stands and the PR is still open.")
}

/// A human reply to an inline comment that belongs to our review.
fn human_reply_to_review<'a>(ctx: &EvalContext<'a>, review: &OurReview) -> Option<&'a Observation> {
    let ours = review.id?;
    let comments: BTreeSet<u64> = ctx
        .observations
        .iter()
        .filter_map(|o| match o.event {
            K::ReviewCommentCreated {
                comment_id,
                review_id: Some(r),
                ..
            } if r == ours => Some(comment_id),
            _ => None,
        })
        .collect();
    ctx.observations.iter().find(|o| {
        ctx.is_human(o)
            && matches!(o.event, K::ReviewCommentCreated { in_reply_to: Some(p), .. } if comments.contains(&p))
    })
}

/// Seed: "PR closed without addressing review: contextual/medium", whoever
/// closed it (rule 8: a closer nobody can see decides with low confidence).
fn closed_after_review(ctx: &EvalContext, verdict: Option<Verdict>) -> Evaluation {
    let e = match verdict {
        Some(Verdict::Approved) => Evaluation::new(
            O::Rejected,
            S::Medium,
            Signal::ClosedWithoutMergeAfterReview,
        )
        .note("The PR the review approved was closed without merging it."),
        Some(Verdict::ChangesRequested) => Evaluation::new(
            O::Accepted,
            S::Medium,
            Signal::ClosedWithoutMergeAfterReview,
        )
        .note("The review requested changes and the PR was closed unmerged."),
        _ => Evaluation::new(O::Ignored, S::Weak, Signal::NoEngagement)
            .note("The PR was closed unmerged; the comment-only review was not engaged with."),
    };
    by_closer(ctx, e)
}

pub fn dismiss_review(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = missing_reference(ctx).or_else(|| no_review_id(ctx)) {
        return e;
    }
    if let Some(e) = unseen_or_gone(ctx, false) {
        return e;
    }
    let id = review_id(ctx);
    let dismissed = id.and_then(|id| {
        ctx.observations
            .iter()
            .find(|o| matches!(o.event, K::ReviewSubmitted { review_id, .. } if review_id == id))
    });
    let author = dismissed
        .and_then(|o| o.actor.as_ref())
        .map(|a| a.login.clone())
        .or_else(|| {
            ["review_author", "reviewer"]
                .iter()
                .find_map(|k| ctx.record.field_str(k))
                .map(str::to_string)
        });
    let dismissed_verdict = dismissed
        .and_then(|o| match &o.event {
            K::ReviewSubmitted { state, .. } => Verdict::parse(state),
            _ => None,
        })
        .or_else(|| {
            ctx.record
                .field_str("review_state")
                .and_then(Verdict::parse)
        });
    let resubmitted = author.as_deref().and_then(|login| {
        ctx.after_execution().find(|o| {
            let K::ReviewSubmitted { state, review_id } = &o.event else {
                return false;
            };
            let verdict = Verdict::parse(state);
            Some(*review_id) != id
                && ctx.is_human(o)
                && o.actor
                    .as_ref()
                    .is_some_and(|a| a.login.eq_ignore_ascii_case(login))
                && match dismissed_verdict {
                    Some(v) if v != Verdict::Commented => verdict == Some(v),
                    _ => matches!(verdict, Some(Verdict::Approved | Verdict::ChangesRequested)),
                }
        })
    });
    let merge = is_merged(ctx).then(|| merge_obs(ctx)).flatten();
    let e = if let Some(r) = resubmitted {
        Evaluation::new(O::Rejected, S::Medium, Signal::ReviewResubmitted)
            .decided_by(&r.id, r.at)
            .note("The dismissed review's author submitted the same verdict again.")
    } else if let Some(m) = merge {
        Evaluation::new(O::Accepted, S::Medium, Signal::Merged)
            .decided_by(&m.id, m.at)
            .note("The PR was merged after the review was dismissed.")
    } else if is_closed(ctx) {
        Evaluation::new(O::Ignored, S::Weak, Signal::ClosedWithoutMerge)
            .note("The PR was closed unmerged after the review was dismissed.")
    } else {
        no_engagement_yet(
            ctx,
            PR_IGNORE_WINDOW,
            "The PR is still open 30 days after the review was dismissed.",
            (
                Signal::AwaitingMerge,
                "The PR is open; the dismissal has neither been answered nor led to a merge.",
            ),
        )
    };
    e.detail("review_id", id)
        .detail("review_author", author)
        .detail("dismissed_verdict", dismissed_verdict.map(Verdict::as_str))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::evaluate::testkit::*;
    use safe_outcomes_model::{Actor, Observation, ObservationKind as K, Target, TargetKind};

    const OURS: u64 = 70;

    fn review_target(id: u64) -> Target {
        Target::comment(REPO, TargetKind::Review, id, Some(NUMBER))
    }

    fn submitted(h: f64, who: Option<Actor>, id: u64, state: &str) -> Observation {
        obs(h, who, review(id, state)).snap(open())
    }

    fn dismissed(h: f64, who: Option<Actor>, id: u64) -> Observation {
        obs(h, who, K::ReviewDismissed { review_id: id }).snap(open())
    }

    fn merge(h: f64) -> Observation {
        obs(h, human("carol"), K::Closed).snap(merged(human("carol")))
    }

    fn close(h: f64, who: Option<Actor>) -> Observation {
        obs(h, who, K::Closed).snap(snapshot("closed"))
    }

    fn pushed(h: f64, who: Option<Actor>) -> Observation {
        obs(h, who, sync("a1", "a2")).snap(open())
    }

    #[test]
    fn submit_pull_request_review_table() {
        let r = |event: &str| {
            record("submit_pull_request_review")
                .target(review_target(OURS))
                .meta("review_id", json!(OURS))
                .meta("review_event", json!(event))
        };
        let ours = |state: &str| submitted(-0.01, workflow_actor(), OURS, state);
        run_rows!(r("APPROVE"), 24.0;
            "approved and merged": [ours("approved"), merge(30.0)] => (ACCEPTED, STRONG, "merged"), at 48.0;
            "changes requested, then human commits":
                [ours("changes_requested"), pushed(5.0, human("alice"))] => (ACCEPTED, MEDIUM, "changes_requested_addressed"), on r("REQUEST_CHANGES");
            "changes requested, then commits, then a human approval":
                [ours("changes_requested"), pushed(5.0, human("alice")), submitted(6.0, human("bob"), 71, "approved")] => (ACCEPTED, MEDIUM, "changes_requested_addressed"), on r("REQUEST_CHANGES");
            "changes requested, commits by the workflow only":
                [ours("changes_requested"), pushed(5.0, workflow_actor())] => (PENDING, MEDIUM, "review_submitted"), on r("REQUEST_CHANGES");
            "our review still being written, PR open":
                [ours("pending")] => (PENDING, MEDIUM, "latest_review_pending");
            "dismissed by a human":
                [ours("approved"), dismissed(3.0, human("bob"), OURS)] => (REJECTED, STRONG, "review_dismissed");
            "dismissed by someone unknown (API state without an actor)":
                [ours("approved"), dismissed(3.0, None, OURS)] => (REJECTED, MEDIUM, "review_dismissed");
            "dismissed by a bot is not a verdict":
                [ours("approved"), dismissed(3.0, bot("policy[bot]"), OURS)] => (PENDING, MEDIUM, "review_submitted");
            "another review dismissed":
                [ours("approved"), dismissed(3.0, human("bob"), 99)] => (PENDING, MEDIUM, "review_submitted");
            "approval contradicted by a human change request":
                [ours("approved"), submitted(3.0, human("bob"), 71, "changes_requested")] => (REJECTED, MEDIUM, "review_contradicted");
            "contradiction wins over a later merge":
                [ours("approved"), submitted(3.0, human("bob"), 71, "changes_requested"), merge(30.0)] => (REJECTED, MEDIUM, "review_contradicted"), at 48.0;
            "change request contradicted by a human approval without commits":
                [ours("changes_requested"), submitted(3.0, human("bob"), 71, "approved")] => (REJECTED, MEDIUM, "review_contradicted"), on r("REQUEST_CHANGES");
            "a bot's opposite review is not a contradiction":
                [ours("approved"), submitted(3.0, bot("lint[bot]"), 71, "changes_requested")] => (PENDING, MEDIUM, "review_submitted");
            "human agrees: no contradiction":
                [ours("approved"), submitted(3.0, human("bob"), 71, "approved")] => (PENDING, MEDIUM, "review_submitted");
            "human replies to an inline comment of a comment-only review":
                [ours("commented"), obs(-0.01, workflow_actor(), K::ReviewCommentCreated { comment_id: 800, in_reply_to: None, review_id: Some(OURS), path: None, agent_marker: true }), obs(2.0, human("alice"), K::ReviewCommentCreated { comment_id: 801, in_reply_to: Some(800), review_id: Some(72), path: None, agent_marker: false })] => (ACCEPTED, MEDIUM, "acted_on"), on r("COMMENT");
            "approved, PR closed unmerged by a human":
                [ours("approved"), close(5.0, human("carol"))] => (REJECTED, MEDIUM, "closed_without_merge_after_review");
            "changes requested, PR closed unmerged by a human":
                [ours("changes_requested"), close(5.0, human("carol"))] => (ACCEPTED, MEDIUM, "closed_without_merge_after_review"), on r("REQUEST_CHANGES");
            "comment review, PR closed unmerged by a human":
                [ours("commented"), close(5.0, human("carol"))] => (IGNORED, WEAK, "no_engagement"), on r("COMMENT");
            "approved, PR closed by a bot": [ours("approved"), close(5.0, bot("stale[bot]"))] => (IGNORED, WEAK, "lifecycle");
            "changes requested, merged without new commits":
                [ours("changes_requested"), merge(30.0)] => (IGNORED, WEAK, "no_engagement"), on r("REQUEST_CHANGES"), at 48.0;
            "still open": [ours("approved")] => (PENDING, MEDIUM, "review_submitted");
            "verdict from the observed review when the record has none":
                [ours("approved"), merge(30.0)] => (ACCEPTED, STRONG, "merged"), on record("submit_pull_request_review").target(review_target(OURS)), at 48.0;
            "review id from metadata with a PR target":
                [ours("approved"), dismissed(3.0, human("bob"), OURS)] => (REJECTED, STRONG, "review_dismissed"), on record("submit_pull_request_review").meta("review_id", json!(OURS)).meta("review_event", json!("APPROVE"));
            "PR deleted": [ours("approved"), obs(3.0, human("bob"), K::Deleted)] => (UNKNOWN, NONE, "deleted");
            "an opposite review at the same instant as ours is no answer to it":
                [ours("approved"), submitted(-0.01, human("bob"), 71, "changes_requested")] => (PENDING, MEDIUM, "review_submitted");
            "a reply to another review's inline comment is not about ours":
                [ours("commented"), obs(1.0, human("bob"), K::ReviewCommentCreated { comment_id: 810, in_reply_to: None, review_id: Some(99), path: None, agent_marker: false }), obs(2.0, human("alice"), K::ReviewCommentCreated { comment_id: 811, in_reply_to: Some(810), review_id: Some(72), path: None, agent_marker: false })] => (PENDING, MEDIUM, "review_submitted"), on r("COMMENT");
            "no review id (rule 1)":
                [ours("approved")] => (UNKNOWN, NONE, "missing_execution_state"), on record("submit_pull_request_review").meta("review_event", json!("APPROVE"));
            + unobserved_case("nothing observed", r("APPROVE"));
            + no_target_case(r("APPROVE"));
        );
    }

    /// The details name the review's verdict as GitHub's review states do.
    #[test]
    fn the_review_s_verdict_is_in_the_details() {
        for (event, state, want) in [
            ("APPROVE", "approved", "approved"),
            ("REQUEST_CHANGES", "changes_requested", "changes_requested"),
            ("COMMENT", "commented", "commented"),
        ] {
            let r = record("submit_pull_request_review")
                .target(review_target(OURS))
                .meta("review_id", json!(OURS))
                .meta("review_event", json!(event));
            let e = eval(
                &r,
                vec![submitted(-0.01, workflow_actor(), OURS, state)],
                24.0,
            );
            assert_eq!(e.details["review_verdict"], want, "{e:?}");
        }
    }

    #[test]
    fn dismiss_pull_request_review_table() {
        const DISMISSED: u64 = 60;
        let r = || record("dismiss_pull_request_review").target(review_target(DISMISSED));
        let original = |state: &str| submitted(-10.0, human("dana"), DISMISSED, state);
        let ours = || dismissed(-0.01, workflow_actor(), DISMISSED);
        run_rows!(r(), 24.0;
            "author re-requests changes":
                [original("changes_requested"), ours(), submitted(3.0, human("dana"), 61, "changes_requested")] => (REJECTED, MEDIUM, "review_resubmitted");
            "author now approves: not a resubmission":
                [original("changes_requested"), ours(), submitted(3.0, human("dana"), 61, "approved")] => (PENDING, WEAK, "awaiting_merge");
            "someone else requests changes":
                [original("changes_requested"), ours(), submitted(3.0, human("erin"), 61, "changes_requested")] => (PENDING, WEAK, "awaiting_merge");
            "author from the record, verdict unknown":
                [ours(), submitted(3.0, human("dana"), 61, "approved")] => (REJECTED, MEDIUM, "review_resubmitted"), on record("dismiss_pull_request_review").target(review_target(DISMISSED)).extra("review_author", json!("dana"));
            "PR merged after the dismissal": [original("changes_requested"), ours(), merge(10.0)] => (ACCEPTED, MEDIUM, "merged");
            "PR closed unmerged":
                [original("changes_requested"), ours(), close(10.0, human("carol"))] => (IGNORED, WEAK, "closed_without_merge");
            "open for 30 days": [original("changes_requested"), ours()] => (IGNORED, WEAK, "no_engagement"), at 30.0 * 24.0;
            "open": [original("changes_requested"), ours()] => (PENDING, WEAK, "awaiting_merge");
            "a comment-only review's author comments again: a comment is no verdict":
                [original("commented"), ours(), submitted(3.0, human("dana"), 61, "commented")] => (PENDING, WEAK, "awaiting_merge");
            "no review id (rule 1)":
                [original("changes_requested"), ours()] => (UNKNOWN, NONE, "missing_execution_state"), on record("dismiss_pull_request_review");
            + unobserved_case("nothing observed", r());
        );
    }
}
