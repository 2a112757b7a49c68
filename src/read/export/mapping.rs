//! One safe output as an opentraces `TraceRecord` (schema 0.9.0): the record
//! types (the subset of the schema's fields we fill) and the mapping from an
//! output's execution record, outcome, observations and line attribution.
//! `docs/export.md` explains each choice.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::github::attribution::record::{Contributor, LineAttribution};
use crate::model::{EvidenceStrength, ExecutionRecord, Observation, OutcomeRecord, OutcomeStatus};

/// The opentraces schema version the records follow.
pub const SCHEMA_VERSION: &str = "0.9.0";

/// Output types whose result is code on a branch: `devtime` in opentraces.
pub(crate) const CODE_OUTPUT_TYPES: [&str; 3] = [
    "create_pull_request",
    "push_to_pull_request_branch",
    "autofix_code_scanning_alert",
];

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct TraceRecord {
    pub schema_version: &'static str,
    pub trace_id: String,
    pub session_id: String,
    pub timestamp_start: String,
    pub execution_context: &'static str,
    pub task: Task,
    pub agent: Agent,
    pub outcome: Outcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attribution: Option<Attribution>,
    pub lifecycle: &'static str,
    pub generation_index: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub git_links: Vec<GitLink>,
    /// Our own fields, under `safe_outcomes`.
    #[schema(value_type = Object)]
    pub metadata: Metadata,
}

/// `metadata` of a trace record: our fields under their namespace. A type,
/// not a JSON map, so the outcome record in it keeps its field and window
/// order (time order) as it is written.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metadata {
    pub safe_outcomes: OurMetadata,
}

/// The full outcome record and the line counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OurMetadata {
    pub outcome: OutcomeRecord,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Task {
    pub source: &'static str,
    pub repository: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repository_url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Agent {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Outcome {
    pub success: Option<bool>,
    pub signal_source: &'static str,
    pub signal_confidence: &'static str,
    pub description: String,
    pub committed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit_sha: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Attribution {
    pub experimental: bool,
    #[schema(value_type = Object)]
    pub revision: Map<String, Value>,
    pub files: Vec<AttributionFile>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unaccounted_files: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct AttributionFile {
    pub path: String,
    pub conversations: Vec<AttributionConversation>,
}

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct AttributionConversation {
    #[schema(value_type = Object)]
    pub contributor: Map<String, Value>,
    pub ranges: Vec<AttributionRange>,
}

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct AttributionRange {
    pub start_line: u64,
    pub end_line: u64,
    pub content_hash: String,
    pub confidence: &'static str,
}

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct GitLink {
    pub vcs_type: &'static str,
    pub revision: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repo_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    pub tier: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_alive: Option<bool>,
}

/// Everything the mapping reads about one output.
pub struct ExportInput<'a> {
    pub execution: &'a ExecutionRecord,
    pub outcome: &'a OutcomeRecord,
    pub trace_id: &'a str,
    pub observations: &'a [Observation],
    pub attribution: Option<&'a LineAttribution>,
}

/// Map one evaluated output to its trace record.
pub fn trace_record(input: &ExportInput) -> TraceRecord {
    let ExportInput {
        execution,
        outcome,
        attribution,
        ..
    } = input;
    let agent = agent(execution);
    let code = execution_context(&execution.output_type) == "devtime";
    let commit_sha = attribution
        .map(|a| a.landed_commit.clone())
        .or_else(|| merge_commit(input.observations))
        .filter(|_| code);
    let repo_url = repository_url(execution);
    TraceRecord {
        schema_version: SCHEMA_VERSION,
        trace_id: input.trace_id.to_string(),
        session_id: execution.id.clone(),
        timestamp_start: timestamp(execution.executed_at),
        execution_context: execution_context(&execution.output_type),
        task: Task {
            source: "gh-aw",
            repository: execution.repo.clone(),
            repository_url: repo_url.clone(),
        },
        outcome: Outcome {
            success: success(outcome.outcome_status),
            signal_source: "deterministic",
            signal_confidence: signal_confidence(outcome.evidence_strength),
            description: description(outcome),
            committed: commit_sha.is_some(),
            commit_sha,
        },
        attribution: attribution.map(|a| attribution_block(a, agent.model.as_deref())),
        lifecycle: lifecycle(outcome),
        generation_index: outcome.windows.len() as u64,
        git_links: attribution
            .map(|a| vec![git_link(a, repo_url)])
            .unwrap_or_default(),
        metadata: metadata(outcome, *attribution),
        agent,
    }
}

fn timestamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

pub fn execution_context(output_type: &str) -> &'static str {
    if CODE_OUTPUT_TYPES.contains(&output_type) {
        "devtime"
    } else {
        "runtime"
    }
}

/// accepted → true; rejected and ignored → false; still open → null.
pub fn success(status: OutcomeStatus) -> Option<bool> {
    match status {
        OutcomeStatus::Accepted => Some(true),
        OutcomeStatus::Rejected | OutcomeStatus::Ignored => Some(false),
        OutcomeStatus::Pending | OutcomeStatus::Skipped | OutcomeStatus::Unknown => None,
    }
}

/// Strong evidence is a deterministic fact (`derived`); anything weaker is
/// read from circumstances (`inferred`).
pub(crate) fn signal_confidence(strength: EvidenceStrength) -> &'static str {
    match strength {
        EvidenceStrength::Strong => "derived",
        _ => "inferred",
    }
}

/// `final` once the 30-day checkpoint has passed.
pub fn lifecycle(outcome: &OutcomeRecord) -> &'static str {
    if outcome.windows.contains_key("30d") {
        "final"
    } else {
        "provisional"
    }
}

