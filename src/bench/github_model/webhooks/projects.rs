//! The deliveries of the owner's project (`world::projects`), in GitHub's
//! shapes (`@octokit/openapi-webhooks`: `webhook-projects-v2-item-*`,
//! `webhook-projects-v2-project-deleted`, `projects-v2-item`,
//! `projects-v2`). They are organization-level: no `repository` (the
//! envelope leaves it out), the owner in `organization`.

use serde_json::{json, Value};

use super::super::history::{Event, Fact, ProjectAct};
use super::super::objects::{iso, node_id, user};
use super::super::world::projects::{
    CreatedProject, ProjectItem, CREATOR, NODE_ID, NUMBER, OPTIONS, STATUS_NODE_ID,
};
use super::super::world::{Changed, World};
use crate::bench::payloads;

/// What an act on one of the owner's projects (`Fact::Project`) that
/// changed something makes GitHub send.
pub(super) fn render(
    w: &World,
    before: &World,
    e: &Event,
    act: &ProjectAct,
    changed: &Changed,
) -> Vec<(String, Value)> {
    match changed {
        _ if act.on_created() => act_deliveries(w, act),
        Changed::ProjectItem(id) => item_deliveries(w, before, e, act, *id),
        Changed::Project => project_deliveries(w),
        _ => Vec::new(),
    }
}

