//! Typed views of the webhook payload fields we read. Everything is optional
//! and unknown fields are ignored, so new or partial payloads still parse;
//! timestamps stay raw `Value`s because GitHub sends both ISO strings and
//! unix seconds (push `repository.pushed_at`).

use chrono::{DateTime, TimeZone, Utc};
use serde::Deserialize;
use serde_json::Value;

use crate::model::observation::body_hash;
use crate::model::{Actor, ItemSnapshot, TargetKind};

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Payload {
    pub action: Option<String>,
    pub issue: Option<Item>,
    pub pull_request: Option<Item>,
    pub comment: Option<Comment>,
    pub review: Option<Review>,
    pub label: Option<Named>,
    pub assignee: Option<User>,
    pub milestone: Option<Milestone>,
    pub requested_reviewer: Option<User>,
    pub requested_team: Option<Team>,
    pub changes: Option<Changes>,
    /// `synchronize` and `push`: the head before and after.
    pub before: Option<String>,
    pub after: Option<String>,
    pub repository: Option<Repository>,
    pub installation: Option<Installation>,
    pub sender: Option<User>,
    #[serde(rename = "ref")]
    pub git_ref: Option<String>,
    pub forced: Option<bool>,
    pub commits: Option<Vec<Commit>>,
    pub head_commit: Option<Commit>,
}

/// An issue or a pull request.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Item {
    pub node_id: Option<String>,
    pub number: Option<u64>,
    pub html_url: Option<String>,
    pub title: Option<String>,
    pub body: Option<String>,
    pub state: Option<String>,
    pub state_reason: Option<String>,
    pub draft: Option<bool>,
    pub merged: Option<bool>,
    pub merged_at: Option<Value>,
    pub labels: Option<Vec<Named>>,
    pub assignees: Option<Vec<User>>,
    pub milestone: Option<Milestone>,
    pub base: Option<Branch>,
    pub head: Option<Branch>,
    pub requested_reviewers: Option<Vec<User>>,
    pub requested_teams: Option<Vec<Team>>,
    pub user: Option<User>,
    pub merged_by: Option<User>,
    pub merge_commit_sha: Option<String>,
    /// The issue type: `{"name": "Bug", ...}` (a plain string is tolerated).
    #[serde(rename = "type")]
    pub issue_type: Option<Value>,
    /// On an issue: present when the issue is a pull request.
    pub pull_request: Option<IssuePr>,
    pub created_at: Option<Value>,
    pub updated_at: Option<Value>,
    pub closed_at: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct IssuePr {
    pub merged_at: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Comment {
    pub id: Option<u64>,
    pub node_id: Option<String>,
    pub html_url: Option<String>,
    pub body: Option<String>,
    pub user: Option<User>,
    pub created_at: Option<Value>,
    pub updated_at: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Review {
    pub id: Option<u64>,
    pub state: Option<String>,
    pub submitted_at: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Named {
    pub name: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct User {
    pub login: Option<String>,
    #[serde(rename = "type")]
    pub account_type: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Team {
    pub slug: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Milestone {
    pub title: Option<String>,
    pub number: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Branch {
    #[serde(rename = "ref")]
    pub git_ref: Option<String>,
    pub sha: Option<String>,
}

/// `changes` of an `edited` event: previous values.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Changes {
    pub title: Option<From>,
    pub body: Option<From>,
    pub base: Option<BaseChange>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct From {
    pub from: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct BaseChange {
    #[serde(rename = "ref")]
    pub git_ref: Option<From>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Repository {
    pub full_name: Option<String>,
    pub name: Option<String>,
    pub owner: Option<User>,
    pub pushed_at: Option<Value>,
    pub default_branch: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Installation {
    pub id: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Commit {
    pub id: Option<String>,
    pub message: Option<String>,
    pub timestamp: Option<Value>,
}

impl Repository {
    /// `owner/name`, from `full_name` or its parts.
    pub fn slug(&self) -> Option<String> {
        self.full_name
            .clone()
            .filter(|s| s.contains('/'))
            .or_else(|| {
                let owner = self.owner.as_ref()?.login.as_deref()?;
                Some(format!("{owner}/{}", self.name.as_deref()?))
            })
    }
}

impl User {
    pub fn actor(&self) -> Option<Actor> {
        let login = self.login.as_deref()?;
        Some(Actor::new(
            login,
            self.account_type.as_deref().unwrap_or(""),
        ))
    }
}

impl Item {
    /// True for a pull request, or an issue-API view of one.
    pub fn is_pr(&self, from_pull_request_field: bool) -> bool {
        from_pull_request_field || self.pull_request.is_some()
    }

    /// The state the delivery shows.
    pub fn snapshot(&self, is_pr: bool) -> ItemSnapshot {
        let merged_at = self
            .merged_at
            .as_ref()
            .or_else(|| self.pull_request.as_ref()?.merged_at.as_ref());
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
            labels: names(self.labels.iter().flatten().map(|l| &l.name)),
            assignees: names(self.assignees.iter().flatten().map(|u| &u.login)),
            milestone: self.milestone.as_ref().and_then(|m| m.title.clone()),
            milestone_number: self.milestone.as_ref().and_then(|m| m.number),
            base: self.base.as_ref().and_then(|b| b.git_ref.clone()),
            head_ref: self.head.as_ref().and_then(|b| b.git_ref.clone()),
            head_sha: self.head.as_ref().and_then(|b| b.sha.clone()),
            requested_reviewers: names(self.requested_reviewers.iter().flatten().map(|u| &u.login)),
            requested_teams: names(self.requested_teams.iter().flatten().map(|t| &t.slug)),
            author: self.user.as_ref().and_then(User::actor),
            merged_by: self.merged_by.as_ref().and_then(User::actor),
            merge_commit_sha: self.merge_commit_sha.clone(),
            issue_type: self.issue_type.as_ref().and_then(|t| match t {
                Value::String(s) => Some(s.clone()),
                other => other.get("name")?.as_str().map(str::to_string),
            }),
            answer_comment_id: None,
        }
    }
}

fn names<'a>(items: impl Iterator<Item = &'a Option<String>>) -> Vec<String> {
    items.flatten().cloned().collect()
}

/// A GitHub timestamp: RFC 3339 string, or unix seconds as number or string.
pub fn parse_time(v: Option<&Value>) -> Option<DateTime<Utc>> {
    let secs = match v? {
        Value::String(s) => {
            let s = s.trim();
            if let Ok(t) = DateTime::parse_from_rfc3339(s) {
                return Some(t.with_timezone(&Utc));
            }
            s.parse::<i64>().ok()?
        }
        Value::Number(n) => n.as_i64()?,
        _ => return None,
    };
    Utc.timestamp_opt(secs, 0).single()
}
