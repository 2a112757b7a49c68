//! End to end for the assignment, metadata, project, discussion and
//! moderation types: a gh-aw manifest line and webhook deliveries (our own
//! fixtures) go through manifest parsing, target refinement, webhook
//! normalization and evaluation, as the worker chains them.

use std::path::Path;

use chrono::{DateTime, Duration, Utc};
use safe_outcomes::ingest::manifest::{parse_manifest, ManifestDefaults};
use safe_outcomes::ingest::webhook::{normalize, Normalized};
use safe_outcomes::model::{
    Evaluation, EvidenceStrength, ExecutionRecord, Observation, OutcomeStatus,
};

fn fixture(path: &str) -> serde_json::Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/webhooks")
        .join(path);
    serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap()
}

fn record(line: &str) -> ExecutionRecord {
    let parsed = parse_manifest(
        line,
        &ManifestDefaults {
            run_id: Some(1234567890),
            ..Default::default()
        },
        "2026-06-01T12:05:00Z".parse().unwrap(),
    );
    assert!(parsed.rejected.is_empty(), "{:?}", parsed.rejected);
    parsed.records.into_iter().next().unwrap()
}

/// Normalize deliveries and keep what the record's target watches, sorted as
/// the store returns it.
fn observations(r: &ExecutionRecord, deliveries: &[(&str, serde_json::Value)]) -> Vec<Observation> {
    let watch = r.target.as_ref().unwrap().watch_keys();
    let mut out = Vec::new();
    for (i, (event, body)) in deliveries.iter().enumerate() {
        let body = serde_json::to_vec(body).unwrap();
        match normalize(event, &format!("d{i}"), &body).unwrap() {
            Normalized::Relevant(d) => out.extend(d.observations),
            Normalized::Ignored { reason } => panic!("{event} ignored: {reason}"),
        }
    }
    out.retain(|o| watch.contains(&o.target));
    out.sort_by(|a, b| (a.at, &a.id).cmp(&(b.at, &b.id)));
    out
}

fn judge(r: &ExecutionRecord, obs: &[Observation], hours: i64) -> Evaluation {
    safe_outcomes::judge::evaluate::evaluate(r, obs, r.executed_at + Duration::hours(hours))
}

fn triple(e: &Evaluation) -> (OutcomeStatus, EvidenceStrength, &str) {
    (e.status, e.strength, e.signal.as_str())
}

fn at(s: &str) -> serde_json::Value {
    s.parse::<DateTime<Utc>>().unwrap().to_rfc3339().into()
}

#[test]
fn link_sub_issue_retained_then_unlinked() {
    let r = record(
        r#"{"type":"link_sub_issue","repo":"acme/widgets","parent_issue_number":40,"sub_issue_number":41,"timestamp":"2026-06-01T12:00:00Z"}"#,
    );
    let added = fixture("sub_issues/sub_issue_added.json");
    let obs = observations(&r, &[("sub_issues", added.clone())]);
    assert_eq!(obs.len(), 2, "filed under the parent and the child");
    assert_eq!(
        triple(&judge(&r, &obs, 25)),
        (
            OutcomeStatus::Accepted,
            EvidenceStrength::Medium,
            "state_retained"
        )
    );

    let mut removed = added;
    removed["action"] = "sub_issue_removed".into();
    removed["sender"] = serde_json::json!({"login": "maintainer", "type": "User"});
    removed["parent_issue"]["updated_at"] = at("2026-06-01T15:00:00Z");
    let obs = observations(
        &r,
        &[
            ("sub_issues", fixture("sub_issues/sub_issue_added.json")),
            ("sub_issues", removed),
        ],
    );
    assert_eq!(
        triple(&judge(&r, &obs, 25)),
        (
            OutcomeStatus::Rejected,
            EvidenceStrength::Strong,
            "sub_issue_unlinked"
        )
    );
}

