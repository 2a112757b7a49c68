//! Issues: `create_issue` and `close_issue` (seed 000 §7 "Issues and Discussions").
//!
//! `create_issue` also reads two API-only signals (`github::signals`): a
//! positive reaction (+1, heart, hooray, rocket) by a visible non-bot on the
//! issue is engagement exactly like a human comment (seed: "Open with non-bot
//! comment, reaction, or triage"), and a close by a linked PR that merged is
//! accepted/strong `completed` with `details.closed_by_pr`.

use super::common::{
    cite, class_name, close_actor_unknown, closer, has_expiry_notice, hedge, human_after,
    human_comments, is_closed, last_close, lifecycle, no_engagement_yet, precheck, unseen_reversal,
    window_passed, Closer, ISSUE_IGNORE_WINDOW, RETENTION_WINDOW,
};
use super::EvalContext;
use safe_outcomes_model::{
    ActorClass, Evaluation, EvidenceStrength as S, Observation, ObservationKind as K,
    OutcomeStatus as O, Signal,
};

/// Did the issue get triaged, completed, or closed as unwanted?
pub fn create_issue(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = precheck(ctx, true) {
        return e;
    }
    let comments = human_comments(ctx);
    let e = if is_closed(ctx) {
        closed_issue(ctx)
    } else {
        open_issue(ctx)
    };
    e.detail("closed", is_closed(ctx))
        .detail("human_comments", comments)
}

/// Closed: a merged linked PR, else the closer and the close reason decide.
fn closed_issue(ctx: &EvalContext) -> Evaluation {
    let reason = ctx
        .latest_state_snapshot()
        .and_then(|s| s.state_reason.clone());
    if let Some(e) = closed_by_merged_pr(ctx) {
        return e.detail("state_reason", reason);
    }
    let e = match closer(ctx) {
        Closer::Lifecycle(close) => lifecycle(ctx, close),
        Closer::Human(close) => human_close(reason.as_deref(), close),
        // gh-aw accepts a `completed` close even when the actor is not visible;
        // we do too, with less confidence. Other reasons need the actor.
        Closer::Unknown(close) if reason.as_deref() == Some("completed") => {
            let e = Evaluation::new(O::Accepted, S::Strong, Signal::Completed)
                .note("The issue was closed as completed; who closed it was not visible.");
            hedge(match close {
                Some(c) => e.decided_by(&c.id, c.at),
                None => e,
            })
        }
        Closer::Unknown(close) => close_actor_unknown(close),
    };
    e.detail("state_reason", reason)
}

/// The issue was closed by a linked pull request that merged (GraphQL
/// `ClosedEvent.closer`, read at the checkpoints by `github::signals`): the
/// work the issue asked for landed, accepted/strong `completed` with
/// `details.closed_by_pr`. When the close's actor is not a visible person
/// (a bot merged the PR), confidence is one step lower.
fn closed_by_merged_pr(ctx: &EvalContext) -> Option<Evaluation> {
    let by = ctx
        .after_execution()
        .filter(|o| matches!(o.event, K::ClosedBy { merged: true, .. }))
        .last()?;
    let K::ClosedBy { pr, .. } = by.event else {
        return None;
    };
    let e = Evaluation::new(O::Accepted, S::Strong, Signal::Completed)
        .decided_by(&by.id, by.at)
        .detail("closed_by_pr", pr)
        .note("The issue was closed by a linked pull request that was merged.");
    Some(match closer(ctx) {
        Closer::Human(_) => e,
        _ => hedge(e),
    })
}

