//! The workflows table (`GET /workflows`: per workflow its counts, rates,
//! a sparkline of its strict rate per week and the trend, line survival)
//! and one workflow's page (`GET /workflows/{name}`: its weekly chart, its
//! counts, types, agent lines and runs).

use std::collections::BTreeMap;

use axum::extract::Path;
use maud::{html, Markup};

use super::form::{filters, Choices};
use super::links::{export_links, list_path, run_path, workflow_path};
use super::overview::{
    awaiting_line, by_type_table, door, share, totals_cards, weekly, BY_TYPE_SORTS, RATES_NOTE,
};
use super::sort::Key;
use super::{chart, count_link, day, page, rate_cell, rejected_cell, with, PageResult, Visit};
use crate::http::api::{line_survival_of, summary_of, RUNS_SHOWN};
use crate::http::budget::blocking;
use crate::http::read::Read;
use crate::http::read::ReadFilter;
use crate::http::series::{self, Period};
use crate::http::shell::crumb;
use crate::http::ApiError;
use crate::read::line_survival::LineTotals;
use crate::read::report::Sums;
use crate::read::rollup::RunRow;

/// Index entries a workflow page looks at, at most, to find its recent runs.
const RUNS_SCAN: usize = 50_000;

/// The fewest evaluable outputs on each side of a trend for it to be
/// called: below, a change of rate is mostly chance (one output of two
/// moves a rate by 50 points), so the trend says so instead of a number.
pub(crate) const TREND_MIN_OUTPUTS: u64 = 10;

/// The trend of the strict rate over the mature weeks of a series: the
/// later half of its rated weeks against the earlier half (the middle week
/// of an odd count left out). Immature weeks are left out: their rates may
/// still change. With fewer than `TREND_MIN_OUTPUTS` evaluable outputs on
/// either side, no change is given: "too few to tell" with the counts
/// (`few`).
pub(crate) fn trend(periods: &[Period]) -> (String, &'static str) {
    let rated: Vec<&Period> = periods
        .iter()
        .filter(|p| !p.immature && p.rates.evaluable > 0)
        .collect();
    if rated.len() < 2 {
        return ("–".into(), "steady");
    }
    let half = rated.len() / 2;
    let pooled = |ps: &[&Period]| {
        let (strong, evaluable) = ps.iter().fold((0, 0), |(s, e), p| {
            (s + p.totals.accepted_strong, e + p.rates.evaluable)
        });
        strong as f64 / evaluable as f64
    };
    let evaluable = |ps: &[&Period]| ps.iter().map(|p| p.rates.evaluable).sum::<u64>();
    let (early, late) = (&rated[..half], &rated[rated.len() - half..]);
    let (n_before, n_after) = (evaluable(early), evaluable(late));
    if n_before.min(n_after) < TREND_MIN_OUTPUTS {
        return (
            format!("⚠ too few to tell ({n_before} → {n_after} evaluable)"),
            "few",
        );
    }
    let (before, after) = (pooled(early), pooled(late));
    let points = ((after - before) * 100.0).round();
    match points {
        p if p > 5.0 => (format!("▲ better, +{p:.0} pts"), "better"),
        p if p < -5.0 => (format!("▼ worse, {p:.0} pts"), "worse"),
        p => (format!("→ steady, {p:+.0} pts"), "steady"),
    }
}

/// A count of surviving lines with its rate, `–` before any measure.
fn surviving_cell(field: &str, label: &str, lines: u64, rate: Option<f64>) -> Markup {
    let shown = rate.map_or("–".to_string(), |r| {
        format!("{lines} · {:.0}%", r * 100.0)
    });
    html! {
        td.num data-field=(field) data-label=(label) data-value=(lines)
            data-rate=(rate.map(|r| r.to_string()).unwrap_or_default()) { (shown) }
    }
}

/// The workflows table's line-survival cells (`–` when nothing is attributed).
fn survival_cells(t: Option<&LineTotals>) -> Markup {
    let t = t.cloned().unwrap_or_default();
    html! {
        td.num data-field="lines_attributed" data-label="agent lines" { (t.lines_attributed) }
        (surviving_cell("lines_surviving_7d", "alive at 7d", t.lines_surviving_7d, t.survival_rate_7d))
        (surviving_cell("lines_surviving_30d", "alive at 30d", t.lines_surviving_30d, t.survival_rate_30d))
        td.num data-field="survival_unknown" data-label="survival unknown" { (t.survival_unknown) }
    }
}

