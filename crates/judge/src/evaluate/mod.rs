//! Evaluation: a pure function of (execution record, observations, as-of time).
//!
//! `evaluate` routes each safe-output type to its evaluator family; each family
//! lives in its own file and is a plain function over an `EvalContext`.

use chrono::{DateTime, Duration, Utc};

use safe_outcomes_model::{
    ActorClass, ActorSummary, Evaluation, ExecutionRecord, ItemSnapshot, Observation, TargetKind,
};

mod assignment;
mod ci;
mod comment;
mod common;
mod discussion;
mod fallback;
mod issue;
mod labels;
mod metadata;
mod moderation;
mod project;
mod pull_request;
mod reconcile_failed;
pub mod registry;
pub mod rules;
pub mod seed_rows;

pub use common::{hedge, weaker};
pub use safe_outcomes_model::output_type::OutputType;
mod release;
mod revert;
mod review;
mod security;
mod system;
mod update;
mod workflow;

/// Builders for the tests of this crate and, with the `testkit` feature,
/// of the crates above (never in a release build).
#[cfg(any(test, feature = "testkit"))]
#[allow(missing_docs)]
pub mod testkit;

/// Everything an evaluator may look at.
pub struct EvalContext<'a> {
    /// What the agent did.
    pub record: &'a ExecutionRecord,
    /// Observations of the watched targets with `at <= as_of`, sorted by (`at`, `id`).
    pub observations: &'a [Observation],
    /// The time judged as of.
    pub as_of: DateTime<Utc>,
}

impl<'a> EvalContext<'a> {
    /// Whether the record's target is of `kind`.
    pub fn targets(&self, kind: TargetKind) -> bool {
        self.record.target.as_ref().is_some_and(|t| t.kind == kind)
    }

    /// Time elapsed since execution.
    pub fn elapsed(&self) -> Duration {
        self.as_of - self.record.executed_at
    }

    /// How the actor of an observation counts for this output.
    pub fn actor_class(&self, obs: &Observation) -> ActorClass {
        match &obs.actor {
            Some(actor) => actor.classify(self.record.actor.as_deref()),
            None => ActorClass::SystemActor,
        }
    }

    /// True when the observation is by a visible non-bot actor other than the
    /// workflow's own: the only actor whose action counts as human evidence.
    pub fn is_human(&self, obs: &Observation) -> bool {
        self.actor_class(obs) == ActorClass::VisibleNonBotActor
    }

    /// Observations after execution (strictly later, or at the same instant but
    /// not the creating event itself).
    pub fn after_execution(&self) -> impl Iterator<Item = &'a Observation> + '_ {
        let at = self.record.executed_at;
        self.observations.iter().filter(move |o| o.at >= at)
    }

    /// The latest issue/PR state seen.
    pub fn latest_snapshot(&self) -> Option<&'a ItemSnapshot> {
        self.observations
            .iter()
            .rev()
            .find_map(|o| o.snapshot.as_ref())
    }

    /// The latest snapshot that shows the item's state (open or closed): a
    /// snapshot whose source did not say (`state` empty) says nothing of
    /// the state nor of its reason (general rule 2).
    pub fn latest_state_snapshot(&self) -> Option<&'a ItemSnapshot> {
        self.observations
            .iter()
            .rev()
            .filter_map(|o| o.snapshot.as_ref())
            .find(|s| !s.state.is_empty())
    }

    /// The latest observation with a snapshot, and that snapshot.
    pub fn latest_snapshot_obs(&self) -> Option<&'a Observation> {
        self.observations
            .iter()
            .rev()
            .find(|o| o.snapshot.is_some())
    }

    /// True when anything at all was observed of the target.
    pub fn target_seen(&self) -> bool {
        !self.observations.is_empty()
    }
}

/// The evaluator registered for a type; `None` means the generic fallback.
fn evaluator_for(output_type: &str) -> Option<Evaluator> {
    registry::spec_of(output_type).map(|t| t.evaluator)
}

/// An evaluator: a pure function of the context.
pub type Evaluator = fn(&EvalContext) -> Evaluation;

