//! `update_issue`, `update_pull_request` and `update_discussion`: did the
//! edit stick? Each changed field (recorded `before_state` → `after_state`)
//! is compared with its value in the latest snapshot, and the last event that
//! touched it says who moved it.
//!
//! A text field a person later edited so that the output's value is kept
//! within theirs (the output's words, whitespace and case normalised, as one
//! contiguous run of the person's words) is **preserved**, not replaced: seed
//! 000 §7 update_issue "Later visible non-bot edit preserves core change —
//! accepted — medium" (`state_preserved`; update_pull_request and
//! update_discussion mirror update_issue). It applies to the fields whose
//! value is text here: `title`. A body is recorded as a hash only, so a
//! person's body edit cannot be seen to keep the output's text (it is
//! replaced); sets (labels, assignees) already compare only the output's
//! delta; `base`, `state`, `draft` and `head_sha` are single values.

use serde_json::Value;

use super::common::{
    by_closer, gone, human_after, is_closed, last_close, merge_obs, missing_reference,
    missing_state, unseen_reversal, value_text, window_passed, RETENTION_WINDOW,
};
use super::EvalContext;
use safe_outcomes_model::{
    ActorClass, Evaluation, EvidenceStrength as S, ItemSnapshot, Observation, ObservationKind as K,
    OutcomeStatus as O, Signal,
};

/// The fields gh-aw records for issue edits.
const ISSUE_FIELDS: &[&str] = &["title", "body_hash", "state", "labels", "assignees"];
/// The fields gh-aw records for PR edits (labels/assignees kept in case they appear).
const PR_FIELDS: &[&str] = &[
    "title",
    "body_hash",
    "state",
    "labels",
    "assignees",
    "base",
    "draft",
    "head_sha",
];

pub fn update_issue(ctx: &EvalContext) -> Evaluation {
    judge(ctx, ISSUE_FIELDS, false)
}

pub fn update_pull_request(ctx: &EvalContext) -> Evaluation {
    judge(ctx, PR_FIELDS, true)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum FieldState {
    Retained,
    Reverted,
    Replaced,
    /// A later value keeps the output's value within it (module doc).
    Preserved,
}

/// Who last moved a contested field.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mover {
    Human,
    Bot,
    /// No event seen, or its actor was not visible: counted like a human, hedged.
    Unseen,
}

struct Verdict<'a> {
    field: &'static str,
    state: FieldState,
    mover: Mover,
    by: Option<&'a Observation>,
}

fn judge(ctx: &EvalContext, fields: &[&'static str], is_pr: bool) -> Evaluation {
    if let Some(e) = missing_reference(ctx) {
        return e;
    }
    let (before, after) = (&ctx.record.before_state, &ctx.record.after_state);
    let recorded: Vec<&'static str> = fields
        .iter()
        .copied()
        .filter(|k| after.contains_key(*k))
        .collect();
    let changed: Vec<&'static str> = recorded
        .iter()
        .copied()
        .filter(|k| before.get(*k).map(|b| norm(k, b)) != Some(norm(k, &after[*k])))
        .collect();
    if recorded.is_empty() {
        return missing_state(
            "The record has no after-state for fields this evaluator can compare.",
        );
    }
    if changed.is_empty() {
        return Evaluation::new(O::Unknown, S::None, Signal::NoStateDelta)
            .note("The recorded before and after states are equal: the update changed nothing.");
    }
    let Some(snap) = ctx.latest_snapshot() else {
        return Evaluation::new(O::Unknown, S::None, Signal::TargetUnobserved)
            .unresolved()
            .note("The App has not yet seen the target's state.");
    };
    if let Some(e) = gone(ctx, false) {
        return e;
    }
    let verdicts: Vec<Verdict> = changed
        .iter()
        .filter_map(|k| verdict(ctx, shown(ctx, k).unwrap_or(snap), k))
        .collect();
    if verdicts.is_empty() {
        return Evaluation::new(O::Unknown, S::None, Signal::StateUnreadable).note(
            "The target's state does not show the changed fields, so they cannot be compared.",
        );
    }
    let names = |want: FieldState| -> Vec<&str> {
        verdicts
            .iter()
            .filter(|v| v.state == want)
            .map(|v| v.field)
            .collect()
    };
    let e = contested(&verdicts).unwrap_or_else(|| retained(ctx, fields, is_pr, &changed));
    e.detail("changed_fields", changed.clone())
        .detail("retained", names(FieldState::Retained))
        .detail("reverted", names(FieldState::Reverted))
        .detail("replaced", names(FieldState::Replaced))
}

/// The latest state that shows `field` (general rule 2: a state without a
/// field says nothing about it — an issue comment's issue names no PR
/// base, so a PR's base is the one the latest PR state showed), unless an
/// event that changes the field came after it (then nothing shows its
/// value now, and the latest state is read as it is). Found by the
/// differential once the API path read a PR's past bases: a person's
/// comment after a bot's base change hid the change from real time.
fn shown<'a>(ctx: &EvalContext<'a>, field: &str) -> Option<&'a ItemSnapshot> {
    for o in ctx.observations.iter().rev() {
        if let Some(s) = o.snapshot.as_ref().filter(|s| current(s, field).is_some()) {
            return Some(s);
        }
        if touches(field, &o.event) {
            return None;
        }
    }
    None
}

