//! The model of GitHub: the one fake GitHub of the tests and the benches.
//! Real HTTP on 127.0.0.1, real App JWT checks (RS256, with the public half
//! of `fixtures/github/test-app-key.pem`), installation tokens that must be
//! presented, stored objects, per-route call counts, and failure injection
//! (the next N answers of a route).
//!
//! To add a route: write a small handler in a submodule taking
//! `State<Fake>` (and `HeaderMap` to check auth with `require_token` or
//! `require_jwt`), keep its objects in `Inner`, and add it in `routes()`.
//! Counting and failure injection apply to every route automatically.
// Auth helpers return the error response itself for handlers to pass on.
#![allow(clippy::result_large_err)]

pub(crate) mod answers;
mod app;
mod artifacts;
mod checks;
pub mod contents;
pub(crate) mod counts;
mod deliveries;
pub mod generate;
pub mod git;
pub mod history;
pub(crate) mod issue_types;
pub(crate) mod lenient;
pub(crate) mod objects;
mod replay;
pub mod repos;
pub mod runs;
pub(crate) mod teams;
pub mod users;
pub mod vocabulary;
pub mod webhooks;
pub mod world;

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::body::Body;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use octocrab::jsonwebtoken::{self, Algorithm, DecodingKey, Validation};
use serde_json::{json, Value};

pub use artifacts::{zip_of, BLOB, DOWNLOAD_ARTIFACT, LIST_ARTIFACTS};
pub use checks::CheckRun;
pub use counts::{CallKind, Counts};
pub use deliveries::{Delivery, LIST_DELIVERIES, REDELIVER};

/// Waits a retry policy asked for: the tests' sleeper records them and
/// returns at once.
pub type Sleeps = Arc<Mutex<Vec<std::time::Duration>>>;

/// The tests' retry policy: `max_attempts` tries with GitHub-like delays,
/// recorded in `sleeps` instead of slept, on `clock`.
pub fn recorded_policy(
    sleeps: &Sleeps,
    clock: crate::model::clock::Clock,
    max_attempts: u32,
) -> crate::github::RetryPolicy {
    use std::time::Duration;
    let log = sleeps.clone();
    let sleeper: crate::github::retry::Sleeper = Arc::new(move |d| {
        log.lock().unwrap().push(d);
        Box::pin(async {})
    });
    crate::github::RetryPolicy {
        max_attempts,
        budget: Duration::from_secs(600),
        base_delay: Duration::from_secs(1),
        max_delay: Duration::from_secs(8),
        max_sleep: Duration::from_secs(120),
        secondary_wait: Duration::from_secs(60),
        sleeper,
        clock,
    }
}

pub(crate) const APP_ID: u64 = 4242;
pub const PRIVATE_KEY: &str = include_str!("../../../fixtures/github/test-app-key.pem");
const PUBLIC_KEY: &str = include_str!("../../../fixtures/github/test-app-key.pub.pem");

/// One injected answer: status, headers, JSON body.
#[derive(Debug, Clone)]
pub struct Failure {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Value,
    /// Run the handler first (the request *was* processed), then answer this.
    pub after_processing: bool,
}

impl Failure {
    pub fn status(status: u16) -> Failure {
        Failure {
            status,
            headers: Vec::new(),
            body: json!({"message": format!("injected {status}")}),
            after_processing: false,
        }
    }

    /// The request is processed, but the answer is lost to this failure
    /// (e.g. a 502 from a proxy after the write happened).
    pub fn after_processing(mut self) -> Failure {
        self.after_processing = true;
        self
    }

