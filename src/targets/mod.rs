//! Type-specific targets for manifest lines: what a safe output of a given type
//! affected when its URL and number alone do not say (a review thread's node
//! id, a workflow file, a release tag, an alert number, ...).
//!
//! Each family decides for its own types; `None` keeps the generic target.

mod metadata;
mod review;
mod workflow;

use serde_json::{Map, Value};

use crate::model::Target;

/// The target of a manifest line of `output_type`, refining the generic one
/// (`found`, from `url` / `target` / `number`).
pub fn refine(
    output_type: &str,
    line: &Map<String, Value>,
    repo: &str,
    found: Option<Target>,
) -> Option<Target> {
    review::target_for(output_type, line, repo, found.as_ref())
        .or_else(|| metadata::target_for(output_type, line, repo, found.as_ref()))
        .or_else(|| workflow::target_for(output_type, line, repo, found.as_ref()))
        .or(found)
}
