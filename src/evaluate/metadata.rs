//! Issue metadata evaluators: assign_milestone, set_issue_type, set_issue_field, replace_label, link_sub_issue. (Not written yet.)

use super::Evaluator;

/// The evaluator for a type of this family, if any.
pub(super) fn evaluator_for(_output_type: &str) -> Option<Evaluator> {
    None
}
