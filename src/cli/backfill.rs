//! `safe-outcomes backfill`: ask a running server to backfill gh-aw runs
//! (`POST /api/v1/backfill`) and, with `--watch`, follow the jobs
//! (`GET /api/v1/backfill`) until every one of them is done: a progress bar
//! per repository on a terminal, a line per change of state otherwise, and a
//! closing table. A repository no installation covers is exit 4.

use std::collections::BTreeMap;
use std::time::Duration;

use clap::Args;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget};

use super::exit::emit_line;
use super::source::{parse_repo, refused, Remote};
use super::ServerArgs;
use crate::http::backfill::{BackfillJobView, BackfillJobs};
use crate::ingest::client::Client;

#[derive(Args, Debug)]
pub struct BackfillArgs {
    /// Days of history.
    #[arg(long, default_value_t = 30)]
    pub days: u32,
    /// Only this repository; default: every repository of the active
    /// installations.
    #[arg(short = 'R', long, value_name = "OWNER/NAME", value_parser = parse_repo)]
    pub repo: Option<String>,
    /// Follow the backfill until every job is done, with progress.
    #[arg(long)]
    pub watch: bool,
    /// Seconds between looks at the jobs with --watch.
    #[arg(long, default_value_t = 2, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub interval: u64,
    #[command(flatten)]
    pub server: ServerArgs,
}

/// Ask the running server to backfill: the server holds the store (and the
/// App's credentials, token cache and rate-limit budget), so the command
/// does not open the store itself.
pub(crate) async fn request_backfill(args: BackfillArgs) -> anyhow::Result<()> {
    let client = Client::new(&args.server.url, None, args.server.token_value());
    let mut body = serde_json::json!({ "days": args.days });
    if let Some(repo) = &args.repo {
        body["repo"] = serde_json::json!(repo);
    }
    let answer = client.post_json("/api/v1/backfill", &body).await?;
    if answer.status >= 300 {
        return Err(refused(&args.server.url, answer.status, &answer.body));
    }
    emit_line(serde_json::to_string_pretty(&answer.body)?)?;
    if args.watch {
        let remote = Remote::new(&args.server.url, args.server.token.clone());
        watch(
            &remote,
            args.repo.as_deref(),
            Duration::from_secs(args.interval),
        )
        .await?;
    }
    Ok(())
}

/// Poll the jobs (of `repo`, or all) until none is running; print where each ended.
async fn watch(remote: &Remote, repo: Option<&str>, every: Duration) -> anyhow::Result<()> {
    let query: Vec<(&str, String)> = repo.map(|r| ("repo", r.to_string())).into_iter().collect();
    let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
    let mut bars: BTreeMap<String, ProgressBar> = BTreeMap::new();
    let mut last_state: BTreeMap<String, String> = BTreeMap::new();
    let jobs = loop {
        let jobs: BackfillJobs =
            serde_json::from_value(remote.get_json("/api/v1/backfill", &query).await?)?;
        for job in &jobs.jobs {
            let bar = bars
                .entry(job.repo.clone())
                .or_insert_with(|| multi.add(super::progress::bar(0, &job.repo)));
            bar.set_length(job.runs_found.max(1));
            bar.set_position(job.runs_harvested + job.runs_failed);
            bar.set_message(format!(
                "{} — {} outputs",
                job.state,
                job.outputs_evaluated + job.outputs_observed
            ));
            if last_state
                .insert(job.repo.clone(), job.state.clone())
                .as_ref()
                != Some(&job.state)
                && multi.is_hidden()
            {
                eprintln!(
                    "{}: {} ({} of {} runs)",
                    job.repo,
                    job.state,
                    job.runs_harvested + job.runs_failed,
                    job.runs_found
                );
            }
        }
        if jobs.jobs.iter().all(|j| j.state == "done") {
            break jobs;
        }
        tokio::time::sleep(every).await;
    };
    for bar in bars.values() {
        bar.finish_and_clear();
    }
    emit_line(summary(&jobs.jobs))
}

/// One line per job: repository, state, runs and outputs.
fn summary(jobs: &[BackfillJobView]) -> String {
    let mut out = format!(
        "{:<40} {:>6} {:>9} {:>6} {:>8}\n",
        "repository", "runs", "harvested", "failed", "outputs"
    );
    for j in jobs {
        out.push_str(&format!(
            "{:<40} {:>6} {:>9} {:>6} {:>8}{}\n",
            crate::model::escape::terminal(&j.repo),
            j.runs_found,
            j.runs_harvested,
            j.runs_failed,
            j.outputs_evaluated + j.outputs_observed,
            j.last_error
                .as_deref()
                .map(|e| format!("  last error: {}", crate::model::escape::terminal(e)))
                .unwrap_or_default()
        ));
    }
    out.trim_end().to_string()
}
