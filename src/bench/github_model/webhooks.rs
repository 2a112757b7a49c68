//! The webhook deliveries a history makes GitHub send, in GitHub's payload
//! shapes (as the octokit examples in `../shared/fixtures/webhooks/`), each
//! rendered from the objects as they are right after its event, and signed
//! like GitHub signs them (`X-Hub-Signature-256`: HMAC-SHA256 of the body).
//! Facts GitHub sends no webhook for (reactions, minimized comments) give
//! none.

use serde_json::{json, Value};

use super::history::{CloseReason, Event, Fact, History};
use super::objects::{self, iso, user};
use super::world::{Changed, World};

mod checks;
mod discussions;
mod projects;

/// One delivery: the event name, its id, the body, when it was sent.
#[derive(Debug, Clone)]
pub struct Delivery {
    pub event: String,
    pub id: String,
    pub at: chrono::DateTime<chrono::Utc>,
    pub body: Value,
}

/// Every delivery of the history, in order.
pub fn deliveries(history: &History) -> Vec<Delivery> {
    let mut w = World::new(history);
    let mut out = Vec::new();
    for (i, e) in history.events.iter().enumerate() {
        let before = w.clone();
        let changed = w.apply(e);
        for (j, (event, body)) in render(&w, &before, e, &changed).into_iter().enumerate() {
            let body = envelope(&w, e, &event, body);
            out.push(Delivery {
                event,
                id: format!("model-{i}-{j}"),
                at: e.at,
                body,
            });
        }
        w.forget_deleted(e);
    }
    out
}

/// Add what every delivery carries: repository, sender, installation.
fn envelope(w: &World, e: &Event, event: &str, mut body: Value) -> Value {
    if let Some(o) = body.as_object_mut() {
        // A project's deliveries and an owner's are the organization's: no
        // repository. So are a team's (`membership`).
        let org_level =
            event.starts_with("projects_v2") || event == "organization" || event == "membership";
        if !org_level {
            o.entry("repository")
                .or_insert_with(|| objects::repository(w));
        }
        o.insert("sender".into(), user(&e.actor));
        o.insert(
            "installation".into(),
            json!({"id": w.installation, "node_id": format!("MDIzOkludGVncmF0aW9u{}", w.installation)}),
        );
        let owner = if event == "membership" {
            super::teams::org(w)
        } else {
            w.repo.split('/').next().unwrap_or_default()
        };
        // A project's delivery names its own owner (`webhooks::projects`).
        o.entry("organization").or_insert_with(
            || json!({"login": owner, "id": 148_820_031, "node_id": "O_kgDOCN7GPw"}),
        );
    }
    body
}

