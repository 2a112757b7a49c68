//! Workflows and checks evaluators: dispatch_workflow, call_workflow, dispatch_repository, create_check_run. (Not written yet.)

use super::Evaluator;

/// The evaluator for a type of this family, if any.
pub(super) fn evaluator_for(_output_type: &str) -> Option<Evaluator> {
    None
}
