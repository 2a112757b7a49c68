//! `safe-outcomes serve`: the App behind the HTTP server until SIGINT/SIGTERM.
//! Every setting is also an env var.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::Args;

use crate::app::{App, AppConfig, ClientFactory, GitHubConfig};
use crate::github::backfill::BackfillOptions;
use crate::github::redelivery::RedeliveryOptions;
use crate::github::{AppCredentials, GitHubClient, RetryPolicy};
use crate::http::{router, Limits, RouterOptions, RunningServer};
use crate::ingest::oidc::{OidcConfig, OidcVerifier};
use crate::ingest::signature::parse_secrets;
use crate::model::clock::Clock;
use crate::settings::{self, Secret};

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The GitHub App's numeric id; unset: listen-only mode.
    #[arg(long, env = crate::settings::APP_ID.name)]
    pub app_id: Option<String>,
    /// The App's private key (PEM), inline.
    #[arg(long, env = crate::settings::PRIVATE_KEY.name, hide_env_values = true)]
    pub private_key: Option<Secret>,
    /// The App's private key (PEM), as a file.
    #[arg(long, env = crate::settings::PRIVATE_KEY_PATH.name)]
    pub private_key_path: Option<PathBuf>,
    /// Comma-separated: several secrets are accepted during rotation.
    #[arg(long, env = crate::settings::WEBHOOK_SECRET.name, hide_env_values = true)]
    pub webhook_secret: Option<Secret>,
    /// The port to listen on (0: any free one).
    #[arg(long, env = crate::settings::PORT.name, default_value_t = 3000)]
    pub port: u16,
    /// The address to listen on.
    #[arg(long, env = crate::settings::HOST.name, default_value = "127.0.0.1")]
    pub host: String,
    /// The route GitHub posts webhook deliveries to.
    #[arg(long, env = crate::settings::WEBHOOK_PATH.name, default_value = "/api/github/webhooks")]
    pub webhook_path: String,
    /// Where the sled store lives (unless DATABASE_URL is set).
    #[arg(long, env = crate::settings::DATA_DIR.name, default_value = "./data")]
    pub data_dir: PathBuf,
    /// GitHub's REST API (GHES: https://HOST/api/v3).
    #[arg(long, env = crate::settings::GITHUB_API_URL.name, default_value = "https://api.github.com")]
    pub github_api_url: String,
    /// Bearer token for the read API and manifest ingest.
    #[arg(long, env = crate::settings::API_TOKEN.name, hide_env_values = true)]
    pub api_token: Option<Secret>,
    /// Accept GitHub Actions OIDC tokens with this audience on manifest ingest
    /// (unset: OIDC tokens are refused).
    #[arg(long, env = crate::settings::OIDC_AUDIENCE.name)]
    pub oidc_audience: Option<String>,
    /// Issuer of the OIDC tokens (GHES: https://HOST/_services/token).
    #[arg(long, env = crate::settings::OIDC_ISSUER.name, default_value = crate::ingest::oidc::GITHUB_ACTIONS_ISSUER)]
    pub oidc_issuer: String,
    /// Repository owners (logins or numeric ids, comma-separated) whose OIDC
    /// tokens are accepted besides the accounts the App is installed on.
    #[arg(long, env = crate::settings::OIDC_ALLOWED_OWNERS.name, value_delimiter = ',')]
    pub oidc_allowed_owners: Vec<String>,
    /// Base URL users reach this server at, for links in check runs
    /// (default: http://HOST:PORT).
    #[arg(long, env = crate::settings::PUBLIC_URL.name)]
    pub public_url: Option<String>,
    /// Seconds between looks for missed webhook deliveries to redeliver
    /// (App mode; 0: only at start-up).
    #[arg(long, env = crate::settings::REDELIVERY_INTERVAL_SECS.name, default_value_t = 600)]
    pub redelivery_interval_secs: u64,
    /// Create check runs on PRs already closed when the App first learned of
    /// them (backfilled or reconciled ones); by default they get none.
    #[arg(long, env = crate::settings::CHECK_RUNS_ON_CLOSED_PRS.name, default_value_t = false)]
    pub check_runs_on_closed_prs: bool,
    /// Days of gh-aw runs backfilled for a new installation or repository.
    #[arg(long, env = crate::settings::BACKFILL_DAYS.name, default_value_t = 30)]
    pub backfill_days: u32,
    /// API requests kept in reserve: the backfill pauses at this many left
    /// until the rate limit resets.
    #[arg(long, env = crate::settings::BACKFILL_RESERVE.name, default_value_t = 500)]
    pub backfill_reserve: u64,
    /// Longest wait, while paused, between looks at the rate limit (seconds).
    #[arg(long, env = crate::settings::BACKFILL_POLL_SECS.name, default_value_t = 60)]
    pub backfill_poll_secs: u64,
    /// Open connections served at once; more wait until one closes.
    #[arg(long, env = crate::settings::MAX_CONNECTIONS.name, default_value_t = 4096)]
    pub max_connections: usize,
    /// Seconds a connection may take to send request headers, or stay idle
    /// between requests, before it is closed.
    #[arg(long, env = crate::settings::HEADER_TIMEOUT_SECS.name, default_value_t = 10)]
    pub header_timeout_secs: u64,
    /// Seconds a request body may take to arrive (slower: 408).
    #[arg(long, env = crate::settings::BODY_TIMEOUT_SECS.name, default_value_t = 60)]
    pub body_timeout_secs: u64,
    /// Body bytes all requests together may hold in memory (over: 503 with
    /// Retry-After).
    #[arg(long, env = crate::settings::BODY_BUDGET_BYTES.name, default_value_t = 64 * 1024 * 1024)]
    pub body_budget_bytes: usize,
    /// Items (non-blank lines) a manifest may have (more: 413).
    #[arg(long, env = crate::settings::MANIFEST_MAX_LINES.name, default_value_t = 100_000)]
    pub manifest_max_lines: usize,
    /// Bytes a manifest line may have (longer: that line is rejected).
    #[arg(long, env = crate::settings::MANIFEST_MAX_LINE_BYTES.name, default_value_t = 64 * 1024)]
    pub manifest_max_line_bytes: usize,
    /// What an acknowledged delivery survives: `process-crash` (sled's
    /// flush) or `power-loss` (also an `fdatasync` per group commit).
    #[arg(long, env = crate::settings::DURABILITY.name, value_enum, default_value_t = DurabilityArg::ProcessCrash)]
    pub durability: DurabilityArg,
    /// Hours a webhook delivery id is remembered to refuse a redelivery of
    /// it (GitHub allows redelivery for 3 days).
    #[arg(long, env = crate::settings::DEDUP_WINDOW_HOURS.name, default_value_t = 192,
          value_parser = clap::value_parser!(i64).range(1..))]
    pub dedup_window_hours: i64,
    /// PostgreSQL URL (postgres://…): run on PostgreSQL, where several
    /// replicas may share one database; without it, sled under DATA_DIR.
    #[arg(long, env = crate::settings::DATABASE_URL.name, hide_env_values = true)]
    pub database_url: Option<Secret>,
    /// The bearer token `/metrics` requires (unset: the API_TOKEN; neither:
    /// `/metrics` refuses everyone on the main listener).
    #[arg(long, env = crate::settings::METRICS_TOKEN.name, hide_env_values = true)]
    pub metrics_token: Option<Secret>,
    /// Serve `/metrics` on this address of its own (host:port, the
    /// Prometheus convention) instead of the main listener; there it needs
    /// METRICS_TOKEN only when one is set.
    #[arg(long, env = crate::settings::METRICS_ADDR.name)]
    pub metrics_addr: Option<std::net::SocketAddr>,
    /// Label the outputs gauge by workflow (the busiest 20, the rest as
    /// "other"); off by default: workflow names say what an org automates.
    #[arg(long, env = crate::settings::METRICS_WORKFLOW_LABELS.name, value_parser = clap::builder::BoolishValueParser::new())]
    pub metrics_workflow_labels: bool,
    /// Export outcome spans over OTLP (HTTP/protobuf) to this collector:
    /// URL/v1/traces (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, a full URL, wins).
    #[arg(long, env = crate::settings::OTEL_EXPORTER_OTLP_ENDPOINT.name, value_name = "URL")]
    pub otlp_endpoint: Option<String>,
    /// Sign-in with GitHub and the setup page.
    #[command(flatten)]
    pub auth: crate::http::auth::AuthArgs,
}

