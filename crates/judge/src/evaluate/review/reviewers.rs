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
//! | a visible non-bot who was an active member of a requested team at the time of their act (below) reviewed or commented | as a requested user above |
//! | a team was requested and a visible non-bot not among the requested users, and not known to be outside every requested team, reviewed | unknown/weak `team_membership_unverified` |
//! | PR merged without a requested reviewer acting | ignored/weak `review_missing` |
//! | PR closed unmerged without one acting | ignored/weak `review_missing` |
//! | PR open | pending/weak `awaiting_review` |
//!
//! Team membership at the time of the act (issue 44, item 4): a member's
//! review or comment counts only if they were a member when they acted.
//! Two sources of `TeamMember` observations: a `membership.added`/`removed`
//! delivery (`changed: true`) dates a change; the memberships endpoint,
//! which the signals fetch (`github::signals`) and a read after the fact
//! ask, answers membership at the read, with no date (GitHub keeps no
//! history of it). Per login and team, at the act's time: the latest dated
//! change at or before it decides, else the first after it (an addition
//! after the act says they were not a member then, a removal that they
//! were); with no change known, a read is taken as having held (the
//! verdict then says so, `team_membership: as read`). A reviewer who is a
//! member of no requested team (`member: false` for each) is not theirs;
//! with nothing known (a 404 files nothing: "not a member" and "team not
//! visible" look the same) a team request is satisfied only "maybe", as
//! gh-aw answers. For a merged PR the seed allows "ignored
//! or accepted_weak"; a merge says nothing about the reviewer, so `ignored`.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

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
    let membership = Teams::new(ctx, &teams);
    let team_at = |o: &Observation| {
        o.actor
            .as_ref()
            .and_then(|a| membership.of(&login_key(&a.login), o.at))
    };
    let by_user = |o: &Observation| {
        o.actor
            .as_ref()
            .is_some_and(|a| users.contains(&login_key(&a.login)))
    };
    let by_requested =
        |o: &Observation| by_user(o) || team_at(o).is_some_and(|(m, _)| m == Membership::Member);
    let not_in_teams = |o: &Observation| team_at(o).is_some_and(|(m, _)| m == Membership::Outside);
    // Said when a read decided a team member's act: membership at the read.
    let undated = |o: &Observation| !by_user(o) && team_at(o).is_some_and(|(_, read)| read);
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
    // A team member's act counted from a read: say that membership is the
    // read's, not dated at the act.
    let e = match pending.or(review).or(comment) {
        Some(o) if undated(o) => {
            let notes = format!("{} Their team membership is as GitHub answered when read (it keeps no history of memberships), not dated at the act.", e.notes);
            e.note(notes).detail("team_membership", "as read")
        }
        Some(o) if team_at(o).is_some() && !by_user(o) => e.detail("team_membership", "dated"),
        _ => e,
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Membership {
    /// An active member of at least one requested team.
    Member,
    /// Known not to be a member of any requested team.
    Outside,
}

/// What is known of one login's membership of one team at one time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Known {
    /// Dated by a `membership` delivery: the latest change at or before the
    /// time, else the state before the first change after it.
    Dated(bool),
    /// Only a read (undated: membership at the read), assumed to have held.
    Read(bool),
}

impl Known {
    fn member(self) -> bool {
        match self {
            Known::Dated(m) | Known::Read(m) => m,
        }
    }
}

/// The `TeamMember` observations of the requested teams, per (login, team),
/// in the context's order (time, then id).
struct Teams<'a> {
    teams: &'a [String],
    by_pair: BTreeMap<(String, String), Vec<&'a Observation>>,
}

