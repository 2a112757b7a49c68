//! `safe-outcomes outputs`: the outputs of a cut, in output id order, like
//! `gh run list`: `-R owner/name --status rejected --since 7d`,
//! a table for people, or `--json FIELDS` (the outcome record's own field
//! names, and the list's `next_window`, `next_window_due_at`,
//! `verdict_final`) with `--jq`. Each output says where it stands in its
//! windows: the next one and when it is due, or `final`. As `gh` does, the
//! table has a header and aligned columns on a terminal, and is
//! tab-separated rows without a header when piped. From the store
//! (`--data-dir`) or a server (`--server URL`, through
//! `GET /api/v1/outputs`). A repository nothing was recorded for is exit 4.
//!
//! `safe-outcomes outputs view ID`, like `gh run view`: one output in a few
//! lines (what, verdict and why, each window, the next one or final, its
//! target and Actions run), or `--json FIELDS`; an unknown id is exit 4.
//!
//! `--run RUN_ID` (with `-R`) lists one run's outputs, as `gh run view`
//! does; `--web` on any of them opens the dashboard's page instead (the
//! list, the run's page, the output's page: `web`).

use clap::Args;

use super::exit::emit;
use super::json::{schema_fields, JsonArgs};
use super::source::{FilterArgs, Source, SourceArgs};
use std::io::IsTerminal;

use crate::model::escape::terminal;
use crate::model::OutcomeRecord;
use crate::read::listed::{self, ListedOutput};
use crate::read::query::RepoScope;

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct OutputsArgs {
    #[command(subcommand)]
    pub view: Option<OutputsCommand>,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Only the outputs of this run (its Actions run id; needs -R OWNER/NAME),
    /// like `gh run view`; with --web, the run's page.
    #[arg(long, value_name = "RUN_ID", requires = "repo")]
    pub run: Option<u64>,
    /// At most this many outputs.
    #[arg(short = 'L', long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    pub limit: u64,
    #[command(flatten)]
    pub json: JsonArgs,
    /// Open the dashboard's list of these outputs (the same cuts) in the
    /// browser, on --server; prints its address when stdout is not a
    /// terminal or there is no browser.
    #[arg(short = 'w', long, conflicts_with_all = ["json", "jq"])]
    pub web: bool,
    #[command(flatten)]
    pub source: SourceArgs,
}

#[derive(clap::Subcommand, Debug)]
pub enum OutputsCommand {
    /// One output: its verdict and why, each window, what comes next (like `gh run view`).
    View(ViewArgs),
}

#[derive(Args, Debug)]
pub struct ViewArgs {
    /// The output's id (`owner/repo:RUN:N`, as `outputs` lists it).
    pub id: String,
    #[command(flatten)]
    pub json: JsonArgs,
    /// Open the output's page of the dashboard in the browser, on --server;
    /// prints its address when stdout is not a terminal or there is no
    /// browser.
    #[arg(short = 'w', long, conflicts_with_all = ["json", "jq"])]
    pub web: bool,
    #[command(flatten)]
    pub source: SourceArgs,
}

/// Server pages are asked for in this size at most.
const PAGE: u64 = 1000;

/// The fields `--json` offers: the record's, then the list's own.
fn available_fields() -> Vec<String> {
    let mut available = schema_fields("OutcomeRecord");
    available.extend(listed::FIELDS.map(String::from));
    available
}

pub async fn outputs(args: OutputsArgs) -> anyhow::Result<()> {
    if let Some(OutputsCommand::View(view)) = args.view {
        return view_one(view).await;
    }
    if args.web {
        let url = match (args.run, &args.filter.repo) {
            (Some(run), Some(repo)) => {
                let cuts: Vec<_> = args
                    .filter
                    .to_query()
                    .into_iter()
                    .filter(|(k, _)| *k != "repo")
                    .collect();
                let path = format!("/runs/{}/{run}", crate::model::escape::url_path(repo));
                super::web::page_url(&args.source, &path, &cuts)?
            }
            _ => super::web::page_url(&args.source, "/outputs", &args.filter.to_query())?,
        };
        return super::web::open(&url);
    }
    let fields = args.json.fields(&available_fields())?;
    let source = args.source.open()?;
    let records: Vec<ListedOutput> = read(&source, &args)
        .await?
        .into_iter()
        .map(ListedOutput::of)
        .collect();
    if records.is_empty() {
        source
            .require_known_repo(args.filter.repo.as_deref())
            .await?;
    }
    match fields {
        Some(fields) => args.json.print(&records, &fields),
        None => emit(&table(&records, for_terminal())),
    }
}

