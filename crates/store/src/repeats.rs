//! Repeated observations: the only copies of one observation the key layout
//! can hold, counted in its tests, and why the worker prunes none.
//!
//! An observation is filed under `b/<target>\0<time><id>`, and its id is
//! deterministic (`{delivery}/{n}` for a webhook fact, `api:…` derived from
//! GitHub's ids for a fact read from the API). Filing the same fact again
//! (a redelivery, a re-read, a replay) writes the same key: it overwrites
//! itself and the store does not grow. A second copy of an id under one
//! target exists only when its *time* moved: an API re-read whose object
//! changed in between (the open state of an issue is dated by its
//! `updated_at`; a workflow run's state by its own). The evaluators read
//! observations as of each checkpoint, so the older copy is what a window
//! between the two times sees: dropping it can change a verdict
//! (`the_older_copy_of_a_re_read_state_decides_a_window` below). Copies of one
//! fact under several targets (a branch's facts copied to the PRs on it) are
//! read by different outputs. So nothing in today's model is superseded in a
//! way that cannot change a verdict, and nothing is pruned; the count below
//! shows how much such copies weigh in a store.

#[cfg(test)]
use super::{keys, Result, Store};

#[cfg(test)]
impl Store {
    /// Observation keys whose (target, id) was already filed under an
    /// earlier time. Scans `b/`.
    pub(crate) fn repeated_observations(&self) -> Result<u64> {
        let mut repeats = 0;
        let mut target: Vec<u8> = Vec::new();
        let mut ids: std::collections::HashSet<Vec<u8>> = Default::default();
        for item in self.db.scan_prefix(keys::OBSERVATION) {
            let (key, _) = item?;
            let Some((t, id)) = split(&key) else { continue };
            if t != target.as_slice() {
                target = t.to_vec();
                ids.clear();
            }
            if !ids.insert(id.to_vec()) {
                repeats += 1;
            }
        }
        Ok(repeats)
    }
}

#[cfg(test)]
/// The target and id of an observation key (`None` for the target
/// index's entries kept beside them, `keys::outputs_on`).
fn split(key: &[u8]) -> Option<(&[u8], &[u8])> {
    let rest = key.strip_prefix(keys::OBSERVATION)?;
    let end = rest.iter().position(|b| *b <= 1)?;
    let (target, tail) = rest.split_at(end);
    if tail[0] != 0 {
        return None;
    }
    Some((target, tail.get(1 + 8..)?))
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Duration, Utc};

    use crate::ReadStore;
    use safe_outcomes_judge::assess::assess;
    use safe_outcomes_model::{
        ExecutionRecord, ItemSnapshot, Observation, ObservationKind, Target, TargetKind,
    };

    fn t0() -> DateTime<Utc> {
        "2026-09-01T00:00:00Z".parse().unwrap()
    }

    fn issue_output() -> ExecutionRecord {
        let mut line: ExecutionRecord = serde_json::from_value(serde_json::json!({
            "id": "acme/w:1:0", "output_type": "create_issue", "repo": "acme/w",
            "run_id": 1, "target": null, "executed_at": t0(),
        }))
        .unwrap();
        line.target = Some(Target::thread("acme/w", TargetKind::Issue, 7));
        line
    }

    /// The reconciler's state of an open issue, dated by its `updated_at`.
    fn open_state(at: DateTime<Utc>) -> Observation {
        Observation {
            id: "api:issues/7:state".into(),
            at,
            target: "acme/w#7".into(),
            actor: None,
            event: ObservationKind::Other {
                event: "api_state".into(),
                action: "open".into(),
            },
            snapshot: Some(ItemSnapshot {
                kind: Some(TargetKind::Issue),
                state: "open".into(),
                title: "Flaky test".into(),
                ..ItemSnapshot::default()
            }),
        }
    }

    #[test]
    fn the_same_fact_filed_again_overwrites_itself() {
        let (_dir, store) = crate::temp_store();
        for _ in 0..3 {
            let mut unit = store.begin();
            unit.put_observation("acme/w#7", &open_state(t0() + Duration::hours(2)));
            unit.commit().unwrap();
        }
        assert_eq!(
            store
                .observations_of_all(&["acme/w#7".into()])
                .unwrap()
                .len(),
            1
        );
        assert_eq!(store.repeated_observations().unwrap(), 0);
    }

    #[test]
    fn the_older_copy_of_a_re_read_state_decides_a_window() {
        // Read at +2h, then again at +9d after someone touched the issue.
        let (early, late) = (
            open_state(t0() + Duration::hours(2)),
            open_state(t0() + Duration::days(9)),
        );
        let (_dir, store) = crate::temp_store();
        // A comment in between (the id dedup only folds neighbours).
        let comment = Observation {
            id: "d-1/0".into(),
            at: t0() + Duration::days(3),
            target: "acme/w#7".into(),
            actor: Some(safe_outcomes_model::Actor::new("maria-lopez", "User")),
            event: ObservationKind::CommentCreated {
                comment_id: 5,
                agent_marker: false,
                lifecycle_marker: false,
                challenge: false,
            },
            snapshot: None,
        };
        let mut unit = store.begin();
        for o in [&early, &comment, &late] {
            unit.put_observation("acme/w#7", o);
        }
        unit.commit().unwrap();
        assert_eq!(store.repeated_observations().unwrap(), 1);
        let all = store.observations_of_all(&["acme/w#7".into()]).unwrap();
        assert_eq!(all.len(), 3, "both copies reach the evaluators");

        let now = t0() + Duration::days(31);
        let kept = assess(&issue_output(), &all, now);
        let pruned = assess(&issue_output(), &[comment, late], now);
        eprintln!(
            "24h with the older copy {:?}, without {:?}",
            kept.windows["24h"], pruned.windows["24h"]
        );
        let window = |o: &safe_outcomes_model::OutcomeRecord, w: &str| {
            let s = &o.windows[w];
            (
                s.outcome_status,
                s.evidence_strength,
                s.human_check_signal.clone(),
            )
        };
        assert_ne!(
            window(&kept, "24h"),
            window(&pruned, "24h"),
            "without the older copy the 24h window judges differently"
        );
    }
}
