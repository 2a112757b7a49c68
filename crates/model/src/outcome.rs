//! The outcome model of seed 000 §2–3: status, evidence strength, confidence,
//! actor classes, an evaluation, and a checkpoint's snapshot. The record users
//! read is `outcome_record` (it holds the snapshots, `windows`).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use super::signal::Signal;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord, ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeStatus {
    Accepted,
    Rejected,
    Pending,
    Ignored,
    Skipped,
    Unknown,
}

impl OutcomeStatus {
    pub const ALL: [OutcomeStatus; 6] = [
        OutcomeStatus::Accepted,
        OutcomeStatus::Rejected,
        OutcomeStatus::Pending,
        OutcomeStatus::Ignored,
        OutcomeStatus::Skipped,
        OutcomeStatus::Unknown,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeStatus::Accepted => "accepted",
            OutcomeStatus::Rejected => "rejected",
            OutcomeStatus::Pending => "pending",
            OutcomeStatus::Ignored => "ignored",
            OutcomeStatus::Skipped => "skipped",
            OutcomeStatus::Unknown => "unknown",
        }
    }

    pub fn parse(s: &str) -> Option<OutcomeStatus> {
        OutcomeStatus::ALL.into_iter().find(|v| v.as_str() == s)
    }
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord, ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceStrength {
    Strong,
    Medium,
    Weak,
    None,
}

impl EvidenceStrength {
    pub fn as_str(self) -> &'static str {
        match self {
            EvidenceStrength::Strong => "strong",
            EvidenceStrength::Medium => "medium",
            EvidenceStrength::Weak => "weak",
            EvidenceStrength::None => "none",
        }
    }

    pub fn parse(s: &str) -> Option<EvidenceStrength> {
        [
            EvidenceStrength::Strong,
            EvidenceStrength::Medium,
            EvidenceStrength::Weak,
            EvidenceStrength::None,
        ]
        .into_iter()
        .find(|v| v.as_str() == s)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    High,
    Medium,
    Low,
}

impl Confidence {
    /// The default confidence for a strength; evaluators may lower it.
    pub(crate) fn for_strength(strength: EvidenceStrength) -> Confidence {
        match strength {
            EvidenceStrength::Strong => Confidence::High,
            EvidenceStrength::Medium => Confidence::Medium,
            EvidenceStrength::Weak | EvidenceStrength::None => Confidence::Low,
        }
    }
}

/// Seed 000 §6: evidence is human only from a visible non-bot actor other than
/// the workflow's own actor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActorClass {
    BotActor,
    VisibleNonBotActor,
    SameWorkflowActor,
    UnknownActor,
    SystemActor,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ActorSummary {
    pub visible_non_bot_actor_count: u32,
    pub bot_actor_count: u32,
}

/// What an evaluator concluded about one output at one instant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    pub status: OutcomeStatus,
    pub strength: EvidenceStrength,
    /// The concrete thing a human would check (`human_check_signal`).
    pub signal: Signal,
    pub confidence: Confidence,
    pub target_resolved: bool,
    pub details: Map<String, Value>,
    pub notes: String,
    /// GitHub time of the evidence that decided this outcome.
    pub decided_at: Option<DateTime<Utc>>,
    /// Ids of the observations behind the outcome.
    pub evidence: Vec<String>,
    /// False when the generic fallback, not a type-specific rule, produced it.
    pub dedicated: bool,
}

impl Evaluation {
    pub fn new(status: OutcomeStatus, strength: EvidenceStrength, signal: Signal) -> Evaluation {
        Evaluation {
            status,
            strength,
            signal,
            confidence: Confidence::for_strength(strength),
            target_resolved: true,
            details: Map::new(),
            notes: String::new(),
            decided_at: None,
            evidence: Vec::new(),
            dedicated: true,
        }
    }

    pub fn note(mut self, notes: impl Into<String>) -> Evaluation {
        self.notes = notes.into();
        self
    }

    pub fn detail(mut self, key: &str, value: impl Into<Value>) -> Evaluation {
        self.details.insert(key.to_string(), value.into());
        self
    }

    pub fn confidence(mut self, confidence: Confidence) -> Evaluation {
        self.confidence = confidence;
        self
    }

    pub fn unresolved(mut self) -> Evaluation {
        self.target_resolved = false;
        self
    }

    /// Record the observation that decided the outcome.
    pub fn decided_by(mut self, id: &str, at: DateTime<Utc>) -> Evaluation {
        self.decided_at = Some(at);
        self.evidence.push(id.to_string());
        self
    }

    /// Status, strength and signal: what a transition is about.
    pub fn triple(&self) -> (OutcomeStatus, EvidenceStrength, Signal) {
        (self.status, self.strength, self.signal)
    }
}

/// The evaluation checkpoints after execution: name and hours.
pub const CHECKPOINTS: [(&str, i64); 4] = [("1h", 1), ("24h", 24), ("7d", 168), ("30d", 720)];

/// An output's outcome as of one checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WindowSnapshot {
    pub outcome_status: OutcomeStatus,
    pub evidence_strength: EvidenceStrength,
    pub human_check_signal: String,
    pub evaluated_at: DateTime<Utc>,
}
