//! Transferred issues keep what people said on them (issue 44, item 5): a
//! person's reaction on the agent's issue, then (after a rename of the
//! repository or not) the issue transferred to another repository. The
//! webhook path hears the reaction from the signal fetcher at its
//! checkpoints; the API paths learn of the issue after the move, when
//! GraphQL's `repository.issue(number)` finds nothing under the old number
//! and REST answers `301` with the new place, where the reaction went with
//! the issue. Every path must judge every window alike.

use chrono::Duration;
use proptest::prelude::*;
use safe_outcomes::bench::github_model::history::{Actor, Fact, ReactionOn};

proptest! {
    #![proptest_config(ProptestConfig { cases: 3, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn a_reaction_before_a_transfer_is_read_on_every_path(
        react_after in 5i64..600,
        moved_after_days in 2i64..28,
        renamed in any::<bool>(),
    ) {
        let mut g = super::generated(&[]);
        let run = g.runs[0].executed_at;
        let agent = Actor::actions();
        let number = g
            .history
            .events
            .iter()
            .find_map(|e| match &e.fact {
                Fact::OpenIssue { number, .. } if e.actor == agent => Some(*number),
                _ => None,
            })
            .expect("the agent opens an issue");
        let h = &mut g.history;
        let reacted = run + Duration::minutes(react_after);
        let on = ReactionOn::Thread(number);
        h.push(reacted, &Actor::human("bob"), Fact::React { on, id: 77, content: "heart".into() });
        let moved = run + Duration::days(moved_after_days);
        if renamed {
            let to = "acme/widgets-renamed".into();
            h.push(moved - Duration::hours(1), &Actor::human("alice"), Fact::RenameRepo { to });
        }
        let to = "acme/archive".into();
        let transfer = Fact::TransferIssue { number, to, new_number: number + 1000 };
        h.push(moved, &Actor::human("alice"), transfer);
        let found = super::verdicts_differ(&g);
        prop_assert!(found.is_empty(), "{}", super::explain(&g, &found));
    }
}
