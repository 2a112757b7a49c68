//! Sometimes an issue the agent wrote or acted on is deleted, by someone
//! GitHub lets delete it (a repository admin: a maintainer, or a bot with
//! admin rights), at one of the windows' edges.

use super::Builder;
use crate::bench::github_model::history::{Actor, Fact};

impl Builder<'_, '_> {
    /// One time in eight: issue `n` deleted by alice, bob or dependabot.
    pub(super) fn delete_follow_up(&mut self, n: u64) {
        if !self.chance(8) {
            return;
        }
        let at = self.later();
        let who = [
            Actor::human("alice"),
            Actor::human("bob"),
            Actor::bot("dependabot[bot]"),
        ][self.c.pick(3)]
        .clone();
        self.h.push(at, &who, Fact::DeleteIssue { number: n });
    }
}
