//! `bench backfill`: GitHub API calls per output for the day-one backfill of
//! a 30-day org, through the model of GitHub (`github_model`): one gh-aw run
//! a day, each writing an output of every registered type, followed by what
//! people and bots did (`github_model::generate`, seeded). The App is
//! installed at the end; its backfill lists the runs, harvests each run's
//! manifest and judges every output from what the API answers then
//! (reconcile, with the signals its past windows need). Calls are counted
//! by the model, by kind; counts do not depend on speed.

use std::time::Duration;

use anyhow::Context;
use clap::Args;

use super::github_model::generate::{self, Choices};
use super::github_model::history::History;
use super::github_model::{CallKind, Counts, FakeGitHub, APP_ID, PRIVATE_KEY};
use super::{Row, Table};
use crate::app::GitHubConfig;
use crate::github::backfill::BackfillOptions;
use crate::github::harvest::HarvestOptions;
use crate::github::publisher::PublisherOptions;
use crate::github::{AppCredentials, GitHubClient, RetryPolicy};
use crate::judge::evaluate::registry::TYPES;
use crate::model::clock::Clock;
use crate::model::OutputType;

/// docs/architecture.md, "Performance targets": API calls per output for a day-one backfill.
pub const TARGET: f64 = 2.0;
const REPO: &str = "acme/widgets";
const INSTALLATION: u64 = 4242;

#[derive(Args, Debug)]
pub struct BackfillArgs {
    /// Days of history (one gh-aw run a day).
    #[arg(long, default_value_t = 30)]
    pub days: u32,
    /// Seed of the generated follow-ups.
    #[arg(long, default_value_t = 21)]
    pub seed: u64,
}

/// What one backfill counted.
#[derive(Debug, Clone)]
pub struct BackfillFigures {
    pub runs: usize,
    pub outputs: u64,
    pub counts: Counts,
    /// Check runs created (on PRs still open at the end).
    pub check_runs: usize,
    pub open_prs: usize,
}

impl BackfillFigures {
    /// Every request but token mints, per output.
    pub fn calls_per_output(&self) -> f64 {
        let calls = self.counts.of(CallKind::Evaluation) + self.counts.of(CallKind::CheckRun);
        calls as f64 / self.outputs.max(1) as f64
    }
}

/// The generated org: one repository, one run a day, all in one history.
pub fn org(days: u32, seed: u64, end: chrono::DateTime<chrono::Utc>) -> (History, usize) {
    let types: Vec<OutputType> = TYPES.iter().map(|t| OutputType::from(t.name)).collect();
    let mut history = History::new(REPO, INSTALLATION);
    for day in 0..days {
        let bytes = generate::seeded(seed.wrapping_add(day as u64), 2000);
        let t0 =
            end - chrono::Duration::days(days as i64 - day as i64) + chrono::Duration::hours(2);
        let g = generate::history(
            &mut Choices::new(&bytes),
            REPO,
            INSTALLATION,
            t0,
            5000 + day as u64,
            &types,
        );
        for e in g.history.events {
            history.push(e.at, &e.actor, e.fact);
        }
    }
    (history, days as usize)
}

pub async fn run(args: BackfillArgs) -> anyhow::Result<Table> {
    Ok(table(&measure(args.days, args.seed).await?))
}

/// Backfill the generated org through the App; what it cost.
pub async fn measure(days: u32, seed: u64) -> anyhow::Result<BackfillFigures> {
    let end: chrono::DateTime<chrono::Utc> = "2026-11-01T12:00:00Z".parse()?;
    let (history, runs) = org(days, seed, end);
    let gh = FakeGitHub::start().await;
    gh.set_history(history);
    let clock = Clock::manual(end);
    gh.set_clock(clock.clone());
    let dir = tempfile::tempdir()?;
    let creds = AppCredentials::from_config(&APP_ID.to_string(), Some(PRIVATE_KEY.into()), None)?;
    let key = creds.app_client(&gh.url)?;
    let mut github = GitHubConfig::new(Box::new(move |calls| {
        Ok(GitHubClient::new(key, calls, RetryPolicy::default()))
    }));
    github.publisher = Some(PublisherOptions::new("http://127.0.0.1"));
    github.backfill = Some((
        HarvestOptions::default(),
        BackfillOptions {
            days: days + 1,
            reserve: 0,
            poll: Duration::from_millis(20),
            retry_wait: Duration::from_millis(20),
            ..BackfillOptions::default()
        },
    ));
    let running = super::launch_app(dir.path(), &clock, github)?;
    let app = &running.app;
    let backfill = running.backfill.as_ref().context("the backfill runs")?;
    let (server, sender) = super::api::serve(app).await?;
    let installed = serde_json::json!({"action": "created",
        "installation": {"id": INSTALLATION, "account": {"login": "acme"}},
        "repositories": [{"full_name": REPO}], "sender": {"login": "alice", "type": "User"}});
    let answer = sender
        .deliver(
            "installation",
            "bench-install",
            installed.to_string().as_bytes(),
        )
        .await?;
    anyhow::ensure!(answer.status < 300, "installation refused: {}", answer.body);
    app.wait_idle().await;
    loop {
        backfill.flush().await;
        app.wait_idle().await;
        let done = app.store.backfill_jobs()?.iter().all(|j| j.done);
        if done {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    if let Some(p) = &running.publisher {
        p.flush().await;
    }
    let outputs = app.store.outputs("", None).count() as u64;
    let world = gh.world(REPO).context("the history")?;
    let open_prs = world
        .threads
        .values()
        .filter(|t| t.pr.is_some() && t.closed.is_none())
        .count();
    let figures = BackfillFigures {
        runs,
        outputs,
        counts: gh.counts(),
        check_runs: gh.check_runs().len(),
        open_prs,
    };
    server.stop().await;
    let _ = running.stop().await;
    Ok(figures)
}

fn table(f: &BackfillFigures) -> Table {
    let mut t = Table::new(format!(
        "bench backfill: API calls of a day-one backfill, {} days of a generated org ({} runs, {} outputs)",
        f.runs, f.runs, f.outputs
    ));
    let per = f.calls_per_output();
    t.push(
        Row::new(
            "API calls / output (all but token mints)",
            format!("{per:.2}"),
        )
        .target(format!("≤ {TARGET}"), per <= TARGET),
    );
    let by = |k| f.counts.of(k) as f64 / f.outputs.max(1) as f64;
    t.push(Row::new(
        "  repository reads and GraphQL / output",
        format!("{:.2}", by(CallKind::Evaluation)),
    ));
    t.push(Row::new(
        "  check-run writes / output",
        format!("{:.3}", by(CallKind::CheckRun)),
    ));
    t.push(Row::new(
        "check runs created (PRs open at the end)",
        format!("{} ({})", f.check_runs, f.open_prs),
    ));
    t.push(Row::new(
        "installation token requests",
        f.counts.of(CallKind::Token).to_string(),
    ));
    let routes: Vec<String> = f
        .counts
        .by_route
        .iter()
        .map(|(r, n)| format!("{r} ×{n}"))
        .collect();
    t.notes.push(format!("Requests: {}.", routes.join(", ")));
    t.notes.push(
        "Counted by the model of GitHub (`bench::github_model`); counts do not depend on speed."
            .into(),
    );
    t
}
