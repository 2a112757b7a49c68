//! Metadata evaluators: `assign_milestone`, `set_issue_type`,
//! `set_issue_field`, `replace_label`, `link_sub_issue` (seed 000 §7 "Labels,
//! Metadata, and Planning"), and the helpers the assignment and project
//! families share: who moved a value, retention over the 24h window, and field
//! values compared with the intended one.
//!
//! Limits, by type:
//! - `assign_milestone`: snapshots carry the milestone's title only. The
//!   intended title comes from `milestone_title` (metadata or line), else the
//!   recorded after-state, else the `Milestoned` event the workflow itself
//!   caused. With only a number and no such event, a milestone still set with
//!   no later change is taken as the intended one, with low confidence.
//! - `set_issue_field`: issue fields have no documented webhook; the
//!   `FieldValueChanged` observations come from reconciliation (GraphQL) or
//!   any other source. Without one, the field is unreadable (`unknown`).
//! - `replace_label` (no seed table) is judged like an `update_issue` of the
//!   labels: the new label kept and the old one absent after 24h →
//!   accepted/medium `state_retained`; the old one re-added or the new one
//!   removed by a human → rejected/strong `state_reverted`; by automation →
//!   unknown/weak `state_changed_by_bot`; nothing recorded →
//!   unknown/none `missing_execution_state`.
//! - `link_sub_issue`: the seed's "target closed as duplicate or invalid →
//!   rejected or ignored" is rejected/medium when a human closed the
//!   sub-issue as duplicate or not planned.

use chrono::{DateTime, Duration, Utc};
use serde_json::{json, Map, Value};

use super::common::{
    already_so, cite, gone, hedge, missing_reference, missing_state, no_delta, unobserved,
    unseen_or_gone, unseen_reversal, value_text, window_passed, RETENTION_WINDOW,
};
use super::EvalContext;
use safe_outcomes_model::target::thread_key;
use safe_outcomes_model::{
    ActorClass, Evaluation, EvidenceStrength as S, ExecutionRecord, ItemSnapshot, Observation,
    ObservationKind as K, OutcomeStatus as O, Signal, TargetKind,
};

// ---------------------------------------------------------------- helpers

/// Who made a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mover {
    Human,
    /// A bot or the workflow's own actor: never a verdict.
    Bot,
    /// No event seen, or no visible actor (reconciled state).
    Unseen,
}

pub(super) fn mover(ctx: &EvalContext, by: Option<&Observation>) -> Mover {
    match by.map(|o| ctx.actor_class(o)) {
        Some(ActorClass::VisibleNonBotActor) => Mover::Human,
        Some(ActorClass::BotActor | ActorClass::SameWorkflowActor) => Mover::Bot,
        _ => Mover::Unseen,
    }
}

/// A change away from the output. A human's is the given verdict; one with no
/// visible actor is the same verdict with less confidence (as `update_issue`
/// does); automation's is no verdict.
pub(super) fn moved_away(
    ctx: &EvalContext,
    by: Option<&Observation>,
    verdict: (O, S, Signal),
    note: &str,
) -> Evaluation {
    let (status, strength, signal) = verdict;
    match mover(ctx, by) {
        Mover::Bot => {
            let e = Evaluation::new(O::Unknown, S::Weak, Signal::StateChangedByBot)
                .note("Automation changed what the output set; that is not a human verdict.");
            by.map_or(e.clone(), |o| cite(e, o))
        }
        m => {
            let e = Evaluation::new(status, strength, signal).note(note);
            let e = match by {
                Some(o) => e.decided_by(&o.id, o.at),
                None => e,
            };
            if m == Mover::Unseen {
                unseen_reversal(e)
            } else {
                e
            }
        }
    }
}

/// gh-aw logs a line's `timestamp` after the API call, so the output's own
/// event can carry a GitHub time a little before `executed_at`.
const OWN_EVENT_SLACK_SECONDS: i64 = 600;

/// The start of "since execution" for finding the output's own event and the
/// state it left: `executed_at` less the slack.
pub(super) fn execution_start(ctx: &EvalContext) -> DateTime<Utc> {
    safe_outcomes_model::sane_time::minus(
        ctx.record.executed_at,
        Duration::seconds(OWN_EVENT_SLACK_SECONDS),
    )
}

