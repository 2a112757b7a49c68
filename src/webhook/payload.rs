//! Typed views of the webhook payload fields we read. Everything is optional
//! and unknown fields are ignored, so new or partial payloads still parse;
//! timestamps stay raw `Value`s because GitHub sends both ISO strings and
//! unix seconds (push `repository.pushed_at`).

use chrono::{DateTime, TimeZone, Utc};
use serde::Deserialize;
use serde_json::Value;

pub use crate::wire::{Item, Milestone, Named, User};

/// Teams (`requested_team`) are users named by `slug`.
pub type Team = User;

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
