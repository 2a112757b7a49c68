//! The outputs list (`GET /outputs`): the outputs behind every count of the
//! other pages. Filters in the URL: the read API's cuts, plus the page's own
//! - `run` — one run's outputs (with `repo`, read by the run's id prefix);
//! - `count` — the outputs counted in one of the report's totals
//!   (`accepted_weak`, `fallback_exists_only_count`, …), by the report's own
//!   tally, at `window` when one is given;
//! - `window` — adds the verdict at T+window (`not yet` before it);
//! - `awaiting` — the outputs whose next window is this one (`final`: none);
//! - `sort` (`executed`, `status`, `type`, `workflow`, `output`; `-` first
//!   for descending; default `-executed`) and `page` (50 rows a page).
//!
//! Each row is dated, links its output's page, its run's page and its
//! target on GitHub, and says where it stands in its windows.

use maud::{html, Markup};

use super::form::{filters, Choices};
use super::links::{export_links, list_path, output_path, run_path, workflow_path};
use super::words::{signal, verdict};
use super::{day, page, when, with, PageResult, Visit};
use crate::http::api::{admitted_outcomes, run_records};
use crate::http::read::Read;
use crate::http::ApiError;
use crate::model::{OutcomeRecord, CHECKPOINTS};
use crate::read::report::{parse_window, schedule_of, Counted, Totals};

/// Rows on one page.
pub(crate) const PAGE_SIZE: usize = 50;

const SORTS: [&str; 5] = ["executed", "status", "type", "workflow", "output"];

/// The page's own parameters, checked.
struct Own {
    run: Option<u64>,
    count: Option<String>,
    window: Option<&'static str>,
    awaiting: Option<String>,
    sort: String,
    page: usize,
}

fn own(rest: &std::collections::BTreeMap<String, String>) -> Result<Own, ApiError> {
    let bad = |name: &str, v: &str, want: &str| {
        ApiError::bad_request(format!("{name} {v:?} is not {want}"))
    };
    let run = rest
        .get("run")
        .map(|v| v.parse::<u64>().map_err(|_| bad("run", v, "a run id")))
        .transpose()?;
    let count = rest.get("count").cloned();
    if let Some(c) = &count {
        if !Totals::FIELDS.contains(&c.as_str()) {
            return Err(bad(
                "count",
                c,
                &format!("one of {}", Totals::FIELDS.join(", ")),
            ));
        }
    }
    let window = rest
        .get("window")
        .map(|w| parse_window(w).ok_or_else(|| bad("window", w, "one of 1h, 24h, 7d, 30d")))
        .transpose()?;
    let awaiting = rest.get("awaiting").cloned();
    if let Some(a) = &awaiting {
        if a != "final" && parse_window(a).is_none() {
            return Err(bad("awaiting", a, "one of 1h, 24h, 7d, 30d, final"));
        }
    }
    let sort = rest
        .get("sort")
        .cloned()
        .unwrap_or_else(|| "-executed".into());
    if !SORTS.contains(&sort.trim_start_matches('-')) {
        return Err(bad(
            "sort",
            &sort,
            &format!("one of {} (- for descending)", SORTS.join(", ")),
        ));
    }
    let page = rest
        .get("page")
        .map(|p| {
            p.parse::<usize>()
                .ok()
                .filter(|p| *p >= 1)
                .ok_or_else(|| bad("page", p, "a page number"))
        })
        .transpose()?
        .unwrap_or(1);
    Ok(Own {
        run,
        count,
        window,
        awaiting,
        sort,
        page,
    })
}

impl Own {
    fn keeps(&self, r: &OutcomeRecord) -> bool {
        self.run.is_none_or(|run| r.run_id == Some(run))
            && self
                .count
                .as_deref()
                .is_none_or(|field| Counted::of(r, self.window).is_some_and(|c| c.counts_in(field)))
            && self
                .awaiting
                .as_deref()
                .is_none_or(|a| schedule_of(r).next_window.unwrap_or("final") == a)
    }

