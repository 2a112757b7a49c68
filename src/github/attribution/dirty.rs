//! Which attributed paths changed after the code landed, from the stored
//! pushes to the branch it landed on: no API call at all. A push that
//! modifies or adds an attributed path makes it dirty (re-read it at the
//! checkpoint); one that removes it, with no other path added in the same
//! commit, removes it (survival 0; with paths added it may be a rename,
//! and survival is unknown). A force push, or a commit whose path lists are
//! unknown (GitHub leaves them empty for huge commits), makes every path
//! dirty. Pure.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::record::LineAttribution;
use crate::model::{Observation, ObservationKind};

/// What became of one attributed path by the checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PathState {
    Untouched,
    Dirty,
    Removed,
    MaybeRenamed,
}

/// The branch as of a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BranchAt {
    /// The branch head at the checkpoint (the last push's `after`).
    pub sha: String,
    pub paths: BTreeMap<String, PathState>,
}

const DELETED: &str = "0000000000000000000000000000000000000000";

/// The state of each attributed path of `a` at `until`, from `pushes` (the
/// observations filed under the branch's ref key).
pub(crate) fn branch_at(
    a: &LineAttribution,
    pushes: &[Observation],
    until: DateTime<Utc>,
) -> BranchAt {
    let mut paths: BTreeMap<String, PathState> = a
        .files
        .iter()
        .map(|f| (f.path.clone(), PathState::Untouched))
        .collect();
    let mut sha = a.landed_commit.clone();
    let mut later: Vec<&Observation> = pushes
        .iter()
        .filter(|o| o.at >= a.landed_at && o.at <= until)
        .collect();
    later.sort_by(|x, y| (x.at, &x.id).cmp(&(y.at, &y.id)));
    for o in later {
        let ObservationKind::Pushed {
            after,
            forced,
            commits,
            ..
        } = &o.event
        else {
            continue;
        };
        if *after == a.landed_commit || after == DELETED {
            continue;
        }
        sha = after.clone();
        if *forced {
            paths.values_mut().for_each(|s| *s = PathState::Dirty);
            continue;
        }
        for c in commits {
            if c.added.is_empty() && c.modified.is_empty() && c.removed.is_empty() {
                paths.values_mut().for_each(|s| {
                    if *s == PathState::Untouched {
                        *s = PathState::Dirty
                    }
                });
                continue;
            }
            for p in c.added.iter().chain(&c.modified) {
                if let Some(s) = paths.get_mut(p) {
                    *s = PathState::Dirty;
                }
            }
            for p in &c.removed {
                if let Some(s) = paths.get_mut(p) {
                    *s = match c.added.is_empty() {
                        true => PathState::Removed,
                        false => PathState::MaybeRenamed,
                    };
                }
            }
        }
    }
    BranchAt { sha, paths }
}