    pub(crate) fn header(mut self, name: &str, value: impl ToString) -> Failure {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    pub fn message(mut self, message: &str) -> Failure {
        self.body = json!({"message": message});
        self
    }

    /// 403 primary rate limit: nothing left until `reset` (unix seconds).
    pub fn primary_rate_limit(reset: i64) -> Failure {
        Failure::status(403)
            .header("x-ratelimit-remaining", 0)
            .header("x-ratelimit-reset", reset)
            .message("API rate limit exceeded for installation.")
    }

    /// 429 secondary rate limit with `retry-after` seconds.
    pub fn secondary_rate_limit(retry_after: u64) -> Failure {
        Failure::status(429)
            .header("retry-after", retry_after)
            .message("You have exceeded a secondary rate limit.")
    }
}

/// Everything the fake holds. Handlers lock it briefly.
#[derive(Default)]
pub struct Inner {
    /// Requests per route, keyed `"METHOD /route/{param}"`.
    pub calls: BTreeMap<String, u64>,
    /// Injected answers, per route key, used in order before the handler runs.
    pub failures: BTreeMap<String, VecDeque<Failure>>,
    /// Token requests per installation id.
    pub token_requests: BTreeMap<u64, u64>,
    /// Issued tokens → installation id.
    pub tokens: BTreeMap<String, u64>,
    /// Lifetime of issued tokens (GitHub: 1 hour).
    pub token_ttl_secs: i64,
    pub check_runs: Vec<CheckRun>,
    pub next_id: u64,
    /// Repository state for reconciliation, `"{owner}/{repo}/{path}"` →
    /// JSON (see `repos`).
    pub api: BTreeMap<String, Value>,
    /// App webhook deliveries and redelivery requests (`deliveries`).
    pub deliveries: deliveries::Deliveries,
    /// Workflow run artifacts and their blobs (`artifacts`).
    pub artifacts: artifacts::Artifacts,
    /// Workflow runs and the rate limit (`runs`).
    pub runs: runs::Runs,
    /// Every request, `"METHOD /path?query -> status"`, in order.
    pub log: Vec<String>,
    /// Repository reads that cost rate limit (answered 200/404; a 304 to a
    /// conditional request is free, as on GitHub).
    pub rate_limited_reads: u64,
    /// Conditional requests answered 304 Not Modified.
    pub not_modified: u64,
    /// GitHub users, the manifest flow and OAuth (`users`).
    pub users: users::Users,
    /// Requests by what they were for (`counts`).
    pub counts: Counts,
    /// Answer for unknown repository objects as if they existed, open and
    /// untouched (`lenient`).
    pub lenient: bool,
    /// The histories served, by repository (lower case; `replay`).
    pub histories: BTreeMap<String, history::History>,
    /// The moment the answers are about (default: the wall clock).
    pub clock: Option<crate::model::clock::Clock>,
    /// The world last replayed: repository, moment, objects (`replay`).
    pub world_cache: Option<(String, chrono::DateTime<chrono::Utc>, Arc<world::World>)>,
}

#[derive(Clone)]
pub struct Fake(Arc<Shared>);

pub(crate) struct Shared {
    inner: Mutex<Inner>,
    key: DecodingKey,
}

impl Fake {
    pub fn lock(&self) -> MutexGuard<'_, Inner> {
        self.0.inner.lock().unwrap()
    }

    fn next_id(&self) -> u64 {
        let mut inner = self.lock();
        inner.next_id += 1;
        inner.next_id
    }
}

/// A running fake. Clones share it; it stops when the last is dropped.
#[derive(Clone)]
pub struct FakeGitHub {
    pub url: String,
    pub fake: Fake,
    _serving: Arc<Serving>,
}

/// The fake's server task, aborted when dropped.
struct Serving(tokio::task::JoinHandle<()>);

impl Drop for Serving {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl FakeGitHub {
    /// The App's API client (the tests' App id and key) against this fake,
    /// counting its calls into `calls` and retrying by `policy`.
    pub fn client(
        &self,
        calls: Arc<crate::github::calls::ApiCalls>,
        policy: crate::github::RetryPolicy,
    ) -> crate::github::client::GitHubClient {
        let creds = crate::github::auth::AppCredentials::from_config(
            "4242",
            Some(PRIVATE_KEY.into()),
            None,
        )
        .unwrap();
        crate::github::client::GitHubClient::new(
            creds.app_client(&self.url).unwrap(),
            calls,
            policy,
        )
    }

    /// `client`, for `App::launch`: built once the App's call counter exists.
    pub fn client_factory(&self, policy: crate::github::RetryPolicy) -> crate::app::ClientFactory {
        let url = self.url.clone();
        Box::new(move |calls| {
            let creds = crate::github::auth::AppCredentials::from_config(
                "4242",
                Some(PRIVATE_KEY.into()),
                None,
            )?;
            Ok(crate::github::client::GitHubClient::new(
                creds.app_client(&url)?,
                calls,
                policy,
            ))
        })
    }

    pub async fn start() -> FakeGitHub {
        let fake = Fake(Arc::new(Shared {
            inner: Mutex::new(Inner {
                token_ttl_secs: 3600,
                next_id: 1000,
                ..Inner::default()
            }),
            key: DecodingKey::from_rsa_pem(PUBLIC_KEY.as_bytes()).unwrap(),
        }));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let router = routes(fake.clone());
        let task = tokio::spawn(async move {
            axum::serve(listener, router).await.unwrap();
        });
        FakeGitHub {
            url,
            fake,
            _serving: Arc::new(Serving(task)),
        }
    }

