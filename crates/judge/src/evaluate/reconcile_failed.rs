//! Failed API reconciliations (`ObservationKind::ReconcileFailed`): when they
//! are all that is known of an output, the outcome is an evaluation error
//! (DESIGN §7: an API failure is never a verdict); once anything else is
//! known (a later successful reconcile, any webhook fact) they are dropped
//! and the type's evaluator judges the rest.

use std::borrow::Cow;

use safe_outcomes_model::{
    Evaluation, EvidenceStrength as S, Observation, ObservationKind as K, OutcomeStatus as O,
    Signal,
};

fn is_failure(o: &Observation) -> bool {
    matches!(o.event, K::ReconcileFailed { .. })
}

/// What the evaluators should see: either the verdict that only failures are
/// known (`Err`), or the observations without the failures.
pub fn screen(observations: &[Observation]) -> Result<Cow<'_, [Observation]>, Evaluation> {
    if !observations.iter().any(is_failure) {
        return Ok(Cow::Borrowed(observations));
    }
    let rest: Vec<Observation> = observations
        .iter()
        .filter(|o| !is_failure(o))
        .cloned()
        .collect();
    if !rest.is_empty() {
        return Ok(Cow::Owned(rest));
    }
    let last = observations.iter().rev().find(|o| is_failure(o));
    let detail = match last.map(|o| &o.event) {
        Some(K::ReconcileFailed { detail }) => detail.clone(),
        _ => String::new(),
    };
    let attempts = observations.iter().filter(|o| is_failure(o)).count();
    Err(Evaluation::new(O::Unknown, S::Weak, Signal::EvaluationError)
        .unresolved()
        .detail("reconcile_error", detail)
        .detail("reconcile_attempts", attempts)
        .note("Nothing was observed of the target and reading its state from the GitHub API failed; the outcome cannot be judged until a later attempt succeeds."))
}

#[cfg(test)]
mod tests {
    use crate::evaluate::testkit::*;
    use safe_outcomes_model::{Observation, ObservationKind as K};

    fn failed(hours: f64) -> Observation {
        obs(
            hours,
            None,
            K::ReconcileFailed {
                detail: "pulls.get: retry budget exhausted".into(),
            },
        )
    }

    #[test]
    fn reconcile_failures_decide_only_when_nothing_else_is_known() {
        let pr = || record("create_pull_request");
        let opened = || opened_by_workflow(open());
        let merge = |h: f64| obs(h, human("alice"), K::Closed).snap(merged(human("alice")));
        run_rows!(pr(), 2.0;
            "one failed reconcile, nothing else": [failed(1.0)] => (UNKNOWN, WEAK, "evaluation_error");
            "several failed reconciles": [failed(1.0), failed(2.0), failed(4.0)] => (UNKNOWN, WEAK, "evaluation_error"), at 5.0;
            "a failure not yet happened at as-of is not seen": [failed(3.0)] => (UNKNOWN, NONE, "target_unobserved");
            "a later successful reconcile supersedes the failure":
                [failed(1.0), opened(), merge(0.5)] => (ACCEPTED, STRONG, "merged");
            "a webhook fact after the failure supersedes it":
                [opened(), failed(1.0), merge(3.0)] => (ACCEPTED, STRONG, "merged"), at 4.0;
            "facts before the failure still count":
                [opened_by_workflow(open()), failed(1.0)] => (PENDING, WEAK, "awaiting_triage"), on record("create_issue");
        );
    }

    #[test]
    fn the_error_names_the_failure_and_the_attempts() {
        let e = eval(&record("create_issue"), vec![failed(1.0), failed(2.0)], 3.0);
        assert_eq!(e.details["reconcile_attempts"], 2);
        assert_eq!(
            e.details["reconcile_error"],
            "pulls.get: retry budget exhausted"
        );
    }
}
