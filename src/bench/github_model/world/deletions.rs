//! An issue deleted (`Fact::DeleteIssue`): GitHub sends `issues.deleted`
//! with the issue as it was, and from then on answers its REST paths
//! (`issues/{n}`, its timeline, its comments) `410 Gone`
//! (`@octokit/openapi`: `GET /repos/{owner}/{repo}/issues/{issue_number}`
//! documents 410). Only issues: GitHub cannot delete a pull request.

use super::{Changed, World};
use chrono::{DateTime, Utc};

impl World {
    /// The delivery is rendered from the issue as it was; `forget_issue`
    /// (from `forget_deleted`) removes it after.
    pub(super) fn delete_issue(&mut self, number: u64, at: DateTime<Utc>) -> Changed {
        match self.threads.get_mut(&number) {
            Some(t) if t.pr.is_none() => {
                t.updated_at = at;
                Changed::Thread(number)
            }
            _ => Changed::Nothing,
        }
    }

    /// The issue and its comments leave; its number answers 410 from now.
    pub(super) fn forget_issue(&mut self, number: u64) {
        let Some(t) = self.threads.get(&number).filter(|t| t.pr.is_none()) else {
            return;
        };
        for id in t.comments.clone() {
            self.comments.remove(&id);
        }
        self.threads.remove(&number);
        self.deleted.insert(number);
    }

    /// True when `number` names an issue deleted here.
    pub(crate) fn is_deleted(&self, number: u64) -> bool {
        self.deleted.contains(&number)
    }
}
