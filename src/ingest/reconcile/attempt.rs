//! One reconciliation attempt, judged: what the fetched [`ApiState`] gives
//! the worker to file (DESIGN §7, seed 001: transient vs terminal).
//!
//! - A 404/410 on the **primary** endpoint: the object is gone. One deletion
//!   observation (no actor: the API does not say who deleted it), so the
//!   evaluators' own rule applies (rejected only where a visible human
//!   deleted it, else `unknown/deleted`). Not tried again.
//! - A transient failure of the primary endpoint (rate limit, 5xx, timeout,
//!   after the retry budget): no observations, a failure (filed as
//!   `ReconcileFailed`), and another attempt later.
//! - A transient failure of a supplementary endpoint only: the observations
//!   of the rest (gh-aw Norm 2: a failed supplementary read never undoes what
//!   the primary object shows), the failure with them, and another attempt
//!   later.
//! - Any other failure of the primary endpoint (401, 403, 422): a failure,
//!   not tried again (a permission does not come back by waiting).
//! - Otherwise the observations of `observations_from_api`; a failed
//!   supplementary endpoint (a 404 on comments) is not deletion and not an
//!   error: the outcome comes from the rest.

use chrono::{DateTime, Utc};

use super::{observations_from_api, required_endpoints, ApiState};
use crate::model::{ExecutionRecord, Observation, ObservationKind as K, TargetKind};

/// What one attempt gives the worker, and whether to try again.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    pub observations: Vec<Observation>,
    /// Why the attempt failed (filed as `ReconcileFailed`).
    pub failure: Option<String>,
    /// A transient failure: worth another attempt later.
    pub retry: bool,
}

/// True for statuses worth another attempt: connection failures and
/// timeouts (0), rate limits, server errors.
pub fn is_transient_status(status: u16) -> bool {
    status == 0 || status == 429 || status >= 500
}

/// Judge the state fetched for `record` at `fetched_at`.
pub fn judge(record: &ExecutionRecord, state: &ApiState, fetched_at: DateTime<Utc>) -> Attempt {
    let primary = required_endpoints(record)
        .into_iter()
        .find(|e| e.primary)
        .map(|e| e.path);
    let primary_error = primary
        .as_ref()
        .and_then(|p| state.errors.get(p).map(|s| (p.as_str(), *s)));
    if let Some((path, 404 | 410)) = primary_error {
        return Attempt {
            observations: deletion(record, path, fetched_at).into_iter().collect(),
            failure: None,
            retry: false,
        };
    }
    if let Some((path, status)) = primary_error {
        return failed(describe(path, status), is_transient_status(status));
    }
    if let Some(path) = primary
        .as_ref()
        .filter(|p| !state.responses.contains_key(p.as_str()))
    {
        return failed(format!("{path}: not fetched"), false);
    }
    // gh-aw Norm 2: a supplementary read that failed never undoes what the
    // primary object shows; its observations are filed, and the failure with
    // them, to be read again later.
    let transient = state
        .errors
        .iter()
        .find(|(p, s)| is_transient_status(**s) && Some(p.as_str()) != primary.as_deref());
    Attempt {
        observations: observations_from_api(record, state),
        failure: transient.map(|(path, status)| describe(path, *status)),
        retry: transient.is_some(),
    }
}

fn failed(detail: String, retry: bool) -> Attempt {
    Attempt {
        observations: Vec::new(),
        failure: Some(detail),
        retry,
    }
}

fn describe(path: &str, status: u16) -> String {
    match status {
        0 => format!("{path}: no answer (timeout or connection failure) after the retry budget"),
        429 => format!("{path}: rate limited after the retry budget"),
        s if s >= 500 => format!("{path}: GitHub answered {s} until the retry budget ran out"),
        s => format!("{path}: GitHub refused with {s}"),
    }
}