fn verdict<'a>(
    ctx: &EvalContext<'a>,
    snap: &ItemSnapshot,
    field: &'static str,
) -> Option<Verdict<'a>> {
    let (before, after) = (&ctx.record.before_state, &ctx.record.after_state);
    let current = current(snap, field)?;
    let before = before.get(field).map(|b| norm(field, b));
    let after = norm(field, &after[field]);
    let mut state = if is_set(field) {
        set_state(before.as_ref(), &after, &current)
    } else if current == after {
        FieldState::Retained
    } else if Some(&current) == before.as_ref() {
        FieldState::Reverted
    } else {
        FieldState::Replaced
    };
    // New commits on top move `head_sha` without undoing the update.
    if field == "head_sha" && state == FieldState::Replaced {
        state = FieldState::Retained;
    }
    if state == FieldState::Replaced && is_text(field) && kept_within(&after, &current) {
        state = FieldState::Preserved;
    }
    let by = ctx
        .after_execution()
        .filter(|o| touches(field, &o.event))
        .last();
    let mover = match by.map(|o| ctx.actor_class(o)) {
        Some(ActorClass::VisibleNonBotActor) => Mover::Human,
        Some(ActorClass::BotActor | ActorClass::SameWorkflowActor) => Mover::Bot,
        _ => Mover::Unseen,
    };
    // Only a visible person's edit is the seed's "later visible non-bot
    // edit"; kept by automation or by someone unseen, the output's value is
    // simply still there.
    if state == FieldState::Preserved && mover != Mover::Human {
        state = FieldState::Retained;
    }
    Some(Verdict {
        field,
        state,
        mover,
        by,
    })
}

/// A field moved away from the update: by a human (or unseen) it is a
/// rejection, a revert outranking a replacement; by automation it is no verdict.
fn contested(verdicts: &[Verdict]) -> Option<Evaluation> {
    let human = |state| {
        verdicts
            .iter()
            .find(|v| v.state == state && v.mover != Mover::Bot)
    };
    let reject = |v: &Verdict, signal: Signal, note: &str| {
        let e = Evaluation::new(O::Rejected, S::Strong, signal).note(note);
        let e = match v.by {
            Some(o) => e.decided_by(&o.id, o.at),
            None => e,
        };
        if v.mover == Mover::Unseen {
            unseen_reversal(e)
        } else {
            e
        }
    };
    if let Some(v) = human(FieldState::Reverted) {
        return Some(reject(
            v,
            Signal::StateReverted,
            "A changed field was set back to its value before the update.",
        ));
    }
    if let Some(v) = human(FieldState::Replaced) {
        return Some(reject(
            v,
            Signal::StateReplaced,
            "A changed field was later set to a different value.",
        ));
    }
    if let Some(v) = verdicts.iter().find(|v| v.state == FieldState::Preserved) {
        let e = Evaluation::new(O::Accepted, S::Medium, Signal::StatePreserved).note(
            "A visible non-bot actor later edited a changed field and kept the update's value within theirs.",
        );
        return Some(match v.by {
            Some(o) => e.decided_by(&o.id, o.at),
            None => e,
        });
    }
    verdicts
        .iter()
        .any(|v| v.state != FieldState::Retained)
        .then(|| {
            Evaluation::new(O::Unknown, S::Weak, Signal::StateChangedByBot)
                .note("Automation changed an updated field; that is not a human verdict.")
        })
}

