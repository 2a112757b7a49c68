//! Releases and artifacts evaluators: update_release, upload_asset, upload_artifact. (Not written yet.)

use super::Evaluator;

/// The evaluator for a type of this family, if any.
pub(super) fn evaluator_for(_output_type: &str) -> Option<Evaluator> {
    None
}
