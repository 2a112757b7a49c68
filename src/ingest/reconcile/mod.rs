//! Reconciling from the GitHub API: when webhooks were missed (the App was
//! installed late, deliveries were lost), the fetched REST/GraphQL state of a
//! target is turned into observations of the same kinds webhooks give, and
//! the same pure evaluators judge them.
//!
//! Pure: the fetcher fills an [`ApiState`] (GET the paths of
//! [`required_endpoints`], then of [`follow_up_endpoints`]); nothing here does
//! I/O or reads the clock.
//!
//! # Keys of `ApiState`
//! REST responses are keyed by path relative to `repos/{owner}/{repo}/` of the
//! target's repository, exactly as requested (`pulls/7`, `issues/7/timeline`,
//! `compare/A...B`). GraphQL results, which have no REST path, use:
//! - `graphql/review_threads/<pr number>`: `PullRequest.reviewThreads.nodes`
//!   (a list, or `{nodes: [...]}`) of `{id, isResolved, resolvedBy{login},
//!   path, comments{nodes: [{fullDatabaseId, author{login}, createdAt,
//!   replyTo{fullDatabaseId}, pullRequestReview{fullDatabaseId}}]}}`
//!   (`fullDatabaseId` is a BigInt, sent as a string; `databaseId`, which
//!   GitHub deprecated because it cannot hold 64-bit ids, is still read).
//! - `graphql/minimized/<comment node id>`: `node(id)` on a comment:
//!   `{isMinimized, minimizedReason, updatedAt}`.
//! - `graphql/discussion/<number>`: `Repository.discussion(number)`: `{id,
//!   title, body, closed, closedAt, stateReason, createdAt, updatedAt,
//!   author{login}, answer{databaseId}, answerChosenAt, answerChosenBy{login},
//!   labels{nodes[{name}]}, comments{nodes[{databaseId, author{login},
//!   createdAt, body}]}}`.
//!   It may carry `reactions{nodes[{databaseId, content, createdAt,
//!   user{login}}]}`: reactions on the discussion.
//! - `graphql/discussion_reactions/<number>`: the discussion's
//!   `reactions.nodes`, read alone (as `github::signals` does).
//! - `graphql/base_changes/<pr number>`: the PR's `timelineItems` of
//!   `BASE_REF_CHANGED_EVENT`: `{nodes: [{createdAt, previousRefName,
//!   currentRefName, actor{login}}]}` (rebuilds the base before each change).
//! - `graphql/project/<number>`: `repositoryOwner(login).projectV2(number)`
//!   of the target's owner (a project's target names no repository):
//!   `{id, number, title, closed, closedAt, createdAt, updatedAt,
//!   creator{login}}`. GitHub names no closer of a project.
//! - `graphql/closed_by/<issue number>`: the latest `ClosedEvent`:
//!   `{createdAt, closer{__typename, number, merged}}`.
//!
//! Signals no webhook carries (`github::signals` fetches them at the
//! checkpoints; conformance cases can carry them as responses):
//! - `issues/comments/<id>/reactions`, `issues/<n>/reactions`: lists of
//!   `{id, user, content, created_at}` (REST), GraphQL names accepted.
//! - `orgs/<org>/teams/<slug>/memberships/<login>` (the one key not relative
//!   to the repository): `{state: active|pending}`, optionally `_fetched_at`.
//!
//! A failed GET is recorded in `errors` with its HTTP status (0 for a timeout
//! or connection failure). A `301 Moved Permanently` is followed to its
//! `Location` (GitHub's rule: follow 301 permanently): the answer found
//! there is kept under the path asked, and `moved` names where it was.

mod attempt;
mod endpoints;
mod map;
mod past;
mod rest;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::{ExecutionRecord, Observation};

pub use attempt::{is_transient_status, judge, Attempt};
pub(crate) use endpoints::{follow_up_endpoints, required_endpoints};
pub use map::SILENT_TIMELINE;