/// Observations from `execution_start` on.
pub(super) fn since_execution<'a, 'c>(
    ctx: &'c EvalContext<'a>,
) -> impl Iterator<Item = &'a Observation> + 'c {
    let start = execution_start(ctx);
    ctx.observations.iter().filter(move |o| o.at >= start)
}

/// Still as the output left it: accepted/medium once the 24h window passed,
/// pending/weak before.
pub(super) fn retained(ctx: &EvalContext, signal: Signal, what: &str) -> Evaluation {
    if window_passed(ctx, RETENTION_WINDOW) {
        Evaluation::new(O::Accepted, S::Medium, signal)
            .note(format!("{what} still holds after the 24h window."))
    } else {
        Evaluation::new(O::Pending, S::Weak, signal)
            .note(format!("{what} holds; the 24h window has not passed."))
    }
}

/// The latest state seen since execution (with the slack), among observations filed
/// under `key` (any key when `None`). Earlier snapshots show the state before
/// the output and say nothing about what became of it.
pub(super) fn snapshot_since<'a>(
    ctx: &EvalContext<'a>,
    key: Option<&str>,
) -> Option<&'a ItemSnapshot> {
    since_execution(ctx)
        .filter(|o| key.is_none_or(|k| o.target == k))
        .filter_map(|o| o.snapshot.as_ref())
        .last()
}

/// The latest state since execution that shows `shows` (general rule 2: a
/// state without the field says nothing about it).
pub(super) fn snapshot_showing<'a>(
    ctx: &EvalContext<'a>,
    shows: fn(&ItemSnapshot) -> bool,
) -> Option<&'a ItemSnapshot> {
    since_execution(ctx)
        .filter_map(|o| o.snapshot.as_ref())
        .filter(|s| shows(s))
        .last()
}

/// Closed as completed, or merged.
pub(super) fn completed(s: &ItemSnapshot) -> bool {
    s.merged
        || (s.state.eq_ignore_ascii_case("closed")
            && s.state_reason.as_deref() == Some("completed"))
}

/// The last observation after execution matching `pred`.
pub(super) fn last_after<'a>(
    ctx: &EvalContext<'a>,
    pred: impl Fn(&K) -> bool,
) -> Option<&'a Observation> {
    since_execution(ctx).filter(|o| pred(&o.event)).last()
}

fn same(a: &str, b: &str) -> bool {
    a.trim().eq_ignore_ascii_case(b.trim())
}

/// A string field from the line, its metadata, or the recorded after-state.
fn intended_str(record: &ExecutionRecord, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|k| {
        let v = record
            .extra
            .get(*k)
            .or_else(|| record.metadata.get(*k))
            .or_else(|| record.after_state.get(*k))?;
        value_text(v, &["title", "name"])
    })
}

// ------------------------------------------------------------ field values

/// Workflow stages in order, for "moved forward" (Todo → In Progress → Done).
const STAGES: &[&[&str]] = &[
    &["backlog", "icebox", "triage", "new"],
    &["todo", "to do", "ready", "planned", "up next"],
    &[
        "in progress",
        "doing",
        "started",
        "active",
        "in development",
    ],
    &["in review", "review", "in qa", "qa", "testing", "blocked"],
    &[
        "done",
        "complete",
        "completed",
        "closed",
        "shipped",
        "released",
        "resolved",
    ],
];

fn stage(value: &str) -> Option<usize> {
    let v = value.trim().to_lowercase();
    STAGES.iter().position(|names| names.contains(&v.as_str()))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FieldState {
    Retained,
    /// Moved to a later workflow stage.
    Advanced,
    Removed,
    /// Back to the value before the output.
    Reverted,
    Replaced,
}

pub(super) struct FieldVerdict<'a> {
    pub field: String,
    pub state: FieldState,
    /// The change that produced the current value.
    pub by: Option<&'a Observation>,
}