/// Every changed field still holds the updated value.
fn retained(ctx: &EvalContext, fields: &[&str], is_pr: bool, changed: &[&str]) -> Evaluation {
    if is_pr {
        if let Some(m) = ctx
            .latest_snapshot()
            .filter(|s| s.merged)
            .and(merge_obs(ctx))
        {
            return Evaluation::new(O::Accepted, S::Strong, Signal::StateRetainedAndMerged)
                .decided_by(&m.id, m.at)
                .detail("merged", true)
                .note("The PR was merged with the update still in place.");
        }
        // Seed: a PR closed unmerged after the update is "often rejected/medium",
        // unless closing was itself the update.
        let closed_after = is_closed(ctx)
            && !changed.contains(&"state")
            && last_close(ctx).is_some_and(|c| c.at >= ctx.record.executed_at);
        if closed_after {
            // Seed: "PR closed unmerged after update — often rejected —
            // medium", whoever closed it (rule 8).
            return by_closer(
                ctx,
                Evaluation::new(O::Rejected, S::Medium, Signal::ClosedWithoutMerge)
                    .note("The PR was closed without merge after the update."),
            );
        }
    }
    let later_human_edit = human_after(ctx).any(|o| fields.iter().any(|k| touches(k, &o.event)));
    let e = if later_human_edit || window_passed(ctx, RETENTION_WINDOW) {
        Evaluation::new(O::Accepted, S::Medium, Signal::StateRetained).note(if later_human_edit {
            "A visible non-bot actor edited the target later and kept the update."
        } else {
            "The updated fields still hold their new values after the 24h window."
        })
    } else {
        Evaluation::new(O::Pending, S::Weak, Signal::StateRetained)
            .note("The updated fields hold their new values; the 24h window has not passed.")
    };
    e.detail("later_human_edit", later_human_edit)
}

/// Fields whose value is free text (see the module doc).
fn is_text(field: &str) -> bool {
    field == "title"
}

/// The words of a text value: lower-cased, split on whitespace.
fn text_words(v: &Value) -> Vec<String> {
    v.as_str()
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_lowercase)
        .collect()
}

/// The output's value `ours` is kept within `later`: its words, in order, as
/// one contiguous run of `later`'s words (whitespace and case normalised).
pub(super) fn kept_within(ours: &Value, later: &Value) -> bool {
    let (o, l) = (text_words(ours), text_words(later));
    !o.is_empty() && l.windows(o.len()).any(|w| w == o.as_slice())
}

fn is_set(field: &str) -> bool {
    matches!(field, "labels" | "assignees")
}

/// Set fields compare the update's delta: what it added must still be there
/// and what it removed still absent; unrelated additions do not matter.
fn set_state(before: Option<&Value>, after: &Value, current: &Value) -> FieldState {
    let list = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let (after, current) = (list(after), list(current));
    let before_list = before.map(list).unwrap_or_default();
    let added: Vec<&String> = after.iter().filter(|l| !before_list.contains(l)).collect();
    let removed: Vec<&String> = before_list.iter().filter(|l| !after.contains(l)).collect();
    if added.iter().all(|l| current.contains(l)) && removed.iter().all(|l| !current.contains(l)) {
        FieldState::Retained
    } else if before.is_some()
        && added.iter().all(|l| !current.contains(l))
        && removed.iter().all(|l| current.contains(l))
    {
        FieldState::Reverted
    } else {
        FieldState::Replaced
    }
}

