//! The read budget: at most `READ_CONCURRENCY` reads (dashboard pages, the
//! read API, the series, exports) run at once. A read beyond it waits up to
//! `READ_WAIT_MS` for a place, then gets a 503 with `Retry-After`, and reads
//! nothing. A handler takes its place by extracting `ReadPermit` after
//! `Reader` (an unauthenticated request never holds one) and keeps it until
//! its answer is built; an export hands it to the task that streams the body.
//!
//! Each read's memory is bounded on its own (rollups, pages of at most
//! `MAX_PAGE` outputs, one run, streamed exports), so the budget bounds what
//! reads hold together. Acks never go through it: a burst of reads makes
//! other reads wait, not a webhook's 2xx. An ack's group commit shares no
//! lock with the reads (on sled the inbox is a journal of its own:
//! docs/store.md), so what reads can still take from acks is CPU: by default
//! they run at most one fewer at once than the machine has cores
//! (`default_concurrency`), so one core is always left to ingest.
//!
//! A read's work on the store runs on the budget's own threads
//! (`ReadBudget::run`), one a place, in Linux's `SCHED_IDLE` class
//! (`READ_SCHED=normal` keeps them in the ordinary class, at `READ_NICE`):
//! a thread that acknowledges webhooks takes a core from a read the moment
//! it wakes, and reads run on what is left. Measured beside 16 readers
//! (BENCHMARKS.md, 2026-11-26 10:15): ack p99 1.44–1.56× the no-reader run
//! in the idle class, 1.75–1.79× at nice 10.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::{ApiError, State};

/// The most reads at once when `READ_CONCURRENCY` is not set.
pub(crate) const MAX_DEFAULT_CONCURRENCY: usize = 4;

/// Reads at once when `READ_CONCURRENCY` is not set: one fewer than the
/// cores the process may use (at least 1, at most
/// `MAX_DEFAULT_CONCURRENCY`). A read is CPU-bound (it folds rollup cells);
/// with every core reading, an ack waits for a core (measured in
/// BENCHMARKS.md: on 2 cores, beside 16 readers, ack p99 2.0–2.6× the
/// no-reader run with 4 reads at once, 1.7× with 2, 1.0–1.3× with 1).
pub(crate) fn default_concurrency() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.saturating_sub(1).clamp(1, MAX_DEFAULT_CONCURRENCY)
}
/// How long a read waits for a place when `READ_WAIT_MS` is not set.
pub(crate) const DEFAULT_WAIT: Duration = Duration::from_millis(2_000);
/// What a refused read is told to wait, in seconds.
pub(crate) const RETRY_AFTER_SECS: u32 = 2;

/// The nice value of the read threads (`READ_NICE` overrides it): Linux
/// gives a thread at nice 10 about a tenth of the CPU a nice-0 thread
/// competing with it gets.
pub(crate) const READ_NICE: i32 = 10;

/// A read's work, run on a read thread.
type Job = Box<dyn FnOnce() + Send>;

/// The places reads share.
#[derive(Debug, Clone)]
pub struct ReadBudget {
    places: Arc<Semaphore>,
    wait: Duration,
    concurrency: usize,
    threads: Arc<std::sync::OnceLock<ReadThreads>>,
}

/// The read threads, started at the first read; they end when the last
/// clone of the budget is dropped (the channel closes).
struct ReadThreads {
    jobs: std::sync::mpsc::Sender<Job>,
}

impl std::fmt::Debug for ReadThreads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReadThreads")
    }
}

impl ReadThreads {
    fn start(n: usize) -> ReadThreads {
        let (jobs, queue) = std::sync::mpsc::channel::<Job>();
        let queue = Arc::new(std::sync::Mutex::new(queue));
        for i in 0..n {
            let queue = queue.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("read-{i}"))
                .spawn(move || {
                    crate::app::lower_priority(&crate::settings::READ_NICE, READ_NICE);
                    crate::app::run_when_idle(&crate::settings::READ_SCHED);
                    loop {
                        let job = match queue.lock() {
                            Ok(q) => q.recv(),
                            Err(_) => return,
                        };
                        let Ok(job) = job else { return };
                        // A read that panics answers 500 (its sender is
                        // dropped); the thread serves the next one.
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                    }
                });
            if let Err(e) = spawned {
                tracing::error!("could not start read thread {i}: {e}");
            }
        }
        ReadThreads { jobs }
    }
}

