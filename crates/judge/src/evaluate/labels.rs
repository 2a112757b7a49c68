//! `add_labels` and `remove_labels`: did the label change stick?

use serde_json::Value;

use super::common::{
    gone, hedge, human_after, is_closed, missing_reference, missing_state, no_delta, unobserved,
    unseen_reversal, window_passed, with_delta, RETENTION_WINDOW,
};
use super::EvalContext;
use safe_outcomes_model::{
    ActorClass, Evaluation, EvidenceStrength as S, Observation, ObservationKind as K,
    OutcomeStatus as O, Signal,
};

pub fn add_labels(ctx: &EvalContext) -> Evaluation {
    let wanted = if !ctx.record.labels_added.is_empty() {
        ctx.record.labels_added.clone()
    } else {
        non_empty(ctx.record.field_list("labels"))
            .unwrap_or_else(|| state_diff(ctx, "after_state", "before_state"))
    };
    retention(ctx, &wanted, true)
}

pub fn remove_labels(ctx: &EvalContext) -> Evaluation {
    let wanted = non_empty(ctx.record.field_list("labels"))
        .unwrap_or_else(|| state_diff(ctx, "before_state", "after_state"));
    retention(ctx, &wanted, false)
}

fn non_empty(v: Vec<String>) -> Option<Vec<String>> {
    (!v.is_empty()).then_some(v)
}

/// Labels in one recorded state but not the other (`from − minus`).
fn state_diff(ctx: &EvalContext, from: &str, minus: &str) -> Vec<String> {
    let labels = |which: &str| -> Vec<String> {
        let map = if which == "after_state" {
            &ctx.record.after_state
        } else {
            &ctx.record.before_state
        };
        match map.get("labels") {
            Some(Value::Array(items)) => safe_outcomes_model::wire::label_names(items),
            _ => Vec::new(),
        }
    };
    let minus = labels(minus);
    labels(from)
        .into_iter()
        .filter(|l| !contains(&minus, l))
        .collect()
}

/// GitHub label names are case-insensitive.
fn contains(labels: &[String], label: &str) -> bool {
    labels.iter().any(|l| l.eq_ignore_ascii_case(label))
}

/// What became of one label the output added (or removed).
enum Fate<'a> {
    Kept,
    /// Undone by a visible non-bot, or by someone we could not see (`None`).
    UndoneByHuman(Option<&'a Observation>),
    /// Undone by automation: not a human verdict either way.
    UndoneByBot,
}

/// Judge label retention. `present` is the state the output wanted: true for
/// `add_labels`, false for `remove_labels`.
fn retention(ctx: &EvalContext, wanted: &[String], present: bool) -> Evaluation {
    if let Some(e) = missing_reference(ctx) {
        return e;
    }
    if wanted.is_empty() {
        return missing_state("The record does not say which labels were changed.");
    }
    // Rule 11: a label already there (or already absent) was not changed.
    let wanted = &with_delta(ctx.record, "labels", wanted, present)[..];
    if wanted.is_empty() {
        return no_delta("every label");
    }
    if !ctx.target_seen() {
        return unobserved();
    }
    if let Some(e) = gone(ctx, false) {
        return e;
    }
    let mut kept = Vec::new();
    let mut undone = Vec::new();
    let mut by_bot = Vec::new();
    let mut deciders = Vec::new();
    for label in wanted {
        match fate(ctx, label, present) {
            Fate::Kept => kept.push(label.clone()),
            Fate::UndoneByHuman(by) => {
                undone.push(label.clone());
                deciders.push(by);
            }
            Fate::UndoneByBot => by_bot.push(label.clone()),
        }
    }
    let judged = kept.len() + undone.len();
    let (undone_key, verb) = if present {
        ("removed", "removed")
    } else {
        ("re_added", "re-added")
    };
    let e = if judged == 0 {
        Evaluation::new(O::Unknown, S::Weak, Signal::StateChangedByBot).note(format!(
            "Every label was {verb} by automation, which is not a human verdict."
        ))
    } else if undone.is_empty() {
        all_kept(ctx)
    } else if kept.is_empty() {
        let signal = if present {
            Signal::StateReplaced
        } else {
            Signal::StateReverted
        };
        let e = decided(
            Evaluation::new(O::Rejected, S::Strong, signal)
                .note(format!("Every label was {verb} after the output.")),
            &deciders,
        );
        if deciders.iter().any(Option::is_none) {
            unseen_reversal(e)
        } else {
            e
        }
    } else {
        // Issue 3: mixed is reported with the kept fraction, not silently.
        decided(
            Evaluation::new(O::Accepted, S::Medium, Signal::PartiallyRetained)
                .detail("mixed", true)
                .note(format!(
                    "{} of {} labels were kept; the rest were {verb} by a visible non-bot actor.",
                    kept.len(),
                    judged
                )),
            &deciders,
        )
    };
    e.detail("kept_fraction", kept.len() as f64 / judged.max(1) as f64)
        .detail("kept", kept)
        .detail(undone_key, undone)
        .detail("changed_by_bot", by_bot)
        .detail("closed", is_closed(ctx))
}

