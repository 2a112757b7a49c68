//! `safe-outcomes report`: the report from a stopped server's store or
//! from a running server's export.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::{Args, ValueEnum};

use crate::ingest::client::Client;
use crate::model::OutcomeRecord;
use crate::read::line_survival::{line_survival, to_table, LineTotals};
use crate::read::query::{ReadFilter, RepoScope};
use crate::read::report::{parse_window, Report};

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum ReportFormat {
    Table,
    Json,
    Jsonl,
    /// One opentraces TraceRecord (schema 0.9.0) per output.
    Opentraces,
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
    /// Read the store on PostgreSQL (instead of sled under --data-dir).
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    pub database_url: Option<String>,
    /// Read from a running server instead of the store.
    #[arg(long)]
    pub from: Option<String>,
    #[arg(long, env = "API_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

pub async fn report(args: ReportArgs) -> anyhow::Result<()> {
    if args.format == ReportFormat::Opentraces {
        let (from, repo) = (args.from.as_deref(), args.repo.as_deref());
        let out = &mut std::io::stdout().lock();
        return crate::read::export::cli::report_opentraces(
            from,
            args.token,
            (&args.data_dir, args.database_url.as_deref()),
            repo,
            out,
        )
        .await;
    }
    let window = match args.window.as_deref() {
        Some(w) => Some(
            parse_window(w)
                .with_context(|| format!("--window {w:?} is not one of 1h, 24h, 7d, 30d"))?,
        ),
        None => None,
    };
    let (outcomes, line_survival): (Vec<OutcomeRecord>, _) = match &args.from {
        Some(url) => {
            let client = Client::new(url, None, args.token.clone());
            let answer = client.get("/api/v1/export.jsonl").await?;
            if answer.status != 200 {
                bail!("{url} answered {}: {}", answer.status, answer.body);
            }
            let outcomes = answer
                .body
                .as_str()
                .unwrap_or_default()
                .lines()
                .map(serde_json::from_str)
                .collect::<Result<_, _>>()?;
            (
                outcomes,
                remote_line_survival(&client, args.repo.as_deref()).await?,
            )
        }
        None => {
            let store =
                crate::store::open_for_reading(&args.data_dir, args.database_url.as_deref())?;
            let filter = ReadFilter {
                repo: args.repo.clone(),
                ..ReadFilter::default()
            };
            let mut out = Vec::new();
            for stored in filter.scan(&store, &RepoScope::All, &filter.id_prefix(), None) {
                out.extend(stored?.outcome);
            }
            (out, line_survival(&store, &filter, &RepoScope::All)?)
        }
    };
    let mut report = Report::build(&outcomes, args.repo.as_deref(), window, chrono::Utc::now());
    report.line_survival = line_survival;
    match args.format {
        ReportFormat::Table => {
            print!("{}", report.to_table());
            print!("{}", to_table(&report.line_survival));
        }
        ReportFormat::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        ReportFormat::Opentraces => unreachable!("answered above"),
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

/// The running server's line survival per workflow (its report's section).
async fn remote_line_survival(
    client: &Client,
    repo: Option<&str>,
) -> anyhow::Result<BTreeMap<String, LineTotals>> {
    let query = repo
        .map(|r| {
            format!(
                "?{}",
                serde_urlencoded::to_string([("repo", r)]).unwrap_or_default()
            )
        })
        .unwrap_or_default();
    let answer = client.get(&format!("/api/v1/report{query}")).await?;
    if answer.status != 200 {
        bail!(
            "the server's report answered {}: {}",
            answer.status,
            answer.body
        );
    }
    match answer.body.get("line_survival") {
        None | Some(serde_json::Value::Null) => Ok(BTreeMap::new()),
        Some(v) => Ok(serde_json::from_value(v.clone())?),
    }
}
