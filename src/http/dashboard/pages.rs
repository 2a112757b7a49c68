//! The dashboard's pages. Each takes the reader (a refusal becomes the
//! sign-in page), the cuts in the URL, and renders what the read API's own
//! functions answer.

use axum::extract::{Path, State as StateExtractor};
use axum::http::Uri;
use axum::response::Html;
use maud::{html, Markup, PreEscaped};
use serde_json::Value;

use super::{
    chart, filter_form, gate, layout, output_path, page_filter, query, rate_cell, PageResult,
};
use crate::http::api::{
    line_survival_of, output_detail, recent_runs, report_of, run_view, workflow_rows,
};
use crate::http::budget::ReadPermit;
use crate::http::read::{QueryPairs, ReadFilter, Reader};
use crate::http::series::{self, Period};
use crate::http::{ApiError, State};
use crate::read::line_survival::LineTotals;
use crate::read::report::{Report, Totals, TypeStats};

type Gate = Result<Reader, ApiError>;

/// The counts by status, named as the report's totals.
const STATUS_FIELDS: [(&str, &str); 8] = [
    ("total_safe_outputs", "outputs"),
    ("evaluable_outputs", "evaluable"),
    ("accepted_strong", "accepted · strong"),
    ("accepted_medium", "accepted · medium"),
    ("accepted_weak", "accepted · weak"),
    ("rejected", "rejected"),
    ("pending", "pending"),
    ("ignored", "ignored"),
];

fn total(t: &Totals, field: &str) -> u64 {
    match field {
        "total_safe_outputs" => t.total_safe_outputs,
        "evaluable_outputs" => t.evaluable_outputs,
        "accepted_strong" => t.accepted_strong,
        "accepted_medium" => t.accepted_medium,
        "accepted_weak" => t.accepted_weak,
        "rejected" => t.rejected,
        "pending" => t.pending,
        "ignored" => t.ignored,
        "unknown" => t.unknown,
        "skipped" => t.skipped,
        "fallback_exists_only_count" => t.fallback_exists_only_count,
        "missing_type_specific_rule_count" => t.missing_type_specific_rule_count,
        _ => t.durable_reversal_count,
    }
}

fn totals_cards(t: &Totals) -> Markup {
    let rest = [("unknown", "unknown"), ("skipped", "skipped")];
    html! {
        section #totals .cards {
            @for (field, label) in STATUS_FIELDS.iter().chain(rest.iter()) {
                div.card { (label) b data-field=(field) { (total(t, field)) } }
            }
        }
        h2 { "Existence only, kept apart" }
        section #apart .cards {
            div.card.apart {
                "target exists, no human signal (never counted as accepted)"
                b data-field="fallback_exists_only_count" { (t.fallback_exists_only_count) }
            }
            div.card { "types without a dedicated rule" b data-field="missing_type_specific_rule_count" { (t.missing_type_specific_rule_count) } }
            div.card { "accepted, then reverted" b data-field="durable_reversal_count" { (t.durable_reversal_count) } }
        }
    }
}

fn rates_header(first: &str) -> Markup {
    html! {
        tr {
            th { (first) } th.num { "count" } th.num { "strict" } th.num { "human-check" }
            th.num { "sticky" } th.num { "rejected" } th.num { "pending" } th.num { "median h" }
        }
    }
}

fn rates_cells(s: &TypeStats) -> Markup {
    html! {
        td.num data-field="total_safe_outputs" data-label="count" { (s.count) }
        (rate_cell("strict_acceptance_rate", "strict", s.strict_acceptance_rate))
        (rate_cell("human_check_acceptance_rate", "human-check", s.human_check_acceptance_rate))
        (rate_cell("sticky_artifact_rate", "sticky", s.sticky_artifact_rate))
        (rate_cell("rejection_rate", "rejected", s.rejection_rate))
        (rate_cell("pending_rate", "pending", s.pending_rate))
        td.num data-field="median_time_to_acceptance" data-label="median h" {
            (s.median_time_to_acceptance.map_or("–".to_string(), |h| format!("{h:.1}")))
        }
    }
}

