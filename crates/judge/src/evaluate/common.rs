//! Helpers shared by the evaluator families: windows, closers, deletion, and
//! the small verdicts several types give the same way.

use chrono::Duration;

use super::EvalContext;
use safe_outcomes_model::{
    ActorClass, Confidence, Evaluation, EvidenceStrength as S, Observation, ObservationKind as K,
    OutcomeStatus as O, Signal,
};

/// Seed 000 §5: T+24h is the primary signal, so retention (labels kept, close
/// kept, edit kept) counts as acceptance only once this much time has passed.
pub const RETENTION_WINDOW: i64 = 24;
/// Hours with no human activity before a created issue or comment is `ignored`.
pub const ISSUE_IGNORE_WINDOW: i64 = 7 * 24;
/// Hours with no human activity before a PR (or a push to one) is `ignored`.
pub const PR_IGNORE_WINDOW: i64 = 30 * 24;
/// How near gh-aw's expiry notice must be to a close to explain it.
const EXPIRY_NOTICE_SLACK_MINUTES: i64 = 10;

/// True once `hours` have passed since execution.
pub fn window_passed(ctx: &EvalContext, hours: i64) -> bool {
    ctx.elapsed() >= Duration::hours(hours)
}

/// The snake_case name of an actor class, for `details`.
pub fn class_name(class: ActorClass) -> &'static str {
    match class {
        ActorClass::BotActor => "bot_actor",
        ActorClass::VisibleNonBotActor => "visible_non_bot_actor",
        ActorClass::SameWorkflowActor => "same_workflow_actor",
        ActorClass::UnknownActor => "unknown_actor",
        ActorClass::SystemActor => "system_actor",
    }
}

/// Add an observation id to the evidence without making it the deciding one.
pub fn cite(mut e: Evaluation, obs: &Observation) -> Evaluation {
    if !e.evidence.contains(&obs.id) {
        e.evidence.push(obs.id.clone());
    }
    e
}

/// gh-aw's `missing_reference`: the record names no object to look at.
pub fn missing_reference(ctx: &EvalContext) -> Option<Evaluation> {
    ctx.record.target.is_none().then(|| {
        Evaluation::new(O::Unknown, S::None, Signal::MissingReference)
            .unresolved()
            .note("The execution record names no target object, so there is nothing to observe.")
    })
}

/// The checks most evaluators open with, in order: no target named
/// ([`missing_reference`]), nothing seen of it yet ([`unobserved`]), or
/// deleted or transferred away ([`gone`]).
pub fn precheck(ctx: &EvalContext, human_deletion_rejects: bool) -> Option<Evaluation> {
    missing_reference(ctx).or_else(|| unseen_or_gone(ctx, human_deletion_rejects))
}

/// The checks of [`precheck`] after the record's own: nothing of the target
/// seen yet ([`unobserved`]), or the target deleted or transferred away
/// ([`gone`]). For a type that checks more of its record first.
pub fn unseen_or_gone(ctx: &EvalContext, human_deletion_rejects: bool) -> Option<Evaluation> {
    if !ctx.target_seen() {
        return Some(unobserved());
    }
    gone(ctx, human_deletion_rejects)
}

/// Nothing at all has been observed of the target yet.
pub fn unobserved() -> Evaluation {
    Evaluation::new(O::Unknown, S::None, Signal::TargetUnobserved)
        .unresolved()
        .note("The App has not yet seen any event for the target.")
}

/// The target was deleted or transferred away. A deletion counts as a
/// rejection only where the type's rule allows it and a visible non-bot did it
/// (DESIGN §7: rejected "where the audit trail shows it", else unknown).
pub fn gone(ctx: &EvalContext, human_deletion_rejects: bool) -> Option<Evaluation> {
    let obs = ctx
        .observations
        .iter()
        .find(|o| matches!(o.event, K::Deleted | K::Transferred))?;
    let class = class_name(ctx.actor_class(obs));
    if matches!(obs.event, K::Transferred) {
        let e = Evaluation::new(O::Unknown, S::None, Signal::Transferred)
            .detail("transferred_by_type", class)
            .note("The target was transferred to another repository and is no longer observable here.");
        return Some(cite(e, obs));
    }
    if human_deletion_rejects && ctx.is_human(obs) {
        return Some(
            Evaluation::new(O::Rejected, S::Strong, Signal::Deleted)
                .detail("deleted_by_type", class)
                .decided_by(&obs.id, obs.at)
                .note("The target was deleted by a visible non-bot actor."),
        );
    }
    let e = Evaluation::new(O::Unknown, S::None, Signal::Deleted)
        .detail("deleted_by_type", class)
        .note("The target was deleted; who deleted it does not make this a human verdict.");
    Some(cite(e, obs))
}

