//! `add_reviewer`: did a requested reviewer review, comment, or get removed?
//! The requested users and teams come from `metadata.requested_reviewers` /
//! `requested_team_reviewers` (gh-aw's handler), else the tool arguments
//! `reviewers` / `team_reviewers`. Seed 000 §7 rows, in the order checked:
//!
//! | state | outcome |
//! |---|---|
//! | a requested user's latest review is still pending (API state only) | pending/weak `latest_review_pending` |
//! | a requested user reviewed (visible non-bot; their latest review decides) | accepted/strong `review_approved` (approval) or `review_submitted` |
//! | a requested user commented on the PR or its diff | accepted/medium `acted_on` |
//! | a visible non-bot removed one of our requests | rejected/medium `review_request_removed` |
//! | a visible non-bot known to be an active member of a requested team (a `TeamMember` observation, `member: true`) reviewed or commented | as a requested user above |
//! | a team was requested and a visible non-bot not among the requested users, and not known to be outside every requested team, reviewed | unknown/weak `team_membership_unverified` |
//! | PR merged without a requested reviewer acting | ignored/weak `review_missing` |
//! | PR closed unmerged without one acting | ignored/weak `review_missing` |
//! | PR open | pending/weak `awaiting_review` |
//!
//! Team membership is in no webhook: the checkpoint signals fetch
//! (`github::signals`) asks the memberships endpoint and files `TeamMember`
//! observations (the latest answer per team and login counts). A reviewer
//! who is a member of no requested team (`member: false` for each) is not
//! theirs; with no answer (a 404 files nothing: "not a member" and "team not
//! visible" look the same) a team request is satisfied only "maybe", as
//! gh-aw answers. For a merged PR the seed allows "ignored
//! or accepted_weak"; a merge says nothing about the reviewer, so `ignored`.

use std::collections::{BTreeMap, BTreeSet};

use super::super::common::{
    cite, gone, holds_role_at, is_closed, is_merged, missing_reference, missing_state, unobserved,
    unseen_reversal,
};
use super::super::EvalContext;
use super::Verdict;
use safe_outcomes_model::{
    Evaluation, EvidenceStrength as S, Observation, ObservationKind as K, OutcomeStatus as O,
    Signal,
};

