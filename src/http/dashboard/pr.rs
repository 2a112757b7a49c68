//! One pull request (`GET /prs/{owner}/{repo}/{number}`): every output on
//! it (the PR itself, its comments and reviews, its head branch and head
//! commit — from whichever runs), with what its `safe-outcomes` check run
//! says: the title, one row per output, and the Markdown as sent. The check
//! run links here when several runs touched the PR.

use std::collections::BTreeSet;

use axum::extract::Path;
use maud::html;

use super::links::{output_path, run_path, workflow_path};
use super::overview::awaiting_line;
use super::words::{signal, verdict};
use super::{page, PageResult, Visit};
use crate::github::checks::{progress, render};
use crate::http::api::pull_request;
use crate::http::read::Read;
use crate::http::ApiError;

pub(crate) async fn pull_request_page(
    Read(state, mut visit, ..): Read<Visit>,
    Path((owner, repo, number)): Path<(String, String, u64)>,
) -> PageResult {
    visit.query(&[])?;
    let repo = format!("{owner}/{repo}");
    let pr = pull_request(&state, &visit.reader, &repo, number)
        .await?
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "no tracked outputs on a pull request {repo}#{number}"
            ))
        })?;
    let check = render(
        &pr,
        &state.auth.options.public_url,
        &state.auth.options.web_url,
    );
    let gh = super::github(&state);
    let runs: BTreeSet<(String, u64)> = pr
        .outcomes
        .iter()
        .filter_map(|o| {
            o.run_id.map(|r| {
                (
                    o.safe_output_id.split(':').next().unwrap_or("").to_string(),
                    r,
                )
            })
        })
        .collect();
    let content = html! {
        h1 { "Pull request " (repo) " #" (number) }
        p {
            @if !pr.title.is_empty() { "“" (pr.title) "” · " }
            a href=(gh.pull(&repo, number)) rel="noopener noreferrer" { "open on GitHub" }
            " · head " (gh.commit_link(&repo, &pr.head_sha))
        }
        p {
            (pr.outcomes.len()) " outputs from " (runs.len()) (if runs.len() == 1 { " run" } else { " runs" }) ": "
            @for (i, (r, id)) in runs.iter().enumerate() {
                @if i > 0 { ", " }
                a href=(run_path(r, *id)) { "run " (id) }
                " (" a href=(gh.run(r, *id)) rel="noopener noreferrer" { "Actions" } ")"
            }
        }
        (awaiting_line(&crate::read::report::awaiting(&pr.outcomes), None))
        section #check-run {
            h2 { "What its check run says" }
            p #check-title { b { (check.title) } }
            div.scroll { table #check-rows.stack {
                thead { tr { th { "output" } th { "workflow · run" } th { "verdict" } th { "windows" } th { "why" } } }
                tbody {
                    @for o in &pr.outcomes {
                        tr data-output=(o.safe_output_id) {
                            td { a href=(output_path(&o.safe_output_id)) { code { (super::id_text(&o.safe_output_type)) } } br; span.muted { (super::id_text(&o.safe_output_id)) } }
                            td data-label="workflow · run" { span {
                                @match &o.workflow { Some(w) => a href=(workflow_path(w)) { (w) }, None => "–" }
                                @if let Some(r) = o.run_id { " · " a href=(run_path(o.safe_output_id.split(':').next().unwrap_or(""), r)) { "run " (r) } }
                            } }
                            td data-label="verdict" { span { (verdict(o.outcome_status, o.evidence_strength)) " " (signal(&o.human_check_signal)) } }
                            td data-label="windows" { (progress(o)) }
                            td data-label="why" { (o.notes) }
                        }
                    }
                }
            } }
            details {
                summary { "The check run's Markdown, as sent to GitHub" }
                pre.markdown { (check.summary) }
            }
        }
    };
    page(
        &format!("PR #{number}"),
        &[(format!("{repo} #{number}"), None)],
        &visit.viewer,
        content,
    )
}
