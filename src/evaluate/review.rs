//! Review lifecycle evaluators: create_pull_request_review_comment, submit_pull_request_review, reply_to_pull_request_review_comment, resolve_pull_request_review_thread, dismiss_pull_request_review, add_reviewer, mark_pull_request_as_ready_for_review, merge_pull_request. (Not written yet.)

use super::Evaluator;

/// The evaluator for a type of this family, if any.
pub(super) fn evaluator_for(_output_type: &str) -> Option<Evaluator> {
    None
}
