//! Projects v2 events (`projects_v2_item`, `projects_v2`,
//! `projects_v2_status_update`). Projects belong to an organization (or a
//! user), not a repository, and these deliveries usually name no repository:
//! keys use the owner's login in place of `owner/repo`
//! (`object_key(owner, Project | ProjectItem, id)`).
//!
//! Filing:
//! - an item event goes under the item's key (by item node id) and under its
//!   project's key (by project node id). Its content (issue/PR) is named only
//!   by a GraphQL node id, so it cannot be filed under the content's thread;
//!   reconciliation (GraphQL) supplies that link.
//! - a project event goes under the project's node-id key and number key (a
//!   manifest knows the project by URL, i.e. by number).
//! - a status update goes under its project's node-id key, as a comment on the
//!   project: `CommentCreated` / `CommentEdited` / `CommentDeleted` with the
//!   status update's id.

use serde::Deserialize;
use serde_json::Value;

use super::payload::{From, User};
use super::{Ctx, Fact, NormResult, Output};
use crate::model::markers::{parse_marker, MarkerKind};
use crate::model::target::object_key;
use crate::model::{ItemSnapshot, ObservationKind as K, TargetKind};

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Body {
    projects_v2_item: Option<ProjectItem>,
    projects_v2: Option<Project>,
    projects_v2_status_update: Option<StatusUpdate>,
    changes: Option<Changes>,
    organization: Option<User>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ProjectItem {
    node_id: Option<String>,
    project_node_id: Option<String>,
    content_node_id: Option<String>,
    created_at: Option<Value>,
    updated_at: Option<Value>,
    archived_at: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Project {
    node_id: Option<String>,
    number: Option<u64>,
    title: Option<String>,
    owner: Option<User>,
    created_at: Option<Value>,
    updated_at: Option<Value>,
    closed_at: Option<Value>,
    deleted_at: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct StatusUpdate {
    id: Option<u64>,
    project_node_id: Option<String>,
    body: Option<String>,
    created_at: Option<Value>,
    updated_at: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Changes {
    field_value: Option<FieldValue>,
    title: Option<From>,
}

/// `changes.field_value` of `projects_v2_item.edited`. `from`/`to` are a
/// string, number, date, single-select option or iteration object, or null.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct FieldValue {
    field_node_id: Option<String>,
    field_name: Option<String>,
    /// `None`: absent (older payloads); `Some(Null)`: cleared.
    #[serde(deserialize_with = "shown")]
    from: Option<Value>,
    #[serde(deserialize_with = "shown")]
    to: Option<Value>,
}

/// A field that is there, `null` included (absent stays `None`, by
/// `#[serde(default)]`).
fn shown<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

pub(super) fn normalize(ctx: &Ctx) -> NormResult {
    let body: Body = super::payload::shaped(ctx)?;
    // The organization owns the project even when a repository is named.
    let owner = body
        .organization
        .as_ref()
        .and_then(|o| o.login.clone())
        .unwrap_or_else(|| ctx.repo.split('/').next().unwrap_or(ctx.repo).to_string());
    match ctx.event {
        "projects_v2_item" => item_event(ctx, &body, &owner),
        "projects_v2" => project_event(ctx, &body, &owner),
        _ => status_update_event(ctx, &body, &owner),
    }
}

/// The events this family normalizes: `projects_v2_item`, `projects_v2` and `projects_v2_status_update`.
pub(super) const EVENTS: super::Events = &[
    ("projects_v2_item", normalize),
    ("projects_v2", normalize),
    ("projects_v2_status_update", normalize),
];

fn item_event(ctx: &Ctx, body: &Body, owner: &str) -> NormResult {
    let item = body
        .projects_v2_item
        .as_ref()
        .ok_or_else(|| ctx.lacks("item"))?;
    let item_id = item
        .node_id
        .clone()
        .ok_or("`projects_v2_item` item has no node id")?;
    let action = ctx.action();
    let own = [
        ("created", item.created_at.as_ref()),
        ("archived", item.archived_at.as_ref()),
    ];
    let updated = item.updated_at.as_ref();
    let at = ctx.fact_time("projects_v2_item", &own, updated, updated)?;
    let project_id = item.project_node_id.clone().unwrap_or_default();
    let kind = match action {
        "created" => K::ProjectItemAdded {
            project_node_id: project_id.clone(),
            item_node_id: item_id.clone(),
            content_node_id: item.content_node_id.clone(),
        },
        "deleted" | "archived" => K::ProjectItemRemoved {
            project_node_id: project_id.clone(),
            item_node_id: item_id.clone(),
            how: action.to_string(),
        },
        "restored" => K::ProjectItemRestored {
            project_node_id: project_id.clone(),
            item_node_id: item_id.clone(),
        },
        "edited" => field_change(body).unwrap_or_else(|| ctx.other()),
        // converted (draft → issue), reordered: kept, not interpreted.
        _ => ctx.other(),
    };
    let mut keys = vec![object_key(owner, TargetKind::ProjectItem, &item_id)];
    if !project_id.is_empty() {
        keys.push(object_key(owner, TargetKind::Project, &project_id));
    }
    Ok(Output::facts(at, keys, kind))
}

/// A field value change. Older payloads name the field but carry no
/// `from`/`to`; without the values the change says nothing we can compare,
/// so it stays `Other`.
fn field_change(body: &Body) -> Option<K> {
    let fv = body.changes.as_ref()?.field_value.as_ref()?;
    if fv.from.is_none() && fv.to.is_none() {
        return None;
    }
    let field = fv.field_name.clone().or_else(|| fv.field_node_id.clone())?;
    Some(K::FieldValueChanged {
        field,
        from: fv.from.as_ref().and_then(field_text),
        to: fv.to.as_ref().and_then(field_text),
    })
}

/// A field value as text: a single-select option or iteration by its name or
/// title, lists joined with commas; `None` for null (cleared).
pub(crate) fn field_text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().filter_map(field_text).collect();
            (!parts.is_empty()).then(|| parts.join(","))
        }
        Value::Object(o) => ["name", "title", "text", "login", "date", "number", "id"]
            .iter()
            .find_map(|k| o.get(*k).filter(|v| !v.is_object()).and_then(field_text)),
    }
}