pub fn description(o: &OutcomeRecord) -> String {
    format!(
        "{} {} ({} evidence): {}",
        o.safe_output_type,
        o.outcome_status.as_str(),
        o.evidence_strength.as_str(),
        o.human_check_signal
    )
}

/// The gh-aw engine as the agent: from the body marker or the manifest line
/// (`engine`, `engine_version`, `model`); `gh-aw` when neither names it.
pub fn agent(e: &ExecutionRecord) -> Agent {
    let field = |name: &str| {
        e.field_str(name)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    Agent {
        name: field("engine").unwrap_or_else(|| "gh-aw".to_string()),
        version: field("engine_version"),
        model: field("model"),
    }
}

/// `https://host/owner/repo`, cut from the target's URL when it has one.
fn repository_url(e: &ExecutionRecord) -> Option<String> {
    let url = e.target.as_ref()?.url.as_deref()?;
    let needle = format!("/{}/", e.repo);
    let at = url.find(&needle)?;
    Some(url[..at + needle.len() - 1].to_string())
}

/// The merge commit of the latest merged snapshot among the observations.
fn merge_commit(observations: &[Observation]) -> Option<String> {
    observations
        .iter()
        .rev()
        .filter_map(|o| o.snapshot.as_ref())
        .find(|s| s.merged && s.merge_commit_sha.is_some())
        .and_then(|s| s.merge_commit_sha.clone())
}

fn attribution_block(a: &LineAttribution, model: Option<&str>) -> Attribution {
    let mut revision = Map::new();
    revision.insert("vcs_type".into(), "git".into());
    revision.insert("revision".into(), a.landed_commit.clone().into());
    let files = a
        .files
        .iter()
        .map(|f| AttributionFile {
            path: f.path.clone(),
            conversations: [Contributor::Ai, Contributor::Mixed]
                .into_iter()
                .filter_map(|who| conversation(f, who, model))
                .collect(),
        })
        .collect();
    Attribution {
        experimental: a.unknown_reason.is_some(),
        revision,
        files,
        unaccounted_files: Some(a.unattributed_files.clone()).filter(|v| !v.is_empty()),
    }
}

fn conversation(
    f: &crate::github::attribution::record::FileAttribution,
    who: Contributor,
    model: Option<&str>,
) -> Option<AttributionConversation> {
    let ranges: Vec<AttributionRange> = f
        .ranges
        .iter()
        .filter(|r| r.contributor == who)
        .map(|r| AttributionRange {
            start_line: r.start_line,
            end_line: r.end_line,
            content_hash: r.content_hash.clone(),
            confidence: match who {
                Contributor::Ai => "high",
                Contributor::Mixed => "medium",
            },
        })
        .collect();
    if ranges.is_empty() {
        return None;
    }
    let mut contributor = Map::new();
    contributor.insert("type".into(), who.as_str().into());
    if let Some(m) = model {
        contributor.insert("model_id".into(), m.into());
    }
    Some(AttributionConversation {
        contributor,
        ranges,
    })
}

fn git_link(a: &LineAttribution, repo_url: Option<String>) -> GitLink {
    let all_ai = a
        .files
        .iter()
        .flat_map(|f| &f.ranges)
        .all(|r| r.contributor == Contributor::Ai);
    let latest = a.lines_surviving("30d").or_else(|| a.lines_surviving("7d"));
    GitLink {
        vcs_type: "git",
        revision: a.landed_commit.clone(),
        repo_url,
        branch: Some(a.branch.clone()),
        tier: if all_ai {
            "tool_emitted"
        } else {
            "tool_emitted_with_divergence"
        },
        content_alive: latest.map(|n| n > 0),
    }
}

/// Our own fields, under `metadata.safe_outcomes`: the full outcome record
/// and the line counts.
fn metadata(outcome: &OutcomeRecord, attribution: Option<&LineAttribution>) -> Metadata {
    let lines = attribution.map(|a| {
        json!({
                "lines_attributed": a.lines_attributed(),
                "lines_surviving_7d": a.lines_surviving("7d"),
                "lines_surviving_30d": a.lines_surviving("30d"),
                "unknown_reason": a.unknown_reason.clone().or_else(|| {
                    a.survival.values().find_map(|s| s.unknown_reason.clone())
                }),
        })
    });
    Metadata {
        safe_outcomes: OurMetadata {
            outcome: outcome.clone(),
            lines,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::github::attribution::record::{FileAttribution, LineRange, Survival};
    use crate::model::{ActorSummary, Confidence, ItemSnapshot, ObservationKind, WindowSnapshot};
    use chrono::TimeZone;
    use serde_json::json;

    fn execution(output_type: &str, metadata: Value) -> ExecutionRecord {
        serde_json::from_value(json!({
            "id": "o/r:7:0", "output_type": output_type, "repo": "o/r", "run_id": 7,
            "target": {"repo": "o/r", "kind": "pull_request", "number": 3,
                       "url": "https://github.com/o/r/pull/3"},
            "executed_at": "2026-11-01T10:00:00.250Z", "metadata": metadata,
        }))
        .unwrap()
    }

    fn outcome(
        status: OutcomeStatus,
        strength: EvidenceStrength,
        windows: &[&str],
    ) -> OutcomeRecord {
        let at = Utc.with_ymd_and_hms(2026, 11, 1, 10, 0, 0).unwrap();
        OutcomeRecord {
            safe_output_id: "o/r:7:0".into(),
            safe_output_type: "create_pull_request".into(),
            target: None,
            run_id: Some(7),
            workflow: Some("coach".into()),
            created_at: at,
            evaluated_at: at,
            evaluation_window_hours: 24,
            outcome_status: status,
            evidence_strength: strength,
            human_check_signal: "merged".into(),
            gh_aw_signal: "merged".into(),
            target_resolved: true,
            confidence: Confidence::High,
            bot_aware: true,
            actor_summary: ActorSummary::default(),
            details: Map::new(),
            notes: String::new(),
            windows: windows
                .iter()
                .map(|w| {
                    let snap = WindowSnapshot {
                        outcome_status: status,
                        evidence_strength: strength,
                        human_check_signal: "merged".into(),
                        evaluated_at: at,
                    };
                    (w.to_string(), snap)
                })
                .collect(),
            time_to_acceptance_hours: None,
            dedicated_evaluator: true,
        }
    }

    fn merged_observation(sha: &str) -> Observation {
        Observation {
            id: "d1/0".into(),
            at: Utc.with_ymd_and_hms(2026, 11, 2, 0, 0, 0).unwrap(),
            target: "o/r#3".into(),
            actor: None,
            event: ObservationKind::Closed,
            snapshot: Some(ItemSnapshot {
                state: "closed".into(),
                merged: true,
                merge_commit_sha: Some(sha.into()),
                ..Default::default()
            }),
        }
    }

    fn map(
        e: &ExecutionRecord,
        o: &OutcomeRecord,
        obs: &[Observation],
        a: Option<&LineAttribution>,
    ) -> Value {
        serde_json::to_value(trace_record(&ExportInput {
            execution: e,
            outcome: o,
            trace_id: "0dd1e942-e155-489a-858d-b31c82380c0c",
            observations: obs,
            attribution: a,
        }))
        .unwrap()
    }

    #[test]
    fn status_and_strength_map_to_success_and_signal_confidence() {
        use EvidenceStrength as E;
        use OutcomeStatus as S;
        // (status, strength, success, signal_confidence)
        let table = [
            (S::Accepted, E::Strong, Some(true), "derived"),
            (S::Accepted, E::Medium, Some(true), "inferred"),
            (S::Accepted, E::Weak, Some(true), "inferred"),
            (S::Rejected, E::Strong, Some(false), "derived"),
            (S::Ignored, E::Weak, Some(false), "inferred"),
            (S::Pending, E::Weak, None, "inferred"),
            (S::Skipped, E::None, None, "inferred"),
            (S::Unknown, E::None, None, "inferred"),
        ];
        let e = execution("create_pull_request", json!({}));
        for (status, strength, success, confidence) in table {
            let r = map(&e, &outcome(status, strength, &[]), &[], None);
            let row = format!("{status:?}/{strength:?}");
            assert_eq!(r["outcome"]["success"], json!(success), "{row}");
            assert_eq!(r["outcome"]["signal_confidence"], confidence, "{row}");
            assert_eq!(r["outcome"]["signal_source"], "deterministic", "{row}");
            assert_eq!(
                r["outcome"]["description"],
                format!(
                    "create_pull_request {} ({} evidence): merged",
                    status.as_str(),
                    strength.as_str()
                ),
                "{row}"
            );
            // Neither how the run ended nor a reward is ours to say.
            assert!(r["outcome"].get("terminal_state").is_none(), "{row}");
            assert!(r["outcome"].get("reward").is_none(), "{row}");
        }
    }

    #[test]
    fn checkpoints_passed_give_the_generation_and_the_lifecycle() {
        let e = execution("create_pull_request", json!({}));
        // (windows passed, generation_index, lifecycle)
        let table: [(&[&str], u64, &str); 4] = [
            (&[], 0, "provisional"),
            (&["1h", "24h"], 2, "provisional"),
            (&["1h", "24h", "7d"], 3, "provisional"),
            (&["1h", "24h", "7d", "30d"], 4, "final"),
        ];
        for (windows, generation, lifecycle) in table {
            let r = map(
                &e,
                &outcome(OutcomeStatus::Accepted, EvidenceStrength::Strong, windows),
                &[],
                None,
            );
            assert_eq!(r["generation_index"], generation, "{windows:?}");
            assert_eq!(r["lifecycle"], lifecycle, "{windows:?}");
        }
    }

    #[test]
    fn code_outputs_are_devtime_and_committed_by_their_merge() {
        let merged = [merged_observation("m1")];
        // (type, observations, context, committed, commit_sha)
        let table: [(&str, &[Observation], &str, bool, Value); 5] = [
            ("create_pull_request", &merged, "devtime", true, json!("m1")),
            ("create_pull_request", &[], "devtime", false, Value::Null),
            (
                "push_to_pull_request_branch",
                &merged,
                "devtime",
                true,
                json!("m1"),
            ),
            // A label on a merged PR is not code.
            ("add_labels", &merged, "runtime", false, Value::Null),
            ("add_comment", &[], "runtime", false, Value::Null),
        ];
        for (output_type, obs, context, committed, sha) in table {
            let e = execution(output_type, json!({}));
            let r = map(
                &e,
                &outcome(OutcomeStatus::Accepted, EvidenceStrength::Strong, &[]),
                obs,
                None,
            );
            assert_eq!(r["execution_context"], context, "{output_type}");
            assert_eq!(r["outcome"]["committed"], committed, "{output_type}");
            assert_eq!(
                r["outcome"]
                    .get("commit_sha")
                    .cloned()
                    .unwrap_or(Value::Null),
                sha,
                "{output_type}"
            );
        }
    }

    #[test]
    fn the_agent_comes_from_the_marker_or_manifest_fields() {
        let o = outcome(OutcomeStatus::Pending, EvidenceStrength::Weak, &[]);
        // (metadata, agent)
        let table = [
            (json!({}), json!({"name": "gh-aw"})),
            (json!({"engine": "copilot"}), json!({"name": "copilot"})),
            (
                json!({"engine": "claude", "engine_version": "2.0.1", "model": "claude-sonnet-4"}),
                json!({"name": "claude", "version": "2.0.1", "model": "claude-sonnet-4"}),
            ),
            (
                json!({"engine": "  ", "model": "gpt-5"}),
                json!({"name": "gh-aw", "model": "gpt-5"}),
            ),
        ];
        for (metadata, agent) in table {
            let r = map(&execution("create_issue", metadata.clone()), &o, &[], None);
            assert_eq!(r["agent"], agent, "{metadata}");
        }
    }

    #[test]
    fn the_record_carries_ids_task_and_the_whole_outcome_under_its_namespace() {
        let e = execution("create_pull_request", json!({}));
        let o = outcome(OutcomeStatus::Accepted, EvidenceStrength::Strong, &["1h"]);
        let r = map(&e, &o, &[], None);
        assert_eq!(r["schema_version"], "0.9.0");
        assert_eq!(r["session_id"], "o/r:7:0");
        assert_eq!(r["trace_id"], "0dd1e942-e155-489a-858d-b31c82380c0c");
        assert_eq!(r["timestamp_start"], "2026-11-01T10:00:00Z");
        assert_eq!(
            r["task"],
            json!({"source": "gh-aw", "repository": "o/r", "repository_url": "https://github.com/o/r"})
        );
        assert_eq!(
            r["metadata"]["safe_outcomes"]["outcome"],
            serde_json::to_value(&o).unwrap()
        );
        assert!(r.get("attribution").is_none());
        assert!(r.get("git_links").is_none());
    }

    #[test]
    fn attribution_becomes_the_block_the_git_link_and_the_line_counts() {
        let range = |s, e, who| LineRange {
            start_line: s,
            end_line: e,
            content_hash: format!("murmur3:{s:032x}"),
            contributor: who,
            line_hashes: Vec::new(),
        };
        let mut a = LineAttribution {
            output_id: "o/r:7:0".into(),
            repo: "o/r".into(),
            branch: "main".into(),
            landed_commit: "c0ffee".into(),
            landed_at: Utc.with_ymd_and_hms(2026, 11, 2, 0, 0, 0).unwrap(),
            files: vec![FileAttribution {
                path: "src/lib.rs".into(),
                ranges: vec![
                    range(1, 10, Contributor::Ai),
                    range(20, 21, Contributor::Mixed),
                ],
            }],
            unattributed_files: vec!["README.md".into()],
            unknown_reason: None,
            survival: Default::default(),
        };
        a.survival.insert(
            "7d".into(),
            Survival {
                lines_surviving: Some(7),
                unknown_reason: None,
                at_commit: Some("d00d".into()),
            },
        );
        let e = execution("create_pull_request", json!({"model": "gpt-5"}));
        let o = outcome(OutcomeStatus::Accepted, EvidenceStrength::Strong, &[]);
        let r = map(&e, &o, &[merged_observation("m1")], Some(&a));
        assert_eq!(
            r["outcome"]["commit_sha"], "c0ffee",
            "the landing commit wins"
        );
        let block = &r["attribution"];
        assert_eq!(
            block["revision"],
            json!({"vcs_type": "git", "revision": "c0ffee"})
        );
        assert_eq!(block["experimental"], false);
        assert_eq!(block["unaccounted_files"], json!(["README.md"]));
        let conversations = block["files"][0]["conversations"].as_array().unwrap();
        assert_eq!(conversations.len(), 2);
        assert_eq!(
            conversations[0]["contributor"],
            json!({"type": "ai", "model_id": "gpt-5"})
        );
        assert_eq!(conversations[0]["ranges"][0]["start_line"], 1);
        assert_eq!(conversations[0]["ranges"][0]["confidence"], "high");
        assert_eq!(conversations[1]["contributor"]["type"], "mixed");
        assert_eq!(r["git_links"][0]["tier"], "tool_emitted_with_divergence");
        assert_eq!(r["git_links"][0]["content_alive"], true);
        assert_eq!(
            r["metadata"]["safe_outcomes"]["lines"],
            json!({"lines_attributed": 12, "lines_surviving_7d": 7,
                   "lines_surviving_30d": null, "unknown_reason": null})
        );
    }
}
