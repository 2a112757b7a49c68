//! The REST and GraphQL answers GitHub would give about a repository at one
//! moment, rendered from the world (`World::at(history, now)`). Paths are
//! relative to `/repos/{owner}/{repo}/`; `None` is GitHub's 404. Lists are
//! whole here: `repos` pages them.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::history::ReactionOn;
use super::objects::{self, iso, user};
use super::world::{Item, World};

mod projects;
pub(crate) use projects::project_v2;

/// `GET /repos/{o}/{r}/{path}` (without the query string).
pub fn rest(w: &World, path: &str) -> Option<Value> {
    let segs: Vec<&str> = path.split('/').collect();
    let num = |s: &str| s.parse::<u64>().ok();
    match segs.as_slice() {
        ["issues", "comments", id] => {
            let c = w.comments.get(&num(id)?)?;
            Some(objects::comment(w, c))
        }
        ["issues", "comments", id, "reactions"] => {
            let id = num(id)?;
            w.comments.get(&id)?;
            Some(reactions(w, ReactionOn::Comment(id)))
        }
        ["issues", n] => Some(objects::issue(w, w.threads.get(&num(n)?)?)),
        ["milestones", n] => {
            let n = num(n)?;
            let (title, at) = w.milestones.get(n)?;
            Some(objects::milestone_object(w, n, title, at, at))
        }
        ["issues", n, "comments"] => {
            let t = w.threads.get(&num(n)?)?;
            Some(objects::named(
                w,
                &t.comments,
                &w.comments,
                objects::comment,
            ))
        }
        ["issues", n, "timeline"] => {
            let t = w.threads.get(&num(n)?)?;
            let list = t
                .timeline
                .iter()
                .filter_map(|e| objects::timeline_event(w, t, e))
                .collect();
            Some(Value::Array(list))
        }
        ["issues", n, "events"] => {
            let t = w.threads.get(&num(n)?)?;
            let list = t
                .timeline
                .iter()
                .filter(|e| is_issue_event(&e.item))
                .filter_map(|e| objects::timeline_event(w, t, e))
                .collect();
            Some(Value::Array(list))
        }
        ["issues", n, "labels"] => {
            let t = w.threads.get(&num(n)?)?;
            Some(t.labels.iter().map(|l| objects::label(w, l)).collect())
        }
        ["issues", n, "reactions"] => {
            let n = num(n)?;
            w.threads.get(&n)?;
            Some(reactions(w, ReactionOn::Thread(n)))
        }
        ["issues", n, "sub_issues"] => {
            let t = w.threads.get(&num(n)?)?;
            Some(objects::named(w, &t.sub_issues, &w.threads, objects::issue))
        }
        ["issues", n, "parent"] => {
            let t = w.threads.get(&num(n)?)?;
            Some(objects::issue(w, w.threads.get(&t.parent?)?))
        }
        ["pulls", "comments", id] => {
            let c = w.review_comments.get(&num(id)?)?;
            Some(objects::review_comment(w, c))
        }
        ["pulls", n] => {
            let t = w.threads.get(&num(n)?)?;
            t.pr.as_ref()?;
            Some(objects::pull(w, t))
        }
        ["pulls", n, "reviews"] => on_pull(w, num(n)?, &w.reviews, |r| r.number, objects::review),
        ["pulls", n, "commits"] => {
            let pr = w.threads.get(&num(n)?)?.pr.as_ref()?;
            Some(pr.commits.iter().map(|c| objects::commit(w, c)).collect())
        }
        ["pulls", n, "comments"] => on_pull(
            w,
            num(n)?,
            &w.review_comments,
            |c| c.number,
            objects::review_comment,
        ),
        ["pulls", n, "requested_reviewers"] => {
            let pr = w.threads.get(&num(n)?)?.pr.as_ref()?;
            let users: Vec<Value> = pr
                .requested
                .iter()
                .map(|l| objects::login_user(l))
                .collect();
            let teams: Vec<Value> = w
                .teams
                .requested_of(num(n)?)
                .iter()
                .map(|t| super::teams::team(w, t))
                .collect();
            Some(json!({"users": users, "teams": teams}))
        }
        ["actions", "runs", id] => Some(objects::run(w, w.runs.get(&num(id)?)?)),
        ["compare", spec] => compare(w, spec),
        // A draft (an unpublished release) is not found by its tag.
        ["releases", "tags", tag] => Some(objects::release(
            w,
            w.releases.get(*tag).filter(|r| !r.draft)?,
        )),
        ["check-runs", id] => Some(objects::check_run(w, w.check_runs.get(&num(id)?)?)),
        ["commits", sha, "check-runs"] => Some(check_runs_at(w, sha)),
        ["code-scanning", "alerts", n] => Some(objects::alert(w, w.alerts.get(&num(n)?)?)),
        _ => None,
    }
}

