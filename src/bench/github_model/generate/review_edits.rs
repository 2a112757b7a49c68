//! What people and bots do to the agent's review and review comments after
//! it wrote them: edit the review's body (`submit_pull_request_review`),
//! edit or delete the review comment (`create_pull_request_review_comment`,
//! `reply_to_pull_request_review_comment`). Each is chosen one time in
//! three, by any of the people (GitHub lets the author and those with
//! write access edit or delete a comment). Drawn aside (`aside`).

use super::Builder;
use crate::bench::github_model::history::Fact;

impl Builder<'_, '_> {
    /// Sometimes: someone edits the agent's review `id`.
    pub(super) fn review_edit_follow_ups(&mut self, id: u64) {
        let body = "agent review, edited".to_string();
        self.aside_one_in_three(id, Fact::EditReview { id, body });
    }

    /// Sometimes: someone edits the agent's review comment `id`, and
    /// sometimes someone deletes it.
    pub(super) fn review_comment_edit_follow_ups(&mut self, id: u64) {
        let body = "agent note, edited".to_string();
        self.aside_one_in_three(id, Fact::EditReviewComment { id, body });
        self.aside_one_in_three(id ^ 0xdead, Fact::DeleteReviewComment { id });
    }

    /// `fact` one time in three, by one of the people at a window's edge.
    fn aside_one_in_three(&mut self, salt: u64, fact: Fact) {
        if self.aside(salt, 3) == 2 {
            let at = self.later_aside(salt);
            let who = self.who_aside(salt);
            self.h.push(at, &who, fact);
        }
    }
}