/// The current value of `field` against `intended`, from `FieldValueChanged`
/// observations; `None` when the field's value since execution is unknown.
pub(super) fn field_verdict<'a>(
    ctx: &EvalContext<'a>,
    field: &str,
    intended: &str,
) -> Option<FieldVerdict<'a>> {
    let changes: Vec<&Observation> = ctx
        .observations
        .iter()
        .filter(|o| matches!(&o.event, K::FieldValueChanged { field: f, .. } if same(f, field)))
        .collect();
    let value = |o: &Observation| match &o.event {
        K::FieldValueChanged { to, .. } => to.clone(),
        _ => None,
    };
    let from = |o: &Observation| match &o.event {
        K::FieldValueChanged { from, .. } => from.clone(),
        _ => None,
    };
    let latest = *changes.last()?;
    let current = value(latest);
    let is_intended = current.as_deref().is_some_and(|c| same(c, intended));
    let start = execution_start(ctx);
    if latest.at < start && !is_intended {
        return None;
    }
    // The value before the output: what our own change replaced, else the
    // last value seen before execution.
    let before = changes
        .iter()
        .find(|o| o.at >= start && !ctx.is_human(o))
        .map(|o| from(o))
        .or_else(|| changes.iter().rfind(|o| o.at < start).map(|o| value(o)))
        .flatten();
    let state = match current.as_deref() {
        _ if is_intended => FieldState::Retained,
        None => FieldState::Removed,
        Some(c) if stage(c).zip(stage(intended)).is_some_and(|(c, i)| c > i) => {
            FieldState::Advanced
        }
        Some(c) if before.as_deref().is_some_and(|b| same(b, c)) => FieldState::Reverted,
        Some(_) => FieldState::Replaced,
    };
    Some(FieldVerdict {
        field: field.to_string(),
        state,
        by: Some(latest).filter(|o| o.at >= start),
    })
}

/// One evaluation from several field verdicts: the most severe wins.
/// An advance by a human is strong acceptance; an advance by automation or an
/// unseen actor still leaves the value past the intended one, so it counts as
/// retained.
pub(super) fn judge_fields(ctx: &EvalContext, verdicts: &[FieldVerdict]) -> Evaluation {
    // The reversals, most severe first: the first found decides.
    #[rustfmt::skip]
    let reversals = [
        (FieldState::Removed, (O::Rejected, S::Strong, Signal::FieldRemoved), "The field value the output set was cleared."),
        (FieldState::Reverted, (O::Rejected, S::Medium, Signal::StateReverted), "The field was set back to its value before the output."),
        (FieldState::Replaced, (O::Rejected, S::Medium, Signal::StateReplaced), "The field was changed to a different value."),
    ];
    let reversal = reversals.into_iter().find_map(|(state, outcome, note)| {
        let v = verdicts.iter().find(|v| v.state == state)?;
        Some(moved_away(ctx, v.by, outcome, note))
    });
    let e = if let Some(e) = reversal {
        e
    } else if let Some(v) = verdicts
        .iter()
        .find(|v| v.state == FieldState::Advanced && mover(ctx, v.by) == Mover::Human)
    {
        let by = v.by.expect("a human mover has an observation");
        Evaluation::new(O::Accepted, S::Strong, Signal::FieldAdvanced)
            .decided_by(&by.id, by.at)
            .note("A visible non-bot actor moved the field forward in the workflow.")
    } else {
        retained(ctx, Signal::StateRetained, "The field value the output set")
    };
    let names = |want: FieldState| -> Vec<&str> {
        verdicts
            .iter()
            .filter(|v| v.state == want)
            .map(|v| v.field.as_str())
            .collect()
    };
    e.detail("retained", names(FieldState::Retained))
        .detail("advanced", names(FieldState::Advanced))
        .detail("removed", names(FieldState::Removed))
        .detail("reverted", names(FieldState::Reverted))
        .detail("replaced", names(FieldState::Replaced))
}

// -------------------------------------------------------------- evaluators

