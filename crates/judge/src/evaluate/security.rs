//! Code scanning (seed 000 §7): `autofix_code_scanning_alert` and
//! `create_code_scanning_alert`. Fixed, triaged, rejected and pending are
//! kept apart rather than flattened.
//!
//! An alert's state is its latest `AlertChanged`. `fixed` comes from the
//! analysis (the code changed), so it needs no human actor; dismissals and
//! user reopenings count only from a visible non-bot actor.
//!
//! Not observable from webhooks, and so not implemented: an autofix PR closed
//! unmerged (the alert event does not name the PR that fixed it), an alert
//! deleted or made invalid (no event), and an alert that disappeared.

use chrono::Duration;

use super::common::{cite, missing_reference, unobserved, window_passed};
use super::EvalContext;
use safe_outcomes_model::{
    ActorClass, Confidence, Evaluation, EvidenceStrength as S, Observation, ObservationKind as K,
    OutcomeStatus as O, Signal,
};

/// Hours an autofixed alert may stay open before it is reported as such.
const AUTOFIX_SLA_HOURS: i64 = 7 * 24;
/// Hours a created alert may stay untouched before it is `ignored`.
const ALERT_IGNORE_HOURS: i64 = 30 * 24;
/// How long before execution an alert's activity may still belong to a SARIF
/// upload (the upload job runs after the safe-outputs job).
const UPLOAD_SLACK_MINUTES: i64 = 10;

/// The fields of an `AlertChanged`.
struct Change<'a> {
    obs: &'a Observation,
    number: u64,
    state: &'a str,
    action: &'a str,
    reason: Option<&'a str>,
    rule: Option<&'a str>,
}

fn change(o: &Observation) -> Option<Change<'_>> {
    match &o.event {
        K::AlertChanged {
            alert_number,
            state,
            action,
            dismissed_reason,
            rule_id,
        } => Some(Change {
            obs: o,
            number: *alert_number,
            state,
            action,
            reason: dismissed_reason.as_deref(),
            rule: rule_id.as_deref(),
        }),
        _ => None,
    }
}

