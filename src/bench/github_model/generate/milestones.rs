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
        let writers = [
            Actor::human("alice"),
            Actor::human("bob"),
            Actor::bot("dependabot[bot]"),
            Actor::actions(),
        ];
        self.aside_by(salt, 6, &writers, Fact::DeleteMilestone { milestone });
    }
}
