//! Pull requests: `create_pull_request`, `push_to_pull_request_branch` and
//! `close_pull_request` (seed 000 §7 "Pull Requests").

use std::collections::BTreeSet;

use serde_json::Value;

use super::common::{
    actor_unseen, cite, class_name, closer, hedge, human_after, human_comments, is_closed,
    is_merged, lifecycle, merge_obs, missing_reference, missing_state, no_engagement_yet,
    unseen_or_gone, Closer, PR_IGNORE_WINDOW,
};
use super::issue;
use super::{ci, revert, EvalContext};
use safe_outcomes_model::{
    ActorClass, Confidence, Evaluation, EvidenceStrength as S, Observation, ObservationKind as K,
    OutcomeStatus as O, Signal, TargetKind,
};

/// Was the PR merged, closed unmerged, reviewed, or left alone?
pub fn create_pull_request(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = missing_reference(ctx) {
        return e;
    }
    // gh-aw falls back to opening an issue when it cannot open the PR; the
    // line keeps its type, so judge it as the issue it became.
    if fell_back_to_issue(ctx) {
        return issue::create_issue(ctx).detail("fallback_used", true);
    }
    if let Some(e) = unseen_or_gone(ctx, false) {
        return e;
    }
    let facts = PrFacts::gather(ctx);
    let e = if let Some(m) = facts.merged {
        match revert::of_merged_pr(ctx, m).or_else(|| revert_of(ctx, m)) {
            Some(rv) => revert::accepted_then_reverted(rv),
            None => merged(ctx, m),
        }
    } else if is_closed(ctx) {
        closed_unmerged(ctx, S::Strong)
    } else {
        open_pr(ctx, &facts)
    };
    // CI on the PR's head (at merge, else latest): evidence in details only.
    let head = facts
        .merged
        .and_then(|m| m.snapshot.as_ref()?.head_sha.clone())
        .or_else(|| ctx.latest_snapshot().and_then(|s| s.head_sha.clone()));
    let e = ci::for_merge(ctx, head.as_deref(), facts.merged, e);
    facts.annotate(ctx, e)
}

