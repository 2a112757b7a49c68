//! System outputs (seed 000 §7 "System Outputs"): nothing human-facing to judge.

use super::EvalContext;
use safe_outcomes_model::{Evaluation, EvidenceStrength as S, OutcomeStatus as O, Signal};

/// `noop`, `missing_tool`, `missing_data`, `report_incomplete`: always
/// `skipped/none`, with the signal naming why.
pub fn skipped(ctx: &EvalContext) -> Evaluation {
    let (signal, note) = match ctx.record.output_type.as_str() {
        "noop" => (Signal::NoActionRequested, "The agent asked for no action."),
        "missing_tool" => (
            Signal::ToolUnavailable,
            "The agent reported a tool it did not have.",
        ),
        "missing_data" => (
            Signal::DataUnavailable,
            "The agent reported data it could not get.",
        ),
        "report_incomplete" => (
            Signal::ReportIncomplete,
            "The agent reported it could not finish.",
        ),
        _ => (
            Signal::NoActionRequested,
            "A system output with nothing to evaluate.",
        ),
    };
    // No GitHub object is involved, so there is no target to resolve.
    Evaluation::new(O::Skipped, S::None, signal)
        .unresolved()
        .note(note)
}

#[cfg(test)]
mod tests {
    use crate::evaluate::testkit::*;

    #[test]
    fn system_outputs_are_skipped() {
        run_rows!(record("noop"), 1.0;
            "noop": [] => (SKIPPED, NONE, "no_action_requested");
            "missing_tool": [] => (SKIPPED, NONE, "tool_unavailable"), on record("missing_tool");
            "missing_data": [] => (SKIPPED, NONE, "data_unavailable"), on record("missing_data");
            "report_incomplete": [] => (SKIPPED, NONE, "report_incomplete"), on record("report_incomplete");
        );
    }

    #[test]
    fn skipped_ignores_observations() {
        let o = vec![obs(1.0, human("alice"), comment(1))];
        let e = eval(&record("noop"), o, 24.0);
        assert!(e.notes.contains("asked for no action"), "{e:?}");
        assert_eq!(
            e.triple(),
            (
                SKIPPED,
                NONE,
                safe_outcomes_model::Signal::NoActionRequested
            )
        );
        assert!(!e.target_resolved);
    }
}
