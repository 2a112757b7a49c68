//! GitHub's objects as JSON, from the world: one renderer per kind of
//! object, used by the REST answers and the webhook payloads alike (GitHub
//! embeds the same issue, pull request, comment and review objects in both).
//! Shapes follow GitHub's OpenAPI description (`@octokit/openapi`:
//! `issue`, `pull-request`, `issue-comment`, `pull-request-review`,
//! `pull-request-review-comment`, `timeline-*-event`, `workflow-run`,
//! `release`, `reaction`).

use std::collections::BTreeMap;

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{json, Map, Value};

use super::history::{Actor, ReactionOn};
use super::world::{Comment, Item, Reaction, Review, ReviewComment, Run, Thread, World};
use crate::bench::payloads;

mod checks;
pub use checks::{alert, app_bot, check_run, check_suite, ACTIONS_APP, OUR_APP};

pub fn iso(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// The `items` that `keep` keeps, each as GitHub shows it (`object`), in
/// id order.
pub fn shown<T>(
    w: &World,
    items: &BTreeMap<u64, T>,
    keep: impl Fn(&T) -> bool,
    object: impl Fn(&World, &T) -> Value,
) -> Vec<Value> {
    items
        .values()
        .filter(|i| keep(i))
        .map(|i| object(w, i))
        .collect()
}

/// The items of `items` that `ids` name (those still there), in that
/// order, each as GitHub shows it (`object`).
pub fn named<T>(
    w: &World,
    ids: &[u64],
    items: &BTreeMap<u64, T>,
    object: impl Fn(&World, &T) -> Value,
) -> Value {
    let list = ids.iter().filter_map(|id| items.get(id));
    Value::Array(list.map(|i| object(w, i)).collect())
}

fn opt_iso(at: Option<DateTime<Utc>>) -> Value {
    at.map_or(Value::Null, |t| Value::String(iso(t)))
}

pub fn user(a: &Actor) -> Value {
    payloads::user(&a.login, a.id(), a.kind())
}

pub(crate) fn login_user(login: &str) -> Value {
    let a = if login.ends_with("[bot]") {
        Actor::bot(login)
    } else {
        Actor::human(login)
    };
    user(&a)
}

fn api(w: &World) -> String {
    format!("https://api.github.com/repos/{}", w.repo)
}

fn html(w: &World) -> String {
    format!("https://github.com/{}", w.repo)
}

pub fn repository(w: &World) -> Value {
    // Its id survives renames: the id of its first name.
    payloads::repository(&w.repo, super::webhooks::repo_id(w.first_name()))
}

pub fn label(w: &World, name: &str) -> Value {
    let id = name
        .bytes()
        .fold(7u64, |h, b| h.wrapping_mul(131).wrapping_add(b as u64))
        % 1_000_000_000;
    json!({"id": id, "node_id": format!("LA_{id}"), "name": name, "color": "ededed",
           "default": false, "description": null,
           "url": format!("{}/labels/{name}", api(w))})
}

/// GitHub's reaction rollup on an issue, PR or comment.
fn rollup(w: &World, on: ReactionOn, url: &str) -> Value {
    let mut counts = Map::new();
    for c in [
        "+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes",
    ] {
        counts.insert(c.into(), json!(0));
    }
    let all = w.reactions_on(on);
    for r in &all {
        if let Some(n) = counts.get_mut(&r.content) {
            *n = json!(n.as_u64().unwrap_or(0) + 1);
        }
    }
    counts.insert("total_count".into(), json!(all.len()));
    counts.insert("url".into(), json!(format!("{url}/reactions")));
    Value::Object(counts)
}

fn milestone(w: &World, t: &Thread) -> Value {
    let Some((number, title)) = &t.milestone else {
        return Value::Null;
    };
    milestone_object(w, *number, title, t.created_at, t.updated_at)
}

/// A milestone as GitHub's `milestone` schema gives it (an item's
/// `milestone`, `milestones/{n}`, a `milestone` delivery's).
pub(crate) fn milestone_object(
    w: &World,
    number: u64,
    title: &str,
    created: DateTime<Utc>,
    updated: DateTime<Utc>,
) -> Value {
    json!({"url": format!("{}/milestones/{number}", api(w)),
           "html_url": format!("{}/milestone/{number}", html(w)),
           "labels_url": format!("{}/milestones/{number}/labels", api(w)),
           "id": 4_000_000 + number, "node_id": format!("MI_{number}"), "number": number,
           "title": title, "description": null, "creator": login_user("maria-lopez"),
           "open_issues": 1, "closed_issues": 0, "state": "open",
           "created_at": iso(created), "updated_at": iso(updated),
           "due_on": null, "closed_at": null})
}

/// The issue object (`GET /repos/{o}/{r}/issues/{n}`; a PR's issue side too).
pub fn issue(w: &World, t: &Thread) -> Value {
    let n = t.number;
    let url = format!("{}/issues/{n}", api(w));
    let kind = if t.pr.is_some() { "pull" } else { "issues" };
    let closed_at = t.closed.as_ref().map(|c| c.0);
    let assignees: Vec<Value> = t.assignees.iter().map(|l| login_user(l)).collect();
    let mut o = json!({
        "url": url, "repository_url": api(w),
        "labels_url": format!("{url}/labels{{/name}}"), "comments_url": format!("{url}/comments"),
        "events_url": format!("{url}/events"), "html_url": format!("{}/{kind}/{n}", html(w)),
        "id": 3_000_000_000u64 + n, "node_id": node_id(if t.pr.is_some() { "PR" } else { "I" }, n),
        "number": n, "title": t.title, "user": user(&t.user),
        "labels": t.labels.iter().map(|l| label(w, l)).collect::<Vec<_>>(),
        "state": if t.closed.is_some() { "closed" } else { "open" }, "locked": t.locked,
        "assignee": assignees.first().cloned().unwrap_or(Value::Null), "assignees": assignees,
        "milestone": milestone(w, t), "comments": t.comments.len(),
        "created_at": iso(t.created_at), "updated_at": iso(t.updated_at),
        "closed_at": opt_iso(closed_at), "author_association": association(&t.user),
        "active_lock_reason": null, "body": t.body,
        "closed_by": t.closed.as_ref().map_or(Value::Null, |c| user(&c.1)),
        "reactions": rollup(w, ReactionOn::Thread(n), &url),
        "timeline_url": format!("{url}/timeline"), "performed_via_github_app": null,
        "state_reason": t.closed.as_ref().and_then(|c| c.2).map_or(Value::Null, |r| json!(r.rest())),
        "sub_issues_summary": sub_issues_summary(w, t),
        "type": super::issue_types::rest(t.issue_type.as_deref()),
    });
    if let Some(parent) = t.parent {
        o["parent_issue_url"] = json!(format!("{}/issues/{parent}", api(w)));
    }
    if let Some(pr) = &t.pr {
        o["draft"] = json!(pr.draft);
        o["pull_request"] = json!({
            "url": format!("{}/pulls/{n}", api(w)), "html_url": format!("{}/pull/{n}", html(w)),
            "diff_url": format!("{}/pull/{n}.diff", html(w)),
            "patch_url": format!("{}/pull/{n}.patch", html(w)),
            "merged_at": opt_iso(pr.merged.as_ref().map(|m| m.0)),
        });
    }
    o
}

fn sub_issues_summary(w: &World, t: &Thread) -> Value {
    let total = t.sub_issues.len();
    let completed = t
        .sub_issues
        .iter()
        .filter(|c| w.threads.get(c).is_some_and(|c| c.closed.is_some()))
        .count();
    let percent = (completed * 100).checked_div(total).unwrap_or(0);
    json!({"total": total, "completed": completed, "percent_completed": percent})
}

fn association(a: &Actor) -> &'static str {
    if a.bot {
        "NONE"
    } else {
        "MEMBER"
    }
}

