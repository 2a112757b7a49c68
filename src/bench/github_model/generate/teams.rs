//! `add_reviewer` naming the owner's team (issue 44, item 4): the agent
//! requests `world::teams::TEAM` (or, as before, alice), and people join
//! or leave the team around the reviews its members and others write, so
//! that a review comes before or after its reviewer's membership changed.
//! Team changes are made by a maintainer (alice), by another bot (an
//! organization's team sync), or by a member leaving on their own. Drawn
//! aside (`aside`), so the rest of the history is as the other choices make
//! it; zero choices: alice is requested, as before.

use super::Builder;
use crate::bench::github_model::history::{Actor, Fact, ReviewState};
use crate::bench::github_model::world::teams::TEAM;
use crate::model::OutputType;
use serde_json::json;

/// Who reviews for, or joins, the team: bob starts in it
/// (`world::teams::INITIAL`), carol (the PR's author) and alice do not.
const PEOPLE: [&str; 3] = ["bob", "carol", "alice"];

impl Builder<'_, '_> {
    /// The agent's `add_reviewer`: alice, or one time in two the team.
    pub(super) fn add_reviewer(&mut self, t: &OutputType, n: u64) {
        if self.aside(n ^ 0x7ea0, 2) == 0 {
            let request = Fact::RequestReview {
                number: n,
                reviewer: "alice".into(),
            };
            let fields = json!({"number": n, "metadata": {"requested_reviewers": ["alice"]}});
            self.on_pr(t, n, request, fields);
            return;
        }
        self.human_pr(n, false);
        self.agent(Fact::RequestTeamReview {
            number: n,
            team: TEAM.into(),
        });
        let fields = json!({"number": n, "metadata": {"requested_team_reviewers": [TEAM]}});
        self.line(t, fields);
        self.team_follow_ups(n);
        self.pr_follow_ups(n, false);
    }

    /// 1–4 of: someone joins or leaves the team, a person reviews, a
    /// person comments on the PR.
    fn team_follow_ups(&mut self, n: u64) {
        for i in 0..=self.aside(n ^ 0x7ea1, 4) {
            let salt = n ^ 0x7e00 ^ (i << 20);
            let at = self.later_aside(salt);
            let login = PEOPLE[self.aside(salt ^ 1, PEOPLE.len() as u64) as usize];
            let (who, fact) = match self.aside(salt ^ 2, 3) {
                0 => {
                    let who = match self.aside(salt ^ 3, 3) {
                        0 => Actor::human("alice"),
                        1 => Actor::bot("team-sync[bot]"),
                        // A member leaves on their own.
                        _ => Actor::human(login),
                    };
                    let member = self.aside(salt ^ 4, 2) == 1 && who.login != login;
                    let fact = Fact::TeamMembership {
                        team: TEAM.into(),
                        login: login.into(),
                        member,
                    };
                    (who, fact)
                }
                1 => {
                    let state = [
                        ReviewState::Approved,
                        ReviewState::ChangesRequested,
                        ReviewState::Commented,
                    ][self.aside(salt ^ 5, 3) as usize];
                    let (_, fact) = self.review(n, state, "team review");
                    (Actor::human(login), fact)
                }
                _ => {
                    let fact = Fact::Comment {
                        number: n,
                        id: self.id(),
                        body: "for the team".into(),
                    };
                    (Actor::human(login), fact)
                }
            };
            self.h.push(at, &who, fact);
        }
    }
}
