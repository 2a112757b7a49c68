//! The execution record: what a safe output did, as the gh-aw manifest line (or
//! a webhook carrying a gh-aw marker) told us at execution time.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::target::{commit_key, object_key, team_key, Target, TargetKind};

/// Where we learned of an output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Sources {
    #[serde(default)]
    pub manifest: bool,
    #[serde(default)]
    pub webhook: bool,
}

/// One executed safe-output item. Fields that are empty or absent are left
/// out when it is stored or shown: most lines carry few of them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ExecutionRecord {
    /// `{repo}:{run_id}:{index}` (see `output_id`).
    pub id: String,
    /// The gh-aw `type`, e.g. `create_pull_request`; unknown strings are kept.
    /// Named `safe_output_type` as in the outcome record (one vocabulary);
    /// records stored as JSON before were written `output_type`, read too.
    #[serde(rename = "safe_output_type", alias = "output_type")]
    pub output_type: String,
    pub repo: String,
    pub run_id: Option<u64>,
    /// Position of the line in its manifest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow: Option<String>,
    /// The object it affected; `None` when the line names none.
    pub target: Option<Target>,
    /// When it executed (manifest `timestamp`, or the creating event's time).
    pub executed_at: DateTime<Utc>,
    /// The login the workflow wrote as, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<String>,
    /// `provider` from the Oct 2026 shape; `None` means GitHub.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temporary_id: Option<String>,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    #[schema(value_type = Object)]
    pub before_state: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    #[schema(value_type = Object)]
    pub after_state: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    #[schema(value_type = Object)]
    pub metadata: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels_added: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels_before: Option<Vec<String>>,
    /// The remaining fields of the manifest line (tool arguments and anything new).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    #[schema(value_type = Object)]
    pub extra: Map<String, Value>,
    #[serde(default)]
    pub sources: Sources,
}

impl ExecutionRecord {
    /// The canonical output id.
    pub fn output_id(repo: &str, run_id: Option<u64>, index: &str) -> String {
        match run_id {
            Some(run) => format!("{repo}:{run}:{index}"),
            None => format!("{repo}:norun:{index}"),
        }
    }

    /// The record of a renamed repository's output filed under the name
    /// its outputs are keyed by: `from`'s repository, target and output id
    /// become `to`'s (the target's URL stays GitHub's link). Names compare
    /// ignoring ASCII case; what names another repository is left alone.
    pub fn rename_repo(&mut self, from: &str, to: &str) {
        if self.repo.eq_ignore_ascii_case(from) {
            self.repo = to.to_string();
        }
        if let Some(t) = self
            .target
            .as_mut()
            .filter(|t| t.repo.eq_ignore_ascii_case(from))
        {
            t.repo = to.to_string();
        }
        let prefix = self.id.get(..from.len());
        if prefix.is_some_and(|p| p.eq_ignore_ascii_case(from))
            && self.id[from.len()..].starts_with(':')
        {
            self.id = format!("{to}{}", &self.id[from.len()..]);
        }
    }

    /// A string field from the line's extra fields or metadata.
    pub fn field_str(&self, name: &str) -> Option<&str> {
        self.extra
            .get(name)
            .or_else(|| self.metadata.get(name))
            .and_then(Value::as_str)
    }