fn fell_back_to_issue(ctx: &EvalContext) -> bool {
    let flagged = ctx
        .record
        .extra
        .get("fallback_used")
        .or_else(|| ctx.record.metadata.get("fallback_used"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    flagged || ctx.targets(TargetKind::Issue)
}

/// What the thread shows about the PR since execution.
struct PrFacts<'a> {
    merged: Option<&'a Observation>,
    approved: Option<&'a Observation>,
    changes_requested: bool,
    human_reviews: usize,
    human_comments: usize,
}

impl<'a> PrFacts<'a> {
    fn gather(ctx: &EvalContext<'a>) -> PrFacts<'a> {
        let dismissed: BTreeSet<u64> = ctx
            .observations
            .iter()
            .filter_map(|o| match o.event {
                K::ReviewDismissed { review_id } => Some(review_id),
                _ => None,
            })
            .collect();
        let review_state = |o: &Observation| match &o.event {
            K::ReviewSubmitted { review_id, state } if !dismissed.contains(review_id) => {
                Some(state.to_ascii_lowercase())
            }
            _ => None,
        };
        let human_reviews: Vec<&'a Observation> = human_after(ctx)
            .filter(|o| matches!(o.event, K::ReviewSubmitted { .. }))
            .collect();
        PrFacts {
            merged: is_merged(ctx).then(|| merge_obs(ctx)).flatten(),
            approved: human_reviews
                .iter()
                .copied()
                .find(|o| review_state(o).as_deref() == Some("approved")),
            changes_requested: human_reviews
                .iter()
                .any(|o| review_state(o).as_deref() == Some("changes_requested")),
            human_reviews: human_reviews.len(),
            human_comments: human_comments(ctx),
        }
    }

    /// Seed 000 §3 details: merged, merged_by_type, closed, reverted, approved.
    fn annotate(&self, ctx: &EvalContext, e: Evaluation) -> Evaluation {
        let reverted = e.signal == Signal::AcceptedThenReverted;
        e.detail("merged", self.merged.is_some())
            .detail("merged_by_type", self.merged.map(merger_type))
            .detail("closed", is_closed(ctx))
            .detail("reverted", reverted)
            .detail("approved", self.approved.is_some())
            .detail("changes_requested", self.changes_requested)
            .detail("human_reviews", self.human_reviews)
            .detail("human_comments", self.human_comments)
    }
}

/// GitHub's account type of whoever merged (`User`, `Bot`, …), as gh-aw reports it.
fn merger_type(merge: &Observation) -> Value {
    merger(merge).map_or(Value::Null, |a| {
        let t = if a.account_type.is_empty() {
            if a.is_bot() {
                "Bot"
            } else {
                "User"
            }
        } else {
            a.account_type.as_str()
        };
        Value::from(t)
    })
}

fn merger(merge: &Observation) -> Option<&safe_outcomes_model::Actor> {
    merge
        .snapshot
        .as_ref()
        .and_then(|s| s.merged_by.as_ref())
        .or(merge.actor.as_ref())
}

/// Merged: accepted/strong. The seed does not ask who merged; when it was not a
/// visible non-bot (a merge queue, the workflow itself) we say so in
/// confidence rather than status.
fn merged(ctx: &EvalContext, merge: &Observation) -> Evaluation {
    let class = merger(merge).map_or(ActorClass::SystemActor, |a| {
        a.classify(ctx.record.actor.as_deref())
    });
    let e = Evaluation::new(O::Accepted, S::Strong, Signal::Merged)
        .decided_by(&merge.id, merge.at)
        .detail("merged_by_class", class_name(class));
    if class == ActorClass::VisibleNonBotActor {
        e.note("PR was merged by a visible non-bot actor.")
    } else {
        e.confidence(Confidence::Medium)
            .note("PR was merged, but not by a visible non-bot actor.")
    }
}

/// A revert of the merged PR on a branch we watch: a pushed commit titled
/// `Revert "<PR title>"` (GitHub's revert button) after the merge.
fn revert_of<'a>(ctx: &EvalContext<'a>, merge: &Observation) -> Option<&'a Observation> {
    let title = merge.snapshot.as_ref().map(|s| s.title.as_str())?;
    if title.is_empty() {
        return None;
    }
    let wanted = format!("Revert \"{title}\"");
    ctx.observations
        .iter()
        .filter(|o| o.at >= merge.at)
        .find(|o| match &o.event {
            K::Pushed { commits, .. } => commits
                .iter()
                .any(|c| c.message.lines().next().unwrap_or("").starts_with(&wanted)),
            _ => false,
        })
}

/// Closed without merge: a human close rejects (at `strength`), automation is
/// lifecycle. The seed's row ("Closed unmerged — rejected — strong") does not
/// ask who closed it, so a closer nobody can see (no timeline read, an actor
/// not shown) still rejects, with low confidence (rule 8).
fn closed_unmerged(ctx: &EvalContext, strength: S) -> Evaluation {
    let rejected = || Evaluation::new(O::Rejected, strength, Signal::ClosedWithoutMerge);
    match closer(ctx) {
        Closer::Human(c) => rejected()
            .decided_by(&c.id, c.at)
            .note("PR was closed without merge by a visible non-bot actor."),
        Closer::Lifecycle(c) => lifecycle(ctx, c),
        Closer::Unknown(c) => actor_unseen(
            rejected().note("PR was closed without merge."),
            "closed",
            c.or_else(|| ctx.latest_snapshot_obs()),
        ),
    }
}