/// The event name and payload (without the envelope) of each delivery one
/// event makes GitHub send.
fn render(w: &World, before: &World, e: &Event, changed: &Changed) -> Vec<(String, Value)> {
    if let Fact::Raw { event, payload } = &e.fact {
        return vec![(event.clone(), payload.clone())];
    }
    if *changed == Changed::Nothing {
        return Vec::new();
    }
    let one = |event: &str, body: Value| vec![(event.to_string(), body)];
    match (&e.fact, changed) {
        (Fact::RenameRepo { .. }, Changed::Repository(before)) => {
            one("repository", renamed(w, before))
        }
        (Fact::DeleteRepo, Changed::Repository(_)) => {
            one("repository", json!({"action": "deleted"}))
        }
        (Fact::DeleteOwner, Changed::Repository(_)) => {
            one("organization", json!({"action": "deleted"}))
        }
        (Fact::RenameOwner { .. }, Changed::Repository(before)) => {
            let from = before.split('/').next().unwrap_or_default();
            one(
                "organization",
                json!({"action": "renamed", "changes": {"login": {"from": from}}}),
            )
        }
        (Fact::Comment { .. }, Changed::Comment(id)) => {
            one("issue_comment", comment(w, *id, "created", None))
        }
        (Fact::EditComment { .. }, Changed::Comment(id)) => {
            let from = before.comments.get(id).map(|c| c.body.clone());
            one("issue_comment", comment(w, *id, "edited", from))
        }
        (Fact::DeleteComment { .. }, Changed::Comment(id)) => {
            one("issue_comment", comment(w, *id, "deleted", None))
        }
        (Fact::Review { .. }, Changed::Review(id)) => {
            one("pull_request_review", review(w, *id, "submitted"))
        }
        (Fact::DismissReview { .. }, Changed::Review(id)) => {
            one("pull_request_review", review(w, *id, "dismissed"))
        }
        (Fact::EditReview { .. }, Changed::Review(id)) => {
            let mut body = review(w, *id, "edited");
            body["changes"] =
                json!({"body": {"from": before.reviews.get(id).map(|r| r.body.clone())}});
            one("pull_request_review", body)
        }
        (
            Fact::EditReviewComment { .. } | Fact::DeleteReviewComment { .. },
            Changed::ReviewComment(id),
        ) => {
            let mut body = review_comment(w, *id);
            if matches!(e.fact, Fact::EditReviewComment { .. }) {
                body["action"] = json!("edited");
                let from = before.review_comments.get(id).map(|c| c.body.clone());
                body["changes"] = json!({"body": {"from": from}});
            } else {
                body["action"] = json!("deleted");
            }
            one("pull_request_review_comment", body)
        }
        (Fact::ReviewComment { .. }, Changed::ReviewComment(id)) => {
            // GitHub sends the comment, then the review it makes.
            let review_id = super::world::review_of_comment(*id);
            vec![
                ("pull_request_review_comment".into(), review_comment(w, *id)),
                (
                    "pull_request_review".into(),
                    review(w, review_id, "submitted"),
                ),
            ]
        }
        (Fact::ResolveThread { resolved, .. }, Changed::ReviewThread(n, root)) => one(
            "pull_request_review_thread",
            thread(w, *n, *root, *resolved),
        ),
        (Fact::LinkSubIssue { .. } | Fact::UnlinkSubIssue { .. }, Changed::SubIssue(p, c)) => {
            let (action, child_side) = if matches!(e.fact, Fact::LinkSubIssue { .. }) {
                ("sub_issue_added", "parent_issue_added")
            } else {
                ("sub_issue_removed", "parent_issue_removed")
            };
            // GitHub tells of the link from both ends: the parent's side,
            // then the child's (the same payload, its own action).
            vec![
                ("sub_issues".into(), sub_issue(w, *p, *c, action)),
                ("sub_issues".into(), sub_issue(w, *p, *c, child_side)),
            ]
        }
        (Fact::DiscussionAct { number, act }, _) => discussions::render(w, before, *number, act),
        (_, Changed::Discussion(n)) => one("discussion", discussion(w, *n, e)),
        (_, Changed::DiscussionComment(id)) => {
            one("discussion_comment", discussion_comment(w, *id))
        }
        (_, Changed::Run(id)) => one("workflow_run", run(w, *id)),
        (_, Changed::Release(tag)) => one("release", release(w, before, tag, e)),
        (_, Changed::Thread(n)) => thread_deliveries(w, before, e, *n),
        (Fact::Project(act), _) => projects::render(w, before, e, act, changed),
        (_, Changed::Checks(c)) => checks::render(w, before, e, c),
        (_, Changed::Team(team, login)) => super::teams::delivery(w, team, login),
        (_, Changed::Milestone(number, title)) => {
            // The milestone as it was: nothing in it dates the deletion.
            let at = before.milestones.get(*number).map_or(e.at, |(_, at)| at);
            let m = objects::milestone_object(before, *number, title, at, at);
            one("milestone", json!({"action": "deleted", "milestone": m}))
        }
        _ => Vec::new(),
    }
}

