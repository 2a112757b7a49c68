//! Assignment evaluators: `assign_to_agent`, `assign_to_user`,
//! `unassign_from_user` (seed 000 §7 "User Assignment" and `assign_to_agent`).
//!
//! `assign_to_agent` sees only what is filed under the assigned thread: the
//! issue's own events, and the agent's PR only when its observations reach the
//! issue's key (reconciliation of the cross-reference), or when the agent was
//! assigned to a PR directly. gh-aw's "unattributed agent assignment" case is
//! followed: with no agent named and no agent assignment or agent PR seen, a
//! completed issue cannot be credited to the agent (`missing_execution_state`).

use serde_json::Value;

use super::common::{
    actor_unseen, cite, class_name, closer, gone, hedge, holds_role_at, human_after, lifecycle,
    missing_reference, missing_state, no_delta, precheck, unobserved, window_passed, with_delta,
    Closer, ISSUE_IGNORE_WINDOW,
};
use super::metadata::{completed, moved_away, retained, since_execution, snapshot_showing};
use super::EvalContext;
use safe_outcomes_model::{
    ActorClass, Evaluation, EvidenceStrength as S, ItemSnapshot, Observation, ObservationKind as K,
    OutcomeStatus as O, Signal, TargetKind,
};

/// Logins named by `assignees` / `assignee` (line or metadata), else the
/// recorded assignee delta (`after − before` when adding, `before − after`
/// when removing).
fn users(ctx: &EvalContext, adding: bool) -> Vec<String> {
    let r = ctx.record;
    let mut named = r.field_list("assignees");
    named.extend(r.field_str("assignee").map(str::to_string));
    if !named.is_empty() {
        return named;
    }
    let list = |state: &serde_json::Map<String, Value>| -> Vec<String> {
        state
            .get("assignees")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().or_else(|| v.get("login")?.as_str()))
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let (from, minus) = if adding {
        (list(&r.after_state), list(&r.before_state))
    } else {
        (list(&r.before_state), list(&r.after_state))
    };
    from.into_iter().filter(|u| !contains(&minus, u)).collect()
}

fn contains(list: &[String], login: &str) -> bool {
    list.iter().any(|l| l.eq_ignore_ascii_case(login))
}

/// The common opening: a target, recorded users, something seen, not gone,
/// and the state since execution.
/// `named` is who the record names, `who` those of them the output really
/// changed (rule 11: a user already assigned, or already not, was not).
fn preamble<'a>(
    ctx: &EvalContext<'a>,
    named: &[String],
    who: &[String],
) -> Result<&'a ItemSnapshot, Evaluation> {
    if let Some(e) = missing_reference(ctx) {
        return Err(e);
    }
    if named.is_empty() {
        return Err(missing_state("The record names no assignee."));
    }
    if who.is_empty() {
        return Err(no_delta("every assignee"));
    }
    if !ctx.target_seen() {
        return Err(unobserved());
    }
    if let Some(e) = gone(ctx, false) {
        return Err(e);
    }
    snapshot_showing(ctx, |s| !s.assignees_absent).ok_or_else(|| {
        unobserved().note("The target's assignees have not been seen since execution.")
    })
}