fn human_close(reason: Option<&str>, close: &Observation) -> Evaluation {
    let decided = |status, signal, note: &str| {
        Evaluation::new(status, S::Strong, signal)
            .decided_by(&close.id, close.at)
            .note(note)
    };
    match reason {
        Some("completed") => decided(
            O::Accepted,
            Signal::Completed,
            "The issue was closed as completed by a visible non-bot actor.",
        ),
        Some("not_planned") => decided(
            O::Rejected,
            Signal::ClosedNotPlanned,
            "The issue was closed as not planned by a visible non-bot actor.",
        ),
        // Seed 000 §7 create_issue has one row for "duplicate, not planned,
        // invalid, or spam": one signal (gh-aw's word); `state_reason` says which.
        Some("duplicate") => decided(
            O::Rejected,
            Signal::ClosedNotPlanned,
            "The issue was closed as a duplicate by a visible non-bot actor.",
        ),
        // No reason (older events) says nothing about whether it was wanted.
        _ => cite(
            Evaluation::new(O::Unknown, S::Weak, Signal::Closed)
                .note("A visible non-bot actor closed the issue without a close reason."),
            close,
        ),
    }
}

/// Open: human triage accepts; other human activity is engagement; silence
/// past the window is `ignored`.
fn open_issue(ctx: &EvalContext) -> Evaluation {
    // Seed: assignment, labels or a milestone by a non-bot are accepted/medium.
    // (gh-aw Oct 2026 keeps open issues pending; we follow the seed.) Links to
    // PRs and commit references are not among our observations yet.
    let triage = human_after(ctx).find(|o| {
        matches!(
            o.event,
            K::Assigned { .. } | K::Labeled { .. } | K::Milestoned { .. }
        )
    });
    if let Some(t) = triage {
        return Evaluation::new(O::Accepted, S::Medium, Signal::Triaged)
            .decided_by(&t.id, t.at)
            .note(
                "A visible non-bot actor triaged the issue (assigned, labeled or milestoned it).",
            );
    }
    if let Some(first) = human_after(ctx).next() {
        return cite(
            Evaluation::new(O::Pending, S::Medium, Signal::ActedOn)
                .note("A visible non-bot actor engaged with the open issue, but has not triaged or closed it."),
            first,
        );
    }
    no_engagement_yet(
        ctx,
        ISSUE_IGNORE_WINDOW,
        "The issue has had no visible non-bot interaction for 7 days.",
        (
            Signal::AwaitingTriage,
            "The issue is open and has had no visible non-bot interaction yet.",
        ),
    )
}

/// Did the issue stay closed?
pub fn close_issue(ctx: &EvalContext) -> Evaluation {
    close_retention(ctx, "issue")
}