/// `issues` or `pull_request` (and `push` for a PR's new commits).
fn thread_deliveries(w: &World, before: &World, e: &Event, n: u64) -> Vec<(String, Value)> {
    let Some(t) = w.threads.get(&n) else {
        return Vec::new();
    };
    let is_pr = t.pr.is_some();
    let (action, extra): (&str, Value) = match &e.fact {
        Fact::OpenIssue { .. } | Fact::OpenPr { .. } | Fact::OpenRevertPr { .. } => {
            ("opened", json!({}))
        }
        Fact::Close { reason, .. } => ("closed", json!({"_reason": reason.rest()})),
        Fact::Merge { .. } => ("closed", json!({})),
        Fact::Reopen { .. } => ("reopened", json!({})),
        Fact::EditTitle { .. } => {
            let from = before.threads.get(&n).map(|t| t.title.clone());
            ("edited", json!({"changes": {"title": {"from": from}}}))
        }
        Fact::EditBody { .. } => {
            let from = before.threads.get(&n).map(|t| t.body.clone());
            ("edited", json!({"changes": {"body": {"from": from}}}))
        }
        Fact::Label { name, .. } => ("labeled", json!({"label": objects::label(w, name)})),
        Fact::Unlabel { name, .. } => ("unlabeled", json!({"label": objects::label(w, name)})),
        Fact::Assign { login, .. } => ("assigned", json!({"assignee": objects::login_user(login)})),
        Fact::Unassign { login, .. } => (
            "unassigned",
            json!({"assignee": objects::login_user(login)}),
        ),
        Fact::Milestone { .. } => ("milestoned", json!({})),
        Fact::Demilestone { .. } => ("demilestoned", json!({})),
        Fact::RequestReview { reviewer, .. } => (
            "review_requested",
            json!({"requested_reviewer": objects::login_user(reviewer)}),
        ),
        Fact::RequestTeamReview { team, .. } => (
            "review_requested",
            json!({"requested_team": super::teams::team(w, team)}),
        ),
        Fact::RemoveReviewRequest { reviewer, .. } => (
            "review_request_removed",
            json!({"requested_reviewer": objects::login_user(reviewer)}),
        ),
        Fact::Lock { locked: true, .. } => ("locked", json!({})),
        Fact::Lock { locked: false, .. } => ("unlocked", json!({})),
        Fact::ReadyForReview { .. } => ("ready_for_review", json!({})),
        Fact::ConvertToDraft { .. } => ("converted_to_draft", json!({})),
        Fact::Push { .. } | Fact::ForcePush { .. } => ("synchronize", json!({})),
        // GitHub's `issues.transferred`: the issue as it left, and where
        // it went (`changes.new_issue`, `changes.new_repository`).
        Fact::TransferIssue { to, new_number, .. } => {
            let mut new_issue = objects::issue(w, t);
            let url = format!("https://api.github.com/repos/{to}/issues/{new_number}");
            new_issue["number"] = json!(new_number);
            new_issue["url"] = json!(url);
            new_issue["html_url"] = json!(format!("https://github.com/{to}/issues/{new_number}"));
            new_issue["repository_url"] = json!(format!("https://api.github.com/repos/{to}"));
            let new_repository = json!({"id": repo_id(to), "name": to.split('/').nth(1).unwrap_or_default(),
                "full_name": to, "private": false, "owner": {"login": to.split('/').next().unwrap_or_default()}});
            (
                "transferred",
                json!({"changes": {"new_issue": new_issue, "new_repository": new_repository}}),
            )
        }
        Fact::DeleteIssue { .. } => ("deleted", json!({})),
        Fact::ChangeBase { .. } => {
            let from = before.base(n).to_string();
            let sha = objects::node_id("sha", 7);
            (
                "edited",
                json!({"changes": {"base": {"ref": {"from": from}, "sha": {"from": sha}}}}),
            )
        }
        Fact::SetIssueType { .. } => {
            let from = before.threads.get(&n).and_then(|b| b.issue_type.clone());
            super::issue_types::webhook(from.as_deref(), t.issue_type.as_deref())
        }
        _ => return Vec::new(),
    };
    let mut body = if is_pr {
        json!({"action": action, "number": n, "pull_request": objects::pull(w, t)})
    } else {
        json!({"action": action, "issue": objects::issue(w, t)})
    };
    if let (Some(o), Value::Object(extra)) = (body.as_object_mut(), extra) {
        for (k, v) in extra {
            if k != "_reason" {
                o.insert(k, v);
            }
        }
    }
    if matches!(e.fact, Fact::Milestone { .. } | Fact::Demilestone { .. }) {
        let m = before
            .threads
            .get(&n)
            .and_then(|b| b.milestone.clone())
            .or(t.milestone.clone());
        if let Some((number, title)) = m {
            body["milestone"] = json!({"number": number, "title": title, "id": 4_000_000 + number});
        }
    }
    let mut out = vec![(
        if is_pr { "pull_request" } else { "issues" }.to_string(),
        body,
    )];
    let pushed = match &e.fact {
        Fact::Push { sha, message, .. } => Some((sha, message, false)),
        Fact::ForcePush { sha, message, .. } => Some((sha, message, true)),
        _ => None,
    };
    if let (Some((sha, message, forced)), Some(pr)) = (pushed, &t.pr) {
        let prev = before
            .threads
            .get(&n)
            .and_then(|b| b.pr.as_ref())
            .map(|p| p.head_sha.clone())
            .unwrap_or_default();
        out.push((
            "push".into(),
            json!({"ref": format!("refs/heads/{}", pr.head_ref), "before": prev, "after": sha,
                   "created": false, "deleted": false, "forced": forced,
                   "commits": [{"id": sha, "message": message, "timestamp": iso(e.at),
                                "author": {"name": e.actor.login, "username": e.actor.login},
                                "committer": {"name": e.actor.login, "username": e.actor.login}}],
                   "head_commit": {"id": sha, "message": message, "timestamp": iso(e.at)},
                   "pusher": {"name": e.actor.login}}),
        ));
    }
    if let (Fact::Merge { merge_sha, .. }, Some(_)) = (&e.fact, &t.pr) {
        // The merge lands on the base branch.
        out.push((
            "push".into(),
            json!({"ref": "refs/heads/main", "before": objects::node_id("sha", n), "after": merge_sha,
                   "created": false, "deleted": false, "forced": false,
                   "commits": [{"id": merge_sha, "message": merge_message(t), "timestamp": iso(e.at),
                                "author": {"name": e.actor.login, "username": e.actor.login},
                                "committer": {"name": "GitHub", "username": "web-flow"}}],
                   "head_commit": {"id": merge_sha, "message": merge_message(t), "timestamp": iso(e.at)},
                   "pusher": {"name": e.actor.login}}),
        ));
    }
    out
}