/// The `what` deleted (by `obs`): a rejection when a visible non-bot deleted
/// it; otherwise (the workflow tidying up, a bot) it says nothing about
/// reception.
pub fn deletion(ctx: &EvalContext, obs: &Observation, what: &str) -> Evaluation {
    let class = class_name(ctx.actor_class(obs));
    if ctx.is_human(obs) {
        Evaluation::new(O::Rejected, S::Strong, Signal::Deleted)
            .decided_by(&obs.id, obs.at)
            .detail("deleted_by_type", class)
            .note(format!(
                "The {what} was deleted by a visible non-bot actor."
            ))
    } else {
        let e = Evaluation::new(O::Unknown, S::None, Signal::Deleted)
            .detail("deleted_by_type", class)
            .note(format!(
                "The {what} was deleted, but not by a visible non-bot actor."
            ));
        cite(e, obs)
    }
}

/// Nothing decided yet: once `window` hours have passed, ignored for want of
/// engagement (`ignored`); before, pending on `waiting` (its note `pending`).
///
/// Engagement by actors nobody can see ([`unseen_engagement`]) is not
/// absence: it keeps the output pending past the window, never `ignored`.
pub fn no_engagement_yet(
    ctx: &EvalContext,
    window: i64,
    ignored: &str,
    (waiting, pending): (Signal, &str),
) -> Evaluation {
    let unseen = unseen_engagement(ctx).count();
    if window_passed(ctx, window) && unseen == 0 {
        Evaluation::new(O::Ignored, S::Weak, Signal::NoEngagement).note(ignored)
    } else if unseen > 0 {
        Evaluation::new(O::Pending, S::Weak, waiting)
            .confidence(Confidence::Low)
            .detail("unseen_engagement", unseen)
            .note(format!(
                "{pending} Engagement by actors nobody can see (a reaction count without reactors, an author not shown) is there, so its absence cannot be concluded."
            ))
    } else {
        Evaluation::new(O::Pending, S::Weak, waiting).note(pending)
    }
}

/// Engagement after execution by an actor nobody can see: a reaction a
/// rollup counts without its reactor (positive, or of unknown kind), a
/// comment or review whose author the answer does not show. Evidence of
/// unknown actors, never of absence (docs/evaluation.md, rule 8).
pub fn unseen_engagement<'a, 'c>(
    ctx: &'c EvalContext<'a>,
) -> impl Iterator<Item = &'a Observation> + 'c {
    ctx.after_execution().filter(move |o| {
        ctx.actor_class(o) == ActorClass::UnknownActor
            && match &o.event {
                K::Reacted { content, .. } => {
                    content == "any" || o.event.reaction_polarity() == Some(true)
                }
                K::CommentCreated { .. } | K::ReviewSubmitted { .. } => true,
                _ => false,
            }
    })
}

/// Rule 8: evidence whose actor nobody can see, where the seed's row asks
/// for a visible non-bot (a reply, a reaction): the row's verdict one step
/// weaker, with low confidence and `details.engaged_by = "unseen"`.
pub fn engaged_by_unseen(e: Evaluation, obs: &Observation) -> Evaluation {
    let notes = format!(
        "{} Who did it is not visible, so the evidence is one step weaker than a person's.",
        e.notes
    );
    let strength = weaker(e.strength);
    Evaluation { strength, ..e }
        .decided_by(&obs.id, obs.at)
        .confidence(Confidence::Low)
        .detail("engaged_by", "unseen")
        .note(notes.trim_start())
}

