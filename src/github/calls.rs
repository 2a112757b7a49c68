//! Counts of GitHub API requests, per installation and per endpoint label,
//! for `/status` and `/metrics`. Installation ids only: no repository names.
//! Also the App's health as the calls saw it (`ApiHealth`): whether GitHub
//! accepted the App's credentials, the last failure and when, failures by
//! kind, and check runs that could not be published.

use std::collections::BTreeMap;
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::error::{FailureClass, GitHubError};

/// One GitHub operation the App calls: the label its calls are counted
/// under, the method, the path and the query parameters it sends, as
/// GitHub's OpenAPI description writes them.
#[derive(Debug, Clone, Copy)]
pub struct Operation {
    pub label: &'static str,
    pub method: &'static str,
    pub path: &'static str,
    pub query: &'static [&'static str],
}

const fn op(
    label: &'static str,
    method: &'static str,
    path: &'static str,
    query: &'static [&'static str],
) -> Operation {
    Operation {
        label,
        method,
        path,
        query,
    }
}

/// Every GitHub operation the App calls (`tests/it/github_contract.rs`
/// checks each against GitHub's OpenAPI description: method, path, query
/// parameters; `graphql.query` against GitHub's GraphQL schema). A label may
/// stand for several operations of one kind. A call under a label that is
/// not here fails in debug builds (`GitHubClient`), so a new call cannot
/// skip the check. The log and `/status` name a failed request by its
/// operation: method and path template, never a token, no repository names.
#[rustfmt::skip]
pub const OPERATIONS: &[Operation] = &[
    op("app.get", "GET", "/app", &[]),
    op("app.installation_token", "POST", "/app/installations/{installation_id}/access_tokens", &[]),
    op("app.hook_deliveries", "GET", "/app/hook/deliveries", &["per_page", "cursor"]),
    op("app.hook_delivery_redeliver", "POST", "/app/hook/deliveries/{delivery_id}/attempts", &[]),
    op("rate_limit.get", "GET", "/rate_limit", &[]),
    op("graphql.query", "POST", "/graphql", &[]),
    op("actions.list_runs", "GET", "/repos/{owner}/{repo}/actions/runs", &["created", "status", "event", "per_page", "page"]),
    op("actions.list_workflows", "GET", "/repos/{owner}/{repo}/actions/workflows", &["per_page", "page"]),
    op("actions.list_workflow_runs", "GET", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs", &["created", "status", "per_page", "page"]),
    op("actions.get_run", "GET", "/repos/{owner}/{repo}/actions/runs/{run_id}", &[]),
    op("actions.list_run_artifacts", "GET", "/repos/{owner}/{repo}/actions/runs/{run_id}/artifacts", &["per_page", "page"]),
    op("actions.download_artifact", "GET", "/repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}", &[]),
    op("checks.create", "POST", "/repos/{owner}/{repo}/check-runs", &[]),
    op("checks.update", "PATCH", "/repos/{owner}/{repo}/check-runs/{check_run_id}", &[]),
    op("checks.get", "GET", "/repos/{owner}/{repo}/check-runs/{check_run_id}", &[]),
    op("checks.list_for_ref", "GET", "/repos/{owner}/{repo}/commits/{ref}/check-runs", &["check_name", "per_page"]),
    op("code_scanning.get_alert", "GET", "/repos/{owner}/{repo}/code-scanning/alerts/{alert_number}", &[]),
    op("issues.get", "GET", "/repos/{owner}/{repo}/issues/{issue_number}", &[]),
    op("issues.get_comment", "GET", "/repos/{owner}/{repo}/issues/comments/{comment_id}", &[]),
    op("issues.list_comments", "GET", "/repos/{owner}/{repo}/issues/{issue_number}/comments", &["per_page"]),
    op("issues.list_events", "GET", "/repos/{owner}/{repo}/issues/{issue_number}/events", &["per_page"]),
    op("issues.list_labels", "GET", "/repos/{owner}/{repo}/issues/{issue_number}/labels", &["per_page"]),
    op("issues.list_sub_issues", "GET", "/repos/{owner}/{repo}/issues/{issue_number}/sub_issues", &["per_page"]),
    op("issues.get_parent", "GET", "/repos/{owner}/{repo}/issues/{issue_number}/parent", &[]),
    op("issues.list_timeline", "GET", "/repos/{owner}/{repo}/issues/{issue_number}/timeline", &["per_page"]),
    op("issues.get_milestone", "GET", "/repos/{owner}/{repo}/milestones/{milestone_number}", &[]),
    op("pulls.get", "GET", "/repos/{owner}/{repo}/pulls/{pull_number}", &[]),
    op("pulls.get_review_comment", "GET", "/repos/{owner}/{repo}/pulls/comments/{comment_id}", &[]),
    op("pulls.list_commits", "GET", "/repos/{owner}/{repo}/pulls/{pull_number}/commits", &["per_page"]),
    op("pulls.list_review_comments", "GET", "/repos/{owner}/{repo}/pulls/{pull_number}/comments", &["per_page"]),
    op("pulls.list_reviews", "GET", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews", &["per_page"]),
    op("pulls.requested_reviewers", "GET", "/repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers", &[]),
    op("reactions.list", "GET", "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions", &["per_page"]),
    op("reactions.list", "GET", "/repos/{owner}/{repo}/issues/{issue_number}/reactions", &["per_page"]),
    op("releases.get_by_tag", "GET", "/repos/{owner}/{repo}/releases/tags/{tag}", &[]),
    op("repos.check_collaborator", "GET", "/repos/{owner}/{repo}/collaborators/{username}", &[]),
    op("repos.compare", "GET", "/repos/{owner}/{repo}/compare/{basehead}", &[]),
    op("repos.contents", "GET", "/repos/{owner}/{repo}/contents/{path}", &["ref"]),
    op("teams.get_membership", "GET", "/orgs/{org}/teams/{team_slug}/memberships/{username}", &[]),
];

/// Is `label` an operation of `OPERATIONS` (the token mint included)?
pub(crate) fn is_listed(label: &str) -> bool {
    OPERATIONS.iter().any(|o| o.label == label)
}

/// The request a label stands for, as the log and `/status` show it
/// ("GET /app"); an unlisted label is shown as itself.
pub(crate) fn request_of(label: &str) -> String {
    let ops: Vec<String> = OPERATIONS
        .iter()
        .filter(|o| o.label == label)
        .map(|o| format!("{} {}", o.method, o.path))
        .collect();
    match ops.as_slice() {
        [] => format!("GitHub API call {label}"),
        _ => ops.join(" or "),
    }
}

/// The installation label of App-level (JWT) calls.
pub(crate) const APP: &str = "app";

/// Endpoints whose success proves the App's id and key (they are signed
/// with the App JWT): `GET /app` and minting an installation token.
const CREDENTIAL_ENDPOINTS: [&str; 2] = ["app.get", "app.installation_token"];

/// Consecutive failed calls after which `/status` reports the App failing.
pub(crate) const FAILING_AFTER: u64 = 3;

#[derive(Debug, Default)]
pub struct ApiCalls {
    counts: Mutex<BTreeMap<(String, &'static str), u64>>,
    health: Mutex<ApiHealth>,
    /// The content-creating calls' pacing (`pacing`), shown on `/status`.
    pub pacing: super::pacing::Pacer,
}

/// One failed call, as `/status` shows it (no repository names: the
/// message is GitHub's, about an endpoint label and an installation id).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ApiFailure {
    pub endpoint: &'static str,
    /// The operation: method and path template (`OPERATIONS`).
    pub request: String,
    pub installation: String,
    pub kind: &'static str,
    /// What it means for the operator, and what to do.
    pub class: FailureClass,
    pub what_to_do: &'static str,
    pub message: String,
    pub at: DateTime<Utc>,
}

/// Did GitHub accept the App's credentials, and when did it last say so.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct CredentialCheck {
    pub verified: bool,
    pub at: DateTime<Utc>,
    /// Why they were refused, when they were.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// The App's health as seen by its calls.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct ApiHealth {
    /// `None` until a call signed with the App JWT answered.
    pub credentials: Option<CredentialCheck>,
    pub last_failure: Option<ApiFailure>,
    pub last_success_at: Option<DateTime<Utc>>,
    /// Calls that failed since the last one that worked.
    pub consecutive_failures: u64,
    pub failures_by_kind: BTreeMap<&'static str, u64>,
    /// Check-run publications that failed (after the client's retries).
    pub check_run_failures: u64,
    pub last_check_run_failure: Option<(String, DateTime<Utc>)>,
    /// The class of failure last written to the log: the next failure of
    /// the same class is not written again until a call succeeds.
    #[serde(skip)]
    logged: Option<FailureClass>,
}

impl ApiHealth {
    /// Is the App failing: credentials refused, or every recent call failed?
    pub(crate) fn failing(&self) -> bool {
        self.credentials.as_ref().is_some_and(|c| !c.verified)
            || self.consecutive_failures >= FAILING_AFTER
    }
}

impl ApiCalls {
    /// Count one request (every attempt is a request GitHub sees).
    pub(crate) fn record(&self, installation: Option<u64>, endpoint: &'static str) {
        let who = installation.map_or_else(|| APP.to_string(), |i| i.to_string());
        *self
            .counts
            .lock()
            .expect("api call counts lock")
            .entry((who, endpoint))
            .or_default() += 1;
    }

    pub fn total(&self) -> u64 {
        self.counts
            .lock()
            .expect("api call counts lock")
            .values()
            .sum()
    }

    /// Requests per installation id (`"app"` for App-level calls).
    pub fn by_installation(&self) -> BTreeMap<String, u64> {
        let mut out = BTreeMap::new();
        for ((who, _), n) in self.counts.lock().expect("api call counts lock").iter() {
            *out.entry(who.clone()).or_default() += n;
        }
        out
    }

    /// Requests per endpoint label.
    pub(crate) fn by_endpoint(&self) -> BTreeMap<&'static str, u64> {
        let mut out = BTreeMap::new();
        for ((_, endpoint), n) in self.counts.lock().expect("api call counts lock").iter() {
            *out.entry(*endpoint).or_default() += n;
        }
        out
    }

    /// A call (after its retries) succeeded.
    pub(crate) fn succeeded(&self, endpoint: &'static str) {
        let now = Utc::now();
        let mut h = self.health.lock().expect("api health lock");
        h.last_success_at = Some(now);
        h.consecutive_failures = 0;
        if let Some(class) = h.logged.take() {
            tracing::info!(
                endpoint,
                "GitHub answers again ({} before)",
                class.summary().to_lowercase()
            );
        }
        if CREDENTIAL_ENDPOINTS.contains(&endpoint) {
            h.credentials = Some(CredentialCheck {
                verified: true,
                at: now,
                detail: None,
            });
        }
    }

    /// A call (after its retries) failed. A 404/410 is an answer about an
    /// object, not a failure of the App, except on the App's own endpoints.
    pub(crate) fn failed(
        &self,
        installation: Option<u64>,
        endpoint: &'static str,
        error: &GitHubError,
    ) {
        let now = Utc::now();
        let own = CREDENTIAL_ENDPOINTS.contains(&endpoint);
        let mut h = self.health.lock().expect("api health lock");
        *h.failures_by_kind.entry(error.kind()).or_default() += 1;
        if error.is_missing() && !own {
            return;
        }
        h.consecutive_failures += 1;
        let failure = ApiFailure {
            endpoint,
            request: request_of(endpoint),
            installation: installation.map_or_else(|| APP.to_string(), |i| i.to_string()),
            kind: error.kind(),
            class: error.class(),
            what_to_do: error.class().what_to_do(),
            message: error.to_string(),
            at: now,
        };
        if failure.class.is_fault() && h.logged != Some(failure.class) {
            h.logged = Some(failure.class);
            log_once(&failure);
        }
        h.last_failure = Some(failure);
        if own && matches!(error, GitHubError::Unauthorized { .. }) {
            h.credentials = Some(CredentialCheck {
                verified: false,
                at: now,
                detail: Some(error.to_string()),
            });
        }
    }

    /// A check run could not be published.
    pub(crate) fn check_run_failed(&self, error: String) {
        let mut h = self.health.lock().expect("api health lock");
        h.check_run_failures += 1;
        h.last_check_run_failure = Some((error, Utc::now()));
    }

    /// Calls that ended in an error, by kind (404/410 included), for `/metrics`.
    pub(crate) fn errors_by_kind(&self) -> BTreeMap<&'static str, u64> {
        self.health().failures_by_kind
    }

    /// Check-run publications that failed, for `/metrics`.
    pub(crate) fn check_run_failures(&self) -> u64 {
        self.health().check_run_failures
    }

    /// The App's health now.
    pub(crate) fn health(&self) -> ApiHealth {
        self.health.lock().expect("api health lock").clone()
    }

    /// Requests to one endpoint label.
    pub fn of(&self, endpoint: &str) -> u64 {
        self.by_endpoint().get(endpoint).copied().unwrap_or(0)
    }
}

