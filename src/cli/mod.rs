//! The command line: one file per command, the clap enum and the dispatch
//! here. Every `serve` setting is also an env var.
//! The demo (`demo`: the bundled scenario through an in-process server)
//! is a command too.
//!
//! In the `gh` style: the reading commands take the read API's cuts
//! (`-R/--repo`, `--workflow`, `--status`, `--since`, …: `source`) and
//! `--json FIELDS`/`--jq` (`json`); every command that talks to a server
//! names it `--server URL` (`SAFE_OUTCOMES_URL`); exit codes mean something
//! and a closed stdout ends a command quietly (`exit`); long work shows
//! progress on a terminal (`progress`); every flag has help (a test walks
//! the tree).
//!
//! May import: every room.

mod allocator;
mod backfill;
mod compact;
mod conformance;
mod dead_letters;
pub mod demo;
pub(crate) mod exit;
mod json;
mod migrate;
mod outputs;
mod progress;
mod record;
mod replay;
mod report;
mod serve;
mod source;
mod stop;
mod web;
mod weekly;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand, ValueEnum};

pub use allocator::{no_transparent_huge_pages, purge_freed_pages_at_once};
pub(crate) use backfill::BackfillArgs;
pub(crate) use dead_letters::DeadLettersArgs;
pub(crate) use demo::DemoArgs;
pub use exit::{emit, exit_code, is_broken_pipe, quiet_on_closed_pipe};
pub(crate) use outputs::OutputsArgs;
pub(crate) use record::RecordArgs;
pub(crate) use replay::ReplayArgs;
pub(crate) use report::ReportArgs;
pub(crate) use serve::ServeArgs;

#[derive(Parser, Debug)]
#[command(
    name = "safe-outcomes",
    version,
    about = "What really became of your AI agents' writes to GitHub"
)]
pub struct Cli {
    /// What to log on stderr: a level (trace, debug, info, warn, error, off) or target=level directives.
    #[arg(long, env = crate::settings::LOG_LEVEL.name, global = true, default_value = "info")]
    pub log_level: String,
    /// How logs are written: pretty (colours on a terminal) or json.
    #[arg(long, env = crate::settings::LOG_FORMAT.name, global = true, value_enum, default_value_t = LogFormat::Pretty)]
    pub log_format: LogFormat,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum LogFormat {
    /// Lines for people (colours only on a terminal).
    Pretty,
    /// One JSON object a line.
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
    /// List outputs with their outcome, from a store or a server (like `gh run list`).
    Outputs(OutputsArgs),
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
        /// The store's folder.
        #[arg(long, env = crate::settings::DATA_DIR.name, default_value = "./data")]
        data_dir: PathBuf,
        /// A PostgreSQL store has nothing to compact (VACUUM is PostgreSQL's):
        /// given, the command says so and changes nothing.
        #[arg(long, env = crate::settings::DATABASE_URL.name, hide_env_values = true)]
        database_url: Option<crate::settings::Secret>,
    },
    /// Copy a sled store (stopped) into PostgreSQL: idempotent, resumable.
    Migrate {
        /// DATA_DIR of the sled store.
        #[arg(long)]
        from: PathBuf,
        /// The PostgreSQL URL (postgres://…).
        #[arg(long, env = crate::settings::DATABASE_URL.name, hide_env_values = true)]
        to: crate::settings::Secret,
    },
    /// List the inbox items moved aside after failing, or put them back in
    /// the inbox once fixed (the server must be stopped).
    DeadLetters(DeadLettersArgs),
    /// Measure the performance targets (docs/architecture.md, "Performance targets") against baselines.
    Bench(crate::bench::BenchArgs),
}

/// Where a command that talks to a running server finds it: the same flag
/// everywhere (`--server`; `--to` is its older spelling, kept for one version).
#[derive(Args, Debug)]
pub struct ServerArgs {
    /// Base URL of the running server.
    #[arg(
        long = "server",
        alias = "to",
        value_name = "URL",
        env = crate::settings::SAFE_OUTCOMES_URL.name,
        default_value = "http://127.0.0.1:3000"
    )]
    pub url: String,
    /// Bearer token for the server's API.
    #[arg(long, env = crate::settings::API_TOKEN.name, hide_env_values = true)]
    pub token: Option<crate::settings::Secret>,
}

impl ServerArgs {
    /// The token's value, for the HTTP client that sends it.
    pub(crate) fn token_value(&self) -> Option<String> {
        crate::settings::exposed(&self.token).map(str::to_string)
    }
}

/// Start logging to stderr at `level` (`LOG_LEVEL`: a level, or
/// comma-separated `target=level` directives). A level that is not one is
/// refused, not silently replaced. Colours only on a terminal.
pub fn init_logging(level: &str, format: LogFormat) -> anyhow::Result<()> {
    check_log_level(level)?;
    let filter = tracing_subscriber::EnvFilter::try_new(level)
        .map_err(|e| anyhow::anyhow!("LOG_LEVEL {level:?}: {e}"))?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Json => builder.json().try_init(),
        LogFormat::Pretty => builder.try_init(),
    };
    Ok(())
}