/// Up to `--limit` records of the cut.
async fn read(source: &Source, args: &OutputsArgs) -> anyhow::Result<Vec<OutcomeRecord>> {
    let mut out = Vec::new();
    match source {
        Source::Store(store) => {
            let filter = args.filter.to_filter()?;
            let prefix = match args.run {
                Some(run) => format!("{}{run}:", filter.id_prefix()),
                None => filter.id_prefix(),
            };
            for stored in filter.scan(store, &RepoScope::All, &prefix, None) {
                if out.len() as u64 >= args.limit {
                    break;
                }
                out.extend(
                    stored?
                        .outcome
                        .filter(|o| args.run.is_none_or(|run| o.run_id == Some(run))),
                );
            }
        }
        Source::Server(remote) => {
            if let (Some(run), Some(repo)) = (args.run, &args.filter.repo) {
                // The run view (`GET /api/v1/runs/…`): its items are the
                // outcome records, with the same cuts.
                let cuts: Vec<_> = args
                    .filter
                    .to_query()
                    .into_iter()
                    .filter(|(k, _)| *k != "repo")
                    .collect();
                let path = format!(
                    "/api/v1/runs/{}/{run}",
                    crate::model::escape::url_path(repo)
                );
                let view = remote.get_json(&path, &cuts).await?;
                let mut items: Vec<OutcomeRecord> = serde_json::from_value(view["items"].clone())?;
                items.sort_by(|a, b| a.safe_output_id.cmp(&b.safe_output_id));
                items.truncate(args.limit as usize);
                return Ok(items);
            }
            let mut cursor: Option<String> = None;
            while (out.len() as u64) < args.limit {
                let mut query = args.filter.to_query();
                query.push((
                    "limit",
                    (args.limit - out.len() as u64).min(PAGE).to_string(),
                ));
                if let Some(c) = &cursor {
                    query.push(("cursor", c.clone()));
                }
                let page = remote.get_json("/api/v1/outputs", &query).await?;
                let items: Vec<OutcomeRecord> = serde_json::from_value(page["items"].clone())?;
                out.extend(items);
                match page["next_cursor"].as_str() {
                    Some(c) => cursor = Some(c.to_string()),
                    None => break,
                }
            }
        }
    }
    out.truncate(args.limit as usize);
    Ok(out)
}

/// Whether stdout is a terminal (`SAFE_OUTCOMES_FORCE_TTY` set: as if it
/// were, like `gh`'s `GH_FORCE_TTY`).
pub(crate) fn for_terminal() -> bool {
    crate::settings::read_os(&crate::settings::SAFE_OUTCOMES_FORCE_TTY)
        .is_some_and(|v| !v.is_empty())
        || std::io::stdout().is_terminal()
}