const SURVIVAL_NOTE: &str =
    "Agent lines: lines of merged agent code attributed to the agent; alive at 7d/30d: \
     those still on the default branch at the checkpoint, over the outputs measured there. \
     Survival unknown: outputs whose lines could not be followed (kept apart).";

/// One workflow's line survival, a row per checkpoint.
fn survival_table(t: &LineTotals) -> Markup {
    let rows = [
        (
            "7d",
            t.outputs_measured_7d,
            t.lines_attributed_measured_7d,
            t.lines_surviving_7d,
            t.survival_rate_7d,
        ),
        (
            "30d",
            t.outputs_measured_30d,
            t.lines_attributed_measured_30d,
            t.lines_surviving_30d,
            t.survival_rate_30d,
        ),
    ];
    html! {
        section #survival-totals .cards {
            div.card { "outputs attributed" b data-field="outputs_attributed" { (t.outputs_attributed) } }
            div.card { "agent lines that landed" b data-field="lines_attributed" { (t.lines_attributed) } }
            div.card.apart { "survival unknown (outputs)" b data-field="survival_unknown" { (t.survival_unknown) } }
        }
        div.scroll { table #line-survival.stack {
            thead { tr {
                th { "checkpoint" } th.num { "outputs measured" } th.num { "their lines" }
                th.num { "still there" } th.num { "rate" }
            } }
            tbody {
                @for (name, outputs, measured, surviving, rate) in rows {
                    tr data-checkpoint=(name) {
                        td { "T+" (name) }
                        td.num data-field=(format!("outputs_measured_{name}")) data-label="outputs measured" { (outputs) }
                        td.num data-field=(format!("lines_attributed_measured_{name}")) data-label="their lines" { (measured) }
                        td.num data-field=(format!("lines_surviving_{name}")) data-label="still there" { (surviving) }
                        (rate_cell(&format!("survival_rate_{name}"), "rate", rate))
                    }
                }
            }
        } }
    }
}

/// The sort keys of the workflows table.
const WORKFLOW_SORTS: [&str; 7] = [
    "workflow",
    "outputs",
    "strict",
    "human-check",
    "rejected",
    "ignored",
    "median",
];

