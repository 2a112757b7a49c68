//! Releases and artifacts: `update_release` (seed 000 §7), `upload_asset`
//! and `upload_artifact` (no seed rows).
//!
//! Release `edited`/`deleted` events carry no time of their own (see
//! `ingest::webhook::releases`), so the release evaluator does not order edits by
//! time: an edit undoes the agent's change when its `changes.body.from` is the
//! agent's body, whenever it is dated. Publication has its own time.
//!
//! Assets and artifacts are files, not things a person reviews: there is no
//! human-check signal for them. Their evaluators are dedicated but can only
//! say the file still exists (pending/weak `target_exists_only`, never
//! accepted) or, for an asset, that a person deleted or force-pushed away
//! its branch (rejected).

use serde_json::Value;

use super::common::{
    deletion, missing_reference, missing_state, unobserved, window_passed, RETENTION_WINDOW,
};
use super::EvalContext;
use safe_outcomes_model::observation::body_hash;
use safe_outcomes_model::{
    ActorClass, Evaluation, EvidenceStrength as S, Observation, ObservationKind as K,
    OutcomeStatus as O, Signal, TargetKind,
};

/// A deleted branch's `after` in a push.
const NULL_SHA: &str = "0000000000000000000000000000000000000000";

fn release_change(o: &Observation) -> Option<(&str, bool, &str)> {
    match &o.event {
        K::ReleaseChanged {
            action,
            draft,
            body_hash,
            ..
        } => Some((action.as_str(), *draft, body_hash.as_str())),
        _ => None,
    }
}

/// The release gone from its readers: deleted, or unpublished (a draft
/// again), as its webhook tells it, or the API's 404 for its tag (which
/// GitHub answers for a deleted release and for a draft alike: "Get a
/// published release with the specified tag"). Seed 000 §7 update_release:
/// "Release deleted — rejected — strong"; an unpublished release is
/// withdrawn the same way (the edit no longer reaches anyone). Limit: a
/// release published again after it was unpublished is still read as
/// withdrawn.
fn withdrawn(o: &Observation) -> bool {
    matches!(o.event, K::Deleted)
        || release_change(o).is_some_and(|c| matches!(c.0, "deleted" | "unpublished"))
}

/// The delivery an observation came from (`{delivery}/{n}`).
fn delivery(o: &Observation) -> &str {
    o.id.rsplit_once('/').map_or(o.id.as_str(), |(d, _)| d)
}

/// The body hash the release had after the `edited` delivery of `edit`.
fn body_after<'a>(ctx: &EvalContext<'a>, edit: &Observation) -> Option<&'a str> {
    ctx.observations
        .iter()
        .filter(|o| delivery(o) == delivery(edit))
        .find_map(|o| release_change(o).map(|(_, _, h)| h))
}

