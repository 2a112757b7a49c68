//! Issue types on the wire, in GitHub's documented shapes: the issue's
//! `type` (`@octokit/openapi` `issue-type`), the timeline's
//! `issue-type-added-issue-event` / `-changed-` / `-removed-` (the type as
//! `issue-type-webhook`: `issue_type` and `prev_issue_type`), and the
//! `issues.typed` / `issues.untyped` webhooks' `type` (`@octokit/openapi-webhooks`
//! `webhook-issues-typed`/`untyped`).

use serde_json::{json, Value};

/// A stable id for a type's name (GitHub's organization-wide type ids).
fn id(name: &str) -> u64 {
    name.bytes()
        .fold(11u64, |h, b| h.wrapping_mul(131).wrapping_add(b as u64))
        % 90_000_000
        + 10_000_000
}

/// `issue-type-webhook`: what timeline events and webhooks name.
pub fn short(name: &str) -> Value {
    json!({"id": id(name), "name": name, "color": "gray"})
}

/// `issue-type`: the issue object's `type` (null when it has none).
pub fn rest(name: Option<&str>) -> Value {
    let Some(name) = name else {
        return Value::Null;
    };
    json!({"id": id(name), "node_id": format!("IT_kwDOCN7GP84{}", id(name)), "name": name,
           "description": null, "color": "gray", "is_enabled": true,
           "created_at": "2025-01-01T00:00:00Z", "updated_at": "2025-01-01T00:00:00Z"})
}

/// The timeline event's name and fields for a change `from` → `to`.
pub fn timeline(from: Option<&str>, to: Option<&str>) -> (&'static str, Value) {
    match (from, to) {
        (None, Some(to)) => ("issue_type_added", json!({"issue_type": short(to)})),
        (Some(from), None) => (
            "issue_type_removed",
            json!({"prev_issue_type": short(from)}),
        ),
        (from, to) => (
            "issue_type_changed",
            json!({"issue_type": to.map(short), "prev_issue_type": from.map(short)}),
        ),
    }
}

/// The webhook's action and fields: `typed` names the type set (a change
/// too: GitHub's webhook list has no "retyped"), `untyped` the type cleared.
pub fn webhook(from: Option<&str>, to: Option<&str>) -> (&'static str, Value) {
    match (from, to) {
        (_, Some(to)) => ("typed", json!({"type": rest(Some(to))})),
        (from, None) => ("untyped", json!({"type": rest(from)})),
    }
}
