//! The v3 form of a stored output: its execution record and its outcome (with
//! the windows), storing only what differs from the execution.

use super::observation::TargetV3;
use super::{
    confidence_code, confidence_of, json_map, json_text, status_code, status_of, strength_code,
    strength_of, Stored, Time,
};
use crate::StoredOutput;
use safe_outcomes_model::execution::Sources;
use safe_outcomes_model::outcome::{ActorSummary, WindowSnapshot};
use safe_outcomes_model::{ExecutionRecord, OutcomeRecord};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
pub(super) struct ExecutionV3 {
    pub(super) id: String,
    pub(super) output_type: String,
    pub(super) repo: String,
    pub(super) run_id: Option<u64>,
    pub(super) index: Option<u64>,
    pub(super) workflow: Option<String>,
    pub(super) target: Option<TargetV3>,
    pub(super) executed_at: Time,
    pub(super) actor: Option<String>,
    pub(super) provider: Option<String>,
    pub(super) temporary_id: Option<String>,
    pub(super) before_state: String,
    pub(super) after_state: String,
    pub(super) metadata: String,
    pub(super) labels_added: Vec<String>,
    pub(super) labels_before: Option<Vec<String>>,
    pub(super) extra: String,
    /// `Sources`: manifest, webhook.
    pub(super) sources: (bool, bool),
}

impl From<&ExecutionRecord> for ExecutionV3 {
    fn from(e: &ExecutionRecord) -> ExecutionV3 {
        ExecutionV3 {
            id: e.id.clone(),
            output_type: e.output_type.clone(),
            repo: e.repo.clone(),
            run_id: e.run_id,
            index: e.index,
            workflow: e.workflow.clone(),
            target: e.target.as_ref().map(TargetV3::from),
            executed_at: e.executed_at.into(),
            actor: e.actor.clone(),
            provider: e.provider.clone(),
            temporary_id: e.temporary_id.clone(),
            before_state: json_text(&e.before_state),
            after_state: json_text(&e.after_state),
            metadata: json_text(&e.metadata),
            labels_added: e.labels_added.clone(),
            labels_before: e.labels_before.clone(),
            extra: json_text(&e.extra),
            sources: (e.sources.manifest, e.sources.webhook),
        }
    }
}

impl ExecutionV3 {
    pub(super) fn into_model(self) -> std::result::Result<ExecutionRecord, String> {
        Ok(ExecutionRecord {
            id: self.id,
            output_type: self.output_type,
            repo: self.repo,
            run_id: self.run_id,
            index: self.index,
            workflow: self.workflow,
            target: self.target.map(TargetV3::into_model).transpose()?,
            executed_at: self.executed_at.into_model()?,
            actor: self.actor,
            provider: self.provider,
            temporary_id: self.temporary_id,
            before_state: json_map(&self.before_state)?,
            after_state: json_map(&self.after_state)?,
            metadata: json_map(&self.metadata)?,
            labels_added: self.labels_added,
            labels_before: self.labels_before,
            extra: json_map(&self.extra)?,
            sources: Sources {
                manifest: self.sources.0,
                webhook: self.sources.1,
            },
        })
    }
}

#[derive(Serialize, Deserialize)]
pub(super) struct WindowV3 {
    pub(super) status: u8,
    pub(super) strength: u8,
    pub(super) signal: String,
    pub(super) evaluated_at: Time,
}

/// An outcome record; `None` in the first six fields means "as in the
/// execution record" (what `assess` copies), and in `gh_aw_signal` "as
/// `vocabulary::gh_aw_signal` maps `human_check_signal`".
#[derive(Serialize, Deserialize)]
pub(super) struct OutcomeV3 {
    pub(super) safe_output_id: Option<String>,
    pub(super) safe_output_type: Option<String>,
    pub(super) target: Option<Option<TargetV3>>,
    pub(super) run_id: Option<Option<u64>>,
    pub(super) workflow: Option<Option<String>>,
    pub(super) created_at: Option<Time>,
    pub(super) evaluated_at: Time,
    pub(super) evaluation_window_hours: i64,
    pub(super) outcome_status: u8,
    pub(super) evidence_strength: u8,
    pub(super) human_check_signal: String,
    pub(super) gh_aw_signal: Option<String>,
    pub(super) target_resolved: bool,
    pub(super) confidence: u8,
    pub(super) bot_aware: bool,
    /// `ActorSummary`: visible non-bot actors, bots.
    pub(super) actor_summary: (u32, u32),
    pub(super) details: String,
    pub(super) notes: String,
    pub(super) windows: Vec<(String, WindowV3)>,
    pub(super) time_to_acceptance_hours: Option<f64>,
    pub(super) dedicated_evaluator: bool,
}

