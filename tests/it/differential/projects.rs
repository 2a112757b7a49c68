//! `create_project`'s project on each path: created by the agent at the
//! run, then closed (by a person or a bot) and maybe reopened. The webhooks
//! name who closed it (`projects_v2.closed`'s sender); the API (GraphQL
//! `ProjectV2`) tells that and when it is closed now, not who, nor a close
//! undone since. A close later reopened is rejected on no path once
//! reopened.

use std::collections::BTreeMap;

use chrono::Duration;
use safe_outcomes::bench::github_model::generate::Generated;
use safe_outcomes::bench::github_model::history::{Actor, Fact, ProjectAct};
use safe_outcomes::model::OutputType;

use super::paths::Path;

type Verdicts = BTreeMap<String, String>;

/// The run writing only `create_project` (project 8), then `acts`, each
/// `minutes` after the run.
fn history(acts: &[(i64, Actor, ProjectAct)]) -> Generated {
    let facts = acts.iter().map(|(minutes, who, act)| {
        (
            Duration::minutes(*minutes),
            who.clone(),
            Fact::Project(act.clone()),
        )
    });
    super::one_output_then(OutputType::CreateProject, facts)
}

/// Each window's verdict of the create_project output on `path`, as
/// `status/strength/signal`.
fn verdicts(g: &Generated, path: Path) -> Verdicts {
    super::judged_on(g, path, "create_project").1
}

fn at(v: &Verdicts, window: &str) -> String {
    v.get(window).cloned().unwrap_or_default()
}

const CLOSE: ProjectAct = ProjectAct::Close { number: 8 };
const REOPEN: ProjectAct = ProjectAct::Reopen { number: 8 };

#[test]
fn a_persons_close_rejects_from_the_webhooks_and_is_an_unknown_closer_from_the_api() {
    let g = history(&[(120, Actor::human("alice"), CLOSE)]);
    let hooks = verdicts(&g, Path::Webhooks);
    assert_eq!(
        at(&hooks, "1h"),
        "Pending/Weak/target_exists_only",
        "{hooks:?}"
    );
    for w in ["24h", "7d", "30d"] {
        assert_eq!(at(&hooks, w), "Rejected/Strong/project_closed", "{hooks:?}");
    }
    for path in [Path::Backfill, Path::Reconcile] {
        let api = verdicts(&g, path);
        assert_eq!(at(&api, "1h"), "Pending/Weak/target_exists_only", "{api:?}");
        for w in ["24h", "7d", "30d"] {
            assert_eq!(at(&api, w), "Unknown/Weak/evaluation_error", "{api:?}");
        }
    }
}

#[test]
fn a_bots_close_is_lifecycle_from_the_webhooks() {
    let g = history(&[(120, Actor::bot("dependabot[bot]"), CLOSE)]);
    let hooks = verdicts(&g, Path::Webhooks);
    assert_eq!(at(&hooks, "30d"), "Ignored/Weak/lifecycle", "{hooks:?}");
}

#[test]
fn a_close_reopened_is_rejected_on_no_path_once_reopened() {
    let g = history(&[
        (120, Actor::human("alice"), CLOSE),
        (2 * 1440, Actor::human("bob"), REOPEN),
    ]);
    let hooks = verdicts(&g, Path::Webhooks);
    assert_eq!(
        at(&hooks, "24h"),
        "Rejected/Strong/project_closed",
        "{hooks:?}"
    );
    for path in [Path::Webhooks, Path::Backfill, Path::Reconcile] {
        let v = verdicts(&g, path);
        for w in ["7d", "30d"] {
            assert_eq!(
                at(&v, w),
                "Ignored/Weak/no_engagement",
                "{}: {v:?}",
                path.name()
            );
        }
    }
}

#[test]
fn a_project_left_alone_is_judged_alike_on_every_path() {
    let g = history(&[]);
    let all: Vec<Verdicts> = Path::ALL.iter().map(|p| verdicts(&g, *p)).collect();
    assert_eq!(
        at(&all[0], "24h"),
        "Pending/Weak/target_exists_only",
        "{all:?}"
    );
    assert_eq!(at(&all[0], "30d"), "Ignored/Weak/no_engagement", "{all:?}");
    assert!(all.iter().all(|v| *v == all[0]), "{all:?}");
}

/// A deletion (create_project's `deleted` rule: a visible non-bot's
/// deletion rejects), which the API cannot tell.
#[test]
fn a_persons_deletion_rejects_from_the_webhooks_and_is_gone_by_nobody_from_the_api() {
    let g = history(&[(120, Actor::human("alice"), ProjectAct::Delete { number: 8 })]);
    let hooks = verdicts(&g, Path::Webhooks);
    assert_eq!(at(&hooks, "30d"), "Rejected/Strong/deleted", "{hooks:?}");
    for path in [Path::Backfill, Path::Reconcile] {
        let api = verdicts(&g, path);
        // GitHub answers a deleted project NOT_FOUND: neither its creation
        // nor who deleted it is left to read.
        for w in ["1h", "24h", "7d", "30d"] {
            assert_eq!(
                at(&api, w),
                "Unknown/None/unobserved",
                "{}: {api:?}",
                path.name()
            );
        }
    }
}