pub async fn workflows(Read(state, mut visit, ..): Read<Visit>) -> PageResult {
    let (filter, asked, pairs, sort) = visit.windowed_sorted(&WORKFLOW_SORTS, "workflow")?;
    let scope = &visit.reader.scope;
    let summary = summary_of(&state, &filter, scope).await?;
    let survival = line_survival_of(&state, &filter, scope).await?;
    let now = state.shared.clock.now();
    let (first, weeks) = series::weeks_of(&filter, now)?;
    let weekly_sums = blocking(&state, &filter, scope, move |store, f, scope| {
        crate::read::rollup::weekly_by_workflow(store, f, scope, first, weeks)
    })
    .await?;
    // One maturity for every row, so the sparklines compare.
    let mut all_weeks: BTreeMap<i64, Sums> = BTreeMap::new();
    for sums in weekly_sums.values() {
        for (week, s) in sums {
            all_weeks.entry(*week).or_default().merge(s);
        }
    }
    let window = series::of_sums(&all_weeks, first, weeks, asked, now).window;
    let w: &'static str = crate::read::report::parse_window(&window).unwrap_or("30d");
    let link = |add: &[(&str, &str)]| list_path(&with(&pairs, &["window", "page", "sort"], add));
    let keep = super::query(&pairs, &["workflow", "sort"]);
    let none = BTreeMap::new();
    let mut rows: Vec<_> = summary
        .by_workflow
        .iter()
        .map(|(name, sums)| {
            let of = weekly_sums.get(name).unwrap_or(&none);
            let periods = series::weekly_from_sums_at(of, first, weeks, Some(w));
            (name, sums.overall(), periods)
        })
        .collect();
    sort.apply(
        &mut rows,
        |(name, (t, s), _), key| match key {
            "outputs" => Key::Number(Some(t.total_safe_outputs as f64)),
            "strict" => Key::Number(s.strict_acceptance_rate),
            "human-check" => Key::Number(s.human_check_acceptance_rate),
            "rejected" => Key::Number(s.rejection_rate),
            "ignored" => Key::Number(Some(t.ignored as f64)),
            "median" => Key::Number(s.median_time_to_acceptance),
            _ => Key::Text(name.to_string()),
        },
        |(name, _, _)| name.to_string(),
    );
    let th = |key: &str, label: &str, num: bool| {
        sort.header("/workflows", &pairs, "workflows", key, label, num)
    };
    let content = html! {
        h1 { "Workflows" }
        (filters("/workflows", &pairs, &["workflow"], &Choices::of_summary(&summary), Some(&window)))
        (export_links(&pairs, &[]))
        p.muted { (RATES_NOTE) " Counts and rates: each output's latest verdict. Per week: the strict rate at T+" (window)
            " (hollow: immature week). Trend: its later mature weeks against its earlier ones, called only with "
            (TREND_MIN_OUTPUTS) " evaluable outputs or more on each side. Rejected: count · share of the evaluable outputs. Column headers sort." }
        p.muted { (SURVIVAL_NOTE) }
        div.scroll { table #workflows.stack {
            thead { tr {
                (th("workflow", "workflow", false)) (th("outputs", "outputs", true)) (th("strict", "strict", true))
                (th("human-check", "human-check", true)) (th("rejected", "rejected", true))
                (th("ignored", "ignored", true)) (th("median", "median h", true)) th { "per week · trend" }
                th.num { "agent lines" } th.num { "alive 7d" } th.num { "alive 30d" }
                th.num { "survival unknown" }
            } }
            tbody {
                @for (name, (t, s), weeks) in &rows {
                    @let (words, direction) = trend(weeks);
                    tr data-workflow=(name) {
                        td { a href=(format!("{}{keep}", workflow_path(name))) { (name) } }
                        (count_link("total_safe_outputs", "outputs", t.total_safe_outputs, &link(&[("workflow", name)])))
                        (rate_cell("strict_acceptance_rate", "strict", s.strict_acceptance_rate))
                        (rate_cell("human_check_acceptance_rate", "human-check", s.human_check_acceptance_rate))
                        (rejected_cell("rejected", t.rejected, s.rejection_rate, &door(&with(&pairs, &[], &[("workflow", name)]), "rejected")))
                        (count_link("ignored", "ignored", t.ignored, &door(&with(&pairs, &[], &[("workflow", name)]), "ignored")))
                        td.num data-field="median_time_to_acceptance" data-label="median h" {
                            (s.median_time_to_acceptance.map_or("–".to_string(), |h| format!("{h:.1}")))
                        }
                        td data-field="trend" data-label="per week · trend" data-trend=(direction) {
                            (chart::sparkline(weeks, &window)) span.muted { (words) }
                        }
                        (survival_cells(survival.get(*name)))
                    }
                }
            }
        } }
    };
    page(
        "Workflows",
        &[("Workflows".into(), None)],
        &visit.viewer,
        content,
    )
}