/// Open: human reviews/comments are engagement (pending/medium, gh-aw `open`);
/// silence is pending until the long window, then ignored. A PR open at 24h is
/// pending, never ignored.
fn open_pr(ctx: &EvalContext, facts: &PrFacts) -> Evaluation {
    if let Some(a) = facts.approved {
        return cite(
            Evaluation::new(O::Pending, S::Medium, Signal::Open)
                .note("The PR was approved by a visible non-bot actor but is not merged yet."),
            a,
        );
    }
    if let Some(first) = human_after(ctx).next() {
        return cite(
            Evaluation::new(O::Pending, S::Medium, Signal::Open)
                .note("The PR is open and has visible non-bot activity."),
            first,
        );
    }
    no_engagement_yet(
        ctx,
        PR_IGNORE_WINDOW,
        "The PR has been open for 30 days with no visible non-bot activity.",
        (
            Signal::AwaitingReview,
            "The PR is open and has no visible non-bot activity yet.",
        ),
    )
}

/// Did the pushed commit reach the base through the PR?
pub fn push_to_pull_request_branch(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = missing_reference(ctx) {
        return e;
    }
    let Some(sha) = pushed_sha(ctx) else {
        return missing_state(
            "The record has no pushed commit sha (metadata.commit_sha or after_state.head_sha).",
        );
    };
    if let Some(e) = unseen_or_gone(ctx, false) {
        return e;
    }
    let trail = CommitTrail::follow(ctx, &sha);
    let facts = PrFacts::gather(ctx);
    let reverted = pushed_commit_reverted(ctx, &sha, facts.merged);
    let e = if let Some(d) = trail.dropped_by {
        Evaluation::new(O::Rejected, S::Strong, Signal::CommitDropped)
            .decided_by(&d.id, d.at)
            .note("A visible non-bot actor force-pushed the PR branch without the pushed commit.")
    } else if let Some((rv, after_merge)) = reverted {
        if after_merge {
            revert::accepted_then_reverted(rv)
        } else {
            Evaluation::new(O::Rejected, S::Strong, Signal::CommitReverted)
                .decided_by(&rv.id, rv.at)
                .note("The pushed commit was reverted before the PR was merged.")
        }
    } else if let Some(m) = facts.merged {
        merged_push(ctx, &trail, m)
    } else if is_closed(ctx) {
        closed_unmerged(ctx, S::Strong)
    } else {
        open_pr(ctx, &facts)
    };
    let e = ci::for_merge(ctx, Some(&sha), None, e);
    facts
        .annotate(ctx, e)
        .detail("commit_sha", sha)
        .detail("commit_seen", trail.seen)
        .detail("commit_rewritten", trail.rewritten)
        .detail("force_pushed_by_bot", trail.bot_forced)
}

/// A landed revert of the pushed commit: before the merge (or with no merge)
/// it drops the commit (`false`); after the merge, within the durability
/// window, it reverses an acceptance (`true`), as does a revert of the whole PR.
fn pushed_commit_reverted<'a>(
    ctx: &EvalContext<'a>,
    sha: &str,
    merge: Option<&Observation>,
) -> Option<(&'a Observation, bool)> {
    let ours = |r: Option<&str>| revert::same_sha(r, Some(sha));
    let before_merge = revert::landed_revert(ctx, ctx.record.executed_at, None, ours)
        .filter(|rv| merge.is_none_or(|m| rv.at < m.at));
    if let Some(rv) = before_merge {
        return Some((rv, false));
    }
    let m = merge?;
    let window = Some(chrono::Duration::days(revert::DURABILITY_WINDOW_DAYS));
    revert::landed_revert(ctx, m.at, window, ours)
        .or_else(|| revert::of_merged_pr(ctx, m))
        .map(|rv| (rv, true))
}

