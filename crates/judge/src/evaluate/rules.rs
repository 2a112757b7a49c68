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

#[cfg(test)]
mod tests {
    use crate::evaluate::testkit::*;
    use safe_outcomes_model::{ExecutionRecord, ObservationKind as K};

    fn failed() -> safe_outcomes_model::Observation {
        obs(
            2.0,
            None,
            K::ReconcileFailed {
                detail: "GET issues/7: 502".into(),
            },
        )
    }

    /// Rule 1: what the record lacks decides before anything observed and
    /// before any API failure (docs/evaluation.md, General rules 1; seed 000
    /// §4 "Without execution-time metadata, mutable operations cannot be
    /// evaluated"), and names what the type needs.
    #[test]
    fn the_record_s_gap_decides_before_any_api_failure() {
        let gap = eval(&record("add_labels"), vec![failed()], 24.0);
        assert_eq!(gap.signal.as_str(), "missing_execution_state", "{gap:?}");
        assert!(gap.details.contains_key("needs"), "{gap:?}");
        let complete = record("add_labels").labels_added(&["bug"]);
        let error = eval(&complete, vec![failed()], 24.0);
        assert_eq!(error.signal.as_str(), "evaluation_error", "{error:?}");
        // Rule 11 also decides before an API failure.
        let no_delta = ExecutionRecord {
            labels_before: Some(strings(&["bug"])),
            ..complete
        };
        let e = eval(&no_delta, vec![failed()], 24.0);
        assert_eq!(e.signal.as_str(), "no_state_delta", "{e:?}");
    }

    /// An output sent to another provider cannot be observed here; GitHub
    /// named as the provider is GitHub.
    #[test]
    fn only_github_outputs_are_judged() {
        let on = |provider: &str| ExecutionRecord {
            provider: Some(provider.into()),
            ..record("create_issue")
        };
        let created = || opened_by_workflow(open());
        let external = eval(&on("gitlab"), vec![created()], 24.0);
        assert_eq!(
            external.triple(),
            (UNKNOWN, NONE, safe_outcomes_model::Signal::ExternalProvider)
        );
        assert!(!external.target_resolved);
        let github = eval(&on("github"), vec![created()], 24.0);
        assert_eq!(github.signal.as_str(), "awaiting_triage", "{github:?}");
    }
}
