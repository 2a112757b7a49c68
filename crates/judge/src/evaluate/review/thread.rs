//! `resolve_pull_request_review_thread`: did the thread stay resolved? Seed
//! 000 §7 rows, in the order they are checked:
//!
//! | state | outcome |
//! |---|---|
//! | PR deleted or transferred (thread inaccessible) | unknown/none `deleted` / `transferred` |
//! | the last (un)resolution after ours is an unresolve by a visible non-bot | rejected/strong `reopened` |
//! | ... an unresolve nobody can be seen doing | rejected/medium `reopened` (general rule 4) |
//! | ... an unresolve by a bot or the workflow | unknown/weak `state_changed_by_bot` (not a human verdict) |
//! | PR merged after the resolution | accepted/strong `state_retained_and_merged` |
//! | PR closed unmerged | ignored/medium `closed_without_merge` |
//! | still resolved after 24 h | accepted/medium `state_retained` |
//! | still resolved, window not passed | pending/weak `state_retained` |
//!
//! The seed calls "PR closed unmerged after resolution" contextual/medium. The
//! resolution was neither undone nor carried into a merge: the PR it served
//! was dropped, so it is `ignored`, at medium because the close is a clear
//! lifecycle fact rather than mere silence.
//!
//! `pull_request_review_thread` payloads carry no resolution time, so
//! (un)resolutions are timed by a lower bound (see `ingest::webhook::reviews`) that can
//! fall before `executed_at`. Our own resolution is therefore found by
//! order, not time: the first resolution of the thread by the workflow's actor
//! (else the first resolution at all), and only what follows it counts.

use super::super::common::{
    cite, class_name, is_closed, is_merged, merge_obs, missing_reference, missing_state,
    unseen_or_gone, unseen_reversal, window_passed, RETENTION_WINDOW,
};
use super::super::EvalContext;
use safe_outcomes_model::{
    ActorClass, Evaluation, EvidenceStrength as S, Observation, ObservationKind as K,
    OutcomeStatus as O, Signal, TargetKind,
};

pub fn resolve_review_thread(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = missing_reference(ctx) {
        return e;
    }
    let Some(thread_id) = thread_id(ctx) else {
        return missing_state("The record does not name the review thread's node id.").unresolved();
    };
    if let Some(e) = unseen_or_gone(ctx, false) {
        return e;
    }
    let events = thread_events(ctx, &thread_id);
    let ours = events
        .iter()
        .position(|o| {
            matches!(o.event, K::ThreadResolved { .. })
                && ctx.actor_class(o) == ActorClass::SameWorkflowActor
        })
        .or_else(|| {
            events
                .iter()
                .position(|o| matches!(o.event, K::ThreadResolved { .. }))
        });
    let later: Vec<&Observation> = match ours {
        Some(i) => events[i + 1..].to_vec(),
        // Our resolution was not delivered: judge by time alone.
        None => events
            .into_iter()
            .filter(|o| o.at >= ctx.record.executed_at)
            .collect(),
    };
    let e = match later.last() {
        Some(u) if matches!(u.event, K::ThreadUnresolved { .. }) => reopened(ctx, u),
        _ => retained(ctx),
    };
    e.detail("thread_id", thread_id)
        .detail("resolution_observed", ours.is_some())
        .detail("merged", is_merged(ctx))
        .detail("closed", is_closed(ctx))
}

fn thread_id(ctx: &EvalContext) -> Option<String> {
    ctx.record
        .target
        .as_ref()
        .filter(|t| t.kind == TargetKind::ReviewThread)
        .and_then(|t| t.node_id.clone())
        .or_else(|| ctx.record.field_str("thread_id").map(str::to_string))
}

/// (Un)resolutions of our thread, in order.
fn thread_events<'a>(ctx: &EvalContext<'a>, wanted: &str) -> Vec<&'a Observation> {
    ctx.observations
        .iter()
        .filter(|o| match &o.event {
            K::ThreadResolved { thread_id, .. } | K::ThreadUnresolved { thread_id, .. } => {
                thread_id == wanted
            }
            _ => false,
        })
        .collect()
}

fn reopened(ctx: &EvalContext, unresolve: &Observation) -> Evaluation {
    let class = class_name(ctx.actor_class(unresolve));
    if ctx.is_human(unresolve) {
        return Evaluation::new(O::Rejected, S::Strong, Signal::Reopened)
            .decided_by(&unresolve.id, unresolve.at)
            .detail("reopened_by_type", class)
            .note("A visible non-bot actor unresolved the thread after the workflow resolved it.");
    }
    let e = match ctx.actor_class(unresolve) {
        // General rule 4: unresolved again by someone nobody can see.
        ActorClass::UnknownActor | ActorClass::SystemActor => unseen_reversal(
            Evaluation::new(O::Rejected, S::Strong, Signal::Reopened)
                .note("The thread the workflow resolved is unresolved now."),
        ),
        _ => Evaluation::new(O::Unknown, S::Weak, Signal::StateChangedByBot)
            .note("The thread was unresolved again by automation, which is not a human verdict."),
    };
    cite(e.detail("reopened_by_type", class), unresolve)
}

