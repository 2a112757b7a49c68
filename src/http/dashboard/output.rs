//! One output (`GET /outputs/{id}`): its verdict and why, when its next
//! window is due or that its verdict is final, where it is on GitHub (the
//! target with its title, the Actions run, the PR page when several outputs
//! share its PR), the verdict at each window, each change of verdict
//! anchored to the observation that caused it, and the observations in
//! words.

use std::collections::BTreeMap;

use axum::extract::Path;
use maud::{html, Markup};

use super::links::{outside_link, pr_path, run_path, workflow_path, GitHub};
use super::list::words_of_kind;
use super::words::{observation, signal, verdict};
use super::{day, page, when, PageResult, Visit};
use crate::http::api::{output_detail, pull_request, thread_of, OutputDetail};
use crate::http::read::Read;
use crate::http::shell::crumb;
use crate::model::{ExecutionRecord, CHECKPOINTS};

/// The target, in words, with its title and link.
fn target(x: &ExecutionRecord, title: Option<&str>, gh: &GitHub) -> Markup {
    let Some(t) = &x.target else {
        return html! { span.muted { "no target named" } };
    };
    let kind = words_of_kind(&format!("{:?}", t.kind));
    let url = t
        .url
        .clone()
        .or_else(|| thread_of(t).map(|n| gh.issue(&t.repo, n)));
    let label = html! {
        (kind)
        @if let Some(n) = t.number { " #" (n) }
        @else if let Some(p) = t.parent_number { " on #" (p) }
        @else if let Some(name) = t.name.as_ref().or(t.git_ref.as_ref()) { " " code { (name) } }
    };
    html! {
        @match url { Some(u) => (outside_link(&u, label)), None => (label) }
        @if let Some(title) = title { " — “" (title) "”" }
    }
}

