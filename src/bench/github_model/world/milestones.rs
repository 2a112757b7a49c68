//! Milestones (`Fact::Milestone`, `Fact::DeleteMilestone`). The model has
//! no milestone lifecycle of its own: a milestone exists once an item is
//! set in it. Deleting one takes it off every issue and PR it held, with
//! no delivery of theirs, no timeline entry and their `updated_at` left as
//! it was (GitHub: "issues and pull requests are not affected"; its
//! descriptions document nothing more), and its REST path answers 404
//! from then on. A deleted number is never set again (GitHub answers 422
//! for a milestone that does not exist).

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};

use super::{Changed, World};

/// The milestones known by number (their titles and when they were first
/// set on an item), and those deleted.
#[derive(Debug, Clone, Default)]
pub struct Milestones {
    known: BTreeMap<u64, (String, DateTime<Utc>)>,
    deleted: BTreeSet<u64>,
}

impl Milestones {
    /// Record milestone `number` as set on an item; false when it was
    /// deleted (nothing can be set in it).
    pub fn set(&mut self, number: u64, title: &str, at: DateTime<Utc>) -> bool {
        if self.deleted.contains(&number) {
            return false;
        }
        let first = self.known.get(&number).map_or(at, |(_, t)| *t);
        self.known.insert(number, (title.to_string(), first));
        true
    }

    /// A milestone that exists now (`milestones/{n}`'s 200): its title and
    /// when it was first set.
    pub fn get(&self, number: u64) -> Option<(&str, DateTime<Utc>)> {
        self.known.get(&number).map(|(t, at)| (t.as_str(), *at))
    }
}

impl World {
    /// Milestone `number` deleted: off every item, gone from the REST paths.
    pub(super) fn delete_milestone(&mut self, number: u64) -> Changed {
        let Some((title, _)) = self.milestones.known.remove(&number) else {
            return Changed::Nothing;
        };
        self.milestones.deleted.insert(number);
        for t in self.threads.values_mut() {
            if t.milestone.as_ref().is_some_and(|(n, _)| *n == number) {
                t.milestone = None;
            }
        }
        Changed::Milestone(number, title)
    }
}
