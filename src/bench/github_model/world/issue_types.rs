//! An issue's type set, changed or cleared (`Fact::SetIssueType`): what
//! GitHub holds (the issue's `type`) and the timeline entry it writes
//! (`issue_type_added`, `issue_type_changed`, `issue_type_removed`).

use super::{Changed, Item, World};
use crate::bench::github_model::history::Actor;
use chrono::{DateTime, Utc};

impl World {
    /// Set issue `number`'s type to `to` (`None` clears it). Pull requests
    /// have no type, and setting the type an issue has already records and
    /// sends nothing (as a label already on).
    pub(super) fn set_issue_type(
        &mut self,
        number: u64,
        to: Option<&str>,
        who: &Actor,
        at: DateTime<Utc>,
    ) -> Changed {
        let Some(t) = self.threads.get_mut(&number).filter(|t| t.pr.is_none()) else {
            return Changed::Nothing;
        };
        if t.issue_type.as_deref() == to {
            return Changed::Nothing;
        }
        let from = std::mem::replace(&mut t.issue_type, to.map(str::to_string));
        let to = to.map(str::to_string);
        self.note(number, at, who, Item::IssueType { from, to });
        Changed::Thread(number)
    }
}
