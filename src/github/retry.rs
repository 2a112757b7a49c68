//! Which GitHub failures are worth another try, how long to wait, and when to
//! stop (docs/architecture.md, "Failure semantics"; seed 001: never an infinite retry).
//!
//! - **Transient**: 5xx, timeouts and connection errors, the primary rate
//!   limit (403/429 with `x-ratelimit-remaining: 0`: wait until
//!   `x-ratelimit-reset`), the secondary rate limit (403/429 with
//!   `retry-after`: honour it; a 429, or a 403 whose message names a rate
//!   limit, without one: wait at least a minute).
//! - **Terminal**: 401, 403 (a permission), 404, 410, 422 and other 4xx, an
//!   unreadable 2xx body, a local client error. Returned at once.
//!
//! Transient failures are retried with exponential backoff inside a budget of
//! attempts *and* time (the waits asked for count against it), and a wait
//! longer than `max_sleep` is not slept at all: the call ends with
//! `BudgetExhausted { retry_at }` and the caller tries again later.
//!
//! **Writes that are not idempotent (POST) are never retried blindly.** A POST
//! is retried only when the failure proves GitHub did not process it: the
//! connection could not be made (nothing was sent), or a rate limit refused
//! it (403/429 rate-limit answers are given before any processing). After a
//! 5xx or a timeout the POST may have happened, so the call ends with
//! `Transient` and the caller reconciles before trying again.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::error::{FailureClass, GitHubError};
use crate::model::clock::Clock;

/// Sleeps for the given duration; injectable so tests never wait a minute.
pub(crate) type Sleeper =
    Arc<dyn Fn(Duration) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// The real sleeper.
pub(crate) fn tokio_sleeper() -> Sleeper {
    Arc::new(|d| Box::pin(tokio::time::sleep(d)))
}

/// How hard one call tries.
#[derive(Clone)]
pub struct RetryPolicy {
    /// Most requests per call, the first included.
    pub max_attempts: u32,
    /// Most time per call: request time plus every wait asked for.
    pub budget: Duration,
    /// First backoff; doubles per attempt.
    pub base_delay: Duration,
    /// Longest backoff between attempts.
    pub max_delay: Duration,
    /// Longest single wait we accept (a rate-limit reset further away ends the call).
    pub max_sleep: Duration,
    /// Wait after a secondary rate limit that names no `retry-after`.
    pub secondary_wait: Duration,
    pub sleeper: Sleeper,
    /// "Now", to turn `x-ratelimit-reset` into a wait.
    pub clock: Clock,
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 5,
            budget: Duration::from_secs(5 * 60),
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            max_sleep: Duration::from_secs(2 * 60),
            secondary_wait: Duration::from_secs(60),
            sleeper: tokio_sleeper(),
            clock: Clock::System,
        }
    }
}

impl std::fmt::Debug for RetryPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RetryPolicy")
            .field("max_attempts", &self.max_attempts)
            .field("budget", &self.budget)
            .field("max_sleep", &self.max_sleep)
            .finish_non_exhaustive()
    }
}

/// Exponential backoff: `min` after the first failure, doubling per failure
/// after that, never more than `max`.
pub(crate) fn doubling(min: Duration, max: Duration, failures: u32) -> Duration {
    let factor = 2u32.saturating_pow(failures.saturating_sub(1).min(16));
    min.saturating_mul(factor).min(max)
}

impl RetryPolicy {
    /// The backoff before attempt `attempt + 1` (attempt counts from 1).
    pub fn backoff(&self, attempt: u32) -> Duration {
        doubling(self.base_delay, self.max_delay, attempt)
    }
}

/// What to do about one failed attempt.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Worth another try.
    Retry {
        /// The wait GitHub asked for; `None`: our backoff.
        wait: Option<Duration>,
        /// When GitHub said to come back, for the caller if we give up.
        retry_at: Option<DateTime<Utc>>,
        /// True when the failure proves the request was not processed.
        unsent: bool,
        reason: String,
        /// Unreachable, rate limited or a server error.
        class: FailureClass,
    },
    Terminal(GitHubError),
}