/// `--durability` / `DURABILITY`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DurabilityArg {
    ProcessCrash,
    PowerLoss,
}

impl ServeArgs {
    /// The store settings these arguments set (`SAFE_OUTCOMES_PAGE_IN`
    /// from the environment: `settings::store_settings`).
    pub(crate) fn store_settings(&self) -> crate::store::Settings {
        crate::store::Settings {
            page_in: crate::settings::store_settings().page_in,
            durability: Some(match self.durability {
                DurabilityArg::ProcessCrash => crate::store::Durability::ProcessCrash,
                DurabilityArg::PowerLoss => crate::store::Durability::PowerLoss,
            }),
            dedup_window_hours: Some(self.dedup_window_hours),
        }
    }

    /// Who may read `/metrics`, where, with which labels.
    pub fn metrics(&self) -> crate::http::MetricsOptions {
        crate::http::MetricsOptions {
            token: self.metrics_token.clone().filter(|t| !t.is_empty()),
            own_listener: self.metrics_addr.is_some(),
            workflow_labels: self.metrics_workflow_labels,
        }
    }

    /// The HTTP limits these arguments set.
    pub fn limits(&self) -> Limits {
        Limits {
            max_connections: self.max_connections,
            header_timeout: std::time::Duration::from_secs(self.header_timeout_secs),
            body_timeout: std::time::Duration::from_secs(self.body_timeout_secs),
            body_budget: self.body_budget_bytes,
            manifest_max_lines: self.manifest_max_lines,
            manifest_max_line_bytes: self.manifest_max_line_bytes,
            ..Limits::default()
        }
    }
}

