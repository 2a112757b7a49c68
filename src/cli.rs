//! The command line (DESIGN.md §3). Every `serve` setting is also an env var.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{bail, Context};
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::app::{App, AppOptions};
use crate::client::{load_delivery, parse_scenario, replay_files, Client};
use crate::clock::Clock;
use crate::demo::{self, DemoOptions};
use crate::github::backfill::{self, Backfill, BackfillOptions};
use crate::github::harvest::{self, HarvestOptions, Harvester};
use crate::github::publisher::{self, Publisher, PublisherOptions};
use crate::github::reconciler::{self, Reconciler, ReconcilerOptions};
use crate::github::redelivery::{Redeliverer, RedeliveryOptions};
use crate::github::{AppCredentials, GitHubClient, RetryPolicy};
use crate::model::OutcomeRecord;
use crate::oidc::{request_actions_token, OidcConfig, OidcVerifier};
use crate::report::{parse_window, Report};
use crate::server::{router, Limits, RouterOptions, RunningServer};
use crate::signature::parse_secrets;
use crate::store::Store;

#[derive(Parser, Debug)]
#[command(
    name = "safe-outcomes",
    version,
    about = "What really became of your AI agents' writes to GitHub"
)]
pub struct Cli {
    #[arg(long, env = "LOG_LEVEL", global = true, default_value = "info")]
    pub log_level: String,
    #[arg(long, env = "LOG_FORMAT", global = true, value_enum, default_value_t = LogFormat::Pretty)]
    pub log_format: LogFormat,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum LogFormat {
    Pretty,
    Json,
}

#[derive(Subcommand, Debug)]
// Parsed once per process: the size of `serve`'s arguments does not matter.
#[allow(clippy::large_enum_variant)]
pub enum Command {
    /// Run the App: webhook receiver, manifest ingest, evaluator, read API.
    Serve(ServeArgs),
    /// Replay the bundled scenario through an in-process server and print the report.
    Demo(DemoArgs),
    /// Send recorded deliveries (files, a folder, or a scenario .jsonl) to a server, signed.
    Replay(ReplayArgs),
    /// Post a gh-aw safe-output-items.jsonl to a server.
    Record(RecordArgs),
    /// Print the report from a store or a server.
    Report(ReportArgs),
    /// Run gh-aw-format conformance cases through the API-state evaluation path.
    Conformance {
        /// A JSON array of cases (item, responses, errors, expected).
        file: PathBuf,
    },
    /// Print the evaluation spec (docs/evaluation.md), rendered from the code.
    Spec,
    /// Backfill the gh-aw runs of the last N days of an installation's
    /// repositories, on a running server (POST /api/v1/backfill).
    Backfill(BackfillArgs),
    /// Rewrite the store's live records into a fresh store (the server must be stopped).
    Compact {
        #[arg(long, env = "DATA_DIR", default_value = "./data")]
        data_dir: PathBuf,
    },
    /// List the inbox items moved aside after failing, or put them back in
    /// the inbox once fixed (the server must be stopped).
    DeadLetters(DeadLettersArgs),
    /// Measure the performance targets (DESIGN.md §8) against baselines.
    Bench(crate::bench::BenchArgs),
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The GitHub App's numeric id; unset: listen-only mode.
    #[arg(long, env = "APP_ID")]
    pub app_id: Option<String>,
    #[arg(long, env = "PRIVATE_KEY", hide_env_values = true)]
    pub private_key: Option<String>,
    #[arg(long, env = "PRIVATE_KEY_PATH")]
    pub private_key_path: Option<PathBuf>,
    /// Comma-separated: several secrets are accepted during rotation.
    #[arg(long, env = "WEBHOOK_SECRET", hide_env_values = true)]
    pub webhook_secret: Option<String>,
    #[arg(long, env = "PORT", default_value_t = 3000)]
    pub port: u16,
    #[arg(long, env = "HOST", default_value = "127.0.0.1")]
    pub host: String,
    #[arg(long, env = "WEBHOOK_PATH", default_value = "/api/github/webhooks")]
    pub webhook_path: String,
    #[arg(long, env = "DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,
    #[arg(long, env = "GITHUB_API_URL", default_value = "https://api.github.com")]
    pub github_api_url: String,
    /// Bearer token for the read API and manifest ingest.
    #[arg(long, env = "API_TOKEN", hide_env_values = true)]
    pub api_token: Option<String>,
    /// Accept GitHub Actions OIDC tokens with this audience on manifest ingest
    /// (unset: OIDC tokens are refused).
    #[arg(long, env = "OIDC_AUDIENCE")]
    pub oidc_audience: Option<String>,
    /// Issuer of the OIDC tokens (GHES: https://HOST/_services/token).
    #[arg(long, env = "OIDC_ISSUER", default_value = crate::oidc::GITHUB_ACTIONS_ISSUER)]
    pub oidc_issuer: String,
    /// Repository owners (logins or numeric ids, comma-separated) whose OIDC
    /// tokens are accepted besides the accounts the App is installed on.
    #[arg(long, env = "OIDC_ALLOWED_OWNERS", value_delimiter = ',')]
    pub oidc_allowed_owners: Vec<String>,
    /// Base URL users reach this server at, for links in check runs
    /// (default: http://HOST:PORT).
    #[arg(long, env = "PUBLIC_URL")]
    pub public_url: Option<String>,
    /// Seconds between looks for missed webhook deliveries to redeliver
    /// (App mode; 0: only at start-up).
    #[arg(long, env = "REDELIVERY_INTERVAL_SECS", default_value_t = 600)]
    pub redelivery_interval_secs: u64,
    /// Days of gh-aw runs backfilled for a new installation or repository.
    #[arg(long, env = "BACKFILL_DAYS", default_value_t = 30)]
    pub backfill_days: u32,
    /// API requests kept in reserve: the backfill pauses at this many left
    /// until the rate limit resets.
    #[arg(long, env = "BACKFILL_RESERVE", default_value_t = 500)]
    pub backfill_reserve: u64,
    /// Longest wait, while paused, between looks at the rate limit (seconds).
    #[arg(long, env = "BACKFILL_POLL_SECS", default_value_t = 60)]
    pub backfill_poll_secs: u64,
    /// Open connections served at once; more wait until one closes.
    #[arg(long, env = "MAX_CONNECTIONS", default_value_t = 4096)]
    pub max_connections: usize,
    /// Seconds a connection may take to send request headers, or stay idle
    /// between requests, before it is closed.
    #[arg(long, env = "HEADER_TIMEOUT_SECS", default_value_t = 10)]
    pub header_timeout_secs: u64,
    /// Seconds a request body may take to arrive (slower: 408).
    #[arg(long, env = "BODY_TIMEOUT_SECS", default_value_t = 60)]
    pub body_timeout_secs: u64,
    /// Body bytes all requests together may hold in memory (over: 503 with
    /// Retry-After).
    #[arg(long, env = "BODY_BUDGET_BYTES", default_value_t = 64 * 1024 * 1024)]
    pub body_budget_bytes: usize,
    /// Items (non-blank lines) a manifest may have (more: 413).
    #[arg(long, env = "MANIFEST_MAX_LINES", default_value_t = 100_000)]
    pub manifest_max_lines: usize,
    /// Bytes a manifest line may have (longer: that line is rejected).
    #[arg(long, env = "MANIFEST_MAX_LINE_BYTES", default_value_t = 64 * 1024)]
    pub manifest_max_line_bytes: usize,
    /// Sign-in with GitHub and the setup page.
    #[command(flatten)]
    pub auth: crate::auth::AuthArgs,
}

impl ServeArgs {
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

#[derive(Args, Debug)]
pub struct BackfillArgs {
    /// Days of history.
    #[arg(long, default_value_t = 30)]
    pub days: u32,
    /// Only this repository (owner/name); default: every repository of the
    /// active installations.
    #[arg(long)]
    pub repo: Option<String>,
    /// Base URL of the running server.
    #[arg(
        long,
        env = "SAFE_OUTCOMES_URL",
        default_value = "http://127.0.0.1:3000"
    )]
    pub to: String,
    #[arg(long, env = "API_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

#[derive(Args, Debug)]
pub struct DeadLettersArgs {
    #[command(subcommand)]
    pub action: DeadLetterAction,
    #[arg(long, env = "DATA_DIR", default_value = "./data", global = true)]
    pub data_dir: PathBuf,
}

#[derive(Subcommand, Debug)]
pub enum DeadLetterAction {
    /// One line per dead letter: id (inbox sequence), time, attempts, item, error.
    List,
    /// Move dead letters back to the tail of the inbox; the next start processes them.
    Replay {
        /// The dead letter's id (its inbox sequence, from `list`).
        #[arg(long, required_unless_present = "all", conflicts_with = "all")]
        id: Option<u64>,
        /// Every dead letter.
        #[arg(long)]
        all: bool,
    },
}

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Where to keep the demo's store and JSONL (default: a new temporary folder).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Replay another scenario file instead of the bundled one.
    #[arg(long)]
    pub scenario: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ReplayArgs {
    pub path: PathBuf,
    /// Base URL of the server, e.g. http://127.0.0.1:3000
    #[arg(long)]
    pub to: String,
    #[arg(long, env = "WEBHOOK_SECRET", hide_env_values = true)]
    pub secret: Option<String>,
    /// Bearer token, for the manifest steps of a scenario.
    #[arg(long, env = "API_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    #[arg(long, env = "WEBHOOK_PATH", default_value = "/api/github/webhooks")]
    pub webhook_path: String,
}

#[derive(Args, Debug)]
pub struct RecordArgs {
    #[arg(long)]
    pub manifest: PathBuf,
    #[arg(long, env = "GITHUB_REPOSITORY")]
    pub repo: String,
    #[arg(long, env = "GITHUB_RUN_ID")]
    pub run_id: u64,
    #[arg(long)]
    pub workflow: Option<String>,
    #[arg(
        long,
        env = "SAFE_OUTCOMES_URL",
        default_value = "http://127.0.0.1:3000"
    )]
    pub to: String,
    #[arg(long, env = "API_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Without a token, inside GitHub Actions: request an OIDC token for this
    /// audience (the server's OIDC_AUDIENCE) and post with it.
    #[arg(long, env = "SAFE_OUTCOMES_AUDIENCE")]
    pub audience: Option<String>,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum ReportFormat {
    Table,
    Json,
    Jsonl,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    #[arg(long)]
    pub repo: Option<String>,
    /// 1h, 24h, 7d or 30d: the outcome as of that checkpoint.
    #[arg(long)]
    pub window: Option<String>,
    #[arg(long, value_enum, default_value_t = ReportFormat::Table)]
    pub format: ReportFormat,
    #[arg(long, env = "DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,
    /// Read from a running server instead of the store.
    #[arg(long)]
    pub from: Option<String>,
    #[arg(long, env = "API_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

pub fn init_logging(level: &str, format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_new(level)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Json => builder.json().try_init(),
        LogFormat::Pretty => builder.try_init(),
    };
}