const LEVELS: [&str; 6] = ["trace", "debug", "info", "warn", "error", "off"];

/// Every directive of `LOG_LEVEL` must end in a level: `info`, or
/// `safe_outcomes=debug` (tracing would read a typo like `inof` as a target
/// name and log nothing at all).
pub(crate) fn check_log_level(level: &str) -> anyhow::Result<()> {
    for directive in level.split(',').map(str::trim) {
        let named = directive.rsplit('=').next().unwrap_or(directive);
        if !LEVELS.contains(&named.to_ascii_lowercase().as_str()) {
            anyhow::bail!(
                "LOG_LEVEL {level:?}: {directive:?} is not a level ({}) or target=level",
                LEVELS.join(", ")
            );
        }
    }
    Ok(())
}

/// Load `path` (`.env`) into the environment if it exists; variables already
/// set win. A file that cannot be read or parsed stops start-up, named.
pub fn load_dotenv(path: &Path) -> anyhow::Result<()> {
    match dotenvy::from_path(path) {
        Ok(()) => Ok(()),
        Err(dotenvy::Error::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(anyhow::anyhow!("{}: {e}", path.display())),
    }
}

pub async fn run(cli: Cli) -> anyhow::Result<()> {
    // The store reads no variable: its settings come from here, before any
    // command opens it (`serve`'s parsed flags win over the environment's).
    let store_settings = match &cli.command {
        Command::Serve(args) => args.store_settings(),
        _ => crate::settings::store_settings(),
    };
    crate::store::configure(store_settings);
    match cli.command {
        Command::Serve(args) => serve::serve(args).await,
        Command::Demo(args) => demo::run_demo(args).await,
        Command::Replay(args) => replay::replay(args).await,
        Command::Record(args) => record::record(args).await,
        Command::Report(args) => report::report(args).await,
        Command::Outputs(args) => outputs::outputs(args).await,
        Command::Conformance { file } => conformance::conformance(&file),
        Command::Spec => emit(&crate::judge::spec::render().map_err(anyhow::Error::msg)?),
        Command::Backfill(args) => backfill::request_backfill(args).await,
        Command::Compact {
            data_dir,
            database_url,
        } => match database_url {
            Some(_) => anyhow::bail!(
                "compact rewrites a sled store; on PostgreSQL the database reclaims room \
                 itself (autovacuum; VACUUM FULL by hand) — nothing done"
            ),
            None => compact::compact(&data_dir),
        },
        Command::Migrate { from, to } => migrate::migrate(&from, to.expose_secret()),
        Command::DeadLetters(args) => dead_letters::dead_letters(&args),
        Command::Bench(args) => crate::bench::run(args).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_level_typos_are_refused() {
        for good in [
            "info",
            "WARN",
            "safe_outcomes=debug,info",
            "off",
            "a::b=trace, warn",
        ] {
            assert!(check_log_level(good).is_ok(), "{good}");
        }
        for bad in ["inof", "", "info,", "safe_outcomes=verbose", "debgu"] {
            let e = check_log_level(bad).unwrap_err().to_string();
            assert!(e.starts_with("LOG_LEVEL"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_dotenv_fills_in_and_the_environment_wins() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".env");
        std::fs::write(
            &path,
            "SO_TEST_DOTENV_ONLY=from-file\nSO_TEST_DOTENV_BOTH=from-file\n",
        )
        .unwrap();
        std::env::set_var("SO_TEST_DOTENV_BOTH", "from-env");
        load_dotenv(&path).unwrap();
        assert_eq!(std::env::var("SO_TEST_DOTENV_ONLY").unwrap(), "from-file");
        assert_eq!(std::env::var("SO_TEST_DOTENV_BOTH").unwrap(), "from-env");
        // No file: nothing to do; a broken one is named.
        load_dotenv(&dir.path().join("absent.env")).unwrap();
        std::fs::write(&path, "NOT A VALID LINE\n").unwrap();
        let e = load_dotenv(&path).unwrap_err().to_string();
        assert!(e.contains(".env"), "{e}");
    }

    /// Every flag and argument of every command has help text.
    #[test]
    fn every_flag_has_help() {
        use clap::CommandFactory;
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            let path = format!("{path} {}", cmd.get_name());
            if cmd.get_about().is_none() && cmd.get_long_about().is_none() && path.contains(' ') {
                missing.push(format!("{path} (the command)"));
            }
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if id == "help" || id == "version" {
                    continue;
                }
                if arg.get_help().is_none() && arg.get_long_help().is_none() {
                    missing.push(format!("{path} {id}"));
                }
            }
            for sub in cmd.get_subcommands() {
                if sub.get_name() != "help" {
                    walk(sub, &path, missing);
                }
            }
        }
        let mut missing = Vec::new();
        walk(&Cli::command(), "", &mut missing);
        assert!(
            missing.is_empty(),
            "flags without help:\n  {}",
            missing.join("\n  ")
        );
    }
}