fn by_type_table(report: &Report) -> Markup {
    html! {
        div.scroll { table #by-type.stack {
            thead { (rates_header("type")) }
            tbody {
                @for (name, s) in &report.by_type {
                    tr data-type=(name) { td { code { (name) } } (rates_cells(s)) }
                }
            }
        } }
    }
}

/// The chart and, under it, the same numbers as a table.
fn weekly(periods: &[Period]) -> Result<Markup, ApiError> {
    let svg = chart::weekly_rates(periods).map_err(ApiError::internal)?;
    let day = |p: Option<&Period>, end: bool| {
        p.map(|p| if end { p.period_end } else { p.period_start })
            .map(|t| t.format("%Y-%m-%d").to_string())
            .unwrap_or_default()
    };
    Ok(html! {
        p.muted #weeks {
            (periods.len()) " weeks by execution time, from " (day(periods.first(), false))
            " to " (day(periods.last(), true)) " (Mondays, UTC; since/until set the range)."
        }
        figure #weekly-chart data-weeks=(periods.len()) {
            (PreEscaped(svg))
            ul.legend {
                @for (name, label, _) in chart::SERIES {
                    li { span class=(format!("swatch-{name}")) {} (label) }
                }
            }
        }
        div.scroll { table #weekly.stack {
            thead { tr {
                th { "week" } th.num { "outputs" } th.num { "strict" } th.num { "human-check" }
                th.num { "sticky" } th.num { "rejected" }
            } }
            tbody {
                @for p in periods {
                    tr data-week=(p.week) {
                        td { (p.week) }
                        td.num data-field="total_safe_outputs" data-label="outputs" { (p.totals.total_safe_outputs) }
                        (rate_cell("strict_acceptance_rate", "strict", p.rates.strict_acceptance_rate))
                        (rate_cell("human_check_acceptance_rate", "human-check", p.rates.human_check_acceptance_rate))
                        (rate_cell("sticky_artifact_rate", "sticky", p.rates.sticky_artifact_rate))
                        td.num data-field="rejected" data-label="rejected" { (p.totals.rejected) }
                    }
                }
            }
        } }
    })
}

const RATES_NOTE: &str =
    "strict = strong / evaluable; human-check = (strong + medium) / evaluable; \
     sticky = (weak or exists-only) / evaluable. Three rates, never one blended number.";