pub async fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Serve(args) => serve(args).await,
        Command::Demo(args) => run_demo(args).await,
        Command::Replay(args) => replay(args).await,
        Command::Record(args) => record(args).await,
        Command::Report(args) => report(args).await,
        Command::Conformance { file } => conformance(&file),
        Command::Spec => {
            print!("{}", crate::spec::render().map_err(anyhow::Error::msg)?);
            Ok(())
        }
        Command::Backfill(args) => request_backfill(args).await,
        Command::Compact { data_dir } => compact(&data_dir),
        Command::DeadLetters(args) => dead_letters(&args),
        Command::Bench(args) => crate::bench::run(args).await,
    }
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let secrets = args
        .webhook_secret
        .as_deref()
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
    let oidc = args.oidc_audience.as_deref().map(|audience| {
        let config = OidcConfig::new(&args.oidc_issuer, audience)
            .with_allowed_owners(&args.oidc_allowed_owners);
        tracing::info!(
            "accepting GitHub Actions OIDC tokens from {} for audience {audience:?} on manifest ingest, \
             from the App's installations and {:?}",
            config.issuer,
            config.allowed_owners
        );
        Arc::new(OidcVerifier::new(config))
    });
    let public_url = args
        .public_url
        .clone()
        .unwrap_or_else(|| format!("http://{}:{}", args.host, args.port));
    let (changes, inbox) = publisher::channel();
    let (reconcile_requests, reconcile_inbox) = reconciler::channel();
    let (harvests, harvest_inbox) = harvest::channel();
    let backfill_options = BackfillOptions {
        days: args.backfill_days,
        reserve: args.backfill_reserve,
        poll: std::time::Duration::from_secs(args.backfill_poll_secs.max(1)),
        ..BackfillOptions::default()
    };
    let (backfills, backfill_inbox) = backfill::channel(&backfill_options);
    let app = App::start_with(
        &args.data_dir,
        Clock::System,
        AppOptions {
            pr_changes: github.is_some().then(|| changes.clone()),
            reconcile_requests: github.is_some().then(|| reconcile_requests.clone()),
            harvest_requests: github.is_some().then(|| harvests.clone()),
            backfill_requests: github.is_some().then(|| backfills.clone()),
        },
    )?;
    let tasks = github.map(|(app_id, crab)| {
        tracing::info!(
            app_id,
            api = %args.github_api_url,
            "App mode: check runs are published, unseen outputs reconciled from the API, missed deliveries redelivered, gh-aw manifests harvested"
        );
        // One client: one token cache per installation, one call count.
        let client = Arc::new(GitHubClient::new(
            crab,
            app.shared.github_calls.clone(),
            RetryPolicy::default(),
        ));
        // GET /app: wrong credentials show on /status at once.
        crate::github::verify::spawn(client.clone());
        let publisher = Publisher::new(
            app.store.clone(),
            Clock::System,
            client.clone(),
            PublisherOptions::new(&public_url),
        )
        .spawn(&changes, inbox);
        let reconciler = Reconciler::new(
            app.store.clone(),
            Clock::System,
            client.clone(),
            app.writer.clone(),
            ReconcilerOptions::default(),
        )
        .with_stats(app.shared.reconcile_stats.clone())
        .spawn(&reconcile_requests, reconcile_inbox);
        let (signal_requests, signals_inbox) = crate::github::signals::channel();
        let _ = app.shared.signal_requests.set(signal_requests.clone());
        let signals = crate::github::signals::SignalFetcher::new(
            app.store.clone(),
            Clock::System,
            client.clone(),
            app.writer.clone(),
        )
        .spawn(&signal_requests, signals_inbox);
        let harvester = Harvester::new(
            app.store.clone(),
            Clock::System,
            client.clone(),
            app.writer.clone(),
            HarvestOptions::default(),
        )
        .spawn(&harvests, harvest_inbox);
        let backfill = Backfill::new(
            &app,
            Clock::System,
            client.clone(),
            HarvestOptions::default(),
            backfill_options,
        )
        .spawn(&backfills, backfill_inbox);
        let redeliverer = Redeliverer::new(
            app.store.clone(),
            client,
            Clock::System,
            RedeliveryOptions {
                interval: std::time::Duration::from_secs(args.redelivery_interval_secs),
                ..RedeliveryOptions::default()
            },
        )
        .spawn();
        (publisher, reconciler, harvester, redeliverer, backfill, signals)
    });
    let routes = router(
        &app,
        RouterOptions {
            webhook_path: args.webhook_path.clone(),
            secrets,
            api_token: args.api_token.clone(),
            listen_only,
            oidc,
            limits: args.limits(),
            auth: args.auth.options(
                &public_url,
                &args.github_api_url,
                &args.webhook_path,
                !listen_only,
            ),
        },
    );
    let addr: std::net::SocketAddr = format!("{}:{}", args.host, args.port)
        .parse()
        .with_context(|| {
            format!(
                "HOST {:?} / PORT {} is not an address",
                args.host, args.port
            )
        })?;
    let server = RunningServer::start_with(routes, addr, &args.limits()).await?;
    // On stdout too, so a supervisor (or a test) that asked for PORT=0 learns the port.
    println!("listening on {}", server.url());
    tracing::info!(
        "listening on {} (webhooks at {}, data in {})",
        server.url(),
        args.webhook_path,
        args.data_dir.display()
    );
    shutdown_signal().await;
    tracing::info!("shutting down");
    server.stop().await;
    if let Some((publisher, reconciler, harvester, redeliverer, backfill, signals)) = tasks {
        redeliverer.abort();
        backfill.stop().await;
        signals.stop().await;
        reconciler.stop().await;
        harvester.stop().await;
        publisher.stop().await;
    }
    tokio::task::spawn_blocking(move || app.shutdown()).await?;
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("install SIGTERM handler");
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}

