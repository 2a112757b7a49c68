//! The HTTP surface (docs/architecture.md, "HTTP surface"): webhook receiver, manifest ingest, read API,
//! health. Each area's file declares its routes (`routes(&Mount)`); `router`
//! merges the areas of `AREAS` once; every refusal, the framework's own
//! included, is the API's JSON error (`errors::uniform`). `RunningServer`
//! serves it under the connection limits of `limits::Limits`.
//! Its rooms: `auth` (setup, sign-in, sessions, installation tokens),
//! `dashboard` (the HTML pages), `shell` (the one page template), `read`
//! (who may read what). The files import one another in one direction:
//! `assets` < `shell` < `auth` < `read` < `budget` < `api` < `series` <
//! `openapi` < `dashboard` (no circle: `tests/it/layers.rs`). One layer,
//! `headers::secure`, sets the security headers on every answer; the
//! pages' stylesheet and icon are files (`assets`).
//!
//! May import: every room below it (`model` … `app`).

mod accept;
pub(crate) mod api;
pub(crate) mod assets;
pub mod auth;
pub(crate) mod backfill;
mod body;
pub(crate) mod budget;
pub mod dashboard;
mod errors;
mod export;
mod exposition;
mod headers;
mod health;
mod manifests;
pub mod openapi;
pub(crate) mod read;
mod reconcile;
pub mod series;
pub(crate) mod shell;
mod webhook;

use std::sync::Arc;

use axum::middleware::from_fn_with_state;
use axum::Router;

pub use crate::ingest::ingress::{limits, manifest_stream, ApiError, Limits, MAX_BODY};
pub use health::MetricsOptions;

use crate::app::{App, Shared};
use crate::ingest::oidc::OidcVerifier;
use crate::store::inbox::InboxWriter;
use crate::store::Store;

/// What every handler can reach.
pub(crate) struct ServerState {
    pub store: Store,
    pub shared: Arc<Shared>,
    pub writer: InboxWriter,
    pub secrets: Vec<crate::settings::Secret>,
    pub api_token: Option<crate::settings::Secret>,
    pub listen_only: bool,
    /// Verifies GitHub Actions OIDC tokens on manifest ingest; `None`: refused.
    pub oidc: Option<Arc<OidcVerifier>>,
    pub limits: Limits,
    /// Setup page, sign-in with GitHub and sessions.
    pub auth: Arc<crate::http::auth::Auth>,
    /// Who may read `/metrics`, where, and with which labels.
    pub metrics: MetricsOptions,
    /// The places reads share (`budget`).
    pub reads: budget::ReadBudget,
}

pub(crate) type State = Arc<ServerState>;

impl ServerState {
    /// 409 `listen_only` where this server makes no GitHub API calls:
    /// `consequence` says what it therefore cannot do and how to enable it.
    pub(crate) fn refuse_listen_only(&self, consequence: &str) -> Result<(), ApiError> {
        if !self.listen_only {
            return Ok(());
        }
        Err(ApiError::new(
            axum::http::StatusCode::CONFLICT,
            "listen_only",
            format!("this server runs in listen-only mode (no APP_ID): it makes no GitHub API calls, so {consequence}"),
        ))
    }
}

/// Options of the HTTP surface.
#[derive(Clone, Debug, Default)]
pub struct RouterOptions {
    pub webhook_path: String,
    /// `WEBHOOK_SECRET`'s secrets (several during a rotation).
    pub secrets: Vec<crate::settings::Secret>,
    /// `API_TOKEN`.
    pub api_token: Option<crate::settings::Secret>,
    pub listen_only: bool,
    pub oidc: Option<Arc<OidcVerifier>>,
    /// Body budget and timeout, manifest caps (the connection limits are
    /// `RunningServer::start_with`'s).
    pub limits: Limits,
    /// Setup page and sign-in with GitHub (default: neither).
    pub auth: crate::http::auth::AuthOptions,
    /// `/metrics`: its bearer, its listener, its labels.
    pub metrics: MetricsOptions,
}

impl RouterOptions {
    /// Deliveries at `webhook_path` signed with `secret`, reads with the
    /// bearer `api_token`, in App mode; the rest as by default.
    pub fn keyed(webhook_path: &str, secret: &str, api_token: &str) -> RouterOptions {
        RouterOptions {
            webhook_path: webhook_path.into(),
            secrets: vec![secret.into()],
            api_token: Some(api_token.into()),
            ..RouterOptions::default()
        }
    }
}