pub async fn workflow(
    Read(state, mut visit, ..): Read<Visit>,
    Path(name): Path<String>,
) -> PageResult {
    let (filter, window, pairs, sort) = visit.windowed_sorted(&BY_TYPE_SORTS, "type")?;
    let filter = ReadFilter {
        workflow: Some(name.clone()),
        ..filter
    };
    let pairs = with(&pairs, &[], &[("workflow", &name)]);
    let scope = &visit.reader.scope;
    let summary = summary_of(&state, &filter, scope).await?;
    if summary.report.totals.total_safe_outputs == 0 {
        return Err(ApiError::not_found(format!("no outputs of workflow {name:?} to show")).into());
    }
    let now = state.shared.clock.now();
    let report = &summary.report;
    let survival = line_survival_of(&state, &filter, scope).await?;
    let lines = survival.get(&name).cloned().unwrap_or_default();
    let series = series::build(&state, &visit.reader, filter.clone(), window).await?;
    let (runs, older) = blocking(&state, &filter, scope, move |store, f, scope| {
        crate::read::rollup::recent_runs(store, f, scope, now, RUNS_SHOWN, RUNS_SCAN)
    })
    .await?;
    let gh = super::github(&state);
    let content = html! {
        h1 { "Workflow " code { (name) } }
        (filters(&workflow_path(&name), &pairs, &["workflow"], &Choices::of_summary(&summary), Some(&series.window)))
        (export_links(&pairs, &[("workflow", name.as_str())]))
        (awaiting_line(&summary.all.awaiting(), Some(&pairs)))
        h2 { "Acceptance per week" }
        p.muted { (RATES_NOTE) }
        (weekly(&series.periods, &series.window, &series.window_chosen, &pairs))
        h2 { "Counts by status" }
        (totals_cards(&report.totals, &pairs))
        h2 { "Its types" }
        (by_type_table(report, &workflow_path(&name), &pairs, &sort))
        h2 { "Agent lines still there" }
        p.muted { (SURVIVAL_NOTE) }
        (survival_table(&lines))
        h2 { "Its runs" }
        div.scroll { table #runs.stack {
            thead { tr {
                th { "run" } th { "executed" } th.num { "outputs" } th.num { "accepted" }
                th.num { "rejected" } th.num { "pending" } th { "on GitHub" }
            } }
            tbody {
                @for RunRow { repo, run_id, latest, totals: t } in &runs {
                    @let id = run_id.to_string();
                    @let of_run = |add: &[(&str, &str)]| {
                        let mut a = vec![("repo", repo.as_str()), ("run", id.as_str())];
                        a.extend_from_slice(add);
                        list_path(&a)
                    };
                    tr {
                        td { a href=(run_path(repo, *run_id)) { (repo) " #" (run_id) } }
                        td data-label="executed" { (day(*latest, now)) " " (latest.format("%H:%M")) }
                        (count_link("total", "outputs", t.total_safe_outputs, &of_run(&[])))
                        (count_link("accepted", "accepted", t.accepted_strong + t.accepted_medium + t.accepted_weak, &of_run(&[("status", "accepted")])))
                        (rejected_cell("rejected", t.rejected, share(t.rejected, t.evaluable_outputs), &of_run(&[("status", "rejected")])))
                        (count_link("pending", "pending", t.pending, &of_run(&[("status", "pending")])))
                        td data-label="on GitHub" {
                            a href=(gh.run(repo, *run_id)) rel="noopener noreferrer" { "Actions run" }
                        }
                    }
                }
            }
        } }
        @if older {
            p.muted #older-runs {
                "The " (RUNS_SHOWN) " most recent runs are shown; older ones are in "
                a href=(list_path(&[("workflow", name.as_str())])) { "the list of its outputs" }
                " and the read API (" code { "/api/v1/runs/…" } ")."
            }
        }
    };
    page(
        &format!("Workflow {name}"),
        &[crumb("Workflows", "/workflows"), (name.clone(), None)],
        &visit.viewer,
        content,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::report::{Totals, TypeStats};

    fn week(i: i64, evaluable: u64, strong: u64) -> Period {
        let start = chrono::DateTime::parse_from_rfc3339("2026-10-05T00:00:00Z")
            .unwrap()
            .with_timezone(&chrono::Utc)
            + chrono::Duration::weeks(i);
        Period {
            week: format!("W{i}"),
            period_start: start,
            period_end: start + chrono::Duration::weeks(1),
            totals: Totals {
                total_safe_outputs: evaluable,
                evaluable_outputs: evaluable,
                accepted_strong: strong,
                ..Totals::default()
            },
            rates: TypeStats {
                count: evaluable,
                evaluable,
                strict_acceptance_rate: (evaluable > 0).then(|| strong as f64 / evaluable as f64),
                ..TypeStats::default()
            },
            not_yet_at_window: 0,
            immature: false,
        }
    }

    /// A two-output week is no trend: no "-100 pts" from one output of one.
    #[test]
    fn a_trend_on_a_handful_of_outputs_is_not_called() {
        let (words, direction) = trend(&[week(0, 1, 1), week(1, 2, 0)]);
        assert_eq!(direction, "few");
        assert!(!words.contains("pts"), "{words}");
        assert!(words.contains("1 → 2"), "{words}");
        // Enough on each side: the change, in points.
        let (words, direction) = trend(&[week(0, 10, 8), week(1, 12, 3)]);
        assert_eq!(direction, "worse");
        assert!(words.contains("-55 pts"), "{words}");
        // Just under on one side: not called.
        let (_, direction) = trend(&[week(0, 9, 8), week(1, 12, 3)]);
        assert_eq!(direction, "few");
    }
}