pub async fn overview(
    StateExtractor(state): StateExtractor<State>,
    uri: Uri,
    reader: Gate,
    _place: ReadPermit,
    QueryPairs(pairs): QueryPairs,
) -> PageResult {
    let reader = gate(reader, &uri)?;
    let (filter, pairs) = page_filter(pairs)?;
    let report = report_of(&state, &reader, &filter, None).await?;
    let series = series::build(&state, &reader, filter).await?;
    let page = html! {
        h1 { "What became of the agents' writes" }
        (filter_form("/", &pairs, &[]))
        h2 { "Acceptance per week" }
        p.muted { (RATES_NOTE) }
        (weekly(&series.periods)?)
        h2 { "Counts by status" }
        (totals_cards(&report.totals))
        h2 { "By type" }
        (by_type_table(&report))
        p { a href=(format!("/workflows{}", query(&pairs, &["workflow"]))) { "Per workflow →" } }
    };
    Ok(Html(layout("Overview", page).into_string()))
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

pub async fn workflows(
    StateExtractor(state): StateExtractor<State>,
    uri: Uri,
    reader: Gate,
    _place: ReadPermit,
    QueryPairs(pairs): QueryPairs,
) -> PageResult {
    let reader = gate(reader, &uri)?;
    let (filter, pairs) = page_filter(pairs)?;
    let rows = workflow_rows(&state, &reader, &filter).await?;
    let survival = line_survival_of(&state, &filter, &reader.scope).await?;
    let link_query = query(&pairs, &["workflow"]);
    let page = html! {
        h1 { "Workflows" }
        (filter_form("/workflows", &pairs, &["workflow"]))
        p.muted { (RATES_NOTE) " Trend: strict rate of the last four weeks (up to the week of until, else this week) against the four weeks before." }
        p.muted { (SURVIVAL_NOTE) }
        div.scroll { table #workflows.stack {
            thead { tr {
                th { "workflow" } th.num { "outputs" } th.num { "strict" } th.num { "human-check" }
                th.num { "rejected" } th.num { "ignored" } th.num { "median h" } th { "trend" }
                th.num { "agent lines" } th.num { "alive at 7d" } th.num { "alive at 30d" }
                th.num { "survival unknown" }
            } }
            tbody {
                @for row in &rows {
                    @let (name, t, s) = (&row.name, &row.totals, &row.rates);
                    tr data-workflow=(name) {
                        td { a href=(format!("/workflows/{}{link_query}", crate::model::escape::url_path(name))) { (name) } }
                        td.num data-field="total_safe_outputs" data-label="outputs" { (t.total_safe_outputs) }
                        (rate_cell("strict_acceptance_rate", "strict", s.strict_acceptance_rate))
                        (rate_cell("human_check_acceptance_rate", "human-check", s.human_check_acceptance_rate))
                        td.num data-field="rejected" data-label="rejected" { (t.rejected) }
                        td.num data-field="ignored" data-label="ignored" { (t.ignored) }
                        td.num data-field="median_time_to_acceptance" data-label="median h" {
                            (s.median_time_to_acceptance.map_or("–".to_string(), |h| format!("{h:.1}")))
                        }
                        td data-field="trend" data-label="trend" { (row.trend) }
                        (survival_cells(survival.get(name)))
                    }
                }
            }
        } }
    };
    Ok(Html(layout("Workflows", page).into_string()))
}

pub async fn workflow(
    StateExtractor(state): StateExtractor<State>,
    uri: Uri,
    reader: Gate,
    _place: ReadPermit,
    QueryPairs(pairs): QueryPairs,
    Path(name): Path<String>,
) -> PageResult {
    let reader = gate(reader, &uri)?;
    let (filter, pairs) = page_filter(pairs)?;
    let filter = ReadFilter {
        workflow: Some(name.clone()),
        ..filter
    };
    let report = report_of(&state, &reader, &filter, None).await?;
    if report.totals.total_safe_outputs == 0 {
        return Err(ApiError::not_found(format!("no outputs of workflow {name:?} to show")).into());
    }
    let lines = report.line_survival.get(&name).cloned().unwrap_or_default();
    let (runs, older) = recent_runs(&state, &reader, &filter).await?;
    let series = series::build(&state, &reader, filter).await?;
    let page = html! {
        h1 { "Workflow " code { (name) } }
        (filter_form(&format!("/workflows/{}", crate::model::escape::url_path(&name)), &pairs, &["workflow"]))
        h2 { "Acceptance per week" }
        p.muted { (RATES_NOTE) }
        (weekly(&series.periods)?)
        h2 { "Counts by status" }
        (totals_cards(&report.totals))
        h2 { "Its types" }
        (by_type_table(&report))
        h2 { "Agent lines still there" }
        p.muted { (SURVIVAL_NOTE) }
        (survival_table(&lines))
        h2 { "Its runs" }
        div.scroll { table #runs.stack {
            thead { tr { th { "run" } th.num { "outputs" } th.num { "accepted" } th.num { "rejected" } th.num { "pending" } } }
            tbody {
                @for run in &runs {
                    @let (t, repo, run_id) = (&run.totals, &run.repo, run.run_id);
                    tr {
                        td { a href=(format!("/runs/{repo}/{run_id}")) { (repo) " #" (run_id) } }
                        td.num data-label="outputs" { (t.total_safe_outputs) }
                        td.num data-label="accepted" { (t.accepted_strong + t.accepted_medium + t.accepted_weak) }
                        td.num data-label="rejected" { (t.rejected) }
                        td.num data-label="pending" { (t.pending) }
                    }
                }
            }
        } }
        @if older {
            p.muted #older-runs { "The " (runs.len()) " most recent runs are shown; older runs are in the read API (" code { "/api/v1/runs/…" } ")." }
        }
    };
    Ok(Html(
        layout(&format!("Workflow {name}"), page).into_string(),
    ))
}