    /// The next `n` answers of `route` (e.g. `"POST /repos/{owner}/{repo}/check-runs"`).
    pub fn fail_next(&self, route: &str, n: usize, failure: Failure) {
        let mut inner = self.fake.lock();
        let q = inner.failures.entry(route.to_string()).or_default();
        for _ in 0..n {
            q.push_back(failure.clone());
        }
    }

    pub fn calls(&self, route: &str) -> u64 {
        self.fake.lock().calls.get(route).copied().unwrap_or(0)
    }

    pub fn token_requests(&self, installation: u64) -> u64 {
        self.fake
            .lock()
            .token_requests
            .get(&installation)
            .copied()
            .unwrap_or(0)
    }

    /// Every request so far, `"METHOD /path?query -> status"`, in order.
    pub fn log(&self) -> Vec<String> {
        self.fake.lock().log.clone()
    }

    pub fn check_runs(&self) -> Vec<CheckRun> {
        self.fake.lock().check_runs.clone()
    }

    /// Requests so far, by what they were for.
    pub(crate) fn counts(&self) -> Counts {
        self.fake.lock().counts.clone()
    }

    /// Answer for repository objects the model holds nothing about as if
    /// they existed, open and untouched (see `lenient`).
    pub(crate) fn lenient(&self) {
        self.fake.lock().lenient = true;
    }
}

pub const TOKENS: &str = "POST /app/installations/{id}/access_tokens";
pub const GET_APP: &str = "GET /app";
pub const CREATE_CHECK: &str = "POST /repos/{owner}/{repo}/check-runs";
pub const UPDATE_CHECK: &str = "PATCH /repos/{owner}/{repo}/check-runs/{id}";
pub const LIST_CHECKS: &str = "GET /repos/{owner}/{repo}/commits/{sha}/check-runs";

fn routes(fake: Fake) -> Router {
    Router::new()
        .route("/app", get(app::get_app))
        .route("/app/installations/{id}/access_tokens", post(app::access_token))
        .route("/repos/{owner}/{repo}/check-runs", post(checks::create))
        .route(
            "/repos/{owner}/{repo}/check-runs/{id}",
            get(checks::get_one).patch(checks::update),
        )
        .route("/repos/{owner}/{repo}/commits/{sha}/check-runs", get(checks::list_for_ref))
        .merge(repos::routes())
        .merge(contents::routes())
        .route("/app/hook/deliveries", get(deliveries::list))
        .route("/app/hook/deliveries/{id}/attempts", post(deliveries::redeliver))
        .route(
            "/repos/{owner}/{repo}/actions/runs/{run_id}/artifacts",
            get(artifacts::list_for_run),
        )
        .route(
            "/repos/{owner}/{repo}/actions/artifacts/{id}/zip",
            get(artifacts::download),
        )
        .route("/blob/{id}", get(artifacts::blob))
        .route("/repos/{owner}/{repo}/actions/runs", get(runs::list))
        .route("/repos/{owner}/{repo}/actions/workflows", get(runs::list_workflows))
        .route(
            "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs",
            get(runs::list_for_workflow),
        )
        .route("/rate_limit", get(runs::rate_limit))
        .merge(users::routes())
        .route_layer(middleware::from_fn_with_state(fake.clone(), repos::follow_renames))
        .route_layer(middleware::from_fn_with_state(fake.clone(), count_and_inject))
        .fallback(|req: Request| async move {
            (
                StatusCode::NOT_FOUND,
                Json(json!({"message": format!("fake GitHub has no route {} {}", req.method(), req.uri())})),
            )
        })
        .with_state(fake)
}

/// Count the request under its route, and answer with an injected failure if one is queued.
async fn count_and_inject(State(fake): State<Fake>, req: Request, next: Next) -> Response {
    let path = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_default();
    let key = format!("{} {path}", req.method());
    let (injected, metered, logged) = {
        let mut inner = fake.lock();
        *inner.calls.entry(key.clone()).or_default() += 1;
        inner.counts.note(req.method(), req.uri().path());
        let uri = req.uri();
        let line = format!(
            "{} {}",
            req.method(),
            uri.path_and_query().map_or(uri.path(), |p| p.as_str())
        );
        let logged = inner.log.len();
        inner.log.push(line);
        let installation = bearer(req.headers()).is_some_and(|t| inner.tokens.contains_key(t));
        let metered = match inner.runs.rate.as_mut() {
            Some(rate) if installation && key != runs::RATE_LIMIT => {
                if rate.remaining == 0 {
                    let spent = *rate;
                    inner.runs.rate_limited += 1;
                    inner.log[logged].push_str(" -> 403");
                    return failure_response(Failure::primary_rate_limit(spent.reset));
                }
                rate.remaining -= 1;
                Some(*rate)
            }
            _ => None,
        };
        let injected = inner.failures.get_mut(&key).and_then(|q| q.pop_front());
        (injected, metered, logged)
    };
    let mut resp = match injected {
        Some(f) if f.after_processing => {
            let _ = next.run(req).await;
            failure_response(f)
        }
        Some(f) => failure_response(f),
        None => next.run(req).await,
    };
    let status = resp.status().as_u16();
    fake.lock().log[logged].push_str(&format!(" -> {status}"));
    if let Some(rate) = metered {
        for (k, v) in runs::headers(&rate) {
            resp.headers_mut().insert(
                HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(&v).unwrap(),
            );
        }
    }
    resp
}

fn failure_response(f: Failure) -> Response {
    let mut resp = Response::new(Body::from(f.body.to_string()));
    *resp.status_mut() = StatusCode::from_u16(f.status).unwrap();
    let headers = resp.headers_mut();
    headers.insert("content-type", HeaderValue::from_static("application/json"));
    for (k, v) in f.headers {
        headers.insert(
            HeaderName::from_bytes(k.as_bytes()).unwrap(),
            HeaderValue::from_str(&v).unwrap(),
        );
    }
    resp
}

/// A GitHub-style error answer.
pub(crate) fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({"message": message}))).into_response()
}

