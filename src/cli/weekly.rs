//! `safe-outcomes report --weekly`: acceptance week by week, per workflow —
//! the question "is each agent getting better?" on the terminal. One row per
//! ISO week with outputs, per workflow: the outputs, the strict and
//! human-check rates, rejected (count and percentage) and those not at the
//! window yet.
//!
//! Every week is read at one window (as `GET /api/v1/series` and the
//! dashboard's trends: an old week and a recent one compared at the same
//! age): `--window`, or by default the latest window every output of the
//! cut has reached. A week with outputs not there yet is marked immature
//! (`*`): its rates may still change. The weeks are the series' (twelve up
//! to now, or from `--since` to `--until`).
//!
//! From the store (`read::rollup::weekly_by_workflow`, the cells the
//! dashboard's sparklines read) or a server (`/api/v1/report`'s
//! `by_workflow` for the names, then `/api/v1/series?workflow=…` for each).
//! Outputs of no known workflow cannot be cut by workflow: they are counted
//! in `no_workflow` and left out of the rows. `--format json` prints the
//! same as JSON.

use std::collections::BTreeMap;

use anyhow::Context;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::source::{FilterArgs, Source};
use crate::http::series::{self, Period, Series};
use crate::model::escape::terminal;
use crate::read::query::RepoScope;
use crate::read::report::{parse_window, Sums};

/// The weeks of each workflow, at one window.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Weekly {
    /// The window every week is read at.
    pub window: String,
    /// `asked` (`--window`) or `default` (the latest every output reached).
    pub window_chosen: String,
    pub since: DateTime<Utc>,
    pub until: DateTime<Utc>,
    /// Workflow name → its weeks (every week of the range, empty ones too).
    pub workflows: BTreeMap<String, Vec<Period>>,
    /// Outputs in the range of no known workflow (not in the rows).
    pub no_workflow: u64,
}

const NONE: &str = "(none)";

