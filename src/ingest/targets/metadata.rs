//! Targets for the assignment, metadata, project, discussion and moderation
//! types, when the line's `url` / `number` do not name the right object.
//!
//! - `assign_to_agent`, `assign_to_user`, `unassign_from_user`,
//!   `assign_milestone`, `set_issue_type`, `set_issue_field`, `replace_label`:
//!   the issue or PR thread (`issue_number`, `pull_number`, `item_number`).
//!   Milestone number/title, field name/value stay in `extra`/`metadata`.
//! - `link_sub_issue`: the sub-issue's thread with `parent_number` set to the
//!   parent, so both threads are watched.
//! - `create_discussion`, `update_discussion`, `close_discussion`: the
//!   discussion (`discussion_number`, or `number` when no URL says otherwise).
//! - `hide_comment`: the comment by GraphQL node id (`comment_id`); its kind
//!   follows the node id's prefix (`DC_` discussion comment, `PRRC_` review
//!   comment, else issue comment).
//! - `create_project`, `create_project_status_update`: the project, keyed by
//!   its owner login (projects belong to an organization or user, not a
//!   repository) and its node id when the line has one, else its number
//!   from the URL. Item and status-update webhooks name projects only by node
//!   id, so a number-keyed target sees the project's own events only.
//! - `update_project`: the project item when its node id (`PVTI_…`) is known;
//!   else the content's issue/PR thread (`content_number`) with the project
//!   left in `extra` — field changes do not reach it: item webhooks name
//!   content by node id alone, and reconciliation reads no project item
//!   yet (`judge::reads` PROJECTS), so it stays `field_unreadable`; else
//!   (draft issues, `create_fields`/`create_view`) the project.

use serde_json::{Map, Value};

use super::Line;
use crate::model::OutputType;
use crate::model::{Target, TargetKind};

pub(super) fn target_for(l: &Line<'_>) -> Option<Target> {
    let (line, repo, found) = (l.fields, l.repo, l.found);
    match l.output_type {
        OutputType::AssignToAgent => {
            if let Some(n) = number(line, &["pull_number", "pull_request_number"]) {
                return Some(Target::thread(repo, TargetKind::PullRequest, n));
            }
            thread(line, repo, found, &["issue_number"])
        }
        OutputType::AssignToUser
        | OutputType::UnassignFromUser
        | OutputType::AssignMilestone
        | OutputType::SetIssueType
        | OutputType::SetIssueField
        | OutputType::ReplaceLabel => thread(line, repo, found, &["issue_number", "item_number"]),
        OutputType::LinkSubIssue => link_sub_issue(line, repo, found),
        OutputType::CreateDiscussion
        | OutputType::UpdateDiscussion
        | OutputType::CloseDiscussion => discussion(line, repo, found),
        OutputType::HideComment => hide_comment(line, repo, found),
        OutputType::CreateProject | OutputType::CreateProjectStatusUpdate => project(line, found),
        OutputType::UpdateProject => update_project(line, repo, found),
        _ => None,
    }
}

/// A number given as a JSON number or a numeric string (not a temporary id).
fn number(line: &Map<String, Value>, keys: &[&str]) -> Option<u64> {
    keys.iter().find_map(|k| match line.get(*k)? {
        Value::String(s) => {
            crate::model::wire::github_id(&Value::from(s.trim().trim_start_matches('#')))
        }
        v => crate::model::wire::github_id(v),
    })
}

fn text<'a>(line: &'a Map<String, Value>, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|k| line.get(*k).and_then(crate::model::wire::trimmed_text))
}

/// The generic target when it already names a thread; else the first numbered
/// field as an issue thread.
fn thread(
    line: &Map<String, Value>,
    repo: &str,
    found: Option<&Target>,
    keys: &[&str],
) -> Option<Target> {
    if found.is_some_and(|t| t.kind.is_thread()) {
        return None;
    }
    number(line, keys).map(|n| Target::thread(repo, TargetKind::Issue, n))
}

fn link_sub_issue(line: &Map<String, Value>, repo: &str, found: Option<&Target>) -> Option<Target> {
    let child = number(line, &["sub_issue_number"])
        .or_else(|| found.filter(|t| t.kind.is_thread()).and_then(|t| t.number))?;
    let mut t = Target::thread(repo, TargetKind::Issue, child);
    t.parent_number = number(line, &["parent_issue_number"]);
    t.url = found
        .filter(|f| f.kind.is_thread() && f.number == Some(child))
        .and_then(|f| f.url.clone());
    Some(t)
}