async fn run_demo(args: DemoArgs) -> anyhow::Result<()> {
    let data_dir = match args.data_dir {
        Some(d) => d,
        None => std::env::temp_dir().join(format!(
            "safe-outcomes-demo-{}-{}",
            std::process::id(),
            chrono::Utc::now().timestamp()
        )),
    };
    let scenario = match &args.scenario {
        Some(p) => {
            Some(std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?)
        }
        None => None,
    };
    let started = std::time::Instant::now();
    let result = demo::run(DemoOptions { data_dir, scenario }).await?;
    println!(
        "Replayed {} steps (signed webhook deliveries and gh-aw manifests) through the real HTTP path in {:.1}s.\n",
        result.steps,
        started.elapsed().as_secs_f64()
    );
    for answer in &result.manifest_answers {
        if let Some(rejected) = answer
            .get("rejected")
            .and_then(|r| r.as_array())
            .filter(|r| !r.is_empty())
        {
            for r in rejected {
                println!(
                    "manifest line {} skipped: {}",
                    r["line"],
                    r["error"].as_str().unwrap_or("")
                );
            }
        }
    }
    for r in &result.refusals {
        println!("step {} refused with {}: {}", r.step, r.status, r.body);
    }
    println!("\n{}", result.report.to_table());
    println!("{}", demo::outcome_table(&result.outcomes));
    println!("Outcome records (JSONL): {}", result.jsonl_path.display());
    println!(
        "Store: {}   (try: safe-outcomes report --data-dir {} --window 7d)",
        result.data_dir.display(),
        result.data_dir.display()
    );
    Ok(())
}