/// The weekly view of the cut, from the store or the server.
/// `window`: the one asked for (`--window`), if any.
pub async fn build(
    source: &Source,
    filter_args: &FilterArgs,
    window: Option<&str>,
) -> anyhow::Result<Weekly> {
    let asked = window.and_then(parse_window);
    match source {
        Source::Store(store) => {
            let filter = filter_args.to_filter()?;
            let now = Utc::now();
            let (first, weeks) = series::weeks_of(&filter, now)
                .map_err(|e| super::exit::fail(super::exit::Exit::Usage, e.detail))?;
            let per = crate::read::rollup::weekly_by_workflow(
                store,
                &filter,
                &RepoScope::All,
                first,
                weeks,
            )?;
            let window = asked.unwrap_or_else(|| {
                let mut all = Sums::default();
                for s in per.values().flat_map(|w| w.values()) {
                    all.merge(s);
                }
                all.mature_window()
            });
            let mut out = Weekly {
                window: window.to_string(),
                window_chosen: if asked.is_some() { "asked" } else { "default" }.into(),
                since: first,
                until: first + chrono::Duration::weeks(weeks),
                workflows: BTreeMap::new(),
                no_workflow: 0,
            };
            for (name, sums) in per {
                let s = series::of_sums(&sums, first, weeks, Some(window), now);
                if name == NONE {
                    out.no_workflow = count(&s.periods);
                } else {
                    out.workflows.insert(name, s.periods);
                }
            }
            Ok(out)
        }
        Source::Server(remote) => {
            let cuts = filter_args.to_query();
            let with = |extra: &[(&'static str, String)]| {
                let mut q = cuts.clone();
                q.extend(extra.iter().cloned());
                q
            };
            let window_q: Vec<(&'static str, String)> = asked
                .map(|w| vec![("window", w.to_string())])
                .unwrap_or_default();
            let all: Series =
                serde_json::from_value(remote.get_json("/api/v1/series", &with(&window_q)).await?)
                    .context("reading the server's series")?;
            let report = remote.get_json("/api/v1/report", &cuts).await?;
            let names: Vec<String> = report["by_workflow"]
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            let mut out = Weekly {
                window: all.window.clone(),
                window_chosen: all.window_chosen.clone(),
                since: all.since,
                until: all.until,
                workflows: BTreeMap::new(),
                no_workflow: 0,
            };
            let window = [("window", all.window.clone())];
            for name in names.into_iter().filter(|n| n != NONE) {
                if filter_args.workflow.is_some() {
                    // Already cut to that one workflow: its series is `all`.
                    out.workflows.insert(name, all.periods.clone());
                    continue;
                }
                let mut q = with(&window);
                q.push(("workflow", name.clone()));
                let s: Series =
                    serde_json::from_value(remote.get_json("/api/v1/series", &q).await?)
                        .context("reading the server's series")?;
                out.workflows.insert(name, s.periods);
            }
            let named: u64 = out.workflows.values().map(|p| count(p)).sum();
            out.no_workflow = count(&all.periods).saturating_sub(named);
            Ok(out)
        }
    }
}

/// Outputs of the weeks (at the window or not there yet).
fn count(periods: &[Period]) -> u64 {
    periods
        .iter()
        .map(|p| p.rates.count + p.not_yet_at_window)
        .sum()
}

fn percent(rate: Option<f64>) -> String {
    rate.map_or("–".to_string(), |r| format!("{:.0}%", r * 100.0))
}

/// Rows for people: on a terminal a title, a header and aligned columns;
/// piped, tab-separated rows without either (as `gh`).
pub fn table(w: &Weekly, for_terminal: bool) -> String {
    let mut rows: Vec<[String; 8]> = Vec::new();
    for (name, periods) in &w.workflows {
        for p in periods {
            let outputs = p.rates.count + p.not_yet_at_window;
            if outputs == 0 {
                continue;
            }
            // As the dashboard says it: the count, then its share of the
            // evaluable outputs (`–` when none is).
            let rejected = format!(
                "{} · {}",
                p.totals.rejected,
                percent(p.rates.rejection_rate)
            );
            rows.push([
                format!("{}{}", p.week, if p.immature { "*" } else { "" }),
                terminal(name),
                outputs.to_string(),
                percent(p.rates.strict_acceptance_rate),
                percent(p.rates.human_check_acceptance_rate),
                rejected,
                p.rates.evaluable.to_string(),
                p.not_yet_at_window.to_string(),
            ]);
        }
    }
    rows.sort_by(|a, b| (&a[0], &a[1]).cmp(&(&b[0], &b[1])));
    if !for_terminal {
        return rows.iter().map(|r| format!("{}\n", r.join("\t"))).collect();
    }
    let header = [
        "WEEK",
        "WORKFLOW",
        "OUTPUTS",
        "STRICT",
        "HUMAN-CHECK",
        "REJECTED",
        "EVALUABLE",
        "NOT YET",
    ]
    .map(String::from);
    let mut widths = header.clone().map(|h| h.chars().count());
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = format!(
        "Acceptance per week and workflow at T+{} ({}), by execution time\n\n",
        w.window,
        match w.window_chosen.as_str() {
            "asked" => "the window asked for".to_string(),
            _ => "the latest window every output has reached".to_string(),
        }
    );
    for row in std::iter::once(&header).chain(&rows) {
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(c, width)| format!("{c:<width$}"))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    if rows.is_empty() {
        out.push_str("(no outputs in these weeks)\n");
    }
    if rows.iter().any(|r| r[0].ends_with('*')) {
        out.push_str(&format!(
            "\n* immature: some outputs of the week have not reached T+{} yet (NOT YET); its rates may still change\n",
            w.window
        ));
    }
    if w.no_workflow > 0 {
        out.push_str(&format!(
            "{} output(s) of no known workflow are not in these rows\n",
            w.no_workflow
        ));
    }
    out
}