/// A close's verdict by who closed it, where the seed's row does not ask
/// who: a visible non-bot's close decides (`verdict`, decided by the
/// close); automation's is lifecycle; a closer nobody can see still decides,
/// with low confidence (rule 8).
pub fn by_closer(ctx: &EvalContext, verdict: Evaluation) -> Evaluation {
    match closer(ctx) {
        Closer::Human(c) => verdict.decided_by(&c.id, c.at),
        Closer::Lifecycle(c) => lifecycle(ctx, c),
        Closer::Unknown(c) => {
            actor_unseen(verdict, "closed", c.or_else(|| ctx.latest_snapshot_obs()))
        }
    }
}

/// Rule 8: a state whose actor is not visible, where the seed's row does
/// not ask who (a PR closed unmerged, a discussion closed as a duplicate):
/// the state decides at the row's strength, with low confidence and
/// `details.<role>_by = "unseen"`. Only an actor known to be automation
/// makes it lifecycle instead.
pub fn actor_unseen(e: Evaluation, role: &str, obs: Option<&Observation>) -> Evaluation {
    let notes = format!(
        "{} Who {role} it is not visible (automation cannot be excluded), so confidence is low.",
        e.notes
    );
    let e = match obs {
        Some(o) => e.decided_by(&o.id, o.at),
        None => e,
    };
    e.confidence(Confidence::Low)
        .detail(&format!("{role}_by"), "unseen")
        .note(notes.trim_start())
}

/// The record lacks what the rule needs to tell its target's fate (`note`
/// says what).
pub fn missing_state(note: impl Into<String>) -> Evaluation {
    Evaluation::new(O::Unknown, S::None, Signal::MissingExecutionState).note(note)
}

/// True when the latest state seen is closed: the latest snapshot's, or a
/// close or reopen seen after it. A webhook's close or reopen carries the
/// item as it then was; the API's timeline tells a past close or reopen
/// with its time and actor but not the item, so a window that ends before
/// the item's current state (a PR closed, then reopened later) sees the
/// close the timeline dates, as the webhook path does (rule 10).
pub fn is_closed(ctx: &EvalContext) -> bool {
    ctx.observations
        .iter()
        .rev()
        .find_map(|o| match (&o.snapshot, &o.event) {
            // A snapshot that does not show the state (`""`: the source did
            // not say) says nothing of it (general rule 2).
            (Some(s), _) if !s.state.is_empty() => Some(s.state.eq_ignore_ascii_case("closed")),
            (_, K::Closed) => Some(true),
            (_, K::Reopened) => Some(false),
            _ => None,
        })
        .unwrap_or(false)
}

/// True when the latest snapshot says the PR is merged.
pub fn is_merged(ctx: &EvalContext) -> bool {
    ctx.latest_snapshot().is_some_and(|s| s.merged)
}

/// The first observation showing the PR merged (the merge itself).
pub fn merge_obs<'a>(ctx: &EvalContext<'a>) -> Option<&'a Observation> {
    ctx.observations
        .iter()
        .find(|o| o.snapshot.as_ref().is_some_and(|s| s.merged))
}

/// The last `Closed` event: the close that produced the current closed state.
pub fn last_close<'a>(ctx: &EvalContext<'a>) -> Option<&'a Observation> {
    ctx.observations
        .iter()
        .rev()
        .find(|o| matches!(o.event, K::Closed))
}

/// gh-aw posts an expiry notice (lifecycle marker) when it closes expired
/// items; such a close is automation even if the token looks like a user.
pub fn has_expiry_notice(ctx: &EvalContext, close: &Observation) -> bool {
    ctx.observations.iter().any(|o| {
        matches!(
            o.event,
            K::CommentCreated {
                lifecycle_marker: true,
                ..
            }
        ) && (o.at - close.at).num_minutes().abs() <= EXPIRY_NOTICE_SLACK_MINUTES
    })
}