pub fn add_reviewer(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = missing_reference(ctx) {
        return e;
    }
    let users = requested(ctx, &["requested_reviewers", "reviewers"], login_key);
    let teams = requested(
        ctx,
        &["requested_team_reviewers", "team_reviewers"],
        team_key,
    );
    if users.is_empty() && teams.is_empty() {
        return missing_state("The record names no requested reviewer or team.");
    }
    if !ctx.target_seen() {
        return unobserved();
    }
    if let Some(e) = gone(ctx, false) {
        return e;
    }
    let membership = team_membership(ctx, &teams);
    let by_requested = |o: &Observation| {
        o.actor.as_ref().is_some_and(|a| {
            let login = login_key(&a.login);
            users.contains(&login) || membership.get(&login) == Some(&Membership::Member)
        })
    };
    let not_in_teams = |o: &Observation| {
        o.actor
            .as_ref()
            .is_some_and(|a| membership.get(&login_key(&a.login)) == Some(&Membership::Outside))
    };
    // Role at the time of the act: a requested user's review or comment
    // counts only while their request stands (not after a removal of it,
    // until requested again). A team member's counts while the team's does.
    let holds = |o: &Observation| {
        let Some(login) = o.actor.as_ref().map(|a| login_key(&a.login)) else {
            return false;
        };
        let mine = |r: &Option<String>, t: &Option<String>| {
            r.as_deref().is_some_and(|r| login_key(r) == login)
                || (!users.contains(&login)
                    && t.as_deref().is_some_and(|t| teams.contains(&team_key(t))))
        };
        holds_role_at(
            ctx,
            o,
            |k| matches!(k, K::ReviewRequestRemoved { reviewer, team } if mine(reviewer, team)),
            |k| matches!(k, K::ReviewRequested { reviewer, team } if mine(reviewer, team)),
        )
    };
    let acting = |o: &Observation| by_requested(o) && holds(o);
    let human: Vec<&Observation> = ctx.after_execution().filter(|o| ctx.is_human(o)).collect();
    let is_pending = |o: &Observation| matches!(&o.event, K::ReviewSubmitted { state, .. } if state == "pending");
    // General rule 5: a reviewer's latest review supersedes their earlier
    // ones; one still being written is their current one, whatever the times
    // of their submitted reviews (it has none of its own).
    let pending = human.iter().find(|o| acting(o) && is_pending(o));
    let review = human
        .iter()
        .rfind(|o| matches!(o.event, K::ReviewSubmitted { .. }) && acting(o) && !is_pending(o));
    let comment = human.iter().find(|o| {
        matches!(
            o.event,
            K::CommentCreated { .. } | K::ReviewCommentCreated { .. }
        ) && acting(o)
    });
    let removal = human.iter().find(|o| match &o.event {
        K::ReviewRequestRemoved { reviewer, team } => {
            reviewer
                .as_deref()
                .is_some_and(|r| users.contains(&login_key(r)))
                || team
                    .as_deref()
                    .is_some_and(|t| teams.contains(&team_key(t)))
        }
        _ => false,
    });
    let other_review = human.iter().find(|o| {
        matches!(o.event, K::ReviewSubmitted { .. }) && !by_requested(o) && !not_in_teams(o)
    });

    let e = if let Some(r) = pending {
        // Rule 5: their latest review is still being written.
        Evaluation::new(O::Pending, S::Weak, Signal::LatestReviewPending)
            .decided_by(&r.id, r.at)
            .note("A requested reviewer's latest review is still pending (started, not submitted).")
    } else if let Some(r) = review {
        let approved = matches!(&r.event, K::ReviewSubmitted { state, .. } if Verdict::parse(state) == Some(Verdict::Approved));
        let signal = if approved {
            Signal::ReviewApproved
        } else {
            Signal::ReviewSubmitted
        };
        Evaluation::new(O::Accepted, S::Strong, signal)
            .decided_by(&r.id, r.at)
            .note("A requested reviewer submitted a review.")
    } else if let Some(c) = comment {
        Evaluation::new(O::Accepted, S::Medium, Signal::ActedOn)
            .decided_by(&c.id, c.at)
            .note("A requested reviewer commented on the PR.")
    } else if let Some(r) = removal {
        Evaluation::new(O::Rejected, S::Medium, Signal::ReviewRequestRemoved)
            .decided_by(&r.id, r.at)
            .note("A visible non-bot actor removed the review request.")
    } else if let (false, Some(r)) = (teams.is_empty(), other_review) {
        Evaluation::new(O::Unknown, S::Weak, Signal::TeamMembershipUnverified)
            .decided_by(&r.id, r.at)
            .note("Someone reviewed who may belong to a requested team; webhooks do not show team membership.")
    } else if let Some(now) = requests_gone(ctx, &users, &teams) {
        // General rule 4: no longer requested, and no review from them.
        let e = Evaluation::new(O::Rejected, S::Medium, Signal::ReviewRequestRemoved)
            .note("None of the requested reviewers is requested any more, and none of them reviewed or commented.");
        unseen_reversal(cite(e, now))
    } else if is_merged(ctx) || is_closed(ctx) {
        Evaluation::new(O::Ignored, S::Weak, Signal::ReviewMissing)
            .note("The PR was merged or closed without a requested reviewer acting.")
    } else {
        Evaluation::new(O::Pending, S::Weak, Signal::AwaitingReview)
            .note("The review request is pending and the PR is open.")
    };
    e.detail("requested_reviewers", users)
        .detail("requested_team_reviewers", teams)
        .detail("merged", is_merged(ctx))
        .detail("closed", is_closed(ctx))
}

/// The latest state since execution that lists the pending review requests,
/// when it lists none of ours.
fn requests_gone<'a>(
    ctx: &EvalContext<'a>,
    users: &[String],
    teams: &[String],
) -> Option<&'a Observation> {
    let now = ctx
        .after_execution()
        .filter(|o| o.snapshot.as_ref().is_some_and(|s| s.reviewers_known))
        .last()?;
    let snap = now.snapshot.as_ref()?;
    let still_user = snap
        .requested_reviewers
        .iter()
        .any(|r| users.contains(&login_key(r)));
    let still_team = snap
        .requested_teams
        .iter()
        .any(|t| teams.contains(&team_key(t)));
    (!still_user && !still_team).then_some(now)
}