async fn replay(args: ReplayArgs) -> anyhow::Result<()> {
    let client = Client::new(&args.to, args.secret.clone(), args.token.clone())
        .with_webhook_path(&args.webhook_path);
    if args.secret.is_none() {
        eprintln!("warning: no --secret / WEBHOOK_SECRET: deliveries go unsigned and a server will refuse them");
    }
    let (mut sent, mut refused) = (0, 0);
    for file in replay_files(&args.path)? {
        let answers = if file.extension().is_some_and(|e| e == "jsonl") {
            let steps = parse_scenario(&std::fs::read_to_string(&file)?)?;
            let mut answers = Vec::new();
            for step in &steps {
                answers.extend(client.send_step(step).await?);
            }
            answers
        } else {
            let (event, delivery, body) = load_delivery(&file)?;
            vec![client.deliver(&event, &delivery, &body).await?]
        };
        for a in answers {
            sent += 1;
            if a.status >= 300 {
                refused += 1;
                eprintln!("{}: {} {}", file.display(), a.status, a.body);
            }
        }
    }
    println!("sent {sent}, refused {refused}");
    if refused > 0 {
        bail!("{refused} of {sent} were refused");
    }
    Ok(())
}

async fn record(args: RecordArgs) -> anyhow::Result<()> {
    let body = std::fs::read_to_string(&args.manifest)
        .with_context(|| format!("reading {}", args.manifest.display()))?;
    let client = Client::new(&args.to, None, record_token(&args).await?);
    let answer = client
        .post_manifest(&args.repo, args.run_id, args.workflow.as_deref(), body)
        .await?;
    println!("{}", serde_json::to_string_pretty(&answer.body)?);
    if answer.status >= 300 {
        bail!("the server answered {}", answer.status);
    }
    Ok(())
}