/// Who closed an item we created.
pub enum Closer<'a> {
    /// A visible non-bot actor: a human verdict.
    Human(&'a Observation),
    /// A bot, the workflow's own actor, or a gh-aw expiry close.
    Lifecycle(&'a Observation),
    /// No close event seen, or it carried no usable actor.
    Unknown(Option<&'a Observation>),
}

pub fn closer<'a>(ctx: &EvalContext<'a>) -> Closer<'a> {
    let Some(close) = last_close(ctx) else {
        return Closer::Unknown(None);
    };
    if has_expiry_notice(ctx, close) {
        return Closer::Lifecycle(close);
    }
    match ctx.actor_class(close) {
        ActorClass::VisibleNonBotActor => Closer::Human(close),
        ActorClass::BotActor | ActorClass::SameWorkflowActor => Closer::Lifecycle(close),
        ActorClass::UnknownActor | ActorClass::SystemActor => Closer::Unknown(Some(close)),
    }
}

/// gh-aw's `lifecycle`: closed by automation, which is neither acceptance nor
/// rejection. Our model has no `lifecycle` status, so it is `ignored/weak`.
pub fn lifecycle(ctx: &EvalContext, close: &Observation) -> Evaluation {
    let e = Evaluation::new(O::Ignored, S::Weak, Signal::Lifecycle)
        .detail("closed", true)
        .detail("closed_by_type", class_name(ctx.actor_class(close)))
        .detail("expiry_close", has_expiry_notice(ctx, close))
        .note("The target was closed by automation (a bot, the workflow's own actor, or a gh-aw expiry), not by a person.");
    cite(e, close)
}

/// Closed, but we cannot tell by whom: gh-aw reports this as an evaluation
/// error (DESIGN §5 maps gh-aw `error` to `unknown` + `evaluation_error`).
pub fn close_actor_unknown(close: Option<&Observation>) -> Evaluation {
    let e = Evaluation::new(O::Unknown, S::Weak, Signal::EvaluationError)
        .detail("closed", true)
        .detail("reason", "close_actor_unknown")
        .note(
            "The target is closed but the close's actor was not visible, so it cannot be judged.",
        );
    match close {
        Some(obs) => cite(e, obs),
        None => e,
    }
}

/// Observations after execution by visible non-bot actors. A reaction is
/// engagement only when positive (`+1`, heart, hooray, rocket): a 👎 or 😕
/// is an answer the types that read it judge themselves, and a 👀 or 😄
/// says nothing about the output.
///
/// A check run or suite is no person's act on the item (`is_check`), whoever
/// GitHub names as its sender.
pub fn human_after<'a, 'c>(ctx: &'c EvalContext<'a>) -> impl Iterator<Item = &'a Observation> + 'c {
    ctx.after_execution().filter(move |o| {
        ctx.is_human(o)
            && !is_check(o)
            && (!matches!(o.event, K::Reacted { .. }) || o.event.reaction_polarity() == Some(true))
    })
}

/// A check run or check suite (`check_run`, `check_suite` deliveries, filed
/// under the commit and so copied to its PRs). Their sender is whoever
/// caused them (the pusher, a person re-running a check, a person pressing
/// the App's own check run's button): CI's act and the App's, about a
/// commit, not a person's engagement with the item, and nothing the API's
/// reads of an item show. GitHub sends `rerequested`, `requested_action`
/// and a suite's `requested`/`rerequested` to the check's own app alone, so
/// for the App they are acts on its own outcome check.
pub fn is_check(o: &Observation) -> bool {
    matches!(o.event, K::CheckRun { .. } | K::CheckSuite { .. })
        || matches!(&o.event, K::Other { event, .. } if event == "check_run" || event == "check_suite")
}

/// How many comments visible non-bot actors wrote after execution (the
/// "non-bot comment" of seed 000 §7's issue, discussion and PR rows).
pub fn human_comments(ctx: &EvalContext) -> usize {
    human_after(ctx)
        .filter(|o| matches!(o.event, K::CommentCreated { .. }))
        .count()
}

/// General rule 4: the current state contradicts the output's effect, but
/// who reversed it is not visible. It is still a reversal, one step weaker
/// than a visible person's (strong → medium → weak), with low confidence and
/// `details.reversed_by = "unseen"`, and the notes say so.
pub fn unseen_reversal(e: Evaluation) -> Evaluation {
    let strength = weaker(e.strength);
    let notes = format!(
        "{} Who reversed it is not visible, so the evidence is one step weaker than a person's.",
        e.notes
    );
    Evaluation { strength, ..e }
        .confidence(Confidence::Low)
        .detail("reversed_by", "unseen")
        .note(notes.trim_start())
}

