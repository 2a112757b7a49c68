//! `mark_pull_request_as_ready_for_review` and `merge_pull_request`: PR
//! lifecycle actions judged by what the PR did next.
//!
//! **mark_pull_request_as_ready_for_review** (seed 000 §7), checked in order:
//!
//! | state | outcome |
//! |---|---|
//! | merged | accepted/strong `merged` |
//! | converted back to draft by a visible non-bot | rejected/strong `converted_to_draft` |
//! | reviewed by a visible non-bot strictly after the action | accepted/strong `reviewed` |
//! | closed unmerged by a visible non-bot, no review | rejected/medium `closed_without_merge` |
//! | closed by automation / by an unseen actor | ignored/weak `lifecycle` / unknown/weak `evaluation_error` |
//! | open, no review, 7 days passed | ignored/weak `no_engagement` |
//! | open, no review | pending/weak `awaiting_review` |
//!
//! gh-aw's conformance gives a review after the action accepted/*medium*
//! `reviewed`; the seed says strong, and the seed wins. A review at the very
//! instant of the action is not a follow-up (gh-aw conformance), so reviews
//! must be strictly later. A merge outranks an earlier conversion to draft:
//! the PR went in after all.
//!
//! **merge_pull_request** (no seed table), designed like the PR rows:
//!
//! | state | outcome |
//! |---|---|
//! | merged, then a landed revert (`Reverted` on the thread) | rejected/strong `accepted_then_reverted` |
//! | merged by a visible non-bot (the workflow's merge did not do it, but the PR went in) | accepted/strong `merged` |
//! | merged by the workflow or a bot, not reverted after 24 h | accepted/strong `merged` |
//! | ... within 24 h | pending/weak `merged` |
//! | closed unmerged | unknown/weak `closed_without_merge` |
//! | still open (the merge failed or is not yet seen) | unknown/weak `merge_not_observed` |
//!
//! The 24 h wait is seed §5's retention window: a merge made by the workflow
//! itself is its own action, and only its surviving the window (no revert)
//! says a person let it stand. A revert that is proposed but not landed is
//! reported in `details` only.

use super::super::common::{
    by_closer, cite, is_closed, is_merged, merge_obs, no_engagement_yet, precheck, unseen_reversal,
    window_passed, ISSUE_IGNORE_WINDOW, RETENTION_WINDOW,
};
use super::super::EvalContext;
use safe_outcomes_model::{
    ActorClass, Evaluation, EvidenceStrength as S, Observation, ObservationKind as K,
    OutcomeStatus as O, Signal,
};

pub fn mark_ready_for_review(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = precheck(ctx, false) {
        return e;
    }
    let later_human = |o: &&Observation| o.at > ctx.record.executed_at && ctx.is_human(o);
    let review = ctx
        .observations
        .iter()
        .filter(later_human)
        .find(|o| matches!(o.event, K::ReviewSubmitted { .. }));
    let to_draft = ctx
        .observations
        .iter()
        .filter(later_human)
        .find(|o| matches!(o.event, K::ConvertedToDraft));
    let merge = is_merged(ctx).then(|| merge_obs(ctx)).flatten();
    // General rule 4: a draft again now, with no conversion seen (automation's
    // conversion, when seen, is no verdict).
    let conversion_seen = ctx
        .after_execution()
        .any(|o| matches!(o.event, K::ConvertedToDraft));
    let draft_now = ctx
        .latest_snapshot_obs()
        .filter(|_| !conversion_seen)
        .filter(|o| o.at >= ctx.record.executed_at)
        .filter(|o| o.snapshot.as_ref().is_some_and(|s| s.draft && !s.merged));
    let e = if let Some(m) = merge {
        Evaluation::new(O::Accepted, S::Strong, Signal::Merged)
            .decided_by(&m.id, m.at)
            .note("The PR was merged after it was marked ready for review.")
    } else if let Some(d) = to_draft {
        Evaluation::new(O::Rejected, S::Strong, Signal::ConvertedToDraft)
            .decided_by(&d.id, d.at)
            .note("A visible non-bot actor converted the PR back to draft.")
    } else if let (Some(d), None) = (draft_now, review) {
        unseen_reversal(cite(
            Evaluation::new(O::Rejected, S::Strong, Signal::ConvertedToDraft)
                .note("The PR marked ready for review is a draft again."),
            d,
        ))
    } else if let Some(r) = review {
        Evaluation::new(O::Accepted, S::Strong, Signal::Reviewed)
            .decided_by(&r.id, r.at)
            .note("A visible non-bot actor reviewed the PR after it was marked ready.")
    } else if is_closed(ctx) {
        // Seed: "Closed unmerged with no review — rejected or ignored —
        // medium", whoever closed it (rule 8).
        by_closer(
            ctx,
            Evaluation::new(O::Rejected, S::Medium, Signal::ClosedWithoutMerge)
                .note("The PR was closed unmerged, with no review."),
        )
    } else {
        no_engagement_yet(
            ctx,
            ISSUE_IGNORE_WINDOW,
            "No visible non-bot actor reviewed the PR within 7 days of it being marked ready.",
            (
                Signal::AwaitingReview,
                "The PR is ready for review and has not been reviewed yet.",
            ),
        )
    };
    e.detail("reviewed", review.is_some())
        .detail("converted_to_draft", to_draft.is_some())
        .detail("merged", merge.is_some())
        .detail("closed", is_closed(ctx))
}

