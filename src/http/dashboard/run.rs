//! One run (`GET /runs/{owner}/{repo}/{run_id}`), the shape of
//! `gh aw outcomes RUN`: its Actions run on GitHub, the counts (each a door
//! to its outputs), how many outputs await which window, and one row per
//! output with its target (and title), verdict, why and windows.

use axum::extract::Path;
use maud::html;

use super::links::{list_path, output_path, workflow_path};
use super::list::{standing, target_cell};
use super::overview::awaiting_line;
use super::words::{signal, verdict};
use super::{day, page, when, PageResult, Visit};
use crate::http::api::{run_records, run_view_of, thread_of, thread_titles};
use crate::http::read::Read;
use crate::http::shell::crumb;
use crate::http::ApiError;

/// The summary's counts, as the run view names them.
const FIELDS: [(&str, &str); 11] = [
    ("total", "outputs"),
    ("accepted", "accepted"),
    ("accepted_strong", "accepted · strong"),
    ("accepted_medium", "accepted · medium"),
    ("accepted_weak", "accepted · weak"),
    ("rejected", "rejected"),
    ("pending", "pending"),
    ("ignored", "ignored"),
    ("skipped", "skipped"),
    ("unknown", "unknown"),
    ("fallback_exists_only_count", "exists only"),
];

/// The list's parameters for the outputs behind a run view count.
fn cut(field: &str) -> Vec<(&'static str, &str)> {
    match field {
        "total" => vec![],
        "accepted_strong" => vec![("status", "accepted"), ("strength", "strong")],
        "accepted_medium" => vec![("status", "accepted"), ("strength", "medium")],
        "accepted_weak" => vec![("count", "accepted_weak")],
        "fallback_exists_only_count" => vec![("count", "fallback_exists_only_count")],
        status => vec![("status", status)],
    }
}

pub async fn run(
    Read(state, mut visit, ..): Read<Visit>,
    Path((owner, repo, run_id)): Path<(String, String, u64)>,
) -> PageResult {
    let (filter, _, pairs) = visit.query(&[])?;
    let repo = format!("{owner}/{repo}");
    let mut records = run_records(&state, &visit.reader, &filter, &repo, run_id).await?;
    if records.is_empty() {
        return Err(
            ApiError::not_found(format!("no outputs recorded for {repo} run {run_id}")).into(),
        );
    }
    records.sort_by(|a, b| {
        a.created_at
            .cmp(&b.created_at)
            .then(a.safe_output_id.cmp(&b.safe_output_id))
    });
    let view = serde_json::to_value(run_view_of(&repo, run_id, &records))
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let threads = records
        .iter()
        .filter_map(|r| r.target.as_ref())
        .filter_map(|t| thread_of(t).map(|n| (t.repo.clone(), n)))
        .collect();
    let titles = thread_titles(&state, threads).await?;
    let now = state.shared.clock.now();
    let gh = super::github(&state);
    let workflow = records.iter().find_map(|r| r.workflow.clone());
    let first = records.iter().map(|r| r.created_at).min().unwrap_or(now);
    let id = run_id.to_string();
    let of_run = |field: &str| {
        let mut p: Vec<(&str, &str)> = vec![("repo", repo.as_str()), ("run", id.as_str())];
        p.extend(cut(field));
        p.extend(
            pairs
                .iter()
                .filter(|(k, _)| k != "repo")
                .map(|(k, v)| (k.as_str(), v.as_str())),
        );
        list_path(&p)
    };
    let run_pairs: Vec<(String, String)> =
        vec![("repo".into(), repo.clone()), ("run".into(), id.clone())];
    let rejection_rate = crate::read::report::Report::overall(&records)
        .1
        .rejection_rate;
    let content = html! {
        h1 { "Run " (repo) " #" (run_id) }
        p {
            "Workflow "
            @match &workflow { Some(w) => a href=(workflow_path(w)) { code { (w) } }, None => "–" }
            ", executed " time datetime=(first.to_rfc3339()) { (when(first)) }
            " · " a href=(gh.run(&repo, run_id)) rel="noopener noreferrer" { "Actions run on GitHub" }
        }
        section #summary .cards {
            @for (field, label) in FIELDS {
                a.card href=(of_run(field)) {
                    (label) b data-field=(field) { (view["summary"][field]) }
                    @if field == "rejected" {
                        span.share data-rate=(rejection_rate.map(|r| r.to_string()).unwrap_or_default()) {
                            (super::percent(rejection_rate)) " of evaluable"
                        }
                    }
                }
            }
        }
        (awaiting_line(&crate::read::report::awaiting(&records), Some(&run_pairs)))
        h2 { "Outputs" }
        div.scroll { table #items.stack {
            thead { tr {
                th { "output" } th { "executed" } th { "type" } th { "target" } th { "verdict" }
                th { "why" } th { "windows" }
            } }
            tbody {
                @for r in &records {
                    @let title = r.target.as_ref().and_then(|t| thread_of(t).and_then(|n| titles.get(&(t.repo.clone(), n))));
                    tr data-output=(r.safe_output_id) {
                        td { a href=(output_path(&r.safe_output_id)) { (super::id_text(&r.safe_output_id)) } }
                        td data-label="executed" { (day(r.created_at, now)) " " (r.created_at.format("%H:%M")) }
                        td data-label="type" { code { (super::id_text(&r.safe_output_type)) } }
                        td data-label="target" { span {
                            (target_cell(r))
                            @if let Some(t) = title { br; span.muted { "“" (t) "”" } }
                        } }
                        td data-label="verdict" { (verdict(r.outcome_status, r.evidence_strength)) }
                        td data-label="why" { (signal(&r.human_check_signal)) }
                        td data-label="windows" { (standing(r, now)) }
                    }
                }
            }
        } }
    };
    let mut crumbs = vec![crumb("Workflows", "/workflows")];
    if let Some(w) = &workflow {
        crumbs.push(crumb(w.clone(), workflow_path(w)));
    }
    crumbs.push((format!("Run #{run_id}"), None));
    page(&format!("Run {run_id}"), &crumbs, &visit.viewer, content)
}