/// One step weaker evidence.
pub fn weaker(s: S) -> S {
    match s {
        S::Strong => S::Medium,
        S::Medium => S::Weak,
        S::Weak | S::None => s,
    }
}

/// Lower confidence by one step (used when who acted is not visible).
pub fn hedge(e: Evaluation) -> Evaluation {
    let lower = match e.confidence {
        Confidence::High => Confidence::Medium,
        _ => Confidence::Low,
    };
    e.confidence(lower)
}

/// Rule 11: the names among `wanted` (labels, assignees) the output really
/// changed, as the record shows them: with a recorded before-state of `key`
/// (`labelsBefore` or `before_state.labels`; `before_state.assignees`),
/// those not already there when adding, those there when removing.
/// Without a recorded before-state every name counts.
pub fn with_delta(
    record: &safe_outcomes_model::ExecutionRecord,
    key: &str,
    wanted: &[String],
    adding: bool,
) -> Vec<String> {
    let recorded = record
        .before_state
        .get(key)
        .and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|v| {
                    v.as_str()
                        .or_else(|| v.get("name")?.as_str())
                        .or_else(|| v.get("login")?.as_str())
                })
                .map(str::to_string)
                .collect::<Vec<String>>()
        });
    let before = match key {
        "labels" => record.labels_before.clone().or(recorded),
        _ => recorded,
    };
    let Some(before) = before else {
        return wanted.to_vec();
    };
    wanted
        .iter()
        .filter(|w| before.iter().any(|b| b.eq_ignore_ascii_case(w)) != adding)
        .cloned()
        .collect()
}

/// A recorded value as text: a string (trimmed) or a number as written, or
/// an object's string field, the first of `keys` the object has.
pub fn value_text(v: &serde_json::Value, keys: &[&str]) -> Option<String> {
    use serde_json::Value;
    match v {
        Value::String(s) => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Object(o) => keys
            .iter()
            .find_map(|k| o.get(*k))
            .and_then(Value::as_str)
            .map(str::to_string),
        _ => None,
    }
}

/// Rule 11: the record's before-state of `key` already held `wanted` (a
/// milestone by number or title, an issue type by name).
pub fn already_so(record: &safe_outcomes_model::ExecutionRecord, key: &str, wanted: &str) -> bool {
    let Some(v) = record.before_state.get(key) else {
        return false;
    };
    let text = match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Object(o) => ["number", "title", "name"].iter().find_map(|k| {
            o.get(*k).map(|x| match x {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            })
        }),
        _ => None,
    };
    text.is_some_and(|t| t.trim().eq_ignore_ascii_case(wanted.trim()))
}

/// Rule 11: no recorded delta, nothing to retain.
pub fn no_delta(what: &str) -> Evaluation {
    Evaluation::new(O::Unknown, S::None, Signal::NoStateDelta).note(format!(
        "The record shows {what} already as the output set it: the output changed nothing, so there is nothing to retain."
    ))
}

/// Roles at the time of the act (issue 44, item 4): a rule that counts an
/// action by the person the output gave a role (an assignee, a requested
/// reviewer) counts it only while that person holds the role. The role is
/// held from execution until an observation `ends` it, and again after one
/// that `starts` it, in the order of the observations (time, then id); `act`
/// itself is not counted.
pub fn holds_role_at(
    ctx: &EvalContext,
    act: &Observation,
    ends: impl Fn(&K) -> bool,
    starts: impl Fn(&K) -> bool,
) -> bool {
    let mut holds = true;
    for o in ctx.after_execution() {
        if o.id == act.id || (o.at, &o.id) > (act.at, &act.id) {
            break;
        }
        if ends(&o.event) {
            holds = false;
        } else if starts(&o.event) {
            holds = true;
        }
    }
    holds
}

#[cfg(test)]
#[path = "common_tests.rs"]
mod tests;
