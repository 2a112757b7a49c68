//! The read budget: at most `READ_CONCURRENCY` reads (dashboard pages, the
//! read API, the series, exports) run at once. A read beyond it waits up to
//! `READ_WAIT_MS` for a place, then gets a 503 with `Retry-After`, and reads
//! nothing. A handler takes its place by extracting `ReadPermit` after
//! `Reader` (an unauthenticated request never holds one) and keeps it until
//! its answer is built; an export hands it to the task that streams the body.
//!
//! Each read's memory is bounded on its own (rollups, pages of at most
//! `MAX_PAGE` outputs, one run, streamed exports), so the budget bounds what
//! reads hold together; and since acks never go through it, a burst of
//! reads delays other reads, never a webhook's 2xx.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::{ApiError, State};

/// Reads at once when `READ_CONCURRENCY` is not set.
pub const DEFAULT_CONCURRENCY: usize = 4;
/// How long a read waits for a place when `READ_WAIT_MS` is not set.
pub const DEFAULT_WAIT: Duration = Duration::from_millis(2_000);
/// What a refused read is told to wait, in seconds.
pub const RETRY_AFTER_SECS: u32 = 2;

/// The places reads share.
#[derive(Debug, Clone)]
pub struct ReadBudget {
    places: Arc<Semaphore>,
    wait: Duration,
    concurrency: usize,
}

impl ReadBudget {
    pub fn new(concurrency: usize, wait: Duration) -> ReadBudget {
        let concurrency = concurrency.max(1);
        ReadBudget {
            places: Arc::new(Semaphore::new(concurrency)),
            wait,
            concurrency,
        }
    }

    /// From `READ_CONCURRENCY` and `READ_WAIT_MS`, else the defaults.
    pub fn from_env() -> ReadBudget {
        let var = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
        ReadBudget::new(
            var("READ_CONCURRENCY").map_or(DEFAULT_CONCURRENCY, |n| n as usize),
            var("READ_WAIT_MS").map_or(DEFAULT_WAIT, Duration::from_millis),
        )
    }

    /// Reads that may run at once.
    pub fn concurrency(&self) -> usize {
        self.concurrency
    }

    /// Reads running now.
    pub fn in_use(&self) -> usize {
        self.concurrency - self.places.available_permits()
    }

    /// A place, waiting up to the budget's wait.
    pub async fn enter(&self) -> Result<ReadPermit, Response> {
        let wait = self.places.clone().acquire_owned();
        match tokio::time::timeout(self.wait, wait).await {
            Ok(Ok(permit)) => Ok(ReadPermit { _place: permit }),
            _ => Err(busy(self.concurrency)),
        }
    }
}

impl Default for ReadBudget {
    fn default() -> ReadBudget {
        ReadBudget::new(DEFAULT_CONCURRENCY, DEFAULT_WAIT)
    }
}

/// A read's place in the budget, given back when dropped.
#[derive(Debug)]
pub struct ReadPermit {
    _place: OwnedSemaphorePermit,
}

impl FromRequestParts<State> for ReadPermit {
    type Rejection = Response;

    async fn from_request_parts(_: &mut Parts, state: &State) -> Result<ReadPermit, Response> {
        state.reads.enter().await
    }
}

/// 503 + `Retry-After`: every place is taken.
fn busy(concurrency: usize) -> Response {
    let mut response = ApiError::unavailable(format!(
        "{concurrency} reads are running, the most this server runs at once; retry shortly"
    ))
    .into_response();
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_read_beyond_the_budget_waits_then_gets_a_503_with_retry_after() {
        let budget = ReadBudget::new(2, Duration::from_millis(50));
        let a = budget.enter().await.unwrap();
        let _b = budget.enter().await.unwrap();
        assert_eq!(budget.in_use(), 2);
        let started = std::time::Instant::now();
        let refused = budget.enter().await.unwrap_err();
        assert!(started.elapsed() >= Duration::from_millis(50));
        assert_eq!(
            refused.status(),
            axum::http::StatusCode::SERVICE_UNAVAILABLE
        );
        assert_eq!(refused.headers()[header::RETRY_AFTER], "2");
        // A place given back is taken by the next read waiting.
        let waiting = tokio::spawn({
            let budget = budget.clone();
            async move { budget.enter().await.is_ok() }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        drop(a);
        assert!(waiting.await.unwrap());
    }
}