/// Every (non-bot-touched) label still as intended: accepted once the triage
/// window passed, the target closed, or a human triaged around the labels.
fn all_kept(ctx: &EvalContext) -> Evaluation {
    let human_triage =
        human_after(ctx).any(|o| matches!(o.event, K::Labeled { .. } | K::Unlabeled { .. }));
    let e = if is_closed(ctx) {
        Evaluation::new(O::Accepted, S::Medium, Signal::StateRetained)
            .note("The target was closed or merged with the labels retained.")
    } else if window_passed(ctx, RETENTION_WINDOW) {
        Evaluation::new(O::Accepted, S::Medium, Signal::StateRetained)
            .note("The labels were retained through the 24h triage window.")
    } else if human_triage {
        Evaluation::new(O::Accepted, S::Medium, Signal::StateRetained)
            .note("A visible non-bot actor changed other labels and kept these.")
    } else {
        Evaluation::new(O::Pending, S::Weak, Signal::AwaitingTriage)
            .note("The labels are in place; the 24h triage window has not passed.")
    };
    e.detail("human_triage", human_triage)
}

/// Decide by the last human change; lower confidence if any was unseen.
fn decided(e: Evaluation, deciders: &[Option<&Observation>]) -> Evaluation {
    let last = deciders.iter().flatten().max_by_key(|o| (o.at, &o.id));
    let e = match last {
        Some(o) => e.decided_by(&o.id, o.at),
        None => e,
    };
    if deciders.iter().any(Option::is_none) {
        hedge(e)
    } else {
        e
    }
}