fn pushed_sha(ctx: &EvalContext) -> Option<String> {
    let r = ctx.record;
    r.metadata
        .get("commit_sha")
        .or_else(|| r.after_state.get("head_sha"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// Merged: accepted only if the head that was merged descends from our commit.
fn merged_push(ctx: &EvalContext, trail: &CommitTrail, merge: &Observation) -> Evaluation {
    let head = merge
        .snapshot
        .as_ref()
        .and_then(|s| s.head_sha.clone())
        .or_else(|| ctx.latest_snapshot().and_then(|s| s.head_sha.clone()));
    // General rule 7: GitHub's compare of the pushed commit with the merge
    // commit (or merged head) says whether what landed contains it.
    let landed = [
        merge
            .snapshot
            .as_ref()
            .and_then(|s| s.merge_commit_sha.clone()),
        head.clone(),
    ];
    let compared = ctx.observations.iter().find_map(|o| match &o.event {
        K::Compared { head, status } if landed.iter().flatten().any(|l| l == head) => {
            Some(status.as_str())
        }
        _ => None,
    });
    match head {
        Some(h) if trail.heads.contains(&h) && !trail.rewritten => merged(ctx, merge)
            .note("The PR was merged with the pushed commit in its history."),
        _ if matches!(compared, Some("ahead" | "identical")) && !trail.rewritten => {
            merged(ctx, merge)
                .detail("compare_status", compared)
                .note("The PR was merged, and what landed contains the pushed commit (GitHub's compare).")
        }
        // Seed: "pushed commits later modified but PR merged → accepted/medium".
        Some(h) if trail.heads.contains(&h) => {
            Evaluation::new(O::Accepted, S::Medium, Signal::Merged)
                .decided_by(&merge.id, merge.at)
                .note("The PR was merged after the pushed commit was rewritten (force-pushed with the same message).")
        }
        _ => hedge(cite(
            Evaluation::new(O::Unknown, S::Weak, Signal::CommitRetentionUnknown)
                .note("The PR was merged, but the observations do not show the pushed commit in the merged head."),
            merge,
        )),
    }
}

/// The pushed commit followed through later pushes to the PR head.
struct CommitTrail<'a> {
    /// Our sha and every head that descends from it by non-forced pushes.
    heads: BTreeSet<String>,
    /// Any observation mentions the sha.
    seen: bool,
    /// A force push kept a commit with our message (rebased or amended).
    rewritten: bool,
    /// A human force push that left our commit out.
    dropped_by: Option<&'a Observation>,
    bot_forced: bool,
}

impl<'a> CommitTrail<'a> {
    fn follow(ctx: &EvalContext<'a>, sha: &str) -> CommitTrail<'a> {
        let message = ctx
            .record
            .field_str("message")
            .and_then(|m| m.lines().next())
            .map(str::trim)
            .filter(|m| !m.is_empty());
        // A force push is also delivered as `synchronize`, which does not say
        // it was forced; skip the synchronize twin of each forced push.
        let forced: BTreeSet<(&str, &str)> = ctx
            .observations
            .iter()
            .filter_map(|o| match &o.event {
                K::Pushed {
                    before,
                    after,
                    forced: true,
                    ..
                } => Some((before.as_str(), after.as_str())),
                _ => None,
            })
            .collect();
        let mut t = CommitTrail {
            heads: BTreeSet::from([sha.to_string()]),
            seen: false,
            rewritten: false,
            dropped_by: None,
            bot_forced: false,
        };
        for o in ctx.observations {
            if o.snapshot.as_ref().and_then(|s| s.head_sha.as_deref()) == Some(sha) {
                t.seen = true;
            }
            match &o.event {
                K::Synchronize { before, after } => {
                    t.seen |= before == sha || after == sha;
                    if t.heads.contains(before)
                        && !forced.contains(&(before.as_str(), after.as_str()))
                    {
                        t.heads.insert(after.clone());
                    }
                }
                K::Pushed {
                    before,
                    after,
                    forced,
                    commits,
                    ..
                } => {
                    t.seen |= before == sha || after == sha;
                    if !t.heads.contains(before) {
                        continue;
                    }
                    if !forced {
                        t.heads.insert(after.clone());
                    } else if message.is_some_and(|m| {
                        commits
                            .iter()
                            .any(|c| c.message.lines().next().map(str::trim) == Some(m))
                    }) {
                        t.rewritten = true;
                        t.heads.insert(after.clone());
                    } else if ctx.is_human(o) {
                        t.dropped_by = t.dropped_by.or(Some(o));
                    } else {
                        t.bot_forced = true;
                    }
                }
                _ => {}
            }
        }
        t
    }
}

/// Did the PR stay closed (and unmerged)?
pub fn close_pull_request(ctx: &EvalContext) -> Evaluation {
    if ctx.record.target.is_some() {
        if let Some(m) = is_merged(ctx).then(|| merge_obs(ctx)).flatten() {
            return Evaluation::new(O::Rejected, S::Strong, Signal::ClosedByMerge)
                .decided_by(&m.id, m.at)
                .detail("merged", true)
                .note("The PR the workflow closed was later merged.");
        }
    }
    issue::close_retention(ctx, "pull request").detail("merged", false)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::evaluate::testkit::*;
    use safe_outcomes_model::{ObservationKind as K, Target, TargetKind};

    fn opened() -> safe_outcomes_model::Observation {
        opened_by_workflow(open())
    }

    fn merge(h: f64, by: Option<safe_outcomes_model::Actor>) -> safe_outcomes_model::Observation {
        obs(h, by.clone(), K::Closed).snap(merged(by))
    }

    #[test]
    fn create_pull_request_table() {
        let r = || record("create_pull_request");
        let close = |h: f64, who| obs(h, who, K::Closed).snap(snapshot("closed"));
        run_rows!(r(), 24.0;
            "merged by a human": [opened(), merge(30.0, human("alice"))] => (ACCEPTED, STRONG, "merged"), at 48.0;
            "merged then reverted":
                [opened(), merge(30.0, human("alice")), obs(60.0, human("bob"), push("m1", "m2", false, &["Revert \"Agent title\"", "x"]))] => (REJECTED, STRONG, "accepted_then_reverted"), at 100.0;
            "approved by a human, not merged":
                [opened(), obs(5.0, human("alice"), review(1, "approved"))] => (PENDING, MEDIUM, "open");
            "open with human review activity":
                [opened(), obs(5.0, human("alice"), review(1, "commented"))] => (PENDING, MEDIUM, "open");
            "open with a human comment": [opened(), obs(5.0, human("alice"), comment(9))] => (PENDING, MEDIUM, "open");
            "closed unmerged by a human": [opened(), close(5.0, human("alice"))] => (REJECTED, STRONG, "closed_without_merge");
            "closed unmerged by a bot": [opened(), close(50.0, bot("stale[bot]"))] => (IGNORED, WEAK, "lifecycle"), at 72.0;
            "gh-aw expiry close":
                [opened(), obs(48.0, workflow_actor(), expiry_notice(4)), close(48.0, workflow_actor())] => (IGNORED, WEAK, "lifecycle"), at 72.0;
            "open with no activity after 30 days":
                [opened(), obs(3.0, bot("ci[bot]"), comment(2))] => (IGNORED, WEAK, "no_engagement"), at 30.0 * 24.0;
            "a human rocket on the open PR is engagement":
                [opened(), obs(3.0, human("alice"), reacted("rocket", None))] => (PENDING, MEDIUM, "open");
            "a bot rocket on the open PR is not":
                [opened(), obs(3.0, bot("ci[bot]"), reacted("rocket", None))] => (IGNORED, WEAK, "no_engagement"), at 30.0 * 24.0;
            "open at 24h is pending, not ignored": [opened()] => (PENDING, WEAK, "awaiting_review");
            "open at 29 days is still pending": [opened()] => (PENDING, WEAK, "awaiting_review"), at 29.0 * 24.0;
            "fell back to an issue":
                [opened_by_workflow(open())] => (PENDING, WEAK, "awaiting_triage"), on r().target(Target::thread(REPO, TargetKind::Issue, NUMBER));
            "fallback flag, issue completed":
                [opened(), obs(5.0, human("alice"), K::Closed).snap(closed_as(Some("completed")))] => (ACCEPTED, STRONG, "completed"), on r().extra("fallback_used", json!(true));
            "deleted": [opened(), obs(5.0, human("alice"), K::Deleted)] => (UNKNOWN, NONE, "deleted");
            + unobserved_case("not yet observed", r());
            + no_target_case(r());
            "dismissed approval is only activity":
                [opened(), obs(5.0, human("alice"), review(1, "approved")), obs(6.0, human("bob"), K::ReviewDismissed { review_id: 1 })] => (PENDING, MEDIUM, "open");
        );
    }

    #[test]
    fn merged_details_and_decision_time() {
        let e = eval(
            &record("create_pull_request"),
            vec![
                opened(),
                obs(5.0, human("bob"), review(1, "approved")),
                merge(30.0, human("alice")),
            ],
            48.0,
        );
        assert_eq!(e.decided_at, Some(at(30.0)));
        assert_eq!(e.details["merged"], true);
        assert_eq!(e.details["merged_by_type"], "User");
        assert_eq!(e.details["closed"], true);
        assert_eq!(e.details["reverted"], false);
        assert_eq!(e.details["approved"], true);
        assert_eq!(e.confidence, safe_outcomes_model::Confidence::High);
        // Merged by a merge queue: still accepted/strong, with less confidence.
        let q = eval(
            &record("create_pull_request"),
            vec![opened(), merge(30.0, bot("github-merge-queue[bot]"))],
            48.0,
        );
        assert_eq!(
            q.triple(),
            (ACCEPTED, STRONG, safe_outcomes_model::Signal::Merged)
        );
        assert_eq!(q.confidence, safe_outcomes_model::Confidence::Medium);
        assert_eq!(q.details["merged_by_type"], "Bot");
    }

    #[test]
    fn approval_is_reported_in_details() {
        let e = eval(
            &record("create_pull_request"),
            vec![opened(), obs(5.0, human("alice"), review(1, "approved"))],
            24.0,
        );
        assert_eq!(e.details["approved"], true);
        assert_eq!(e.details["human_reviews"], 1);
        assert_eq!(e.details["changes_requested"], false);
        let asked = eval(
            &record("create_pull_request"),
            vec![
                opened(),
                obs(5.0, human("alice"), review(1, "CHANGES_REQUESTED")),
            ],
            24.0,
        );
        assert_eq!(asked.details["changes_requested"], true);
        assert_eq!(asked.details["approved"], false);
        // A dismissed review no longer counts as approval or request.
        let dismissed = eval(
            &record("create_pull_request"),
            vec![
                opened(),
                obs(5.0, human("alice"), review(1, "approved")),
                obs(5.5, human("bob"), review(2, "changes_requested")),
                obs(6.0, human("carol"), K::ReviewDismissed { review_id: 1 }),
                obs(6.5, human("carol"), K::ReviewDismissed { review_id: 2 }),
            ],
            24.0,
        );
        assert_eq!(dismissed.details["approved"], false);
        assert_eq!(dismissed.details["changes_requested"], false);
        assert_eq!(dismissed.details["human_reviews"], 2);
    }

    /// A check run's delivery with `status` as its sender made it.
    fn check_act(status: &str) -> K {
        K::CheckRun {
            check_run_id: 9,
            name: "safe-outcomes".into(),
            head_sha: "c1".into(),
            status: status.into(),
            conclusion: Some("neutral".into()),
            app: Some("safe-outcomes".into()),
        }
    }

    fn check_suite_act() -> K {
        K::CheckSuite {
            check_suite_id: 10,
            head_sha: "c1".into(),
            status: "queued".into(),
            conclusion: None,
            app: Some("safe-outcomes".into()),
        }
    }

    #[test]
    fn push_to_pull_request_branch_table() {
        let r = || record("push_to_pull_request_branch").meta("commit_sha", json!("c1"));
        let head = |h: f64, sha: &str| {
            obs(h, workflow_actor(), sync("c0", sha)).snap(with_head(open(), sha))
        };
        let merge_at = |h: f64, sha: &str| {
            obs(h, human("alice"), K::Closed).snap(with_head(merged(human("alice")), sha))
        };
        run_rows!(r(), 48.0;
            "merged with the pushed commit as head": [head(-0.01, "c1"), merge_at(30.0, "c1")] => (ACCEPTED, STRONG, "merged");
            "merged after later commits on top":
                [head(-0.01, "c1"), obs(5.0, human("bob"), sync("c1", "c2")).snap(with_head(open(), "c2")), merge_at(30.0, "c2")] => (ACCEPTED, STRONG, "merged");
            "sha from after_state (May 2026 shape)":
                [head(-0.01, "c1"), merge_at(30.0, "c1")] => (ACCEPTED, STRONG, "merged"), on record("push_to_pull_request_branch").after(json!({"head_sha": "c1"}));
            "commit rewritten by a human force push, then merged":
                [head(-0.01, "c1"), obs(5.0, human("bob"), push("c1", "d1", true, &["fix: tidy"])), obs(5.0, human("bob"), sync("c1", "d1")).snap(with_head(open(), "d1")), merge_at(30.0, "d1")] => (ACCEPTED, MEDIUM, "merged"), on r().extra("message", json!("fix: tidy"));
            "commit dropped by a human force push":
                [head(-0.01, "c1"), obs(5.0, human("bob"), push("c1", "d1", true, &["something else"])), obs(5.0, human("bob"), sync("c1", "d1")).snap(with_head(open(), "d1")), merge_at(30.0, "d1")] => (REJECTED, STRONG, "commit_dropped"), on r().extra("message", json!("fix: tidy"));
            "merged, commit never seen": [merge_at(30.0, "zz")] => (UNKNOWN, WEAK, "commit_retention_unknown");
            "merged, the head unknown to the trail, GitHub's compare says it contains ours (rule 7)":
                [merge_at(30.0, "zz"), obs(31.0, None, K::Compared { head: "zz".into(), status: "ahead".into() })] => (ACCEPTED, STRONG, "merged");
            "merged, GitHub's compare says behind (rule 7)":
                [merge_at(30.0, "zz"), obs(31.0, None, K::Compared { head: "zz".into(), status: "behind".into() })] => (UNKNOWN, WEAK, "commit_retention_unknown");
            "merged, a compare with another head says nothing":
                [merge_at(30.0, "zz"), obs(31.0, None, K::Compared { head: "yy".into(), status: "ahead".into() })] => (UNKNOWN, WEAK, "commit_retention_unknown");
            "the pushed commit reverted before the merge":
                [head(-0.01, "c1c1c1c"), obs(10.0, human("bob"), K::Reverted { by: "r1".into(), reverted_sha: Some("c1c1c1c".into()), landed: true }), merge_at(30.0, "c1c1c1c")] => (REJECTED, STRONG, "commit_reverted"), on record("push_to_pull_request_branch").meta("commit_sha", json!("c1c1c1c"));
            "merged, no head sha known":
                [obs(30.0, human("alice"), K::Closed).snap(merged(human("alice")))] => (UNKNOWN, WEAK, "commit_retention_unknown");
            "bot force push then merge cannot prove retention":
                [head(-0.01, "c1"), obs(5.0, bot("rebase[bot]"), push("c1", "d1", true, &["other"])), obs(5.0, bot("rebase[bot]"), sync("c1", "d1")).snap(with_head(open(), "d1")), merge_at(30.0, "d1")] => (UNKNOWN, WEAK, "commit_retention_unknown");
            "closed unmerged by a human":
                [head(-0.01, "c1"), obs(5.0, human("alice"), K::Closed).snap(snapshot("closed"))] => (REJECTED, STRONG, "closed_without_merge"), at 24.0;
            "open with human review activity":
                [head(-0.01, "c1"), obs(5.0, human("alice"), review(1, "changes_requested"))] => (PENDING, MEDIUM, "open"), at 24.0;
            "open with no activity after 30 days": [head(-0.01, "c1")] => (IGNORED, WEAK, "no_engagement"), at 30.0 * 24.0;
            "open with no activity yet": [head(-0.01, "c1")] => (PENDING, WEAK, "awaiting_review"), at 24.0;
            "a person re-running a check (the App's own) is no activity on the PR":
                [head(-0.01, "c1"), obs(5.0, human("alice"), check_act("rerequested")), obs(6.0, human("bob"), check_suite_act())] => (PENDING, WEAK, "awaiting_review"), at 24.0;
            "no commit sha recorded":
                [merge_at(30.0, "c1")] => (UNKNOWN, NONE, "missing_execution_state"), on record("push_to_pull_request_branch");
            + unobserved_case("not yet observed", r());
        );
    }

    /// `commit_seen`: whether any observation showed the pushed sha.
    #[test]
    fn the_details_say_whether_the_pushed_commit_was_seen() {
        let r = record("push_to_pull_request_branch").meta("commit_sha", json!("c1"));
        let merged_at = |sha: &str| {
            obs(30.0, human("alice"), K::Closed).snap(with_head(merged(human("alice")), sha))
        };
        let unseen = eval(&r, vec![merged_at("zz")], 48.0);
        assert_eq!(unseen.details["commit_seen"], false, "{unseen:?}");
        let seen = eval(&r, vec![merged_at("c1")], 48.0);
        assert_eq!(seen.details["commit_seen"], true, "{seen:?}");
        let pushed = obs(1.0, human("bob"), sync("c0", "c1"));
        let synced = eval(&r, vec![pushed, merged_at("zz")], 48.0);
        assert_eq!(synced.details["commit_seen"], true, "{synced:?}");
        let pushed_over = obs(1.0, human("bob"), sync("c1", "c2"));
        let synced = eval(&r, vec![pushed_over, merged_at("zz")], 48.0);
        assert_eq!(synced.details["commit_seen"], true, "{synced:?}");
        for (before, after) in [("c0", "c1"), ("c1", "c2")] {
            let pushed = obs(1.0, human("bob"), push(before, after, false, &["x"]));
            let e = eval(&r, vec![pushed, merged_at("zz")], 48.0);
            assert_eq!(e.details["commit_seen"], true, "{before}..{after}: {e:?}");
        }
        let elsewhere = obs(1.0, human("bob"), push("c5", "c6", false, &["x"]));
        let e = eval(&r, vec![elsewhere, merged_at("zz")], 48.0);
        assert_eq!(e.details["commit_seen"], false, "{e:?}");
    }

    #[test]
    fn close_pull_request_table() {
        let r = || record("close_pull_request");
        let ours = || obs(-0.01, workflow_actor(), K::Closed).snap(snapshot("closed"));
        let reopen = |h: f64, who| obs(h, who, K::Reopened).snap(open());
        run_rows!(r(), 24.0;
            "still closed unmerged after 24h": [ours()] => (ACCEPTED, MEDIUM, "closed");
            "closed, window not passed": [ours()] => (PENDING, WEAK, "closed"), at 1.0;
            "reopened by a human": [ours(), reopen(3.0, human("alice"))] => (REJECTED, STRONG, "reopened");
            "a person says the close was premature": [ours(), obs(5.0, human("alice"), challenge(3))] => (REJECTED, MEDIUM, "close_challenged");
            "merged after reopening":
                [ours(), reopen(3.0, human("alice")), merge(10.0, human("alice"))] => (REJECTED, STRONG, "closed_by_merge");
            "target missing": [ours(), obs(3.0, None, K::Deleted)] => (UNKNOWN, NONE, "deleted");
            + no_target_case(r());
        );
    }
}