/// Did the assignment stick or result in the user acting?
pub fn assign_to_user(ctx: &EvalContext) -> Evaluation {
    let named = users(ctx, true);
    let who = with_delta(ctx.record, "assignees", &named, true);
    let snap = match preamble(ctx, &named, &who) {
        Ok(s) => s,
        Err(e) => return e,
    };
    // Declined: an assignee whose own unassignment stands (general rule 5:
    // their latest act of the role decides, over what they did while
    // holding it).
    let declined: Vec<&String> = who
        .iter()
        .filter(|u| !contains(&snap.assignees, u))
        .filter(|u| {
            last_move(ctx, u, false).is_some_and(|o| {
                ctx.is_human(o)
                    && o.actor
                        .as_ref()
                        .is_some_and(|a| a.login.eq_ignore_ascii_case(u))
            })
        })
        .collect();
    // Role at the time of the act: an assignee's action counts only while
    // they are assigned (not after an unassignment, until assigned again).
    let by_assignee = |o: &&Observation| {
        let Some(a) = o.actor.as_ref() else {
            return false;
        };
        contains(&who, &a.login)
            && !declined.iter().any(|u| u.eq_ignore_ascii_case(&a.login))
            && !matches!(o.event, K::Assigned { .. } | K::Unassigned { .. })
            && holds_role_at(
                ctx,
                o,
                |k| matches!(k, K::Unassigned { assignee } if assignee.eq_ignore_ascii_case(&a.login)),
                |k| matches!(k, K::Assigned { assignee } if assignee.eq_ignore_ascii_case(&a.login)),
            )
    };
    let acted = human_after(ctx).find(by_assignee);
    let e = if let (None, Some(user)) = (acted, declined.first()) {
        let by = last_move(ctx, user, false);
        let e = Evaluation::new(O::Rejected, S::Medium, Signal::AssigneeRemoved)
            .note("The assigned user unassigned themself: they declined the assignment.")
            .detail("removed", (*user).clone())
            .detail("declined", true);
        match by {
            Some(o) => e.decided_by(&o.id, o.at),
            None => e,
        }
    } else if let Some(act) = acted {
        Evaluation::new(O::Accepted, S::Strong, Signal::AssigneeActed)
            .decided_by(&act.id, act.at)
            .note("An assigned user acted on the item (commented, reviewed, pushed, edited or closed it).")
    } else if let Some(gone_user) = who.iter().find(|u| !contains(&snap.assignees, u)) {
        moved_away(
            ctx,
            last_move(ctx, gone_user, false),
            (O::Rejected, S::Medium, Signal::AssigneeRemoved),
            "An assigned user was removed from the item.",
        )
        .detail("removed", gone_user.clone())
    } else if completed(snap) {
        Evaluation::new(O::Accepted, S::Medium, Signal::CompletedWhileAssigned).note(
            "The item was completed (closed as completed or merged) while the user was assigned.",
        )
    } else if snap.state.eq_ignore_ascii_case("closed") {
        Evaluation::new(O::Ignored, S::Weak, Signal::ClosedWithoutAssigneeAction)
            .note("The item was closed without the assigned user acting on it.")
    } else {
        Evaluation::new(O::Pending, S::Weak, Signal::AssignmentRetained)
            .note("The assignment remains while the item is open; the user has not acted yet.")
    };
    e.detail("assignees", who)
}

/// Did the user stay unassigned?
pub fn unassign_from_user(ctx: &EvalContext) -> Evaluation {
    let named = users(ctx, false);
    let who = with_delta(ctx.record, "assignees", &named, false);
    let snap = match preamble(ctx, &named, &who) {
        Ok(s) => s,
        Err(e) => return e,
    };
    let back: Vec<&String> = who
        .iter()
        .filter(|u| contains(&snap.assignees, u))
        .collect();
    let e = if let Some(user) = back.first() {
        moved_away(
            ctx,
            last_move(ctx, user, true),
            (O::Rejected, S::Strong, Signal::StateReverted),
            "The user was assigned again after the output removed them.",
        )
        .detail("reassigned", (*user).clone())
    } else if snap.state.eq_ignore_ascii_case("closed")
        && since_execution(ctx).any(|o| matches!(o.event, K::Closed))
    {
        Evaluation::new(O::Accepted, S::Medium, Signal::ClosedAfterUnassignment)
            .note("The item was closed after the unassignment, with the user still unassigned.")
    } else {
        retained(ctx, Signal::StateRetained, "The unassignment")
    };
    e.detail("unassigned", who)
}

/// The latest assignment (`assigned`) or unassignment of `user` since
/// execution: who moved the value, for [`moved_away`].
fn last_move<'a>(ctx: &EvalContext<'a>, user: &str, assigned: bool) -> Option<&'a Observation> {
    since_execution(ctx)
        .filter(|o| match &o.event {
            K::Assigned { assignee } if assigned => assignee.eq_ignore_ascii_case(user),
            K::Unassigned { assignee } if !assigned => assignee.eq_ignore_ascii_case(user),
            _ => false,
        })
        .last()
}

