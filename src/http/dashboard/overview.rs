//! The overview (`GET /`) and the pieces other pages share: the counts by
//! status as doors to the outputs behind them, the weekly chart at one
//! maturity with its table, the rates per type, and how many outputs await
//! which window.

use maud::{html, Markup};

use super::form::{filters, Choices};
use super::links::list_path;
use super::sort::{Key, Sort};
use super::{
    chart, count_link, page, percent, query, rate_cell, rejected_cell, with, PageResult, Visit,
};
use crate::http::api::summary_of;
use crate::http::read::Read;
use crate::http::series::{self, Period};
use crate::model::CHECKPOINTS;
use crate::read::report::{Report, Totals, TypeStats};

/// The labels of the counts by status, in `Totals::FIELDS` order.
fn label(field: &str) -> &'static str {
    match field {
        "total_safe_outputs" => "outputs",
        "evaluable_outputs" => "evaluable",
        "accepted_strong" => "accepted · strong",
        "accepted_medium" => "accepted · medium",
        "accepted_weak" => "accepted · weak",
        "rejected" => "rejected",
        "pending" => "pending",
        "ignored" => "ignored",
        "unknown" => "unknown",
        "skipped" => "skipped",
        "fallback_exists_only_count" => {
            "target exists, no human signal (never counted as accepted)"
        }
        "missing_type_specific_rule_count" => "types without a dedicated rule",
        _ => "accepted, then reverted",
    }
}

/// The list of the outputs counted in `field` under the page's `pairs`:
/// with the read API's own cuts when they say it (`status`, `strength`),
/// else `count=field`.
pub(crate) fn door(pairs: &[(String, String)], field: &str) -> String {
    let cut = |k: &str| pairs.iter().any(|(n, _)| n == k);
    let free = !cut("status") && !cut("strength");
    let add: Vec<(&str, &str)> = match field {
        "total_safe_outputs" => vec![],
        "accepted_strong" if free => vec![("status", "accepted"), ("strength", "strong")],
        "accepted_medium" if free => vec![("status", "accepted"), ("strength", "medium")],
        "rejected" | "pending" | "ignored" | "unknown" | "skipped" if free => {
            vec![("status", field)]
        }
        other => vec![("count", other)],
    };
    list_path(&with(pairs, &["window", "page", "sort"], &add))
}

/// The share `n` is of `of` (`None` when `of` is 0).
pub(crate) fn share(n: u64, of: u64) -> Option<f64> {
    (of > 0).then(|| n as f64 / of as f64)
}

/// The counts by status, each a link to its outputs ("rejected" with its
/// share of the evaluable outputs, as every table says it); then, apart,
/// the existence-only count (a target that exists is not an acceptance),
/// and, apart from that, what else is worth knowing: the types without a
/// rule of their own and the outputs accepted, then reverted.
pub(crate) fn totals_cards(t: &Totals, pairs: &[(String, String)]) -> Markup {
    let (main, _) = Totals::FIELDS.split_at(10);
    let card = |field: &str| {
        html! {
            a.card href=(door(pairs, field)) {
                (label(field)) b data-field=(field) { (t.get(field).unwrap_or(0)) }
                @if field == "rejected" {
                    span.share data-rate=(share(t.rejected, t.evaluable_outputs).map(|r| r.to_string()).unwrap_or_default()) {
                        (percent(share(t.rejected, t.evaluable_outputs))) " of evaluable"
                    }
                }
            }
        }
    };
    html! {
        section #totals .cards { @for field in main { (card(field)) } }
        h2 { "Existence only, kept apart" }
        section #apart .cards {
            a.card.apart href=(door(pairs, "fallback_exists_only_count")) {
                (label("fallback_exists_only_count")) b data-field="fallback_exists_only_count" { (t.fallback_exists_only_count) }
            }
        }
        h2 { "Also worth knowing" }
        section #also .cards {
            (card("durable_reversal_count"))
            (card("missing_type_specific_rule_count"))
        }
    }
}