/// A recorded value in comparable form: sets sorted and lower-cased, states
/// lower-cased, strings trimmed.
fn norm(field: &str, v: &Value) -> Value {
    match field {
        "labels" | "assignees" => {
            let mut items: Vec<String> = match v {
                Value::Array(a) => a
                    .iter()
                    .filter_map(|x| match x {
                        Value::Number(_) => None,
                        x => value_text(x, &["name", "login"]),
                    })
                    .collect(),
                Value::String(s) => s.split(',').map(str::to_string).collect(),
                _ => Vec::new(),
            };
            items = items
                .iter()
                .map(|s| s.trim().to_lowercase())
                .filter(|s| !s.is_empty())
                .collect();
            items.sort();
            items.dedup();
            Value::from(items)
        }
        "draft" => match v {
            Value::String(s) => Value::Bool(s.eq_ignore_ascii_case("true")),
            other => other.clone(),
        },
        "state" => Value::from(v.as_str().unwrap_or("").to_lowercase()),
        _ => match v {
            Value::String(s) => Value::from(s.trim()),
            other => other.clone(),
        },
    }
}

/// The field's current value from a snapshot; `None` when the snapshot does
/// not carry it.
fn current(s: &ItemSnapshot, field: &str) -> Option<Value> {
    let text = |t: &str| (!t.is_empty()).then(|| Value::from(t));
    match field {
        "title" => text(&s.title).map(|v| norm(field, &v)),
        "body_hash" => text(&s.body_hash),
        "state" => text(&s.state).map(|v| norm(field, &v)),
        "labels" => Some(norm(field, &Value::from(s.labels.clone()))),
        "assignees" => Some(norm(field, &Value::from(s.assignees.clone()))),
        "base" => s.base.as_deref().map(Value::from),
        "draft" => Some(Value::Bool(s.draft)),
        "head_sha" => s.head_sha.as_deref().map(Value::from),
        _ => None,
    }
}