/// What the fetcher got: responses and failures, by path (see the module doc).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ApiState {
    #[serde(default)]
    pub responses: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    pub errors: BTreeMap<String, u16>,
    /// Paths GitHub answered `301 Moved Permanently` (a transferred issue,
    /// a renamed repository): where `Location` sent the fetch, whose answer
    /// is kept under the path asked (the same object, elsewhere now).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub moved: BTreeMap<String, String>,
    /// When the state was read (the fetch's end). What the API answers
    /// without a time of its own, a reaction rollup's counts, is proven
    /// only from here on (`map`, `rollup`). `None`: a state built by hand,
    /// judged as of its evaluation time (`assess_from_api`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// One path to GET. The primary one is the output's own object: its 404/410
/// means the object is gone; a supplementary 404 does not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Endpoint {
    pub path: String,
    pub primary: bool,
}

/// The observations the fetched state shows, sorted by (`at`, `id`).
///
/// Ids are deterministic (`api:issue_comment:<id>`, `api:review:<id>`,
/// `api:commit:<sha>`, `api:event:<id>`, else `api:<path>:<index>`) and targets
/// are the keys webhooks use, so API- and webhook-derived observations of one
/// fact sit side by side harmlessly. Facts without a valid time are skipped,
/// except an object's current state, which must be placed somewhere: at its
/// close/update time, else at the execution time (see `map`).
pub(crate) fn observations_from_api(
    record: &ExecutionRecord,
    state: &ApiState,
) -> Vec<Observation> {
    map::Mapper::new(record, state).run()
}

/// The undated non-bot activity in the fetched lists, as `path[index]`:
/// comments, reviews and commits, listed alone or as the timeline's
/// `commented` and `reviewed` entries (where the fetch reads them).
pub(crate) fn undated_activity(state: &ApiState) -> Vec<String> {
    let mut out = Vec::new();
    for (path, v) in &state.responses {
        for (i, item) in rest::items(v).iter().enumerate() {
            let Some((time_at, user_at, pending)) = activity_fields(path, item) else {
                continue;
            };
            let state = item.get("state").and_then(serde_json::Value::as_str);
            let dated = time_at
                .iter()
                .any(|p| rest::time(item.pointer(p)).is_some());
            let bot = rest::actor(item.pointer(user_at)).is_some_and(|a| a.is_bot());
            if (state == Some(pending) || !dated) && !bot {
                out.push(format!("{path}[{i}]"));
            }
        }
    }
    out
}

/// Where an activity item of list `path` keeps its times and its author,
/// and the state a review still being written has there (REST's lists say
/// `PENDING`, the timeline lower-case); `None` for any other item.
fn activity_fields(
    path: &str,
    item: &serde_json::Value,
) -> Option<(&'static [&'static str], &'static str, &'static str)> {
    const COMMITTED: &[&str] = &["/commit/committer/date", "/commit/author/date"];
    if path.ends_with("/comments") {
        Some((&["/created_at"], "/user", "PENDING"))
    } else if path.ends_with("/reviews") {
        Some((&["/submitted_at"], "/user", "PENDING"))
    } else if path.ends_with("/commits") {
        Some((COMMITTED, "/author", "PENDING"))
    } else if path.ends_with("/timeline") {
        match item.get("event").and_then(serde_json::Value::as_str)? {
            "commented" => Some((&["/created_at"], "/user", "pending")),
            "reviewed" => Some((&["/submitted_at"], "/user", "pending")),
            _ => None,
        }
    } else {
        None
    }
}

/// A 404 that is an answer, not a failure: the team memberships endpoint
/// says 404 for "not a member" and for "team not visible to the App" alike,
/// so it leaves the membership unknown (nothing is filed) and the output is
/// judged on the rest.
pub(crate) fn is_answer_404(path: &str, status: u16) -> bool {
    status == 404 && path.starts_with("orgs/") && path.contains("/memberships/")
}
