//! Projects v2 evaluators: update_project, create_project, create_project_status_update. (Not written yet.)

use super::Evaluator;

/// The evaluator for a type of this family, if any.
pub(super) fn evaluator_for(_output_type: &str) -> Option<Evaluator> {
    None
}