/// Did the milestone remain assigned?
pub fn assign_milestone(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = missing_reference(ctx) {
        return e;
    }
    let record = ctx.record;
    let given = intended_str(record, &["milestone_number"]);
    // A milestone number is a correlation id: 0 or garbage names none
    // (read as the watch key and the API's read read it).
    let number = record.milestone_number().map(|n| n.to_string());
    let title = intended_str(record, &["milestone_title", "milestone"]).filter(|t| {
        // `after_state.milestone` may be the number.
        given.as_deref() != Some(t.as_str())
    });
    if number.is_none() && title.is_none() {
        return missing_state("The record names no milestone to look for.");
    }
    // Rule 11: the milestone was already set before the output.
    if [&number, &title]
        .iter()
        .filter_map(|v| v.as_deref())
        .any(|m| already_so(record, "milestone", m))
    {
        return no_delta("the milestone");
    }
    if let Some(e) = unseen_or_gone(ctx, false) {
        return e;
    }
    let Some(snap) = snapshot_showing(ctx, item_showing_milestone) else {
        return unobserved().note("No state of the target was seen since execution.");
    };
    let is_milestone_event = |k: &K| matches!(k, K::Milestoned { .. } | K::Demilestoned { .. });
    let last_change = last_after(ctx, is_milestone_event);
    // Without a title, the milestone the output set is the one its own event named.
    let ours = title.clone().or_else(|| {
        since_execution(ctx).find_map(|o| match &o.event {
            K::Milestoned { milestone } if !ctx.is_human(o) => Some(milestone.clone()),
            _ => None,
        })
    });
    if let Some(e) = milestone_deleted(ctx, last_change, ours.as_deref()) {
        return e
            .detail("intended_milestone_number", number)
            .detail("intended_milestone_title", ours);
    }
    // Numbers, when both sides have one, settle it whatever the titles say.
    let other_number = match (
        number.as_deref().and_then(|n| n.parse::<u64>().ok()),
        snap.milestone_number,
    ) {
        (Some(want), Some(have)) => want != have,
        _ => false,
    };
    let e = match (&snap.milestone, &ours) {
        (Some(_), _) if other_number => moved_away(
            ctx,
            last_change,
            (O::Rejected, S::Medium, Signal::MilestoneRemoved),
            "The target is now in a different milestone.",
        ),
        (None, _) => moved_away(
            ctx,
            last_change,
            (O::Rejected, S::Strong, Signal::MilestoneRemoved),
            "The milestone was removed from the target.",
        ),
        (Some(current), Some(want)) if !same(current, want) => moved_away(
            ctx,
            last_change,
            (O::Rejected, S::Medium, Signal::MilestoneRemoved),
            "The target is now in a different milestone.",
        ),
        (Some(_), None) if last_change.is_some_and(|o| ctx.is_human(o)) => moved_away(
            ctx,
            last_change,
            (O::Rejected, S::Medium, Signal::MilestoneRemoved),
            "A visible non-bot actor changed the milestone after the output.",
        ),
        (Some(current), _) => {
            let e = if completed(snap) {
                Evaluation::new(O::Accepted, S::Strong, Signal::CompletedUnderMilestone).note(
                    "The target was completed (closed as completed or merged) under the milestone.",
                )
            } else {
                retained(ctx, Signal::MilestoneAssigned, "The milestone")
            };
            let e = e.detail("milestone", current.clone());
            if ours.is_none() {
                // Only the number was recorded: we trust that nobody changed it.
                hedge(hedge(e))
            } else {
                e
            }
        }
    };
    e.detail("intended_milestone_number", number)
        .detail("intended_milestone_title", ours)
}

/// A state of the item itself that shows its milestone: not the
/// milestone's own (`milestone` deliveries are filed under the milestone's
/// key, which `assign_milestone` watches, with the milestone as snapshot).
fn item_showing_milestone(s: &ItemSnapshot) -> bool {
    !s.milestone_absent && s.kind != Some(TargetKind::Milestone)
}