pub fn node_id(prefix: &str, n: u64) -> String {
    format!("{prefix}_kwDOa3y3mQ{n:010}")
}

/// The pull request object (`GET /repos/{o}/{r}/pulls/{n}`, and
/// `pull_request` of the webhooks).
pub fn pull(w: &World, t: &Thread) -> Value {
    let n = t.number;
    let Some(pr) = &t.pr else {
        return Value::Null;
    };
    let owner = w.repo.split('/').next().unwrap_or_default();
    let branch = |r: &str, sha: &str| {
        json!({"label": format!("{owner}:{r}"), "ref": r, "sha": sha,
               "user": payloads::user(owner, 148_820_031, "Organization"),
               "repo": repository(w)})
    };
    let merged = pr.merged.as_ref();
    let mut o = issue(w, t);
    let obj = o.as_object_mut().expect("object");
    for k in [
        "pull_request",
        "repository_url",
        "labels_url",
        "events_url",
        "reactions",
        "timeline_url",
        "performed_via_github_app",
        "state_reason",
        "closed_by",
        "sub_issues_summary",
        "comments",
        "type",
    ] {
        obj.remove(k);
    }
    let url = format!("{}/pulls/{n}", api(w));
    obj.insert("url".into(), json!(url));
    obj.insert("id".into(), json!(2_100_000_000u64 + n));
    obj.insert("issue_url".into(), json!(format!("{}/issues/{n}", api(w))));
    obj.insert(
        "diff_url".into(),
        json!(format!("{}/pull/{n}.diff", html(w))),
    );
    obj.insert(
        "patch_url".into(),
        json!(format!("{}/pull/{n}.patch", html(w))),
    );
    obj.insert("commits_url".into(), json!(format!("{url}/commits")));
    obj.insert(
        "review_comments_url".into(),
        json!(format!("{url}/comments")),
    );
    obj.insert(
        "review_comment_url".into(),
        json!(format!("{}/pulls/comments{{/number}}", api(w))),
    );
    obj.insert(
        "statuses_url".into(),
        json!(format!("{}/statuses/{}", api(w), pr.head_sha)),
    );
    obj.insert("head".into(), branch(&pr.head_ref, &pr.head_sha));
    obj.insert("base".into(), branch(w.base(n), &payloads::sha(7)));
    let reviewers: Vec<Value> = pr.requested.iter().map(|l| login_user(l)).collect();
    obj.insert("requested_reviewers".into(), json!(reviewers));
    let teams: Vec<Value> = w
        .teams
        .requested_of(n)
        .iter()
        .map(|t| super::teams::team(w, t))
        .collect();
    obj.insert("requested_teams".into(), json!(teams));
    obj.insert("draft".into(), json!(pr.draft));
    obj.insert("merged".into(), json!(merged.is_some()));
    obj.insert("merged_at".into(), opt_iso(merged.map(|m| m.0)));
    obj.insert(
        "merged_by".into(),
        merged.map_or(Value::Null, |m| user(&m.1)),
    );
    obj.insert(
        "merge_commit_sha".into(),
        merged.map_or(Value::Null, |m| json!(m.2)),
    );
    obj.insert("mergeable".into(), Value::Null);
    obj.insert("rebaseable".into(), Value::Null);
    obj.insert("mergeable_state".into(), json!("unknown"));
    obj.insert("auto_merge".into(), Value::Null);
    obj.insert("maintainer_can_modify".into(), json!(false));
    obj.insert("comments".into(), json!(t.comments.len()));
    let review_comments = w.review_comments.values().filter(|c| c.number == n).count();
    obj.insert("review_comments".into(), json!(review_comments));
    obj.insert("commits".into(), json!(pr.commits.len()));
    obj.insert("additions".into(), json!(10));
    obj.insert("deletions".into(), json!(2));
    obj.insert("changed_files".into(), json!(1));
    o
}