pub async fn output(Read(state, mut visit, ..): Read<Visit>, Path(id): Path<String>) -> PageResult {
    let (filter, _, _) = visit.query(&[])?;
    let detail = output_detail(&state, &visit.reader, &filter, &id).await?;
    let OutputDetail {
        outcome,
        execution: x,
        schedule: plan,
        observations,
        transitions,
    } = &detail;
    let o = outcome.as_ref();
    let now = state.shared.clock.now();
    let gh = super::github(&state);
    let windows = o.map(|o| o.windows.clone()).unwrap_or_default();
    let title = observations
        .iter()
        .rev()
        .filter_map(|ob| ob.snapshot.as_ref())
        .map(|s| s.title.as_str())
        .find(|t| !t.is_empty());
    let thread = x.target.as_ref().and_then(thread_of);
    let pr = match thread {
        Some(n) => pull_request(&state, &visit.reader, &x.repo, n).await?,
        None => None,
    };
    // Observations are numbered for anchors; a change of verdict links its cause.
    let anchors: BTreeMap<&str, usize> = observations
        .iter()
        .enumerate()
        .map(|(i, ob)| (ob.id.as_str(), i + 1))
        .collect();
    let content = html! {
        h1 {
            code { (x.output_type) } " on " (target(x, title, &gh))
        }
        p.muted #output-id { "output " code { (x.id) } }
        section #verdict {
            h2 { "Verdict" }
            @match o {
                Some(o) => {
                    p data-field="outcome" {
                        (verdict(o.outcome_status, o.evidence_strength)) " — " (signal(&o.human_check_signal))
                    }
                    p { (o.notes) }
                }
                None => p { "Not judged yet." }
            }
            @match (plan.next_window, plan.next_window_due_at) {
                (Some(w), Some(due)) => p #next-window data-window=(w) data-due=(due.to_rfc3339()) {
                    "Next judged at " b { "T+" (w) } ", due " span.due { (day(due, now)) ", " (due.format("%H:%M UTC")) }
                    @if due <= now { " (the evaluation is on its way)" }
                    ". The verdict is final at T+30d, " (day(plan.final_at, now)) "."
                },
                _ => p #next-window data-final="true" {
                    b { "This verdict is final" } ": every window up to T+30d is judged ("
                    (day(plan.final_at, now)) "). A later revert would still count, as a new fact."
                },
            }
        }
        section #github {
            h2 { "On GitHub" }
            ul {
                li { "Target: " (target(x, title, &gh)) }
                @if let Some(run) = x.run_id {
                    li { "Workflow run: " a href=(gh.run(&x.repo, run)) rel="noopener noreferrer" { "Actions run " (run) } }
                }
                @if let Some(actor) = &x.actor { li { "Written as " (gh.actor_link(actor)) } }
                li { "Repository: " a href=(gh.repo(&x.repo)) rel="noopener noreferrer" { (x.repo) } }
                @if let Some(pr) = &pr {
                    li { "Every output on this pull request, as its check run shows them: "
                        a href=(pr_path(&pr.repo, pr.number)) {
                            "PR #" (pr.number) " (" (pr.outcomes.len()) (if pr.outcomes.len() == 1 { " output)" } else { " outputs)" })
                        } }
                }
            }
        }
        section #execution {
            h2 { "What was executed" }
            dl.facts {
                dt { "type" } dd { code { (x.output_type) } }
                dt { "workflow" } dd {
                    @match &x.workflow { Some(w) => a href=(workflow_path(w)) { (w) }, None => "–" }
                }
                dt { "run" } dd {
                    @match x.run_id { Some(r) => a href=(run_path(&x.repo, r)) { (x.repo) " #" (r) }, None => "–" }
                }
                dt { "executed at" } dd { time datetime=(x.executed_at.to_rfc3339()) { (when(x.executed_at)) } }
            }
        }
        section #windows {
            h2 { "Verdict at each window" }
            div.scroll { table.stack {
                thead { tr { th { "window" } th { "verdict" } th { "why" } th { "when" } } }
                tbody {
                    @for (name, hours) in CHECKPOINTS {
                        @let due = crate::read::report::maturity::due(x.executed_at, hours);
                        tr data-window=(name) {
                            td { "T+" (name) }
                            @match windows.get(name) {
                                Some(w) => {
                                    td data-label="verdict" { (verdict(w.outcome_status, w.evidence_strength)) }
                                    td data-label="why" { (signal(&w.human_check_signal)) }
                                    td data-label="when" { (when(w.evaluated_at)) }
                                }
                                None => {
                                    td.muted data-label="verdict" { "not reached yet" }
                                    td data-label="why" { "–" }
                                    td data-label="when" data-due=(due.to_rfc3339()) { "due " (when(due)) }
                                }
                            }
                        }
                    }
                }
            } }
        }
        section #history {
            h2 { "Changes of verdict" }
            ol.timeline {
                @for t in transitions {
                    li {
                        (when(t.at)) ": " (verdict(t.outcome_status, t.evidence_strength)) " — " (signal(&t.human_check_signal))
                        @match t.observation.as_deref().and_then(|id| anchors.get(id)) {
                            Some(n) => {
                                ", after " (observation(&observations[*n - 1], &x.repo, &gh))
                                " " a.cause href=(format!("#obs-{n}")) { "(fact " (n) " below)" }
                            }
                            None => @if t.at == x.executed_at { " (at execution)" } @else { " (as time passed)" },
                        }
                    }
                }
            }
        }
        section #observations {
            h2 { "What happened to the target" }
            ol.timeline {
                @for (i, ob) in observations.iter().enumerate() {
                    li id=(format!("obs-{}", i + 1)) {
                        time datetime=(ob.at.to_rfc3339()) { (when(ob.at)) } " · " (observation(ob, &x.repo, &gh))
                    }
                }
            }
        }
    };
    let mut crumbs = vec![crumb("Workflows", "/workflows")];
    if let Some(w) = &x.workflow {
        crumbs.push(crumb(w.clone(), workflow_path(w)));
    }
    if let Some(r) = x.run_id {
        crumbs.push(crumb(format!("Run #{r}"), run_path(&x.repo, r)));
    }
    crumbs.push((x.id.clone(), None));
    page(&format!("Output {id}"), &crumbs, &visit.viewer, content)
}
