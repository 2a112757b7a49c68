//! `GitHubClient`: the one way this App calls GitHub. It keeps one octocrab
//! client per installation (each caches its installation token, which octocrab
//! mints on first use and refreshes 30 s before expiry), counts every request
//! per installation and endpoint, and runs each call through the retry rules
//! of `retry`.
//!
//! Clones of an installation `Octocrab` copy its token cache instead of
//! sharing it, so the clients are kept behind `Arc` and never cloned.
//!
//! The cache's invalidation is shared through the store (`watch_marks`):
//! each installation has a mark there, changed when its token must be
//! minted again (the installation deleted, suspended, unsuspended, or its
//! new permissions accepted: `installations::apply`; `forget`). A client
//! made under another mark is dropped at its next call, on every replica.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use octocrab::models::InstallationId;
use octocrab::Octocrab;

use super::calls::ApiCalls;
use super::error::GitHubError;
use super::retry::{classify, RetryPolicy, Verdict};

/// An API endpoint as counted and retried: a stable label and whether a
/// repeat of the request is harmless.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endpoint {
    pub label: &'static str,
    /// False for POSTs that create something: see `retry` for when those are repeated.
    pub idempotent: bool,
}

impl Endpoint {
    /// GET, PUT, PATCH, DELETE: repeating them changes nothing more.
    pub const fn idempotent(label: &'static str) -> Endpoint {
        Endpoint {
            label,
            idempotent: true,
        }
    }

    /// A POST that creates something.
    pub const fn create(label: &'static str) -> Endpoint {
        Endpoint {
            label,
            idempotent: false,
        }
    }
}

/// A fresh token mark: random, never 0 (0 is "never marked").
pub(crate) fn new_mark() -> u64 {
    let mut b = [0u8; 8];
    let _ = getrandom::getrandom(&mut b);
    u64::from_be_bytes(b).max(1)
}

/// Minting an installation token: a POST, but a repeated mint only gives
/// another token, so it is retried like a read.
const TOKEN: Endpoint = Endpoint::idempotent("app.installation_token");

pub struct GitHubClient {
    app: Arc<Octocrab>,
    /// Installation id → its client and the store's mark it was made under.
    installations: Mutex<HashMap<u64, (Arc<Octocrab>, u64)>>,
    calls: Arc<ApiCalls>,
    policy: RetryPolicy,
    /// Where the installations' token marks are kept (`watch_marks`).
    marks: std::sync::OnceLock<crate::store::Store>,
}

impl GitHubClient {
    /// `app` is the App-level client (`AppCredentials::app_client`).
    pub fn new(app: Octocrab, calls: Arc<ApiCalls>, policy: RetryPolicy) -> GitHubClient {
        GitHubClient {
            app: Arc::new(app),
            installations: Mutex::new(HashMap::new()),
            calls,
            policy,
            marks: std::sync::OnceLock::new(),
        }
    }

    /// Follow the token marks kept in `store` (`App::launch` does): a mark
    /// changed by any replica drops this client's cached token.
    pub fn watch_marks(&self, store: crate::store::Store) {
        let _ = self.marks.set(store);
    }

    /// The store's mark of installation `id` (0 when not watched or unreadable).
    fn mark(&self, id: u64) -> u64 {
        self.marks
            .get()
            .map_or(0, |s| s.token_mark(id).unwrap_or(0))
    }

    pub fn calls(&self) -> &Arc<ApiCalls> {
        &self.calls
    }

    /// The retry rules of this client (for requests outside the API, e.g.
    /// an artifact's blob, that follow the same backoff and sleeper).
    pub(crate) fn policy(&self) -> &RetryPolicy {
        &self.policy
    }

    /// The client of one installation, made once and kept while the
    /// store's mark of it stays the same.
    fn installation(&self, id: u64) -> Result<Arc<Octocrab>, GitHubError> {
        let mark = self.mark(id);
        let mut map = self
            .installations
            .lock()
            .expect("installation clients lock");
        if let Some((c, made_under)) = map.get(&id) {
            if *made_under == mark {
                return Ok(c.clone());
            }
        }
        let crab = self
            .app
            .installation(InstallationId(id))
            .map_err(|e| GitHubError::Client {
                endpoint: TOKEN.label,
                message: e.to_string(),
            })?;
        let crab = Arc::new(crab);
        map.insert(id, (crab.clone(), mark));
        Ok(crab)
    }