/// An issue comment (`issue-comment`).
pub fn comment(w: &World, c: &Comment) -> Value {
    let url = format!("{}/issues/comments/{}", api(w), c.id);
    json!({
        "id": c.id, "node_id": node_id("IC", c.id), "url": url,
        "html_url": format!("{}/issues/{}#issuecomment-{}", html(w), c.number, c.id),
        "body": c.body, "user": user(&c.user),
        "created_at": iso(c.created_at), "updated_at": iso(c.updated_at),
        "issue_url": format!("{}/issues/{}", api(w), c.number),
        "author_association": association(&c.user), "performed_via_github_app": null,
        "reactions": rollup(w, ReactionOn::Comment(c.id), &url),
    })
}

/// A review as the reviews list gives it (`pull-request-review`).
pub fn review(w: &World, r: &Review) -> Value {
    let state = if r.dismissed {
        "DISMISSED"
    } else {
        r.state.rest()
    };
    json!({
        "id": r.id, "node_id": node_id("PRR", r.id), "user": user(&r.user), "body": r.body,
        "state": state, "commit_id": r.commit_id,
        "html_url": format!("{}/pull/{}#pullrequestreview-{}", html(w), r.number, r.id),
        "pull_request_url": format!("{}/pulls/{}", api(w), r.number),
        "author_association": association(&r.user), "submitted_at": iso(r.submitted_at),
        "_links": {"html": {"href": format!("{}/pull/{}#pullrequestreview-{}", html(w), r.number, r.id)},
                   "pull_request": {"href": format!("{}/pulls/{}", api(w), r.number)}},
    })
}