pub fn merge_pull_request(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = precheck(ctx, false) {
        return e;
    }
    let Some(merge) = is_merged(ctx).then(|| merge_obs(ctx)).flatten() else {
        let e = if is_closed(ctx) {
            Evaluation::new(O::Unknown, S::Weak, Signal::ClosedWithoutMerge)
                .note("The PR was closed without merge: the workflow's merge did not happen.")
        } else {
            Evaluation::new(O::Unknown, S::Weak, Signal::MergeNotObserved)
                .note("The PR is still open: the merge failed or has not been observed yet.")
        };
        return e.detail("merged", false);
    };
    let reverts = |landed: bool| {
        ctx.observations.iter().find(move |o| {
            o.at >= merge.at && matches!(o.event, K::Reverted { landed: l, .. } if l == landed)
        })
    };
    let proposed = reverts(false);
    let e = if let Some(rv) = reverts(true) {
        Evaluation::new(O::Rejected, S::Strong, Signal::AcceptedThenReverted)
            .decided_by(&rv.id, rv.at)
            .note("The merge was later reverted.")
    } else if merged_by_human(ctx, merge) && merge.at >= ctx.record.executed_at {
        Evaluation::new(O::Accepted, S::Strong, Signal::Merged)
            .decided_by(&merge.id, merge.at)
            .note("A visible non-bot actor merged the PR.")
    } else if window_passed(ctx, RETENTION_WINDOW) {
        Evaluation::new(O::Accepted, S::Strong, Signal::Merged)
            .decided_by(&merge.id, merge.at)
            .note("The PR was merged and not reverted within 24 hours.")
    } else {
        Evaluation::new(O::Pending, S::Weak, Signal::Merged)
            .note("The PR was merged; the 24-hour window for a revert has not passed.")
    };
    let e = e
        .detail("merged", true)
        .detail("revert_proposed", proposed.is_some());
    match proposed {
        Some(p) => cite(e, p),
        None => e,
    }
}

/// Whoever merged (the snapshot's `merged_by`, else the event's sender) is a
/// visible non-bot other than the workflow.
fn merged_by_human(ctx: &EvalContext, merge: &Observation) -> bool {
    merge
        .snapshot
        .as_ref()
        .and_then(|s| s.merged_by.as_ref())
        .or(merge.actor.as_ref())
        .is_some_and(|a| a.classify(ctx.record.actor.as_deref()) == ActorClass::VisibleNonBotActor)
}

#[cfg(test)]
mod tests {
    use crate::evaluate::testkit::*;
    use safe_outcomes_model::{Actor, Observation, ObservationKind as K};

    fn ready() -> Observation {
        obs(-0.01, workflow_actor(), K::ReadyForReview).snap(open())
    }

    fn merge(h: f64, who: Option<Actor>) -> Observation {
        obs(h, who.clone(), K::Closed).snap(merged(who))
    }

    fn close(h: f64, who: Option<Actor>) -> Observation {
        obs(h, who, K::Closed).snap(snapshot("closed"))
    }

    fn draft() -> safe_outcomes_model::ItemSnapshot {
        safe_outcomes_model::ItemSnapshot {
            draft: true,
            ..open()
        }
    }