/// General rule 15 (seed 000 assign_milestone, "did the milestone remain
/// assigned?"): a milestone deleted after the output is off every item it
/// held (GitHub: deleting a milestone leaves its issues and pull requests
/// in place, without it), so the assignment did not remain. The deletion
/// is a decision about the whole milestone, not about this item: rejected
/// with weak evidence (a person's), `state_changed_by_bot` (a bot's), and
/// hedged when nobody is named (the API's 404 names no one). Only when the
/// item held the milestone (`ours`, where its title is known) until the
/// deletion: not when the last change before it was a removal or another
/// milestone (that change decides), nor when a milestone was set since
/// (`last_change` is later), nor when the item was completed under it
/// before the deletion (completed under the milestone stands). A removal
/// the item's history shows decides even when it came with the deletion
/// (seed 000 "Milestone removed — rejected — strong"; the API path, which
/// dates a deletion at its 404 read, could not tell the two apart).
fn milestone_deleted(
    ctx: &EvalContext,
    last_change: Option<&Observation>,
    ours: Option<&str>,
) -> Option<Evaluation> {
    let deleted = last_after(
        ctx,
        |k| matches!(k, K::MilestoneChanged { action, .. } if action == "deleted"),
    )?;
    if last_change.is_some_and(|o| o.at > deleted.at) {
        return None;
    }
    let held_then = since_execution(ctx)
        .filter(|o| o.at <= deleted.at)
        .filter_map(|o| o.snapshot.as_ref())
        .filter(|s| item_showing_milestone(s))
        .last()?;
    let held = held_then
        .milestone
        .as_deref()
        .is_some_and(|m| ours.is_none_or(|want| same(m, want)));
    if !held || completed(held_then) {
        return None;
    }
    Some(
        moved_away(
            ctx,
            Some(deleted),
            (O::Rejected, S::Weak, Signal::MilestoneRemoved),
            "The milestone itself was deleted, which took it off the target: a decision about the milestone, not about this item.",
        )
        .detail("milestone_deleted", true),
    )
}

/// Did the issue type remain set?
pub fn set_issue_type(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = missing_reference(ctx) {
        return e;
    }
    let Some(want) = intended_str(ctx.record, &["issue_type", "type_name"]) else {
        return missing_state("The record names no issue type.");
    };
    // Rule 11: the type was already set before the output.
    if already_so(ctx.record, "issue_type", &want) {
        return no_delta("the issue type");
    }
    if let Some(e) = unseen_or_gone(ctx, false) {
        return e;
    }
    let Some(snap) = snapshot_since(ctx, None) else {
        return unobserved().note("No state of the target was seen since execution.");
    };
    let last_change = last_after(ctx, |k| {
        matches!(k, K::IssueTyped { .. } | K::IssueUntyped { .. })
    });
    let clearing = want.is_empty();
    let e = match snap.issue_type.as_deref() {
        // A missing type is either cleared or not in the payload: only an
        // `untyped` event tells them apart.
        None if !clearing
            && !last_change.is_some_and(|o| matches!(o.event, K::IssueUntyped { .. })) =>
        {
            return Evaluation::new(O::Unknown, S::None, Signal::IssueTypeUnreadable)
                .note("The target's state does not show an issue type.");
        }
        None if !clearing => moved_away(
            ctx,
            last_change,
            (O::Rejected, S::Strong, Signal::IssueTypeCleared),
            "The issue type was cleared.",
        ),
        Some(current) if clearing || !same(current, &want) => moved_away(
            ctx,
            last_change,
            (O::Rejected, S::Medium, Signal::IssueTypeChanged),
            "The issue type was changed to another type.",
        ),
        _ if completed(snap) && !clearing => {
            Evaluation::new(O::Accepted, S::Strong, Signal::CompletedWithType)
                .note("The issue was completed with the type still set.")
        }
        _ => retained(ctx, Signal::StateRetained, "The issue type"),
    };
    e.detail("intended_issue_type", want)
        .detail("issue_type", snap.issue_type.clone())
}

/// Did the issue field keep its value?
pub fn set_issue_field(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = missing_reference(ctx) {
        return e;
    }
    let field = intended_str(ctx.record, &["field_name", "field_node_id", "field"]);
    let value = intended_str(ctx.record, &["value"]);
    let (Some(field), Some(value)) = (field, value) else {
        return missing_state("The record names no field or no value.");
    };
    // Seed: "field removed or item removed → rejected/strong".
    if let Some(e) = gone(ctx, true) {
        return e;
    }
    match field_verdict(ctx, &field, &value) {
        Some(v) => judge_fields(ctx, &[v]),
        None => Evaluation::new(O::Unknown, S::None, Signal::FieldUnreadable)
            .note("No value of the field has been seen since execution (issue fields come from reconciliation, not webhooks)."),
    }
    .detail("field", field)
    .detail("intended_value", value)
}