    fn sort(&self, records: &mut [OutcomeRecord]) {
        let key = self.sort.trim_start_matches('-');
        records.sort_by(|a, b| {
            let by = match key {
                "status" => a
                    .outcome_status
                    .cmp(&b.outcome_status)
                    .then(a.evidence_strength.cmp(&b.evidence_strength)),
                "type" => a.safe_output_type.cmp(&b.safe_output_type),
                "workflow" => a.workflow.cmp(&b.workflow),
                "output" => a.safe_output_id.cmp(&b.safe_output_id),
                _ => a.created_at.cmp(&b.created_at),
            };
            by.then(a.created_at.cmp(&b.created_at))
                .then(a.safe_output_id.cmp(&b.safe_output_id))
        });
        if self.sort.starts_with('-') {
            records.reverse();
        }
    }
}

/// The cuts of the list, in words.
fn described(pairs: &[(String, String)]) -> String {
    let words: Vec<String> = pairs
        .iter()
        .filter(|(k, _)| k != "page" && k != "sort")
        .map(|(k, v)| match k.as_str() {
            "count" => format!("counted in {}", v.replace('_', " ")),
            "awaiting" if v == "final" => "verdict final".to_string(),
            "awaiting" => format!("awaiting T+{v}"),
            "window" => format!("verdict at T+{v}"),
            "since" => format!("executed from {v}"),
            "until" => format!("executed before {v}"),
            _ => format!("{k} {v}"),
        })
        .collect();
    if words.is_empty() {
        "all outputs".into()
    } else {
        words.join(" · ")
    }
}

/// A sortable column's header.
fn sort_header(pairs: &[(String, String)], own: &Own, key: &str, label: &str) -> Markup {
    let current = own.sort.trim_start_matches('-') == key;
    let next = if current && !own.sort.starts_with('-') {
        format!("-{key}")
    } else {
        key.to_string()
    };
    let mark = match (current, own.sort.starts_with('-')) {
        (true, true) => " ▼",
        (true, false) => " ▲",
        _ => "",
    };
    html! {
        th aria-sort=(match (current, own.sort.starts_with('-')) { (true, true) => "descending", (true, false) => "ascending", _ => "none" }) {
            a href=(list_path(&with(pairs, &["page"], &[("sort", &next)]))) { (label) (mark) }
        }
    }
}

/// Where an output stands in its windows.
pub(crate) fn standing(r: &OutcomeRecord, now: chrono::DateTime<chrono::Utc>) -> Markup {
    let s = schedule_of(r);
    html! {
        @match (s.next_window, s.next_window_due_at) {
            (Some(w), Some(due)) => span data-next-window=(w) data-due=(due.to_rfc3339()) {
                "T+" (w) " due " span.due { (day(due, now)) } " " (due.format("%H:%M UTC"))
            },
            _ => span data-final="true" { "final since " (day(s.final_at, now)) },
        }
    }
}

/// The target as a short link to GitHub: `PR #67`, `issue #51`, `comment on #66`.
pub(crate) fn target_cell(r: &OutcomeRecord) -> Markup {
    let Some(t) = &r.target else {
        return html! { span.muted { "no target" } };
    };
    let kind = format!("{:?}", t.kind);
    let name = match (t.number, t.parent_number) {
        (Some(n), _) if t.kind.is_thread() => format!(
            "{} #{n}",
            if kind == "PullRequest" { "PR" } else { "issue" }
        ),
        (_, Some(p)) => format!("{} on #{p}", words_of_kind(&kind)),
        _ => words_of_kind(&kind),
    };
    match &t.url {
        Some(u) => super::links::outside_link(u, html! { (name) }),
        None => html! { (name) },
    }
}

