//! Targets for this family's types. (Not written yet.)

use serde_json::{Map, Value};

use crate::model::Target;

pub(super) fn target_for(
    _output_type: &str,
    _line: &Map<String, Value>,
    _repo: &str,
    _found: Option<&Target>,
) -> Option<Target> {
    None
}