/// What an alert's latest state says, common to both types.
enum AlertState<'a> {
    Fixed(&'a Observation),
    /// Dismissed by a visible non-bot, with the reason.
    Dismissed(&'a Observation, Option<&'a str>),
    /// Dismissed by automation: not a human verdict.
    DismissedByAutomation(&'a Observation),
    /// Dismissed, but who did it (or why, where the reason decides) is not
    /// shown: general rule 2, a fact the verdict needs is missing.
    DismissedUnjudged(&'a Observation, &'static str),
    Open(&'a Observation),
}

/// The observation a dismissed alert is judged by: its dismissal
/// (`closed_by_user`, sent by who dismissed it), not a later event that
/// leaves it dismissed (`appeared_in_branch`, sent by the analysis). Found
/// on random differential seeds (2026-12-06): a person's dismissal followed
/// by the alert found on another branch read as automation's. The API's
/// state (`api_state`) names the dismisser itself (`dismissed_by`).
fn judged_by<'a>(ctx: &EvalContext<'a>, latest: &Change<'a>) -> &'a Observation {
    if latest.state != "dismissed" || matches!(latest.action, "closed_by_user" | "api_state") {
        return latest.obs;
    }
    ctx.observations
        .iter()
        .rev()
        .filter_map(change)
        .find(|c| c.number == latest.number && c.action == "closed_by_user")
        .map_or(latest.obs, |c| c.obs)
}

fn state_of<'a>(ctx: &EvalContext<'a>, latest: &Change<'a>) -> AlertState<'a> {
    let o = judged_by(ctx, latest);
    match (latest.action, latest.state) {
        ("fixed", _) | (_, "fixed") => AlertState::Fixed(o),
        ("closed_by_user", _) | (_, "dismissed") if ctx.is_human(o) => {
            AlertState::Dismissed(o, latest.reason)
        }
        ("closed_by_user", _) | (_, "dismissed")
            if matches!(
                ctx.actor_class(o),
                ActorClass::UnknownActor | ActorClass::SystemActor
            ) =>
        {
            AlertState::DismissedUnjudged(o, "dismisser_unknown")
        }
        ("closed_by_user", _) | (_, "dismissed") => AlertState::DismissedByAutomation(o),
        _ => AlertState::Open(o),
    }
}

/// Both alert types: "Alert fixed or closed by code change — accepted —
/// strong" (seed 000 autofix_code_scanning_alert), "Alert fixed — accepted —
/// strong" (create_code_scanning_alert).
fn alert_fixed(o: &Observation) -> Evaluation {
    Evaluation::new(O::Accepted, S::Strong, Signal::AlertFixed)
        .decided_by(&o.id, o.at)
        .note("The alert was fixed by a code change.")
}

/// Both alert types: a visible non-bot's dismissal that acknowledges the
/// finding is triage, accepted/medium (seed 000: "Alert dismissed as false
/// positive or won't fix by visible non-bot — contextual acceptance for
/// triage, not fix — medium"; "Alert dismissed with reason by visible
/// non-bot — accepted or rejected, depending expected semantics — medium").
fn triaged(o: &Observation, reason: Option<&str>, note: &str) -> Evaluation {
    Evaluation::new(O::Accepted, S::Medium, Signal::DismissedTriaged)
        .decided_by(&o.id, o.at)
        .detail("dismissed_reason", reason)
        .note(note)
}

/// Both alert types: a dismissal by automation is no person's triage, so it
/// says nothing of the finding (ignored/weak, lifecycle).
fn automated_dismissal(o: &Observation) -> Evaluation {
    cite(
        Evaluation::new(O::Ignored, S::Weak, Signal::Lifecycle)
            .note("The alert was dismissed by automation, not by a person."),
        o,
    )
}

/// A dismissal missing a fact the verdict needs: `unknown/weak/evaluation_error`
/// with the missing fact named, as for a close whose actor is not shown.
fn unjudged_dismissal(o: &Observation, why: &'static str) -> Evaluation {
    cite(
        Evaluation::new(O::Unknown, S::Weak, Signal::EvaluationError)
            .detail("reason", why)
            .note("The alert was dismissed, but the state does not show what the verdict needs (who dismissed it, or why)."),
        o,
    )
}

/// Was the alert actually fixed?
pub fn autofix_code_scanning_alert(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = missing_reference(ctx) {
        return e;
    }
    let number = ctx.record.target.as_ref().and_then(|t| t.number);
    let latest = ctx
        .observations
        .iter()
        .rev()
        .filter_map(change)
        .find(|c| number.is_none_or(|n| c.number == n));
    let Some(latest) = latest else {
        return open_alert(ctx, None).unresolved().note(
            "No event of the alert has been seen; without a fix event it is presumed still open.",
        );
    };
    let e = match state_of(ctx, &latest) {
        AlertState::Fixed(o) => alert_fixed(o),
        AlertState::Dismissed(o, reason) => triaged(
            o,
            reason,
            "A visible non-bot dismissed the alert: triage, not a fix.",
        ),
        AlertState::DismissedByAutomation(o) => automated_dismissal(o),
        AlertState::DismissedUnjudged(o, why) => unjudged_dismissal(o, why),
        AlertState::Open(o) => open_alert(ctx, Some(o)),
    };
    e.detail("alert_number", latest.number)
        .detail("alert_state", latest.state)
}

/// Still open: pending, and reported as overdue after the 7-day SLA. The SLA
/// is not the repository's, so overdue stays pending rather than rejected.
fn open_alert(ctx: &EvalContext, last: Option<&Observation>) -> Evaluation {
    let e = if window_passed(ctx, AUTOFIX_SLA_HOURS) {
        Evaluation::new(O::Pending, S::Weak, Signal::AlertOpen)
            .note("The alert is still open 7 days after the autofix.")
    } else {
        Evaluation::new(O::Pending, S::Weak, Signal::AwaitingFix)
            .note("The alert is open; the autofix has not landed yet.")
    };
    match last {
        Some(o) => cite(e, o),
        None => e,
    }
}

/// Was the alert triaged, fixed, or dismissed with reason?
///
/// The record names a file (and maybe a `ruleIdSuffix`), not an alert, so
/// the output watches every alert on that file and keeps those whose rule id
/// ends with the suffix and that were active from 10 minutes before
/// execution on. This correlation is weak: confidence is at most medium,
/// and low when several alerts match. A dismissal as false positive rejects
/// the finding; other dismissal reasons (won't fix, used in tests) still
/// acknowledge it (seed: "accepted or rejected, depending semantics").
pub fn create_code_scanning_alert(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = missing_reference(ctx) {
        return e;
    }
    let suffix = ctx
        .record
        .field_str("ruleIdSuffix")
        .or_else(|| ctx.record.field_str("rule_id_suffix"))
        .map(str::to_ascii_lowercase);
    let since = safe_outcomes_model::sane_time::minus(
        ctx.record.executed_at,
        Duration::minutes(UPLOAD_SLACK_MINUTES),
    );
    let mut alerts: std::collections::BTreeMap<u64, Change> = Default::default();
    let mut created_before = std::collections::BTreeSet::new();
    for c in ctx.observations.iter().filter_map(change) {
        let rule_ok = suffix
            .as_deref()
            .is_none_or(|s| c.rule.is_some_and(|r| r.to_ascii_lowercase().ends_with(s)));
        if !rule_ok {
            continue;
        }
        if c.obs.at < since && c.action == "created" {
            created_before.insert(c.number);
        }
        if c.obs.at >= since {
            alerts.insert(c.number, c);
        }
    }
    // An alert created before the upload is someone else's finding.
    alerts.retain(|n, _| !created_before.contains(n));
    let Some(latest) = pick(&alerts) else {
        return unobserved();
    };
    let confidence = if alerts.len() == 1 {
        Confidence::Medium
    } else {
        Confidence::Low
    };
    let e = match state_of(ctx, latest) {
        AlertState::Fixed(o) => alert_fixed(o),
        // The reason decides between a rejection and triage: without it,
        // nothing can be said (general rule 2).
        AlertState::Dismissed(o, None) => unjudged_dismissal(o, "dismissed_reason_unknown"),
        AlertState::Dismissed(o, reason) if is_false_positive(reason) => {
            Evaluation::new(O::Rejected, S::Medium, Signal::DismissedFalsePositive)
                .decided_by(&o.id, o.at)
                .detail("dismissed_reason", reason)
                .note("A visible non-bot dismissed the alert as a false positive.")
        }
        AlertState::Dismissed(o, reason) => triaged(
            o,
            reason,
            "A visible non-bot dismissed the alert with a reason that acknowledges it.",
        ),
        AlertState::DismissedByAutomation(o) => automated_dismissal(o),
        AlertState::DismissedUnjudged(o, why) => unjudged_dismissal(o, why),
        AlertState::Open(o) => triaged_or_open(ctx, latest, o),
    };
    let e = if e.confidence == Confidence::High || confidence == Confidence::Low {
        e.confidence(confidence)
    } else {
        e
    };
    e.detail("alert_number", latest.number)
        .detail("alert_state", latest.state)
        .detail("matching_alerts", alerts.len())
        .detail("correlation", "file_rule_time")
}

/// The alert most decided: fixed or dismissed before open, then the latest.
fn pick<'m, 'a>(alerts: &'m std::collections::BTreeMap<u64, Change<'a>>) -> Option<&'m Change<'a>> {
    alerts.values().max_by_key(|c| {
        let closed = c.action == "fixed" || c.state != "open";
        (closed, c.obs.at)
    })
}

fn is_false_positive(reason: Option<&str>) -> bool {
    reason.is_some_and(|r| r.to_ascii_lowercase().replace(['_', '-'], " ") == "false positive")
}

/// Open: a human assignment is triage (accepted/medium); silence is pending,
/// then ignored after 30 days.
fn triaged_or_open(ctx: &EvalContext, alert: &Change, last: &Observation) -> Evaluation {
    let triage = ctx.after_execution().find(|o| {
        ctx.is_human(o)
            && change(o).is_some_and(|c| {
                c.number == alert.number
                    && matches!(c.action, "updated_assignment" | "reopened_by_user")
            })
    });
    if let Some(t) = triage {
        return Evaluation::new(O::Accepted, S::Medium, Signal::Triaged)
            .decided_by(&t.id, t.at)
            .note("A visible non-bot triaged the alert (assignment or reopening).");
    }
    if window_passed(ctx, ALERT_IGNORE_HOURS) {
        return cite(
            Evaluation::new(O::Ignored, S::Weak, Signal::NoEngagement)
                .note("The alert has had no activity for 30 days."),
            last,
        );
    }
    cite(
        Evaluation::new(O::Pending, S::Weak, Signal::AlertOpen)
            .note("The alert is open with no triage yet."),
        last,
    )
}

#[cfg(test)]
#[path = "security_tests.rs"]
mod tests;