/// `commits/{sha}/check-runs`: every app's check runs on the commit.
/// The list of `items` on pull request `n` (its reviews, its review
/// comments) as GitHub shows them, in id order; `None` when `n` is no pull
/// request.
fn on_pull<T>(
    w: &World,
    n: u64,
    items: &BTreeMap<u64, T>,
    number: impl Fn(&T) -> u64,
    object: impl Fn(&World, &T) -> Value,
) -> Option<Value> {
    w.threads.get(&n)?.pr.as_ref()?;
    let list = objects::shown(w, items, |i| number(i) == n, object);
    Some(Value::Array(list))
}

fn check_runs_at(w: &World, sha: &str) -> Value {
    let runs = objects::shown(w, &w.check_runs, |r| r.head_sha == sha, objects::check_run);
    json!({"total_count": runs.len(), "check_runs": runs})
}

/// Where GitHub sends a path of an issue transferred away: `301 Moved
/// Permanently`, its `Location` the same path of the issue in its new
/// repository (`repos/{to}/issues/{new}/...`).
pub fn moved(w: &World, path: &str) -> Option<String> {
    let segs: Vec<&str> = path.split('/').collect();
    let ["issues", n, rest @ ..] = segs.as_slice() else {
        return None;
    };
    let m = w.moved.get(&n.parse::<u64>().ok()?)?;
    let mut loc = format!("repos/{}/issues/{}", m.to, m.new_number);
    for r in rest {
        loc.push('/');
        loc.push_str(r);
    }
    Some(loc)
}

/// True for a path of an issue deleted here (`issues/{n}`, `issues/{n}/...`):
/// GitHub answers it `410 Gone`.
pub fn gone(w: &World, path: &str) -> bool {
    let segs: Vec<&str> = path.split('/').collect();
    match segs.as_slice() {
        ["issues", n, ..] => n.parse::<u64>().is_ok_and(|n| w.is_deleted(n)),
        _ => false,
    }
}

/// The repository an issue of `w` was transferred to (`to`, as `number`),
/// as far as the model knows it: that issue alone, with its comments and
/// its timeline (which ends with its `transferred`) and its reactions.
pub(crate) fn destination(w: &World, to: &str, number: u64) -> Option<World> {
    let (old, m) = w
        .moved
        .iter()
        .find(|(_, m)| m.to.eq_ignore_ascii_case(to) && m.new_number == number)?;
    let mut d = w.clone();
    d.repo = m.to.clone();
    d.came_from = Some((w.repo.clone(), std::mem::take(&mut d.threads)));
    d.moved.clear();
    let mut t = m.thread.clone();
    t.number = number;
    d.threads.insert(number, t);
    for c in d.comments.values_mut() {
        if c.number == *old {
            c.number = number;
        }
    }
    // The issue object moves, and its reactions with it.
    for r in &mut d.reactions {
        if r.on == ReactionOn::Thread(*old) {
            r.on = ReactionOn::Thread(number);
        }
    }
    Some(d)
}

