//! The normalized outcome record of seed 000 §3, as users read it: the
//! current outcome (`outcome`'s words) and the checkpoint snapshots
//! (`windows`).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use super::outcome::{ActorSummary, Confidence, EvidenceStrength, OutcomeStatus};
use super::signal::Signal;
use super::target::Target;
use super::windows::Windows;

/// The normalized outcome record of seed 000 §3, as users read it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct OutcomeRecord {
    pub safe_output_id: String,
    pub safe_output_type: String,
    pub target: Option<Target>,
    pub run_id: Option<u64>,
    pub workflow: Option<String>,
    pub created_at: DateTime<Utc>,
    pub evaluated_at: DateTime<Utc>,
    pub evaluation_window_hours: i64,
    pub outcome_status: OutcomeStatus,
    pub evidence_strength: EvidenceStrength,
    pub human_check_signal: String,
    /// The same signal in gh-aw's vocabulary (`model::signal`).
    #[serde(default)]
    pub gh_aw_signal: String,
    pub target_resolved: bool,
    pub confidence: Confidence,
    pub bot_aware: bool,
    pub actor_summary: ActorSummary,
    #[schema(value_type = Object)]
    pub details: Map<String, Value>,
    pub notes: String,
    /// Snapshots at each checkpoint already passed, in time order (`1h`, `24h`, `7d`, `30d`).
    pub windows: Windows,
    /// Hours from execution to the evidence that made it accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_to_acceptance_hours: Option<f64>,
    /// False when only the generic fallback could judge this type.
    pub dedicated_evaluator: bool,
}

impl OutcomeRecord {
    /// True when the outcome rests only on the target existing.
    pub fn is_exists_only(&self) -> bool {
        self.human_check_signal == Signal::TargetExistsOnly.as_str()
    }
}