/// GitHub's `repository.renamed` (same owner) or `repository.transferred`
/// (another owner): the repository as it is now (the envelope's), and
/// what it was (`@octokit/webhooks-examples`' shapes).
fn renamed(w: &World, before: &str) -> Value {
    let (owner_before, name_before) = before.split_once('/').unwrap_or(("", before));
    let owner_now = w.repo.split('/').next().unwrap_or_default();
    if owner_before.eq_ignore_ascii_case(owner_now) {
        json!({"action": "renamed", "changes": {"repository": {"name": {"from": name_before}}}})
    } else {
        json!({"action": "transferred", "changes": {"owner": {"from": {
            "organization": {"login": owner_before, "id": 148_820_031}}}}})
    }
}

/// A stable repository id for a repository's name (GitHub's numeric ids).
pub(crate) fn repo_id(full_name: &str) -> u64 {
    full_name
        .bytes()
        .fold(7u64, |h, b| h.wrapping_mul(131).wrapping_add(b as u64))
        % 900_000_000
        + 100_000_000
}

/// The message of a PR's merge commit (a revert PR's carries "This reverts commit …").
fn merge_message(t: &super::world::Thread) -> String {
    let pr = t.pr.as_ref();
    let first = pr
        .and_then(|p| p.commits.first())
        .map(|c| c.message.clone());
    match first {
        Some(m) if m.contains("This reverts commit") => m,
        _ => format!("{} (#{})", t.title, t.number),
    }
}

/// Issue `n` as a webhook carries it (null when the world has none).
fn issue_of(w: &World, n: u64) -> Value {
    w.threads
        .get(&n)
        .map_or(Value::Null, |t| objects::issue(w, t))
}

/// Pull request `n` as a webhook carries it (null when the world has none).
fn pull_of(w: &World, n: u64) -> Value {
    w.threads
        .get(&n)
        .map_or(Value::Null, |t| objects::pull(w, t))
}

fn comment(w: &World, id: u64, action: &str, from: Option<String>) -> Value {
    let Some(c) = w.comments.get(&id) else {
        return json!({});
    };
    let issue = issue_of(w, c.number);
    let mut body = json!({"action": action, "issue": issue, "comment": objects::comment(w, c)});
    if let Some(from) = from {
        body["changes"] = json!({"body": {"from": from}});
    }
    body
}

fn review(w: &World, id: u64, action: &str) -> Value {
    let Some(r) = w.reviews.get(&id) else {
        return json!({});
    };
    let pr = pull_of(w, r.number);
    let mut review = objects::review(w, r);
    review["state"] = json!(review["state"].as_str().unwrap_or("").to_ascii_lowercase());
    json!({"action": action, "review": review, "pull_request": pr})
}

fn review_comment(w: &World, id: u64) -> Value {
    let Some(c) = w.review_comments.get(&id) else {
        return json!({});
    };
    let pr = pull_of(w, c.number);
    json!({"action": "created", "comment": objects::review_comment(w, c), "pull_request": pr})
}