pub async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    // First: a SIGTERM at any point from here (say, the moment /ping answers) stops cleanly.
    let stop = super::stop::StopSignals::install();
    let secrets = args
        .webhook_secret
        .as_ref()
        .map(parse_secrets)
        .unwrap_or_default();
    if secrets.is_empty() {
        tracing::warn!(
            "WEBHOOK_SECRET is not set: every webhook delivery will be refused with 401"
        );
    }
    // A bad APP_ID, key or API URL stops start-up with an error naming it.
    let github = match args.app_id.as_deref().filter(|id| !id.trim().is_empty()) {
        None => None,
        Some(id) => {
            let creds = AppCredentials::from_config(
                id,
                args.private_key.clone(),
                args.private_key_path.clone(),
            )?;
            Some((creds.app_id(), creds.app_client(&args.github_api_url)?))
        }
    };
    let listen_only = github.is_none();
    if listen_only {
        tracing::info!("APP_ID is not set: listen-only mode (no GitHub API calls, no check runs)");
    }
    let oidc = oidc_verifier(&args);
    let public_url = args
        .public_url
        .clone()
        .unwrap_or_else(|| format!("http://{}:{}", args.host, args.port));
    let github = github.map(|(app_id, crab)| {
        tracing::info!(
            app_id,
            api = %args.github_api_url,
            "App mode: check runs are published, unseen outputs reconciled from the API, missed deliveries redelivered, gh-aw manifests harvested"
        );
        github_tasks(crab, &public_url, &args)
    });
    let running = App::launch(AppConfig {
        data_dir: args.data_dir.clone(),
        clock: Clock::System,
        github,
        database_url: args.database_url.clone(),
    })?;
    let traces_url = crate::app::otlp::traces_url_from_env()
        .filter(|_| settings::is_set(&settings::OTEL_EXPORTER_OTLP_TRACES_ENDPOINT))
        .or_else(|| {
            args.otlp_endpoint
                .as_deref()
                .map(crate::app::otlp::traces_url)
        });
    let otlp = match traces_url {
        Some(url) => Some(crate::app::otlp::start(&running.app.shared, &url)?),
        None => None,
    };
    let mut auth = args.auth.options(
        &public_url,
        &args.github_api_url,
        &args.webhook_path,
        !listen_only,
    );
    auth.warnings = crate::http::auth::warnings::startup(
        args.public_url.as_deref(),
        &public_url,
        crate::settings::exposed(&args.api_token).is_some_and(|t| !t.trim().is_empty()),
    );
    for warning in &auth.warnings {
        tracing::warn!("{warning}");
    }
    let setup = auth.setup.is_some();
    let options = RouterOptions {
        webhook_path: args.webhook_path.clone(),
        secrets,
        api_token: args.api_token.clone(),
        listen_only,
        oidc,
        limits: args.limits(),
        auth,
        metrics: args.metrics(),
    };
    let metrics = match args.metrics_addr {
        Some(addr) => {
            let routes = crate::http::metrics_router(&running.app, &options);
            let server = RunningServer::start_with(routes, addr, &args.limits())
                .await
                .with_context(|| format!("METRICS_ADDR {addr}: cannot listen"))?;
            let _ = super::exit::emit_line(format!("metrics on {}/metrics", server.url()));
            Some(server)
        }
        None => {
            if args.metrics_token.is_none() && args.api_token.is_none() {
                tracing::info!("/metrics refuses every scrape: set METRICS_TOKEN (a bearer) or METRICS_ADDR (a listener of its own)");
            }
            None
        }
    };
    let routes = router(&running.app, options);
    let addr: std::net::SocketAddr = format!("{}:{}", args.host, args.port)
        .parse()
        .with_context(|| {
            format!(
                "HOST {:?} / PORT {} is not an address",
                args.host, args.port
            )
        })?;
    let server = RunningServer::start_with(routes, addr, &args.limits())
        .await
        .with_context(|| match args.port {
            0 => format!("PORT 0: cannot listen on {addr}"),
            port => format!(
                "PORT {port}: cannot listen on {addr} (is another process using it? PORT=0 picks a free one)"
            ),
        })?;
    // On stdout too, so a supervisor (or a test) that asked for PORT=0 learns the port.
    // A closed stdout must not stop the server: the line is only a courtesy.
    let _ = super::exit::emit_line(format!("listening on {}", server.url()));
    tracing::info!(
        "listening on {} (webhooks at {}, data in {})",
        server.url(),
        args.webhook_path,
        args.data_dir.display()
    );
    if setup {
        print_setup_link(
            &running.app.store,
            args.public_url.as_deref(),
            &server.url(),
        )?;
    }
    stop.wait().await;
    tracing::info!("shutting down");
    server.stop().await;
    if let Some(metrics) = metrics {
        metrics.stop().await;
    }
    let stopped = running.stop().await;
    if let Some(otlp) = otlp {
        otlp.stop().await;
    }
    stopped
}

