//! `assign_milestone`'s milestone deleted, on each path (general rule 15).
//! The webhooks name who deleted it and when (`milestone.deleted`, dated at
//! receipt); the API answers the milestone 404 and keeps no trace on the
//! item, so a read finds it deleted at the read, by nobody named.

use std::collections::BTreeMap;

use chrono::Duration;
use safe_outcomes::bench::github_model::generate::Generated;
use safe_outcomes::bench::github_model::history::{Actor, Fact};
use safe_outcomes::model::OutputType;

use super::paths::Path;

type Verdicts = BTreeMap<String, String>;

/// The run writing only `assign_milestone` (milestone 2), then `facts`,
/// each by its actor `hours` after the run.
fn history(facts: &[(i64, Actor, Fact)]) -> Generated {
    let facts = facts
        .iter()
        .map(|(hours, who, fact)| (Duration::hours(*hours), who.clone(), fact.clone()));
    super::one_output_then(OutputType::AssignMilestone, facts)
}

const DELETE: Fact = Fact::DeleteMilestone { milestone: 2 };

/// The output's verdict now and at each window on `path`, as
/// `status/strength/signal`.
fn verdicts(g: &Generated, path: Path) -> (String, Verdicts) {
    let (o, windows) = super::judged_on(g, path, "assign_milestone");
    let now = format!(
        "{:?}/{:?}/{}",
        o.outcome_status, o.evidence_strength, o.human_check_signal
    );
    (now, windows)
}

fn at(v: &Verdicts, window: &str) -> String {
    v.get(window).cloned().unwrap_or_default()
}

const KEPT: &str = "Accepted/Medium/milestone_assigned";

#[test]
fn a_persons_deletion_rejects_weakly_from_the_webhooks_and_at_the_read_from_the_api() {
    let g = history(&[(30, Actor::human("alice"), DELETE)]);
    let (now, hooks) = verdicts(&g, Path::Webhooks);
    assert_eq!(at(&hooks, "24h"), KEPT, "{hooks:?}");
    for w in ["7d", "30d"] {
        assert_eq!(
            at(&hooks, w),
            "Rejected/Weak/milestone_removed",
            "{hooks:?}"
        );
    }
    assert_eq!(now, "Rejected/Weak/milestone_removed");
    // The API: the item as its `milestoned` entry left it until the read
    // finds the milestone gone (404), by nobody named.
    for path in [Path::Backfill, Path::Reconcile] {
        let (now, api) = verdicts(&g, path);
        for w in ["24h", "7d", "30d"] {
            assert_eq!(at(&api, w), KEPT, "{}: {api:?}", path.name());
        }
        assert_eq!(now, "Rejected/Weak/milestone_removed", "{}", path.name());
    }
}

#[test]
fn a_bots_deletion_is_a_bots_change_from_the_webhooks() {
    let g = history(&[(30, Actor::bot("dependabot[bot]"), DELETE)]);
    let (now, hooks) = verdicts(&g, Path::Webhooks);
    assert_eq!(at(&hooks, "24h"), KEPT, "{hooks:?}");
    assert_eq!(
        at(&hooks, "7d"),
        "Unknown/Weak/state_changed_by_bot",
        "{hooks:?}"
    );
    assert_eq!(now, "Unknown/Weak/state_changed_by_bot");
}

#[test]
fn a_removal_before_the_deletion_decides_on_every_path() {
    let n = history(&[]).runs[0].lines[0]["number"].as_u64().unwrap();
    let g = history(&[
        (3, Actor::human("bob"), Fact::Demilestone { number: n }),
        (30, Actor::human("alice"), DELETE),
    ]);
    for path in [Path::Webhooks, Path::Backfill, Path::Reconcile] {
        let (now, v) = verdicts(&g, path);
        for w in ["24h", "7d", "30d"] {
            assert_eq!(
                at(&v, w),
                "Rejected/Strong/milestone_removed",
                "{}: {v:?}",
                path.name()
            );
        }
        assert_eq!(now, "Rejected/Strong/milestone_removed", "{}", path.name());
    }
}
