//! A pull request's base branch changed (`Fact::ChangeBase`): what GitHub
//! holds (the PR's `base.ref`, `main` until changed: `World::base`) and the
//! timeline entry it writes (`base_ref_changed`, which names who and when,
//! not the branches). The delivery is `pull_request.edited` with
//! `changes.base.ref.from` and `changes.base.sha.from`.

use super::{Changed, Item, World};
use crate::bench::github_model::history::Actor;
use chrono::{DateTime, Utc};

/// The base every PR starts on.
pub(crate) const DEFAULT_BASE: &str = "main";

impl World {
    /// PR `number`'s base branch now.
    pub fn base(&self, number: u64) -> &str {
        self.bases.get(&number).map_or(DEFAULT_BASE, String::as_str)
    }

    /// Change open PR `number`'s base to `base` (the same base changes
    /// nothing; a closed PR's base cannot be changed).
    pub(super) fn change_base(
        &mut self,
        number: u64,
        base: &str,
        who: &Actor,
        at: DateTime<Utc>,
    ) -> Changed {
        let open_pr = self
            .threads
            .get(&number)
            .is_some_and(|t| t.pr.is_some() && t.closed.is_none());
        if !open_pr || self.base(number) == base {
            return Changed::Nothing;
        }
        let from = self.base(number).to_string();
        self.bases.insert(number, base.to_string());
        let to = base.to_string();
        self.note(number, at, who, Item::BaseRefChanged { from, to });
        Changed::Thread(number)
    }
}