/// `replace_label`: the recorded before/after labels (or the old/new label
/// fields) judged as an `update_issue` of the labels.
pub fn replace_label(ctx: &EvalContext) -> Evaluation {
    let r = ctx.record;
    let list = |state: &Map<String, Value>| state.get("labels").cloned();
    let field = |keys: &[&str]| keys.iter().find_map(|k| r.field_str(k).map(str::to_string));
    let old = field(&["old_label", "remove_label", "from_label", "label_to_remove"]);
    let new = field(&["new_label", "add_label", "to_label", "label"]);
    let (before, after) = match (list(&r.before_state), list(&r.after_state)) {
        (before, Some(after)) => (before, after),
        // Only the label names: before held the old one, after the new one.
        (_, None) => match (&old, &new) {
            (Some(o), Some(n)) => (Some(json!([o])), json!([n])),
            _ => (None, Value::Null),
        },
    };
    let mut labels_only = r.clone();
    labels_only.before_state = Map::new();
    labels_only.after_state = Map::new();
    if let Some(b) = before {
        labels_only.before_state.insert("labels".into(), b);
    }
    if !after.is_null() {
        labels_only.after_state.insert("labels".into(), after);
    }
    let inner = EvalContext {
        record: &labels_only,
        observations: ctx.observations,
        as_of: ctx.as_of,
    };
    let mut e = super::update::update_issue(&inner);
    // The old label back is a revert of the replacement; the new one gone
    // with the old one still away is a replacement by something else.
    let old_labels: Vec<String> = labels_only
        .before_state
        .get("labels")
        .and_then(Value::as_array)
        .map(|l| safe_outcomes_model::wire::label_names(l))
        .unwrap_or_default();
    let old_back = snapshot_since(ctx, None).is_some_and(|s| {
        s.labels
            .iter()
            .any(|l| old_labels.iter().any(|o| same(o, l)))
    });
    if e.signal == Signal::StateReplaced && old_back {
        e.signal = Signal::StateReverted;
    }
    e
}

/// Did the sub-issue link stick?
pub fn link_sub_issue(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = missing_reference(ctx) {
        return e;
    }
    let target = ctx.record.target.as_ref().expect("checked above");
    let field = |k: &str| ctx.record.field_str(k).and_then(|s| s.parse::<u64>().ok());
    let child = target.number.or_else(|| field("sub_issue_number"));
    let parent = target
        .parent_number
        .or_else(|| field("parent_issue_number"));
    let (Some(child), Some(parent)) = (child, parent) else {
        return missing_state("The record does not name both the parent and the sub-issue.");
    };
    if let Some(e) = unseen_or_gone(ctx, false) {
        return e;
    }
    let ours = |k: &K| matches!(k, K::SubIssueAdded { parent: p, child: c } | K::SubIssueRemoved { parent: p, child: c } if *p == parent && *c == child);
    let Some(link) = ctx.observations.iter().rfind(|o| ours(&o.event)) else {
        return Evaluation::new(O::Unknown, S::None, Signal::LinkUnobserved)
            .note("No sub-issue event for this parent and child has been seen.");
    };
    let e = if matches!(link.event, K::SubIssueRemoved { .. }) {
        moved_away(
            ctx,
            Some(link).filter(|o| o.at >= execution_start(ctx)),
            (O::Rejected, S::Strong, Signal::SubIssueUnlinked),
            "The sub-issue was unlinked from its parent.",
        )
    } else {
        let child_key = thread_key(&target.repo, child);
        let child_state = snapshot_since(ctx, Some(&child_key));
        let reason = child_state
            .filter(|s| s.state.eq_ignore_ascii_case("closed"))
            .and_then(|s| s.state_reason.as_deref());
        let close = last_after(ctx, |k| matches!(k, K::Closed))
            .filter(|o| o.target == child_key && ctx.is_human(o));
        match (reason, close) {
            (Some("duplicate" | "not_planned"), Some(c)) => Evaluation::new(
                O::Rejected,
                S::Medium,
                Signal::ClosedNotPlanned,
            )
            .decided_by(&c.id, c.at)
            .note("A visible non-bot actor closed the sub-issue as a duplicate or not planned."),
            _ => retained(ctx, Signal::StateRetained, "The sub-issue link"),
        }
    };
    e.detail("parent", parent).detail("child", child)
}

#[cfg(test)]
#[path = "metadata_tests.rs"]
mod tests;