/// The agent the record names (`agent`, default Copilot's logins are bots).
fn agent_named(ctx: &EvalContext) -> Option<String> {
    ["agent", "assignee"]
        .iter()
        .find_map(|k| ctx.record.field_str(k).map(str::to_string))
}

/// Logins coding agents work under (assignee and PR author).
const AGENT_LOGINS: &[&str] = &["copilot", "copilot-swe-agent"];

/// Is `login` the agent: a bot account, a known agent login, or the named agent?
fn is_agent(login: &str, bot_account: bool, agent: Option<&str>) -> bool {
    let login = login.to_lowercase();
    bot_account
        || login.ends_with("[bot]")
        || AGENT_LOGINS.contains(&login.as_str())
        || agent.is_some_and(|a| !a.is_empty() && login.contains(&a.to_lowercase()))
}

/// Did the assigned agent produce useful downstream work?
pub fn assign_to_agent(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = precheck(ctx, false) {
        return e;
    }
    let agent = agent_named(ctx);
    let target_is_pr = ctx.targets(TargetKind::PullRequest);
    // PR states since execution: the agent's PR (or the PR the agent was put on).
    let pr_states: Vec<&Observation> = since_execution(ctx)
        .filter(|o| {
            o.snapshot
                .as_ref()
                .is_some_and(|s| s.kind == Some(TargetKind::PullRequest))
        })
        .collect();
    // PRs the agent linked to the issue after the action (timeline
    // cross-references written by the agent): theirs even when the PR's own
    // state does not name its author.
    let repo = ctx.record.repo.as_str();
    let linked_by_agent: Vec<String> = since_execution(ctx)
        .filter_map(|o| match (&o.event, &o.actor) {
            (
                K::CrossReferenced {
                    source_number,
                    source_is_pull_request: true,
                },
                Some(a),
            ) if is_agent(&a.login, a.is_bot(), agent.as_deref()) => Some(
                safe_outcomes_model::target::thread_key(repo, *source_number),
            ),
            _ => None,
        })
        .collect();
    let agent_pr = |o: &&&Observation| {
        target_is_pr
            || linked_by_agent.contains(&o.target)
            || o.snapshot
                .as_ref()
                .and_then(|s| s.author.as_ref())
                .is_some_and(|a| is_agent(&a.login, a.is_bot(), agent.as_deref()))
    };
    if let Some(pr) = pr_states.iter().rfind(|o| agent_pr(o)) {
        if let Some(e) = agent_pr_outcome(ctx, pr, &pr_states) {
            return e;
        }
    }
    let agent_assigned = ctx.observations.iter().any(|o| {
        matches!(&o.event, K::Assigned { assignee } if is_agent(assignee, false, agent.as_deref()))
    });
    let attributed = agent.is_some() || agent_assigned || pr_states.iter().any(|o| agent_pr(&o));
    if !attributed {
        return missing_state("Neither the record nor the observations say which agent was assigned, so the issue's fate cannot be credited to it.");
    }
    // Someone else's PR merged into the thread: solved, not by the agent.
    if let Some(other) = pr_states.iter().rfind(|o| {
        o.snapshot.as_ref().is_some_and(|s| {
            s.merged
                && s.author
                    .as_ref()
                    .is_some_and(|a| !is_agent(&a.login, a.is_bot(), agent.as_deref()))
        })
    }) {
        return Evaluation::new(O::Accepted, S::Medium, Signal::CompletedByOtherActor)
            .decided_by(&other.id, other.at)
            .note("The work was completed by a PR from someone other than the agent.");
    }
    if let Some(e) = thread_outcome(ctx, agent.as_deref()) {
        return e;
    }
    let activity = ctx
        .after_execution()
        .filter(|o| ctx.actor_class(o) != safe_outcomes_model::ActorClass::SameWorkflowActor)
        .count();
    let e = if activity == 0 && window_passed(ctx, ISSUE_IGNORE_WINDOW) {
        Evaluation::new(O::Ignored, S::Weak, Signal::NoEngagement)
            .note("No PR or activity followed the agent assignment within 7 days.")
    } else {
        Evaluation::new(O::Pending, S::Weak, Signal::AwaitingAgent)
            .note("The agent is assigned; no PR outcome has been seen yet.")
    };
    e.detail("activity_after_assignment", activity)
}

