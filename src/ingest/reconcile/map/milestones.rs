//! A milestone read (`milestones/<number>`, asked only when an
//! `assign_milestone` item no longer holds its milestone): its `404` says
//! the milestone was deleted, as `milestone.deleted` does, but names
//! neither who deleted it nor when. The deletion is filed under the
//! milestone's key (which the output watches) at the read, by nobody
//! named: proven from the read on, never earlier (general rule 15).

use super::Mapper;
use crate::model::target::object_key;
use crate::model::{ObservationKind as K, TargetKind};

impl Mapper<'_> {
    /// Each `milestones/<m>` the read answered 404 or 410: a deletion.
    pub(super) fn deleted_milestones(&mut self) {
        let gone: Vec<String> = self
            .state
            .errors
            .iter()
            .filter(|(_, status)| matches!(status, 404 | 410))
            .filter_map(|(path, _)| path.strip_prefix("milestones/"))
            .filter(|m| m.parse::<u64>().is_ok())
            .map(str::to_string)
            .collect();
        if gone.is_empty() {
            return;
        }
        self.held_until_unknown();
        let at = self.state.read_at.unwrap_or(self.fallback);
        for m in gone {
            let key = object_key(&self.repo, TargetKind::Milestone, &m);
            self.push(
                format!("api:milestones/{m}:deleted"),
                at,
                key,
                None,
                K::MilestoneChanged {
                    milestone: String::new(),
                    action: "deleted".into(),
                },
            );
        }
    }

    /// A deletion leaves no trace on the item: its states rebuilt after its
    /// last `milestoned` (with no `demilestoned` since) show the milestone
    /// it has now (none), which says nothing of when it left. The state the
    /// `milestoned` entry itself left holds that milestone; every later one
    /// does not show the milestone (`milestone_absent`, general rule 2).
    fn held_until_unknown(&mut self) {
        let last = self
            .out
            .iter()
            .filter(|o| matches!(o.event, K::Milestoned { .. } | K::Demilestoned { .. }))
            .max_by_key(|o| o.at);
        let Some((set, title)) = last.and_then(|o| match &o.event {
            K::Milestoned { milestone } => Some((o.at, milestone.clone())),
            _ => None,
        }) else {
            return;
        };
        for o in &mut self.out {
            let Some(s) = o.snapshot.as_mut().filter(|s| s.milestone.is_none()) else {
                continue;
            };
            if o.at == set && matches!(o.event, K::Milestoned { .. }) {
                s.milestone = Some(title.clone());
            } else if o.at >= set {
                s.milestone_absent = true;
            }
        }
    }
}