impl<'a> Teams<'a> {
    fn new(ctx: &EvalContext<'a>, teams: &'a [String]) -> Teams<'a> {
        let mut by_pair: BTreeMap<(String, String), Vec<&Observation>> = BTreeMap::new();
        for o in ctx.observations {
            if let K::TeamMember { team, login, .. } = &o.event {
                let team = team_key(team);
                if teams.contains(&team) {
                    by_pair.entry((login_key(login), team)).or_default().push(o);
                }
            }
        }
        Teams { teams, by_pair }
    }

    /// Issue 44 item 4, roles at the time of the act: `login`'s membership
    /// of `team` at `at`. A change a `membership` delivery dated decides:
    /// the latest at or before `at`, else the first after it (which says
    /// what held before it). With no change known, a read tells membership
    /// at the read only (GitHub keeps no history of it), taken as held.
    fn at(&self, login: &str, team: &str, at: DateTime<Utc>) -> Option<Known> {
        let obs = self.by_pair.get(&(login.to_string(), team.to_string()))?;
        let change = |o: &&Observation| match &o.event {
            K::TeamMember {
                member,
                changed: true,
                ..
            } => Some((o.at, *member)),
            _ => None,
        };
        let changes: Vec<(DateTime<Utc>, bool)> = obs.iter().filter_map(change).collect();
        if let Some((_, m)) = changes.iter().rfind(|(t, _)| *t <= at) {
            return Some(Known::Dated(*m));
        }
        if let Some((_, m)) = changes.iter().find(|(t, _)| *t > at) {
            return Some(Known::Dated(!m));
        }
        obs.iter().rev().find_map(|o| match &o.event {
            K::TeamMember { member, .. } => Some(Known::Read(*member)),
            _ => None,
        })
    }

    /// `login` at `at` across the requested teams: a member of one, known
    /// outside all, or unknown (`None`); and whether a read decided it.
    fn of(&self, login: &str, at: DateTime<Utc>) -> Option<(Membership, bool)> {
        let known: Vec<Option<Known>> = self.teams.iter().map(|t| self.at(login, t, at)).collect();
        if let Some(k) = known.iter().flatten().find(|k| k.member()) {
            return Some((Membership::Member, matches!(k, Known::Read(_))));
        }
        if known.iter().all(|k| k.is_some_and(|k| !k.member())) {
            let read = known.iter().flatten().any(|k| matches!(k, Known::Read(_)));
            return Some((Membership::Outside, read));
        }
        None
    }
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

    /// `login`'s membership of team infra at `h`: read (`changed: false`),
    /// or told by a `membership.added`/`removed` delivery (`changed: true`).
    fn membership(h: f64, login: &str, member: bool, changed: bool) -> Observation {
        let org = "acme".into();
        let (team, login) = ("infra".into(), login.into());
        let kind = K::TeamMember {
            org,
            team,
            login,
            member,
            changed,
        };
        obs(h, None, kind)
    }

    fn member(h: f64, login: &str, member: bool) -> Observation {
        membership(h, login, member, false)
    }

    /// A `membership.added` (`true`) or `removed` delivery at `h`.
    fn changed(h: f64, login: &str, member: bool) -> Observation {
        membership(h, login, member, true)
    }

    fn reviewed(h: f64, who: Option<Actor>, state: &str) -> Observation {
        obs(h, who, review(80, state)).snap(open())
    }

    /// A PR state that lists its pending review requests.
    fn requests(users: &[&str], teams: &[&str]) -> safe_outcomes_model::ItemSnapshot {
        safe_outcomes_model::ItemSnapshot {
            reviewers_known: true,
            requested_reviewers: strings(users),
            requested_teams: strings(teams),
            ..open()
        }
    }

    /// The verdict says how a team member's act was counted: by a dated
    /// membership change, or by a read that tells membership only when it
    /// was read (issue 44 item 4); a requested user's own act says neither.
    #[test]
    fn the_details_say_how_team_membership_was_known() {
        let users = record("add_reviewer").meta("requested_reviewers", json!(["alice"]));
        let team = record("add_reviewer").meta("requested_team_reviewers", json!(["acme/infra"]));
        let ask_team = || requested_obs(-0.01, None, Some("infra"));
        let cases = [
            (
                users,
                vec![
                    requested_obs(-0.01, Some("alice"), None),
                    reviewed(3.0, human("alice"), "approved"),
                ],
                None,
            ),
            (
                team.clone(),
                vec![
                    ask_team(),
                    member(1.0, "frank", true),
                    reviewed(3.0, human("frank"), "approved"),
                ],
                Some("as read"),
            ),
            (
                team,
                vec![
                    ask_team(),
                    changed(1.0, "frank", true),
                    reviewed(3.0, human("frank"), "approved"),
                ],
                Some("dated"),
            ),
        ];
        for (r, o, want) in cases {
            let e = eval(&r, o, 24.0);
            assert_eq!(
                e.signal,
                safe_outcomes_model::Signal::ReviewApproved,
                "{e:?}"
            );
            assert_eq!(
                e.details.get("team_membership").and_then(|v| v.as_str()),
                want,
                "{e:?}"
            );
            assert_eq!(
                e.notes.contains("as GitHub answered when read"),
                want == Some("as read"),
                "{e:?}"
            );
        }
    }

    #[test]
    fn add_reviewer_table() {
        let users = || record("add_reviewer").meta("requested_reviewers", json!(["Alice"]));
        let team =
            || record("add_reviewer").meta("requested_team_reviewers", json!(["acme/infra"]));
        let both = || users().meta("requested_team_reviewers", json!(["acme/infra"]));
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
                [requested_obs(-0.01, None, Some("infra")), obs(1.0, None, K::TeamMember { org: "acme".into(), team: "web".into(), login: "frank".into(), member: true, changed: false }), reviewed(3.0, human("frank"), "approved")] => (UNKNOWN, WEAK, "team_membership_unverified"), on team();
            "team request, joined before the review: counted":
                [requested_obs(-0.01, None, Some("infra")), changed(1.0, "frank", true), reviewed(3.0, human("frank"), "approved")] => (ACCEPTED, STRONG, "review_approved"), on team();
            "team request, joined after the review: not counted":
                [requested_obs(-0.01, None, Some("infra")), reviewed(3.0, human("frank"), "approved"), changed(5.0, "frank", true)] => (PENDING, WEAK, "awaiting_review"), on team();
            "team request, left before the review: not counted":
                [requested_obs(-0.01, None, Some("infra")), changed(1.0, "frank", false), reviewed(3.0, human("frank"), "approved")] => (PENDING, WEAK, "awaiting_review"), on team();
            "team request, left after the review: counted":
                [requested_obs(-0.01, None, Some("infra")), reviewed(3.0, human("frank"), "approved"), changed(5.0, "frank", false)] => (ACCEPTED, STRONG, "review_approved"), on team();
            "team request, a dated change outweighs a read":
                [requested_obs(-0.01, None, Some("infra")), member(0.0, "frank", true), reviewed(3.0, human("frank"), "approved"), changed(5.0, "frank", true)] => (PENDING, WEAK, "awaiting_review"), on team();
            "team request, a change after the window's time is not seen":
                [requested_obs(-0.01, None, Some("infra")), member(0.0, "frank", true), reviewed(3.0, human("frank"), "approved"), changed(30.0, "frank", true)] => (ACCEPTED, STRONG, "review_approved"), on team();
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
            "someone not requested commented": [asked(), obs(3.0, human("zed"), comment(9)).snap(open())] => (PENDING, WEAK, "awaiting_review");
            "no longer requested, nobody seen removing it (rule 4)":
                [asked(), obs(3.0, human("carol"), comment(5)).snap(requests(&[], &[]))] => (REJECTED, WEAK, "review_request_removed");
            "still requested in the latest state":
                [asked(), obs(3.0, human("carol"), comment(5)).snap(requests(&["alice"], &[]))] => (PENDING, WEAK, "awaiting_review");
            "the user's request gone, the team's still there":
                [asked(), obs(3.0, human("carol"), comment(5)).snap(requests(&[], &["infra"]))] => (PENDING, WEAK, "awaiting_review"), on both();
            "the team's request removed: a member's review after it does not count":
                [requested_obs(-0.01, None, Some("infra")), member(1.0, "frank", true), removed(2.0, human("carol"), None, Some("infra")), reviewed(3.0, human("frank"), "approved")] => (REJECTED, MEDIUM, "review_request_removed"), on team();
            "the team's request removed: a requested user's own request stands":
                [asked(), requested_obs(-0.01, None, Some("infra")), removed(2.0, human("carol"), None, Some("infra")), reviewed(3.0, human("alice"), "approved")] => (ACCEPTED, STRONG, "review_approved"), on both();
            + unobserved_case("nothing observed", users());
        );
    }

    proptest::proptest! {
        /// Roles at the time of the act (issue 44, item 4), over times: with
        /// membership changes delivered at any times (starting from either
        /// state, a read of the state at the end filed undated), a team
        /// member's review counts exactly when they were a member at the
        /// review, whenever it came.
        #[test]
        fn a_team_review_counts_only_while_a_member(
            initially in proptest::bool::ANY,
            flips in proptest::collection::vec(1u32..200, 0..6),
            review in 1u32..200,
        ) {
            let (changes, at_review) = role_flips(flips, review, initially);
            let rec = record("add_reviewer").meta("requested_team_reviewers", json!(["acme/infra"]));
            let mut o = vec![requested_obs(-0.01, None, Some("infra"))];
            o.extend(changes.iter().map(|(h, member)| changed(*h, "frank", *member)));
            if changes.last().map_or(initially, |(_, member)| *member) {
                // The read at the end answers 200 (a non-member's 404 files nothing).
                o.push(member(0.0, "frank", true));
            }
            o.push(reviewed(review as f64 / 10.0, human("frank"), "approved"));
            let e = eval(&rec, o, 24.0);
            let counted = e.signal == safe_outcomes_model::Signal::ReviewApproved;
            proptest::prop_assert_eq!(counted, at_review, "{:?}", e);
        }
    }

    proptest::proptest! {
        /// Roles at the time of the act, over times: a maintainer withdraws
        /// and renews the request of alice at any times; her review counts
        /// exactly when she was requested at it.
        #[test]
        fn a_requested_user_s_review_counts_only_while_requested(
            flips in proptest::collection::vec(1u32..200, 0..6),
            review in 1u32..200,
        ) {
            let (changes, at_review) = role_flips(flips, review, true);
            let rec = record("add_reviewer").meta("requested_reviewers", json!(["alice"]));
            let mut o = vec![requested_obs(-0.01, Some("alice"), None)];
            for (h, held) in changes {
                o.push(if held {
                    obs(h, human("carol"), K::ReviewRequested { reviewer: Some("alice".into()), team: None }).snap(open())
                } else {
                    removed(h, human("carol"), Some("alice"), None)
                });
            }
            o.push(reviewed(review as f64 / 10.0, human("alice"), "approved"));
            let e = eval(&rec, o, 24.0);
            let counted = e.signal == safe_outcomes_model::Signal::ReviewApproved;
            proptest::prop_assert_eq!(counted, at_review, "{:?}", e);
        }
    }
}
