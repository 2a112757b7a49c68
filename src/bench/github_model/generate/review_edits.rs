//! What people and bots do to the agent's review and review comments after
//! it wrote them: edit the review's body (`submit_pull_request_review`),
//! edit or delete the review comment (`create_pull_request_review_comment`,
//! `reply_to_pull_request_review_comment`). Each is chosen one time in
//! three, by any of the people (GitHub lets the author and those with
//! write access edit or delete a comment).

use super::Builder;
use crate::bench::github_model::history::Fact;

impl Builder<'_, '_> {
    /// Sometimes: someone edits the agent's review `id`.
    pub(super) fn review_edit_follow_ups(&mut self, id: u64) {
        if self.chance(3) {
            self.someday(Fact::EditReview {
                id,
                body: "agent review, edited".into(),
            });
        }
    }

    /// Sometimes: someone edits the agent's review comment `id`, and
    /// sometimes someone deletes it.
    pub(super) fn review_comment_edit_follow_ups(&mut self, id: u64) {
        if self.chance(3) {
            self.someday(Fact::EditReviewComment {
                id,
                body: "agent note, edited".into(),
            });
        }
        if self.chance(3) {
            self.someday(Fact::DeleteReviewComment { id });
        }
    }
}
