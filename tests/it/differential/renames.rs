//! Renamed repositories (issue 44, item 5): for a generated history, the
//! repository renamed (or moved to another owner, once or twice) at a
//! random point after its run leaves every output's verdict, window by
//! window, what it is without the rename: on the webhook path (the
//! `repository.renamed` delivery keeps the name the outputs are keyed by,
//! and every later delivery names the new name) and on the API path
//! (reconcile follows the old name's `301`).
//!
//! Cases: `SAFE_OUTCOMES_RENAME_CASES` (CI's budget by default), from the
//! differential property's seed (`SAFE_OUTCOMES_DIFFERENTIAL_SEED`).

use std::collections::BTreeSet;

use chrono::Duration;
use proptest::prelude::*;
use safe_outcomes::bench::github_model::generate::Generated;
use safe_outcomes::bench::github_model::history::{Actor, Fact};

use super::compare::{events_of, windows, Shown};
use super::paths::{self, Ended, Path};

const DEFAULT_CASES: u32 = 2;

fn cases() -> u32 {
    std::env::var("SAFE_OUTCOMES_RENAME_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_CASES)
}

/// The names a rename may give: another name, another owner, and (the
/// last) the owner renamed.
const NEW_NAMES: [&str; 4] = [
    "acme/widgets-2",
    "acme/gadgets",
    "acme-labs/widgets",
    "acme-corp/widgets",
];

/// A rename to `to`: of the owner for the last of `NEW_NAMES`.
fn rename(to: String) -> Fact {
    if to.starts_with("acme-corp/") {
        Fact::RenameOwner { to }
    } else {
        Fact::RenameRepo { to }
    }
}

/// `g` without renames (the generator makes some), and `g` renamed: once
/// at the `at`-th event after the run completed (one minute before it),
/// and with `twice` again at the last event's time.
fn with_and_without(bytes: &[u8], at: usize, to: usize, twice: bool) -> (Generated, Generated) {
    let mut plain = super::generated(bytes);
    plain
        .history
        .events
        .retain(|e| e.fact.renamed_to().is_none());
    let mut renamed = plain.clone();
    let run = plain.runs[0].executed_at;
    let after: Vec<_> = plain
        .history
        .events
        .iter()
        .map(|e| e.at)
        .filter(|t| *t > run + Duration::minutes(6))
        .collect();
    let first = match after.as_slice() {
        [] => run + Duration::hours(2),
        times => times[at % times.len()] - Duration::minutes(1),
    };
    let alice = Actor::human("alice");
    let to = NEW_NAMES[to % NEW_NAMES.len()];
    let h = &mut renamed.history;
    h.push(first, &alice, rename(to.into()));
    if twice {
        let last = after.last().copied().unwrap_or(first) + Duration::seconds(1);
        let again = Fact::RenameRepo {
            to: format!("{to}-again"),
        };
        h.push(last.max(first + Duration::seconds(1)), &alice, again);
    }
    (plain, renamed)
}

/// Each output's windows that differ between the two ends of one path,
/// with the renamed history of the output.
fn differing(g: &Generated, path: Path, plain: &Ended, renamed: &Ended) -> Vec<String> {
    let ids: BTreeSet<&String> = plain
        .outcomes
        .keys()
        .chain(renamed.outcomes.keys())
        .collect();
    let mut out = Vec::new();
    for id in ids {
        let (a, b) = (
            plain.outcomes.get(id).map(windows),
            renamed.outcomes.get(id).map(windows),
        );
        if a != b {
            let mut shown = format!(
                "{} {id}: without the rename {a:?}, renamed {b:?}; its history:",
                path.name()
            );
            for e in events_of(g, id) {
                shown.push_str(&format!("\n      {}", Shown(e)));
            }
            out.push(shown);
        }
    }
    out
}

fn rename_differences(bytes: &[u8], at: usize, to: usize, twice: bool) -> Vec<String> {
    let (plain, renamed) = with_and_without(bytes, at, to, twice);
    super::block_on(async {
        let mut out = Vec::new();
        for path in [Path::Webhooks, Path::Reconcile] {
            let a = paths::run(&plain, path).await;
            let b = paths::run(&renamed, path).await;
            assert!(!a.outcomes.is_empty(), "{}: no outputs", path.name());
            out.extend(differing(&renamed, path, &a, &b));
        }
        out
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        rng_seed: super::seed(),
        max_shrink_iters: 10,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn renaming_the_repository_changes_no_verdict_on_either_path(
        bytes in proptest::collection::vec(any::<u8>(), 0..600),
        at in 0usize..1000,
        to in 0usize..4,
        twice in any::<bool>(),
    ) {
        let found = rename_differences(&bytes, at, to, twice);
        prop_assert!(found.is_empty(), "{}", found.join("\n"));
    }
}

/// The quiet history renamed twice, to another owner at the end: every
/// output judged as without the rename.
#[test]
fn a_quiet_history_renamed_twice_is_judged_as_without() {
    let found = rename_differences(&[], 0, 2, true);
    assert!(found.is_empty(), "{}", found.join("\n"));
}