/// Print the one-time setup link (its key only on stdout, this terminal's,
/// like Jupyter's token; the log says where it is).
fn print_setup_link(
    store: &crate::store::Store,
    public_url: Option<&str>,
    bound: &str,
) -> anyhow::Result<()> {
    let key = crate::http::auth::setup::begin(store).context("the setup key")?;
    let base = public_url
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .unwrap_or(bound);
    // A closed stdout must not stop the server: the link is then nowhere,
    // and the log says so (a restart with a readable stdout prints a new one).
    let shown = super::exit::emit_line(format!(
        "setup: register the GitHub App at {}",
        crate::http::auth::setup::setup_link(base, key.expose_secret())
    ));
    if shown.is_err() {
        tracing::warn!("stdout is closed: the one-time setup link could not be printed; restart serve with a readable stdout to get one");
        return Ok(());
    }
    tracing::info!(
        "no App credentials: the setup page at {base}/ registers a GitHub App for whoever opens \
         the setup link printed on stdout (it holds a one-time key)"
    );
    Ok(())
}

/// Every GitHub task, on one client (one token cache per installation, one
/// call count), with the options `serve`'s arguments set.
fn github_tasks(crab: octocrab::Octocrab, public_url: &str, args: &ServeArgs) -> GitHubConfig {
    let client: ClientFactory =
        Box::new(|calls| Ok(GitHubClient::new(crab, calls, RetryPolicy::default())));
    let mut config = GitHubConfig::everything(
        client,
        public_url,
        BackfillOptions {
            days: args.backfill_days,
            reserve: args.backfill_reserve,
            poll: std::time::Duration::from_secs(args.backfill_poll_secs.max(1)),
            ..BackfillOptions::default()
        },
        RedeliveryOptions {
            interval: std::time::Duration::from_secs(args.redelivery_interval_secs),
            ..RedeliveryOptions::default()
        },
    );
    if let Some(p) = config.publisher.as_mut() {
        p.closed_prs = args.check_runs_on_closed_prs;
        p.web_url = (args.auth.github_web_url.clone())
            .unwrap_or_else(|| crate::http::auth::web_url_for(&args.github_api_url));
    }
    config
}