/// Shared by `close_issue`, `close_pull_request` (after its merge check) and
/// `close_discussion`. Rows, in the order checked: reopened (by a person →
/// rejected/strong), re-closed, a foreign lifecycle close, challenged
/// ([`challenged`] → rejected/medium), still closed (accepted/medium after
/// 24h).
pub(super) fn close_retention(ctx: &EvalContext, what: &str) -> Evaluation {
    if let Some(e) = precheck(ctx, false) {
        return e;
    }
    let reopen = ctx
        .after_execution()
        .filter(|o| matches!(o.event, K::Reopened))
        .last();
    let human_reopen = ctx
        .after_execution()
        .filter(|o| matches!(o.event, K::Reopened) && ctx.is_human(o))
        .last();
    if !is_closed(ctx) {
        return match reopen {
            Some(r) if ctx.is_human(r) => reopened(r, what),
            Some(r) => cite(
                Evaluation::new(O::Unknown, S::Weak, Signal::Reopened)
                    .detail("reopened_by_type", class_name(ctx.actor_class(r)))
                    .note(format!("The {what} was reopened by automation, not by a person.")),
                r,
            ),
            // General rule 4: open again after the close, with no reopen
            // event seen: still a reversal, by someone not visible.
            None if open_since_execution(ctx) => unseen_reversal(
                Evaluation::new(O::Rejected, S::Strong, Signal::Reopened)
                    .note(format!("The {what} the output closed is open now.")),
            ),
            None => Evaluation::new(O::Unknown, S::Weak, Signal::NotClosed)
                .note(format!("The {what} is open and no reopen was observed; the close may not have been seen yet.")),
        };
    }
    let close = last_close(ctx);
    // A human reopened it and it was closed again: a human re-close affirms the
    // close; an automated re-close does not undo the human's reopen.
    if let (Some(r), Some(c)) = (human_reopen, close) {
        if !ctx.is_human(c) {
            return reopened(r, what).detail("reclosed_by_type", class_name(ctx.actor_class(c)));
        }
    }
    if let Some(c) = close.filter(|c| is_foreign_lifecycle_close(ctx, c)) {
        return lifecycle(ctx, c);
    }
    if let Some(ch) = challenged(ctx, close, |o| ctx.is_human(o)) {
        return Evaluation::new(O::Rejected, S::Medium, Signal::CloseChallenged)
            .decided_by(&ch.id, ch.at)
            .note(format!("A visible non-bot actor challenged the close of the {what} in a comment after it (a reopen request or \"closed by mistake\")."));
    }
    // General rule 4: a challenge whose author the state does not show is
    // still a challenge (automation cannot be excluded): one step weaker,
    // low confidence, never turned into an acceptance.
    if let Some(ch) = challenged(ctx, close, |o| {
        ctx.actor_class(o) == safe_outcomes_model::ActorClass::UnknownActor
    }) {
        return unseen_reversal(
            Evaluation::new(O::Rejected, S::Medium, Signal::CloseChallenged)
                .decided_by(&ch.id, ch.at)
                .note(format!("The close of the {what} was challenged in a comment after it (a reopen request or \"closed by mistake\")."))
        );
    }
    // Strength follows the seed (medium); gh-aw's "closed action retained"
    // case says accepted/strong. The seed also says "after window".
    let e = if window_passed(ctx, RETENTION_WINDOW) || human_reopen.is_some() {
        Evaluation::new(O::Accepted, S::Medium, Signal::Closed)
            .note(format!("The {what} stayed closed through the 24h window."))
    } else {
        Evaluation::new(O::Pending, S::Weak, Signal::Closed).note(format!(
            "The {what} is closed; the 24h retention window has not passed."
        ))
    };
    let e = e.detail("reclosed_by_human", human_reopen.is_some());
    match close {
        Some(c) => cite(e, c),
        None => e,
    }
}

/// Seed 000 §7 close_issue "Closed then referenced as mistakenly closed —
/// rejected — medium" (its note: "inspect timeline comments after closure
/// for reopen attempts or challenge comments"), close_pull_request "Comment
/// indicates premature close" and close_discussion "Non-bot comments
/// indicate close was wrong", all rejected/medium: the latest comment by a
/// visible non-bot (not a bot, not the workflow) after the latest close and
/// after execution whose body challenges the close in the vocabulary of
/// `model::challenge` (reopen requests, "closed by mistake" phrasings;
/// English only, quotes and code excluded). A person's close after the
/// challenge answers it (it is then before the latest close).
fn challenged<'a>(
    ctx: &EvalContext<'a>,
    close: Option<&'a Observation>,
    by: impl Fn(&Observation) -> bool,
) -> Option<&'a Observation> {
    let since = close.map_or(ctx.record.executed_at, |c| c.at.max(ctx.record.executed_at));
    ctx.after_execution()
        .filter(|o| o.at >= since && by(o))
        .filter(|o| {
            matches!(
                o.event,
                K::CommentCreated {
                    challenge: true,
                    ..
                }
            )
        })
        .last()
}

/// The open state was seen at or after execution (not a state from before
/// the close).
fn open_since_execution(ctx: &EvalContext) -> bool {
    ctx.latest_snapshot_obs()
        .is_some_and(|o| o.at >= ctx.record.executed_at)
}

fn reopened(r: &Observation, what: &str) -> Evaluation {
    Evaluation::new(O::Rejected, S::Strong, Signal::Reopened)
        .decided_by(&r.id, r.at)
        .note(format!(
            "The {what} was reopened by a visible non-bot actor."
        ))
}