/// How many outputs await which window, each a link to them in the list
/// under `pairs` (`None`: the outputs are all on this page, no links).
pub(crate) fn awaiting_line(
    counts: &[(&'static str, u64)],
    pairs: Option<&[(String, String)]>,
) -> Markup {
    html! {
        ul.awaiting #awaiting {
            li { b { "Awaiting:" } }
            @for (window, n) in counts.iter().copied() {
                @let text = html! {
                    @if window == "final" { "final verdict" } @else { "T+" (window) }
                    ": " b data-field="awaiting" { (n) }
                };
                li data-window=(window) {
                    @match pairs {
                        Some(pairs) => a href=(list_path(&with(pairs, &["window", "page", "sort", "count"], &[("awaiting", window)]))) { (text) },
                        None => (text),
                    }
                }
            }
        }
    }
}

/// The sort keys of the rates per type, by column.
pub(crate) const BY_TYPE_SORTS: [&str; 8] = [
    "type",
    "count",
    "strict",
    "human-check",
    "sticky",
    "rejected",
    "pending",
    "median",
];

/// The header of the rates per type, each column a sort link to `path`
/// labelled with its sort key (the median with its unit).
fn rates_header(path: &str, pairs: &[(String, String)], sort: &Sort) -> Markup {
    let label = |key: &'static str| if key == "median" { "median h" } else { key };
    html! {
        tr {
            @for (i, key) in BY_TYPE_SORTS.iter().enumerate() {
                (sort.header(path, pairs, "by-type", key, label(key), i > 0))
            }
        }
    }
}

/// What a type's row sorts by in column `key`.
fn by_type_key(name: &str, s: &TypeStats, key: &str) -> Key {
    match key {
        "count" => Key::Number(Some(s.count as f64)),
        "strict" => Key::Number(s.strict_acceptance_rate),
        "human-check" => Key::Number(s.human_check_acceptance_rate),
        "sticky" => Key::Number(s.sticky_artifact_rate),
        "rejected" => Key::Number(s.rejection_rate),
        "pending" => Key::Number(s.pending_rate),
        "median" => Key::Number(s.median_time_to_acceptance),
        _ => Key::Text(name.to_string()),
    }
}

/// A row's counts and rates; `href` lists its outputs, `rejected_href`
/// its rejected ones.
pub(crate) fn rates_cells(s: &TypeStats, href: &str, rejected_href: &str) -> Markup {
    let rejected = s
        .rejection_rate
        .map_or(0, |r| (r * s.evaluable as f64).round() as u64);
    html! {
        (count_link("total_safe_outputs", "count", s.count, href))
        (rate_cell("strict_acceptance_rate", "strict", s.strict_acceptance_rate))
        (rate_cell("human_check_acceptance_rate", "human-check", s.human_check_acceptance_rate))
        (rate_cell("sticky_artifact_rate", "sticky", s.sticky_artifact_rate))
        (rejected_cell("rejected", rejected, s.rejection_rate, rejected_href))
        (rate_cell("pending_rate", "pending", s.pending_rate))
        td.num data-field="median_time_to_acceptance" data-label="median h" {
            (s.median_time_to_acceptance.map_or("–".to_string(), |h| format!("{h:.1}")))
        }
    }
}

/// The rates per type, sortable (links to `path`), folded unless a sort
/// was asked for (a secondary section: open it to read).
pub(crate) fn by_type_table(
    report: &Report,
    path: &str,
    pairs: &[(String, String)],
    sort: &Sort,
) -> Markup {
    let n = report.by_type.len();
    let asked = pairs.iter().any(|(k, _)| k == "sort");
    let mut rows: Vec<(&String, &TypeStats)> = report.by_type.iter().collect();
    sort.apply(
        &mut rows,
        |(name, s), key| by_type_key(name, s, key),
        |(name, _)| name.to_string(),
    );
    html! {
        details.more #by-type-section open[asked] {
            summary { "Rates per type (" (n) (if n == 1 { " type" } else { " types" }) ")" }
            (by_type_rows(&rows, path, pairs, sort))
        }
    }
}

fn by_type_rows(
    rows: &[(&String, &TypeStats)],
    path: &str,
    pairs: &[(String, String)],
    sort: &Sort,
) -> Markup {
    html! {
        div.scroll { table #by-type.stack {
            thead { (rates_header(path, pairs, sort)) }
            tbody {
                @for (name, s) in rows.iter().copied() {
                    tr data-type=(name) {
                        td { code { (name) } }
                        (rates_cells(
                            s,
                            &list_path(&with(pairs, &["window", "page", "sort"], &[("type", name)])),
                            &list_path(&with(pairs, &["window", "page", "sort"], &[("type", name), ("status", "rejected")])),
                        ))
                    }
                }
            }
        } }
    }
}