/// Does this event change `field`? An edit that does not say what changed
/// counts for every text field.
fn touches(field: &str, event: &K) -> bool {
    match event {
        K::Edited {
            title_from,
            body_hash_from,
            base_from,
        } => {
            let vague = title_from.is_none() && body_hash_from.is_none() && base_from.is_none();
            match field {
                "title" => vague || title_from.is_some(),
                "body_hash" => vague || body_hash_from.is_some(),
                "base" => vague || base_from.is_some(),
                _ => false,
            }
        }
        K::Closed | K::Reopened => field == "state",
        K::Labeled { .. } | K::Unlabeled { .. } => field == "labels",
        K::Assigned { .. } | K::Unassigned { .. } => field == "assignees",
        K::ConvertedToDraft | K::ReadyForReview => field == "draft",
        K::Synchronize { .. } | K::Pushed { .. } => field == "head_sha",
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::evaluate::testkit::*;
    use safe_outcomes_model::{ItemSnapshot, ObservationKind as K};

    fn titled(state: ItemSnapshot, title: &str) -> ItemSnapshot {
        ItemSnapshot {
            title: title.to_string(),
            ..state
        }
    }

    fn edit(kind: &str) -> safe_outcomes_model::ExecutionRecord {
        record(kind)
            .before(json!({"title": "old"}))
            .after(json!({"title": "new"}))
    }

    /// The workflow's own edit.
    fn ours() -> safe_outcomes_model::Observation {
        obs(-0.01, workflow_actor(), title_edit("old")).snap(titled(open(), "new"))
    }

    #[test]
    fn update_issue_table() {
        let r = || edit("update_issue");
        run_rows!(r(), 24.0;
            "retained after the window": [ours()] => (ACCEPTED, MEDIUM, "state_retained");
            "retained, window not passed": [ours()] => (PENDING, WEAK, "state_retained"), at 2.0;
            "later human edit preserves the change":
                [ours(), obs(1.0, human("alice"), K::Edited { title_from: None, body_hash_from: Some("b0".into()), base_from: None }).snap(titled(open(), "new"))] => (ACCEPTED, MEDIUM, "state_retained"), on r().before(json!({"title": "old", "body_hash": "b0"})).after(json!({"title": "new", "body_hash": "b0"})), at 2.0;
            "reverted by a human":
                [ours(), obs(3.0, human("alice"), title_edit("new")).snap(titled(open(), "old"))] => (REJECTED, STRONG, "state_reverted");
            "replaced by a human":
                [ours(), obs(3.0, human("alice"), title_edit("new")).snap(titled(open(), "third"))] => (REJECTED, STRONG, "state_replaced");
            "reverted, mover not visible: a reversal, one step weaker (rule 4)":
                [obs(3.0, None, K::Other { event: "issues".into(), action: "x".into() }).snap(titled(open(), "old"))] => (REJECTED, MEDIUM, "state_reverted");
            "a person keeps the update's title within theirs":
                [ours(), obs(3.0, human("alice"), title_edit("new")).snap(titled(open(), "[triage]  NEW  - more words"))] => (ACCEPTED, MEDIUM, "state_preserved");
            "a bot keeps it within its own: still retained":
                [ours(), obs(3.0, bot("t[bot]"), title_edit("new")).snap(titled(open(), "new (bot)"))] => (ACCEPTED, MEDIUM, "state_retained");
            "a word only inside another word is not kept":
                [ours(), obs(3.0, human("alice"), title_edit("new")).snap(titled(open(), "renewed"))] => (REJECTED, STRONG, "state_replaced");
            "changed by a bot only":
                [ours(), obs(3.0, bot("title-linter[bot]"), title_edit("new")).snap(titled(open(), "fixed"))] => (UNKNOWN, WEAK, "state_changed_by_bot");
            "labels: unrelated human label keeps the update":
                [obs(3.0, human("alice"), labeled("c")).snap(with_labels(open(), &["a", "B", "c"]))] => (ACCEPTED, MEDIUM, "state_retained"), on record("update_issue").before(json!({"labels": ["a"]})).after(json!({"labels": ["a", "b"]}));
            "labels: human removed the added label":
                [obs(3.0, human("alice"), unlabeled("b")).snap(with_labels(open(), &["a"]))] => (REJECTED, STRONG, "state_reverted"), on record("update_issue").before(json!({"labels": ["a"]})).after(json!({"labels": ["a", "b"]}));
            "issue deleted": [ours(), obs(3.0, human("alice"), K::Deleted)] => (UNKNOWN, NONE, "deleted");
            "no after state":
                [ours()] => (UNKNOWN, NONE, "missing_execution_state"), on record("update_issue").before(json!({"title": "old"}));
            "before equals after":
                [ours()] => (UNKNOWN, NONE, "no_state_delta"), on record("update_issue").before(json!({"title": "same"})).after(json!({"title": "same"}));
            "after-only field retained":
                [ours()] => (ACCEPTED, MEDIUM, "state_retained"), on record("update_issue").after(json!({"title": "new"}));
            + unobserved_case("target not yet seen", r());
            + no_target_case(r());
        );
    }

    #[test]
    fn update_pull_request_table() {
        let r = || edit("update_pull_request");
        run_rows!(r(), 24.0;
            "retained after the window": [ours()] => (ACCEPTED, MEDIUM, "state_retained");
            "merged after the update, retained":
                [ours(), obs(10.0, human("alice"), K::Closed).snap(titled(merged(human("alice")), "new"))] => (ACCEPTED, STRONG, "state_retained_and_merged");
            "reverted by a human":
                [ours(), obs(3.0, human("alice"), title_edit("new")).snap(titled(open(), "old"))] => (REJECTED, STRONG, "state_reverted");
            "replaced by a human":
                [ours(), obs(3.0, human("alice"), title_edit("new")).snap(titled(open(), "other"))] => (REJECTED, STRONG, "state_replaced");
            "closed unmerged by a human after the update":
                [ours(), obs(5.0, human("alice"), K::Closed).snap(titled(snapshot("closed"), "new"))] => (REJECTED, MEDIUM, "closed_without_merge");
            "closed by a bot after the update":
                [ours(), obs(5.0, bot("stale[bot]"), K::Closed).snap(titled(snapshot("closed"), "new"))] => (IGNORED, WEAK, "lifecycle");
            "closed and reopened after the update, title kept":
                [ours(), obs(5.0, human("alice"), K::Closed).snap(titled(snapshot("closed"), "new")), obs(6.0, human("alice"), K::Reopened).snap(titled(open(), "new"))] => (ACCEPTED, MEDIUM, "state_retained");
            "the update itself closed the PR: still closed is retention":
                [obs(0.0, workflow_actor(), K::Closed).snap(snapshot("closed"))] => (ACCEPTED, MEDIUM, "state_retained"), on record("update_pull_request").before(json!({"state": "open"})).after(json!({"state": "closed"}));
            "draft flag reverted by a human":
                [obs(2.0, human("alice"), K::ConvertedToDraft).snap(ItemSnapshot { draft: true,..open() })] => (REJECTED, STRONG, "state_reverted"), on record("update_pull_request").before(json!({"draft": true})).after(json!({"draft": false}));
            "new commits after a head update are not a revert":
                [obs(2.0, human("alice"), sync("b", "c")).snap(with_head(open(), "c"))] => (ACCEPTED, MEDIUM, "state_retained"), on record("update_pull_request").before(json!({"head_sha": "a"})).after(json!({"head_sha": "b"}));
            "cannot compare": [ours()] => (UNKNOWN, NONE, "missing_execution_state"), on record("update_pull_request");
            "a base a bot moved stays moved under a later state that names no base":
                [
                    obs(0.0, workflow_actor(), base_edit("main")).snap(based(open(), "release")),
                    obs(3.0, bot("retarget[bot]"), base_edit("release")).snap(based(open(), "develop")),
                    obs(9.0, human("alice"), comment(7)).snap(open()),
                ] => (UNKNOWN, WEAK, "state_changed_by_bot"), on based_record();
            "a base a person set back, then a state that names no base":
                [
                    obs(0.0, workflow_actor(), base_edit("main")).snap(based(open(), "release")),
                    obs(3.0, human("alice"), base_edit("release")).snap(based(open(), "main")),
                    obs(9.0, human("alice"), comment(7)).snap(open()),
                ] => (REJECTED, STRONG, "state_reverted"), on based_record();
            "a base changed with no state after it is not read from an older state":
                [
                    obs(0.0, workflow_actor(), base_edit("main")).snap(based(open(), "release")),
                    obs(3.0, human("alice"), base_edit("release")),
                    obs(9.0, human("alice"), comment(7)).snap(open()),
                ] => (UNKNOWN, NONE, "state_unreadable"), on based_record();
        );
    }

    fn based(s: ItemSnapshot, base: &str) -> ItemSnapshot {
        ItemSnapshot {
            base: Some(base.to_string()),
            ..s
        }
    }

    fn base_edit(from: &str) -> K {
        K::Edited {
            title_from: None,
            body_hash_from: None,
            base_from: Some(from.to_string()),
        }
    }

    fn based_record() -> safe_outcomes_model::ExecutionRecord {
        record("update_pull_request")
            .before(json!({"base": "main"}))
            .after(json!({"base": "release"}))
    }

    /// Seed 000 §7 update_issue "Store field-level before and after
    /// values": the values are compared, not their spelling. A set given as
    /// a comma list or an array, a draft flag as a string or a boolean, a
    /// state in GraphQL's capitals or REST's lower case are the same value,
    /// so the same edit gets the same verdict in every form.
    #[test]
    fn the_recorded_form_of_a_value_does_not_matter() {
        let closed = || obs(0.0, workflow_actor(), K::Closed).snap(snapshot("closed"));
        let labeled_b =
            || obs(0.0, workflow_actor(), labeled("b")).snap(with_labels(open(), &["a", "b"]));
        let ready = || obs(0.0, workflow_actor(), K::ReadyForReview).snap(open());
        let cases = [
            (
                "update_issue",
                json!({"labels": ["a"]}),
                json!({"labels": ["a", "b"]}),
                json!({"labels": "a"}),
                json!({"labels": " a, B "}),
                labeled_b(),
            ),
            (
                "update_pull_request",
                json!({"draft": true}),
                json!({"draft": false}),
                json!({"draft": "true"}),
                json!({"draft": "False"}),
                ready(),
            ),
            (
                "update_issue",
                json!({"state": "open"}),
                json!({"state": "closed"}),
                json!({"state": "OPEN"}),
                json!({"state": "CLOSED"}),
                closed(),
            ),
        ];
        for (kind, before, after, before_alt, after_alt, ours) in cases {
            let want = eval(
                &record(kind).before(before.clone()).after(after.clone()),
                vec![ours.clone()],
                24.0,
            );
            assert_eq!(
                want.triple().2.as_str(),
                "state_retained",
                "{before} → {after}: {want:?}"
            );
            let got = eval(
                &record(kind)
                    .before(before_alt.clone())
                    .after(after_alt.clone()),
                vec![ours],
                24.0,
            );
            assert_eq!(
                got.triple(),
                want.triple(),
                "{before_alt} → {after_alt}: {got:?}"
            );
        }
    }

    /// Seed 000 §7 update_issue: "For body fields, compare normalized body
    /// hash". The body is recorded as its hash: the hash the target shows
    /// now says whether the body is still the output's, was set back, or
    /// was replaced.
    #[test]
    fn a_body_is_judged_by_its_hash() {
        let r = || {
            record("update_issue")
                .before(json!({"body_hash": "h0"}))
                .after(json!({"body_hash": "h1"}))
        };
        let body = |hash: &str| ItemSnapshot {
            body_hash: hash.into(),
            ..open()
        };
        let body_edit = |from: &str| K::Edited {
            title_from: None,
            body_hash_from: Some(from.into()),
            base_from: None,
        };
        let ours = || obs(-0.01, workflow_actor(), body_edit("h0")).snap(body("h1"));
        run_rows!(r(), 24.0;
            "still the output's body": [ours()] => (ACCEPTED, MEDIUM, "state_retained");
            "set back by a person": [ours(), obs(3.0, human("alice"), body_edit("h1")).snap(body("h0"))] => (REJECTED, STRONG, "state_reverted");
            "rewritten by a person": [ours(), obs(3.0, human("alice"), body_edit("h1")).snap(body("h2"))] => (REJECTED, STRONG, "state_replaced");
        );
    }

    /// Seed 000 §7 update_issue "Later visible non-bot reverts or replaces
    /// the change — rejected — strong": the mover of each kind of field is
    /// the event that changes it (a close or reopen the state, an
    /// (un)assignment the assignees, a conversion to draft the draft flag,
    /// an (un)labelling the labels, an edit the title), so a person's undo
    /// is a person's (strong), a bot's is no verdict (rule 8).
    #[test]
    fn each_field_is_moved_by_the_event_that_changes_it() {
        let draft = |d: bool| ItemSnapshot { draft: d, ..open() };
        let assigned = |who: &[&str]| ItemSnapshot {
            assignees: strings(who),
            ..open()
        };
        let fields: Vec<(&str, serde_json::Value, serde_json::Value, K, ItemSnapshot)> = vec![
            (
                "update_issue",
                json!({"state": "open"}),
                json!({"state": "closed"}),
                K::Reopened,
                open(),
            ),
            (
                "update_pull_request",
                json!({"state": "closed"}),
                json!({"state": "open"}),
                K::Closed,
                snapshot("closed"),
            ),
            (
                "update_issue",
                json!({"assignees": []}),
                json!({"assignees": ["bob"]}),
                K::Unassigned {
                    assignee: "bob".into(),
                },
                assigned(&[]),
            ),
            (
                "update_issue",
                json!({"assignees": ["bob"]}),
                json!({"assignees": []}),
                K::Assigned {
                    assignee: "bob".into(),
                },
                assigned(&["bob"]),
            ),
            (
                "update_pull_request",
                json!({"draft": true}),
                json!({"draft": false}),
                K::ConvertedToDraft,
                draft(true),
            ),
            (
                "update_pull_request",
                json!({"draft": false}),
                json!({"draft": true}),
                K::ReadyForReview,
                draft(false),
            ),
            (
                "update_issue",
                json!({"labels": []}),
                json!({"labels": ["b"]}),
                unlabeled("b"),
                open(),
            ),
            (
                "update_issue",
                json!({"title": "old"}),
                json!({"title": "new"}),
                title_edit("new"),
                titled(open(), "old"),
            ),
        ];
        for (kind, before, after, undo, now) in fields {
            let r = record(kind).before(before).after(after);
            for (who, want) in [
                (human("alice"), (REJECTED, STRONG)),
                (bot("sync[bot]"), (UNKNOWN, WEAK)),
            ] {
                let e = eval(
                    &r,
                    vec![obs(3.0, who, undo.clone()).snap(now.clone())],
                    24.0,
                );
                assert_eq!((e.status, e.strength), want, "{kind} {undo:?}: {e:?}");
            }
        }
    }

    /// The converse: an event that does not change a field does not move
    /// it. A bot retitles the target; a person then closes, reopens,
    /// labels, assigns, pushes to it, marks it ready or edits only its
    /// body: the title is still the bot's doing (rule 8), not a person's
    /// replacement.
    #[test]
    fn an_event_that_leaves_a_field_alone_does_not_move_it() {
        let body_only = K::Edited {
            title_from: None,
            body_hash_from: Some("h0".into()),
            base_from: None,
        };
        let others = [
            K::Closed,
            K::Reopened,
            labeled("x"),
            K::Assigned {
                assignee: "alice".into(),
            },
            sync("a", "b"),
            K::ConvertedToDraft,
            body_only,
        ];
        for kind in ["update_issue", "update_pull_request"] {
            for event in &others {
                let o = vec![
                    ours(),
                    obs(2.0, bot("title-linter[bot]"), title_edit("new"))
                        .snap(titled(open(), "fixed")),
                    obs(3.0, human("alice"), event.clone()).snap(titled(open(), "fixed")),
                ];
                let e = eval(&edit(kind), o, 24.0);
                assert_eq!(
                    e.triple().2.as_str(),
                    "state_changed_by_bot",
                    "{kind} {event:?}: {e:?}"
                );
            }
        }
    }

    /// Pushing commits on top of the head an update set is a person working
    /// on with it: a later visible non-bot edit that kept the update
    /// (accepted before the window passed), not a replacement.
    #[test]
    fn a_person_s_push_on_top_of_an_updated_head_keeps_it() {
        let r = record("update_pull_request")
            .before(json!({"head_sha": "a"}))
            .after(json!({"head_sha": "b"}));
        let e = eval(
            &r,
            vec![obs(1.0, human("alice"), sync("b", "c")).snap(with_head(open(), "c"))],
            2.0,
        );
        assert_eq!(e.triple().0, ACCEPTED, "{e:?}");
        assert_eq!(e.details["later_human_edit"], true);
    }

    /// A base branch is one value, not text: git's branch names are
    /// case-sensitive, so a person moving the PR to `Release` replaced the
    /// update's `release` (only a title can keep the output's words within
    /// a person's).
    #[test]
    fn a_single_value_field_is_never_kept_within_another() {
        let o = vec![
            obs(0.0, workflow_actor(), base_edit("main")).snap(based(open(), "release")),
            obs(3.0, human("alice"), base_edit("release")).snap(based(open(), "Release")),
        ];
        let e = eval(&based_record(), o, 24.0);
        let (status, strength, signal) = e.triple();
        assert_eq!(
            (status, strength, signal.as_str()),
            (REJECTED, STRONG, "state_replaced")
        );
    }

    #[test]
    fn details_list_fields_and_hedge_unseen_movers() {
        let e = eval(
            &edit("update_issue"),
            vec![obs(
                3.0,
                None,
                K::Other {
                    event: "issues".into(),
                    action: "x".into(),
                },
            )
            .snap(titled(open(), "old"))],
            24.0,
        );
        assert_eq!(e.details["changed_fields"], json!(["title"]));
        assert_eq!(e.details["reverted"], json!(["title"]));
        assert_eq!(e.details["reversed_by"], json!("unseen"));
        assert_eq!(e.strength, safe_outcomes_model::EvidenceStrength::Medium);
        assert_eq!(e.confidence, safe_outcomes_model::Confidence::Low);
        let later = eval(
            &edit("update_issue"),
            vec![
                ours(),
                obs(1.0, human("alice"), labeled("x")).snap(titled(open(), "new")),
            ],
            2.0,
        );
        assert_eq!(later.details["later_human_edit"], true);
    }
}
