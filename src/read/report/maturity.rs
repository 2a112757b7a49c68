//! Time made visible: where an output stands in its windows (T+1h, 24h, 7d,
//! 30d after execution): which window comes next and when it is due, and
//! when its verdict is final (the last window reached). And the maturity a
//! trend is read at: the latest window every output in a range has reached,
//! so recent weeks are not compared, half-judged, with old ones.

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

use crate::model::sane_time::plus;
use crate::model::{OutcomeRecord, Windows, CHECKPOINTS};

/// An output's place in its windows.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Schedule {
    /// The windows whose verdict is recorded, in time order.
    #[schema(value_type = Vec<String>)]
    pub windows_reached: Vec<&'static str>,
    /// The first window not reached yet (`None` once the verdict is final).
    #[schema(value_type = Option<String>)]
    pub next_window: Option<&'static str>,
    /// When that window is due (execution time + its hours); in the past
    /// while the evaluation that records it is still to run.
    pub next_window_due_at: Option<DateTime<Utc>>,
    /// True once the last window (30d) is recorded: the verdict no longer
    /// changes with time (a later revert still counts, as a new fact).
    pub verdict_final: bool,
    /// When the verdict is (or was) final: execution time + 30 days.
    pub final_at: DateTime<Utc>,
}

/// When window `hours` falls for an output executed at `executed_at`.
pub fn due(executed_at: DateTime<Utc>, hours: i64) -> DateTime<Utc> {
    plus(executed_at, Duration::hours(hours))
}

/// The schedule of an output executed at `executed_at` with the window
/// snapshots `windows`.
pub fn schedule(executed_at: DateTime<Utc>, windows: &Windows) -> Schedule {
    let reached: Vec<&'static str> = CHECKPOINTS
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| windows.contains_key(name))
        .collect();
    let next = CHECKPOINTS
        .iter()
        .find(|(name, _)| !windows.contains_key(name));
    let last = CHECKPOINTS[CHECKPOINTS.len() - 1];
    Schedule {
        windows_reached: reached,
        next_window: next.map(|(name, _)| *name),
        next_window_due_at: next.map(|(_, hours)| due(executed_at, *hours)),
        verdict_final: windows.contains_key(last.0),
        final_at: due(executed_at, last.1),
    }
}

/// The schedule of a judged output.
pub fn schedule_of(record: &OutcomeRecord) -> Schedule {
    schedule(record.created_at, &record.windows)
}

/// Outputs by the window they await next (`CHECKPOINTS` names), and the
/// count whose verdict is final under `"final"`. Every name is present.
pub fn awaiting<'a>(
    records: impl IntoIterator<Item = &'a OutcomeRecord>,
) -> Vec<(&'static str, u64)> {
    let mut counts: Vec<(&'static str, u64)> = CHECKPOINTS
        .iter()
        .map(|(name, _)| (*name, 0))
        .chain([("final", 0)])
        .collect();
    for r in records {
        let name = schedule_of(r).next_window.unwrap_or("final");
        if let Some(c) = counts.iter_mut().find(|(n, _)| *n == name) {
            c.1 += 1;
        }
    }
    counts
}

/// The latest window every one of `records` has reached: the default
/// maturity of a trend. `1h` when some have not reached even that (their
/// weeks are then marked immature); `30d` when there are none.
pub fn mature_window<'a>(records: impl IntoIterator<Item = &'a OutcomeRecord>) -> &'static str {
    let mut latest = CHECKPOINTS.len();
    for r in records {
        let reached = CHECKPOINTS
            .iter()
            .take_while(|(name, _)| r.windows.contains_key(name))
            .count();
        latest = latest.min(reached);
        if latest == 0 {
            break;
        }
    }
    CHECKPOINTS[latest.max(1) - 1].0
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::{EvidenceStrength, OutcomeStatus, WindowSnapshot};
    use crate::read::at;

    fn snapshots(names: &[&str]) -> Windows {
        names
            .iter()
            .map(|n| {
                (
                    n.to_string(),
                    WindowSnapshot {
                        outcome_status: OutcomeStatus::Pending,
                        evidence_strength: EvidenceStrength::Weak,
                        human_check_signal: "open".into(),
                        evaluated_at: at("2026-10-01T00:00:00Z"),
                    },
                )
            })
            .collect()
    }

    #[test]
    fn the_next_window_is_the_first_not_reached_and_30d_makes_it_final() {
        let t = at("2026-10-01T09:00:00Z");
        let s = schedule(t, &snapshots(&["1h", "24h"]));
        assert_eq!(s.next_window, Some("7d"));
        assert_eq!(s.next_window_due_at, Some(at("2026-10-08T09:00:00Z")));
        assert!(!s.verdict_final);
        assert_eq!(s.final_at, at("2026-10-31T09:00:00Z"));
        let fresh = schedule(t, &snapshots(&[]));
        assert_eq!(fresh.next_window, Some("1h"));
        assert_eq!(fresh.next_window_due_at, Some(at("2026-10-01T10:00:00Z")));
        let done = schedule(t, &snapshots(&["1h", "24h", "7d", "30d"]));
        assert_eq!((done.next_window, done.verdict_final), (None, true));
        assert_eq!(done.windows_reached, ["1h", "24h", "7d", "30d"]);
    }

    /// Output `o/r:1:1`, an issue opened on 2026-10-01 and still pending,
    /// with a pending snapshot at each of `windows` (`listed`'s tests too).
    pub(crate) fn record(windows: &[&str]) -> OutcomeRecord {
        let mut o: OutcomeRecord = serde_json::from_value(serde_json::json!({
            "safe_output_id": "o/r:1:1", "safe_output_type": "create_issue", "target": null,
            "run_id": 1, "workflow": "w", "created_at": "2026-10-01T00:00:00Z",
            "evaluated_at": "2026-10-01T00:00:00Z", "evaluation_window_hours": 24,
            "outcome_status": "pending", "evidence_strength": "weak",
            "human_check_signal": "open", "target_resolved": true, "confidence": "low",
            "bot_aware": true, "actor_summary": {"visible_non_bot_actor_count": 0, "bot_actor_count": 0},
            "details": {}, "notes": "", "windows": {}, "dedicated_evaluator": true
        }))
        .unwrap();
        o.windows = snapshots(windows);
        o
    }

    #[test]
    fn the_mature_window_is_the_latest_all_have_reached() {
        let all = [
            record(&["1h", "24h", "7d", "30d"]),
            record(&["1h", "24h", "7d"]),
        ];
        assert_eq!(mature_window(&all), "7d");
        assert_eq!(mature_window(&all[..1]), "30d");
        assert_eq!(mature_window(&[]), "30d");
        let young = [record(&["1h", "24h"]), record(&[])];
        assert_eq!(mature_window(&young), "1h");
        let counts = awaiting(all.iter().chain(young.iter()));
        assert_eq!(
            counts,
            [("1h", 1), ("24h", 0), ("7d", 1), ("30d", 1), ("final", 1)]
        );
    }
}