    /// A list of strings from extra fields or metadata (`["a","b"]` or `"a,b"`).
    pub fn field_list(&self, name: &str) -> Vec<String> {
        match self.extra.get(name).or_else(|| self.metadata.get(name)) {
            Some(Value::Array(items)) => label_names(items),
            Some(Value::String(s)) => s
                .split(',')
                .map(|p| p.trim().to_string())
                .filter(|p| !p.is_empty())
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Every key whose observations bear on this output: its target's watch
    /// keys plus `extra_watch_keys`. The worker indexes and loads by these.
    pub fn watch_keys(&self) -> Vec<String> {
        let mut keys = self
            .target
            .as_ref()
            .map(Target::watch_keys)
            .unwrap_or_default();
        for key in self.extra_watch_keys() {
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        keys
    }

    /// Keys an output watches beyond its target, for facts filed elsewhere:
    /// - `push_to_pull_request_branch`: the pushed commit (its reverts and
    ///   check runs are filed under the commit);
    /// - `create_check_run`: the commit the check run is on (its target is
    ///   the check run, named by the commit sha);
    /// - `add_reviewer`: each requested team (its membership changes);
    /// - `assign_milestone`: the milestone (its deletion, `milestone.deleted`,
    ///   takes it off every item it held);
    /// - `call_workflow` without `metadata.run_id`: the calling run itself,
    ///   since a `workflow_call` worker runs as jobs of the caller's run.
    pub fn extra_watch_keys(&self) -> Vec<String> {
        let repo = self
            .target
            .as_ref()
            .map_or(self.repo.as_str(), |t| t.repo.as_str());
        let commit = |sha: Option<&str>| {
            sha.filter(|s| !s.is_empty())
                .map(|s| commit_key(repo, s))
                .into_iter()
                .collect()
        };
        match self.output_type.as_str() {
            "push_to_pull_request_branch" => commit(
                self.metadata
                    .get("commit_sha")
                    .or_else(|| self.after_state.get("head_sha"))
                    .and_then(Value::as_str),
            ),
            "create_check_run" => commit(
                self.target
                    .as_ref()
                    .filter(|t| t.kind == TargetKind::CheckRun)
                    .and_then(|t| t.name.as_deref()),
            ),
            "add_reviewer" => self.requested_team_keys(repo),
            "assign_milestone" => self
                .milestone_number()
                .map(|n| object_key(repo, TargetKind::Milestone, &n.to_string()))
                .into_iter()
                .collect(),
            "call_workflow" if !self.metadata.contains_key("run_id") => self
                .run_id
                .map(|run| object_key(repo, TargetKind::WorkflowRun, &run.to_string()))
                .into_iter()
                .collect(),
            _ => Vec::new(),
        }
    }

    /// `assign_milestone`: the milestone's number (the line's
    /// `milestone_number`, else its metadata's, else its after-state's), a
    /// GitHub id (`github_id`): the one reading of it, for the watch key,
    /// the API's read and the evaluator alike.
    pub fn milestone_number(&self) -> Option<u64> {
        self.extra
            .get("milestone_number")
            .or_else(|| self.metadata.get("milestone_number"))
            .or_else(|| self.after_state.get("milestone_number"))
            .and_then(github_id)
    }

    /// `add_reviewer`: the key of each requested team (`org/slug` or a slug
    /// of the repository's owner), where its membership changes are filed.
    fn requested_team_keys(&self, repo: &str) -> Vec<String> {
        let teams = ["requested_team_reviewers", "team_reviewers"]
            .iter()
            .map(|n| self.field_list(n))
            .find(|l| !l.is_empty())
            .unwrap_or_default();
        let owner = repo.split('/').next().unwrap_or_default();
        teams
            .iter()
            .map(|t| t.trim().trim_start_matches('@'))
            .map(|t| t.rsplit_once('/').unwrap_or((owner, t)))
            .filter(|(org, slug)| !org.is_empty() && !slug.is_empty())
            .map(|(org, slug)| team_key(org, slug))
            .collect()
    }

    /// Merge what another record for the same output knows (manifest + webhook).
    /// The manifest line is the execution record: its fields win, whichever
    /// arrived first, and the webhook discovery fills what it lacks (so the
    /// result does not depend on delivery order).
    pub fn merge(&mut self, mut other: ExecutionRecord) {
        if other.sources.manifest && !self.sources.manifest {
            std::mem::swap(self, &mut other);
        }
        self.sources.manifest |= other.sources.manifest;
        self.sources.webhook |= other.sources.webhook;
        self.run_id = self.run_id.or(other.run_id);
        self.workflow = self.workflow.take().or(other.workflow);
        self.actor = self.actor.take().or(other.actor);
        self.temporary_id = self.temporary_id.take().or(other.temporary_id);
        match (&mut self.target, other.target) {
            (Some(mine), Some(theirs)) => {
                mine.node_id = mine.node_id.take().or(theirs.node_id);
                mine.url = mine.url.take().or(theirs.url);
                mine.parent_number = mine.parent_number.or(theirs.parent_number);
            }
            (None, theirs) => self.target = theirs,
            _ => {}
        }
        for (map, theirs) in [
            (&mut self.before_state, other.before_state),
            (&mut self.after_state, other.after_state),
            (&mut self.metadata, other.metadata),
            (&mut self.extra, other.extra),
        ] {
            for (k, v) in theirs {
                map.entry(k).or_insert(v);
            }
        }
        if self.labels_added.is_empty() {
            self.labels_added = other.labels_added;
        }
        self.labels_before = self.labels_before.take().or(other.labels_before);
    }
}

/// A GitHub id or number given as a JSON number or a numeric string.
/// Correlation ids are validated here, once: 0, a negative number, a
/// fraction or anything unparsable is no id at all (docs/evaluation.md,
/// general rule 1), so a record carrying one is judged as missing it.
pub fn github_id(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
    .filter(|id| *id > 0)
}

/// A string field as the record means it: trimmed, and none when it is not
/// a string or only white space.
pub fn trimmed_text(v: &Value) -> Option<&str> {
    v.as_str().map(str::trim).filter(|s| !s.is_empty())
}

/// Label names from `[{"name": ..}]` or `["..."]`.
pub fn label_names(items: &[Value]) -> Vec<String> {
    items
        .iter()
        .filter_map(|v| match v {
            Value::String(s) => Some(s.clone()),
            other => other.get("name")?.as_str().map(str::to_string),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_field_is_trimmed_and_blank_is_none() {
        assert_eq!(trimmed_text(&serde_json::json!(" main ")), Some("main"));
        assert_eq!(trimmed_text(&serde_json::json!(" \n")), None);
        assert_eq!(trimmed_text(&serde_json::json!(7)), None);
        assert_eq!(trimmed_text(&Value::Null), None);
    }

    /// The type is written under the outcome record's name, and a record
    /// stored as JSON under the old name reads the same.
    #[test]
    fn the_type_is_safe_output_type_and_the_old_name_still_reads() {
        let old = serde_json::json!({
            "id": "o/r:1:0", "output_type": "create_issue", "repo": "o/r",
            "run_id": 1, "target": null, "executed_at": "2026-11-01T00:00:00Z"
        });
        let record: ExecutionRecord = serde_json::from_value(old).unwrap();
        assert_eq!(record.output_type, "create_issue");
        let written = serde_json::to_value(&record).unwrap();
        assert_eq!(written["safe_output_type"], "create_issue");
        assert!(written.get("output_type").is_none(), "{written}");
        let again: ExecutionRecord = serde_json::from_value(written).unwrap();
        assert_eq!(again, record);
    }

    /// `assign_milestone` watches its milestone (where `milestone.deleted`
    /// is filed), by the number the line or its metadata names; a number
    /// that is no GitHub id names none.
    #[test]
    fn assign_milestone_watches_its_milestone() {
        let record = |metadata: serde_json::Value| -> ExecutionRecord {
            serde_json::from_value(serde_json::json!({
                "id": "o/r:1:0", "output_type": "assign_milestone", "repo": "o/r", "run_id": 1,
                "target": {"repo": "o/r", "kind": "issue", "number": 7},
                "executed_at": "2026-11-01T00:00:00Z", "metadata": metadata
            }))
            .unwrap()
        };
        let keys = record(serde_json::json!({"milestone_number": 2})).watch_keys();
        assert_eq!(keys, vec!["o/r#7", "o/r#milestone:2"]);
        let keys = record(serde_json::json!({"milestone_number": "3"})).watch_keys();
        assert_eq!(keys, vec!["o/r#7", "o/r#milestone:3"]);
        for none in [
            serde_json::json!({}),
            serde_json::json!({"milestone_number": 0}),
        ] {
            assert_eq!(record(none).watch_keys(), vec!["o/r#7"]);
        }
        // The after-state's number, as the evaluator reads it.
        let mut after = record(serde_json::json!({}));
        after.after_state =
            serde_json::from_value(serde_json::json!({"milestone_number": 4})).unwrap();
        assert_eq!(after.milestone_number(), Some(4));
        assert_eq!(after.watch_keys(), vec!["o/r#7", "o/r#milestone:4"]);
    }

    #[test]
    fn a_renamed_repositorys_record_takes_its_keyed_name() {
        let line = serde_json::json!({
            "id": "O/New:1:0", "output_type": "create_issue", "repo": "o/new", "run_id": 1,
            "target": {"repo": "o/new", "kind": "issue", "number": 7,
                       "url": "https://github.com/o/new/issues/7"},
            "executed_at": "2026-11-01T00:00:00Z"
        });
        let mut record: ExecutionRecord = serde_json::from_value(line).unwrap();
        record.rename_repo("o/new", "o/old");
        assert_eq!(record.id, "o/old:1:0");
        assert_eq!(record.repo, "o/old");
        let target = record.target.as_ref().unwrap();
        assert_eq!(target.key(), "o/old#7");
        assert_eq!(
            target.url.as_deref(),
            Some("https://github.com/o/new/issues/7")
        );
        // An id of its own (not the repository's) and another repository stay.
        let mut other = record.clone();
        other.id = "o/newest:1:0".into();
        other.rename_repo("o/new", "o/x");
        assert_eq!(other.id, "o/newest:1:0");
        assert_eq!(other.repo, "o/old");
    }
}