/// What a change of item `id` makes GitHub send: `projects_v2_item` (a
/// conversion first opens its issue: `issues.opened`).
fn item_deliveries(
    w: &World,
    before: &World,
    e: &Event,
    act: &ProjectAct,
    id: u64,
) -> Vec<(String, Value)> {
    let Some(it) = w.project.items.get(&id) else {
        return Vec::new();
    };
    let was = before.project.items.get(&id);
    let (action, changes) = match act {
        ProjectAct::AddItem { .. } => ("created", None),
        ProjectAct::SetField { field, .. } => {
            let option = |i: Option<&ProjectItem>| {
                i.and_then(|i| i.fields.get(field))
                    .map_or(Value::Null, |v| option(v))
            };
            let changes = json!({"field_value": {
                "field_node_id": STATUS_NODE_ID, "field_type": "single_select",
                "field_name": field, "project_number": NUMBER,
                "from": option(was), "to": option(Some(it)),
            }});
            ("edited", Some(changes))
        }
        ProjectAct::ArchiveItem { archived, .. } => {
            let (from, to) = (
                was.and_then(|i| i.archived_at).map(iso),
                it.archived_at.map(iso),
            );
            let action = if *archived { "archived" } else { "restored" };
            (
                action,
                Some(json!({"archived_at": {"from": from, "to": to}})),
            )
        }
        ProjectAct::DeleteItem { .. } => ("deleted", None),
        ProjectAct::ReorderItem { .. } => {
            let node = |p: Option<u64>, w: &World| {
                p.and_then(|p| w.project.items.get(&p))
                    .map(ProjectItem::node_id)
            };
            let from = node(before.project.previous(id), before);
            let to = node(w.project.previous(id), w);
            let changes = json!({"previous_projects_v2_item_node_id": {"from": from, "to": to}});
            ("reordered", Some(changes))
        }
        ProjectAct::ConvertItem { .. } => {
            let changes = json!({"content_type": {"from": "DraftIssue", "to": "Issue"}});
            ("converted", Some(changes))
        }
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
    if let (ProjectAct::ConvertItem { number, .. }, Some(t)) =
        (act, it.number.and_then(|n| w.threads.get(&n)))
    {
        let opened = Event {
            fact: Fact::OpenIssue {
                number: *number,
                title: t.title.clone(),
                body: t.body.clone(),
            },
            ..e.clone()
        };
        out.extend(super::thread_deliveries(w, before, &opened, *number));
    }
    let mut body = json!({"action": action, "projects_v2_item": item(w, it)});
    if let Some(c) = changes {
        body["changes"] = c;
    }
    out.push(("projects_v2_item".into(), body));
    out
}

/// `projects_v2.deleted`.
fn project_deliveries(w: &World) -> Vec<(String, Value)> {
    vec![(
        "projects_v2".into(),
        json!({"action": "deleted", "projects_v2": project(w)}),
    )]
}

/// `projects_v2.created` / `closed` / `reopened` of a project created
/// during the history (`Fact::Project`), as it is after the act.
fn act_deliveries(w: &World, act: &ProjectAct) -> Vec<(String, Value)> {
    let Some(p) = w.created_projects.get(&act.project()) else {
        return Vec::new();
    };
    let action = match act {
        ProjectAct::Create { .. } => "created",
        ProjectAct::Close { .. } => "closed",
        ProjectAct::Reopen { .. } => "reopened",
        ProjectAct::Delete { .. } => "deleted",
        _ => return Vec::new(),
    };
    // Its owner's delivery, wherever the repository has moved since.
    let org = json!({"login": p.owner, "id": 148_820_031, "node_id": "O_kgDOCN7GPw"});
    vec![(
        "projects_v2".into(),
        json!({"action": action, "projects_v2": created_project(p), "organization": org}),
    )]
}

/// A project created during the history (`projects-v2`), as GitHub
/// describes it: `closed_at` and `state` say whether it is closed, not who
/// closed it.
pub(crate) fn created_project(p: &CreatedProject) -> Value {
    let owner = p.owner.as_str();
    json!({
        "id": 2_000_000 + p.number, "node_id": p.node_id(), "number": p.number,
        "owner": payloads::user(owner, 148_820_031, "Organization"), "creator": user(&p.creator),
        "title": p.title, "description": null, "short_description": null, "public": false,
        "closed_at": p.closed_at.map(iso), "created_at": iso(p.created_at),
        "updated_at": iso(p.updated_at),
        "deleted_at": p.deleted.as_ref().map(|(at, _)| iso(*at)),
        "deleted_by": p.deleted.as_ref().map(|(_, who)| user(who)),
        "state": if p.closed_at.is_some() { "closed" } else { "open" }, "is_template": false,
    })
}

/// A single-select option as `changes.field_value` carries it.
fn option(name: &str) -> Value {
    let i = OPTIONS.iter().position(|o| *o == name).unwrap_or(0);
    let color = ["GRAY", "BLUE", "YELLOW", "GREEN"][i % 4];
    json!({"id": format!("{:08x}", 0x47fc_9ee4u32 + i as u32), "name": name,
           "color": color, "description": ""})
}

/// The item (`projects-v2-item`).
pub fn item(w: &World, it: &ProjectItem) -> Value {
    let (content, kind) = match it.number.and_then(|n| w.threads.get(&n)) {
        Some(t) if t.pr.is_some() => (node_id("PR", t.number), "PullRequest"),
        Some(t) => (node_id("I", t.number), "Issue"),
        None => (format!("DI_lADOCN7GP84AAAAHzg{}", it.id), "DraftIssue"),
    };
    json!({
        "id": it.id, "node_id": it.node_id(), "project_node_id": NODE_ID,
        "content_node_id": content, "content_type": kind, "creator": user(&it.creator),
        "created_at": iso(it.created_at), "updated_at": iso(it.updated_at),
        "archived_at": it.archived_at.map(iso),
    })
}

/// The project (`projects-v2`).
pub fn project(w: &World) -> Value {
    let owner = w.repo.split('/').next().unwrap_or_default();
    let p = &w.project;
    let created = super::super::world::projects::Project::created_at();
    let creator = super::super::objects::login_user(CREATOR);
    json!({
        "id": 2_000_000 + NUMBER, "node_id": NODE_ID, "number": NUMBER,
        "owner": payloads::user(owner, 148_820_031, "Organization"), "creator": creator,
        "title": "Roadmap", "description": null, "short_description": null, "public": false,
        "closed_at": null, "created_at": iso(created),
        "updated_at": iso(p.updated_at.unwrap_or(created)),
        "deleted_at": p.deleted.as_ref().map(|(at, _)| iso(*at)),
        "deleted_by": p.deleted.as_ref().map(|(_, who)| user(who)),
        "state": "open", "is_template": false,
    })
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Duration, Utc};

    use crate::bench::github_model::history::{Actor, Fact, History, ProjectAct as P};
    use crate::bench::github_model::webhooks::deliveries;
    use crate::ingest::webhook::{normalize, Normalized};
    use crate::model::ObservationKind as K;

    fn t(h: i64) -> DateTime<Utc> {
        "2026-10-01T12:00:00Z".parse::<DateTime<Utc>>().unwrap() + Duration::hours(h)
    }

    /// Every fact of the project, in order, by the agent and by people.
    fn history() -> History {
        let mut h = History::new("acme/widgets", 555);
        let (agent, alice, carol) = (
            Actor::actions(),
            Actor::human("alice"),
            Actor::human("carol"),
        );
        let open = Fact::OpenIssue {
            number: 10,
            title: "Issue".into(),
            body: "b".into(),
        };
        h.push(t(0), &carol, open);
        let add = |item, number| P::AddItem {
            item,
            number,
            title: "An idea".into(),
        };
        h.push(t(1), &agent, Fact::Project(add(1, Some(10))));
        let status = |v: &str| P::SetField {
            item: 1,
            field: "Status".into(),
            value: Some(v.into()),
        };
        h.push(t(1), &agent, Fact::Project(status("Todo")));
        h.push(t(2), &alice, Fact::Project(status("Done")));
        h.push(t(3), &alice, Fact::Project(status("Done")));
        let archive = |archived| P::ArchiveItem { item: 1, archived };
        h.push(t(4), &alice, Fact::Project(archive(true)));
        h.push(t(5), &carol, Fact::Project(archive(false)));
        h.push(t(6), &carol, Fact::Project(add(2, None)));
        h.push(t(7), &alice, Fact::Project(P::ReorderItem { item: 2 }));
        h.push(t(8), &alice, Fact::Project(P::ReorderItem { item: 2 }));
        let convert = P::ConvertItem {
            item: 2,
            number: 11,
        };
        h.push(t(9), &carol, Fact::Project(convert));
        h.push(t(10), &alice, Fact::Project(P::DeleteItem { item: 1 }));
        h.push(t(11), &alice, Fact::Project(P::Delete { number: 7 }));
        h.push(t(12), &alice, Fact::Project(archive(true)));
        h
    }

    /// The model's project deliveries in GitHub's shapes, as the App reads
    /// them (`ingest::webhook::projects`): each one's action and first
    /// observation; repeated and impossible acts send nothing.
    #[test]
    fn project_deliveries_are_read_by_the_app() {
        let mut got = Vec::new();
        for d in deliveries(&history()) {
            let body = d.body.to_string();
            let Ok(Normalized::Relevant(n)) = normalize(&d.event, &d.id, body.as_bytes()) else {
                panic!("{} not read: {body}", d.event);
            };
            assert!(d.body.get("repository").is_none() || d.event == "issues");
            let o = &n.observations[0];
            assert_eq!(o.at, d.at, "{body}");
            assert_eq!(
                o.actor.as_ref().map(|a| a.login.as_str()),
                Some(d.body["sender"]["login"].as_str().unwrap())
            );
            let action = n.action.unwrap_or_default();
            got.push((
                format!("{}.{action}", d.event),
                o.target.clone(),
                o.event.clone(),
            ));
        }
        let actions: Vec<&str> = got.iter().map(|g| g.0.as_str()).collect();
        assert_eq!(
            actions,
            [
                "issues.opened",
                "projects_v2_item.created",
                "projects_v2_item.edited",
                "projects_v2_item.edited",
                "projects_v2_item.archived",
                "projects_v2_item.restored",
                "projects_v2_item.created",
                "projects_v2_item.reordered",
                "issues.opened",
                "projects_v2_item.converted",
                "projects_v2_item.deleted",
                "projects_v2.deleted",
            ]
        );
        let field = |from: Option<&str>, to: &str| K::FieldValueChanged {
            field: "Status".into(),
            from: from.map(str::to_string),
            to: Some(to.into()),
        };
        assert_eq!(got[2].2, field(None, "Todo"));
        assert_eq!(got[3].2, field(Some("Todo"), "Done"));
        assert!(matches!(&got[4].2, K::ProjectItemRemoved { how, .. } if how == "archived"));
        assert!(matches!(&got[5].2, K::ProjectItemRestored { .. }));
        assert!(matches!(&got[10].2, K::ProjectItemRemoved { how, .. } if how == "deleted"));
        assert_eq!(got[11].2, K::Deleted);
        assert_eq!(got[11].1, "acme#project:PVT_kwDOCN7GP84AAAAH");
        assert!(got[1].1.starts_with("acme#project_item:PVTI_"));
    }

    /// A project created during the history: created by the agent, closed
    /// (twice: the second sends nothing), reopened after its repository
    /// moved to another owner, deleted (a close after it sends nothing);
    /// each delivery read by the App under the project's number in its
    /// owner, `acme`, and timed as it happened.
    #[test]
    fn a_created_projects_deliveries_are_read_by_the_app() {
        let mut h = History::new("acme/widgets", 555);
        let act = |a| Fact::Project(a);
        let create = P::Create {
            number: 8,
            title: "Triage".into(),
        };
        h.push(t(0), &Actor::actions(), act(create));
        h.push(t(1), &Actor::human("alice"), act(P::Close { number: 8 }));
        h.push(t(2), &Actor::human("bob"), act(P::Close { number: 8 }));
        let moved = Fact::RenameRepo {
            to: "acme-labs/widgets".into(),
        };
        h.push(t(3), &Actor::human("alice"), moved);
        h.push(
            t(4),
            &Actor::bot("dependabot[bot]"),
            act(P::Reopen { number: 8 }),
        );
        h.push(t(5), &Actor::human("bob"), act(P::Reopen { number: 8 }));
        h.push(t(6), &Actor::human("carol"), act(P::Delete { number: 8 }));
        h.push(t(7), &Actor::human("bob"), act(P::Close { number: 8 }));
        let mut got = Vec::new();
        for d in deliveries(&h)
            .into_iter()
            .filter(|d| d.event == "projects_v2")
        {
            let body = d.body.to_string();
            let Ok(Normalized::Relevant(n)) = normalize(&d.event, &d.id, body.as_bytes()) else {
                panic!("{} not read: {body}", d.event);
            };
            let o = &n.observations[0];
            let state = o.snapshot.as_ref().map(|s| s.state.clone());
            let who = o.actor.as_ref().map(|a| a.login.clone());
            got.push((o.event.clone(), o.at, state, who));
            let targets: Vec<&str> = n.observations.iter().map(|o| o.target.as_str()).collect();
            assert!(targets.contains(&"acme#project:8"), "{targets:?}");
        }
        let seen = |k, h, state: &str, who: &str| (k, t(h), Some(state.into()), Some(who.into()));
        assert_eq!(
            got,
            [
                seen(K::Opened, 0, "open", "github-actions[bot]"),
                seen(K::Closed, 1, "closed", "alice"),
                seen(K::Reopened, 4, "open", "dependabot[bot]"),
                seen(K::Deleted, 6, "open", "carol"),
            ]
        );
    }
}
