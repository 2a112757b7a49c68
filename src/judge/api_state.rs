//! Judging an output from fetched API state (the path of day-one backfill,
//! reconcile and gh-aw's conformance cases): API failures first (DESIGN §7),
//! then the record's own gaps, then the type's evaluator over the
//! observations `ingest::reconcile` reads from the state.

use chrono::{DateTime, Utc};

use crate::ingest::reconcile::{
    is_answer_404, observations_from_api, required_endpoints, undated_activity, ApiState,
};
use crate::model::{
    Evaluation, EvidenceStrength as S, ExecutionRecord, OutcomeStatus as O, Signal,
};

/// Judge an output from fetched API state as of `as_of`. API failures come
/// first (DESIGN §7, gh-aw's Oct 2026 rules), then the record's own gaps, then
/// the type's evaluator over `observations_from_api`; a failed supplementary
/// read last ([`unread_rule`]).
pub(crate) fn assess_from_api(
    record: &ExecutionRecord,
    state: &ApiState,
    as_of: DateTime<Utc>,
) -> Evaluation {
    // General rule 1: what the record lacks decides before any fetch.
    if let Some(gap) = super::evaluate::rules::execution_state(record) {
        return gap;
    }
    let required = required_endpoints(record);
    let primary = required.iter().find(|e| e.primary).map(|e| e.path.as_str());
    if let Some(e) = primary_failure(record, state, primary) {
        return e;
    }
    let system = matches!(
        record.output_type.as_str(),
        "noop" | "missing_tool" | "missing_data" | "report_incomplete"
    );
    if record.target.is_none() && required.is_empty() && !system {
        return Evaluation::new(O::Unknown, S::None, Signal::MissingReference)
            .unresolved()
            .note("The execution record names no target object, so there is nothing to fetch.");
    }
    if let Some(p) = primary.filter(|p| !state.responses.contains_key(*p)) {
        return evaluation_error(p, None)
            .note("The output's own object was not fetched, so it cannot be judged.");
    }
    // A state read without its time (gh-aw's cases, fixtures) was read
    // when it is judged: what it shows undated is proven as of then.
    let observations = if state.read_at.is_none() {
        let read = ApiState {
            read_at: Some(as_of),
            ..state.clone()
        };
        observations_from_api(record, &read)
    } else {
        observations_from_api(record, state)
    };
    let e = super::evaluate::evaluate(record, &observations, as_of);
    let e = undated_rule(e, &undated_activity(state));
    unread_rule(e, &unread(state, primary))
}

/// The supplementary reads that failed (not answers, not the primary), as
/// `(path, status)`.
fn unread<'s>(state: &'s ApiState, primary: Option<&str>) -> Vec<(&'s str, u16)> {
    state
        .errors
        .iter()
        .filter(|(p, s)| {
            Some(p.as_str()) != primary && !(200..300).contains(*s) && !is_answer_404(p, **s)
        })
        .map(|(p, s)| (p.as_str(), *s))
        .collect()
}

/// True when the verdict rests on a fact that was read (a merge, a close, a
/// label still there, a reply), not on the absence of one: a read that
/// failed could not have shown it, so the verdict stands.
pub(crate) fn decided_by_a_fact(e: &Evaluation) -> bool {
    let decided = matches!(e.status, O::Accepted | O::Rejected)
        || (e.status == O::Ignored && e.signal == Signal::Lifecycle);
    decided && !NO_ENGAGEMENT.contains(&e.signal)
}

/// General rule 9 (gh-aw Norm 2): a supplementary read that failed (a 5xx,
/// a rate limit, a timeout, a 404 on a list) lowers confidence and never
/// overrides the fact that decides. The output is judged on what was read;
/// a verdict decided by a fact stands, one step less confident, with
/// `details.unread` naming the failed reads. A verdict that rests on the
/// absence of something the failed read could have shown (pending, nobody
/// engaged, ignored, a review missing) cannot be concluded: it is an
/// evaluation error.
fn unread_rule(e: Evaluation, failed: &[(&str, u16)]) -> Evaluation {
    let Some((path, status)) = failed.first() else {
        return e;
    };
    let paths: Vec<String> = failed.iter().map(|(p, _)| p.to_string()).collect();
    if decided_by_a_fact(&e) {
        let notes = format!(
            "{} Some supplementary state could not be read ({}); the verdict rests on the fact that decides it, with lower confidence.",
            e.notes,
            paths.join(", ")
        );
        return super::evaluate::hedge(e)
            .detail("unread", paths)
            .note(notes.trim_start());
    }
    evaluation_error(path, Some(*status))
        .detail("would_be", format!("{}/{}/{}", e.status.as_str(), e.strength.as_str(), e.signal))
        .detail("unread", paths)
        .note("Fetching supplementary state failed (a 404 there is not deletion), and the verdict would rest on what it could have shown; the outcome cannot be judged until it succeeds.")
}

/// Signals that say nobody (or not the people asked) engaged.
pub(crate) const NO_ENGAGEMENT: &[Signal] = &[
    Signal::NoEngagement,
    Signal::ReviewMissing,
    Signal::ReviewRequestRemoved,
];

/// General rule 2: facts whose time is unknown are never dropped silently.
/// A comment, review or commit by someone other than a bot that carries no
/// valid time (or a review still `PENDING`) may be engagement after the
/// output: a negative verdict ("ignored", "no engagement", "nobody asked
/// reviewed") is then impossible, and the answer is unknown.
fn undated_rule(e: Evaluation, undated: &[String]) -> Evaluation {
    let negative = e.status == O::Ignored || NO_ENGAGEMENT.contains(&e.signal);
    if !negative || undated.is_empty() {
        return e;
    }
    Evaluation::new(O::Unknown, S::Weak, Signal::ActivityTimeUnknown)
        .detail("would_be", format!("{}/{}/{}", e.status.as_str(), e.strength.as_str(), e.signal))
        .detail("undated", undated.to_vec())
        .note("Activity by someone other than a bot has no usable time, so no engagement cannot be concluded.")
}

/// A 404/410 on the primary object is its loss (general rule 6: deletion
/// only for outputs that created it); any other failure of the primary
/// object (5xx, rate limit, timeout, 401/403) is an evaluation error, never
/// a verdict.
fn primary_failure(
    record: &ExecutionRecord,
    state: &ApiState,
    primary: Option<&str>,
) -> Option<Evaluation> {
    let (path, status) = state.errors.get_key_value(primary?)?;
    if (200..300).contains(status) {
        return None;
    }
    if matches!(*status, 404 | 410) {
        return Some(super::evaluate::rules::object_gone(record, path, *status));
    }
    Some(evaluation_error(path, Some(*status)).note(
        "Fetching the output's own object failed; the outcome cannot be judged until it succeeds.",
    ))
}

/// gh-aw's `error`: our `unknown/weak/evaluation_error`.
fn evaluation_error(path: &str, status: Option<u16>) -> Evaluation {
    Evaluation::new(O::Unknown, S::Weak, Signal::EvaluationError)
        .unresolved()
        .detail("endpoint", path)
        .detail("http_status", status)
}
