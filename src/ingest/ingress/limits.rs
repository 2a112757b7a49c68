//! The server's doors: how many connections, for how long, and how many body
//! bytes may be in flight, so that memory is bounded by these numbers and not
//! by what clients send (`docs/hostile-world.md`).
//!
//! - A global budget of body bytes (a semaphore counted in bytes). A request
//!   reserves its `Content-Length` (a streamed manifest: its bounded working
//!   set) before its handler runs, and a chunked body reserves frame by frame;
//!   when the budget cannot cover it promptly the answer is 503 with
//!   `Retry-After`, and nothing is read or stored.
//! - A body deadline: a body still arriving after `body_timeout` is cut
//!   (408), so a trickling body holds its reservation for a bounded time.
//! - Connection-level settings used by `RunningServer`: the header/idle
//!   timeout and the connection cap.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http_body::{Frame, SizeHint};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::{ApiError, MAX_BODY};

/// Records per staged manifest chunk, at most.
pub(crate) const CHUNK_RECORDS: usize = 500;
/// Line bytes per staged manifest chunk, at most (plus one line).
pub(crate) const CHUNK_LINE_BYTES: usize = 256 * 1024;

/// Seconds a client is told to wait when the body budget is spent.
pub(crate) const RETRY_AFTER_SECS: u64 = 2;

/// Every configurable limit of the HTTP surface (`serve` flags / env vars).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Open connections served at once; more wait in the listen backlog.
    pub max_connections: usize,
    /// Time a connection may take to send a request's headers, and may stay
    /// idle between requests, before it is closed.
    pub header_timeout: Duration,
    /// Time a request's body may take to arrive, from its headers.
    pub body_timeout: Duration,
    /// Body bytes all requests together may hold in memory.
    pub body_budget: usize,
    /// How long a request waits for the budget before its 503.
    pub budget_wait: Duration,
    /// Items (non-blank lines) a manifest may have; more: 413.
    pub manifest_max_lines: usize,
    /// Bytes a manifest line may have; a longer line is rejected.
    pub manifest_max_line_bytes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: 4096,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(60),
            body_budget: 64 * 1024 * 1024,
            budget_wait: Duration::from_secs(1),
            manifest_max_lines: 100_000,
            manifest_max_line_bytes: 64 * 1024,
        }
    }
}

impl Limits {
    /// Bytes a streamed manifest holds at most while it is read: a chunk of
    /// lines being parsed plus the longest line.
    pub(crate) fn manifest_working_set(&self) -> usize {
        CHUNK_LINE_BYTES + self.manifest_max_line_bytes
    }
}

/// Why a body stopped arriving; read by `body::door_error`.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DoorError {
    #[error("the body did not arrive within {0:?}")]
    BodyTimeout(Duration),
    #[error("the server's in-flight body budget is spent")]
    BudgetSpent,
}

/// How a route holds its body: whole (reserve all of it), or streamed
/// (reserve its fixed working set).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BodyMode {
    Buffered,
    Streamed,
}

/// The shared budget plus one route's mode: the state of `guard`.
#[derive(Clone)]
pub struct Doors {
    budget: Arc<Semaphore>,
    limits: Limits,
    mode: BodyMode,
}

impl Doors {
    pub fn new(limits: &Limits) -> Doors {
        let bytes = limits.body_budget.min(Semaphore::MAX_PERMITS);
        Doors {
            budget: Arc::new(Semaphore::new(bytes)),
            limits: limits.clone(),
            mode: BodyMode::Buffered,
        }
    }

    /// The same budget, for a route with another body mode.
    pub(crate) fn with_mode(&self, mode: BodyMode) -> Doors {
        Doors {
            mode,
            ..self.clone()
        }
    }