/// An instant of the API's JSON as `2026-10-01 09:04 UTC`.
fn when(v: &Value) -> String {
    v.as_str()
        .and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok())
        .map(|t| {
            t.with_timezone(&chrono::Utc)
                .format("%Y-%m-%d %H:%M UTC")
                .to_string()
        })
        .unwrap_or_else(|| text(v))
}

fn text(v: &Value) -> String {
    match v {
        Value::Null => "–".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A link to GitHub only for an http(s) URL; anything else is shown as text.
fn target_link(url: &Value) -> Markup {
    match url.as_str() {
        Some(u) if u.starts_with("https://") || u.starts_with("http://") => {
            html! { a href=(u) rel="noopener noreferrer" { (u) } }
        }
        _ => html! { (text(url)) },
    }
}

pub async fn run(
    StateExtractor(state): StateExtractor<State>,
    uri: Uri,
    reader: Gate,
    _place: ReadPermit,
    QueryPairs(pairs): QueryPairs,
    Path((owner, repo, run_id)): Path<(String, String, u64)>,
) -> PageResult {
    let reader = gate(reader, &uri)?;
    let (filter, _) = page_filter(pairs)?;
    let repo = format!("{owner}/{repo}");
    let view = run_view(&state, &reader, &filter, &repo, run_id)
        .await?
        .ok_or_else(|| {
            ApiError::not_found(format!("no outputs recorded for {repo} run {run_id}"))
        })?;
    let view = serde_json::to_value(view).map_err(|e| ApiError::internal(e.to_string()))?;
    let summary = &view["summary"];
    let fields = [
        "total",
        "accepted",
        "accepted_strong",
        "accepted_medium",
        "accepted_weak",
        "rejected",
        "pending",
        "ignored",
        "skipped",
        "unknown",
        "fallback_exists_only_count",
    ];
    let empty = Vec::new();
    let items = view["items"].as_array().unwrap_or(&empty);
    let page = html! {
        h1 { "Run " (repo) " #" (run_id) }
        p { "workflow " code { (text(&view["workflow"])) } }
        section #summary .cards {
            @for f in fields {
                div.card { (f.replace('_', " ")) b data-field=(f) { (text(&summary[f])) } }
            }
        }
        h2 { "Outputs" }
        div.scroll { table #items.stack {
            thead { tr { th { "output" } th { "type" } th { "outcome" } th { "signal" } th { "object" } } }
            tbody {
                @for item in items {
                    @let id = item["safe_output_id"].as_str().unwrap_or_default();
                    tr {
                        td { a href=(output_path(id)) { (id) } }
                        td data-label="type" { code { (text(&item["type"])) } }
                        td data-label="outcome" { (text(&item["outcome_status"])) " · " (text(&item["evidence_strength"])) }
                        td data-label="signal" { code { (text(&item["signal"])) } }
                        td data-label="object" { (target_link(&item["object_url"])) }
                    }
                }
            }
        } }
    };
    Ok(Html(layout(&format!("Run {run_id}"), page).into_string()))
}

