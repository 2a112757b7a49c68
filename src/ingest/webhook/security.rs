//! `code_scanning_alert` events: one `AlertChanged` filed under the alert's
//! number, and again under the alert's file path, because a
//! `create_code_scanning_alert` output (a SARIF upload) never learns the
//! number of the alert it produces and can only be correlated by location.
//!
//! The time is the one that fits the action (`fixed_at` for fixes,
//! `dismissed_at` for dismissals, `created_at` for creation), else
//! `updated_at`. Old payloads (octokit's examples) lack `updated_at` and
//! `most_recent_instance`, so every field is optional; a `reopened` with no
//! `updated_at` has no time of its own and is ignored rather than misdated.

use serde::Deserialize;
use serde_json::Value;

use super::payload::parse_time;
use super::{Ctx, NormResult, Output};
use crate::model::target::object_key;
use crate::model::{ObservationKind, TargetKind};

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Body {
    alert: Option<Alert>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Alert {
    number: Option<u64>,
    state: Option<String>,
    dismissed_reason: Option<String>,
    rule: Option<Rule>,
    created_at: Option<Value>,
    updated_at: Option<Value>,
    fixed_at: Option<Value>,
    dismissed_at: Option<Value>,
    most_recent_instance: Option<Instance>,
    instances: Option<Vec<Instance>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Rule {
    id: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Instance {
    location: Option<Location>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Location {
    path: Option<String>,
}

/// The key alerts on a file are also filed under: `code_scanning_alert:path:<path>`.
pub(crate) fn alert_path_key(repo: &str, path: &str) -> String {
    object_key(
        repo,
        TargetKind::CodeScanningAlert,
        &format!("path:{}", normalize_path(path)),
    )
}

/// Paths compare without a leading `./` or `/`.
pub(crate) fn normalize_path(path: &str) -> &str {
    path.trim().trim_start_matches("./").trim_start_matches('/')
}

const ACTIONS: &[&str] = &[
    "created",
    "fixed",
    "closed_by_user",
    "reopened",
    "reopened_by_user",
    "appeared_in_branch",
    "updated_assignment",
];

pub(super) fn normalize(ctx: &Ctx) -> NormResult {
    let body: Body = super::payload::shaped(ctx)?;
    let alert = body.alert.ok_or("`code_scanning_alert` carries no alert")?;
    let number = alert.number.ok_or("`code_scanning_alert` has no number")?;
    let action = ctx.action();
    let own_time = match action {
        "created" => alert.created_at.as_ref(),
        "fixed" => alert.fixed_at.as_ref(),
        "closed_by_user" => alert.dismissed_at.as_ref(),
        _ => None,
    };
    let at = parse_time(own_time)
        .or_else(|| parse_time(alert.updated_at.as_ref()))
        .ok_or_else(|| format!("`code_scanning_alert.{action}` has no timestamp of its own"))?;
    let kind = if ACTIONS.contains(&action) {
        ObservationKind::AlertChanged {
            alert_number: number,
            state: alert.state.clone().unwrap_or_default(),
            action: action.to_string(),
            dismissed_reason: alert.dismissed_reason.clone(),
            rule_id: alert.rule.as_ref().and_then(|r| r.id.clone()),
        }
    } else {
        ctx.other()
    };
    let path = alert
        .most_recent_instance
        .as_ref()
        .or_else(|| alert.instances.as_ref()?.first())
        .and_then(|i| i.location.as_ref()?.path.clone())
        .filter(|p| !normalize_path(p).is_empty());
    let mut keys = vec![object_key(
        ctx.repo,
        TargetKind::CodeScanningAlert,
        &number.to_string(),
    )];
    keys.extend(path.map(|p| alert_path_key(ctx.repo, &p)));
    Ok(Output::facts(at, keys, kind))
}

/// The events this family normalizes: `code_scanning_alert`.
pub(super) const EVENTS: super::Events = &[("code_scanning_alert", normalize)];
