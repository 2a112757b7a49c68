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
//!   path, comments{nodes: [{databaseId, author{login}, createdAt,
//!   replyTo{databaseId}}]}}`.
//! - `graphql/minimized/<comment node id>`: `node(id)` on a comment:
//!   `{isMinimized, minimizedReason, updatedAt}`.
//! - `graphql/discussion/<number>`: `Repository.discussion(number)`: `{id,
//!   title, body, closed, closedAt, stateReason, createdAt, updatedAt,
//!   author{login}, answer{databaseId}, answerChosenAt, answerChosenBy{login},
//!   labels{nodes[{name}]}, comments{nodes[{databaseId, author{login},
//!   createdAt, body}]}}`.
//!
//! A failed GET is recorded in `errors` with its HTTP status (0 for a timeout
//! or connection failure).

mod attempt;
mod endpoints;
mod map;
mod rest;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::model::{
    Evaluation, EvidenceStrength as S, ExecutionRecord, Observation, OutcomeStatus as O,
};

pub use attempt::{is_transient_status, judge, Attempt};
pub use endpoints::{follow_up_endpoints, required_endpoints};

/// What the fetcher got: responses and failures, by path (see the module doc).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ApiState {
    #[serde(default)]
    pub responses: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    pub errors: BTreeMap<String, u16>,
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
pub fn observations_from_api(record: &ExecutionRecord, state: &ApiState) -> Vec<Observation> {
    map::Mapper::new(record, state).run()
}

/// Judge an output from fetched API state as of `as_of`. API failures come
/// first (DESIGN §7, gh-aw's Oct 2026 rules), then the record's own gaps, then
/// the type's evaluator over `observations_from_api`.
pub fn assess_from_api(
    record: &ExecutionRecord,
    state: &ApiState,
    as_of: DateTime<Utc>,
) -> Evaluation {
    let required = required_endpoints(record);
    let primary = required.iter().find(|e| e.primary).map(|e| e.path.as_str());
    if let Some(e) = failure(state, primary) {
        return e;
    }
    let system = matches!(
        record.output_type.as_str(),
        "noop" | "missing_tool" | "missing_data" | "report_incomplete"
    );
    if record.target.is_none() && required.is_empty() && !system {
        return Evaluation::new(O::Unknown, S::None, "missing_reference")
            .unresolved()
            .note("The execution record names no target object, so there is nothing to fetch.");
    }
    if let Some(p) = primary.filter(|p| !state.responses.contains_key(*p)) {
        return evaluation_error(p, None)
            .note("The output's own object was not fetched, so it cannot be judged.");
    }
    let observations = observations_from_api(record, state);
    crate::evaluate::evaluate(record, &observations, as_of)
}

/// A 404/410 on the primary object is deletion; any other failure (5xx,
/// rate limit, timeout, or a 404 on a supplementary list) is an evaluation
/// error, never a verdict.
fn failure(state: &ApiState, primary: Option<&str>) -> Option<Evaluation> {
    if let Some((path, status)) = primary
        .and_then(|p| state.errors.get_key_value(p))
        .filter(|(_, s)| matches!(**s, 404 | 410))
    {
        return Some(
            Evaluation::new(O::Rejected, S::Strong, "deleted")
                .unresolved()
                .detail("endpoint", path.as_str())
                .detail("http_status", *status)
                .note("The output's own object is gone (the API answers 404/410 for it)."),
        );
    }
    let (path, status) = state
        .errors
        .iter()
        .find(|(_, s)| !(200..300).contains(*s))?;
    Some(evaluation_error(path, Some(*status)).note(if primary == Some(path.as_str()) {
        "Fetching the output's own object failed; the outcome cannot be judged until it succeeds."
    } else {
        "Fetching supplementary state failed (a 404 there is not deletion); the outcome cannot be judged until it succeeds."
    }))
}

/// gh-aw's `error`: our `unknown/weak/evaluation_error`.
fn evaluation_error(path: &str, status: Option<u16>) -> Evaluation {
    Evaluation::new(O::Unknown, S::Weak, "evaluation_error")
        .unresolved()
        .detail("endpoint", path)
        .detail("http_status", status)
}
