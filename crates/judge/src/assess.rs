//! Assessment: turn an execution record and the observations of its targets
//! into the outcome record users read, with a snapshot per passed checkpoint.
//! Pure: the same inputs give the same record, whatever the delivery order.

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

use crate::evaluate::{actor_summary, evaluate};
use safe_outcomes_model::sane_time::plus;
use safe_outcomes_model::{
    Evaluation, EvidenceStrength, ExecutionRecord, Observation, OutcomeRecord, OutcomeStatus,
    WindowSnapshot, Windows, CHECKPOINTS,
};

/// The outcome record of `record` as of `now`.
pub fn assess(
    record: &ExecutionRecord,
    observations: &[Observation],
    now: DateTime<Utc>,
) -> OutcomeRecord {
    // GitHub's clock may run a little ahead of ours: the current outcome sees
    // every observation we hold.
    let latest = observations.last().map(|o| o.at).unwrap_or(now);
    let current = evaluate(record, observations, now.max(latest));
    let mut windows = Windows::new();
    for (name, due) in checkpoints(record.executed_at) {
        if due <= now {
            let e = evaluate(record, observations, due);
            windows.insert(
                name,
                WindowSnapshot {
                    outcome_status: e.status,
                    evidence_strength: e.strength,
                    human_check_signal: e.signal.into(),
                    evaluated_at: due,
                },
            );
        }
    }
    build_record(record, observations, current, windows, now)
}

/// The time to judge an output as of: `now`, or the time its outcome on
/// record was judged when the wall clock stands earlier than that (it was
/// stepped back, by NTP or by hand). An output is never judged as of an
/// earlier time than it already was: a checkpoint snapshot once taken
/// stays, a final verdict stays final, and a checkpoint already passed is
/// not scheduled, nor taken, a second time. Once the clock passes the
/// record's time again, `now` rules as before. (A clock stepped *forward*
/// by mistake takes the checkpoints it passes early; nothing here can tell
/// that from real time.)
pub fn judged_as_of(previous: Option<&OutcomeRecord>, now: DateTime<Utc>) -> DateTime<Utc> {
    previous.map_or(now, |o| now.max(o.evaluated_at))
}

/// The checkpoint names and due times for an output executed at `executed_at`.
pub fn checkpoints(
    executed_at: DateTime<Utc>,
) -> impl Iterator<Item = (&'static str, DateTime<Utc>)> {
    CHECKPOINTS
        .iter()
        .map(move |(name, hours)| (*name, plus(executed_at, Duration::hours(*hours))))
}

/// The next checkpoint after `now`, if any remains.
pub fn next_checkpoint(executed_at: DateTime<Utc>, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    checkpoints(executed_at)
        .map(|(_, due)| due)
        .find(|due| *due > now)
}

fn build_record(
    record: &ExecutionRecord,
    observations: &[Observation],
    e: Evaluation,
    windows: Windows,
    now: DateTime<Utc>,
) -> OutcomeRecord {
    let elapsed_hours = (now - record.executed_at).num_minutes() as f64 / 60.0;
    let window_hours = CHECKPOINTS
        .iter()
        .map(|(_, h)| *h)
        .find(|h| elapsed_hours <= *h as f64)
        .unwrap_or(CHECKPOINTS[CHECKPOINTS.len() - 1].1);
    let time_to_acceptance_hours = match (e.status, e.decided_at) {
        (OutcomeStatus::Accepted, Some(at)) => Some(
            ((at - record.executed_at).num_seconds().max(0) as f64 / 3600.0 * 100.0).round()
                / 100.0,
        ),
        _ => None,
    };
    OutcomeRecord {
        safe_output_id: record.id.clone(),
        safe_output_type: record.output_type.clone(),
        target: record.target.clone(),
        run_id: record.run_id,
        workflow: record.workflow.clone(),
        created_at: record.executed_at,
        evaluated_at: now,
        evaluation_window_hours: window_hours,
        outcome_status: e.status,
        evidence_strength: e.strength,
        gh_aw_signal: e.signal.gh_aw().to_string(),
        human_check_signal: e.signal.into(),
        target_resolved: e.target_resolved,
        confidence: e.confidence,
        bot_aware: true,
        actor_summary: actor_summary(record, observations),
        details: e.details,
        notes: e.notes,
        windows,
        time_to_acceptance_hours,
        dedicated_evaluator: e.dedicated,
    }
}

/// One change of outcome, for the history shown by `GET /api/v1/outputs/{id}`.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Transition {
    /// When the outcome changed (the observation's GitHub time, or the time that passed).
    pub at: DateTime<Utc>,
    /// The outcome from then on.
    pub outcome_status: OutcomeStatus,
    /// Its evidence strength.
    pub evidence_strength: EvidenceStrength,
    /// Its signal: what a careful human would check.
    pub human_check_signal: String,
    /// The observation that brought the change, when one did (otherwise time did).
    pub observation: Option<String>,
}