/// The agent's PR: merged, closed unmerged, or approved while open.
fn agent_pr_outcome(
    ctx: &EvalContext,
    pr: &Observation,
    pr_states: &[&Observation],
) -> Option<Evaluation> {
    let s = pr.snapshot.as_ref()?;
    if s.merged {
        let merge = pr_states
            .iter()
            .find(|o| o.target == pr.target && o.snapshot.as_ref().is_some_and(|s| s.merged))
            .unwrap_or(&pr);
        return Some(
            Evaluation::new(O::Accepted, S::Strong, Signal::Merged)
                .decided_by(&merge.id, merge.at)
                .note("The agent's pull request was merged."),
        );
    }
    if s.state.eq_ignore_ascii_case("closed") {
        let e = Evaluation::new(O::Rejected, S::Strong, Signal::ClosedWithoutMerge)
            .decided_by(&pr.id, pr.at)
            .detail("closed_by_type", class_name(ctx.actor_class(pr)));
        // A bot closing the agent's PR is housekeeping, not a verdict. The
        // seed's row ("Agent PR closed unmerged — rejected — strong") does not
        // ask who closed it, so a closer nobody can see (the PR object names
        // none) still rejects, with low confidence (rule 8), as for any PR.
        return Some(match ctx.actor_class(pr) {
            ActorClass::VisibleNonBotActor => e.note(
                "The agent's pull request was closed without merge by a visible non-bot actor.",
            ),
            ActorClass::BotActor | ActorClass::SameWorkflowActor => {
                Evaluation::new(O::Unknown, S::Weak, Signal::ClosedWithoutMerge)
                    .note("The agent's pull request was closed without merge by automation.")
            }
            ActorClass::UnknownActor | ActorClass::SystemActor => actor_unseen(
                e.note("The agent's pull request was closed without merge."),
                "closed",
                None,
            ),
        });
    }
    let approval = human_after(ctx).find(|o| {
        matches!(&o.event, K::ReviewSubmitted { state, .. } if state == "approved")
            && o.target == pr.target
    });
    Some(match approval {
        Some(a) => Evaluation::new(O::Pending, S::Medium, Signal::ReviewApproved)
            .decided_by(&a.id, a.at)
            .note("The agent's pull request was approved and is awaiting merge."),
        // Open, nobody approved it yet: the same as any open PR.
        None => cite(
            Evaluation::new(O::Pending, S::Weak, Signal::AwaitingReview).note(
                "The agent's pull request is open; no visible non-bot actor has approved it yet.",
            ),
            pr,
        ),
    })
}