/// What the `TeamMember` observations say of a login and the requested teams.
#[derive(Debug, PartialEq, Eq)]
enum Membership {
    /// An active member of at least one requested team.
    Member,
    /// Known not to be a member of any requested team.
    Outside,
}

/// Per login: member of a requested team, or known outside all of them
/// (the latest answer per team and login counts). Logins with no answer for
/// some requested team, and no membership in another, are left out (unknown).
fn team_membership(ctx: &EvalContext, teams: &[String]) -> BTreeMap<String, Membership> {
    let mut latest: BTreeMap<(String, String), bool> = BTreeMap::new();
    for o in ctx.observations {
        if let K::TeamMember {
            team,
            login,
            member,
            ..
        } = &o.event
        {
            let team = team_key(team);
            if teams.contains(&team) {
                latest.insert((login_key(login), team), *member);
            }
        }
    }
    let mut out = BTreeMap::new();
    let logins: BTreeSet<&String> = latest.keys().map(|(l, _)| l).collect();
    for login in logins {
        let answers: Vec<Option<bool>> = teams
            .iter()
            .map(|t| latest.get(&(login.clone(), t.clone())).copied())
            .collect();
        if answers.contains(&Some(true)) {
            out.insert(login.clone(), Membership::Member);
        } else if answers.iter().all(|a| *a == Some(false)) {
            out.insert(login.clone(), Membership::Outside);
        }
    }
    out
}

/// The first non-empty list among `names`, normalized by `key`.
fn requested(ctx: &EvalContext, names: &[&str], key: fn(&str) -> String) -> Vec<String> {
    names
        .iter()
        .map(|n| ctx.record.field_list(n))
        .find(|l| !l.is_empty())
        .unwrap_or_default()
        .iter()
        .map(|s| key(s))
        .filter(|s| !s.is_empty())
        .collect()
}

/// Logins compare case-insensitively; `@alice` names `alice`.
fn login_key(login: &str) -> String {
    login.trim().trim_start_matches('@').to_ascii_lowercase()
}