/// Ask the running server to backfill: the server holds the store (and the
/// App's credentials, token cache and rate-limit budget), so the command
/// does not open the store itself.
async fn request_backfill(args: BackfillArgs) -> anyhow::Result<()> {
    let client = Client::new(&args.to, None, args.token.clone());
    let mut body = serde_json::json!({ "days": args.days });
    if let Some(repo) = &args.repo {
        body["repo"] = serde_json::json!(repo);
    }
    let answer = client.post_json("/api/v1/backfill", &body).await?;
    println!("{}", serde_json::to_string_pretty(&answer.body)?);
    if answer.status >= 300 {
        bail!("the server answered {}", answer.status);
    }
    Ok(())
}

/// One line per case, then `N passed, N failed`; an error (exit 1) on any failure.
fn compact(data_dir: &std::path::Path) -> anyhow::Result<()> {
    let done = crate::store::compact::compact(&crate::app::store_path(data_dir))
        .with_context(|| format!("compacting the store in {}", data_dir.display()))?;
    println!(
        "compacted {}: {} records, {:.1} MiB → {:.1} MiB",
        data_dir.display(),
        done.records,
        done.bytes_before as f64 / 1048576.0,
        done.bytes_after as f64 / 1048576.0
    );
    Ok(())
}

/// `dead-letters list|replay`: on a stopped server's store only (sled's
/// lock refuses a second opener; the inbox writer keeps its sequence in memory).
fn dead_letters(args: &DeadLettersArgs) -> anyhow::Result<()> {
    use crate::store::dead_letters::Replay;
    let path = crate::app::store_path(&args.data_dir);
    if !path.join("conf").is_file() {
        bail!(
            "no store at {} (set --data-dir or DATA_DIR)",
            path.display()
        );
    }
    let store = Store::open(&path).map_err(|e| {
        anyhow::anyhow!(
            "{e} — stop the server using {} first",
            args.data_dir.display()
        )
    })?;
    match &args.action {
        DeadLetterAction::List => {
            let letters = store.dead_letters()?;
            for l in &letters {
                println!(
                    "{}\t{}\t{} attempt(s)\t{}\t{}",
                    l.seq,
                    l.failed_at.to_rfc3339(),
                    l.attempts,
                    l.summary(),
                    l.error
                );
            }
            println!("{} dead letter(s)", letters.len());
        }
        DeadLetterAction::Replay { id, all } => {
            let which = match (id, all) {
                (Some(id), false) => Replay::One(*id),
                _ => Replay::All,
            };
            let queued = store.replay_dead_letters(which)?;
            println!(
                "{} dead letter(s) moved back to the inbox; the next start processes them",
                queued.len()
            );
        }
    }
    Ok(())
}