fn thread(w: &World, n: u64, root: u64, resolved: bool) -> Value {
    let pr = pull_of(w, n);
    let comments = objects::shown(
        w,
        &w.review_comments,
        |c| c.root == root,
        objects::review_comment,
    );
    let action = if resolved { "resolved" } else { "unresolved" };
    json!({"action": action, "thread": {"node_id": format!("PRRT_{root}"), "comments": comments},
           "pull_request": pr})
}

fn sub_issue(w: &World, parent: u64, child: u64, action: &str) -> Value {
    let p = issue_of(w, parent);
    let c = issue_of(w, child);
    json!({"action": action, "sub_issue_id": c["id"], "sub_issue": c,
           "parent_issue_id": p["id"], "parent_issue": p,
           "parent_issue_repo": objects::repository(w)})
}

fn discussion_object(w: &World, n: u64) -> Value {
    let Some(d) = w.discussions.get(&n) else {
        return Value::Null;
    };
    let html = format!("https://github.com/{}/discussions/{n}", w.repo);
    json!({
        "id": 5_000_000 + n, "node_id": format!("D_{n}"), "number": n, "html_url": html,
        "title": d.title, "body": d.body,
        "state": discussions::state(d),
        "state_reason": d.closed.map(|c| c.1.rest()), "locked": d.locked,
        "comments": d.comments.len(), "category": discussions::category(&d.category),
        "labels": d.labels.iter().map(|l| objects::label(w, l)).collect::<Vec<_>>(),
        "answer_html_url": d.answer.as_ref().map(|a| format!("{html}#discussioncomment-{}", a.0)),
        "answer_chosen_at": d.answer.as_ref().map(|a| iso(a.1)),
        "answer_chosen_by": d.answer.as_ref().map(|a| user(&a.2)),
        "user": user(&d.user), "created_at": iso(d.created_at), "updated_at": iso(d.updated_at),
        "closed_at": d.closed.map(|c| iso(c.0)),
    })
}

fn discussion(w: &World, n: u64, e: &Event) -> Value {
    let action = match &e.fact {
        Fact::OpenDiscussion { .. } => "created",
        Fact::AnswerDiscussion { .. } => "answered",
        Fact::CloseDiscussion { .. } => "closed",
        Fact::ReopenDiscussion { .. } => "reopened",
        _ => "edited",
    };
    let mut body = json!({"action": action, "discussion": discussion_object(w, n)});
    if let Fact::AnswerDiscussion { comment, .. } = &e.fact {
        if let Some(c) = w.discussion_comments.get(comment) {
            body["answer"] = discussion_comment_object(w, c);
        }
    }
    if let Fact::CloseDiscussion { reason, .. } = &e.fact {
        body["discussion"]["state_reason"] = json!(match reason {
            CloseReason::Completed => "resolved",
            other => other.rest(),
        });
    }
    body
}

fn discussion_comment_object(w: &World, c: &super::world::Comment) -> Value {
    json!({"id": c.id, "node_id": format!("DC_{}", c.id),
           "html_url": format!("https://github.com/{}/discussions/{}#discussioncomment-{}", w.repo, c.number, c.id),
           "parent_id": null, "body": c.body, "user": user(&c.user),
           "created_at": iso(c.created_at), "updated_at": iso(c.updated_at)})
}

fn discussion_comment(w: &World, id: u64) -> Value {
    let Some(c) = w.discussion_comments.get(&id) else {
        return json!({});
    };
    json!({"action": "created", "comment": discussion_comment_object(w, c),
           "discussion": discussion_object(w, c.number)})
}

fn run(w: &World, id: u64) -> Value {
    let Some(r) = w.runs.get(&id) else {
        return json!({});
    };
    let action = if r.conclusion.is_some() {
        "completed"
    } else {
        "requested"
    };
    json!({"action": action, "workflow_run": objects::run(w, r),
           "workflow": {"id": 161_335, "name": r.name, "path": r.path}})
}

fn release(w: &World, before: &World, tag: &str, e: &Event) -> Value {
    let Some(r) = w.releases.get(tag) else {
        return json!({});
    };
    let mut body = json!({"release": objects::release(w, r)});
    match &e.fact {
        Fact::EditRelease { .. } => {
            body["action"] = json!("edited");
            let from = before.releases.get(tag).map(|r| r.body.clone());
            body["changes"] = json!({"body": {"from": from}});
        }
        _ => body["action"] = json!("published"),
    }
    body
}
