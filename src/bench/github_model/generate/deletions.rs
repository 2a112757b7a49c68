//! Sometimes an issue the agent wrote or acted on is deleted, by someone
//! GitHub lets delete it (a repository admin: a maintainer, or a bot with
//! admin rights), at one of the windows' edges. Drawn aside (`aside`).

use super::Builder;
use crate::bench::github_model::history::{Actor, Fact};

impl Builder<'_, '_> {
    /// One issue in eight (none when the choices ran out): issue `n`
    /// deleted by alice, bob or dependabot.
    pub(super) fn delete_follow_up(&mut self, n: u64) {
        let salt = n.wrapping_mul(31).wrapping_add(7);
        let admins = [
            Actor::human("alice"),
            Actor::human("bob"),
            Actor::bot("dependabot[bot]"),
        ];
        self.aside_by(salt, 8, &admins, Fact::DeleteIssue { number: n });
    }
}