/// The assigned issue's own fate: completed, closed as unwanted, or the agent
/// taken off it.
fn thread_outcome(ctx: &EvalContext, agent: Option<&str>) -> Option<Evaluation> {
    let key = ctx.record.target.as_ref()?.key();
    // The latest snapshot that shows the state (general rule 2).
    let snap = since_execution(ctx)
        .filter(|o| o.target == key)
        .filter_map(|o| o.snapshot.as_ref())
        .filter(|s| !s.state.is_empty())
        .last()?;
    if snap.state.eq_ignore_ascii_case("closed") {
        let reason = snap.state_reason.as_deref();
        return Some(match (closer(ctx), reason) {
            (Closer::Lifecycle(c), _) => lifecycle(ctx, c),
            (Closer::Human(c), Some("completed")) => {
                Evaluation::new(O::Accepted, S::Strong, Signal::Completed)
                    .decided_by(&c.id, c.at)
                    .note("The issue was closed as completed after the agent assignment.")
            }
            (Closer::Unknown(c), Some("completed")) => {
                let e = Evaluation::new(O::Accepted, S::Strong, Signal::Completed)
                    .note("The issue was closed as completed; who closed it was not visible.");
                hedge(match c {
                    Some(c) => e.decided_by(&c.id, c.at),
                    None => e,
                })
            }
            (Closer::Human(c), Some("not_planned" | "duplicate")) => {
                Evaluation::new(O::Rejected, S::Medium, Signal::ClosedNotPlanned)
                    .decided_by(&c.id, c.at)
                    .note("A visible non-bot actor closed the issue as not planned or duplicate.")
            }
            _ => Evaluation::new(O::Unknown, S::Weak, Signal::Closed)
                .note("The issue was closed without a reason that says whether the agent's work was wanted."),
        });
    }
    let taken_off = human_after(ctx).filter(|o| o.target == key).find(
        |o| matches!(&o.event, K::Unassigned { assignee } if is_agent(assignee, false, agent)),
    )?;
    Some(
        Evaluation::new(O::Rejected, S::Medium, Signal::AgentUnassigned)
            .decided_by(&taken_off.id, taken_off.at)
            .note("A visible non-bot actor removed the agent from the issue."),
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::evaluate::testkit::*;
    use safe_outcomes_model::{
        Actor, ItemSnapshot, Observation, ObservationKind as K, Target, TargetKind,
    };

    fn assigned(who: &str) -> K {
        K::Assigned {
            assignee: who.into(),
        }
    }

    fn unassigned(who: &str) -> K {
        K::Unassigned {
            assignee: who.into(),
        }
    }

    fn assignees(s: ItemSnapshot, who: &[&str]) -> ItemSnapshot {
        ItemSnapshot {
            assignees: strings(who),
            ..s
        }
    }

    /// The agent's PR #8, its observation filed under the issue's key.
    fn agent_pr(hours: f64, actor: Option<Actor>, state: ItemSnapshot) -> Observation {
        obs(hours, actor, K::Closed).snap(ItemSnapshot {
            kind: Some(TargetKind::PullRequest),
            author: Some(Actor::new("copilot-swe-agent", "Bot")),
            ..state
        })
    }

    #[test]
    fn assign_to_agent_table() {
        let r = || record("assign_to_agent").extra("agent", json!("copilot"));
        let ours = || obs(-0.01, workflow_actor(), assigned("Copilot")).snap(open());
        run_rows!(r(), 48.0;
            "gh-aw: agent PR from post-action link, merged":
                [obs(-1.0, human("alice"), K::Opened).snap(open()), agent_pr(24.0, human("alice"), merged(human("alice")))] => (ACCEPTED, STRONG, "merged"), on record("assign_to_agent");
            "agent PR approved, not merged":
                [ours(), agent_pr(5.0, human("alice"), open()), obs(6.0, human("alice"), review(1, "approved"))] => (PENDING, MEDIUM, "review_approved"), at 24.0;
            "issue closed as completed":
                [ours(), obs(30.0, human("alice"), K::Closed).snap(closed_as(Some("completed")))] => (ACCEPTED, STRONG, "completed");
            "agent PR closed unmerged by a human":
                [ours(), agent_pr(10.0, human("alice"), snapshot("closed"))] => (REJECTED, STRONG, "closed_without_merge"), at 24.0;
            "no PR or activity after 7 days": [ours()] => (IGNORED, WEAK, "no_engagement"), at 168.0;
            "assigned, still early": [ours()] => (PENDING, WEAK, "awaiting_agent"), at 24.0;
            "solved by someone else":
                [ours(), obs(20.0, human("bob"), K::Closed).snap(ItemSnapshot { kind: Some(TargetKind::PullRequest), author: human("bob"),..merged(human("alice")) })] => (ACCEPTED, MEDIUM, "completed_by_other_actor");
            "gh-aw: unattributed agent assignment":
                [obs(10.0, human("alice"), K::Closed).snap(closed_as(Some("completed")))] => (UNKNOWN, NONE, "missing_execution_state"), on record("assign_to_agent");
            "agent assignment seen though not recorded":
                [ours(), obs(10.0, human("alice"), K::Closed).snap(closed_as(Some("completed")))] => (ACCEPTED, STRONG, "completed"), on record("assign_to_agent");
            "closed as not planned by a human":
                [ours(), obs(10.0, human("alice"), K::Closed).snap(closed_as(Some("not_planned")))] => (REJECTED, MEDIUM, "closed_not_planned");
            "agent taken off by a human":
                [ours(), obs(3.0, human("alice"), unassigned("Copilot")).snap(open())] => (REJECTED, MEDIUM, "agent_unassigned");
            "assigned to a PR that merged":
                [obs(-0.01, workflow_actor(), assigned("Copilot")).snap(ItemSnapshot { kind: Some(TargetKind::PullRequest),..open() }), obs(9.0, human("alice"), K::Closed).snap(ItemSnapshot { kind: Some(TargetKind::PullRequest),..merged(human("alice")) })] => (ACCEPTED, STRONG, "merged"), on r().target(Target::thread(REPO, TargetKind::PullRequest, NUMBER)), at 24.0;
            "the named agent's PR (a person's account, by its name) merged":
                [ours(), pr_by(10.0, human("devin-ai"), true)] => (ACCEPTED, STRONG, "merged"), on record("assign_to_agent").extra("agent", json!("devin"));
            "a bot account's PR (no [bot] in its login) is the agent's":
                [ours(), pr_by(10.0, Some(Actor::new("sweep-ai", "Bot")), true)] => (ACCEPTED, STRONG, "merged");
            "a PR the agent linked, its author unseen, merged":
                [ours(), linked(5.0, bot("copilot-swe-agent"), 8), on_pr(pr_by(10.0, None, true), 8)] => (ACCEPTED, STRONG, "merged");
            "a PR a person linked, theirs, merged: someone else's work":
                [ours(), linked(5.0, human("alice"), 9), on_pr(pr_by(10.0, human("alice"), true), 9)] => (ACCEPTED, MEDIUM, "completed_by_other_actor");
            "someone else's PR still open: not done yet":
                [ours(), pr_by(10.0, human("bob"), false)] => (PENDING, WEAK, "awaiting_agent");
            "a person's comment is activity: not ignored at 7 days":
                [ours(), obs(30.0, human("alice"), comment(3)).snap(open())] => (PENDING, WEAK, "awaiting_agent"), at 168.0;
            "agent PR open, a person's comment is no approval":
                [ours(), agent_pr(5.0, human("alice"), open()), obs(6.0, human("alice"), comment(3))] => (PENDING, WEAK, "awaiting_review"), at 24.0;
            "issue closed as completed by a bot: lifecycle, not the agent's work":
                [ours(), obs(10.0, bot("stale[bot]"), K::Closed).snap(closed_as(Some("completed")))] => (IGNORED, WEAK, "lifecycle");
            "issue closed as completed, the closer unseen":
                [ours(), obs(10.0, None, K::Closed).snap(closed_as(Some("completed")))] => (ACCEPTED, STRONG, "completed");
            + unobserved_case("nothing seen", r());
        );
    }

    /// A PR's state (merged or open) by `author`, filed under the issue's key.
    fn pr_by(hours: f64, author: Option<Actor>, is_merged: bool) -> Observation {
        let state = if is_merged {
            merged(human("alice"))
        } else {
            open()
        };
        obs(hours, author.clone(), K::Closed).snap(ItemSnapshot {
            kind: Some(TargetKind::PullRequest),
            author,
            ..state
        })
    }

    /// `o` filed under PR `n`'s own key.
    fn on_pr(mut o: Observation, n: u64) -> Observation {
        o.target = safe_outcomes_model::target::thread_key(REPO, n);
        o
    }

    /// `who` linked PR `n` to the issue (a timeline cross-reference).
    fn linked(hours: f64, who: Option<Actor>, n: u64) -> Observation {
        let kind = K::CrossReferenced {
            source_number: n,
            source_is_pull_request: true,
        };
        obs(hours, who, kind)
    }

    /// The agent's merged PR is dated by its merge, not by a later state of
    /// it; the assignee's own unassignment alone is a decline.
    #[test]
    fn the_merge_dates_the_agent_s_pr_and_only_the_assignee_declines() {
        let r = record("assign_to_agent").extra("agent", json!("copilot"));
        let ours = obs(-0.01, workflow_actor(), assigned("Copilot")).snap(open());
        let o = vec![
            ours,
            agent_pr(5.0, human("alice"), open()),
            agent_pr(10.0, human("alice"), merged(human("alice"))),
            agent_pr(20.0, human("alice"), merged(human("alice"))),
        ];
        let e = eval(&r, o, 24.0);
        assert_eq!(e.signal, safe_outcomes_model::Signal::Merged);
        assert_eq!(e.decided_at, Some(at(10.0)), "{e:?}");

        let r = record("assign_to_user").extra("assignees", json!(["bob"]));
        let ours = obs(-0.01, workflow_actor(), assigned("bob")).snap(assignees(open(), &["bob"]));
        let by = |who| vec![ours.clone(), obs(3.0, who, unassigned("bob")).snap(open())];
        let declined = |e: &safe_outcomes_model::Evaluation| e.details.get("declined").cloned();
        assert_eq!(
            declined(&eval(&r, by(human("bob")), 24.0)),
            Some(json!(true))
        );
        assert_eq!(declined(&eval(&r, by(human("alice")), 24.0)), None);
    }

    #[test]
    fn assign_to_user_table() {
        let r = || record("assign_to_user").extra("assignees", json!(["bob"]));
        let ours =
            || obs(-0.01, workflow_actor(), assigned("bob")).snap(assignees(open(), &["bob"]));
        run_rows!(r(), 24.0;
            "assigned user comments":
                [ours(), obs(5.0, human("bob"), comment(3)).snap(assignees(open(), &["bob"]))] => (ACCEPTED, STRONG, "assignee_acted");
            "assigned user closes the item":
                [ours(), obs(5.0, human("bob"), K::Closed).snap(assignees(closed_as(Some("completed")), &["bob"]))] => (ACCEPTED, STRONG, "assignee_acted"), on record("assign_to_user").extra("assignee", json!("bob"));
            "assignment remains while open": [ours()] => (PENDING, WEAK, "assignment_retained"), at 48.0;
            "user removed by a human":
                [ours(), obs(3.0, human("alice"), unassigned("bob")).snap(open())] => (REJECTED, MEDIUM, "assignee_removed");
            "the assignee unassigns themself and comments why: declined, at every window":
                [ours(), obs(3.0, human("bob"), unassigned("bob")).snap(open()), obs(30.0, human("bob"), comment(4)).snap(open())] => (REJECTED, MEDIUM, "assignee_removed"), at 7.0 * 24.0;
            "the assignee comments, then unassigns themself: declined (their latest act)":
                [ours(), obs(3.0, human("bob"), comment(4)).snap(assignees(open(), &["bob"])), obs(4.0, human("bob"), unassigned("bob")).snap(open())] => (REJECTED, MEDIUM, "assignee_removed");
            "removed by a maintainer, then comments: not an act of the assignee":
                [ours(), obs(3.0, human("alice"), unassigned("bob")).snap(open()), obs(5.0, human("bob"), comment(4)).snap(open())] => (REJECTED, MEDIUM, "assignee_removed");
            "removed, assigned again, then acts: counted":
                [ours(), obs(3.0, human("alice"), unassigned("bob")).snap(open()), obs(4.0, human("alice"), assigned("bob")).snap(assignees(open(), &["bob"])), obs(5.0, human("bob"), comment(4)).snap(assignees(open(), &["bob"]))] => (ACCEPTED, STRONG, "assignee_acted");
            "user removed by a bot":
                [ours(), obs(3.0, bot("stale[bot]"), unassigned("bob")).snap(open())] => (UNKNOWN, WEAK, "state_changed_by_bot");
            "completed while assigned":
                [ours(), obs(9.0, human("alice"), K::Closed).snap(assignees(closed_as(Some("completed")), &["bob"]))] => (ACCEPTED, MEDIUM, "completed_while_assigned");
            "closed without assignee action":
                [ours(), obs(9.0, human("alice"), K::Closed).snap(assignees(closed_as(Some("not_planned")), &["bob"]))] => (IGNORED, WEAK, "closed_without_assignee_action");
            "assignee recorded only in after_state":
                [ours()] => (PENDING, WEAK, "assignment_retained"), on record("assign_to_user").before(json!({"assignees": []})).after(json!({"assignees": ["bob"]}));
            "no assignee recorded": [ours()] => (UNKNOWN, NONE, "missing_execution_state"), on record("assign_to_user");
            + unobserved_case("nothing seen", r());
        );
    }

    #[test]
    fn unassign_from_user_table() {
        let r = || record("unassign_from_user").extra("assignees", json!(["bob"]));
        let ours = || obs(-0.01, workflow_actor(), unassigned("bob")).snap(open());
        let reassign = |who| obs(3.0, who, assigned("bob")).snap(assignees(open(), &["bob"]));
        let mut cases = undo_rows(ours, reassign, "auto-assign[bot]", ("state_retained", 2.0));
        cases.extend(rows![
            "item closed after unassignment":
                [ours(), obs(3.0, human("alice"), K::Closed).snap(closed_as(Some("completed")))] => (ACCEPTED, MEDIUM, "closed_after_unassignment"), at 4.0;
            "assignees not seen since execution":
                [obs(-3.0, human("alice"), assigned("bob")).snap(assignees(open(), &["bob"]))] => (UNKNOWN, NONE, "target_unobserved");
            "closed before, still closed, no close since: the unassignment stands, nothing more":
                [ours(), obs(3.0, human("alice"), comment(4)).snap(closed_as(Some("completed")))] => (PENDING, WEAK, "state_retained"), at 4.0;
            "removal recorded as a state delta":
                [ours()] => (ACCEPTED, MEDIUM, "state_retained"), on record("unassign_from_user").before(json!({"assignees": ["bob", "carol"]})).after(json!({"assignees": ["carol"]}));
        ]);
        run_with(r(), 24.0, cases);
    }

    proptest::proptest! {
        /// Roles at the time of the act (issue 44, item 4), over times: a
        /// maintainer takes the assignment away and gives it back at any
        /// times; the assignee's comment counts (`assignee_acted`) exactly
        /// when they were assigned at it.
        #[test]
        fn an_assignee_s_act_counts_only_while_assigned(
            flips in proptest::collection::vec(1u32..200, 0..6),
            act in 1u32..200,
        ) {
            let (changes, at_act) = role_flips(flips, act, true);
            let r = record("assign_to_user").extra("assignees", json!(["bob"]));
            let mut o = vec![obs(-0.01, workflow_actor(), assigned("bob")).snap(assignees(open(), &["bob"]))];
            for (h, held) in changes {
                let (kind, snap) = if held {
                    (assigned("bob"), assignees(open(), &["bob"]))
                } else {
                    (unassigned("bob"), open())
                };
                o.push(obs(h, human("alice"), kind).snap(snap));
            }
            let now = if at_act { assignees(open(), &["bob"]) } else { open() };
            o.push(obs(act as f64 / 10.0, human("bob"), comment(4)).snap(now));
            let e = eval(&r, o, 24.0);
            let counted = e.signal == safe_outcomes_model::Signal::AssigneeActed;
            proptest::prop_assert_eq!(counted, at_act, "{:?}", e);
        }
    }
}