fn conformance(file: &std::path::Path) -> anyhow::Result<()> {
    let json =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let results = crate::conformance::run_cases(&json).map_err(anyhow::Error::msg)?;
    for r in &results {
        println!("{}", r.line);
    }
    println!("{}", crate::conformance::summary(&results));
    let failed = results.iter().filter(|r| !r.passed).count();
    if failed > 0 {
        bail!("{failed} conformance case(s) failed");
    }
    Ok(())
}

/// `--token`/API_TOKEN when given; else, inside GitHub Actions, an OIDC
/// token for `--audience` from the Actions runtime.
async fn record_token(args: &RecordArgs) -> anyhow::Result<Option<String>> {
    if let Some(token) = args.token.clone().filter(|t| !t.is_empty()) {
        return Ok(Some(token));
    }
    let env = |name| std::env::var(name).ok().filter(|v: &String| !v.is_empty());
    let (Some(url), Some(request_token)) = (
        env("ACTIONS_ID_TOKEN_REQUEST_URL"),
        env("ACTIONS_ID_TOKEN_REQUEST_TOKEN"),
    ) else {
        eprintln!("warning: no --token / API_TOKEN and no GitHub Actions OIDC environment (permissions: id-token: write): posting without a token");
        return Ok(None);
    };
    let audience = args.audience.as_deref().context(
        "to use GitHub Actions OIDC, pass --audience (or SAFE_OUTCOMES_AUDIENCE): the server's OIDC_AUDIENCE",
    )?;
    Ok(Some(
        request_actions_token(&url, &request_token, audience).await?,
    ))
}

async fn report(args: ReportArgs) -> anyhow::Result<()> {
    let window = match args.window.as_deref() {
        Some(w) => Some(
            parse_window(w)
                .with_context(|| format!("--window {w:?} is not one of 1h, 24h, 7d, 30d"))?,
        ),
        None => None,
    };
    let outcomes: Vec<OutcomeRecord> = match &args.from {
        Some(url) => {
            let client = Client::new(url, None, args.token.clone());
            let answer = client.get("/api/v1/export.jsonl").await?;
            if answer.status != 200 {
                bail!("{url} answered {}: {}", answer.status, answer.body);
            }
            answer
                .body
                .as_str()
                .unwrap_or_default()
                .lines()
                .map(serde_json::from_str)
                .collect::<Result<_, _>>()?
        }
        None => {
            let path = crate::app::store_path(&args.data_dir);
            if !path.exists() {
                bail!(
                    "no store at {} (set --data-dir or DATA_DIR)",
                    path.display()
                );
            }
            let store = Store::open(&path).map_err(|e| {
                anyhow::anyhow!(
                    "{e} — if a server is running on this DATA_DIR, use --from URL instead"
                )
            })?;
            let prefix = args
                .repo
                .as_deref()
                .map(|r| format!("{r}:"))
                .unwrap_or_default();
            let mut out = Vec::new();
            for stored in store.outputs(&prefix, None) {
                out.extend(stored?.outcome);
            }
            out
        }
    };
    let report = Report::build(&outcomes, args.repo.as_deref(), window, chrono::Utc::now());
    match args.format {
        ReportFormat::Table => print!("{}", report.to_table()),
        ReportFormat::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        ReportFormat::Jsonl => {
            for o in outcomes.iter().filter(|o| {
                args.repo
                    .as_deref()
                    .is_none_or(|r| o.safe_output_id.starts_with(&format!("{r}:")))
            }) {
                println!("{}", serde_json::to_string(o)?);
            }
        }
    }
    Ok(())
}