    #[test]
    fn mark_pull_request_as_ready_for_review_table() {
        let r = || record("mark_pull_request_as_ready_for_review");
        run_rows!(r(), 24.0;
            "reviewed by a human after mark-ready":
                [ready(), obs(3.0, human("alice"), review(1, "approved")).snap(open())] => (ACCEPTED, STRONG, "reviewed");
            "review at the same instant is not a follow-up":
                [ready(), obs(0.0, human("alice"), review(1, "approved")).snap(open())] => (PENDING, WEAK, "awaiting_review");
            "reviewed by a bot only":
                [ready(), obs(3.0, bot("copilot[bot]"), review(1, "commented")).snap(open())] => (PENDING, WEAK, "awaiting_review");
            "merged after mark-ready": [ready(), merge(30.0, human("carol"))] => (ACCEPTED, STRONG, "merged"), at 48.0;
            "converted back to draft by a human":
                [ready(), obs(3.0, human("alice"), K::ConvertedToDraft).snap(open())] => (REJECTED, STRONG, "converted_to_draft");
            "converted to draft by the workflow is not a verdict":
                [ready(), obs(3.0, workflow_actor(), K::ConvertedToDraft).snap(open())] => (PENDING, WEAK, "awaiting_review");
            "reviewed, then converted to draft by a human":
                [ready(), obs(2.0, human("alice"), review(1, "changes_requested")).snap(open()), obs(3.0, human("alice"), K::ConvertedToDraft).snap(open())] => (REJECTED, STRONG, "converted_to_draft");
            "converted to draft, later merged":
                [ready(), obs(3.0, human("alice"), K::ConvertedToDraft).snap(open()), merge(40.0, human("carol"))] => (ACCEPTED, STRONG, "merged"), at 48.0;
            "closed unmerged with no review": [ready(), close(5.0, human("carol"))] => (REJECTED, MEDIUM, "closed_without_merge");
            "closed by a bot": [ready(), close(5.0, bot("stale[bot]"))] => (IGNORED, WEAK, "lifecycle");
            "open with no review after 7 days": [ready()] => (IGNORED, WEAK, "no_engagement"), at 7.0 * 24.0;
            "open with no review yet": [ready()] => (PENDING, WEAK, "awaiting_review");
            "a draft again, nobody seen converting it (rule 4)":
                [ready(), obs(3.0, human("alice"), comment(5)).snap(draft())] => (REJECTED, MEDIUM, "converted_to_draft");
            "a draft again by the workflow's own conversion is no verdict":
                [ready(), obs(3.0, workflow_actor(), K::ConvertedToDraft).snap(draft())] => (PENDING, WEAK, "awaiting_review");
            "a draft only in a state from before the mark":
                [obs(-1.0, human("alice"), K::Opened).snap(draft())] => (PENDING, WEAK, "awaiting_review");
            + unobserved_case("nothing observed", r());
            + no_target_case(r());
        );
    }

    #[test]
    fn merge_pull_request_table() {
        let r = || record("merge_pull_request");
        let ours = || merge(-0.01, workflow_actor());
        let revert = |h: f64, landed: bool| {
            obs(
                h,
                human("bob"),
                K::Reverted {
                    by: "#8".into(),
                    reverted_sha: Some("m1".into()),
                    landed,
                },
            )
        };
        run_rows!(r(), 24.0;
            "merged and not reverted after 24h": [ours()] => (ACCEPTED, STRONG, "merged");
            "merged, window not passed": [ours()] => (PENDING, WEAK, "merged"), at 2.0;
            "merged by a human": [merge(0.5, human("carol"))] => (ACCEPTED, STRONG, "merged"), at 2.0;
            "merged by a merge queue's bot, window not passed":
                [merge(0.5, bot("merge-queue[bot]"))] => (PENDING, WEAK, "merged"), at 2.0;
            "merged then reverted": [ours(), revert(30.0, true)] => (REJECTED, STRONG, "accepted_then_reverted"), at 48.0;
            "revert proposed, not landed": [ours(), revert(30.0, false)] => (ACCEPTED, STRONG, "merged"), at 48.0;
            "still open: the merge failed":
                [obs(-1.0, human("alice"), K::Opened).snap(open())] => (UNKNOWN, WEAK, "merge_not_observed");
            "closed unmerged": [close(3.0, human("carol"))] => (UNKNOWN, WEAK, "closed_without_merge");
            "PR deleted": [ours(), obs(3.0, human("carol"), K::Deleted)] => (UNKNOWN, NONE, "deleted");
            + unobserved_case("nothing observed", r());
            + no_target_case(r());
        );
    }
}