/// A review comment (`pull-request-review-comment`).
pub fn review_comment(w: &World, c: &ReviewComment) -> Value {
    let url = format!("{}/pulls/comments/{}", api(w), c.id);
    let mut o = json!({
        "url": url, "id": c.id, "node_id": node_id("PRRC", c.id),
        "pull_request_review_id": super::world::review_of_comment(c.id), "diff_hunk": "@@ -1,3 +1,4 @@",
        "path": c.path, "position": 1, "original_position": 1, "commit_id": c.commit_id,
        "original_commit_id": c.commit_id, "user": user(&c.user), "body": c.body,
        "created_at": iso(c.created_at), "updated_at": iso(c.updated_at),
        "html_url": format!("{}/pull/{}#discussion_r{}", html(w), c.number, c.id),
        "pull_request_url": format!("{}/pulls/{}", api(w), c.number),
        "author_association": association(&c.user),
        "_links": {"self": {"href": url}, "html": {"href": format!("{}/pull/{}#discussion_r{}", html(w), c.number, c.id)},
                   "pull_request": {"href": format!("{}/pulls/{}", api(w), c.number)}},
        "line": 2, "original_line": 2, "side": "RIGHT", "subject_type": "line",
    });
    if let Some(r) = c.reply_to {
        o["in_reply_to_id"] = json!(r);
    }
    o
}

/// A commit as `pulls/{n}/commits` lists it.
pub fn commit(w: &World, c: &super::world::Commit) -> Value {
    let person = json!({"name": c.author.login, "email": format!("{}@users.noreply.github.com", c.author.login), "date": iso(c.at)});
    json!({
        "sha": c.sha, "node_id": format!("C_{}", c.sha),
        "url": format!("{}/commits/{}", api(w), c.sha),
        "html_url": format!("{}/commit/{}", html(w), c.sha),
        "commit": {"author": person, "committer": person, "message": c.message,
                   "tree": {"sha": payloads::sha(3), "url": format!("{}/git/trees/x", api(w))},
                   "comment_count": 0},
        "author": user(&c.author), "committer": user(&c.author), "parents": [],
    })
}