/// The windows as v3 stores them: in name order (`1h`, `24h`, `30d`, `7d`),
/// as they were written when the model kept them in a map by name, so a
/// record encodes to the same bytes as before (`DICTIONARY_V3` and the
/// stored records stay what they were); decoding puts them in time order.
pub(super) fn stored_windows(windows: &safe_outcomes_model::Windows) -> Vec<(String, WindowV3)> {
    let mut out: Vec<(String, WindowV3)> = windows
        .iter()
        .map(|(name, w)| {
            let v3 = WindowV3 {
                status: status_code(w.outcome_status),
                strength: strength_code(w.evidence_strength),
                signal: w.human_check_signal.clone(),
                evaluated_at: w.evaluated_at.into(),
            };
            (name.to_string(), v3)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// `Some(value)` unless it equals what it is derived from.
pub(super) fn unless_same<T: PartialEq + Clone>(value: &T, derived: &T) -> Option<T> {
    (value != derived).then(|| value.clone())
}

impl OutcomeV3 {
    pub(super) fn new(o: &OutcomeRecord, e: &ExecutionRecord) -> OutcomeV3 {
        let derived_signal = safe_outcomes_model::signal::gh_aw_word(&o.human_check_signal);
        OutcomeV3 {
            safe_output_id: unless_same(&o.safe_output_id, &e.id),
            safe_output_type: unless_same(&o.safe_output_type, &e.output_type),
            target: (o.target != e.target).then(|| o.target.as_ref().map(TargetV3::from)),
            run_id: unless_same(&o.run_id, &e.run_id),
            workflow: unless_same(&o.workflow, &e.workflow),
            created_at: (o.created_at != e.executed_at).then(|| o.created_at.into()),
            evaluated_at: o.evaluated_at.into(),
            evaluation_window_hours: o.evaluation_window_hours,
            outcome_status: status_code(o.outcome_status),
            evidence_strength: strength_code(o.evidence_strength),
            human_check_signal: o.human_check_signal.clone(),
            gh_aw_signal: (o.gh_aw_signal != derived_signal).then(|| o.gh_aw_signal.clone()),
            target_resolved: o.target_resolved,
            confidence: confidence_code(o.confidence),
            bot_aware: o.bot_aware,
            actor_summary: (
                o.actor_summary.visible_non_bot_actor_count,
                o.actor_summary.bot_actor_count,
            ),
            details: json_text(&o.details),
            notes: o.notes.clone(),
            windows: stored_windows(&o.windows),
            time_to_acceptance_hours: o.time_to_acceptance_hours,
            dedicated_evaluator: o.dedicated_evaluator,
        }
    }

    pub(super) fn into_model(
        self,
        e: &ExecutionRecord,
    ) -> std::result::Result<OutcomeRecord, String> {
        let target = match self.target {
            Some(t) => t.map(TargetV3::into_model).transpose()?,
            None => e.target.clone(),
        };
        let gh_aw_signal = self.gh_aw_signal.unwrap_or_else(|| {
            safe_outcomes_model::signal::gh_aw_word(&self.human_check_signal).to_string()
        });
        let mut windows = safe_outcomes_model::Windows::new();
        for (name, w) in self.windows {
            let snapshot = WindowSnapshot {
                outcome_status: status_of(w.status)?,
                evidence_strength: strength_of(w.strength)?,
                human_check_signal: w.signal,
                evaluated_at: w.evaluated_at.into_model()?,
            };
            windows.insert(name, snapshot);
        }
        Ok(OutcomeRecord {
            safe_output_id: self.safe_output_id.unwrap_or_else(|| e.id.clone()),
            safe_output_type: self
                .safe_output_type
                .unwrap_or_else(|| e.output_type.clone()),
            target,
            run_id: self.run_id.unwrap_or(e.run_id),
            workflow: self.workflow.unwrap_or_else(|| e.workflow.clone()),
            created_at: match self.created_at {
                Some(t) => t.into_model()?,
                None => e.executed_at,
            },
            evaluated_at: self.evaluated_at.into_model()?,
            evaluation_window_hours: self.evaluation_window_hours,
            outcome_status: status_of(self.outcome_status)?,
            evidence_strength: strength_of(self.evidence_strength)?,
            human_check_signal: self.human_check_signal,
            gh_aw_signal,
            target_resolved: self.target_resolved,
            confidence: confidence_of(self.confidence)?,
            bot_aware: self.bot_aware,
            actor_summary: ActorSummary {
                visible_non_bot_actor_count: self.actor_summary.0,
                bot_actor_count: self.actor_summary.1,
            },
            details: json_map(&self.details)?,
            notes: self.notes,
            windows,
            time_to_acceptance_hours: self.time_to_acceptance_hours,
            dedicated_evaluator: self.dedicated_evaluator,
        })
    }
}

#[derive(Serialize, Deserialize)]
pub(super) struct OutputV3 {
    pub(super) execution: ExecutionV3,
    pub(super) outcome: Option<OutcomeV3>,
    pub(super) trace_id: Option<String>,
}

impl From<&StoredOutput> for OutputV3 {
    fn from(s: &StoredOutput) -> OutputV3 {
        OutputV3 {
            execution: ExecutionV3::from(&s.execution),
            outcome: s.outcome.as_ref().map(|o| OutcomeV3::new(o, &s.execution)),
            trace_id: s.trace_id.clone(),
        }
    }
}

impl Stored<StoredOutput> for OutputV3 {
    fn into_model(self) -> std::result::Result<StoredOutput, String> {
        let execution = self.execution.into_model()?;
        let outcome = self.outcome.map(|o| o.into_model(&execution)).transpose()?;
        Ok(StoredOutput {
            execution,
            outcome,
            trace_id: self.trace_id,
        })
    }
}
