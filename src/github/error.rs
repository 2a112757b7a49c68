//! What a GitHub API call can end in, once our retry helper is done with it.
//! Terminal answers (the request is wrong, or the object is gone) come back
//! at once; transient ones only after the retry budget, or at once when a
//! retry would not be safe (see `retry`).

use chrono::{DateTime, Utc};
use serde::Serialize;

/// What a failed call means for the operator: each class reads differently
/// in the log and on `/status`, with what to do about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureClass {
    /// No answer: the connection failed or timed out.
    Unreachable,
    /// 401: GitHub refused the App's credentials (or a token minted from them).
    CredentialsRefused,
    /// 403 that is not a rate limit: the App lacks a permission.
    PermissionMissing,
    /// A primary or secondary rate limit.
    RateLimited,
    /// 5xx: a failure on GitHub's side.
    ServerError,
    /// Our side: the JWT could not be signed, an answer could not be read.
    Local,
    /// An answer about an object (404, 410, 422, another 4xx): not a fault
    /// of the App or of GitHub.
    Answer,
}

impl FailureClass {
    /// How the log and `/status` name it.
    pub fn summary(self) -> &'static str {
        match self {
            FailureClass::Unreachable => "GitHub could not be reached",
            FailureClass::CredentialsRefused => "GitHub refused the App's credentials",
            FailureClass::PermissionMissing => {
                "GitHub refused a request the App has no permission for"
            }
            FailureClass::RateLimited => "GitHub rate-limited the App",
            FailureClass::ServerError => "GitHub failed on its side",
            FailureClass::Local => "a request to GitHub could not be made or read",
            FailureClass::Answer => "GitHub answered about an object",
        }
    }

    /// What the operator must do.
    pub fn what_to_do(self) -> &'static str {
        match self {
            FailureClass::Unreachable => "check GITHUB_API_URL, DNS, proxies and the firewall between this server and GitHub; calls are retried with backoff",
            FailureClass::CredentialsRefused => "check APP_ID and PRIVATE_KEY (or PRIVATE_KEY_PATH): the id of this App and a current private key from its settings page",
            FailureClass::PermissionMissing => "grant the permission in the App's settings and accept it on the installation (the message names what was refused)",
            FailureClass::RateLimited => "nothing unless it lasts: calls wait for the limit's reset; a shorter backfill (--days) spends less",
            FailureClass::ServerError => "nothing unless it lasts (see githubstatus.com): calls are retried with backoff",
            FailureClass::Local => "check PRIVATE_KEY's format (PEM) and GITHUB_API_URL; the message says which",
            FailureClass::Answer => "nothing: the object is gone or the request does not apply to it",
        }
    }

    /// Does this class say something about the App's health?
    pub(crate) fn is_fault(self) -> bool {
        self != FailureClass::Answer
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GitHubError {
    /// 404: the object, or our access to it, does not exist.
    #[error("{endpoint}: not found (404): {message}")]
    NotFound {
        endpoint: &'static str,
        message: String,
    },
    /// 410: the object existed and was removed.
    #[error("{endpoint}: gone (410): {message}")]
    Gone {
        endpoint: &'static str,
        message: String,
    },
    /// 401: our credentials were refused (octocrab already re-minted the
    /// installation token once).
    #[error("{endpoint}: unauthorized (401): {message}")]
    Unauthorized {
        endpoint: &'static str,
        message: String,
    },
    /// 403 that is not a rate limit: a missing permission.
    #[error("{endpoint}: forbidden (403): {message}")]
    Forbidden {
        endpoint: &'static str,
        message: String,
    },
    /// 422: GitHub understood and refused the request.
    #[error("{endpoint}: unprocessable (422): {message}")]
    Unprocessable {
        endpoint: &'static str,
        message: String,
    },
    /// Another 4xx we do not retry (400, 409, ...).
    #[error("{endpoint}: GitHub answered {status}: {message}")]
    Rejected {
        endpoint: &'static str,
        status: u16,
        message: String,
    },
    /// A transient failure of a non-idempotent write that may have been
    /// processed: not retried blindly. The caller reconciles (e.g. looks the
    /// object up) before trying again.
    #[error("{endpoint}: transient failure after {attempts} attempt(s), not retried because the write may have happened: {last}")]
    Transient {
        endpoint: &'static str,
        attempts: u32,
        last: String,
        /// Unreachable, rate limited or a server error.
        class: FailureClass,
    },
    /// Transient failures until the attempts or the time budget ran out, or
    /// a rate limit asked for a longer wait than we accept.
    #[error("{endpoint}: retry budget exhausted after {attempts} attempt(s): {last}")]
    BudgetExhausted {
        endpoint: &'static str,
        attempts: u32,
        last: String,
        /// When GitHub said trying again makes sense (rate limits).
        retry_at: Option<DateTime<Utc>>,
        /// Unreachable, rate limited or a server error.
        class: FailureClass,
    },
    /// A 2xx whose body we could not read.
    #[error("{endpoint}: unexpected response: {message}")]
    Decode {
        endpoint: &'static str,
        message: String,
    },
    /// A local problem: the JWT could not be signed, a bad URI, ...
    #[error("{endpoint}: client error: {message}")]
    Client {
        endpoint: &'static str,
        message: String,
    },
}

impl GitHubError {
    /// The kind, as a metric label (`safe_outcomes_github_api_errors_total`).
    pub fn kind(&self) -> &'static str {
        match self {
            GitHubError::NotFound { .. } => "not_found",
            GitHubError::Gone { .. } => "gone",
            GitHubError::Unauthorized { .. } => "unauthorized",
            GitHubError::Forbidden { .. } => "forbidden",
            GitHubError::Unprocessable { .. } => "unprocessable",
            GitHubError::Rejected { .. } => "rejected",
            GitHubError::Transient { .. } => "transient",
            GitHubError::BudgetExhausted { .. } => "budget_exhausted",
            GitHubError::Decode { .. } => "decode",
            GitHubError::Client { .. } => "client",
        }
    }

    /// What the failure means for the operator.
    pub fn class(&self) -> FailureClass {
        match self {
            GitHubError::Unauthorized { .. } => FailureClass::CredentialsRefused,
            GitHubError::Forbidden { .. } => FailureClass::PermissionMissing,
            GitHubError::Transient { class, .. } | GitHubError::BudgetExhausted { class, .. } => {
                *class
            }
            GitHubError::Decode { .. } | GitHubError::Client { .. } => FailureClass::Local,
            GitHubError::NotFound { .. }
            | GitHubError::Gone { .. }
            | GitHubError::Unprocessable { .. }
            | GitHubError::Rejected { .. } => FailureClass::Answer,
        }
    }

    /// True when trying again later can succeed without changing anything.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            GitHubError::Transient { .. } | GitHubError::BudgetExhausted { .. }
        )
    }

    /// True for 404 and 410: the object is not there (any more).
    pub(crate) fn is_missing(&self) -> bool {
        matches!(
            self,
            GitHubError::NotFound { .. } | GitHubError::Gone { .. }
        )
    }
}

/// A step that reads GitHub and files what it learned failed: GitHub's
/// call, or the store (line attribution, a redelivery pass).
#[derive(Debug, thiserror::Error)]
pub enum CallOrStoreError {
    #[error(transparent)]
    GitHub(#[from] GitHubError),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}
