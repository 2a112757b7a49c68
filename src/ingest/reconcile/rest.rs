//! Typed views of the REST and GraphQL response fields the mapping reads.
//! Everything is optional, so partial or synthetic responses (conformance
//! fixtures) still parse; times stay raw `Value`s and go through `time`.

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::Value;

pub use crate::model::wire::{
    label_names, logins, slugs, Branch, Comment, Item, Milestone, Named, Review, User,
};
use crate::model::Actor;

/// The string at JSON `pointer` in `v`, if it is one.
pub(crate) fn str_at<'v>(v: &'v Value, pointer: &str) -> Option<&'v str> {
    v.pointer(pointer).and_then(Value::as_str)
}

/// A GitHub time. Only RFC 3339 strings are times here (the REST and GraphQL
/// APIs send nothing else); anything else, or a time outside the sane range
/// (`sane_time`), is no time, and the fact is skipped.
pub fn time(v: Option<&Value>) -> Option<DateTime<Utc>> {
    let s = v?.as_str()?;
    DateTime::parse_from_rfc3339(s.trim())
        .ok()
        .map(|t| t.with_timezone(&Utc))
        .filter(|t| crate::model::sane_time::is_sane(*t))
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
pub(crate) struct GitCommit {
    pub message: Option<String>,
    pub author: Option<GitPerson>,
    pub committer: Option<GitPerson>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct GitPerson {
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
    /// The type before (`issue_type_changed`, `issue_type_removed`).
    pub prev_issue_type: Option<Named>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Rename {
    pub from: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct DismissedReview {
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
