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
pub(crate) const ATTRIBUTED_TYPES: [&str; 2] =
    ["create_pull_request", "push_to_pull_request_branch"];

/// The two compares that attribute one output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Landing {
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
pub(crate) fn base_ref_key(
    execution: &ExecutionRecord,
    observations: &[Observation],
) -> Option<String> {
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
pub(crate) fn plan(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ItemSnapshot;
    use chrono::TimeZone;
    use serde_json::json;

    fn record(output_type: &str, extra: Value) -> ExecutionRecord {
        let mut v = json!({
            "id": "o/r:1:0", "output_type": output_type, "repo": "o/r", "run_id": 1,
            "target": {"repo": "o/r", "kind": "pull_request", "number": 5},
            "executed_at": "2026-11-01T00:00:00Z",
        });
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        serde_json::from_value(v).unwrap()
    }

    fn snapshot(id: &str, head: &str, merge: Option<&str>) -> Observation {
        Observation {
            id: id.into(),
            at: Utc.with_ymd_and_hms(2026, 11, 2, 0, 0, 0).unwrap(),
            target: "o/r#5".into(),
            actor: None,
            event: ObservationKind::Closed,
            snapshot: Some(ItemSnapshot {
                merged: merge.is_some(),
                merge_commit_sha: merge.map(str::to_string),
                base: Some("main".into()),
                head_sha: Some(head.into()),
                ..Default::default()
            }),
        }
    }

    fn push(before: &str, after: &str) -> Observation {
        Observation {
            id: "p/0".into(),
            at: Utc.with_ymd_and_hms(2026, 11, 2, 0, 0, 0).unwrap(),
            target: "o/r#ref:main".into(),
            actor: None,
            event: ObservationKind::Pushed {
                git_ref: "main".into(),
                before: before.into(),
                after: after.into(),
                forced: false,
                commits: Vec::new(),
            },
            snapshot: None,
        }
    }

    #[test]
    fn a_merged_pr_compares_from_the_landing_push() {
        let pr = record("create_pull_request", json!({}));
        let obs = [
            snapshot("a", "a1a1a1a1", None),
            snapshot("b", "b2b2b2b2", Some("m0m0m0m0")),
        ];
        let l = plan(&pr, &obs, &[push("b0b0b0b0", "m0m0m0m0")]).unwrap();
        // The agent's head is the PR head as first seen, not after others pushed.
        assert_eq!(
            (l.agent_base.as_str(), l.agent_head.as_str()),
            ("b0b0b0b0", "a1a1a1a1")
        );
        assert_eq!(
            (l.before.as_str(), l.after.as_str(), l.branch.as_str()),
            ("b0b0b0b0", "m0m0m0m0", "main")
        );
        assert_eq!(base_ref_key(&pr, &obs).as_deref(), Some("o/r#ref:main"));
    }

    #[test]
    fn a_push_output_compares_its_own_commit_from_the_head_it_pushed_onto() {
        let push_output = record(
            "push_to_pull_request_branch",
            json!({"metadata": {"commit_sha": "c2c2c2c2"}, "before_state": {"head_sha": "c1c1c1c1"}}),
        );
        let obs = [snapshot("b", "c2c2c2c2", Some("m0m0m0m0"))];
        let l = plan(&push_output, &obs, &[push("b0b0b0b0", "m0m0m0m0")]).unwrap();
        assert_eq!(
            (l.agent_base.as_str(), l.agent_head.as_str()),
            ("c1c1c1c1", "c2c2c2c2")
        );
    }

    #[test]
    fn nothing_to_compare_until_it_merged_and_the_push_is_seen() {
        let pr = record("create_pull_request", json!({}));
        let open = [snapshot("a", "a1a1a1a1", None)];
        let merged = [snapshot("b", "a1a1a1a1", Some("m0m0m0m0"))];
        assert_eq!(plan(&pr, &open, &[push("b0b0b0b0", "m0m0m0m0")]), None);
        assert_eq!(plan(&pr, &merged, &[push("b0b0b0b0", "other000")]), None);
        assert_eq!(
            plan(
                &record("add_labels", json!({})),
                &merged,
                &[push("b0b0b0b0", "m0m0m0m0")]
            ),
            None
        );
    }
}