fn fate<'a>(ctx: &EvalContext<'a>, label: &str, present: bool) -> Fate<'a> {
    // The last event that set this label the other way.
    let undo = ctx
        .after_execution()
        .filter(|o| match &o.event {
            K::Unlabeled { label: l } if present => l.eq_ignore_ascii_case(label),
            K::Labeled { label: l } if !present => l.eq_ignore_ascii_case(label),
            _ => false,
        })
        .last();
    let now_present = match ctx.latest_snapshot() {
        Some(s) => contains(&s.labels, label),
        // No snapshot: an undo event is all we know of a change.
        None => present != undo.is_some(),
    };
    if now_present == present {
        return Fate::Kept;
    }
    match undo.map(|o| (o, ctx.actor_class(o))) {
        Some((o, ActorClass::VisibleNonBotActor)) => Fate::UndoneByHuman(Some(o)),
        Some((_, ActorClass::BotActor | ActorClass::SameWorkflowActor)) => Fate::UndoneByBot,
        // Undone but by whom is not visible: gh-aw counts it; we hedge confidence.
        _ => Fate::UndoneByHuman(None),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::evaluate::testkit::*;
    use safe_outcomes_model::ObservationKind as K;

    fn applied(labels: &[&str]) -> safe_outcomes_model::Observation {
        obs(-0.01, workflow_actor(), labeled(labels[0])).snap(with_labels(open(), labels))
    }

    #[test]
    fn add_labels_table() {
        let r = || record("add_labels").labels_added(&["bug", "p1"]);
        let unlabel = |h: f64, who, l: &str, left: &[&str]| {
            obs(h, who, unlabeled(l)).snap(with_labels(open(), left))
        };
        run_rows!(r(), 24.0;
            "all retained after the triage window": [applied(&["bug", "p1"])] => (ACCEPTED, MEDIUM, "state_retained");
            "retained, window not passed": [applied(&["bug", "p1"])] => (PENDING, WEAK, "awaiting_triage"), at 2.0;
            "some retained, some removed by a human":
                [applied(&["bug", "p1"]), unlabel(3.0, human("alice"), "p1", &["bug"])] => (ACCEPTED, MEDIUM, "partially_retained");
            "all removed by a human":
                [applied(&["bug", "p1"]), unlabel(3.0, human("alice"), "p1", &["bug"]), unlabel(3.1, human("alice"), "bug", &[])] => (REJECTED, STRONG, "state_replaced");
            "target closed with labels retained":
                [applied(&["bug", "p1"]), obs(2.0, human("alice"), K::Closed).snap(with_labels(closed_as(Some("completed")), &["bug", "p1"]))] => (ACCEPTED, MEDIUM, "state_retained"), at 3.0;
            "removed by a bot only":
                [applied(&["bug", "p1"]), unlabel(3.0, bot("labeler[bot]"), "p1", &["bug"]), unlabel(3.1, bot("labeler[bot]"), "bug", &[])] => (UNKNOWN, WEAK, "state_changed_by_bot");
            "removed with no visible actor: a reversal, one step weaker (rule 4)":
                [obs(3.0, None, K::Edited { title_from: None, body_hash_from: None, base_from: None }).snap(with_labels(open(), &["old"]))] => (REJECTED, MEDIUM, "state_replaced");
            "human adds an unrelated label and keeps ours":
                [applied(&["bug", "p1"]), obs(1.0, human("alice"), labeled("x")).snap(with_labels(open(), &["bug", "p1", "x"]))] => (ACCEPTED, MEDIUM, "state_retained"), at 2.0;
            "labels from before/after state":
                [obs(-0.01, workflow_actor(), labeled("new")).snap(with_labels(open(), &["old", "NEW"]))] => (ACCEPTED, MEDIUM, "state_retained"), on record("add_labels").before(json!({"labels": ["old"]})).after(json!({"labels": ["old", "new"]}));
            "labels from the tool arguments":
                [applied(&["bug"])] => (ACCEPTED, MEDIUM, "state_retained"), on record("add_labels").extra("labels", json!(["bug"]));
            "no labels recorded": [applied(&["bug"])] => (UNKNOWN, NONE, "missing_execution_state"), on record("add_labels");
            "no snapshot, our own label event at execution: kept":
                [obs(0.0, workflow_actor(), labeled("bug")), obs(0.0, workflow_actor(), labeled("p1"))] => (ACCEPTED, MEDIUM, "state_retained");
            "no snapshot, a person's unlabel is all we know":
                [obs(0.0, workflow_actor(), labeled("bug")), obs(3.0, human("alice"), unlabeled("bug")), obs(3.1, human("alice"), unlabeled("p1"))] => (REJECTED, STRONG, "state_replaced");
            "target deleted": [applied(&["bug", "p1"]), obs(2.0, human("alice"), K::Deleted)] => (UNKNOWN, NONE, "deleted");
            + unobserved_case("not yet observed", r());
        );
    }

    #[test]
    fn mixed_reports_the_kept_fraction() {
        let e = eval(
            &record("add_labels").labels_added(&["bug", "p1"]),
            vec![
                applied(&["bug", "p1"]),
                obs(3.0, human("alice"), unlabeled("p1")).snap(with_labels(open(), &["bug"])),
            ],
            24.0,
        );
        assert_eq!(e.details["mixed"], true);
        assert_eq!(e.details["kept_fraction"], 0.5);
        assert_eq!(e.details["kept"], json!(["bug"]));
        assert_eq!(e.details["removed"], json!(["p1"]));
        assert_eq!(e.decided_at, Some(at(3.0)));
    }

    #[test]
    fn remove_labels_table() {
        let r = || record("remove_labels").extra("labels", json!(["stale"]));
        let removed = || obs(-0.01, workflow_actor(), unlabeled("stale")).snap(open());
        let readd = |who| obs(2.0, who, labeled("stale")).snap(with_labels(open(), &["stale"]));
        let mut cases = undo_rows(removed, readd, "stale[bot]", ("awaiting_triage", 1.0));
        cases.extend(rows![
            "no snapshot, our own unlabel event at execution: kept":
                [obs(0.0, workflow_actor(), unlabeled("stale"))] => (ACCEPTED, MEDIUM, "state_retained");
            "labels from before/after state":
                [obs(-0.01, workflow_actor(), unlabeled("stale")).snap(with_labels(open(), &["a"]))] => (ACCEPTED, MEDIUM, "state_retained"), on record("remove_labels").before(json!({"labels": ["a", "stale"]})).after(json!({"labels": ["a"]}));
        ]);
        run_with(r(), 24.0, cases);
    }
}