/// The chart at `window` and, under it, the same numbers as a table whose
/// counts open the week's outputs.
pub(crate) fn weekly(
    periods: &[Period],
    window: &str,
    chosen: &str,
    pairs: &[(String, String)],
) -> Markup {
    let day = |p: Option<&Period>, end: bool| {
        p.map(|p| if end { p.period_end } else { p.period_start })
            .map(|t| t.format("%Y-%m-%d").to_string())
            .unwrap_or_default()
    };
    let immature = periods.iter().filter(|p| p.immature).count();
    let week_list = |p: &Period, add: &[(&str, &str)]| {
        let (since, until) = (
            p.period_start.format("%Y-%m-%d").to_string(),
            p.period_end.format("%Y-%m-%d").to_string(),
        );
        let mut add = add.to_vec();
        add.extend([
            ("since", since.as_str()),
            ("until", until.as_str()),
            ("window", window),
        ]);
        list_path(&with(pairs, &["page", "sort"], &add))
    };
    html! {
        p.muted #weeks data-window=(window) data-window-chosen=(chosen) {
            "Rates as of " b { "T+" (window) } " after execution"
            @if chosen == "default" { " (the latest window every output in the range has reached)" }
            ". " (periods.len()) " weeks by execution time, from " (day(periods.first(), false))
            " to " (day(periods.last(), true)) " (Mondays, UTC)."
            @if immature > 0 {
                " " (immature) " immature " (if immature == 1 { "week" } else { "weeks" })
                " (shaded, hollow markers): some outputs have not reached T+" (window) " yet; their rates may change."
            }
        }
        figure #weekly-chart data-weeks=(periods.len()) {
            (chart::weekly(periods, window))
        }
        details.more #weekly-section {
        summary { "The same numbers, week by week (table)" }
        div.scroll { table #weekly.stack {
            thead { tr {
                th { "week" } th.num { "outputs" } th.num { "not yet at T+" (window) }
                th.num { "strict" } th.num { "human-check" } th.num { "sticky" } th.num { "rejected" }
            } }
            tbody {
                @for p in periods {
                    tr data-week=(p.week) data-immature=(p.immature) {
                        td { (p.week) @if p.immature { " " span.muted { "(immature)" } } }
                        (count_link("outputs", "outputs", p.rates.count + p.not_yet_at_window, &week_list(p, &[])))
                        td.num data-field="not_yet_at_window" data-label="not yet" { (p.not_yet_at_window) }
                        (rate_cell("strict_acceptance_rate", "strict", p.rates.strict_acceptance_rate))
                        (rate_cell("human_check_acceptance_rate", "human-check", p.rates.human_check_acceptance_rate))
                        (rate_cell("sticky_artifact_rate", "sticky", p.rates.sticky_artifact_rate))
                        (rejected_cell("rejected", p.totals.rejected, p.rates.rejection_rate, &week_list(p, &[("count", "rejected")])))
                    }
                }
            }
        } }
        }
    }
}

/// While day one is still working on repositories the viewer sees: how
/// far back it has judged every run (`BackfillJob::reached`), the last
/// seven days coming first. Nothing once every job is done.
fn day_one(state: &crate::http::State, scope: &crate::read::query::RepoScope) -> Markup {
    let Ok(jobs) = state.store.backfill_jobs() else {
        return html! {};
    };
    let mine: Vec<_> = jobs.iter().filter(|j| scope.allows(&j.repo)).collect();
    let working: Vec<_> = mine.iter().filter(|j| !j.done).collect();
    let Some(reached) = working.iter().map(|j| j.reached.unwrap_or(j.until)).max() else {
        return html! {};
    };
    let done = mine.len() - working.len();
    let last_week = working.iter().all(|j| j.reached.is_some());
    html! {
        p.notice #day-one {
            "Day one is reading the past from GitHub: " (done) " of " (mine.len()) " repositories done. "
            @if last_week {
                "Every run since " time datetime=(reached.to_rfc3339()) { (reached.format("%Y-%m-%d")) } " is judged; older runs come next."
            } @else {
                "The last seven days come first; older runs follow."
            }
        }
    }
}

pub(crate) const RATES_NOTE: &str =
    "strict = strong / evaluable; human-check = (strong + medium) / evaluable; \
     sticky = (weak or exists-only) / evaluable. Three rates, never one blended number.";

pub async fn overview(Read(state, mut visit, ..): Read<Visit>) -> PageResult {
    let (filter, window, pairs, sort) = visit.windowed_sorted(&BY_TYPE_SORTS, "type")?;
    let summary = summary_of(&state, &filter, &visit.reader.scope).await?;
    let series = series::build(&state, &visit.reader, filter, window).await?;
    let report = &summary.report;
    let content = html! {
        h1 { "What became of the agents' writes" }
        @if state.auth.setup_enabled() {
            p.notice #setup-link {
                "No GitHub App is registered for this server: it listens to webhooks and manifests only (no check runs, no backfill). "
                a href=(crate::http::auth::setup::SETUP_PAGE) { "Register the GitHub App" }
            }
        }
        (day_one(&state, &visit.reader.scope))
        (filters("/", &pairs, &[], &Choices::of_summary(&summary), Some(&series.window)))
        (super::links::export_links(&pairs, &[]))
        (awaiting_line(&summary.all.awaiting(), Some(&pairs)))
        h2 { "Acceptance per week" }
        p.muted { (RATES_NOTE) }
        (weekly(&series.periods, &series.window, &series.window_chosen, &pairs))
        h2 { "Counts by status" }
        p.muted { "Each output's latest verdict. Every count opens the list of its outputs." }
        (totals_cards(&report.totals, &pairs))
        h2 { "By type" }
        (by_type_table(report, "/", &pairs, &sort))
        p { a href=(format!("/workflows{}", query(&pairs, &["workflow", "sort"]))) { "Per workflow →" } }
        p.muted { "Windows: every output is judged at T+" (CHECKPOINTS.map(|(n, _)| n).join(", T+")) " after execution; after T+30d its verdict is final." }
    };
    page("Overview", &[], &visit.viewer, content)
}
