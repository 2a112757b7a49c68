//! The command line: one file per command, the clap enum and the dispatch
//! here. Every `serve` setting is also an env var.

mod backfill;
mod compact;
mod conformance;
mod dead_letters;
mod demo;
mod record;
mod replay;
mod report;
mod serve;

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

pub use backfill::BackfillArgs;
pub use dead_letters::{DeadLetterAction, DeadLettersArgs};
pub use demo::DemoArgs;
pub use record::RecordArgs;
pub use replay::ReplayArgs;
pub use report::{ReportArgs, ReportFormat};
pub use serve::ServeArgs;

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
    /// Measure the performance targets (docs/architecture.md, "Performance targets") against baselines.
    Bench(crate::bench::BenchArgs),
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
        Command::Serve(args) => serve::serve(args).await,
        Command::Demo(args) => demo::run_demo(args).await,
        Command::Replay(args) => replay::replay(args).await,
        Command::Record(args) => record::record(args).await,
        Command::Report(args) => report::report(args).await,
        Command::Conformance { file } => conformance::conformance(&file),
        Command::Spec => {
            print!("{}", crate::spec::render().map_err(anyhow::Error::msg)?);
            Ok(())
        }
        Command::Backfill(args) => backfill::request_backfill(args).await,
        Command::Compact { data_dir } => compact::compact(&data_dir),
        Command::DeadLetters(args) => dead_letters::dead_letters(&args),
        Command::Bench(args) => crate::bench::run(args).await,
    }
}