/// What an area needs to mount its routes, besides `State`.
pub(crate) struct Mount {
    /// Where GitHub posts deliveries (`WEBHOOK_PATH`).
    pub webhook_path: String,
    /// The body budget every route that reads a body shares (`limits::guard`).
    pub doors: limits::Doors,
}

impl Mount {
    /// The guard of a route whose handler reads its whole body.
    pub(crate) fn buffered(&self) -> limits::Doors {
        self.doors.clone()
    }

    /// The guard of a route whose handler streams its body.
    pub(crate) fn streamed(&self) -> limits::Doors {
        self.doors.with_mode(limits::BodyMode::Streamed)
    }
}

/// An area of the HTTP surface: its routes, declared in its own file.
type Area = fn(&Mount) -> Router<State>;

/// Every area, named once: a new endpoint goes into its area's `routes`, a
/// new area gets a line here.
const AREAS: &[Area] = &[
    webhook::routes,
    manifests::routes,
    api::routes,
    reconcile::routes,
    backfill::routes,
    series::routes,
    export::routes,
    health::routes,
    openapi::routes,
    dashboard::routes,
    auth::routes,
    assets::routes,
];

/// What every handler of a router over `app` reaches.
fn server_state(app: &App, options: &RouterOptions) -> State {
    Arc::new(ServerState {
        store: app.store.clone(),
        shared: app.shared.clone(),
        writer: app.writer.clone(),
        secrets: options.secrets.clone(),
        auth: Arc::new(
            crate::http::auth::Auth::new(
                options.auth.clone(),
                app.store.clone(),
                options.api_token.clone(),
            )
            .with_github(app.shared.github.get().cloned()),
        ),
        api_token: options.api_token.clone(),
        listen_only: options.listen_only,
        oidc: options.oidc.clone(),
        limits: options.limits.clone(),
        metrics: options.metrics.clone(),
        reads: budget::ReadBudget::from_env(),
    })
}

/// `/metrics` alone, for its own listener (`METRICS_ADDR`; the main router
/// is built with `MetricsOptions::own_listener`), with the same headers.
pub(crate) fn metrics_router(app: &App, options: &RouterOptions) -> Router {
    let policy = Arc::new(headers::Policy::new(&options.auth.web_url));
    Router::new()
        .route(
            "/metrics",
            axum::routing::get(health::metrics_on_own_listener),
        )
        .layer(axum::middleware::from_fn(errors::uniform))
        .layer(from_fn_with_state(policy, headers::secure))
        .with_state(server_state(app, options))
}

pub fn router(app: &App, options: RouterOptions) -> Router {
    let state = server_state(app, &options);
    let mount = Mount {
        webhook_path: if options.webhook_path.is_empty() {
            "/api/github/webhooks".to_string()
        } else {
            options.webhook_path
        },
        doors: limits::Doors::new(&options.limits),
    };
    let policy = Arc::new(headers::Policy::new(&options.auth.web_url));
    AREAS
        .iter()
        .fold(Router::new(), |router, area| router.merge(area(&mount)))
        .layer(from_fn_with_state(
            state.clone(),
            crate::http::auth::setup::intercept,
        ))
        .layer(axum::middleware::from_fn(errors::uniform))
        .layer(from_fn_with_state(policy, headers::secure))
        .with_state(state)
}

/// A server running on a background task, for `serve`, the demo and tests.
pub struct RunningServer {
    pub addr: std::net::SocketAddr,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl RunningServer {
    /// Bind `addr` (port 0 picks a free one) and serve `router` until `stop`,
    /// under the default connection limits.
    pub async fn start(
        router: Router,
        addr: std::net::SocketAddr,
    ) -> std::io::Result<RunningServer> {
        Self::start_with(router, addr, &Limits::default()).await
    }

    /// As `start`, with `limits.max_connections` connections at most and
    /// `limits.header_timeout` for headers and between requests.
    pub(crate) async fn start_with(
        router: Router,
        addr: std::net::SocketAddr,
        limits: &Limits,
    ) -> std::io::Result<RunningServer> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        Self::serve_on(listener, router, limits)
    }

    /// As `start_with`, on a listener already bound (a caller that must
    /// know its URL before it builds the router binds first: no window in
    /// which another socket could take the port).
    pub fn serve_on(
        listener: tokio::net::TcpListener,
        router: Router,
        limits: &Limits,
    ) -> std::io::Result<RunningServer> {
        let addr = listener.local_addr()?;
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(accept::serve(listener, router, limits.clone(), rx));
        Ok(RunningServer {
            addr,
            shutdown: Some(tx),
            task,
        })
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stop accepting, finish in-flight requests, and wait.
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        let _ = (&mut self.task).await;
    }
}
