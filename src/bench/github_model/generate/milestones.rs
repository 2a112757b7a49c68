//! Sometimes the milestone an `assign_milestone` output set is deleted
//! (`Fact::DeleteMilestone`), at one of the windows' edges, by someone
//! GitHub lets delete it (write access: a maintainer, another bot, the
//! workflow's own identity). Drawn aside (`aside`).

use super::Builder;
use crate::bench::github_model::history::{Actor, Fact};

impl Builder<'_, '_> {
    /// One output in six (none when the choices ran out): `milestone`
    /// deleted by alice, bob, dependabot or the agent.
    pub(super) fn milestone_deletion(&mut self, milestone: u64) {
        let salt = milestone.wrapping_mul(0x6d).wrapping_add(0x51);
        if self.aside(salt, 6) != 5 {
            return;
        }
        let at = self.later_aside(salt);
        let who = [
            Actor::human("alice"),
            Actor::human("bob"),
            Actor::bot("dependabot[bot]"),
            Actor::actions(),
        ][self.aside(salt ^ 1, 4) as usize]
            .clone();
        self.h.push(at, &who, Fact::DeleteMilestone { milestone });
    }
}