fn discussion(line: &Map<String, Value>, repo: &str, found: Option<&Target>) -> Option<Target> {
    if found.is_some_and(|t| t.kind == TargetKind::Discussion) {
        return None;
    }
    let n = number(line, &["discussion_number"])
        .or_else(|| found.filter(|t| t.kind.is_thread()).and_then(|t| t.number))
        .or_else(|| number(line, &["number"]))?;
    let mut t = Target::thread(repo, TargetKind::Discussion, n);
    t.url = found.and_then(|f| f.url.clone());
    Some(t)
}

fn hide_comment(line: &Map<String, Value>, repo: &str, found: Option<&Target>) -> Option<Target> {
    let parent = found.filter(|t| t.kind.is_thread()).and_then(|t| t.number);
    match line.get("comment_id")? {
        v @ Value::Number(_) => Some(Target::comment(
            repo,
            TargetKind::Comment,
            crate::model::wire::github_id(v)?,
            parent,
        )),
        Value::String(s) if !s.trim().is_empty() => {
            let node = s.trim();
            if let Ok(id) = node.parse::<u64>() {
                return Some(Target::comment(repo, TargetKind::Comment, id, parent));
            }
            let kind = if node.starts_with("DC_") {
                TargetKind::DiscussionComment
            } else if node.starts_with("PRRC_") {
                TargetKind::ReviewComment
            } else {
                TargetKind::Comment
            };
            let mut t = by_node(repo, kind, node);
            t.parent_number = parent;
            Some(t)
        }
        _ => None,
    }
}

/// An object known only by its GraphQL node id.
fn by_node(repo: &str, kind: TargetKind, node_id: &str) -> Target {
    Target {
        repo: repo.to_string(),
        kind,
        number: None,
        id: None,
        node_id: Some(node_id.to_string()),
        url: None,
        parent_number: None,
        git_ref: None,
        name: None,
    }
}

/// `https://github.com/{orgs|users}/OWNER/projects/N` → (owner, number).
pub(crate) fn parse_project_url(url: &str) -> Option<(String, u64)> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let path = rest.split(['?', '#']).next()?;
    let segs: Vec<&str> = path.split('/').skip(1).filter(|s| !s.is_empty()).collect();
    match segs.as_slice() {
        ["orgs" | "users", owner, "projects", n, ..] => Some((owner.to_string(), n.parse().ok()?)),
        _ => None,
    }
}

/// The project a line names: by node id when known (how item and status
/// webhooks name it), else by number; the owner from the URL or `owner`.
fn project(line: &Map<String, Value>, found: Option<&Target>) -> Option<Target> {
    let url = text(line, &["project", "projectUrl", "project_url", "url"])
        .filter(|u| parse_project_url(u).is_some())
        .map(str::to_string);
    let (owner, number) = match url.as_deref().and_then(parse_project_url) {
        Some((o, n)) => (Some(o), Some(n)),
        None => (
            text(line, &["owner"]).map(str::to_string),
            number(line, &["project_number", "projectNumber"]),
        ),
    };
    let owner = owner?;
    let node_id = text(
        line,
        &[
            "project_node_id",
            "projectNodeId",
            "project_id",
            "projectId",
        ],
    )
    .filter(|id| id.starts_with("PVT_"))
    .map(str::to_string);
    if node_id.is_none() && number.is_none() {
        return None;
    }
    let mut t = by_node(&owner, TargetKind::Project, "");
    t.number = if node_id.is_some() { None } else { number };
    t.node_id = node_id;
    t.url = url.or_else(|| found.and_then(|f| f.url.clone()));
    Some(t)
}