/// `ReviewComment` → `review comment`.
pub(crate) fn words_of_kind(kind: &str) -> String {
    let mut out = String::new();
    for (i, c) in kind.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push(' ');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

pub async fn outputs(Read(state, mut visit, ..): Read<Visit>) -> PageResult {
    let extra = ["run", "count", "window", "awaiting", "sort", "page"];
    let (filter, rest, pairs) = visit.query(&extra)?;
    let own = own(&rest)?;
    let mut records = match (own.run, filter.repo.as_deref()) {
        (Some(run), Some(repo)) => run_records(&state, &visit.reader, &filter, repo, run).await?,
        _ => admitted_outcomes(&state, &filter, &visit.reader.scope).await?,
    };
    records.retain(|r| own.keeps(r));
    own.sort(&mut records);
    let now = state.shared.clock.now();
    let total = records.len();
    let pages = total.div_ceil(PAGE_SIZE).max(1);
    let page_no = own.page.min(pages);
    let shown = &records[(page_no - 1) * PAGE_SIZE..(page_no * PAGE_SIZE).min(total)];
    let to_page = |n: usize| list_path(&with(&pairs, &[], &[("page", &n.to_string())]));
    let content = html! {
        h1 { "Outputs" }
        p #cuts { b #total data-total=(total) { (total) } (if total == 1 { " output" } else { " outputs" }) ": " (described(&pairs))
            @if !pairs.is_empty() { " · " a href="/outputs" { "clear" } } }
        (filters("/outputs", &pairs, &[], &Choices::of_records(&records), None))
        (export_links(&pairs, &[]))
        div.scroll { table #outputs.stack {
            thead { tr {
                (sort_header(&pairs, &own, "executed", "executed"))
                (sort_header(&pairs, &own, "output", "output"))
                (sort_header(&pairs, &own, "workflow", "workflow"))
                (sort_header(&pairs, &own, "type", "type"))
                (sort_header(&pairs, &own, "status", "verdict"))
                @if let Some(w) = own.window { th { "at T+" (w) } }
                th { "windows" } th { "target" } th { "run" }
            } }
            tbody {
                @for r in shown {
                    tr data-output=(r.safe_output_id) data-status=(r.outcome_status.as_str()) {
                        td data-label="executed" { time datetime=(r.created_at.to_rfc3339()) { (when(r.created_at)) } }
                        td data-label="output" { a href=(output_path(&r.safe_output_id)) { (super::id_text(&r.safe_output_id)) } }
                        td data-label="workflow" {
                            @if let Some(w) = &r.workflow { a href=(workflow_path(w)) { (w) } } @else { "–" }
                        }
                        td data-label="type" { code { (super::id_text(&r.safe_output_type)) } }
                        td data-label="verdict" { span { (verdict(r.outcome_status, r.evidence_strength)) " " (signal(&r.human_check_signal)) } }
                        @if let Some(w) = own.window {
                            td data-label=(format!("at T+{w}")) data-field="at_window" {
                                @match r.windows.get(w) {
                                    Some(s) => (verdict(s.outcome_status, s.evidence_strength)),
                                    None => span.muted { "not yet" },
                                }
                            }
                        }
                        td data-label="windows" { (standing(r, now)) }
                        td data-label="target" { (target_cell(r)) }
                        td data-label="run" {
                            @match r.run_id {
                                Some(id) => a href=(run_path(r.safe_output_id.split(':').next().unwrap_or(""), id)) { span.seg { "#" (id) } },
                                None => "–",
                            }
                        }
                    }
                }
            }
        } }
        nav.pager aria-label="Pages" {
            @if page_no > 1 { a rel="prev" href=(to_page(page_no - 1)) { "← previous page" } }
            span.muted { "page " (page_no) " of " (pages) " · " (PAGE_SIZE) " a page" }
            @if page_no < pages { a rel="next" href=(to_page(page_no + 1)) { "next page →" } }
        }
        p.muted { "Windows: T+" (CHECKPOINTS.map(|(n, _)| n).join(", T+")) "; after T+30d a verdict is final." }
    };
    page(
        "Outputs",
        &[("Outputs".into(), None)],
        &visit.viewer,
        content,
    )
}