fn project_event(ctx: &Ctx, body: &Body, owner: &str) -> NormResult {
    let p = body
        .projects_v2
        .as_ref()
        .ok_or_else(|| ctx.lacks("project"))?;
    let action = ctx.action();
    let own = [
        ("created", p.created_at.as_ref()),
        ("closed", p.closed_at.as_ref()),
        ("deleted", p.deleted_at.as_ref()),
    ];
    let updated = p.updated_at.as_ref();
    let at = ctx.fact_time("projects_v2", &own, updated, updated)?;
    let kind = match action {
        "created" => K::Opened,
        "closed" => K::Closed,
        "reopened" => K::Reopened,
        "deleted" => K::Deleted,
        "edited" => K::Edited {
            title_from: body
                .changes
                .as_ref()
                .and_then(|c| c.title.as_ref())
                .and_then(|t| t.from.clone()),
            body_hash_from: None,
            base_from: None,
        },
        _ => ctx.other(),
    };
    let closed = p.closed_at.as_ref().is_some_and(|v| !v.is_null()) || action == "closed";
    let snapshot = ItemSnapshot {
        kind: Some(TargetKind::Project),
        state: if closed && action != "reopened" {
            "closed"
        } else {
            "open"
        }
        .to_string(),
        title: p.title.clone().unwrap_or_default(),
        author: p.owner.as_ref().and_then(User::actor),
        ..ItemSnapshot::default()
    };
    let keys = [p.node_id.clone(), p.number.map(|n| n.to_string())];
    let mut out = Output::default();
    for id in keys.into_iter().flatten() {
        out.observations.push(Fact {
            at,
            target: object_key(owner, TargetKind::Project, &id),
            kind: kind.clone(),
            snapshot: Some(snapshot.clone()),
        });
    }
    if out.observations.is_empty() {
        return Err("`projects_v2` project has neither node id nor number".to_string());
    }
    Ok(out)
}