/// The deletion fact for the output's own object, of the kind webhooks give
/// for it: a comment's or review comment's deletion, else the item's.
/// GitHub gives no time for it: it is placed when we found out.
fn deletion(record: &ExecutionRecord, path: &str, at: DateTime<Utc>) -> Option<Observation> {
    let target = record.target.as_ref()?;
    let event = match (target.kind, target.id) {
        (TargetKind::Comment, Some(id)) => K::CommentDeleted { comment_id: id },
        (TargetKind::ReviewComment, Some(id)) => K::ReviewCommentDeleted { comment_id: id },
        _ => K::Deleted,
    };
    Some(Observation {
        id: format!("api:{path}:gone"),
        at,
        target: target.key(),
        actor: None,
        event,
        snapshot: None,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::judge::evaluate::testkit::{at, record, RecordExt, COMMENT_ID, REPO};
    use crate::model::Target;

    fn state(responses: serde_json::Value, errors: &[(&str, u16)]) -> ApiState {
        ApiState {
            responses: serde_json::from_value(responses).unwrap(),
            errors: errors.iter().map(|(p, s)| (p.to_string(), *s)).collect(),
            ..Default::default()
        }
    }

    fn merged_pr() -> serde_json::Value {
        json!({"pulls/7": {"state": "closed", "merged": true, "merged_by": {"login": "alice", "type": "User"},
                "created_at": at(-1.0).to_rfc3339(), "merged_at": at(5.0).to_rfc3339()}})
    }

    #[test]
    fn a_missing_primary_object_is_a_deletion_without_an_actor() {
        let pr = record("create_pull_request");
        let a = judge(&pr, &state(json!({}), &[("pulls/7", 404)]), at(9.0));
        assert_eq!(a.failure, None);
        assert!(!a.retry, "a 404 is terminal");
        assert_eq!(a.observations.len(), 1);
        let gone = &a.observations[0];
        assert_eq!(gone.event, K::Deleted);
        assert_eq!(gone.actor, None);
        assert_eq!(gone.target, "o/r#7");
        assert_eq!(gone.at, at(9.0));
        // The same fact twice is one observation.
        assert_eq!(
            judge(&pr, &state(json!({}), &[("pulls/7", 410)]), at(9.0)).observations[0].id,
            gone.id
        );

        let c = record("add_comment");
        let a = judge(
            &c,
            &state(
                json!({}),
                &[(&format!("issues/comments/{COMMENT_ID}"), 404)],
            ),
            at(1.0),
        );
        assert_eq!(
            a.observations[0].event,
            K::CommentDeleted {
                comment_id: COMMENT_ID
            }
        );
    }

    #[test]
    fn a_missing_supplementary_list_is_neither_deletion_nor_error() {
        let pr = record("create_pull_request");
        let a = judge(
            &pr,
            &state(merged_pr(), &[("issues/7/comments", 404)]),
            at(9.0),
        );
        assert_eq!(a.failure, None);
        assert!(a.observations.iter().any(|o| o.event == K::Closed));
        assert!(!a.observations.iter().any(|o| o.event == K::Deleted));
    }

    #[test]
    fn transient_failures_fail_the_attempt_and_ask_for_another() {
        let pr = record("create_pull_request");
        for (path, status) in [
            ("pulls/7", 503),
            ("issues/7/timeline", 429),
            ("pulls/7/reviews", 0),
        ] {
            let a = judge(&pr, &state(merged_pr(), &[(path, status)]), at(9.0));
            assert!(a.retry, "{path} {status}");
            assert!(a.failure.unwrap().starts_with(path));
            // gh-aw Norm 2: only the primary's failure files nothing; a failed
            // supplementary read never undoes the merge the PR object shows.
            let merge_filed = a.observations.iter().any(|o| o.event == K::Closed);
            assert_eq!(merge_filed, path != "pulls/7", "{path} {status}");
        }
    }

    #[test]
    fn a_refused_primary_fails_without_retry() {
        let pr = record("create_pull_request");
        let a = judge(&pr, &state(json!({}), &[("pulls/7", 403)]), at(9.0));
        assert!(!a.retry);
        assert!(a.failure.unwrap().contains("403"));
        let a = judge(&pr, &state(json!({}), &[]), at(9.0));
        assert_eq!(a.failure.as_deref(), Some("pulls/7: not fetched"));
    }

    #[test]
    fn a_review_comment_deletion_names_the_comment() {
        let r = record("create_pull_request_review_comment").target(Target::comment(
            REPO,
            TargetKind::ReviewComment,
            31,
            Some(7),
        ));
        let a = judge(
            &r,
            &state(json!({}), &[("pulls/comments/31", 404)]),
            at(2.0),
        );
        assert_eq!(
            a.observations[0].event,
            K::ReviewCommentDeleted { comment_id: 31 }
        );
    }
}