/// One line per class of failure, with the request and what to do (the
/// next failure of the same class is quiet until a call succeeds again).
fn log_once(f: &ApiFailure) {
    tracing::error!(
        class = ?f.class,
        request = %f.request,
        installation = %f.installation,
        "{}: {} failed ({}); {}",
        f.class.summary(),
        f.request,
        f.message,
        f.what_to_do
    );
}

#[cfg(test)]
mod tests {
    #[test]
    fn errors_are_counted_by_kind_and_check_run_failures_apart() {
        use super::GitHubError;
        let calls = super::ApiCalls::default();
        let transient = GitHubError::Transient {
            endpoint: "issues.get",
            attempts: 3,
            last: "502".into(),
            class: super::super::error::FailureClass::ServerError,
        };
        let missing = GitHubError::NotFound {
            endpoint: "issues.get",
            message: "gone".into(),
        };
        calls.failed(Some(1), "issues.get", &transient);
        calls.failed(Some(1), "issues.get", &transient);
        calls.failed(Some(1), "issues.get", &missing);
        calls.check_run_failed("503".into());
        let kinds = calls.errors_by_kind();
        assert_eq!(kinds["transient"], 2);
        assert_eq!(kinds["not_found"], 1);
        assert_eq!(calls.check_run_failures(), 1);
        assert_eq!(calls.total(), 0, "errors are not requests");
    }