/// A close by automation other than the workflow (a stale bot, a gh-aw
/// expiry): "closed by stale or lifecycle bot only". The workflow's own close
/// is only distinguishable from another bot's when its actor is known.
fn is_foreign_lifecycle_close(ctx: &EvalContext, close: &Observation) -> bool {
    has_expiry_notice(ctx, close)
        || (ctx.record.actor.is_some() && ctx.actor_class(close) == ActorClass::BotActor)
}

#[cfg(test)]
mod tests {
    use crate::evaluate::testkit::*;
    use safe_outcomes_model::ObservationKind as K;

    fn created() -> safe_outcomes_model::Observation {
        opened_by_workflow(open())
    }

    #[test]
    fn create_issue_table() {
        let r = || record("create_issue");
        let closed = |h: f64, who, reason| obs(h, who, K::Closed).snap(closed_as(reason));
        run_rows!(r(), 24.0;
            "closed as completed by a human":
                [created(), closed(30.0, human("alice"), Some("completed"))] => (ACCEPTED, STRONG, "completed"), at 48.0;
            "closed by a merged linked PR":
                [created(), closed(30.0, human("alice"), Some("completed")), obs(30.0, None, K::ClosedBy { pr: 12, merged: true })] => (ACCEPTED, STRONG, "completed"), at 48.0;
            "closed by a merged linked PR the stale bot merged":
                [created(), closed(30.0, bot("merge[bot]"), Some("completed")), obs(30.0, None, K::ClosedBy { pr: 12, merged: true })] => (ACCEPTED, STRONG, "completed"), at 48.0;
            "closed by a bot, linked PR not merged: lifecycle as before":
                [created(), closed(30.0, bot("merge[bot]"), Some("completed")), obs(30.0, None, K::ClosedBy { pr: 12, merged: false })] => (IGNORED, WEAK, "lifecycle"), at 48.0;
            "a human +1 on the open issue is engagement":
                [created(), obs(2.0, human("alice"), reacted("+1", None))] => (PENDING, MEDIUM, "acted_on");
            "a bot +1 on the open issue is not":
                [created(), obs(2.0, bot("app[bot]"), reacted("+1", None))] => (PENDING, WEAK, "awaiting_triage");
            "a human -1 on the open issue is not engagement":
                [created(), obs(2.0, human("alice"), reacted("-1", None))] => (IGNORED, WEAK, "no_engagement"), at 8.0 * 24.0;
            "assigned by a human":
                [created(), obs(2.0, human("alice"), K::Assigned { assignee: "bob".into() }).snap(open())] => (ACCEPTED, MEDIUM, "triaged");
            "labeled by a human":
                [created(), obs(2.0, human("alice"), labeled("bug")).snap(open())] => (ACCEPTED, MEDIUM, "triaged");
            "milestoned by a human":
                [created(), obs(2.0, human("alice"), K::Milestoned { milestone: "v1".into() }).snap(open())] => (ACCEPTED, MEDIUM, "triaged");
            "labeled by a bot is not triage":
                [created(), obs(2.0, bot("triage[bot]"), labeled("bug")).snap(open())] => (PENDING, WEAK, "awaiting_triage");
            "open with a human comment": [created(), obs(5.0, human("alice"), comment(1))] => (PENDING, MEDIUM, "acted_on");
            "closed as not planned by a human":
                [created(), closed(5.0, human("alice"), Some("not_planned"))] => (REJECTED, STRONG, "closed_not_planned");
            "closed as duplicate by a human":
                [created(), closed(5.0, human("alice"), Some("duplicate"))] => (REJECTED, STRONG, "closed_not_planned");
            "closed without a reason by a human": [created(), closed(5.0, human("alice"), None)] => (UNKNOWN, WEAK, "closed");
            "closed by a stale bot":
                [created(), closed(100.0, bot("stale[bot]"), Some("not_planned"))] => (IGNORED, WEAK, "lifecycle"), at 200.0;
            "gh-aw expiry close is lifecycle even with a user token":
                [created(), obs(48.0, human("release-pat"), expiry_notice(2)), closed(48.0, human("release-pat"), Some("not_planned"))] => (IGNORED, WEAK, "lifecycle"), on r().actor(Some("release-pat")), at 72.0;
            "expiry close by a different PAT user is still lifecycle":
                [created(), obs(48.0, human("maint-pat"), expiry_notice(2)), closed(48.02, human("maint-pat"), Some("not_planned"))] => (IGNORED, WEAK, "lifecycle"), at 72.0;
            "closed as not planned, actor not visible":
                [created(), closed(5.0, None, Some("not_planned"))] => (UNKNOWN, WEAK, "evaluation_error");
            "closed as completed, actor not visible":
                [created(), closed(5.0, None, Some("completed"))] => (ACCEPTED, STRONG, "completed");
            "no interaction after 7 days":
                [created(), obs(1.0, bot("ci[bot]"), comment(3))] => (IGNORED, WEAK, "no_engagement"), at 7.0 * 24.0;
            "no interaction yet at 24h": [created()] => (PENDING, WEAK, "awaiting_triage");
            "deleted by a human": [created(), obs(3.0, human("alice"), K::Deleted)] => (REJECTED, STRONG, "deleted");
            "deleted, deleter not visible": [created(), obs(3.0, None, K::Deleted)] => (UNKNOWN, NONE, "deleted");
            "transferred away": [created(), obs(3.0, human("alice"), K::Transferred)] => (UNKNOWN, NONE, "transferred");
            "the workflow's own comment is not engagement":
                [created(), obs(1.0, workflow_actor(), comment(3))] => (PENDING, WEAK, "awaiting_triage");
            + unobserved_case("not yet observed", r());
            + no_target_case(r());
            "as-of cuts off later evidence":
                [created(), closed(30.0, human("alice"), Some("completed"))] => (PENDING, WEAK, "awaiting_triage");
        );
    }