/// Teams by slug: `@org/infra` and `infra` are the same team.
fn team_key(team: &str) -> String {
    let t = team.trim().trim_start_matches('@');
    t.rsplit('/').next().unwrap_or(t).to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::evaluate::testkit::*;
    use safe_outcomes_model::{Actor, Observation, ObservationKind as K};

    fn requested_obs(h: f64, reviewer: Option<&str>, team: Option<&str>) -> Observation {
        obs(
            h,
            workflow_actor(),
            K::ReviewRequested {
                reviewer: reviewer.map(str::to_string),
                team: team.map(str::to_string),
            },
        )
        .snap(open())
    }

    fn removed(
        h: f64,
        who: Option<Actor>,
        reviewer: Option<&str>,
        team: Option<&str>,
    ) -> Observation {
        obs(
            h,
            who,
            K::ReviewRequestRemoved {
                reviewer: reviewer.map(str::to_string),
                team: team.map(str::to_string),
            },
        )
        .snap(open())
    }

    fn member(h: f64, login: &str, member: bool) -> Observation {
        obs(
            h,
            None,
            K::TeamMember {
                org: "acme".into(),
                team: "infra".into(),
                login: login.into(),
                member,
            },
        )
    }

    fn reviewed(h: f64, who: Option<Actor>, state: &str) -> Observation {
        obs(h, who, review(80, state)).snap(open())
    }

    #[test]
    fn add_reviewer_table() {
        let users = || record("add_reviewer").meta("requested_reviewers", json!(["Alice"]));
        let team =
            || record("add_reviewer").meta("requested_team_reviewers", json!(["acme/infra"]));
        let asked = || requested_obs(-0.01, Some("alice"), None);
        run_rows!(users(), 24.0;
            "requested reviewer approved":
                [asked(), reviewed(3.0, human("alice"), "approved")] => (ACCEPTED, STRONG, "review_approved");
            "requested reviewer requested changes":
                [asked(), reviewed(3.0, human("alice"), "changes_requested")] => (ACCEPTED, STRONG, "review_submitted");
            "reviewers from the tool arguments":
                [asked(), reviewed(3.0, human("bob"), "commented")] => (ACCEPTED, STRONG, "review_submitted"), on record("add_reviewer").extra("reviewers", json!("@alice, bob"));
            "requested reviewer commented on the PR":
                [asked(), obs(3.0, human("alice"), comment(9)).snap(open())] => (ACCEPTED, MEDIUM, "acted_on");
            "requested reviewer commented on the diff":
                [asked(), obs(3.0, human("alice"), K::ReviewCommentCreated { comment_id: 9, in_reply_to: None, review_id: None, path: None, agent_marker: false })] => (ACCEPTED, MEDIUM, "acted_on");
            "request removed by a human":
                [asked(), removed(3.0, human("carol"), Some("alice"), None)] => (REJECTED, MEDIUM, "review_request_removed");
            "request removed by a bot is not a verdict":
                [asked(), removed(3.0, bot("sync[bot]"), Some("alice"), None)] => (PENDING, WEAK, "awaiting_review");
            "another reviewer's request removed":
                [asked(), removed(3.0, human("carol"), Some("zed"), None)] => (PENDING, WEAK, "awaiting_review");
            "a review after the request was removed does not count":
                [asked(), removed(2.0, human("carol"), Some("alice"), None), reviewed(3.0, human("alice"), "approved")] => (REJECTED, MEDIUM, "review_request_removed");
            "removed, requested again, then reviewed: counted":
                [asked(), removed(2.0, human("carol"), Some("alice"), None), requested_obs(2.5, Some("alice"), None), reviewed(3.0, human("alice"), "approved")] => (ACCEPTED, STRONG, "review_approved");
            "review before the request does not count":
                [reviewed(-2.0, human("alice"), "approved"), asked()] => (PENDING, WEAK, "awaiting_review");
            "team request, someone reviewed":
                [requested_obs(-0.01, None, Some("infra")), reviewed(3.0, human("frank"), "approved")] => (UNKNOWN, WEAK, "team_membership_unverified"), on team();
            "team request, a team member reviewed":
                [requested_obs(-0.01, None, Some("infra")), member(1.0, "frank", true), reviewed(3.0, human("frank"), "approved")] => (ACCEPTED, STRONG, "review_approved"), on team();
            "team request, a team member commented":
                [requested_obs(-0.01, None, Some("infra")), member(1.0, "frank", true), obs(3.0, human("frank"), comment(9)).snap(open())] => (ACCEPTED, MEDIUM, "acted_on"), on team();
            "team request, the reviewer is not a member":
                [requested_obs(-0.01, None, Some("infra")), member(1.0, "frank", false), reviewed(3.0, human("frank"), "approved")] => (PENDING, WEAK, "awaiting_review"), on team();
            "team request, the latest answer counts":
                [requested_obs(-0.01, None, Some("infra")), member(1.0, "frank", false), member(2.0, "frank", true), reviewed(3.0, human("frank"), "approved")] => (ACCEPTED, STRONG, "review_approved"), on team();
            "team request, membership of another team says nothing":
                [requested_obs(-0.01, None, Some("infra")), obs(1.0, None, K::TeamMember { org: "acme".into(), team: "web".into(), login: "frank".into(), member: true }), reviewed(3.0, human("frank"), "approved")] => (UNKNOWN, WEAK, "team_membership_unverified"), on team();
            "team request removed by a human":
                [requested_obs(-0.01, None, Some("infra")), removed(3.0, human("carol"), None, Some("infra"))] => (REJECTED, MEDIUM, "review_request_removed"), on team();
            "user review by someone else, no team requested":
                [asked(), reviewed(3.0, human("frank"), "approved")] => (PENDING, WEAK, "awaiting_review");
            "merged without the reviewer acting":
                [asked(), obs(30.0, human("carol"), K::Closed).snap(merged(human("carol")))] => (IGNORED, WEAK, "review_missing"), at 48.0;
            "closed unmerged without the reviewer acting":
                [asked(), obs(30.0, human("carol"), K::Closed).snap(snapshot("closed"))] => (IGNORED, WEAK, "review_missing"), at 48.0;
            "still open": [asked()] => (PENDING, WEAK, "awaiting_review");
            "nobody named": [asked()] => (UNKNOWN, NONE, "missing_execution_state"), on record("add_reviewer");
            + unobserved_case("nothing observed", users());
        );
    }
}