    /// Bytes to reserve before the handler runs.
    fn upfront(&self, declared: Option<usize>) -> usize {
        match (self.mode, declared) {
            // Refused by the handler before it reads anything.
            (_, Some(n)) if n > MAX_BODY => 0,
            (BodyMode::Streamed, d) => {
                let set = self.limits.manifest_working_set();
                d.map_or(set, |n| n.min(set))
            }
            (BodyMode::Buffered, Some(n)) => n,
            (BodyMode::Buffered, None) => 0,
        }
    }

    async fn reserve(&self, bytes: usize) -> Result<Option<OwnedSemaphorePermit>, Response> {
        if bytes == 0 {
            return Ok(None);
        }
        if bytes > self.limits.body_budget {
            return Err(ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                format!(
                    "the body ({bytes} bytes) is larger than the server's in-flight budget of {} bytes",
                    self.limits.body_budget
                ),
            )
            .into_response());
        }
        let permits = u32::try_from(bytes).unwrap_or(u32::MAX);
        let wait = self.budget.clone().acquire_many_owned(permits);
        match tokio::time::timeout(self.limits.budget_wait, wait).await {
            Ok(Ok(permit)) => Ok(Some(permit)),
            _ => Err(busy()),
        }
    }
}

/// 503 with `Retry-After`: the body budget is spent for now.
fn busy() -> Response {
    ApiError::unavailable(DoorError::BudgetSpent.to_string()).into_response()
}

fn content_length(request: &Request) -> Option<usize> {
    request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
}

/// Middleware of the routes that take a body: reserve budget, put the body
/// under its deadline (and per-frame budget when chunked), and tell a client
/// that got a 503 when to come back.
pub async fn guard(State(doors): State<Doors>, request: Request, next: Next) -> Response {
    let declared = content_length(&request);
    let permit = match doors.reserve(doors.upfront(declared)).await {
        Ok(permit) => permit,
        Err(response) => return with_retry_after(response),
    };
    let per_frame = (doors.mode == BodyMode::Buffered && declared.is_none()).then(|| FrameBudget {
        budget: doors.budget.clone(),
        held: Arc::default(),
    });
    let held = per_frame.as_ref().map(|b| b.held.clone());
    let (parts, body) = request.into_parts();
    let body = GuardedBody {
        inner: body,
        deadline: Box::pin(tokio::time::sleep(doors.limits.body_timeout)),
        timeout: doors.limits.body_timeout,
        per_frame,
    };
    let response = next.run(Request::from_parts(parts, Body::new(body))).await;
    // The handler is done with the body's bytes: give them back.
    drop((permit, held));
    with_retry_after(response)
}

fn with_retry_after(mut response: Response) -> Response {
    if response.status() == StatusCode::SERVICE_UNAVAILABLE {
        response
            .headers_mut()
            .entry(header::RETRY_AFTER)
            .or_insert(HeaderValue::from(RETRY_AFTER_SECS));
    }
    response
}

/// Budget taken frame by frame by a body of unknown length; released when
/// both the body and the request's middleware are done.
struct FrameBudget {
    budget: Arc<Semaphore>,
    held: Arc<Mutex<Vec<OwnedSemaphorePermit>>>,
}

impl FrameBudget {
    fn take(&self, bytes: usize) -> bool {
        let Ok(n) = u32::try_from(bytes) else {
            return false;
        };
        match self.budget.clone().try_acquire_many_owned(n) {
            Ok(permit) => {
                self.held.lock().expect("budget lock").push(permit);
                true
            }
            Err(_) => false,
        }
    }
}

/// A request body under a deadline and, when chunked, the budget.
struct GuardedBody {
    inner: Body,
    deadline: Pin<Box<tokio::time::Sleep>>,
    timeout: Duration,
    per_frame: Option<FrameBudget>,
}

impl http_body::Body for GuardedBody {
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if this.deadline.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Some(Err(DoorError::BodyTimeout(this.timeout).into())));
        }
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                let len = frame.data_ref().map_or(0, Bytes::len);
                if this.per_frame.as_ref().is_some_and(|b| !b.take(len)) {
                    return Poll::Ready(Some(Err(DoorError::BudgetSpent.into())));
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e.into()))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
