//! A review's or review comment's body edited, a review comment deleted:
//! what GitHub holds after (`pull_request_review.edited`,
//! `pull_request_review_comment.edited` / `.deleted`). GitHub writes no
//! timeline entry for any of them; a deleted review comment leaves
//! `pulls/N/comments` and its review thread (after its delivery was
//! rendered: `World::forget_deleted`).

use super::{Changed, World};
use chrono::{DateTime, Utc};

impl World {
    pub(super) fn edit_review(&mut self, id: u64, body: &str, at: DateTime<Utc>) -> Changed {
        let Some(r) = self.reviews.get_mut(&id) else {
            return Changed::Nothing;
        };
        if r.body == body {
            return Changed::Nothing;
        }
        r.body = body.to_string();
        let number = r.number;
        if let Some(t) = self.threads.get_mut(&number) {
            t.updated_at = at;
        }
        Changed::Review(id)
    }

    pub(super) fn edit_review_comment(
        &mut self,
        id: u64,
        body: &str,
        at: DateTime<Utc>,
    ) -> Changed {
        let Some(c) = self.review_comments.get_mut(&id) else {
            return Changed::Nothing;
        };
        if c.body == body {
            return Changed::Nothing;
        }
        c.body = body.to_string();
        c.updated_at = at;
        let number = c.number;
        if let Some(t) = self.threads.get_mut(&number) {
            t.updated_at = at;
        }
        Changed::ReviewComment(id)
    }

    /// The delivery tells of the comment as it was; `forget_deleted`
    /// removes it after.
    pub(super) fn delete_review_comment(&mut self, id: u64, at: DateTime<Utc>) -> Changed {
        let Some(number) = self.review_comments.get(&id).map(|c| c.number) else {
            return Changed::Nothing;
        };
        if let Some(t) = self.threads.get_mut(&number) {
            t.updated_at = at;
        }
        Changed::ReviewComment(id)
    }
}