impl ReadBudget {
    pub fn new(concurrency: usize, wait: Duration) -> ReadBudget {
        let concurrency = concurrency.max(1);
        ReadBudget {
            places: Arc::new(Semaphore::new(concurrency)),
            wait,
            concurrency,
            threads: Arc::default(),
        }
    }

    /// Run `read` on a read thread and wait for its answer.
    pub async fn run<T: Send + 'static>(
        &self,
        read: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, ApiError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let threads = self
            .threads
            .get_or_init(|| ReadThreads::start(self.concurrency));
        threads
            .jobs
            .send(Box::new(move || {
                let _ = tx.send(read());
            }))
            .map_err(|_| ApiError::internal("the read threads have stopped"))?;
        rx.await
            .map_err(|_| ApiError::internal("the read failed (see the log)"))
    }

    /// From `READ_CONCURRENCY` and `READ_WAIT_MS`, else the defaults.
    pub(crate) fn from_env() -> ReadBudget {
        use crate::settings::{read, Setting, READ_CONCURRENCY, READ_WAIT_MS};
        let var = |s: &Setting| read(s).and_then(|v| v.parse::<u64>().ok());
        ReadBudget::new(
            var(&READ_CONCURRENCY).map_or_else(default_concurrency, |n| n as usize),
            var(&READ_WAIT_MS).map_or(DEFAULT_WAIT, Duration::from_millis),
        )
    }

    /// Reads running now.
    #[cfg(test)]
    pub(crate) fn in_use(&self) -> usize {
        self.concurrency - self.places.available_permits()
    }

    /// A place, waiting up to the budget's wait.
    pub(crate) async fn enter(&self) -> Result<ReadPermit, Response> {
        let wait = self.places.clone().acquire_owned();
        match tokio::time::timeout(self.wait, wait).await {
            Ok(Ok(permit)) => Ok(ReadPermit { _place: permit }),
            _ => Err(busy(self.concurrency)),
        }
    }
}

impl Default for ReadBudget {
    fn default() -> ReadBudget {
        ReadBudget::new(default_concurrency(), DEFAULT_WAIT)
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

/// Run `read` on a read thread (`ReadBudget::run`) with the store, the
/// cuts and the scope.
pub(crate) async fn blocking<T: Send + 'static>(
    state: &State,
    filter: &crate::read::query::ReadFilter,
    scope: &crate::read::query::RepoScope,
    read: impl FnOnce(
            &crate::store::Store,
            &crate::read::query::ReadFilter,
            &crate::read::query::RepoScope,
        ) -> crate::store::Result<T>
        + Send
        + 'static,
) -> Result<T, ApiError> {
    let store = state.store.clone();
    let (filter, scope) = (filter.clone(), scope.clone());
    state
        .reads
        .run(move || read(&store, &filter, &scope))
        .await?
        .map_err(ApiError::from)
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

    #[tokio::test]
    async fn reads_run_on_threads_of_lower_priority_and_survive_a_panic() {
        let budget = ReadBudget::new(2, Duration::from_millis(50));
        // SAFETY: getpriority only reads its arguments; `0` is the calling thread.
        let nice = || unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
        let here = nice();
        // SAFETY: sched_getscheduler only reads its argument.
        let policy = || unsafe { libc::sched_getscheduler(0) };
        let (there, class, name) = budget
            .run(move || {
                let name = std::thread::current().name().map(str::to_string);
                (nice(), policy(), name)
            })
            .await
            .unwrap();
        assert!(name.unwrap().starts_with("read-"));
        // Raised to READ_NICE, unless this process already runs above it.
        assert_eq!(there, READ_NICE.max(here));
        if !crate::settings::is_set(&crate::settings::READ_SCHED) {
            assert_eq!(class, libc::SCHED_IDLE, "reads run when nothing else would");
            assert_ne!(policy(), libc::SCHED_IDLE, "only the read threads");
        }
        let failed = budget.run(|| -> u32 { panic!("a read that fails") }).await;
        assert!(failed.is_err());
        for i in 0..4u32 {
            assert_eq!(budget.run(move || i * 2).await.unwrap(), i * 2);
        }
    }
}
