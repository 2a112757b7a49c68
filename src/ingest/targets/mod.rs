//! Type-specific targets for manifest lines: what a safe output of a given type
//! affected when its URL and number alone do not say (a review thread's node
//! id, a workflow file, a release tag, an alert number, ...).
//!
//! Each family decides for its own types; `None` keeps the generic target.

mod metadata;
mod review;
mod workflow;

use serde_json::{Map, Value};

use crate::model::OutputType;
use crate::model::Target;

/// One manifest line being refined, as every family reads it: its type, its
/// fields, its repository and the generic target found for it.
pub(super) struct Line<'a> {
    pub output_type: OutputType,
    pub fields: &'a Map<String, Value>,
    pub repo: &'a str,
    pub found: Option<&'a Target>,
}

#[cfg(test)]
impl Line<'_> {
    /// A line of `output_type` in `o/r`.
    fn new<'a>(
        output_type: &str,
        fields: &'a Map<String, Value>,
        found: Option<&'a Target>,
    ) -> Line<'a> {
        Line {
            output_type: OutputType::from(output_type),
            fields,
            repo: "o/r",
            found,
        }
    }
}

/// The target of a manifest line of `output_type`, refining the generic one
/// (`found`, from `url` / `target` / `number`).
pub(crate) fn refine(
    output_type: &str,
    line: &Map<String, Value>,
    repo: &str,
    found: Option<Target>,
) -> Option<Target> {
    let l = Line {
        output_type: OutputType::from(output_type),
        fields: line,
        repo,
        found: found.as_ref(),
    };
    review::target_for(&l)
        .or_else(|| metadata::target_for(&l))
        .or_else(|| workflow::target_for(&l))
        .or(found)
}
