//! `safe-outcomes report`: the report from a stopped server's store
//! (`--data-dir`) or from a running server (`--server URL`), cut by the read
//! API's filters (`-R`, `--workflow`, `--type`, `--status`, `--strength`,
//! `--since`, `--until`) and taken at a checkpoint (`--window`).
//!
//! `--format jsonl` writes the outcome records themselves; with `--window`,
//! each record as of that checkpoint (its verdict and `evaluated_at` are the
//! window's snapshot), and outputs that have not reached it are left out, as
//! the report leaves them out. `--json FIELDS` picks top-level fields of the
//! report (`--jq` filters them). A repository nothing was recorded for is
//! exit 4.
//!
//! `--weekly`: acceptance week by week per workflow (`weekly`). `--web`:
//! the dashboard's page instead (`web`).

use std::io::Write;

use anyhow::Context;
use clap::{Args, ValueEnum};

use super::exit::{fail, Exit};
use super::json::{schema_fields, JsonArgs};
use super::source::{FilterArgs, Source, SourceArgs};
use crate::model::OutcomeRecord;
use crate::read::export::Format;
use crate::read::line_survival::{line_survival, to_table};
use crate::read::query::RepoScope;
use crate::read::report::{parse_window, Report};

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum ReportFormat {
    /// The report as a table for people.
    Table,
    /// The report as JSON (the fields of GET /api/v1/report).
    Json,
    /// The outcome records, one JSON object a line.
    Jsonl,
    /// One opentraces TraceRecord (schema 0.9.0) per output.
    Opentraces,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    #[command(flatten)]
    pub filter: FilterArgs,
    /// The outcome as of this checkpoint: 1h, 24h, 7d or 30d (default: the latest).
    #[arg(long, value_name = "WINDOW", value_parser = window_parser())]
    pub window: Option<String>,
    /// What to print.
    #[arg(long, value_enum, default_value_t = ReportFormat::Table)]
    pub format: ReportFormat,
    /// Acceptance week by week, per workflow (table, or --format json), at
    /// one window (--window, or the latest every output has reached).
    #[arg(long)]
    pub weekly: bool,
    /// Open the dashboard's page of this report in the browser (the overview;
    /// with --weekly, the workflows page) on --server; prints its address
    /// when stdout is not a terminal or there is no browser.
    #[arg(short = 'w', long, conflicts_with_all = ["json", "jq"])]
    pub web: bool,
    #[command(flatten)]
    pub json: JsonArgs,
    #[command(flatten)]
    pub source: SourceArgs,
}

fn window_parser() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(crate::model::CHECKPOINTS.map(|(name, _)| name))
}

pub async fn report(args: ReportArgs) -> anyhow::Result<()> {
    let json_fields = args.json.fields(&schema_fields("Report"))?;
    if json_fields.is_some() && args.format != ReportFormat::Table {
        return Err(fail(
            Exit::Usage,
            "--json and --format cannot be used together",
        ));
    }
    if args.web {
        let mut query = args.filter.to_query();
        if let Some(w) = &args.window {
            query.push(("window", w.clone()));
        }
        let path = if args.weekly { "/workflows" } else { "/" };
        return super::web::open(&super::web::page_url(&args.source, path, &query)?);
    }
    let source = args.source.open()?;
    let repo = args.filter.repo.as_deref();
    if args.weekly {
        if json_fields.is_some() {
            return Err(fail(
                Exit::Usage,
                "--json picks fields of the report; with --weekly use --format json",
            ));
        }
        let weekly = super::weekly::build(&source, &args.filter, args.window.as_deref()).await?;
        if weekly.workflows.is_empty() && weekly.no_workflow == 0 {
            source.require_known_repo(repo).await?;
        }
        return match args.format {
            ReportFormat::Table => {
                super::exit::emit(&super::weekly::table(&weekly, super::exit::for_terminal()))
            }
            ReportFormat::Json => {
                super::exit::emit(&format!("{}\n", serde_json::to_string_pretty(&weekly)?))
            }
            _ => Err(fail(
                Exit::Usage,
                "--weekly prints a table or --format json",
            )),
        };
    }
    match args.format {
        ReportFormat::Opentraces if args.window.is_some() => Err(fail(
            Exit::Usage,
            "--window does not apply to --format opentraces (a trace record carries every window)",
        )),
        ReportFormat::Jsonl | ReportFormat::Opentraces => {
            let written = records(&source, &args).await?;
            if written == 0 {
                source.require_known_repo(repo).await?;
            }
            Ok(())
        }
        ReportFormat::Table | ReportFormat::Json => {
            let report = build(&source, &args).await?;
            if report.totals.total_safe_outputs == 0 && report.not_yet_at_window == 0 {
                source.require_known_repo(repo).await?;
            }
            if let Some(fields) = json_fields {
                return args.json.print(&report, &fields);
            }
            if args.format == ReportFormat::Json {
                return super::exit::emit(&format!("{}\n", serde_json::to_string_pretty(&report)?));
            }
            super::exit::emit(&format!(
                "{}{}",
                report.to_table(),
                to_table(&report.line_survival)
            ))
        }
    }
}

