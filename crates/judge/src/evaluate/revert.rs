//! Durable reversals: a merged PR, or a pushed commit, later reverted.
//!
//! Normalization files `Reverted` under the reverted commit (a pushed commit
//! saying `This reverts commit <sha>`) or the reverted PR's thread (a merged
//! `Revert "…"` PR); the worker copies commit-keyed facts to the PRs whose
//! head or merge commit it is. Here we only decide which of those facts
//! reverse a given output, and say so with seed 000's `accepted_then_reverted`
//! (the report's `durable_reversal_count` counts `details.accepted_then_reverted`).

use chrono::{DateTime, Duration, Utc};

use super::EvalContext;
use safe_outcomes_model::{
    ActorClass, Evaluation, EvidenceStrength as S, Observation, ObservationKind as K,
    OutcomeStatus as O, Signal,
};

/// Seed 000 §5: a revert within 30 days of the merge undoes the acceptance.
pub const DURABILITY_WINDOW_DAYS: i64 = 30;

/// The first landed revert at or after `since` (and, with `window`, no later
/// than `since + window`) whose reverted sha satisfies `reverts` (`None` is a
/// whole-PR revert). Reverts by bots or the workflow's own actor do not count.
pub fn landed_revert<'a>(
    ctx: &EvalContext<'a>,
    since: DateTime<Utc>,
    window: Option<Duration>,
    reverts: impl Fn(Option<&str>) -> bool,
) -> Option<&'a Observation> {
    ctx.observations.iter().find(|o| {
        let K::Reverted {
            reverted_sha,
            landed: true,
            ..
        } = &o.event
        else {
            return false;
        };
        o.at >= since
            && window.is_none_or(|w| o.at <= safe_outcomes_model::sane_time::plus(since, w))
            && !matches!(
                ctx.actor_class(o),
                ActorClass::BotActor | ActorClass::SameWorkflowActor
            )
            && reverts(reverted_sha.as_deref())
    })
}

/// A revert of a merged PR: the whole PR, its merge commit, or its head at
/// merge, within the durability window.
pub fn of_merged_pr<'a>(ctx: &EvalContext<'a>, merge: &Observation) -> Option<&'a Observation> {
    let snap = merge.snapshot.as_ref();
    let merge_commit = snap.and_then(|s| s.merge_commit_sha.as_deref());
    let head = snap.and_then(|s| s.head_sha.as_deref());
    landed_revert(
        ctx,
        merge.at,
        Some(Duration::days(DURABILITY_WINDOW_DAYS)),
        |sha| sha.is_none() || same_sha(sha, merge_commit) || same_sha(sha, head),
    )
}

/// `a` names the same commit as `b` (either may be abbreviated, 7+ digits).
pub fn same_sha(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) if a.len() >= 7 && b.len() >= 7 => {
            let (a, b) = (a.to_ascii_lowercase(), b.to_ascii_lowercase());
            a.starts_with(&b) || b.starts_with(&a)
        }
        _ => false,
    }
}