    /// Forget an installation's client, here and (through its mark in the
    /// store) on every replica.
    pub fn forget(&self, id: u64) {
        self.installations
            .lock()
            .expect("installation clients lock")
            .remove(&id);
        if let Some(store) = self.marks.get() {
            let mut batch = crate::store::ExternalBatch::default();
            batch.mark_token(id, new_mark());
            if let Err(e) = store.commit_batch(batch) {
                tracing::warn!(installation = id, error = %e, "could not mark the installation's token stale");
            }
        }
    }

    /// Call `endpoint` as installation `installation_id`. `request` builds the
    /// request future from the installation's client; it runs once per attempt.
    pub async fn call<T, F, Fut>(
        &self,
        installation_id: u64,
        endpoint: Endpoint,
        request: F,
    ) -> Result<T, GitHubError>
    where
        F: Fn(Arc<Octocrab>) -> Fut,
        Fut: Future<Output = octocrab::Result<T>>,
    {
        let crab = self.installation(installation_id)?;
        // Get the token first, as its own idempotent step: a failure minting
        // it must not pass for a failure of a non-idempotent request.
        let token_crab = crab.clone();
        self.run(None, TOKEN, &|| {
            let c = token_crab.clone();
            async move { c.installation_token().await.map(|_| ()) }
        })
        .await?;
        self.run(Some(installation_id), endpoint, &|| request(crab.clone()))
            .await
    }

    /// Call `endpoint` as the App itself (JWT): `/app`, installations, hook deliveries.
    pub async fn call_app<T, F, Fut>(
        &self,
        endpoint: Endpoint,
        request: F,
    ) -> Result<T, GitHubError>
    where
        F: Fn(Arc<Octocrab>) -> Fut,
        Fut: Future<Output = octocrab::Result<T>>,
    {
        let app = self.app.clone();
        self.run(None, endpoint, &|| request(app.clone())).await
    }

    /// One call with its retries, its result recorded in the App's health
    /// (`ApiCalls::succeeded` / `failed`). The retry loop is the one place
    /// that decides what is retried, how long to wait and when to stop.
    async fn run<T, F, Fut>(
        &self,
        installation: Option<u64>,
        endpoint: Endpoint,
        attempt_once: &F,
    ) -> Result<T, GitHubError>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = octocrab::Result<T>>,
    {
        debug_assert!(
            super::calls::is_listed(endpoint.label),
            "GitHub call {:?} is not in github::calls::OPERATIONS (each call is checked against GitHub's description there)",
            endpoint.label
        );
        let result = async {
            let p = &self.policy;
            let mut spent = Duration::ZERO;
            let mut attempts = 0u32;
            loop {
                attempts += 1;
                let started = Instant::now();
                let result = attempt_once().await;
                spent += started.elapsed();
                if endpoint != TOKEN {
                    self.calls.record(installation, endpoint.label);
                }
                let error = match result {
                    Ok(value) => return Ok(value),
                    Err(e) => e,
                };
                let (wait, retry_at, unsent, reason, class) =
                    match classify(endpoint.label, &error, p.clock.now(), p) {
                        Verdict::Terminal(e) => return Err(e),
                        Verdict::Retry {
                            wait,
                            retry_at,
                            unsent,
                            reason,
                            class,
                        } => (wait, retry_at, unsent, reason, class),
                    };
                if !endpoint.idempotent && !unsent {
                    return Err(GitHubError::Transient {
                        endpoint: endpoint.label,
                        attempts,
                        last: reason,
                        class,
                    });
                }
                let wait = wait.unwrap_or_else(|| p.backoff(attempts));
                let exhausted = GitHubError::BudgetExhausted {
                    endpoint: endpoint.label,
                    attempts,
                    last: reason.clone(),
                    retry_at,
                    class,
                };
                if attempts >= p.max_attempts || wait > p.max_sleep || spent + wait > p.budget {
                    return Err(exhausted);
                }
                tracing::debug!(
                    endpoint = endpoint.label,
                    attempts,
                    wait_ms = wait.as_millis() as u64,
                    %reason,
                    "transient GitHub failure, retrying"
                );
                (p.sleeper)(wait).await;
                spent += wait;
            }
        }
        .await;
        match &result {
            Ok(_) => self.calls.succeeded(endpoint.label),
            Err(e) => self.calls.failed(installation, endpoint.label, e),
        }
        result
    }
}
