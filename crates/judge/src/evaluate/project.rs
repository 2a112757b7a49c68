//! Projects v2 evaluators: `update_project` (seed 000 §7), `create_project`
//! and `create_project_status_update` (no seed table; rows below).
//!
//! `update_project` compares each intended field (`fields: {name: value}`)
//! with its latest `FieldValueChanged`: still equal → accepted/medium
//! `state_retained` after 24h; moved to a later workflow stage by a human →
//! accepted/strong `field_advanced`; changed away by a human →
//! rejected/medium `state_reverted`/`state_replaced`; cleared →
//! rejected/strong `field_removed`; the item archived or deleted by a human →
//! rejected/strong `project_item_removed`; nothing seen → unknown/none. Field
//! changes reach an item target from webhooks; a content-thread target from
//! neither path yet (item webhooks name content by node id alone, and no
//! project item is read from the API: see targets/metadata.rs). An update that only adds the
//! item is judged on the item staying in the project. `create_fields` /
//! `create_view` operations and draft items without an item id cannot be
//! followed by webhook: at most `pending/weak/target_exists_only`.
//!
//! `create_project`:
//! - closed by a human → rejected/strong `project_closed`; deleted by a human
//!   → rejected/strong `deleted`; closed by automation → ignored/weak `lifecycle`;
//! - open and items added by visible non-bots → accepted/medium `human_items_added`;
//! - no such activity → pending/weak `target_exists_only`, ignored/weak
//!   `no_engagement` after 7 days; nothing seen → unknown/none.
//!
//! `create_project_status_update` (status updates are filed as comments on
//! the project, see webhook/projects.rs):
//! - retained → pending/weak `target_exists_only` (existence is never acceptance);
//! - edited by a human, or followed by a human's new status update →
//!   accepted/medium `status_update_followed_up`;
//! - deleted by a human → rejected/strong `deleted` (automation → unknown/weak);
//! - not seen → unknown/none `status_update_unobserved` / `target_unobserved`.

use serde_json::Value;

use super::common::{
    close_actor_unknown, closer, gone, human_after, is_closed, lifecycle, missing_reference,
    no_engagement_yet, precheck, unobserved, value_text, Closer, ISSUE_IGNORE_WINDOW,
};
use super::metadata::{field_verdict, judge_fields, moved_away, retained, since_execution};
use super::EvalContext;
use safe_outcomes_model::{
    Evaluation, EvidenceStrength as S, ObservationKind as K, OutcomeStatus as O, Signal, TargetKind,
};