/// The history of outcomes, derived by evaluating at each observation and
/// checkpoint up to `now` (so it too is independent of delivery order).
pub fn transitions(
    record: &ExecutionRecord,
    observations: &[Observation],
    now: DateTime<Utc>,
) -> Vec<Transition> {
    let mut instants: Vec<(DateTime<Utc>, Option<&str>)> = vec![(record.executed_at, None)];
    instants.extend(
        observations
            .iter()
            .filter(|o| o.at >= record.executed_at)
            .map(|o| (o.at, Some(o.id.as_str()))),
    );
    instants.extend(
        checkpoints(record.executed_at)
            .filter(|(_, d)| *d <= now)
            .map(|(_, d)| (d, None)),
    );
    instants.sort_by_key(|(at, _)| *at);
    let mut out: Vec<Transition> = Vec::new();
    for (at, obs) in instants {
        let e = evaluate(record, observations, at);
        let changed = out.last().is_none_or(|t| {
            (
                t.outcome_status,
                t.evidence_strength,
                t.human_check_signal.as_str(),
            ) != (e.status, e.strength, e.signal.as_str())
        });
        if changed {
            out.push(Transition {
                at,
                outcome_status: e.status,
                evidence_strength: e.strength,
                human_check_signal: e.signal.into(),
                observation: obs.map(str::to_string),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::testkit::*;
    use safe_outcomes_model::ObservationKind;

    fn hours(h: f64) -> Duration {
        Duration::seconds((h * 3600.0) as i64)
    }

    /// A PR the agent opened and a person merged `merge_at` hours later.
    fn merged_pr(merge_at: f64) -> (ExecutionRecord, Vec<Observation>) {
        let r = record("create_pull_request");
        let observations = vec![
            opened_by_workflow(open()),
            obs(merge_at, human("alice"), ObservationKind::Closed).snap(merged(human("alice"))),
        ];
        (r, observations)
    }

    #[test]
    fn the_next_checkpoint_is_the_first_strictly_after_now() {
        let e = exec_time();
        assert_eq!(next_checkpoint(e, e), Some(e + hours(1.0)));
        assert_eq!(next_checkpoint(e, e + hours(1.0)), Some(e + hours(24.0)));
        assert_eq!(next_checkpoint(e, e + hours(23.9)), Some(e + hours(24.0)));
        assert_eq!(next_checkpoint(e, e + hours(719.9)), Some(e + hours(720.0)));
        assert_eq!(next_checkpoint(e, e + hours(720.0)), None);
        assert_eq!(next_checkpoint(e, e + hours(9999.0)), None);
    }

    #[test]
    fn a_window_is_taken_once_due_and_judged_as_of_its_due_time() {
        let (r, o) = merged_pr(30.0);
        let at_24h = assess(&r, &o, at(24.0));
        assert_eq!(at_24h.windows.keys().collect::<Vec<_>>(), ["1h", "24h"]);
        let w = at_24h.windows.get("24h").unwrap();
        assert_eq!(w.evaluated_at, at(24.0));
        assert_eq!(w.outcome_status, PENDING, "the merge came after 24h");
        assert_eq!(at_24h.evaluation_window_hours, 24);
        let week = assess(&r, &o, at(24.0 * 7.0));
        assert_eq!(week.windows.get("7d").unwrap().outcome_status, ACCEPTED);
        assert_eq!(week.evaluation_window_hours, 168);
        assert!(!week.windows.contains_key("30d"));
        let late = assess(&r, &o, at(2000.0));
        assert_eq!(late.windows.len(), 4);
        assert_eq!(late.evaluation_window_hours, 720);
        assert_eq!(assess(&r, &o, at(25.0)).evaluation_window_hours, 168);
    }

    #[test]
    fn time_to_acceptance_is_hours_to_the_deciding_fact_rounded_to_hundredths() {
        let (r, o) = merged_pr(49.5);
        let a = assess(&r, &o, at(100.0));
        assert_eq!(a.outcome_status, ACCEPTED);
        assert_eq!(a.time_to_acceptance_hours, Some(49.5));
        // 10 min 20 s: 0.17 h.
        let (r, o) = merged_pr(620.0 / 3600.0);
        assert_eq!(assess(&r, &o, at(1.0)).time_to_acceptance_hours, Some(0.17));
        let (r, o) = merged_pr(49.5);
        let pending = assess(&r, &o[..1], at(100.0));
        assert_ne!(pending.outcome_status, ACCEPTED);
        assert_eq!(pending.time_to_acceptance_hours, None);
    }

    #[test]
    fn transitions_list_each_change_once_with_the_fact_that_brought_it() {
        let (r, o) = merged_pr(30.0);
        let t = transitions(&r, &o, at(200.0));
        assert_eq!(t[0].at, r.executed_at, "{t:?}");
        assert_eq!(t[0].observation, None);
        let merge = t
            .iter()
            .find(|x| x.outcome_status == ACCEPTED)
            .expect("accepted");
        assert_eq!(merge.at, at(30.0));
        assert_eq!(merge.observation.as_deref(), Some(o[1].id.as_str()));
        for pair in t.windows(2) {
            assert!(pair[0].at <= pair[1].at);
            assert_ne!(
                (
                    pair[0].outcome_status,
                    pair[0].evidence_strength,
                    &pair[0].human_check_signal
                ),
                (
                    pair[1].outcome_status,
                    pair[1].evidence_strength,
                    &pair[1].human_check_signal
                ),
                "a transition is a change"
            );
        }
        // The opening before execution is no instant; checkpoints after
        // `now` are none either.
        assert!(t.iter().all(|x| x.at >= r.executed_at));
        let early = transitions(&r, &o[..1], at(2.0));
        assert!(early.iter().all(|x| x.at <= at(2.0)), "{early:?}");
        assert!(!transitions(&r, &o, at(0.0)).is_empty());
    }
}