/// What the issue events API lists: the timeline without comments,
/// reviews, commits and cross-references.
fn is_issue_event(item: &Item) -> bool {
    !matches!(
        item,
        Item::Commented(_) | Item::Reviewed(_) | Item::Committed(_) | Item::CrossReferenced(_)
    )
}

fn reactions(w: &World, on: ReactionOn) -> Value {
    Value::Array(
        w.reactions_on(on)
            .into_iter()
            .map(objects::reaction)
            .collect(),
    )
}

/// `compare/A...B`: `ahead` when B (a merge commit) contains A (a commit of
/// the merged PR), `identical` when equal, else `diverged`.
fn compare(w: &World, spec: &str) -> Option<Value> {
    let (base, head) = spec.split_once("...")?;
    let contains = w.threads.values().filter_map(|t| t.pr.as_ref()).any(|pr| {
        pr.merged.as_ref().is_some_and(|m| m.2 == head) && pr.commits.iter().any(|c| c.sha == base)
    });
    let status = if base == head {
        "identical"
    } else if contains {
        "ahead"
    } else {
        "diverged"
    };
    Some(
        json!({"status": status, "ahead_by": u8::from(contains), "behind_by": 0,
                "total_commits": u8::from(contains), "commits": [], "files": []}),
    )
}

/// A GraphQL actor (`__typename` tells bots from users).
fn actor(a: &super::history::Actor) -> Value {
    json!({"login": a.login, "__typename": if a.bot { "Bot" } else { "User" }})
}

/// `repository.pullRequest.reviewThreads` of PR `n`, all threads.
pub fn review_threads(w: &World, n: u64) -> Option<Vec<Value>> {
    w.threads.get(&n)?.pr.as_ref()?;
    let threads = w
        .review_threads
        .values()
        .filter(|t| t.number == n)
        .map(|t| {
            let comments: Vec<Value> = w
                .review_comments
                .values()
                .filter(|c| c.root == t.root)
                .map(|c| {
                    json!({"databaseId": c.id, "fullDatabaseId": c.id.to_string(),
                           "createdAt": iso(c.created_at), "author": actor(&c.user),
                           "replyTo": c.reply_to.map(|r| json!({"databaseId": r, "fullDatabaseId": r.to_string()})),
                           "pullRequestReview": null})
                })
                .collect();
            json!({"id": format!("PRRT_{}", t.root), "isResolved": t.resolved_by.is_some(),
                   "path": t.path, "resolvedBy": t.resolved_by.as_ref().map(actor),
                   "comments": {"nodes": comments}})
        })
        .collect();
    Some(threads)
}

/// `repository.pullRequest(number).timelineItems(itemTypes:
/// [BASE_REF_CHANGED_EVENT])` of PR `n`: each base change, with the branch
/// it left and the one it took.
pub(crate) fn base_changes(w: &World, n: u64) -> Option<Value> {
    let t = w.threads.get(&n).filter(|t| t.pr.is_some())?;
    let nodes: Vec<Value> = t
        .timeline
        .iter()
        .filter_map(|e| match &e.item {
            Item::BaseRefChanged { from, to } => Some(json!({
                "createdAt": e.at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                "previousRefName": from,
                "currentRefName": to,
                "actor": actor(&e.actor),
            })),
            _ => None,
        })
        .collect();
    Some(json!({ "nodes": nodes }))
}

