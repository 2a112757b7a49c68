//! One GraphQL query per batch of items (one alias per item: its reactions, and
//! an issue's latest close; an issue comment by its node id), and each item's
//! answer put where `reconcile` maps it.

use super::{Item, Unread};
use crate::ingest::reconcile::ApiState;
use crate::model::TargetKind;
use serde_json::{json, Value};

/// Put one item's GraphQL answer (`data.<alias>`) into `state` under the keys
/// `reconcile` maps: `issues/{n}/reactions`, `graphql/closed_by/{n}`, or the
/// discussion's reactions under `graphql/discussion_reactions/{n}`.
pub(super) fn item_state(
    item: &Item,
    data: &Value,
    alias: &str,
    state: &mut ApiState,
) -> Result<(), Unread> {
    let field = item_field(item.kind);
    let answer = data.get(alias);
    let node = if item.kind == TargetKind::Comment {
        answer
    } else {
        answer.and_then(|r| r.get(field))
    };
    let Some(node) = node.filter(|v| !v.is_null()) else {
        let errors = data.get("__errors").cloned().unwrap_or(Value::Null);
        return Err(Unread(format!(
            "{alias}: no {field} in the answer: {errors}"
        )));
    };
    let n = item.number;
    let reactions = node
        .pointer("/reactions/nodes")
        .cloned()
        .unwrap_or(json!([]));
    match item.kind {
        TargetKind::Discussion => {
            state
                .responses
                .insert(format!("graphql/discussion_reactions/{n}"), reactions);
        }
        TargetKind::Comment => {
            state
                .responses
                .insert(format!("issues/comments/{n}/reactions"), reactions);
        }
        _ => {
            state
                .responses
                .insert(format!("issues/{n}/reactions"), reactions);
        }
    }
    if let Some(closed) = node
        .pointer("/timelineItems/nodes")
        .and_then(Value::as_array)
        .and_then(|n| n.last())
    {
        state
            .responses
            .insert(format!("graphql/closed_by/{n}"), closed.clone());
    }
    Ok(())
}

/// True when GraphQL answered alias `alias` `NOT_FOUND` (its `errors`, kept
/// under `__errors`, name the alias first in their `path`).
pub(super) fn not_found(data: &Value, alias: &str) -> bool {
    data.get("__errors")
        .and_then(Value::as_array)
        .is_some_and(|errors| {
            errors.iter().any(|e| {
                e.pointer("/path/0").and_then(Value::as_str) == Some(alias)
                    && e.get("type").and_then(Value::as_str) == Some("NOT_FOUND")
            })
        })
}

fn item_field(kind: TargetKind) -> &'static str {
    match kind {
        TargetKind::PullRequest => "pullRequest",
        TargetKind::Discussion => "discussion",
        TargetKind::Comment => "node",
        _ => "issue",
    }
}

const REACTIONS: &str =
    "reactions(first: 100) { nodes { databaseId content createdAt user { login __typename } } }";
const CLOSED_BY: &str = "timelineItems(itemTypes: [CLOSED_EVENT], last: 1) { nodes { ... on ClosedEvent { createdAt closer { __typename ... on PullRequest { number merged } } } } }";

/// The GraphQL documents this file sends, by name: a batch over one item of
/// each kind (checked against GitHub's schema by
/// `tests/it/github_contract.rs`).
pub fn graphql_documents() -> Vec<(String, String)> {
    [
        TargetKind::Issue,
        TargetKind::PullRequest,
        TargetKind::Discussion,
        TargetKind::Comment,
    ]
    .into_iter()
    .map(|kind| {
        let item = Item {
            repo: "octo/hello".into(),
            kind,
            number: 1,
            node: (kind == TargetKind::Comment).then(|| "IC_kwDOA".to_string()),
        };
        (
            format!("signals::batch_query({kind:?})"),
            batch_query(&[&item]),
        )
    })
    .collect()
}

/// One query, one alias (`s0`, `s1`, ...) per item, one line each. An
/// issue comment is read by its node id (`sN: node(id: "…") { ... on
/// IssueComment { reactions … } }`: a comment has no number to address
/// it by); its reactions are the same list REST's
/// `issues/comments/{id}/reactions` gives.
pub fn batch_query(items: &[&Item]) -> String {
    let mut q = String::from("query {\n");
    for (i, item) in items.iter().enumerate() {
        if let (TargetKind::Comment, Some(node)) = (item.kind, &item.node) {
            q.push_str(&format!(
                "  s{i}: node(id: {}) {{ ... on IssueComment {{ {REACTIONS} }} }}\n",
                Value::String(node.clone())
            ));
            continue;
        }
        let (owner, name) = item.repo.split_once('/').unwrap_or((&item.repo, ""));
        let field = item_field(item.kind);
        let extra = if item.kind == TargetKind::Issue {
            CLOSED_BY
        } else {
            ""
        };
        q.push_str(&format!(
            "  s{i}: repository(owner: {}, name: {}) {{ {field}(number: {}) {{ {REACTIONS} {extra} }} }}\n",
            Value::String(owner.to_string()),
            Value::String(name.to_string()),
            item.number
        ));
    }
    q.push('}');
    q
}