    /// A close by a merged linked PR is as confident as its closer is
    /// visible: a person's close stays high, a bot's is hedged.
    #[test]
    fn a_merged_pr_s_close_is_hedged_only_for_automation() {
        let by = |who| {
            let o = vec![
                created(),
                obs(30.0, who, K::Closed).snap(closed_as(Some("completed"))),
                obs(
                    30.0,
                    None,
                    K::ClosedBy {
                        pr: 12,
                        merged: true,
                    },
                ),
            ];
            eval(&record("create_issue"), o, 48.0).confidence
        };
        use safe_outcomes_model::Confidence;
        assert_eq!(by(human("alice")), Confidence::High);
        assert_eq!(by(bot("merge[bot]")), Confidence::Medium);
    }

    #[test]
    fn completed_close_decides_the_time() {
        let close = obs(30.0, human("alice"), K::Closed).snap(closed_as(Some("completed")));
        let id = close.id.clone();
        let e = eval(&record("create_issue"), vec![created(), close], 48.0);
        assert_eq!(e.decided_at, Some(at(30.0)));
        assert_eq!(e.evidence, vec![id]);
        assert_eq!(e.details["state_reason"], "completed");
    }

    /// General rule 2: a later snapshot that does not show the state (its
    /// source did not say) neither reopens the issue nor erases the close's
    /// reason: closed as completed, then a person's comment whose snapshot
    /// has no state, is still accepted/strong `completed` (found by
    /// cargo-mutants: the reason was read from the latest snapshot).
    #[test]
    fn a_snapshot_without_the_state_keeps_the_close_reason() {
        let close = obs(30.0, human("alice"), K::Closed).snap(closed_as(Some("completed")));
        let stateless = safe_outcomes_model::ItemSnapshot {
            state: String::new(),
            state_reason: None,
            ..closed_as(None)
        };
        let later = obs(40.0, human("bob"), comment(77)).snap(stateless);
        let e = eval(&record("create_issue"), vec![created(), close, later], 48.0);
        assert_eq!(
            (e.status, e.strength, e.signal.as_str()),
            (ACCEPTED, STRONG, "completed")
        );
        assert_eq!(e.details["state_reason"], "completed");
    }