/// Where this fake answers, `http://HOST` from the request's `Host`: its
/// links are absolute, like GitHub's (a client must not follow one blindly
/// with its credentials).
pub(crate) fn base_url(headers: &HeaderMap) -> String {
    let host = headers
        .get("host")
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1");
    format!("http://{host}")
}

/// A `link` header naming `next`, the following page of a list.
pub(crate) fn link_next(response: &mut Response, next: &str) {
    let link = format!("<{next}>; rel=\"next\"");
    response
        .headers_mut()
        .insert("link", HeaderValue::from_str(&link).unwrap());
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get("authorization")?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
}

/// Check the App JWT: RS256 signed with the App key, `iss` = the App id.
pub(crate) fn require_jwt(fake: &Fake, headers: &HeaderMap) -> Result<(), Response> {
    #[derive(serde::Deserialize)]
    struct Claims {
        iss: Value,
    }
    let unauthorized = |why: &str| error(StatusCode::UNAUTHORIZED, why);
    let token = bearer(headers).ok_or_else(|| unauthorized("A JSON web token is required"))?;
    let mut v = Validation::new(Algorithm::RS256);
    // `iss` is checked below: octocrab sends it as a number, which
    // jsonwebtoken only understands as a string.
    v.set_required_spec_claims(&["exp", "iat"]);
    let data = jsonwebtoken::decode::<Claims>(token, &fake.0.key, &v)
        .map_err(|e| unauthorized(&format!("bad JWT: {e}")))?;
    let iss = match &data.claims.iss {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    };
    if iss != Some(APP_ID) {
        return Err(unauthorized("JWT issuer is not this App"));
    }
    Ok(())
}

/// Check an installation token we issued; returns its installation id.
pub(crate) fn require_token(fake: &Fake, headers: &HeaderMap) -> Result<u64, Response> {
    let token = bearer(headers)
        .ok_or_else(|| error(StatusCode::UNAUTHORIZED, "Requires authentication"))?;
    fake.lock()
        .tokens
        .get(token)
        .copied()
        .ok_or_else(|| error(StatusCode::UNAUTHORIZED, "Bad credentials"))
}

/// [`require_jwt`] as an extractor: the App's own JWT, or GitHub's 401.
/// Put it after the other extractors, as the check was.
pub(crate) struct AppJwt;

impl axum::extract::FromRequestParts<Fake> for AppJwt {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        fake: &Fake,
    ) -> Result<Self, Response> {
        require_jwt(fake, &parts.headers).map(|()| AppJwt)
    }
}

/// [`require_token`] as an extractor: the installation whose token came,
/// or GitHub's 401. Put it after the other extractors, as the check was.
pub(crate) struct Authorized(#[allow(dead_code)] pub u64);

impl axum::extract::FromRequestParts<Fake> for Authorized {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        fake: &Fake,
    ) -> Result<Self, Response> {
        require_token(fake, &parts.headers).map(Authorized)
    }
}