/// The OIDC verifier for manifest ingest, when `OIDC_AUDIENCE` is set.
fn oidc_verifier(args: &ServeArgs) -> Option<Arc<OidcVerifier>> {
    args.oidc_audience.as_deref().map(|audience| {
        let config = OidcConfig::new(&args.oidc_issuer, audience)
            .with_allowed_owners(&args.oidc_allowed_owners);
        tracing::info!(
            "accepting GitHub Actions OIDC tokens from {} for audience {audience:?} on manifest ingest, \
             from the App's installations and {:?}",
            config.issuer,
            config.allowed_owners
        );
        Arc::new(OidcVerifier::new(config))
    })
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::store::Durability;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        serve: ServeArgs,
    }

    fn parse(args: &[&str]) -> Result<ServeArgs, clap::Error> {
        Cli::try_parse_from(std::iter::once("serve").chain(args.iter().copied())).map(|c| c.serve)
    }

    #[test]
    fn store_flags_set_the_store_settings() {
        let args = parse(&["--durability", "power-loss", "--dedup-window-hours", "24"]).unwrap();
        let settings = args.store_settings();
        assert_eq!(settings.durability, Some(Durability::PowerLoss));
        assert_eq!(settings.dedup_window_hours, Some(24));
    }

    #[test]
    fn metrics_flags_set_the_metrics_options() {
        let m = parse(&[]).unwrap().metrics();
        assert_eq!(
            (m.token, m.own_listener, m.workflow_labels),
            (None, false, false)
        );
        let args = parse(&[
            "--metrics-token",
            "s3",
            "--metrics-addr",
            "127.0.0.1:9464",
            "--metrics-workflow-labels",
        ])
        .unwrap();
        let m = args.metrics();
        assert_eq!(crate::settings::exposed(&m.token), Some("s3"));
        assert!(m.own_listener && m.workflow_labels);
        assert!(parse(&["--metrics-addr", "nowhere"]).is_err());
    }

    #[test]
    fn bad_store_flags_are_refused() {
        for bad in [
            &["--durability", "disk"][..],
            &["--dedup-window-hours", "0"],
            &["--dedup-window-hours", "a week"],
        ] {
            let e = parse(bad).map(|_| ()).unwrap_err();
            use clap::error::ErrorKind::{InvalidValue, ValueValidation};
            assert!(
                matches!(e.kind(), InvalidValue | ValueValidation),
                "{bad:?}: {e}"
            );
        }
    }
}