/// The report of the cut, from the store or the server.
async fn build(source: &Source, args: &ReportArgs) -> anyhow::Result<Report> {
    let window = args.window.as_deref().and_then(parse_window);
    match source {
        Source::Server(remote) => {
            let mut query = args.filter.to_query();
            if let Some(w) = window {
                query.push(("window", w.to_string()));
            }
            let body = remote.get_json("/api/v1/report", &query).await?;
            serde_json::from_value(body).context("reading the server's report")
        }
        Source::Store(store) => {
            let filter = args.filter.to_filter()?;
            let mut outcomes: Vec<OutcomeRecord> = Vec::new();
            for stored in filter.scan(store, &RepoScope::All, &filter.id_prefix(), None) {
                outcomes.extend(stored?.outcome);
            }
            let mut report = Report::build(
                &outcomes,
                filter.repo.as_deref(),
                window,
                chrono::Utc::now(),
            );
            report.line_survival = line_survival(store, &filter, &RepoScope::All)?;
            Ok(report)
        }
    }
}

/// Write the records of the cut (outcome records as of `--window`, or
/// opentraces records) to stdout as they are read; returns how many.
async fn records(source: &Source, args: &ReportArgs) -> anyhow::Result<u64> {
    let format = match args.format {
        ReportFormat::Opentraces => Format::Opentraces,
        _ => Format::Jsonl,
    };
    let window = args.window.as_deref().and_then(parse_window);
    let out = &mut std::io::BufWriter::new(std::io::stdout().lock());
    let mut written = 0;
    let mut put = |line: &[u8]| -> anyhow::Result<()> {
        let line = match (format, window) {
            (Format::Jsonl, Some(w)) => match as_of(line, w)? {
                Some(l) => l,
                None => return Ok(()),
            },
            _ => line.to_vec(),
        };
        out.write_all(&line)?;
        out.write_all(b"\n")?;
        written += 1;
        Ok(())
    };
    match source {
        Source::Server(remote) => {
            let mut query = args.filter.to_query();
            if format == Format::Opentraces {
                query.push(("format", "opentraces".into()));
            }
            remote
                .get_lines("/api/v1/export", &query, |l| put(l))
                .await?;
        }
        Source::Store(store) => {
            let filter = args.filter.to_filter()?;
            let mut failed = None;
            crate::read::export::write_lines(store, &filter, &RepoScope::All, format, |line| {
                let line = line.strip_suffix(b"\n").unwrap_or(&line);
                failed = put(line).err();
                failed.is_none()
            })?;
            if let Some(e) = failed {
                return Err(e);
            }
        }
    }
    out.flush()?;
    Ok(written)
}

/// A record line as of checkpoint `window`: the window's verdict in place of
/// the latest; `None` when the output has not reached it.
fn as_of(line: &[u8], window: &str) -> anyhow::Result<Option<Vec<u8>>> {
    let mut record: OutcomeRecord =
        serde_json::from_slice(line).context("reading an outcome record")?;
    let Some(snapshot) = record.windows.get(window).cloned() else {
        return Ok(None);
    };
    record.outcome_status = snapshot.outcome_status;
    record.evidence_strength = snapshot.evidence_strength;
    record.gh_aw_signal =
        crate::model::signal::gh_aw_word(&snapshot.human_check_signal).to_string();
    record.human_check_signal = snapshot.human_check_signal;
    record.evaluated_at = snapshot.evaluated_at;
    if record.outcome_status != crate::model::OutcomeStatus::Accepted {
        record.time_to_acceptance_hours = None;
    }
    if let Some(hours) = crate::model::CHECKPOINTS
        .iter()
        .find(|(n, _)| *n == window)
        .map(|(_, h)| *h)
    {
        record.evaluation_window_hours = hours;
    }
    Ok(Some(serde_json::to_vec(&record)?))
}
