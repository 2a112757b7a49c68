//! The generic fallback for types without a dedicated evaluator. Seed 000 §8:
//! existence is never acceptance, so the best it can say is `target_exists_only`.

use super::common::{gone, missing_reference, unobserved};
use super::EvalContext;
use safe_outcomes_model::{Evaluation, EvidenceStrength as S, OutcomeStatus as O, Signal};

/// Never `accepted`: deleted by a visible non-bot → rejected; seen → pending/weak
/// `target_exists_only`; nothing seen → unknown.
pub fn generic(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = missing_reference(ctx) {
        return e;
    }
    if let Some(e) = gone(ctx, true) {
        return e;
    }
    if !ctx.target_seen() {
        return unobserved();
    }
    Evaluation::new(O::Pending, S::Weak, Signal::TargetExistsOnly)
        .note("The target exists; no type-specific rule judges it, and existence alone is not acceptance.")
}

#[cfg(test)]
mod tests {
    use crate::evaluate::testkit::*;
    use safe_outcomes_model::ObservationKind as K;

    #[test]
    fn fallback_never_accepts() {
        let t = || record("custom_safe_job");
        run_rows!(t(), 24.0;
            + unobserved_case("nothing seen", t());
            "seen, even with human activity":
                [obs(0.0, workflow_actor(), K::Opened).snap(open()), obs(2.0, human("alice"), comment(5))] => (PENDING, WEAK, "target_exists_only"), at 720.0;
            "deleted by a human":
                [obs(0.0, workflow_actor(), K::Opened), obs(3.0, human("alice"), K::Deleted)] => (REJECTED, STRONG, "deleted");
            "deleted by a bot": [obs(3.0, bot("cleanup[bot]"), K::Deleted)] => (UNKNOWN, NONE, "deleted");
            "no target named": [] => (UNKNOWN, NONE, "missing_reference"), on t().no_target();
        );
    }

    #[test]
    fn fallback_is_marked_not_dedicated_and_resolution_follows_observation() {
        let seen = eval(
            &record("custom_safe_job"),
            vec![obs(0.0, workflow_actor(), K::Opened)],
            1.0,
        );
        assert!(!seen.dedicated);
        assert!(seen.target_resolved);
        let unseen = eval(&record("custom_safe_job"), vec![], 1.0);
        assert!(!unseen.target_resolved);
    }
}