    #[test]
    fn close_issue_table() {
        let r = || record("close_issue");
        // The workflow's own close, just before the manifest timestamp.
        let ours = || obs(-0.01, workflow_actor(), K::Closed).snap(closed_as(Some("completed")));
        let reopen = |h: f64, who| obs(h, who, K::Reopened).snap(open());
        run_rows!(r(), 24.0;
            "still closed after 24h": [ours()] => (ACCEPTED, MEDIUM, "closed");
            "closed, window not passed": [ours()] => (PENDING, WEAK, "closed"), at 1.0;
            "reopened by a human": [ours(), reopen(5.0, human("alice"))] => (REJECTED, STRONG, "reopened");
            "reopened by a bot": [ours(), reopen(5.0, bot("other[bot]"))] => (UNKNOWN, WEAK, "reopened");
            "reopened by a human, re-closed by a bot":
                [ours(), reopen(5.0, human("alice")), obs(50.0, bot("stale[bot]"), K::Closed).snap(closed_as(Some("not_planned")))] => (REJECTED, STRONG, "reopened"), at 72.0;
            "reopened and re-closed by humans":
                [ours(), reopen(5.0, human("alice")), obs(6.0, human("bob"), K::Closed).snap(closed_as(Some("completed")))] => (ACCEPTED, MEDIUM, "closed"), at 8.0;
            "a person asks to reopen after the close": [ours(), obs(5.0, human("alice"), challenge(3))] => (REJECTED, MEDIUM, "close_challenged");
            "a bot asks to reopen": [ours(), obs(5.0, bot("triage[bot]"), challenge(3))] => (ACCEPTED, MEDIUM, "closed");
            "someone nobody can see (a deleted account) asks to reopen: one step weaker (rule 4)": [ours(), obs(5.0, human("ghost"), challenge(3))] => (REJECTED, WEAK, "close_challenged");
            "the workflow's own words are no challenge": [ours(), obs(5.0, workflow_actor(), challenge(3))] => (ACCEPTED, MEDIUM, "closed");
            "a challenge before the close is not one of it": [obs(-2.0, human("alice"), challenge(3)), ours()] => (ACCEPTED, MEDIUM, "closed");
            "challenged, reopened and re-closed by people: the re-close answers it":
                [ours(), obs(2.0, human("alice"), challenge(3)), reopen(3.0, human("alice")), obs(6.0, human("bob"), K::Closed).snap(closed_as(Some("completed")))] => (ACCEPTED, MEDIUM, "closed"), at 30.0;
            "closed by a lifecycle bot only":
                [obs(-0.01, bot("stale[bot]"), K::Closed).snap(closed_as(Some("not_planned")))] => (IGNORED, WEAK, "lifecycle");
            "bot close counts as ours when the workflow actor is unknown":
                [ours()] => (ACCEPTED, MEDIUM, "closed"), on r().actor(None);
            "open, no reopen seen": [obs(-5.0, human("alice"), K::Opened).snap(open())] => (UNKNOWN, WEAK, "not_closed");
            "closed, then seen open with no reopen seen: an unseen reversal (rule 4)":
                [ours(), obs(5.0, human("bob"), comment(1)).snap(open())] => (REJECTED, MEDIUM, "reopened");
            "target missing": [ours(), obs(3.0, human("alice"), K::Deleted)] => (UNKNOWN, NONE, "deleted");
            + unobserved_case("not yet observed", r());
        );
    }
}
