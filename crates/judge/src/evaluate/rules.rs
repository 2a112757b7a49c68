//! The general rules of docs/evaluation.md, applied once, before any type's
//! own rules, on both paths (webhook observations and API state):
//!
//! 1. **Execution state first.** Each evaluator opens by checking that the
//!    record names what its type needs (a target; the before/after state of
//!    a mutation; the label, milestone, reviewer or assignee it set; a
//!    correlation id: run, review, comment, commit). [`execution_state`]
//!    runs that opening alone, on no observations at all, so a record that
//!    lacks what its type needs is `unknown/none/missing_execution_state`
//!    (or `missing_reference` without any target) before anything is
//!    fetched, and before any API-failure rule. Correlation ids are
//!    validated where they are read (`wire::github_id`: 0, negative or
//!    unparsable is no id).
//!    The same opening also finds rule 11: a record whose before-state
//!    already held what the output set (a label already there, a user
//!    already assigned, equal before and after states) changed nothing, so
//!    there is nothing to retain: `unknown/none/no_state_delta`.
//! 6. **Deletion.** [`object_gone`]: a 404/410 of the output's own object
//!    is `rejected/strong/deleted` only for outputs that created it; for an
//!    output that changed or closed an existing object it says nothing about
//!    the change (`unknown/none/deleted`), and a workflow run that cannot be
//!    found is `unknown/none/workflow_run_missing`.
//!
//! Rules 2–5 and 7 are properties of every evaluator (facts that matter,
//! identity, current state as evidence, latest wins, git history); the
//! property tests in `rules_tests` check each across every registered type.

use super::registry::{spec_of, Effect};
use super::EvalContext;
use safe_outcomes_model::{
    Evaluation, EvidenceStrength as S, ExecutionRecord, OutcomeStatus as O, Signal,
};

/// Signals that say the record, not the world, is what is missing.
pub const RECORD_GAPS: &[Signal] = &[
    Signal::MissingReference,
    Signal::MissingExecutionState,
    Signal::MissingRunId,
];

/// Rule 1: the verdict when the record lacks what its type needs, else
/// `None`. Types without a dedicated evaluator need only a target, which the
/// generic fallback checks itself.
pub fn execution_state(record: &ExecutionRecord) -> Option<Evaluation> {
    if record.provider.as_deref().is_some_and(|p| p != "github") {
        return Some(
            Evaluation::new(O::Unknown, S::None, Signal::ExternalProvider)
                .unresolved()
                .note("The output went to a non-GitHub provider, which this App cannot observe."),
        );
    }
    let spec = spec_of(&record.output_type)?;
    let ctx = EvalContext {
        record,
        observations: &[],
        as_of: record.executed_at,
    };
    let e = (spec.evaluator)(&ctx);
    if e.signal == Signal::NoStateDelta {
        // Rule 11: nothing to retain, whatever is observed or fetched.
        return Some(e);
    }
    RECORD_GAPS
        .contains(&e.signal)
        .then(|| e.detail("needs", spec.needs))
}

/// Rule 6: the verdict when the API answers 404/410 for the output's own
/// object (`path`).
pub fn object_gone(record: &ExecutionRecord, path: &str, status: u16) -> Evaluation {
    let effect = spec_of(&record.output_type).map_or(Effect::Changes, |t| t.effect);
    let e = match effect {
        Effect::Creates => Evaluation::new(O::Rejected, S::Strong, Signal::Deleted)
            .note("The output's own object is gone (the API answers 404/410 for it): what it created was removed."),
        Effect::Runs => Evaluation::new(O::Unknown, S::None, Signal::WorkflowRunMissing)
            .note("The workflow run the output started cannot be found (404/410): whether it ran cannot be judged."),
        Effect::Changes | Effect::Nothing => Evaluation::new(O::Unknown, S::None, Signal::Deleted)
            .note("The object the output changed is gone (404/410); its deletion says nothing about whether the change was right."),
    };
    e.unresolved()
        .detail("endpoint", path)
        .detail("http_status", status)
}