fn update_project(line: &Map<String, Value>, repo: &str, found: Option<&Target>) -> Option<Target> {
    let item = text(
        line,
        &[
            "item_id",
            "itemId",
            "project_item_id",
            "projectItemId",
            "item_node_id",
        ],
    )
    .filter(|id| id.starts_with("PVTI_"));
    let project = project(line, found);
    if let Some(item) = item {
        let owner = project.as_ref().map_or(repo, |p| p.repo.as_str());
        let mut t = by_node(owner, TargetKind::ProjectItem, item);
        t.url = project.and_then(|p| p.url);
        return Some(t);
    }
    let is_content = text(line, &["operation"]).is_none()
        && text(line, &["content_type"]) != Some("draft_issue");
    if let (true, Some(n)) = (is_content, number(line, &["content_number"])) {
        let kind = if text(line, &["content_type"]) == Some("pull_request") {
            TargetKind::PullRequest
        } else {
            TargetKind::Issue
        };
        let content_repo = text(line, &["target_repo"]).unwrap_or(repo);
        return Some(Target::thread(content_repo, kind, n));
    }
    project
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Map, Value};

    use super::*;

    fn line(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn issue(n: u64) -> Target {
        Target::thread("o/r", TargetKind::Issue, n)
    }

    /// (type, line, generic target) → refined target (None: keep the generic one).
    #[test]
    fn targets_table() {
        let project_url = "https://github.com/orgs/acme/projects/42";
        let project_by_number = Target {
            number: Some(42),
            url: Some(project_url.into()),
            ..Target::thread("acme", TargetKind::Project, 0)
        };
        let project_by_node = Target {
            number: None,
            node_id: Some("PVT_kwDOAbc".into()),
            url: Some(project_url.into()),
            ..Target::thread("acme", TargetKind::Project, 0)
        };
        let sub = Target {
            parent_number: Some(40),
            ..issue(41)
        };
        let item = Target {
            node_id: Some("PVTI_lADOAbc".into()),
            number: None,
            url: Some(project_url.into()),
            ..Target::thread("acme", TargetKind::ProjectItem, 0)
        };
        let dc = Target {
            id: None,
            node_id: Some("DC_kwDOAbc777".into()),
            ..Target::comment("o/r", TargetKind::DiscussionComment, 0, None)
        };
        let ic = Target {
            id: None,
            node_id: Some("IC_kwDOAbc900".into()),
            ..Target::comment("o/r", TargetKind::Comment, 0, None)
        };
        type Row = (
            &'static str,
            &'static str,
            Value,
            Option<Target>,
            Option<Target>,
        );
        let rows: Vec<Row> = vec![
            (
                "agent on an issue",
                "assign_to_agent",
                json!({"issue_number": 7}),
                None,
                Some(issue(7)),
            ),
            (
                "agent on a PR",
                "assign_to_agent",
                json!({"pull_number": "8"}),
                Some(issue(8)),
                Some(Target::thread("o/r", TargetKind::PullRequest, 8)),
            ),
            (
                "user: generic thread kept",
                "assign_to_user",
                json!({"issue_number": 7}),
                Some(issue(7)),
                None,
            ),
            (
                "unassign by issue_number",
                "unassign_from_user",
                json!({"issue_number": "7"}),
                None,
                Some(issue(7)),
            ),
            (
                "milestone: temporary id is no number",
                "assign_milestone",
                json!({"issue_number": "aw_abc1"}),
                None,
                None,
            ),
            (
                "replace_label by item_number",
                "replace_label",
                json!({"item_number": 5}),
                None,
                Some(issue(5)),
            ),
            (
                "sub-issue watches both",
                "link_sub_issue",
                json!({"parent_issue_number": 40, "sub_issue_number": 41}),
                None,
                Some(sub.clone()),
            ),
            (
                "sub-issue from a generic child",
                "link_sub_issue",
                json!({"parent_issue_number": "40"}),
                Some(issue(41)),
                Some(sub),
            ),
            (
                "discussion url kept",
                "close_discussion",
                json!({}),
                Some(Target::thread("o/r", TargetKind::Discussion, 3)),
                None,
            ),
            (
                "discussion_number",
                "update_discussion",
                json!({"discussion_number": "3"}),
                None,
                Some(Target::thread("o/r", TargetKind::Discussion, 3)),
            ),
            (
                "discussion number read as issue",
                "create_discussion",
                json!({"number": 3}),
                Some(issue(3)),
                Some(Target::thread("o/r", TargetKind::Discussion, 3)),
            ),
            (
                "hide discussion comment",
                "hide_comment",
                json!({"comment_id": "DC_kwDOAbc777"}),
                None,
                Some(dc),
            ),
            (
                "hide issue comment",
                "hide_comment",
                json!({"comment_id": "IC_kwDOAbc900"}),
                None,
                Some(ic),
            ),
            (
                "hide numeric comment",
                "hide_comment",
                json!({"comment_id": 900}),
                Some(issue(7)),
                Some(Target::comment("o/r", TargetKind::Comment, 900, Some(7))),
            ),
            (
                "project by url",
                "create_project",
                json!({"url": project_url}),
                None,
                Some(project_by_number.clone()),
            ),
            (
                "project by url and node id",
                "create_project_status_update",
                json!({"project": project_url, "projectId": "PVT_kwDOAbc"}),
                None,
                Some(project_by_node),
            ),
            (
                "project without url or owner",
                "create_project",
                json!({"title": "x"}),
                None,
                None,
            ),
            (
                "update_project with item id",
                "update_project",
                json!({"project": project_url, "item_id": "PVTI_lADOAbc", "content_number": 41}),
                None,
                Some(item),
            ),
            (
                "update_project content thread",
                "update_project",
                json!({"project": project_url, "content_type": "pull_request", "content_number": "41", "target_repo": "acme/api"}),
                None,
                Some(Target::thread("acme/api", TargetKind::PullRequest, 41)),
            ),
            (
                "update_project draft issue",
                "update_project",
                json!({"project": project_url, "content_type": "draft_issue", "draft_title": "x"}),
                None,
                Some(project_by_number.clone()),
            ),
            (
                "update_project create_fields",
                "update_project",
                json!({"project": project_url, "operation": "create_fields", "content_number": 3}),
                None,
                Some(project_by_number),
            ),
            (
                "other types untouched",
                "add_labels",
                json!({"issue_number": 7}),
                None,
                None,
            ),
        ];
        let mut failures = Vec::new();
        for (name, kind, l, found, want) in rows {
            let got = target_for(&Line::new(kind, &line(l), found.as_ref()));
            if got != want {
                failures.push(format!("{name}: want {want:?}, got {got:?}"));
            }
        }
        assert!(failures.is_empty(), "\n{}", failures.join("\n"));
    }

    #[test]
    fn target_keys_match_webhook_keys() {
        use crate::model::target::object_key;
        let l = line(json!({"project": "https://github.com/users/mona/projects/5"}));
        let t = target_for(&Line::new("create_project", &l, None)).unwrap();
        assert_eq!(t.key(), object_key("mona", TargetKind::Project, "5"));
        let l = line(
            json!({"project": "https://github.com/orgs/acme/projects/4", "item_id": "PVTI_x"}),
        );
        let t = target_for(&Line::new("update_project", &l, None)).unwrap();
        assert_eq!(
            t.key(),
            object_key("acme", TargetKind::ProjectItem, "PVTI_x")
        );
        let l = line(json!({"comment_id": "DC_kwDOAbc777"}));
        let t = target_for(&Line::new("hide_comment", &l, None)).unwrap();
        assert_eq!(
            t.key(),
            object_key("o/r", TargetKind::DiscussionComment, "DC_kwDOAbc777")
        );
        let l = line(json!({"parent_issue_number": 40, "sub_issue_number": 41}));
        let t = target_for(&Line::new("link_sub_issue", &l, None)).unwrap();
        assert_eq!(t.watch_keys(), vec!["o/r#41", "o/r#40"]);
    }

    #[test]
    fn manifest_lines_get_these_targets() {
        let body = concat!(
            r#"{"type":"update_project","project":"https://github.com/orgs/acme/projects/42","url":"https://github.com/orgs/acme/projects/42","content_type":"issue","content_number":41,"fields":{"Status":"Todo"},"repo":"acme/widgets"}"#,
            "\n",
            r#"{"type":"link_sub_issue","parent_issue_number":40,"sub_issue_number":41,"repo":"acme/widgets"}"#,
        );
        let parsed = crate::ingest::manifest::parse_manifest(
            body,
            &Default::default(),
            "2026-06-01T12:00:00Z".parse().unwrap(),
        );
        assert!(parsed.rejected.is_empty());
        let keys: Vec<Vec<String>> = parsed
            .records
            .iter()
            .map(|r| r.target.as_ref().unwrap().watch_keys())
            .collect();
        assert_eq!(
            keys,
            vec![
                vec!["acme/widgets#41".to_string()],
                vec!["acme/widgets#41".to_string(), "acme/widgets#40".to_string()],
            ]
        );
    }
}