/// True when a type has a dedicated evaluator (not the generic fallback).
pub fn has_dedicated_evaluator(output_type: &str) -> bool {
    evaluator_for(output_type).is_some()
}

/// Evaluate one output as of `as_of`, from the observations of its targets.
/// `observations` must be sorted by (`at`, `id`); later ones are ignored.
pub fn evaluate(
    record: &ExecutionRecord,
    observations: &[Observation],
    as_of: DateTime<Utc>,
) -> Evaluation {
    // General rule 1: what the record lacks decides before anything observed.
    if let Some(gap) = rules::execution_state(record) {
        return gap;
    }
    let cut = observations.partition_point(|o| o.at <= as_of);
    // Failed API reconciliations decide only when nothing else is known.
    let observations = match reconcile_failed::screen(&observations[..cut]) {
        Ok(kept) => kept,
        Err(evaluation_error) => return evaluation_error,
    };
    let ctx = EvalContext {
        record,
        observations: &observations,
        as_of,
    };
    match evaluator_for(&record.output_type) {
        Some(evaluator) => evaluator(&ctx),
        None => {
            let mut e = fallback::generic(&ctx);
            e.dedicated = false;
            e
        }
    }
}

/// Count the distinct actors after execution, by class.
pub fn actor_summary(record: &ExecutionRecord, observations: &[Observation]) -> ActorSummary {
    let mut humans = std::collections::BTreeSet::new();
    let mut bots = std::collections::BTreeSet::new();
    for obs in observations.iter().filter(|o| o.at >= record.executed_at) {
        if let Some(actor) = &obs.actor {
            match actor.classify(record.actor.as_deref()) {
                ActorClass::VisibleNonBotActor => {
                    humans.insert(actor.login.as_str());
                }
                ActorClass::BotActor | ActorClass::SameWorkflowActor => {
                    bots.insert(actor.login.as_str());
                }
                _ => {}
            }
        }
    }
    ActorSummary {
        visible_non_bot_actor_count: humans.len() as u32,
        bot_actor_count: bots.len() as u32,
    }
}

#[cfg(test)]
mod tests {
    use super::testkit::*;
    use super::*;
    use safe_outcomes_model::ObservationKind;

    #[test]
    fn a_dedicated_evaluator_is_one_the_registry_lists() {
        assert!(has_dedicated_evaluator("create_pull_request"));
        assert!(has_dedicated_evaluator("add_comment"));
        assert!(!has_dedicated_evaluator("no_such_type"));
        assert!(!has_dedicated_evaluator(""));
    }

    #[test]
    fn actors_are_counted_once_each_from_execution_on() {
        let r = record("add_comment");
        let o = vec![
            obs(-1.0, human("before"), comment(1)),
            obs(0.0, human("alice"), comment(2)),
            obs(1.0, human("alice"), comment(3)),
            obs(2.0, human("bob"), comment(4)),
            obs(3.0, bot("dependabot[bot]"), comment(5)),
            obs(4.0, workflow_actor(), comment(6)),
            obs(5.0, None, comment(7)),
        ];
        let s = actor_summary(&r, &o);
        assert_eq!(
            s.visible_non_bot_actor_count, 2,
            "alice and bob, not `before`"
        );
        assert_eq!(s.bot_actor_count, 2, "another bot and the workflow's own");
    }

    #[test]
    fn the_latest_snapshot_is_the_last_observation_that_carries_one() {
        let r = record("create_issue");
        let o = vec![
            opened_by_workflow(open()),
            obs(1.0, human("alice"), ObservationKind::Closed).snap(closed_as(Some("completed"))),
            obs(2.0, human("bob"), comment(1)),
        ];
        let ctx = EvalContext {
            record: &r,
            observations: &o,
            as_of: at(3.0),
        };
        assert_eq!(
            ctx.latest_snapshot_obs().map(|x| x.id.as_str()),
            Some(o[1].id.as_str())
        );
        assert_eq!(
            ctx.latest_snapshot().map(|s| s.state.as_str()),
            Some("closed")
        );
        let none = EvalContext {
            record: &r,
            observations: &o[2..],
            as_of: at(3.0),
        };
        assert!(none.latest_snapshot_obs().is_none());
    }
}
