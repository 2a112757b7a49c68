//! When an agent's code landed, from stored observations alone: the merged
//! PR's merge commit, and the push to the base branch whose `after` is that
//! commit (merge commit, squash commit, or the last rebased commit: GitHub's
//! `merge_commit_sha` is the commit the base branch was updated to in all
//! three). Pure: what to compare, or nothing yet.

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::model::target::ref_key;
use crate::model::{ExecutionRecord, Observation, ObservationKind};

/// Output types whose code can land.
pub const ATTRIBUTED_TYPES: [&str; 2] = ["create_pull_request", "push_to_pull_request_branch"];

/// The two compares that attribute one output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Landing {
    pub output_id: String,
    pub repo: String,
    /// The branch the code landed on.
    pub branch: String,
    /// The agent's changes: `agent_base...agent_head`.
    pub agent_base: String,
    pub agent_head: String,
    /// What landed: `before...after` of the landing push.
    pub before: String,
    pub after: String,
    pub landed_at: DateTime<Utc>,
}

/// The key the base branch's pushes are filed under, once the PR is known
/// merged: the caller loads those observations for `plan`.
pub fn base_ref_key(execution: &ExecutionRecord, observations: &[Observation]) -> Option<String> {
    let (_, base) = merged(observations)?;
    Some(ref_key(&execution.repo, &base))
}

/// The merge commit and base branch of the latest merged snapshot.
fn merged(observations: &[Observation]) -> Option<(String, String)> {
    observations.iter().rev().find_map(|o| {
        let s = o.snapshot.as_ref().filter(|s| s.merged)?;
        Some((s.merge_commit_sha.clone()?, s.base.clone()?))
    })
}

/// The agent's own head commit: the pushed commit of a push output, else the
/// PR head as first seen (before anyone else could push to it).
fn agent_head(execution: &ExecutionRecord, observations: &[Observation]) -> Option<String> {
    let recorded = |map: &serde_json::Map<String, Value>, key: &str| {
        map.get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    if execution.output_type == "push_to_pull_request_branch" {
        return recorded(&execution.metadata, "commit_sha")
            .or_else(|| recorded(&execution.after_state, "head_sha"));
    }
    recorded(&execution.after_state, "head_sha").or_else(|| {
        observations
            .iter()
            .find_map(|o| o.snapshot.as_ref()?.head_sha.clone())
    })
}

/// What to compare for `execution`, given its observations and the pushes
/// to its base branch; `None` until it merged and the landing push is known.
pub fn plan(
    execution: &ExecutionRecord,
    observations: &[Observation],
    base_pushes: &[Observation],
) -> Option<Landing> {
    if !ATTRIBUTED_TYPES.contains(&execution.output_type.as_str()) {
        return None;
    }
    let (merge_commit, branch) = merged(observations)?;
    let head = agent_head(execution, observations)?;
    let (before, after, at) = base_pushes.iter().find_map(|o| match &o.event {
        ObservationKind::Pushed { before, after, .. } if same_sha(after, &merge_commit) => {
            Some((before.clone(), after.clone(), o.at))
        }
        _ => None,
    })?;
    // A push output's diff starts at the PR head it pushed onto.
    let agent_base = match execution.output_type.as_str() {
        "push_to_pull_request_branch" => execution
            .before_state
            .get("head_sha")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map_or_else(|| before.clone(), str::to_string),
        _ => before.clone(),
    };
    Some(Landing {
        output_id: execution.id.clone(),
        repo: execution.repo.clone(),
        branch,
        agent_base,
        agent_head: head,
        before,
        after,
        landed_at: at,
    })
}

fn same_sha(a: &str, b: &str) -> bool {
    let n = a.len().min(b.len());
    n >= 7 && a[..n].eq_ignore_ascii_case(&b[..n])
}