fn status_update_event(ctx: &Ctx, body: &Body, owner: &str) -> NormResult {
    let u = body
        .projects_v2_status_update
        .as_ref()
        .ok_or_else(|| ctx.lacks("status update"))?;
    let project = u
        .project_node_id
        .clone()
        .ok_or("`projects_v2_status_update` names no project")?;
    let id = u.id.ok_or("`projects_v2_status_update` has no id")?;
    let action = ctx.action();
    let own = [("created", u.created_at.as_ref())];
    let updated = u.updated_at.as_ref();
    let at = ctx.fact_time("projects_v2_status_update", &own, updated, updated)?;
    let kind = match action {
        "created" => K::CommentCreated {
            comment_id: id,
            agent_marker: u
                .body
                .as_deref()
                .and_then(parse_marker)
                .is_some_and(|m| m.kind == MarkerKind::Output),
            lifecycle_marker: false,
            challenge: false,
        },
        "edited" => K::CommentEdited { comment_id: id },
        "deleted" => K::CommentDeleted { comment_id: id },
        _ => ctx.other(),
    };
    Ok(Output::one(
        at,
        object_key(owner, TargetKind::Project, &project),
        kind,
        None,
    ))
}

#[cfg(test)]
mod tests {
    use super::super::discussions::test_fixtures::{
        own_fixture, relevant_delivery, shared_fixtures_of, targets_of, time,
    };
    use super::field_text;
    use crate::model::{Actor, ObservationKind as K};

    #[test]
    fn org_level_item_edit_is_a_field_change_under_the_item_and_project() {
        let d = relevant_delivery(
            "projects_v2_item",
            &own_fixture("projects_v2_item/edited.json"),
        );
        assert_eq!(d.repo.as_deref(), Some("acme"));
        assert_eq!(
            targets_of(&d),
            vec![
                "acme#project_item:PVTI_lADOAbc_item1",
                "acme#project:PVT_kwDOAbc_proj",
            ]
        );
        let o = &d.observations[0];
        assert_eq!(
            o.event,
            K::FieldValueChanged {
                field: "Status".into(),
                from: Some("Todo".into()),
                to: Some("In Progress".into()),
            }
        );
        assert_eq!(o.at, time("2026-06-02T15:00:00Z"));
        assert_eq!(o.actor, Some(Actor::new("maintainer", "User")));
        assert!(o.snapshot.is_none());
    }

    #[test]
    fn item_lifecycle_actions() {
        let base: serde_json::Value =
            serde_json::from_slice(&own_fixture("projects_v2_item/edited.json")).unwrap();
        let with = |action: &str| {
            let mut v = base.clone();
            v["action"] = action.into();
            v.as_object_mut().unwrap().remove("changes");
            relevant_delivery("projects_v2_item", &serde_json::to_vec(&v).unwrap())
                .observations
                .remove(0)
                .event
        };
        assert!(
            matches!(with("created"), K::ProjectItemAdded { content_node_id: Some(c), .. } if c == "I_kwDOAbc_issue41")
        );
        assert!(matches!(with("archived"), K::ProjectItemRemoved { how, .. } if how == "archived"));
        assert!(matches!(with("deleted"), K::ProjectItemRemoved { how, .. } if how == "deleted"));
        assert!(matches!(with("restored"), K::ProjectItemRestored { .. }));
        assert!(matches!(with("reordered"), K::Other { .. }));
        // An edit without field values (older payloads) is kept as Other.
        assert!(matches!(with("edited"), K::Other { .. }));
    }