/// Classify one failed attempt of `endpoint`.
pub(crate) fn classify(
    endpoint: &'static str,
    error: &octocrab::Error,
    now: DateTime<Utc>,
    policy: &RetryPolicy,
) -> Verdict {
    match error {
        octocrab::Error::GitHub { source, .. } => classify_status(endpoint, source, now, policy),
        octocrab::Error::Service { .. } | octocrab::Error::Hyper { .. } => Verdict::Retry {
            wait: None,
            retry_at: None,
            unsent: connection_never_made(error),
            reason: format!("transport: {}", chain(error)),
            class: FailureClass::Unreachable,
        },
        octocrab::Error::Serde { .. } | octocrab::Error::Json { .. } => {
            Verdict::Terminal(GitHubError::Decode {
                endpoint,
                message: chain(error),
            })
        }
        other => Verdict::Terminal(GitHubError::Client {
            endpoint,
            message: chain(other),
        }),
    }
}

fn classify_status(
    endpoint: &'static str,
    e: &octocrab::GitHubError,
    now: DateTime<Utc>,
    policy: &RetryPolicy,
) -> Verdict {
    let status = e.status_code.as_u16();
    let message = e.message.clone();
    let header = |name: &str| {
        e.headers
            .as_ref()
            .and_then(|h| h.get(name))
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if status == 403 || status == 429 {
        let retry_after = header("retry-after").and_then(|v| v.parse::<u64>().ok());
        let exhausted = header("x-ratelimit-remaining") == Some("0");
        let reset = header("x-ratelimit-reset")
            .and_then(|v| v.parse::<i64>().ok())
            .and_then(|s| DateTime::from_timestamp(s, 0));
        let limited = |wait: Duration, kind: &str| {
            let wait = wait.max(Duration::from_secs(1));
            Verdict::Retry {
                wait: Some(wait),
                retry_at: chrono::Duration::from_std(wait)
                    .ok()
                    .and_then(|d| now.checked_add_signed(d)),
                unsent: true,
                reason: format!("{kind} rate limit ({status}): {message}"),
                class: FailureClass::RateLimited,
            }
        };
        if let Some(secs) = retry_after {
            return limited(Duration::from_secs(secs), "secondary");
        }
        if exhausted {
            let wait = reset
                .and_then(|r| (r - now).to_std().ok())
                .unwrap_or(policy.secondary_wait);
            return limited(wait, "primary");
        }
        if status == 429 || message.to_ascii_lowercase().contains("rate limit") {
            return limited(policy.secondary_wait, "secondary");
        }
        return Verdict::Terminal(GitHubError::Forbidden { endpoint, message });
    }
    match status {
        500..=599 => Verdict::Retry {
            wait: None,
            retry_at: None,
            unsent: false,
            reason: format!("server error {status}: {message}"),
            class: FailureClass::ServerError,
        },
        401 => Verdict::Terminal(GitHubError::Unauthorized { endpoint, message }),
        404 => Verdict::Terminal(GitHubError::NotFound { endpoint, message }),
        410 => Verdict::Terminal(GitHubError::Gone { endpoint, message }),
        422 => Verdict::Terminal(GitHubError::Unprocessable { endpoint, message }),
        _ => Verdict::Terminal(GitHubError::Rejected {
            endpoint,
            status,
            message,
        }),
    }
}

/// True when the error chain shows the connection was never made, so the
/// request never left: a connect error of the HTTP client, or a refused
/// connection.
fn connection_never_made(error: &octocrab::Error) -> bool {
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = current {
        if let Some(h) = e.downcast_ref::<hyper_util::client::legacy::Error>() {
            if h.is_connect() {
                return true;
            }
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::ConnectionRefused {
                return true;
            }
        }
        current = e.source();
    }
    false
}

/// The error and its causes on one line.
fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut out = error.to_string();
    let mut current = error.source();
    while let Some(e) = current {
        let text = e.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        current = e.source();
    }
    // snafu's Display for some variants embeds a backtrace: keep one line.
    out.lines().next().unwrap_or_default().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let p = RetryPolicy {
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(350),
            ..RetryPolicy::default()
        };
        let waits: Vec<_> = (1..=4).map(|a| p.backoff(a).as_millis()).collect();
        assert_eq!(waits, vec![100, 200, 350, 350]);
    }
}
