//! The command line (DESIGN.md §3). Every `serve` setting is also an env var.

use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::app::App;
use crate::client::{load_delivery, parse_scenario, replay_files, Client};
use crate::clock::Clock;
use crate::demo::{self, DemoOptions};
use crate::model::OutcomeRecord;
use crate::report::{parse_window, Report};
use crate::server::{router, RouterOptions, RunningServer};
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
    /// Measure the performance targets (DESIGN.md §8) against baselines.
    Bench(crate::bench::BenchArgs),
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    #[arg(long, env = "APP_ID")]
    pub app_id: Option<u64>,
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
    #[arg(long)]
    pub repo: String,
    #[arg(long)]
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
    let listen_only = args.app_id.is_none();
    if listen_only {
        tracing::info!("APP_ID is not set: listen-only mode (no GitHub API calls, no check runs)");
    } else if args.private_key.is_none() && args.private_key_path.is_none() {
        bail!("APP_ID is set but neither PRIVATE_KEY nor PRIVATE_KEY_PATH is");
    }
    let app = App::start(&args.data_dir, Clock::System)?;
    let routes = router(
        &app,
        RouterOptions {
            webhook_path: args.webhook_path.clone(),
            secrets,
            api_token: args.api_token.clone(),
            listen_only,
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
    let server = RunningServer::start(routes, addr).await?;
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
    let client = Client::new(&args.to, None, args.token.clone());
    let answer = client
        .post_manifest(&args.repo, args.run_id, args.workflow.as_deref(), body)
        .await?;
    println!("{}", serde_json::to_string_pretty(&answer.body)?);
    if answer.status >= 300 {
        bail!("the server answered {}", answer.status);
    }
    Ok(())
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
            let path = args.data_dir.join("store");
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
