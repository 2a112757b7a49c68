//! Synthetic stored outputs with outcomes, for `bench reads` and the test
//! that compares the rollups with a scan of every output: a large org's
//! year, deterministic from a seed (repositories of mixed case, workflows
//! that run in a few repositories each, several types per workflow, every
//! status and strength, checkpoints reached by age, times to acceptance,
//! reversals, fallback rules, outputs without a workflow).

use chrono::{DateTime, Duration, Utc};

use crate::model::{EvidenceStrength, OutcomeStatus, CHECKPOINTS};
use crate::store::StoredOutput;

/// The shape of a synthetic org.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub repos: u64,
    pub workflows: u64,
    /// Repositories each workflow runs in.
    pub repos_per_workflow: u64,
    /// Types each workflow writes.
    pub types_per_workflow: u64,
    /// Outputs per run.
    pub outputs_per_run: u64,
    /// The outputs run over this many days before `end`.
    pub days: i64,
    pub end: DateTime<Utc>,
}

impl Shape {
    /// A large org: 100 repositories, 40 workflows in 5 repositories each,
    /// 3 types per workflow, 4 outputs per run, over a year.
    pub fn large_org(end: DateTime<Utc>) -> Shape {
        Shape {
            repos: 100,
            workflows: 40,
            repos_per_workflow: 5,
            types_per_workflow: 3,
            outputs_per_run: 4,
            days: 365,
            end,
        }
    }
}

const TYPES: [&str; 9] = [
    "create_issue",
    "add_comment",
    "create_pull_request",
    "add_labels",
    "update_issue",
    "create_discussion",
    "push_to_pull_request_branch",
    "post_to_slack",
    "create_pull_request_review_comment",
];

/// A deterministic 64-bit mix of `i` and `salt` (splitmix64).
pub fn mix(i: u64, salt: u64) -> u64 {
    let mut z = i
        .wrapping_add(salt.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The repository names of the org (some with capitals, as GitHub keeps them).
pub fn repo_name(r: u64) -> String {
    if r % 7 == 3 {
        format!("Acme/Service-{r:03}")
    } else {
        format!("acme/service-{r:03}")
    }
}

/// Output number `i` of the org, with its outcome as of `shape.end`.
pub fn output(shape: &Shape, i: u64, seed: u64) -> StoredOutput {
    let h = |salt: u64| mix(i, seed.wrapping_mul(1_000).wrapping_add(salt));
    let run = i / shape.outputs_per_run;
    let hr = |salt: u64| mix(run, seed.wrapping_mul(1_000).wrapping_add(salt));
    let wf = hr(1) % shape.workflows;
    let repo = repo_name((wf * 7 + hr(2) % shape.repos_per_workflow * 13) % shape.repos);
    let workflow = (wf % 17 != 16).then(|| format!("workflow-{wf:02}"));
    let output_type = TYPES[((wf + h(3) % shape.types_per_workflow) % TYPES.len() as u64) as usize];
    let age = Duration::seconds((hr(4) % (shape.days as u64 * 86_400)) as i64);
    let executed_at = shape.end - age + Duration::seconds((i % shape.outputs_per_run) as i64);
    let id = format!("{repo}:{}:{}", 1_000_000 + run, i % shape.outputs_per_run);
    let execution = serde_json::from_value(serde_json::json!({
        "id": id, "output_type": output_type, "repo": repo, "run_id": 1_000_000 + run,
        "workflow": workflow, "target": null, "executed_at": executed_at,
        "sources": {"manifest": true},
    }))
    .expect("a synthetic execution record");
    let status = OutcomeStatus::ALL[(h(5) % 6) as usize];
    let strength = [
        EvidenceStrength::Strong,
        EvidenceStrength::Medium,
        EvidenceStrength::Weak,
        EvidenceStrength::None,
    ][(h(6) % 4) as usize];
    let signal = if h(7) % 5 == 0 {
        "target_exists_only"
    } else {
        "merged"
    };
    let mut windows = serde_json::Map::new();
    for (name, hours) in CHECKPOINTS {
        if age >= Duration::hours(hours) {
            let ws = OutcomeStatus::ALL[(h(8 + hours as u64) % 6) as usize];
            let strength = ["strong", "medium", "weak", "none"][(h(9 + hours as u64) % 4) as usize];
            let signal = if h(10 + hours as u64) % 4 == 0 {
                "target_exists_only"
            } else {
                "approved"
            };
            windows.insert(
                name.to_string(),
                serde_json::json!({
                    "outcome_status": ws,
                    "evidence_strength": strength,
                    "human_check_signal": signal,
                    "evaluated_at": executed_at + Duration::hours(hours),
                }),
            );
        }
    }
    let time = (status == OutcomeStatus::Accepted && h(11) % 8 != 0)
        .then(|| (h(12) % 200_000) as f64 / 100.0);
    let details = if h(14) % 13 == 0 {
        serde_json::json!({"accepted_then_reverted": true})
    } else {
        serde_json::json!({})
    };
    let outcome = serde_json::from_value(serde_json::json!({
        "safe_output_id": id, "safe_output_type": output_type, "target": null,
        "run_id": 1_000_000 + run, "workflow": workflow, "created_at": executed_at,
        "evaluated_at": shape.end, "evaluation_window_hours": 720,
        "outcome_status": status, "evidence_strength": strength,
        "human_check_signal": signal, "gh_aw_signal": signal,
        "target_resolved": true, "confidence": "high", "bot_aware": true,
        "actor_summary": {"visible_non_bot_actor_count": 1, "bot_actor_count": 0},
        "details": details, "notes": "", "windows": windows,
        "time_to_acceptance_hours": time, "dedicated_evaluator": h(15) % 9 != 0,
    }))
    .expect("a synthetic outcome record");
    StoredOutput {
        execution,
        outcome: Some(outcome),
        trace_id: None,
    }
}