/// One timeline event (`timeline-issue-events` and its kin).
pub(crate) fn timeline_event(
    w: &World,
    t: &Thread,
    e: &super::world::TimelineEntry,
) -> Option<Value> {
    let base = |event: &str| {
        json!({"id": e.id, "node_id": format!("E_{}", e.id),
               "url": format!("{}/issues/events/{}", api(w), e.id),
               "actor": user(&e.actor), "event": event, "commit_id": null, "commit_url": null,
               "created_at": iso(e.at), "performed_via_github_app": null})
    };
    // The entry of `event` with one field more.
    let with = |event: &str, field: &str, value: Value| {
        let mut o = base(event);
        o[field] = value;
        o
    };
    // Of a pair of entries, the one for an addition or the one for a removal.
    let added = matches!(
        e.item,
        Item::Labeled(_) | Item::Assigned(_) | Item::Milestoned(_) | Item::ReviewRequested(_)
    );
    let pick = |[on, off]: [&'static str; 2]| if added { on } else { off };
    let mut o = match &e.item {
        Item::Labeled(l) | Item::Unlabeled(l) => with(
            pick(["labeled", "unlabeled"]),
            "label",
            json!({"name": l, "color": "ededed"}),
        ),
        Item::Closed(reason) => {
            let mut o = base("closed");
            o["state_reason"] = reason.map_or(Value::Null, |r| json!(r.rest()));
            if let Some((_, _, sha)) = t.pr.as_ref().and_then(|p| p.merged.as_ref()) {
                o["commit_id"] = json!(sha);
            }
            o
        }
        Item::Reopened => base("reopened"),
        // `state-change-issue-event`'s shape: who pushed and when; the
        // description names no before or after commit.
        Item::HeadRefForcePushed => base("head_ref_force_pushed"),
        Item::Transferred(_) => base("transferred"),
        Item::BaseRefChanged { .. } => base("base_ref_changed"),
        Item::Merged(sha) => {
            let mut o = base("merged");
            o["commit_id"] = json!(sha);
            o["commit_url"] = json!(format!("{}/commits/{sha}", api(w)));
            o
        }
        Item::Assigned(l) | Item::Unassigned(l) => {
            with(pick(["assigned", "unassigned"]), "assignee", login_user(l))
        }
        Item::Milestoned(m) | Item::Demilestoned(m) => with(
            pick(["milestoned", "demilestoned"]),
            "milestone",
            json!({"title": m}),
        ),
        Item::ReviewRequested(l) | Item::ReviewRequestRemoved(l) => {
            let name = pick(["review_requested", "review_request_removed"]);
            let mut o = with(name, "review_requester", user(&e.actor));
            o["requested_reviewer"] = login_user(l);
            o
        }
        Item::TeamReviewRequested(team) => {
            let mut o = with("review_requested", "review_requester", user(&e.actor));
            o["requested_team"] = super::teams::team(w, team);
            o
        }
        Item::Locked => with("locked", "lock_reason", Value::Null),
        Item::Unlocked => base("unlocked"),
        Item::Silent(kind) => base(kind),
        Item::ReadyForReview => base("ready_for_review"),
        Item::ConvertToDraft => base("convert_to_draft"),
        Item::Renamed { from, to } => with("renamed", "rename", json!({"from": from, "to": to})),
        Item::ReviewDismissed(id) => {
            let mut o = base("review_dismissed");
            let state = w.reviews.get(id).map_or("approved", |r| r.state.rest());
            o["dismissed_review"] = json!({"state": state.to_ascii_lowercase(), "review_id": id,
                                           "dismissal_message": "outdated"});
            o
        }
        Item::SubIssueAdded(other)
        | Item::SubIssueRemoved(other)
        | Item::ParentIssueAdded(other)
        | Item::ParentIssueRemoved(other) => {
            let (name, field) = match e.item {
                Item::SubIssueAdded(_) => ("sub_issue_added", "sub_issue"),
                Item::SubIssueRemoved(_) => ("sub_issue_removed", "sub_issue"),
                Item::ParentIssueAdded(_) => ("parent_issue_added", "parent_issue"),
                _ => ("parent_issue_removed", "parent_issue"),
            };
            with(name, field, issue_reference(w, *other))
        }
        Item::IssueType { from, to } => {
            let (name, fields) = super::issue_types::timeline(from.as_deref(), to.as_deref());
            let mut o = base(name);
            if let (Some(o), Value::Object(fields)) = (o.as_object_mut(), fields) {
                o.extend(fields);
            }
            o
        }
        Item::CrossReferenced(source) => {
            let src = w.threads.get(source)?;
            return Some(json!({
                "event": "cross-referenced", "actor": user(&e.actor),
                "created_at": iso(e.at), "updated_at": iso(e.at),
                "source": {"type": "issue", "issue": issue(w, src)},
            }));
        }
        Item::Committed(sha) => {
            let c = t.pr.as_ref()?.commits.iter().find(|c| &c.sha == sha)?;
            let mut o = commit(w, c);
            let inner = o["commit"].clone();
            let obj = o.as_object_mut()?;
            obj.remove("commit");
            obj.insert("event".into(), json!("committed"));
            for k in ["author", "committer", "message", "tree"] {
                obj.insert(k.into(), inner[k].clone());
            }
            return Some(o);
        }
        Item::Reviewed(id) => {
            let r = w.reviews.get(id)?;
            let mut o = review(w, r);
            o["event"] = json!("reviewed");
            o["state"] = json!(o["state"].as_str().unwrap_or("").to_ascii_lowercase());
            return Some(o);
        }
        Item::Commented(id) => {
            let c = w.comments.get(id)?;
            let mut o = comment(w, c);
            o["event"] = json!("commented");
            o["actor"] = user(&c.user);
            return Some(o);
        }
    };
    if let Some(obj) = o.as_object_mut() {
        if obj.get("commit_id").is_some_and(Value::is_null) {
            obj.insert("commit_id".into(), Value::Null);
        }
    }
    Some(o)
}

/// `issue-reference`: the other issue of a sub-issue event.
/// An issue that moved away names its old repository's issues there
/// (`World::came_from`), as GitHub names an issue of another repository.
fn issue_reference(w: &World, n: u64) -> Value {
    let found = w.threads.get(&n).map(|t| (t, w.repo.as_str())).or_else(|| {
        let (repo, threads) = w.came_from.as_ref()?;
        Some((threads.get(&n)?, repo.as_str()))
    });
    let Some((t, repo)) = found else {
        return Value::Null;
    };
    json!({"number": n, "title": t.title,
           "state": if t.closed.is_some() { "closed" } else { "open" },
           "state_reason": t.closed.as_ref().and_then(|c| c.2).map(|r| r.rest()),
           "repository": {"full_name": repo}})
}

pub fn reaction(r: &Reaction) -> Value {
    json!({"id": r.id, "node_id": format!("REA_{}", r.id), "user": user(&r.user),
           "content": r.content, "created_at": iso(r.at)})
}

/// A workflow run (`workflow-run`).
pub fn run(w: &World, r: &Run) -> Value {
    let status = if r.conclusion.is_some() {
        "completed"
    } else {
        "queued"
    };
    json!({
        "id": r.id, "name": r.name, "node_id": format!("WFR_{}", r.id),
        "head_branch": "main", "head_sha": payloads::sha(r.id), "path": r.path,
        "display_title": r.name, "run_number": r.id % 1000, "event": r.event,
        "status": status, "conclusion": r.conclusion, "workflow_id": 161_335,
        "check_suite_id": 1, "url": format!("{}/actions/runs/{}", api(w), r.id),
        "html_url": format!("{}/actions/runs/{}", html(w), r.id),
        "actor": user(&r.actor), "triggering_actor": user(&r.actor), "run_attempt": 1,
        "created_at": iso(r.created_at), "updated_at": iso(r.updated_at),
        "run_started_at": iso(r.created_at), "pull_requests": [],
        "repository": repository(w), "head_repository": repository(w),
    })
}

/// A release (`release`).
pub fn release(w: &World, r: &super::world::Release) -> Value {
    json!({
        "url": format!("{}/releases/{}", api(w), r.id), "id": r.id,
        "html_url": format!("{}/releases/tag/{}", html(w), r.tag),
        "node_id": format!("RE_{}", r.id), "tag_name": r.tag, "target_commitish": "main",
        "name": r.tag, "draft": r.draft, "prerelease": false, "author": user(&r.author),
        "created_at": iso(r.created_at), "published_at": (!r.draft).then(|| iso(r.created_at)),
        "updated_at": iso(r.updated_at), "body": r.body, "assets": [],
    })
}
