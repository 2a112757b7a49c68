//! Code scanning evaluators: autofix_code_scanning_alert, create_code_scanning_alert. (Not written yet.)

use super::Evaluator;

/// The evaluator for a type of this family, if any.
pub(super) fn evaluator_for(_output_type: &str) -> Option<Evaluator> {
    None
}
