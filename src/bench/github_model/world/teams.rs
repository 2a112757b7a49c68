//! The owner's teams (issue 44, item 4): who is a member, and which PRs
//! requested a team's review. A team starts with `INITIAL` members;
//! `Fact::TeamMembership` adds or removes one (GitHub sends
//! `membership.added`/`removed`: `webhooks::teams`), and REST answers
//! `GET /orgs/{org}/teams/{slug}/memberships/{login}` from the state now
//! (`teams::membership`: 200 `active` for a member, 404 otherwise).
//! `Fact::RequestTeamReview` lists the team in the PR's `requested_teams`
//! and writes a `review_requested` entry naming it; a review by one of its
//! members satisfies the request (GitHub drops the team from
//! `requested_teams`, as it drops a requested user who reviews).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::{Changed, Item, World};
use crate::bench::github_model::history::Actor;

/// The team the agent's `add_reviewer` requests, and its members before
/// the history starts.
pub(crate) const TEAM: &str = "reviewers";
pub const INITIAL: &[(&str, &[&str])] = &[(TEAM, &["bob"])];

/// The teams' state: membership changes over `INITIAL`, and each PR's
/// pending team requests.
#[derive(Debug, Clone, Default)]
pub struct Teams {
    /// (team, login) → member, for the pairs a `TeamMembership` changed.
    changed: BTreeMap<(String, String), bool>,
    /// PR number → the teams whose review is requested and pending.
    pub requested: BTreeMap<u64, Vec<String>>,
}

impl Teams {
    /// Whether `login` is a member of `team` now.
    pub(crate) fn is_member(&self, team: &str, login: &str) -> bool {
        let key = (team.to_ascii_lowercase(), login.to_ascii_lowercase());
        self.changed.get(&key).copied().unwrap_or_else(|| {
            INITIAL.iter().any(|(t, members)| {
                t.eq_ignore_ascii_case(team)
                    && members.iter().any(|m| m.eq_ignore_ascii_case(login))
            })
        })
    }

    /// Whether team `slug` exists (the memberships endpoint answers 404 for
    /// another).
    pub(crate) fn exists(&self, slug: &str) -> bool {
        INITIAL.iter().any(|(t, _)| t.eq_ignore_ascii_case(slug))
    }

    /// PR `number`'s pending team requests.
    pub(crate) fn requested_of(&self, number: u64) -> &[String] {
        self.requested.get(&number).map_or(&[], Vec::as_slice)
    }
}

impl World {
    /// `login` added to or removed from `team`: nothing when it changes
    /// nothing (GitHub sends no delivery for a member added again).
    pub(super) fn team_membership(&mut self, team: &str, login: &str, member: bool) -> Changed {
        if !self.teams.exists(team) || self.teams.is_member(team, login) == member {
            return Changed::Nothing;
        }
        let key = (team.to_ascii_lowercase(), login.to_ascii_lowercase());
        self.teams.changed.insert(key, member);
        Changed::Team(team.to_string(), login.to_string())
    }

    /// A review of open PR `number` requested of `team` (a request already
    /// pending is not made again: GitHub records nothing).
    pub(super) fn request_team_review(
        &mut self,
        number: u64,
        team: &str,
        who: &Actor,
        at: DateTime<Utc>,
    ) -> Changed {
        let is_pr = self.threads.get(&number).is_some_and(|t| t.pr.is_some());
        if !is_pr || self.teams.requested_of(number).iter().any(|t| t == team) {
            return Changed::Nothing;
        }
        self.teams
            .requested
            .entry(number)
            .or_default()
            .push(team.to_string());
        self.note(number, at, who, Item::TeamReviewRequested(team.to_string()));
        Changed::Thread(number)
    }

    /// `who` reviewed PR `number`: the requests of the teams they are a
    /// member of are satisfied.
    pub(super) fn team_reviewed(&mut self, number: u64, who: &Actor) {
        let teams = self.teams.clone();
        if let Some(list) = self.teams.requested.get_mut(&number) {
            list.retain(|t| !teams.is_member(t, &who.login));
        }
    }
}