/// rejected/strong `accepted_then_reverted`, decided by the revert.
pub fn accepted_then_reverted(revert: &Observation) -> Evaluation {
    let by = match &revert.event {
        K::Reverted { by, .. } => by.clone(),
        _ => String::new(),
    };
    let e = Evaluation::new(O::Rejected, S::Strong, Signal::AcceptedThenReverted)
        .decided_by(&revert.id, revert.at)
        .detail("accepted_then_reverted", true)
        .note("The change was merged and later reverted within the durability window.");
    if by.is_empty() {
        e
    } else {
        e.detail("reverted_by", by)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    /// A sha names a commit from 7 hex digits on, either side abbreviated.
    #[test]
    fn shas_match_by_prefix_from_seven_digits() {
        use super::same_sha;
        assert!(same_sha(Some("ABCDEF0"), Some("abcdef0123")));
        assert!(same_sha(Some("abcdef0123"), Some("abcdef0")));
        assert!(!same_sha(Some("abcdef0"), Some("abcdef1")));
        assert!(!same_sha(Some("abc"), Some("abc")), "too short to name one");
        assert!(!same_sha(Some("abcdef0"), Some("abc")));
        assert!(!same_sha(Some("abc"), Some("abcdef0")));
        assert!(!same_sha(None, Some("abcdef0")));
    }

    /// The verdict names what reverted it (the revert PR or commit).
    #[test]
    fn a_revert_names_its_reverter() {
        use crate::evaluate::testkit::*;
        let rv = obs(
            60.0,
            human("bob"),
            safe_outcomes_model::ObservationKind::Reverted {
                by: "#12".into(),
                reverted_sha: None,
                landed: true,
            },
        );
        let e = super::accepted_then_reverted(&rv);
        assert_eq!(e.details["reverted_by"], "#12");
        assert_eq!(e.decided_at, Some(at(60.0)));
    }

    use crate::evaluate::testkit::*;
    use safe_outcomes_model::{Actor, ItemSnapshot, Observation, ObservationKind as K};

    fn opened() -> Observation {
        opened_by_workflow(with_head(open(), "h1"))
    }

    fn merged_at(h: f64) -> Observation {
        let snap = ItemSnapshot {
            merge_commit_sha: Some("m1aaaaaaaa".into()),
            ..with_head(merged(human("alice")), "h1")
        };
        obs(h, human("alice"), K::Closed).snap(snap)
    }

    fn reverted(h: f64, who: Option<Actor>, sha: Option<&str>) -> Observation {
        obs(
            h,
            who,
            K::Reverted {
                by: "r1".into(),
                reverted_sha: sha.map(str::to_string),
                landed: true,
            },
        )
    }

    #[test]
    fn create_pull_request_reversals() {
        let r = || record("create_pull_request");
        run_rows!(r(), 100.0;
            "revert PR merged (whole-PR revert)":
                [opened(), merged_at(10.0), reverted(50.0, human("bob"), None)] => (REJECTED, STRONG, "accepted_then_reverted");
            "merge commit reverted by a pushed commit":
                [opened(), merged_at(10.0), reverted(50.0, human("bob"), Some("m1aaaaaaaa"))] => (REJECTED, STRONG, "accepted_then_reverted");
            "revert not yet visible at as-of":
                [opened(), merged_at(10.0), reverted(50.0, human("bob"), None)] => (ACCEPTED, STRONG, "merged"), at 40.0;
            "revert after the 30-day window is not a reversal":
                [opened(), merged_at(10.0), reverted(10.0 + 31.0 * 24.0, human("bob"), None)] => (ACCEPTED, STRONG, "merged"), at 40.0 * 24.0;
            "revert by a bot does not reject":
                [opened(), merged_at(10.0), reverted(50.0, bot("revert[bot]"), None)] => (ACCEPTED, STRONG, "merged");
            "revert of an unrelated commit copied to the thread":
                [opened(), merged_at(10.0), reverted(50.0, human("bob"), Some("zz99999999"))] => (ACCEPTED, STRONG, "merged");
        );
        let e = eval(
            &r(),
            vec![
                opened(),
                merged_at(10.0),
                reverted(50.0, human("bob"), None),
            ],
            100.0,
        );
        assert_eq!(e.details["accepted_then_reverted"], true);
        assert_eq!(e.details["reverted"], true);
        assert_eq!(e.decided_at, Some(at(50.0)));
    }

    #[test]
    fn push_to_pull_request_branch_reversals() {
        let r = || record("push_to_pull_request_branch").meta("commit_sha", json!("c1c1c1c1"));
        let head = |h: f64, sha: &str| {
            obs(h, workflow_actor(), sync("c0", sha)).snap(with_head(open(), sha))
        };
        let merge = |h: f64| {
            obs(h, human("alice"), K::Closed).snap(with_head(merged(human("alice")), "c1c1c1c1"))
        };
        run_rows!(r(), 24.0;
            "pushed commit reverted on the branch before merge":
                [head(-0.01, "c1c1c1c1"), reverted(5.0, human("bob"), Some("c1c1c1c1"))] => (REJECTED, STRONG, "commit_reverted");
            "pushed commit reverted after merge":
                [head(-0.01, "c1c1c1c1"), merge(10.0), reverted(50.0, human("bob"), Some("c1c1c1c1"))] => (REJECTED, STRONG, "accepted_then_reverted"), at 100.0;
            "whole PR reverted after merge":
                [head(-0.01, "c1c1c1c1"), merge(10.0), reverted(50.0, human("bob"), None)] => (REJECTED, STRONG, "accepted_then_reverted"), at 100.0;
            "abbreviated sha in the revert message":
                [head(-0.01, "c1c1c1c1"), reverted(5.0, human("bob"), Some("c1c1c1c"))] => (REJECTED, STRONG, "commit_reverted");
            "revert by the workflow itself is no verdict":
                [head(-0.01, "c1c1c1c1"), reverted(5.0, workflow_actor(), Some("c1c1c1c1"))] => (PENDING, WEAK, "awaiting_review");
        );
        let e = eval(
            &r(),
            vec![
                head(-0.01, "c1c1c1c1"),
                merge(10.0),
                reverted(50.0, human("bob"), None),
            ],
            100.0,
        );
        assert_eq!(e.details["accepted_then_reverted"], true);
    }

    #[test]
    fn the_pushed_commit_is_an_extra_watch_key() {
        let r = record("push_to_pull_request_branch").meta("commit_sha", json!("c1"));
        assert_eq!(r.extra_watch_keys(), vec!["o/r#commit:c1"]);
        assert_eq!(r.watch_keys(), vec!["o/r#7", "o/r#commit:c1"]);
        let may = record("push_to_pull_request_branch").after(json!({"head_sha": "c2"}));
        assert_eq!(may.extra_watch_keys(), vec!["o/r#commit:c2"]);
        assert!(record("create_pull_request").extra_watch_keys().is_empty());
    }
}
