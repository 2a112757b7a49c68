//! The outputs counted for the `safe_outcomes_outputs` gauge: by status,
//! evidence strength, type and — only when the operator opts in
//! (`METRICS_WORKFLOW_LABELS`) — workflow, with bounded label sets (a custom
//! type is "custom", a workflow outside the busiest is "other"). Never by
//! repository.

use std::collections::BTreeMap;

use crate::model::OutcomeRecord;
use crate::model::OutputType;

/// Workflows named in `safe_outcomes_outputs` (the busiest); the rest are
/// "other", so the label set stays bounded whatever the org runs.
pub(crate) const METRIC_WORKFLOWS: usize = 20;

/// Outputs counted by (status, strength, type, workflow); the workflow is
/// `None` for every row unless workflows were asked for.
#[derive(Debug, Default)]
pub struct OutputTally {
    pub rows: BTreeMap<(String, String, String, Option<String>), u64>,
}

impl OutputTally {
    /// Count the stored outcomes with bounded labels: a type is its gh-aw
    /// name when the registry knows it, else "custom"; with `workflows`, a
    /// workflow outside the busiest `METRIC_WORKFLOWS` is "other" (without,
    /// no workflow is named at all).
    pub fn count<'a>(
        outcomes: impl Iterator<Item = &'a OutcomeRecord>,
        workflows: bool,
    ) -> OutputTally {
        OutputTally::from_rows(OutputTally::rows_of(outcomes), workflows)
    }

    /// Counts by (status, strength, type, workflow) with the names as
    /// stored, as `read::rollup::metric_rows` reads them from the tally.
    pub fn rows_of<'a>(
        outcomes: impl Iterator<Item = &'a OutcomeRecord>,
    ) -> BTreeMap<(String, String, String, String), u64> {
        let mut rows: BTreeMap<(String, String, String, String), u64> = BTreeMap::new();
        for o in outcomes {
            let key = (
                o.outcome_status.as_str().to_string(),
                o.evidence_strength.as_str().to_string(),
                o.safe_output_type.clone(),
                o.workflow.clone().unwrap_or_else(|| "none".into()),
            );
            *rows.entry(key).or_default() += 1;
        }
        rows
    }

    /// The tally from counts by (status, strength, type, workflow) with
    /// the names as stored (`read::rollup::metric_rows`): labels bounded,
    /// workflows named only with `workflows`.
    pub fn from_rows(
        counted: BTreeMap<(String, String, String, String), u64>,
        workflows: bool,
    ) -> OutputTally {
        let mut per_workflow: BTreeMap<&str, u64> = BTreeMap::new();
        for ((_, _, _, w), n) in &counted {
            *per_workflow.entry(w.as_str()).or_default() += n;
        }
        let mut busiest: Vec<(&str, u64)> = per_workflow.into_iter().collect();
        busiest.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let named: std::collections::BTreeSet<&str> = busiest
            .iter()
            .take(METRIC_WORKFLOWS)
            .map(|(w, _)| *w)
            .collect();
        let mut rows = BTreeMap::new();
        for ((status, strength, output_type, workflow), n) in &counted {
            let kind = match OutputType::from(output_type.as_str()) {
                OutputType::Unknown(_) => "custom".to_string(),
                known => known.to_string(),
            };
            let workflow = if named.contains(workflow.as_str()) {
                workflow.as_str()
            } else {
                "other"
            };
            let key = (
                status.clone(),
                strength.clone(),
                kind,
                workflows.then(|| workflow.to_string()),
            );
            *rows.entry(key).or_default() += n;
        }
        OutputTally { rows }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(kind: &str, workflow: &str) -> OutcomeRecord {
        let mut o: OutcomeRecord = serde_json::from_value(serde_json::json!({
            "safe_output_id": "o/r:1:1", "safe_output_type": kind, "target": null,
            "run_id": 1, "workflow": workflow, "created_at": "2026-10-01T00:00:00Z",
            "evaluated_at": "2026-10-01T00:00:00Z", "evaluation_window_hours": 24,
            "outcome_status": "accepted", "evidence_strength": "strong",
            "human_check_signal": "merged", "gh_aw_signal": "merged",
            "target_resolved": true, "confidence": "high", "bot_aware": true,
            "actor_summary": {"visible_non_bot_actor_count": 0, "bot_actor_count": 0},
            "details": {}, "notes": "", "windows": {}, "dedicated_evaluator": true
        }))
        .unwrap();
        o.workflow = Some(workflow.to_string());
        o
    }

    #[test]
    fn labels_stay_bounded() {
        let mut all = Vec::new();
        for w in 0..(METRIC_WORKFLOWS + 5) {
            // Workflow w0 is the busiest; the last five have one output each.
            let n = if w == 0 { 3 } else { 1 };
            for _ in 0..n {
                all.push(outcome("create_issue", &format!("w{w:02}")));
            }
        }
        all.push(outcome("post_to_slack", "w00"));
        let t = OutputTally::count(all.iter(), true);
        let workflows: std::collections::BTreeSet<&str> =
            t.rows.keys().filter_map(|k| k.3.as_deref()).collect();
        assert_eq!(workflows.len(), METRIC_WORKFLOWS + 1, "{workflows:?}");
        assert!(workflows.contains("other"));
        let key = |kind: &str| {
            (
                "accepted".to_string(),
                "strong".to_string(),
                kind.to_string(),
                Some("w00".to_string()),
            )
        };
        assert_eq!(t.rows[&key("create_issue")], 3);
        assert_eq!(t.rows[&key("custom")], 1, "custom types share one label");
        assert_eq!(t.rows.values().sum::<u64>(), all.len() as u64);
        // Without the opt-in no workflow is named at all.
        let t = OutputTally::count(all.iter(), false);
        assert!(t.rows.keys().all(|k| k.3.is_none()));
        assert_eq!(t.rows.values().sum::<u64>(), all.len() as u64);
    }
}