/// An observation's event (flattened into it): its kind, then its fields.
fn event_text(observation: &Value) -> String {
    let kind = text(&observation["kind"]).replace('_', " ");
    let rest: Vec<String> = observation
        .as_object()
        .map(|m| {
            m.iter()
                .filter(|(k, _)| {
                    !matches!(
                        k.as_str(),
                        "kind" | "id" | "at" | "target" | "actor" | "snapshot"
                    )
                })
                .map(|(k, v)| {
                    let v = text(v);
                    match v.char_indices().nth(80) {
                        Some((cut, _)) => format!("{k}: {}…", &v[..cut]),
                        None => format!("{k}: {v}"),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    if rest.is_empty() {
        kind
    } else {
        format!("{kind} ({})", rest.join(", "))
    }
}

pub async fn output(
    StateExtractor(state): StateExtractor<State>,
    uri: Uri,
    reader: Gate,
    _place: ReadPermit,
    QueryPairs(pairs): QueryPairs,
    Path(id): Path<String>,
) -> PageResult {
    let reader = gate(reader, &uri)?;
    let (filter, _) = page_filter(pairs)?;
    let detail = output_detail(&state, &reader, &filter, &id).await?;
    let detail = serde_json::to_value(detail).map_err(|e| ApiError::internal(e.to_string()))?;
    let (o, x) = (&detail["outcome"], &detail["execution"]);
    let empty = Vec::new();
    let repo = text(&x["repo"]);
    let run_link = x["run_id"].as_u64().map(|r| format!("/runs/{repo}/{r}"));
    let page = html! {
        h1 { "Output " code { (id) } }
        section #verdict {
            h2 { "Verdict" }
            p data-field="outcome" {
                b { (text(&o["outcome_status"])) " · " (text(&o["evidence_strength"])) }
                " — signal " code { (text(&o["human_check_signal"])) }
            }
            p { (text(&o["notes"])) }
        }
        section #execution {
            h2 { "What was executed" }
            table { tbody {
                tr { th { "type" } td { code { (text(&x["safe_output_type"])) } } }
                tr { th { "repository" } td { (repo) } }
                tr { th { "workflow" } td { (text(&x["workflow"])) } }
                tr { th { "run" } td {
                    @if let Some(l) = &run_link { a href=(l) { (text(&x["run_id"])) } } @else { "–" }
                } }
                tr { th { "executed at" } td { (when(&x["executed_at"])) } }
                tr { th { "target" } td data-field="target" {
                    (text(&x["target"]["kind"])) " " (text(&x["target"]["number"])) " "
                    (target_link(&x["target"]["url"]))
                } }
            } }
        }
        section #windows {
            h2 { "Verdict at each window" }
            div.scroll { table {
                thead { tr { th { "window" } th { "outcome" } th { "why (signal)" } th { "evaluated" } } }
                tbody {
                    @for (name, _) in crate::model::CHECKPOINTS {
                        @let w = &o["windows"][name];
                        tr data-window=(name) {
                            td { "T+" (name) }
                            @if w.is_null() {
                                td.muted colspan="3" { "not reached yet" }
                            } @else {
                                td { (text(&w["outcome_status"])) " · " (text(&w["evidence_strength"])) }
                                td { code { (text(&w["human_check_signal"])) } }
                                td { (when(&w["evaluated_at"])) }
                            }
                        }
                    }
                }
            } }
        }
        section #history {
            h2 { "Changes of verdict" }
            ol.timeline {
                @for t in detail["transitions"].as_array().unwrap_or(&empty) {
                    li {
                        (when(&t["at"])) ": " b { (text(&t["outcome_status"])) " · " (text(&t["evidence_strength"])) }
                        " — " code { (text(&t["human_check_signal"])) }
                        @if let Some(obs) = t["observation"].as_str() { " after " code { (obs) } } @else { " (time passed)" }
                    }
                }
            }
        }
        section #observations {
            h2 { "Observations of the target" }
            ol.timeline {
                @for ob in detail["observations"].as_array().unwrap_or(&empty) {
                    li {
                        (when(&ob["at"])) " · " b { (event_text(ob)) }
                        " by " (text(&ob["actor"]["login"]))
                        " " span.muted { code { (text(&ob["id"])) } }
                    }
                }
            }
        }
    };
    Ok(Html(layout(&format!("Output {id}"), page).into_string()))
}