/// `repository.discussion(number)`.
pub fn discussion(w: &World, n: u64) -> Option<Value> {
    let d = w.discussions.get(&n)?;
    let comments: Vec<Value> = d
        .comments
        .iter()
        .filter_map(|id| w.discussion_comments.get(id))
        .map(|c| {
            json!({"databaseId": c.id, "fullDatabaseId": c.id.to_string(),
                   "createdAt": iso(c.created_at), "body": c.body, "author": actor(&c.user)})
        })
        .collect();
    let reactions: Vec<Value> = w
        .reactions_on(ReactionOn::Discussion(n))
        .into_iter()
        .map(reaction_node)
        .collect();
    Some(json!({
        "id": format!("D_{n}"), "number": n, "title": d.title, "body": d.body,
        "closed": d.closed.is_some(), "closedAt": d.closed.map(|c| iso(c.0)),
        "stateReason": d.closed.map(|c| c.1.graphql()),
        "createdAt": iso(d.created_at), "updatedAt": iso(d.updated_at),
        "author": actor(&d.user),
        "answer": d.answer.as_ref().map(|a| json!({"databaseId": a.0, "fullDatabaseId": a.0.to_string()})),
        "answerChosenAt": d.answer.as_ref().map(|a| iso(a.1)),
        "answerChosenBy": d.answer.as_ref().map(|a| actor(&a.2)),
        "labels": {"nodes": d.labels.iter().map(|l| json!({"name": l})).collect::<Vec<_>>()},
        "locked": d.locked, "category": {"slug": d.category},
        "comments": {"nodes": comments},
        "reactions": {"nodes": reactions},
    }))
}

/// A reaction in GraphQL: `user` is typed `User`, so a bot's is null.
fn reaction_node(r: &super::world::Reaction) -> Value {
    json!({"databaseId": r.id, "content": graphql_content(&r.content),
           "createdAt": iso(r.at),
           "user": if r.user.bot { Value::Null } else { actor(&r.user) }})
}

/// GraphQL's `ReactionContent` for a REST reaction name.
fn graphql_content(rest: &str) -> &'static str {
    match rest {
        "+1" => "THUMBS_UP",
        "-1" => "THUMBS_DOWN",
        "laugh" => "LAUGH",
        "hooray" => "HOORAY",
        "confused" => "CONFUSED",
        "heart" => "HEART",
        "rocket" => "ROCKET",
        _ => "EYES",
    }
}

/// `node(id)` of a comment: its minimized state.
pub fn minimized(w: &World, node_id: &str) -> Option<Value> {
    let c = w
        .comments
        .values()
        .find(|c| objects::node_id("IC", c.id) == node_id)?;
    Some(
        json!({"isMinimized": c.minimized.is_some(), "minimizedReason": c.minimized,
                "updatedAt": iso(c.updated_at), "createdAt": iso(c.created_at)}),
    )
}

/// `node(id)` of an issue comment in the signals batch: its reactions, as
/// REST's `issues/comments/{id}/reactions` lists them.
pub(crate) fn comment_reactions(w: &World, node_id: &str) -> Option<Value> {
    let c = w
        .comments
        .values()
        .find(|c| objects::node_id("IC", c.id) == node_id)?;
    let nodes: Vec<Value> = w
        .reactions_on(ReactionOn::Comment(c.id))
        .into_iter()
        .map(reaction_node)
        .collect();
    Some(json!({"reactions": {"nodes": nodes}}))
}

/// One item of the signals batch: reactions, and for issues the latest close.
pub(crate) fn signal_item(w: &World, field: &str, n: u64) -> Option<Value> {
    let on = match field {
        "discussion" => {
            w.discussions.get(&n)?;
            ReactionOn::Discussion(n)
        }
        "pullRequest" => {
            w.threads.get(&n)?.pr.as_ref()?;
            ReactionOn::Thread(n)
        }
        _ => {
            let t = w.threads.get(&n)?;
            if t.pr.is_some() {
                return None;
            }
            ReactionOn::Thread(n)
        }
    };
    let nodes: Vec<Value> = w.reactions_on(on).into_iter().map(reaction_node).collect();
    let closes: Vec<Value> = w
        .threads
        .get(&n)
        .map(|t| {
            t.timeline
                .iter()
                .filter(|e| matches!(e.item, Item::Closed(_)))
                .map(|e| json!({"createdAt": iso(e.at), "closer": null, "actor": user(&e.actor)}))
                .collect()
        })
        .unwrap_or_default();
    Some(json!({"reactions": {"nodes": nodes},
                "timelineItems": {"nodes": closes.last().cloned().into_iter().collect::<Vec<_>>()}}))
}