#[test]
fn update_project_field_moved_forward_by_a_maintainer() {
    let r = record(
        r#"{"type":"update_project","repo":"acme/widgets","project":"https://github.com/orgs/acme/projects/42","item_id":"PVTI_lADOAbc_item1","content_type":"issue","content_number":41,"fields":{"Status":"Todo"},"timestamp":"2026-06-01T12:00:00Z"}"#,
    );
    assert_eq!(
        r.target.as_ref().unwrap().key(),
        "acme#project_item:PVTI_lADOAbc_item1"
    );
    let obs = observations(
        &r,
        &[("projects_v2_item", fixture("projects_v2_item/edited.json"))],
    );
    assert_eq!(obs.len(), 1);
    assert_eq!(
        triple(&judge(&r, &obs, 48)),
        (
            OutcomeStatus::Accepted,
            EvidenceStrength::Strong,
            "field_advanced"
        )
    );
}

#[test]
fn create_discussion_reply_then_closed_as_duplicate() {
    let r = record(
        r#"{"type":"create_discussion","repo":"acme/widgets","url":"https://github.com/acme/widgets/discussions/12","number":12,"timestamp":"2026-06-01T12:00:00Z"}"#,
    );
    let created = ("discussion", fixture("discussion/created.json"));
    let reply = (
        "discussion_comment",
        fixture("discussion_comment/created.json"),
    );
    let obs = observations(&r, &[created.clone(), reply.clone()]);
    assert_eq!(
        triple(&judge(&r, &obs, 24)),
        (
            OutcomeStatus::Accepted,
            EvidenceStrength::Medium,
            "human_reply"
        )
    );
    let closed = ("discussion", fixture("discussion/closed.json"));
    let obs = observations(&r, &[created, reply, closed]);
    assert_eq!(
        triple(&judge(&r, &obs, 48)),
        (
            OutcomeStatus::Rejected,
            EvidenceStrength::Strong,
            "closed_duplicate"
        )
    );
}

#[test]
fn project_status_update_and_project_close() {
    let r = record(
        r#"{"type":"create_project_status_update","repo":"acme/widgets","project":"https://github.com/orgs/acme/projects/42","projectId":"PVT_kwDOAbc_proj","status":"ON_TRACK","body":"x","timestamp":"2026-06-01T12:00:00Z"}"#,
    );
    let update = (
        "projects_v2_status_update",
        fixture("projects_v2_status_update/created.json"),
    );
    let obs = observations(&r, std::slice::from_ref(&update));
    assert_eq!(
        triple(&judge(&r, &obs, 200)),
        (
            OutcomeStatus::Pending,
            EvidenceStrength::Weak,
            "target_exists_only"
        )
    );
    let mut next = fixture("projects_v2_status_update/created.json");
    next["projects_v2_status_update"]["id"] = 3302.into();
    next["projects_v2_status_update"]["created_at"] = at("2026-06-08T12:00:00Z");
    next["sender"] = serde_json::json!({"login": "maintainer", "type": "User"});
    let obs = observations(&r, &[update, ("projects_v2_status_update", next)]);
    assert_eq!(
        triple(&judge(&r, &obs, 200)),
        (
            OutcomeStatus::Accepted,
            EvidenceStrength::Medium,
            "status_update_followed_up"
        )
    );

    // The project created from a URL alone is keyed by number; the close
    // reaches it because project events are filed under both keys.
    let p = record(
        r#"{"type":"create_project","repo":"acme/widgets","url":"https://github.com/orgs/acme/projects/42","title":"Flaky test triage","timestamp":"2026-06-01T12:00:00Z"}"#,
    );
    assert_eq!(p.target.as_ref().unwrap().key(), "acme#project:42");
    let obs = observations(&p, &[("projects_v2", fixture("projects_v2/closed.json"))]);
    assert_eq!(
        triple(&judge(&p, &obs, 200)),
        (
            OutcomeStatus::Rejected,
            EvidenceStrength::Strong,
            "project_closed"
        )
    );
}
