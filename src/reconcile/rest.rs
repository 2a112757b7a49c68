//! Typed views of the REST and GraphQL response fields the mapping reads.
//! Everything is optional, so partial or synthetic responses (conformance
//! fixtures) still parse; times stay raw `Value`s and go through `time`.

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::Value;

use crate::markers::{parse_marker, MarkerKind};
use crate::model::observation::body_hash;
use crate::model::{Actor, ItemSnapshot, TargetKind};

/// A GitHub time. Only RFC 3339 strings are times here (the REST and GraphQL
/// APIs send nothing else); anything else is no time, and the fact is skipped.
pub fn time(v: Option<&Value>) -> Option<DateTime<Utc>> {
    let s = v?.as_str()?;
    DateTime::parse_from_rfc3339(s.trim())
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// Read a value into a view; a value of the wrong shape reads as empty.
pub fn view<T: for<'de> Deserialize<'de> + Default>(v: &Value) -> T {
    serde_json::from_value(v.clone()).unwrap_or_default()
}

/// The items of a list response (`[...]`, or GraphQL's `{nodes: [...]}`).
pub fn items(v: &Value) -> &[Value] {
    match v {
        Value::Array(a) => a,
        Value::Object(o) => o
            .get("nodes")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice),
        _ => &[],
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct User {
    pub login: Option<String>,
    #[serde(rename = "type")]
    pub account_type: Option<String>,
    /// Teams (`requested_teams`) are named by slug.
    pub slug: Option<String>,
}

/// A present user object is an actor; `{}` (no login) is an unknown actor,
/// and a missing or null user is no actor at all (the system).
pub fn actor(v: Option<&Value>) -> Option<Actor> {
    let v = v.filter(|v| v.is_object())?;
    let u: User = view(v);
    Some(Actor::new(
        u.login.as_deref().unwrap_or(""),
        u.account_type.as_deref().unwrap_or(""),
    ))
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Named {
    pub name: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Milestone {
    pub title: Option<String>,
    pub number: Option<u64>,
}

impl Milestone {
    /// The title, or the number (as a string) when only the number is known.
    pub fn label(&self) -> Option<String> {
        self.title
            .clone()
            .or_else(|| self.number.map(|n| n.to_string()))
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Branch {
    #[serde(rename = "ref")]
    pub git_ref: Option<String>,
    pub sha: Option<String>,
}

/// `GET issues/N` or `GET pulls/N`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Item {
    pub number: Option<u64>,
    pub node_id: Option<String>,
    pub title: Option<String>,
    pub body: Option<String>,
    pub state: Option<String>,
    pub state_reason: Option<String>,
    pub draft: Option<bool>,
    pub merged: Option<bool>,
    pub merged_at: Option<Value>,
    pub labels: Option<Vec<Value>>,
    pub assignees: Option<Vec<User>>,
    pub milestone: Option<Milestone>,
    pub base: Option<Branch>,
    pub head: Option<Branch>,
    pub requested_reviewers: Option<Vec<User>>,
    pub requested_teams: Option<Vec<User>>,
    pub merge_commit_sha: Option<String>,
    #[serde(rename = "type")]
    pub issue_type: Option<Value>,
    /// On an issue: present when the issue is a pull request.
    pub pull_request: Option<Value>,
    pub created_at: Option<Value>,
    pub updated_at: Option<Value>,
    pub closed_at: Option<Value>,
}

impl Item {
    pub fn snapshot(&self, raw: &Value, is_pr: bool) -> ItemSnapshot {
        let merged_at = self
            .merged_at
            .as_ref()
            .or_else(|| self.pull_request.as_ref().and_then(|p| p.get("merged_at")));
        ItemSnapshot {
            kind: Some(if is_pr {
                TargetKind::PullRequest
            } else {
                TargetKind::Issue
            }),
            state: self.state.clone().unwrap_or_default(),
            state_reason: self.state_reason.clone(),
            merged: self
                .merged
                .unwrap_or_else(|| merged_at.is_some_and(|v| !v.is_null())),
            draft: self.draft.unwrap_or(false),
            title: self.title.clone().unwrap_or_default(),
            body_hash: body_hash(self.body.as_deref().unwrap_or("")),
            labels: self.labels.as_deref().map(label_names).unwrap_or_default(),
            assignees: logins(self.assignees.as_deref()),
            milestone: self.milestone.as_ref().and_then(Milestone::label),
            milestone_number: self.milestone.as_ref().and_then(|m| m.number),
            base: self.base.as_ref().and_then(|b| b.git_ref.clone()),
            head_ref: self.head.as_ref().and_then(|b| b.git_ref.clone()),
            head_sha: self.head.as_ref().and_then(|b| b.sha.clone()),
            requested_reviewers: logins(self.requested_reviewers.as_deref()),
            requested_teams: slugs(self.requested_teams.as_deref()),
            author: actor(raw.get("user")),
            merged_by: actor(raw.get("merged_by")),
            merge_commit_sha: self.merge_commit_sha.clone(),
            issue_type: self.issue_type.as_ref().and_then(|t| match t {
                Value::String(s) => Some(s.clone()),
                other => other.get("name")?.as_str().map(str::to_string),
            }),
            answer_comment_id: None,
        }
    }
}

/// Label names from `[{"name": ..}]` or `["..."]`.
pub fn label_names(items: &[Value]) -> Vec<String> {
    items
        .iter()
        .filter_map(|v| match v {
            Value::String(s) => Some(s.clone()),
            other => other.get("name")?.as_str().map(str::to_string),
        })
        .collect()
}

pub fn logins(users: Option<&[User]>) -> Vec<String> {
    users
        .unwrap_or_default()
        .iter()
        .filter_map(|u| u.login.clone())
        .collect()
}

pub fn slugs(teams: Option<&[User]>) -> Vec<String> {
    teams
        .unwrap_or_default()
        .iter()
        .filter_map(|t| t.slug.clone().or_else(|| t.login.clone()))
        .collect()
}

/// An issue comment (`issues/N/comments`, `issues/comments/ID`, timeline `commented`).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Comment {
    pub id: Option<u64>,
    pub body: Option<String>,
    pub created_at: Option<Value>,
}

impl Comment {
    /// (agent-written, gh-aw expiry notice), from the body's markers.
    pub fn markers(&self) -> (bool, bool) {
        let kind = self.body.as_deref().and_then(parse_marker).map(|m| m.kind);
        (
            kind == Some(MarkerKind::Output),
            kind == Some(MarkerKind::ExpiryClose),
        )
    }
}

/// A review (`pulls/N/reviews`, timeline `reviewed`).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Review {
    pub id: Option<u64>,
    pub state: Option<String>,
    pub submitted_at: Option<Value>,
}

/// A PR commit (`pulls/N/commits`).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Commit {
    pub sha: Option<String>,
    pub commit: Option<GitCommit>,
    pub parents: Option<Vec<Branch>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct GitCommit {
    pub message: Option<String>,
    pub author: Option<GitPerson>,
    pub committer: Option<GitPerson>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct GitPerson {
    pub date: Option<Value>,
}

/// An entry of `issues/N/timeline` or `issues/N/events`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Event {
    pub id: Option<u64>,
    pub event: Option<String>,
    pub created_at: Option<Value>,
    pub label: Option<Named>,
    pub assignee: Option<User>,
    pub milestone: Option<Milestone>,
    pub rename: Option<Rename>,
    pub requested_reviewer: Option<User>,
    pub requested_team: Option<User>,
    pub dismissed_review: Option<DismissedReview>,
    pub issue_type: Option<Named>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Rename {
    pub from: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct DismissedReview {
    pub review_id: Option<u64>,
}

/// `actions/runs/ID`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Run {
    pub id: Option<u64>,
    pub path: Option<String>,
    pub head_branch: Option<String>,
    pub head_sha: Option<String>,
    pub event: Option<String>,
    pub status: Option<String>,
    pub conclusion: Option<String>,
    pub run_attempt: Option<u64>,
    pub created_at: Option<Value>,
    pub updated_at: Option<Value>,
}
