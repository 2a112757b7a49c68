//! The deliveries of a `Fact::DiscussionAct`, in the shapes of GitHub's
//! `webhook-discussion-*` and `webhook-discussion-comment-*` schemas
//! (`@octokit/openapi-webhooks`): `discussion.edited` (with `changes`),
//! `labeled`/`unlabeled` (with `label`), `locked`/`unlocked`,
//! `pinned`/`unpinned`, `category_changed` (`changes.category.from`),
//! `transferred` (`changes.new_discussion`, `changes.new_repository`),
//! `deleted`, `unanswered` (`old_answer`), and `discussion_comment.edited`
//! (`changes.body.from`) and `deleted`. A deleted or transferred discussion,
//! and a deleted comment, are rendered as they were before the act.

use serde_json::{json, Value};

use super::{discussion_comment_object, discussion_object};
use crate::bench::github_model::history::DiscussionAct;
use crate::bench::github_model::objects;
use crate::bench::github_model::world::{Discussion, World};

/// `state` as GitHub's discussion payload says it: `locked` for a locked
/// open discussion (as GitHub's `discussion.locked` example shows).
pub(super) fn state(d: &Discussion) -> &'static str {
    match (d.closed.is_some(), d.locked) {
        (true, _) => "closed",
        (false, true) => "locked",
        (false, false) => "open",
    }
}

/// The category object of `slug` (`DiscussionAct::CATEGORIES`).
pub(super) fn category(slug: &str) -> Value {
    let cats = DiscussionAct::CATEGORIES;
    let i = cats.iter().position(|c| c.0 == slug).unwrap_or(0);
    let (slug, name, answerable) = cats[i];
    json!({"id": 32_809_314 + i as u64, "node_id": format!("DIC_{i}"), "repository_id": 141_753_607,
           "emoji": ":speech_balloon:", "name": name, "description": format!("{name} discussions"),
           "created_at": "2021-03-30T16:09:00.000-04:00", "updated_at": "2021-03-30T16:09:00.000-04:00",
           "slug": slug, "is_answerable": answerable})
}

/// The one delivery of `act` on discussion `n`.
pub(super) fn render(
    w: &World,
    before: &World,
    n: u64,
    act: &DiscussionAct,
) -> Vec<(String, Value)> {
    let discussion =
        |action: &str| json!({"action": action, "discussion": discussion_object(w, n)});
    let body = match act {
        DiscussionAct::Edit { .. } => edited(w, before, n),
        DiscussionAct::Label { name, added } => {
            let mut b = discussion(if *added { "labeled" } else { "unlabeled" });
            b["label"] = objects::label(w, name);
            b
        }
        DiscussionAct::Lock { locked } => discussion(if *locked { "locked" } else { "unlocked" }),
        DiscussionAct::Pin { pinned } => discussion(if *pinned { "pinned" } else { "unpinned" }),
        DiscussionAct::Category { .. } => {
            let from = before.discussions.get(&n).map(|d| category(&d.category));
            let mut b = discussion("category_changed");
            b["changes"] = json!({"category": {"from": from}});
            b
        }
        DiscussionAct::Transfer { to, new_number } => transferred(before, n, to, *new_number),
        DiscussionAct::Delete => {
            json!({"action": "deleted", "discussion": discussion_object(before, n)})
        }
        DiscussionAct::Unanswer => {
            let old = before.discussions.get(&n).and_then(|d| d.answer.as_ref());
            let comment = old.and_then(|a| w.discussion_comments.get(&a.0));
            let mut b = discussion("unanswered");
            b["old_answer"] = comment.map_or(Value::Null, |c| discussion_comment_object(w, c));
            b
        }
        DiscussionAct::EditComment { id, .. } => return comment(w, before, *id, "edited"),
        DiscussionAct::DeleteComment { id } => return comment(w, before, *id, "deleted"),
    };
    vec![("discussion".into(), body)]
}

/// `edited`, with the title and body it had before where they changed.
fn edited(w: &World, before: &World, n: u64) -> Value {
    let mut changes = json!({});
    if let (Some(was), Some(now)) = (before.discussions.get(&n), w.discussions.get(&n)) {
        if was.title != now.title {
            changes["title"] = json!({"from": was.title});
        }
        if was.body != now.body {
            changes["body"] = json!({"from": was.body});
        }
    }
    json!({"action": "edited", "changes": changes, "discussion": discussion_object(w, n)})
}

/// `transferred`: the discussion as it was here, and as it is in `to`.
fn transferred(before: &World, n: u64, to: &str, new_number: u64) -> Value {
    let old = discussion_object(before, n);
    let mut new = old.clone();
    new["number"] = json!(new_number);
    new["id"] = json!(6_000_000 + new_number);
    new["node_id"] = json!(format!("D_{to}_{new_number}"));
    new["html_url"] = json!(format!("https://github.com/{to}/discussions/{new_number}"));
    let mut repo = objects::repository(before);
    let name = to.rsplit('/').next().unwrap_or(to);
    repo["full_name"] = json!(to);
    repo["name"] = json!(name);
    repo["id"] = json!(repo["id"].as_u64().unwrap_or(0) + 1);
    repo["html_url"] = json!(format!("https://github.com/{to}"));
    repo["url"] = json!(format!("https://api.github.com/repos/{to}"));
    json!({"action": "transferred", "discussion": old,
           "changes": {"new_discussion": new, "new_repository": repo}})
}

/// `discussion_comment.edited` (with the body before) or `deleted` (the
/// comment as it was).
fn comment(w: &World, before: &World, id: u64, action: &str) -> Vec<(String, Value)> {
    let Some(was) = before.discussion_comments.get(&id) else {
        return Vec::new();
    };
    let c = w.discussion_comments.get(&id).unwrap_or(was);
    let mut body = json!({"action": action, "comment": discussion_comment_object(w, c),
                          "discussion": discussion_object(w, c.number)});
    if action == "edited" {
        body["changes"] = json!({"body": {"from": was.body}});
    }
    vec![("discussion_comment".into(), body)]
}