    use super::*;

    #[test]
    fn counts_add_up_per_installation_and_endpoint() {
        let calls = ApiCalls::default();
        calls.record(Some(5), "checks.create");
        calls.record(Some(5), "checks.update");
        calls.record(Some(6), "checks.update");
        calls.record(None, "app.get");
        assert_eq!(calls.total(), 4);
        assert_eq!(calls.by_installation()["5"], 2);
        assert_eq!(calls.by_installation()["app"], 1);
        assert_eq!(calls.of("checks.update"), 2);
    }

    fn unauthorized(endpoint: &'static str) -> GitHubError {
        GitHubError::Unauthorized {
            endpoint,
            message: "Bad credentials".into(),
        }
    }

    #[test]
    fn health_follows_the_calls() {
        let calls = ApiCalls::default();
        assert_eq!(calls.health().credentials, None);
        assert!(!calls.health().failing());
        calls.failed(None, "app.get", &unauthorized("app.get"));
        let h = calls.health();
        assert!(!h.credentials.as_ref().unwrap().verified);
        assert!(h.failing());
        assert_eq!(h.last_failure.as_ref().unwrap().kind, "unauthorized");
        calls.succeeded("app.installation_token");
        assert!(calls.health().credentials.unwrap().verified);
        assert!(!calls.health().failing());
        // A 404 on a repository is an answer, not a failure of the App.
        let missing = GitHubError::NotFound {
            endpoint: "issues.get",
            message: "Not Found".into(),
        };
        calls.failed(Some(5), "issues.get", &missing);
        assert_eq!(calls.health().consecutive_failures, 0);
        assert_eq!(calls.health().failures_by_kind["not_found"], 1);
        for _ in 0..FAILING_AFTER {
            calls.failed(Some(5), "checks.create", &unauthorized("checks.create"));
        }
        assert!(calls.health().failing());
        assert_eq!(calls.health().last_failure.unwrap().installation, "5");
    }
}
