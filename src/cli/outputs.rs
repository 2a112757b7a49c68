//! `safe-outcomes outputs`: the outputs of a cut, in output id order, like
//! `gh run list`: `-R owner/name --status rejected --since 7d`,
//! a table for people, or `--json FIELDS` (the outcome record's own field
//! names) with `--jq`. From the store (`--data-dir`) or a server
//! (`--server URL`, through `GET /api/v1/outputs`). A repository nothing was
//! recorded for is exit 4.

use clap::Args;

use super::exit::emit;
use super::json::{schema_fields, JsonArgs};
use super::source::{FilterArgs, Source, SourceArgs};
use crate::model::escape::terminal;
use crate::model::OutcomeRecord;
use crate::read::query::RepoScope;

#[derive(Args, Debug)]
pub struct OutputsArgs {
    #[command(flatten)]
    pub filter: FilterArgs,
    /// At most this many outputs.
    #[arg(short = 'L', long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    pub limit: u64,
    #[command(flatten)]
    pub json: JsonArgs,
    #[command(flatten)]
    pub source: SourceArgs,
}

/// Server pages are asked for in this size at most.
const PAGE: u64 = 1000;

pub async fn outputs(args: OutputsArgs) -> anyhow::Result<()> {
    let fields = args.json.fields(&schema_fields("OutcomeRecord"))?;
    let source = args.source.open()?;
    let records = read(&source, &args).await?;
    if records.is_empty() {
        source
            .require_known_repo(args.filter.repo.as_deref())
            .await?;
    }
    match fields {
        Some(fields) => args.json.print(&records, &fields),
        None => emit(&table(&records)),
    }
}

/// Up to `--limit` records of the cut.
async fn read(source: &Source, args: &OutputsArgs) -> anyhow::Result<Vec<OutcomeRecord>> {
    let mut out = Vec::new();
    match source {
        Source::Store(store) => {
            let filter = args.filter.to_filter()?;
            for stored in filter.scan(store, &RepoScope::All, &filter.id_prefix(), None) {
                if out.len() as u64 >= args.limit {
                    break;
                }
                out.extend(stored?.outcome);
            }
        }
        Source::Server(remote) => {
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

/// One line per output: id, type, status, strength, signal, workflow,
/// execution date, target. Stored names go through `escape::terminal`.
fn table(records: &[OutcomeRecord]) -> String {
    let rows: Vec<[String; 8]> = records
        .iter()
        .map(|o| {
            [
                terminal(&o.safe_output_id),
                terminal(&o.safe_output_type),
                o.outcome_status.as_str().to_string(),
                o.evidence_strength.as_str().to_string(),
                terminal(&o.human_check_signal),
                terminal(o.workflow.as_deref().unwrap_or("-")),
                o.created_at.format("%Y-%m-%d").to_string(),
                terminal(
                    o.target
                        .as_ref()
                        .and_then(|t| t.url.as_deref())
                        .unwrap_or("-"),
                ),
            ]
        })
        .collect();
    let header = [
        "ID", "TYPE", "STATUS", "STRENGTH", "SIGNAL", "WORKFLOW", "CREATED", "TARGET",
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
