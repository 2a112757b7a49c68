//! Typed views of the webhook payload fields we read. Everything is optional
//! and unknown fields are ignored, so new or partial payloads still parse;
//! timestamps stay raw `Value`s because GitHub sends both ISO strings and
//! unix seconds (push `repository.pushed_at`).

use chrono::{DateTime, TimeZone, Utc};
use serde::Deserialize;
use serde_json::Value;

use crate::model::sane_time::OutOfRange;

pub use crate::model::wire::{Comment, Item, Milestone, Named, Review, User};

/// The delivery's body in the shape `T` its family reads, or why not (the
/// delivery is then stored but yields nothing). Read straight from the text,
/// like `Payload`: building a `Value` of the whole body first costs several
/// times the typed parse (a 28 KB payload: ~100 µs against ~20).
pub(super) fn shaped<'a, T: Deserialize<'a>>(ctx: &'a super::Ctx) -> Result<T, String> {
    serde_json::from_str(ctx.raw.text)
        .map_err(|e| format!("unexpected `{}` payload shape: {e}", ctx.event))
}

/// Teams (`requested_team`) are users named by `slug`.
pub(crate) type Team = User;

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Payload {
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

/// `changes` of an `edited` event: previous values.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Changes {
    pub title: Option<From>,
    pub body: Option<From>,
    pub base: Option<BaseChange>,
}

/// One field's value before an edit (`changes.<field>.from`), in any
/// family's `changes`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct From {
    pub from: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct BaseChange {
    #[serde(rename = "ref")]
    pub git_ref: Option<From>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Repository {
    /// GitHub's id of the repository (it survives renames and transfers);
    /// anything but a number is no id.
    #[serde(deserialize_with = "lenient_id")]
    pub id: Option<u64>,
    pub full_name: Option<String>,
    pub name: Option<String>,
    pub owner: Option<User>,
    pub pushed_at: Option<Value>,
    pub default_branch: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Installation {
    pub id: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Commit {
    pub id: Option<String>,
    pub message: Option<String>,
    pub timestamp: Option<Value>,
    pub added: Vec<String>,
    pub modified: Vec<String>,
    pub removed: Vec<String>,
}

/// A number, or nothing: an id of another shape is no id (the delivery is
/// read without it rather than ignored).
fn lenient_id<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Ok(Value::deserialize(d)?.as_u64())
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
/// A time outside the sane range (`sane_time`) is no time: the fields every
/// delivery's facts depend on are refused before this (`check_times`); any
/// other falls back to the next candidate, or its fact is dropped.
pub(crate) fn parse_time(v: Option<&Value>) -> Option<DateTime<Utc>> {
    parse_any_time(v?).filter(|t| crate::model::sane_time::is_sane(*t))
}

/// `parse_time` without the range check.
fn parse_any_time(v: &Value) -> Option<DateTime<Utc>> {
    let secs = match v {
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

/// A time given but outside the sane range (or beyond any date at all: a
/// number chrono cannot represent), as an error naming `field`.
fn check_time(field: &str, v: Option<&Value>) -> Result<(), OutOfRange> {
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return Ok(());
    };
    let out = |value: String| OutOfRange {
        field: field.to_string(),
        value,
    };
    match parse_any_time(v) {
        Some(t) if !crate::model::sane_time::is_sane(t) => Err(out(t.to_rfc3339())),
        // A number that is no representable time at all.
        None if v.is_number() || v.as_str().is_some_and(|s| s.trim().parse::<i64>().is_ok()) => {
            Err(out(v.to_string()))
        }
        _ => Ok(()),
    }
}

impl Payload {
    /// Refuse a delivery whose typed time fields (the ones threads,
    /// comments, reviews and pushes are dated and discovered by) lie outside
    /// the sane range, naming the first such field.
    pub(crate) fn check_times(&self) -> Result<(), OutOfRange> {
        for (name, item) in [("issue", &self.issue), ("pull_request", &self.pull_request)] {
            if let Some(item) = item {
                check_time(&format!("{name}.created_at"), item.created_at.as_ref())?;
                check_time(&format!("{name}.updated_at"), item.updated_at.as_ref())?;
                check_time(&format!("{name}.closed_at"), item.closed_at.as_ref())?;
                check_time(&format!("{name}.merged_at"), item.merged_at.as_ref())?;
            }
        }
        if let Some(c) = &self.comment {
            check_time("comment.created_at", c.created_at.as_ref())?;
            check_time("comment.updated_at", c.updated_at.as_ref())?;
        }
        if let Some(r) = &self.review {
            check_time("review.submitted_at", r.submitted_at.as_ref())?;
        }
        if let Some(r) = &self.repository {
            check_time("repository.pushed_at", r.pushed_at.as_ref())?;
        }
        if let Some(c) = &self.head_commit {
            check_time("head_commit.timestamp", c.timestamp.as_ref())?;
        }
        for (i, c) in self.commits.iter().flatten().enumerate() {
            check_time(&format!("commits[{i}].timestamp"), c.timestamp.as_ref())?;
        }
        Ok(())
    }
}
