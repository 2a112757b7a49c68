//! Evaluation: a pure function of (execution record, observations, as-of time).
//!
//! `evaluate` routes each safe-output type to its evaluator family; each family
//! lives in its own file and is a plain function over an `EvalContext`.

use chrono::{DateTime, Duration, Utc};

use crate::model::{
    ActorClass, ActorSummary, Evaluation, EvidenceStrength, ExecutionRecord, ItemSnapshot,
    Observation, OutcomeStatus,
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
mod release;
mod revert;
mod review;
mod security;
mod system;
mod update;
mod workflow;

#[cfg(test)]
pub(crate) mod testkit;

/// Everything an evaluator may look at.
pub struct EvalContext<'a> {
    pub record: &'a ExecutionRecord,
    /// Observations of the watched targets with `at <= as_of`, sorted by (`at`, `id`).
    pub observations: &'a [Observation],
    pub as_of: DateTime<Utc>,
}

impl<'a> EvalContext<'a> {
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

/// Which evaluator family handles a type; `None` means the generic fallback.
fn evaluator_for(output_type: &str) -> Option<Evaluator> {
    core_evaluator_for(output_type)
        .or_else(|| review::evaluator_for(output_type))
        .or_else(|| assignment::evaluator_for(output_type))
        .or_else(|| metadata::evaluator_for(output_type))
        .or_else(|| project::evaluator_for(output_type))
        .or_else(|| discussion::evaluator_for(output_type))
        .or_else(|| moderation::evaluator_for(output_type))
        .or_else(|| workflow::evaluator_for(output_type))
        .or_else(|| security::evaluator_for(output_type))
        .or_else(|| release::evaluator_for(output_type))
}

/// An evaluator: a pure function of the context.
pub type Evaluator = fn(&EvalContext) -> Evaluation;

/// The issue, pull-request, comment, label and update evaluators.
fn core_evaluator_for(output_type: &str) -> Option<Evaluator> {
    Some(match output_type {
        "create_pull_request" => pull_request::create_pull_request,
        "push_to_pull_request_branch" => pull_request::push_to_pull_request_branch,
        "close_pull_request" => pull_request::close_pull_request,
        "create_issue" => issue::create_issue,
        "close_issue" => issue::close_issue,
        // A memory comment is a comment the workflow keeps editing: same human check.
        "add_comment" | "comment_memory" => comment::add_comment,
        "add_labels" => labels::add_labels,
        "remove_labels" => labels::remove_labels,
        "update_issue" => update::update_issue,
        "update_pull_request" => update::update_pull_request,
        "noop" | "missing_tool" | "missing_data" | "report_incomplete" => system::skipped,
        _ => return None,
    })
}

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
    if record.provider.as_deref().is_some_and(|p| p != "github") {
        return Evaluation::new(
            OutcomeStatus::Unknown,
            EvidenceStrength::None,
            "external_provider",
        )
        .unresolved()
        .note("The output went to a non-GitHub provider, which this App cannot observe.");
    }
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