/// The intended field values: `fields` as `{name: value}` or `[{name, value}]`.
fn intended_fields(ctx: &EvalContext) -> Vec<(String, String)> {
    let text = |v: &Value| match v {
        Value::Bool(b) => Some(b.to_string()),
        v => value_text(v, &["name", "title"]),
    };
    let r = ctx.record;
    match r.extra.get("fields").or_else(|| r.metadata.get("fields")) {
        Some(Value::Object(map)) => map
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), text(v)?)))
            .collect(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|i| {
                let name = i.get("name").or_else(|| i.get("field"))?.as_str()?;
                Some((name.to_string(), text(i.get("value")?)?))
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Did the project field update (or item addition) stick?
pub fn update_project(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = missing_reference(ctx) {
        return e;
    }
    let on_project = ctx.targets(TargetKind::Project);
    if on_project {
        // No item to follow: only the project itself.
        if let Some(e) = gone(ctx, true) {
            return e;
        }
        if !ctx.target_seen() {
            return unobserved();
        }
        return Evaluation::new(O::Pending, S::Weak, Signal::TargetExistsOnly).note(
            "The update created fields, a view or a draft item that webhooks do not report; the project exists.",
        );
    }
    // The item taken out of the project (and not restored since).
    let membership = since_execution(ctx)
        .filter(|o| {
            matches!(
                o.event,
                K::ProjectItemRemoved { .. } | K::ProjectItemRestored { .. }
            )
        })
        .last();
    if let Some(removal) = membership.filter(|o| matches!(o.event, K::ProjectItemRemoved { .. })) {
        let how = match &removal.event {
            K::ProjectItemRemoved { how, .. } => how.clone(),
            _ => String::new(),
        };
        return moved_away(
            ctx,
            Some(removal),
            (O::Rejected, S::Strong, Signal::ProjectItemRemoved),
            "The project item was archived or deleted.",
        )
        .detail("how", how);
    }
    let fields = intended_fields(ctx);
    if fields.is_empty() {
        let added = ctx.observations.iter().any(|o| {
            matches!(
                o.event,
                K::ProjectItemAdded { .. }
                    | K::FieldValueChanged { .. }
                    | K::ProjectItemRestored { .. }
            )
        });
        return if added {
            retained(ctx, Signal::StateRetained, "The project item")
        } else if !ctx.target_seen() {
            unobserved()
        } else {
            Evaluation::new(O::Unknown, S::None, Signal::ProjectItemUnobserved).note(
                "The project item has not been seen (item webhooks name content by node id only).",
            )
        };
    }
    let verdicts: Vec<_> = fields
        .iter()
        .filter_map(|(name, value)| field_verdict(ctx, name, value))
        .collect();
    let unread: Vec<&str> = fields
        .iter()
        .map(|(n, _)| n.as_str())
        .filter(|n| !verdicts.iter().any(|v| v.field == *n))
        .collect();
    if verdicts.is_empty() {
        if !ctx.target_seen() {
            return unobserved();
        }
        return Evaluation::new(O::Unknown, S::None, Signal::FieldUnreadable)
            .detail("unread_fields", unread)
            .note("No value of the updated fields has been seen since execution.");
    }
    judge_fields(ctx, &verdicts).detail("unread_fields", unread)
}

/// Did people adopt the project, or close it?
pub fn create_project(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = precheck(ctx, true) {
        return e;
    }
    if is_closed(ctx) {
        return match closer(ctx) {
            Closer::Human(c) => Evaluation::new(O::Rejected, S::Strong, Signal::ProjectClosed)
                .decided_by(&c.id, c.at)
                .note("A visible non-bot actor closed the project."),
            Closer::Lifecycle(c) => lifecycle(ctx, c),
            Closer::Unknown(c) => close_actor_unknown(c),
        };
    }
    let items = human_after(ctx)
        .filter(|o| matches!(o.event, K::ProjectItemAdded { .. }))
        .collect::<Vec<_>>();
    if let Some(first) = items.first() {
        return Evaluation::new(O::Accepted, S::Medium, Signal::HumanItemsAdded)
            .decided_by(&first.id, first.at)
            .detail("human_items_added", items.len())
            .note("Visible non-bot actors added items to the project.");
    }
    no_engagement_yet(
        ctx,
        ISSUE_IGNORE_WINDOW,
        "No visible non-bot actor added items to the project within 7 days.",
        (
            Signal::TargetExistsOnly,
            "The project exists and is open; nobody has added items to it yet.",
        ),
    )
}

/// Did someone follow up on the status update, or delete it?
pub fn create_project_status_update(ctx: &EvalContext) -> Evaluation {
    if let Some(e) = precheck(ctx, false) {
        return e;
    }
    let recorded = ["status_update_id", "statusUpdateId", "id"]
        .iter()
        .find_map(|k| ctx.record.extra.get(*k).and_then(Value::as_u64));
    // Without a recorded id, ours is the first update posted by automation.
    let ours = recorded.or_else(|| {
        since_execution(ctx).find_map(|o| match o.event {
            K::CommentCreated { comment_id, .. } if !ctx.is_human(o) => Some(comment_id),
            _ => None,
        })
    });
    let Some(ours) = ours else {
        return Evaluation::new(O::Unknown, S::None, Signal::StatusUpdateUnobserved)
            .note("The project was seen, but not the status update.");
    };
    if let Some(del) = since_execution(ctx)
        .find(|o| matches!(o.event, K::CommentDeleted { comment_id } if comment_id == ours))
    {
        return moved_away(
            ctx,
            Some(del),
            (O::Rejected, S::Strong, Signal::Deleted),
            "The status update was deleted.",
        );
    }
    let posted_at = since_execution(ctx)
        .find(|o| matches!(o.event, K::CommentCreated { comment_id, .. } if comment_id == ours))
        .map_or(ctx.record.executed_at, |o| o.at);
    let follow_up = human_after(ctx).find(|o| match o.event {
        K::CommentEdited { comment_id } => comment_id == ours,
        K::CommentCreated { comment_id, .. } => comment_id != ours && o.at >= posted_at,
        _ => false,
    });
    if let Some(f) = follow_up {
        return Evaluation::new(O::Accepted, S::Medium, Signal::StatusUpdateFollowedUp)
            .decided_by(&f.id, f.at)
            .note("A visible non-bot actor edited the status update or posted the next one.");
    }
    Evaluation::new(O::Pending, S::Weak, Signal::TargetExistsOnly)
        .detail("status_update_id", ours)
        .note("The status update exists; nobody has followed up on it yet.")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::evaluate::testkit::*;
    use safe_outcomes_model::{
        ExecutionRecord, ItemSnapshot, Observation, ObservationKind as K, Target, TargetKind,
    };

    fn on_item() -> Target {
        Target {
            repo: "acme".into(),
            number: None,
            node_id: Some("PVTI_1".into()),
            ..Target::thread("acme", TargetKind::ProjectItem, 0)
        }
    }

    fn on_project() -> Target {
        Target {
            repo: "acme".into(),
            number: Some(42),
            ..Target::thread("acme", TargetKind::Project, 0)
        }
    }

    fn removed(how: &str) -> K {
        K::ProjectItemRemoved {
            project_node_id: "PVT_1".into(),
            item_node_id: "PVTI_1".into(),
            how: how.into(),
        }
    }

    fn added() -> K {
        K::ProjectItemAdded {
            project_node_id: "PVT_1".into(),
            item_node_id: "PVTI_1".into(),
            content_node_id: None,
        }
    }

    #[test]
    fn update_project_table() {
        let r = || {
            record("update_project")
                .target(on_item())
                .extra("fields", json!({"Status": "Todo"}))
        };
        let ours = || obs(-0.01, workflow_actor(), field("Status", None, Some("Todo")));
        run_rows!(r(), 24.0;
            "field still the intended value": [ours()] => (ACCEPTED, MEDIUM, "state_retained");
            "field moved forward by a human":
                [ours(), obs(4.0, human("alice"), field("Status", Some("Todo"), Some("In Progress"))), obs(30.0, human("alice"), field("Status", Some("In Progress"), Some("Done")))] => (ACCEPTED, STRONG, "field_advanced"), at 48.0;
            "field moved forward by project automation":
                [ours(), obs(30.0, bot("github-project-automation[bot]"), field("Status", Some("Todo"), Some("Done")))] => (ACCEPTED, MEDIUM, "state_retained"), at 48.0;
            "field reverted by a human":
                [obs(0.0, workflow_actor(), field("Status", Some("Backlog"), Some("Todo"))), obs(2.0, human("alice"), field("Status", Some("Todo"), Some("Backlog")))] => (REJECTED, MEDIUM, "state_reverted");
            "field changed away by a human":
                [obs(0.0, workflow_actor(), field("Priority", Some("Low"), Some("High"))), obs(2.0, human("alice"), field("Priority", Some("High"), Some("Medium")))] => (REJECTED, MEDIUM, "state_replaced"), on record("update_project").target(on_item()).extra("fields", json!({"Priority": "High"}));
            "project item archived by a human":
                [ours(), obs(5.0, human("alice"), removed("archived"))] => (REJECTED, STRONG, "project_item_removed");
            "item archived then restored":
                [ours(), obs(5.0, human("alice"), removed("archived")), obs(6.0, human("alice"), K::ProjectItemRestored { project_node_id: "PVT_1".into(), item_node_id: "PVTI_1".into() })] => (ACCEPTED, MEDIUM, "state_retained");
            "item added only, retained":
                [obs(-0.01, workflow_actor(), added())] => (ACCEPTED, MEDIUM, "state_retained"), on record("update_project").target(on_item());
            "content thread seen, fields not (no reconciliation yet)":
                [obs(1.0, human("alice"), comment(3)).snap(open())] => (UNKNOWN, NONE, "field_unreadable"), on r().target(Target::thread(REPO, TargetKind::Issue, NUMBER));
            + unobserved_case("project inaccessible", r());
            "fields as a list, changed away by a human":
                [ours(), obs(3.0, human("alice"), field("Status", Some("Todo"), Some("Backlog")))] => (REJECTED, MEDIUM, "state_replaced"), on record("update_project").target(on_item()).extra("fields", json!([{"name": "Status", "value": "Todo"}]));
            "a number field, changed away by a human":
                [obs(-0.01, workflow_actor(), field("Points", None, Some("3"))), obs(3.0, human("alice"), field("Points", Some("3"), Some("5")))] => (REJECTED, MEDIUM, "state_replaced"), on record("update_project").target(on_item()).extra("fields", json!({"Points": 3}));
            "no fields, the item seen but not its addition":
                [obs(1.0, human("alice"), comment(3)).snap(open())] => (UNKNOWN, NONE, "project_item_unobserved"), on record("update_project").target(on_item());
            "no fields, nothing seen":
                [] => (UNKNOWN, NONE, "target_unobserved"), on record("update_project").target(on_item());
            "create_fields on the project":
                [obs(0.0, workflow_actor(), K::Edited { title_from: None, body_hash_from: None, base_from: None })] => (PENDING, WEAK, "target_exists_only"), on record("update_project").target(on_project()).extra("operation", json!("create_fields"));
        );
    }

    /// The details say how the item left the project and which fields
    /// were not seen.
    #[test]
    fn removal_and_unread_fields_are_in_the_details() {
        let r = record("update_project")
            .target(on_item())
            .extra("fields", json!({"Status": "Todo", "Size": "L"}));
        let ours = obs(-0.01, workflow_actor(), field("Status", None, Some("Todo")));
        let e = eval(&r, vec![ours.clone()], 24.0);
        assert_eq!(e.details["unread_fields"], json!(["Size"]), "{e:?}");
        assert_eq!(e.details["retained"], json!(["Status"]), "{e:?}");
        let gone = eval(
            &r,
            vec![ours, obs(5.0, human("alice"), removed("archived"))],
            24.0,
        );
        assert_eq!(gone.details["how"], "archived", "{gone:?}");
    }

    fn project_snap(state: &str) -> ItemSnapshot {
        ItemSnapshot {
            kind: Some(TargetKind::Project),
            ..snapshot(state)
        }
    }

    fn create(kind: &str) -> ExecutionRecord {
        record(kind).target(on_project())
    }

    #[test]
    fn create_project_table() {
        let r = || create("create_project");
        let ours = || opened_by_workflow(project_snap("open"));
        run_rows!(r(), 24.0;
            "open with items added by humans":
                [ours(), obs(3.0, human("alice"), added())] => (ACCEPTED, MEDIUM, "human_items_added");
            "items added by a bot only": [ours(), obs(3.0, bot("sync[bot]"), added())] => (PENDING, WEAK, "target_exists_only");
            "closed by a human":
                [ours(), obs(10.0, human("alice"), K::Closed).snap(project_snap("closed"))] => (REJECTED, STRONG, "project_closed");
            "deleted by a human": [ours(), obs(10.0, human("alice"), K::Deleted)] => (REJECTED, STRONG, "deleted");
            "closed by automation":
                [ours(), obs(10.0, bot("cleanup[bot]"), K::Closed).snap(project_snap("closed"))] => (IGNORED, WEAK, "lifecycle");
            "no activity, early": [ours()] => (PENDING, WEAK, "target_exists_only");
            "no activity after 7 days": [ours()] => (IGNORED, WEAK, "no_engagement"), at 168.0;
            + unobserved_case("nothing seen", r());
        );
    }

    fn update(hours: f64, who: Option<safe_outcomes_model::Actor>, id: u64) -> Observation {
        obs(
            hours,
            who,
            K::CommentCreated {
                comment_id: id,
                agent_marker: false,
                lifecycle_marker: false,
                challenge: false,
            },
        )
    }

    #[test]
    fn create_project_status_update_table() {
        let r = || create("create_project_status_update");
        let ours = || update(-0.01, workflow_actor(), 3301);
        run_rows!(r(), 24.0;
            "retained is existence only": [ours()] => (PENDING, WEAK, "target_exists_only"), at 200.0;
            "edited by a human":
                [ours(), obs(5.0, human("alice"), K::CommentEdited { comment_id: 3301 })] => (ACCEPTED, MEDIUM, "status_update_followed_up");
            "followed by a human's new update":
                [ours(), update(72.0, human("alice"), 3302)] => (ACCEPTED, MEDIUM, "status_update_followed_up"), at 100.0;
            "a human's update before ours is no follow-up":
                [update(-5.0, human("alice"), 3300), ours()] => (PENDING, WEAK, "target_exists_only");
            "deleted by a human":
                [ours(), obs(5.0, human("alice"), K::CommentDeleted { comment_id: 3301 })] => (REJECTED, STRONG, "deleted");
            "recorded id, another update deleted":
                [ours(), obs(5.0, human("alice"), K::CommentDeleted { comment_id: 9 })] => (PENDING, WEAK, "target_exists_only"), on r().extra("id", json!(3301));
            "only a person's update seen: ours not seen":
                [update(3.0, human("alice"), 3302)] => (UNKNOWN, NONE, "status_update_unobserved");
            "a person's update after execution but before ours was seen is no follow-up":
                [update(1.0, human("alice"), 3300), update(2.0, workflow_actor(), 3301)] => (PENDING, WEAK, "target_exists_only");
            "project seen, update not":
                [obs(0.0, human("alice"), K::Opened).snap(project_snap("open"))] => (UNKNOWN, NONE, "status_update_unobserved");
            + unobserved_case("nothing seen", r());
        );
    }
}