/// Did the release edit remain?
pub fn update_release(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = missing_reference(ctx) {
        return e;
    }
    if let Some(d) = ctx.observations.iter().find(|o| withdrawn(o)) {
        return deletion(ctx, d, "release");
    }
    if !ctx.observations.iter().any(|o| release_change(o).is_some()) {
        return unobserved();
    }
    let own_edit = ctx.observations.iter().rev().find(|o| {
        matches!(o.event, K::Edited { .. }) && ctx.actor_class(o) == ActorClass::SameWorkflowActor
    });
    let intended = intended_hash(ctx, own_edit);
    let before = str_state(&ctx.record.before_state, "body_hash").or_else(|| {
        own_edit.and_then(|o| match &o.event {
            K::Edited { body_hash_from, .. } => body_hash_from.clone(),
            _ => None,
        })
    });
    let Some(intended) = intended else {
        return missing_state("Neither the record nor the workflow's own edit event says what the body became, so the fields cannot be compared.");
    };
    // A human edit away from the agent's body, whenever it is dated.
    let undo = ctx.observations.iter().find(|o| {
        ctx.is_human(o)
            && matches!(&o.event, K::Edited { body_hash_from: Some(from), .. } if *from == intended)
    });
    if let Some(u) = undo {
        let now = body_after(ctx, u);
        let e = if now.is_some() && now == before.as_deref() {
            Evaluation::new(O::Rejected, S::Strong, Signal::StateReverted).note(
                "A visible non-bot edited the release body back to what it was before the update.",
            )
        } else {
            Evaluation::new(O::Rejected, S::Medium, Signal::StateReplaced)
                .note("A visible non-bot replaced the body the update wrote.")
        };
        return e.decided_by(&u.id, u.at);
    }
    let published = ctx.after_execution().find(|o| {
        ctx.is_human(o)
            && release_change(o).is_some_and(|c| matches!(c.0, "published" | "released"))
    });
    if let Some(p) = published {
        return Evaluation::new(O::Accepted, S::Strong, Signal::ReleasePublished)
            .decided_by(&p.id, p.at)
            .detail("body_hash", intended)
            .note("A visible non-bot published the release after the update.");
    }
    let latest = ctx
        .observations
        .iter()
        .rev()
        .find_map(|o| release_change(o).map(|c| c.2));
    if latest.is_some_and(|h| h != intended) {
        return Evaluation::new(O::Unknown, S::Weak, Signal::StateChangedByBot).note(
            "The release body differs from the update, and no visible non-bot edit explains it.",
        );
    }
    if window_passed(ctx, RETENTION_WINDOW) {
        Evaluation::new(O::Accepted, S::Medium, Signal::StateRetained)
            .note("The release body still matches the update.")
    } else {
        Evaluation::new(O::Pending, S::Weak, Signal::StateRetained)
            .note("The release body matches the update; the retention window has not passed.")
    }
}

/// What the update wrote: `after_state.body_hash`, the hash of a `replace`
/// body, or the body the workflow's own `edited` event shows.
fn intended_hash(ctx: &EvalContext, own_edit: Option<&Observation>) -> Option<String> {
    let r = ctx.record;
    str_state(&r.after_state, "body_hash")
        .or_else(|| {
            let replace = r.field_str("operation").is_none_or(|op| op == "replace");
            replace
                .then(|| r.field_str("body"))
                .flatten()
                .map(body_hash)
        })
        .or_else(|| {
            own_edit
                .and_then(|o| body_after(ctx, o))
                .map(str::to_string)
        })
}

fn str_state(state: &serde_json::Map<String, Value>, key: &str) -> Option<String> {
    state
        .get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// The asset's branch: deleted or force-pushed by a person rejects it;
/// otherwise the asset merely exists.
pub fn upload_asset(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = missing_reference(ctx) {
        return e;
    }
    let on_branch = ctx.targets(TargetKind::Ref);
    if on_branch {
        let rewritten = ctx.after_execution().find(|o| {
            ctx.is_human(o) && matches!(&o.event, K::Pushed { forced, after, .. } if *forced || after == NULL_SHA)
        });
        if let Some(o) = rewritten {
            let deleted = matches!(&o.event, K::Pushed { after, .. } if after == NULL_SHA);
            let e = if deleted {
                Evaluation::new(O::Rejected, S::Strong, Signal::AssetBranchDeleted)
                    .note("A visible non-bot deleted the assets branch.")
            } else {
                Evaluation::new(O::Rejected, S::Medium, Signal::AssetBranchRewritten).note(
                    "A visible non-bot force-pushed the assets branch, which may drop the asset.",
                )
            };
            return e.decided_by(&o.id, o.at);
        }
    }
    exists_only(
        on_branch,
        "The asset was uploaded; an asset has no human check beyond its branch surviving.",
    )
}

/// Artifacts live in the Actions API only (no webhook shows them), and
/// expire by retention: the most we can say is that one was uploaded.
pub fn upload_artifact(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = missing_reference(ctx) {
        return e;
    }
    exists_only(
        false,
        "Artifacts are visible only through the Actions API and carry no human-check signal.",
    )
}

fn exists_only(resolved: bool, note: &str) -> Evaluation {
    let e = Evaluation::new(O::Pending, S::Weak, Signal::TargetExistsOnly).note(note);
    if resolved {
        e
    } else {
        e.unresolved()
    }
}

#[cfg(test)]
#[path = "release_tests.rs"]
mod tests;