/// One line per output: id, type, status, strength, signal, workflow,
/// execution date, next window (or `final`), target. Stored names go
/// through `escape::terminal`. For a terminal: a header and aligned
/// columns; else (piped) tab-separated rows without a header, as `gh`.
pub(crate) fn table(records: &[ListedOutput], for_terminal: bool) -> String {
    let rows: Vec<[String; 9]> = records
        .iter()
        .map(|l| {
            let o = &l.record;
            [
                terminal(&o.safe_output_id),
                terminal(&o.safe_output_type),
                o.outcome_status.as_str().to_string(),
                o.evidence_strength.as_str().to_string(),
                terminal(&o.human_check_signal),
                terminal(o.workflow.as_deref().unwrap_or("-")),
                o.created_at.format("%Y-%m-%d").to_string(),
                l.next_words(),
                terminal(
                    o.target
                        .as_ref()
                        .and_then(|t| t.url.as_deref())
                        .unwrap_or("-"),
                ),
            ]
        })
        .collect();
    if !for_terminal {
        return rows
            .iter()
            .map(|r| {
                let cells: Vec<String> = r.iter().map(|c| c.replace(['\t', '\n'], " ")).collect();
                format!("{}\n", cells.join("\t"))
            })
            .collect();
    }
    let header = [
        "ID", "TYPE", "STATUS", "STRENGTH", "SIGNAL", "WORKFLOW", "CREATED", "NEXT", "TARGET",
    ]
    .map(String::from);
    let mut widths = header.clone().map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&rows) {
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .enumerate()
            .map(|(i, (c, w))| {
                if i + 1 == row.len() {
                    c.clone()
                } else {
                    format!("{c:<w$}")
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// `outputs view ID`.
async fn view_one(args: ViewArgs) -> anyhow::Result<()> {
    if args.web {
        let path = format!("/outputs/{}", crate::model::escape::url_path(&args.id));
        return super::web::open(&super::web::page_url(&args.source, &path, &[])?);
    }
    let fields = args.json.fields(&available_fields())?;
    let source = args.source.open()?;
    let missing = || {
        super::exit::fail(
            super::exit::Exit::NotFound,
            format!("no output {:?} with a verdict", args.id),
        )
    };
    let record: OutcomeRecord = match &source {
        Source::Store(store) => store
            .output(&args.id)?
            .and_then(|s| s.outcome)
            .ok_or_else(missing)?,
        Source::Server(remote) => {
            let path = format!(
                "/api/v1/outputs/{}",
                crate::model::escape::url_path(&args.id)
            );
            let detail = remote.get_json(&path, &[]).await?;
            if detail["outcome"].is_null() {
                return Err(missing());
            }
            serde_json::from_value(detail["outcome"].clone())?
        }
    };
    let listed = ListedOutput::of(record);
    match fields {
        Some(fields) => args.json.print(&listed, &fields),
        None => emit(&view_text(&listed)),
    }
}

/// One output in a few lines, for people.
pub(crate) fn view_text(l: &ListedOutput) -> String {
    let o = &l.record;
    let repo = o.safe_output_id.split(':').next().unwrap_or("");
    let mut out = format!("{}\n", terminal(&o.safe_output_id));
    out.push_str(&format!(
        "{} by {}, executed {}\n\n",
        terminal(&o.safe_output_type),
        terminal(o.workflow.as_deref().unwrap_or("an unnamed workflow")),
        o.created_at.format("%Y-%m-%d %H:%M UTC")
    ));
    out.push_str(&format!(
        "Verdict: {} · {} ({})\n",
        o.outcome_status.as_str(),
        o.evidence_strength.as_str(),
        terminal(&o.human_check_signal.replace('_', " "))
    ));
    if !o.notes.trim().is_empty() {
        out.push_str(&format!("Why:     {}\n", terminal(o.notes.trim())));
    }
    let windows: Vec<String> = crate::model::CHECKPOINTS
        .iter()
        .map(|(w, _)| match o.windows.get(w) {
            Some(s) => format!("{w} {}", s.outcome_status.as_str()),
            None => format!("{w} -"),
        })
        .collect();
    out.push_str(&format!("Windows: {}\n", windows.join(" · ")));
    out.push_str(&format!(
        "Next:    {}\n",
        match (&l.next_window, l.next_window_due_at) {
            (Some(w), Some(due)) => format!("{w} due {}", due.format("%Y-%m-%d %H:%M UTC")),
            _ => "none: the verdict is final".to_string(),
        }
    ));
    if let Some(url) = o.target.as_ref().and_then(|t| t.url.as_deref()) {
        out.push_str(&format!("Target:  {}\n", terminal(url)));
    }
    if let Some(run) = o.run_id {
        out.push_str(&format!(
            "Run:     {}\n",
            crate::github::checks::actions_run_url("https://github.com", repo, run)
        ));
    }
    out
}