fn retained(ctx: &EvalContext) -> Evaluation {
    if let Some(m) = is_merged(ctx).then(|| merge_obs(ctx)).flatten() {
        if m.at >= ctx.record.executed_at {
            return Evaluation::new(O::Accepted, S::Strong, Signal::StateRetainedAndMerged)
                .decided_by(&m.id, m.at)
                .note("The thread stayed resolved and the PR was merged.");
        }
    }
    if is_closed(ctx) && !is_merged(ctx) {
        return Evaluation::new(O::Ignored, S::Medium, Signal::ClosedWithoutMerge)
            .note("The thread stayed resolved, but the PR was closed without merge.");
    }
    if window_passed(ctx, RETENTION_WINDOW) {
        return Evaluation::new(O::Accepted, S::Medium, Signal::StateRetained)
            .note("The thread is still resolved 24 hours after the workflow resolved it.");
    }
    Evaluation::new(O::Pending, S::Weak, Signal::StateRetained)
        .note("The thread is resolved; the 24-hour retention window has not passed.")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::evaluate::testkit::*;
    use safe_outcomes_model::{Actor, Observation, ObservationKind as K, Target, TargetKind};

    fn target() -> Target {
        Target {
            number: None,
            node_id: Some("PRRT_1".into()),
            parent_number: Some(NUMBER),
            ..Target::thread(REPO, TargetKind::ReviewThread, 0)
        }
    }

    fn resolved(h: f64, who: Option<Actor>, thread: &str) -> Observation {
        obs(
            h,
            who,
            K::ThreadResolved {
                thread_id: thread.into(),
                comment_ids: vec![1],
            },
        )
        .snap(open())
    }

    fn unresolved(h: f64, who: Option<Actor>) -> Observation {
        obs(
            h,
            who,
            K::ThreadUnresolved {
                thread_id: "PRRT_1".into(),
                comment_ids: vec![1],
            },
        )
        .snap(open())
    }

    #[test]
    fn resolve_pull_request_review_thread_table() {
        let r = || record("resolve_pull_request_review_thread").target(target());
        let ours = || resolved(-0.01, workflow_actor(), "PRRT_1");
        run_rows!(r(), 24.0;
            "still resolved after 24h": [ours()] => (ACCEPTED, MEDIUM, "state_retained");
            "resolved, window not passed": [ours()] => (PENDING, WEAK, "state_retained"), at 2.0;
            "unresolved by a human": [ours(), unresolved(3.0, human("alice"))] => (REJECTED, STRONG, "reopened");
            "unresolved by a human, timed before execution (lower-bound time)":
                [resolved(-5.0, workflow_actor(), "PRRT_1"), unresolved(-5.0, human("alice"))] => (REJECTED, STRONG, "reopened");
            "unresolved by a human before the workflow resolved it":
                [unresolved(-8.0, human("alice")), ours()] => (ACCEPTED, MEDIUM, "state_retained");
            "unresolved by a human, then resolved again":
                [ours(), unresolved(3.0, human("alice")), resolved(4.0, human("alice"), "PRRT_1")] => (ACCEPTED, MEDIUM, "state_retained");
            "unresolved by a bot": [ours(), unresolved(3.0, bot("triage[bot]"))] => (UNKNOWN, WEAK, "state_changed_by_bot");
            "unresolved by someone nobody can see (rule 4)": [ours(), unresolved(3.0, None)] => (REJECTED, MEDIUM, "reopened");
            "our resolution not delivered, the workflow unresolved it since: no human verdict":
                [obs(-1.0, human("alice"), K::Opened).snap(open()), unresolved(3.0, workflow_actor())] => (UNKNOWN, WEAK, "state_changed_by_bot");
            "another thread unresolved":
                [ours(), obs(3.0, human("alice"), K::ThreadUnresolved { thread_id: "PRRT_2".into(), comment_ids: vec![] })] => (ACCEPTED, MEDIUM, "state_retained");
            "our resolution not delivered, human unresolve after":
                [obs(-1.0, workflow_actor(), K::Opened).snap(open()), unresolved(3.0, human("alice"))] => (REJECTED, STRONG, "reopened");
            "PR merged after the resolution":
                [ours(), obs(10.0, human("carol"), K::Closed).snap(merged(human("carol")))] => (ACCEPTED, STRONG, "state_retained_and_merged"), at 12.0;
            "PR closed unmerged after the resolution":
                [ours(), obs(10.0, human("carol"), K::Closed).snap(snapshot("closed"))] => (IGNORED, MEDIUM, "closed_without_merge"), at 48.0;
            "PR deleted": [ours(), obs(3.0, human("carol"), K::Deleted)] => (UNKNOWN, NONE, "deleted");
            "thread id from the line when the target is the PR":
                [ours(), unresolved(3.0, human("alice"))] => (REJECTED, STRONG, "reopened"), on record("resolve_pull_request_review_thread").extra("thread_id", json!("PRRT_1"));
            "no thread id":
                [ours()] => (UNKNOWN, NONE, "missing_execution_state"), on record("resolve_pull_request_review_thread");
            + unobserved_case("nothing observed", r());
        );
    }
}