    /// `from`/`to` absent (older payloads) say nothing; `null` is a value
    /// cleared or first set.
    #[test]
    fn a_field_value_absent_is_not_a_change_and_null_is() {
        let base: serde_json::Value =
            serde_json::from_slice(&own_fixture("projects_v2_item/edited.json")).unwrap();
        let edited = |field_value: serde_json::Value| {
            let mut v = base.clone();
            v["changes"] = serde_json::json!({ "field_value": field_value });
            relevant_delivery("projects_v2_item", &serde_json::to_vec(&v).unwrap())
                .observations
                .remove(0)
                .event
        };
        let named = serde_json::json!({"field_name": "Status"});
        assert!(matches!(edited(named), K::Other { .. }));
        let set = serde_json::json!({"field_name": "Status", "from": null, "to": "Done"});
        assert_eq!(
            edited(set),
            K::FieldValueChanged {
                field: "Status".into(),
                from: None,
                to: Some("Done".into()),
            }
        );
        let cleared = serde_json::json!({"field_name": "Status", "from": "Done", "to": null});
        assert!(matches!(
            edited(cleared),
            K::FieldValueChanged { to: None, .. }
        ));
        let nulls = serde_json::json!({"field_name": "Status", "from": null, "to": null});
        assert!(matches!(
            edited(nulls),
            K::FieldValueChanged {
                from: None,
                to: None,
                ..
            }
        ));
    }

    #[test]
    fn field_values_as_text() {
        use serde_json::json;
        assert_eq!(field_text(&json!(null)), None);
        assert_eq!(field_text(&json!("2026-06-01")), Some("2026-06-01".into()));
        assert_eq!(field_text(&json!(3)), Some("3".into()));
        assert_eq!(
            field_text(&json!({"id": "47fc9ee4", "name": "Done", "color": "GREEN"})),
            Some("Done".into())
        );
        assert_eq!(
            field_text(&json!({"id": "cfc16e4d", "title": "Sprint 3", "duration": 14})),
            Some("Sprint 3".into())
        );
    }

    #[test]
    fn project_closed_is_filed_by_node_id_and_number() {
        let d = relevant_delivery("projects_v2", &own_fixture("projects_v2/closed.json"));
        assert_eq!(
            targets_of(&d),
            vec!["acme#project:PVT_kwDOAbc_proj", "acme#project:42"]
        );
        assert!(d.observations.iter().all(|o| o.event == K::Closed));
        assert_eq!(d.observations[0].snapshot.as_ref().unwrap().state, "closed");
        assert_eq!(d.observations[0].at, time("2026-06-05T08:00:00Z"));
    }

    #[test]
    fn status_update_is_a_comment_on_the_project() {
        let d = relevant_delivery(
            "projects_v2_status_update",
            &own_fixture("projects_v2_status_update/created.json"),
        );
        let o = &d.observations[0];
        assert_eq!(o.target, "acme#project:PVT_kwDOAbc_proj");
        assert_eq!(
            o.event,
            K::CommentCreated {
                comment_id: 3301,
                agent_marker: true,
                lifecycle_marker: false,
                challenge: false
            }
        );
        assert_eq!(o.at, time("2026-06-01T12:00:00Z"));
    }

    #[test]
    fn no_owner_and_no_repository_is_ignored() {
        let got = crate::ingest::webhook::normalize(
            "projects_v2_item",
            "d",
            br#"{"action":"created","projects_v2_item":{"node_id":"PVTI_1","created_at":"2026-01-01T00:00:00Z"}}"#,
        )
        .unwrap();
        assert!(matches!(
            got,
            crate::ingest::webhook::Normalized::Ignored { .. }
        ));
    }

    #[test]
    fn shared_project_item_payloads_normalize() {
        let Some(files) = shared_fixtures_of("projects_v2_item") else {
            return;
        };
        for (path, body) in files {
            let d = relevant_delivery("projects_v2_item", &body);
            assert_eq!(d.repo.as_deref(), Some("Octocoders"), "{}", path.display());
            assert!(
                d.observations[0]
                    .target
                    .starts_with("Octocoders#project_item:PVTI_"),
                "{}",
                path.display()
            );
        }
    }
}
