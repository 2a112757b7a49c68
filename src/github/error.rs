//! What a GitHub API call can end in, once our retry helper is done with it.
//! Terminal answers (the request is wrong, or the object is gone) come back
//! at once; transient ones only after the retry budget, or at once when a
//! retry would not be safe (see `retry`).

use chrono::{DateTime, Utc};

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

    /// True when trying again later can succeed without changing anything.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            GitHubError::Transient { .. } | GitHubError::BudgetExhausted { .. }
        )
    }

    /// True for 404 and 410: the object is not there (any more).
    pub fn is_missing(&self) -> bool {
        matches!(
            self,
            GitHubError::NotFound { .. } | GitHubError::Gone { .. }
        )
    }
}
