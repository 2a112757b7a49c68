//! GitHub's issue, pull-request, comment and review objects as both webhooks
//! and the REST API send them, and the `ItemSnapshot` taken from one. Everything is optional
//! and unknown fields are ignored, so partial payloads (and conformance
//! fixtures) still parse.

use serde::Deserialize;
use serde_json::Value;

use crate::markers::comment_flags;
use crate::observation::body_hash;
use crate::{Actor, ItemSnapshot, TargetKind};

/// A user, bot or team (teams are named by `slug`).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct User {
    pub login: Option<String>,
    #[serde(rename = "type")]
    pub account_type: Option<String>,
    pub slug: Option<String>,
}

impl User {
    /// The actor, when the user has a login.
    pub fn actor(&self) -> Option<Actor> {
        let login = self.login.as_deref()?;
        Some(Actor::new(
            login,
            self.account_type.as_deref().unwrap_or(""),
        ))
    }

    /// The actor of a user object that is present: one without a login is
    /// an unknown actor (`ghost`-like), not the system.
    pub(crate) fn present_actor(&self) -> Actor {
        Actor::new(
            self.login.as_deref().unwrap_or(""),
            self.account_type.as_deref().unwrap_or(""),
        )
    }
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

/// An issue comment, as a webhook (`comment`) and the REST API
/// (`issues/N/comments`, `issues/comments/ID`, timeline `commented`) send it.
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

impl Comment {
    /// (agent-written, gh-aw expiry notice), from the body's markers.
    pub fn markers(&self) -> (bool, bool) {
        comment_flags(self.body.as_deref())
    }
}

/// A pull-request review (webhook `review`, `pulls/N/reviews`, timeline
/// `reviewed`).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Review {
    pub id: Option<u64>,
    pub state: Option<String>,
    pub submitted_at: Option<Value>,
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
    /// `[{"name": ..}]`, or plain names.
    pub labels: Option<Vec<Value>>,
    /// `None`: the field was absent; `Some(None)`: it was `null`.
    #[serde(deserialize_with = "present")]
    pub assignees: Option<Option<Vec<User>>>,
    /// `None`: the field was absent; `Some(None)`: no milestone (`null`).
    #[serde(deserialize_with = "present")]
    pub milestone: Option<Option<Milestone>>,
    pub base: Option<Branch>,
    pub head: Option<Branch>,
    pub requested_reviewers: Option<Vec<User>>,
    pub requested_teams: Option<Vec<User>>,
    pub user: Option<User>,
    pub merged_by: Option<User>,
    pub merge_commit_sha: Option<String>,
    /// The issue type: `{"name": "Bug", ...}` (a plain string is tolerated).
    #[serde(rename = "type")]
    pub issue_type: Option<Value>,
    /// On an issue: present when the issue is a pull request.
    pub pull_request: Option<Value>,
    pub created_at: Option<Value>,
    pub updated_at: Option<Value>,
    pub closed_at: Option<Value>,
}

/// A field that may be absent, `null`, or a value: absent is `None`,
/// `null` is `Some(None)` (general rule 2: a missing field is not "none").
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

impl Item {
    /// The milestone, when the item has one.
    pub fn milestone(&self) -> Option<&Milestone> {
        self.milestone.as_ref().and_then(Option::as_ref)
    }

    /// True for a pull request, or an issue-API view of one.
    pub fn is_pr(&self, from_pull_request_field: bool) -> bool {
        from_pull_request_field || self.pull_request.is_some()
    }

    /// The state the object shows.
    pub fn snapshot(&self, is_pr: bool) -> ItemSnapshot {
        let merged_at = self
            .merged_at
            .as_ref()
            .or_else(|| self.pull_request.as_ref()?.get("merged_at"));
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
            assignees: logins(self.assignees.as_ref().and_then(|a| a.as_deref())),
            assignees_absent: self.assignees.is_none(),
            milestone: self.milestone().and_then(Milestone::label),
            milestone_number: self.milestone().and_then(|m| m.number),
            milestone_absent: self.milestone.is_none(),
            base: self.base.as_ref().and_then(|b| b.git_ref.clone()),
            head_ref: self.head.as_ref().and_then(|b| b.git_ref.clone()),
            head_sha: self.head.as_ref().and_then(|b| b.sha.clone()),
            requested_reviewers: logins(self.requested_reviewers.as_deref()),
            requested_teams: slugs(self.requested_teams.as_deref()),
            reviewers_known: self.requested_reviewers.is_some(),
            author: self.user.as_ref().map(User::present_actor),
            merged_by: self.merged_by.as_ref().map(User::present_actor),
            merge_commit_sha: self.merge_commit_sha.clone(),
            issue_type: self.issue_type.as_ref().and_then(|t| match t {
                Value::String(s) => Some(s.clone()),
                other => other.get("name")?.as_str().map(str::to_string),
            }),
            answer_comment_id: None,
        }
    }
}

pub use crate::execution::{github_id, label_names, trimmed_text};

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
