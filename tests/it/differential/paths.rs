//! The four ways one history reaches the App, each through the real App on
//! the real router against the model of GitHub serving that history:
//! (a) webhooks in real time, (b) a day-one backfill after the fact,
//! (c) reconcile after every delivery was missed, (d) (a) with the signal
//! fetcher reading what no webhook carries at its checkpoints.

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use safe_outcomes::bench::github_model::generate::Generated;
use safe_outcomes::bench::github_model::webhooks;
use safe_outcomes::github::backfill::BackfillOptions;
use safe_outcomes::github::harvest::HarvestOptions;
use safe_outcomes::github::publisher::PublisherOptions;
use safe_outcomes::github::reconciler::ReconcilerOptions;
use safe_outcomes::github::signals;
use safe_outcomes::model::clock::Clock;
use safe_outcomes::model::{OutcomeRecord, CHECKPOINTS};
use serde_json::Value;

use crate::common::tester::{Setup, Tester};
use crate::fake_github::{CheckRun, FakeGitHub};
use crate::payloads::installation_created;

/// What one path ended with.
pub struct Ended {
    pub outcomes: BTreeMap<String, OutcomeRecord>,
    /// Check runs the App created, by head sha.
    pub check_runs: Vec<CheckRun>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    Webhooks,
    Backfill,
    Reconcile,
    WebhooksWithSignals,
}

impl Path {
    pub const ALL: [Path; 4] = [
        Path::Webhooks,
        Path::Backfill,
        Path::Reconcile,
        Path::WebhooksWithSignals,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Path::Webhooks => "(a) webhooks",
            Path::Backfill => "(b) backfill",
            Path::Reconcile => "(c) reconcile",
            Path::WebhooksWithSignals => "(d) webhooks+signals",
        }
    }
}

/// The end of the story: past every output's 30-day window.
pub fn end(g: &Generated) -> DateTime<Utc> {
    let last = g
        .runs
        .iter()
        .map(|r| r.executed_at)
        .max()
        .unwrap_or_default();
    last + chrono::Duration::days(31)
}

/// The App on the model of GitHub serving `g`'s history at the model's
/// clock, with the tasks `path` runs (and the check-run publisher), the
/// repository installed as it was named at `start`.
async fn rig(g: &Generated, start: DateTime<Utc>, path: Path) -> Tester {
    let gh = FakeGitHub::start().await;
    gh.set_history(g.history.clone());
    let clock = Clock::manual(start);
    gh.set_clock(clock.clone());
    let setup = Setup::on_clock(clock)
        .github(gh)
        .publisher(PublisherOptions::new("http://127.0.0.1"));
    let setup = match path {
        // As `serve` runs: outputs still unseen after the grace are reconciled.
        Path::Webhooks => setup.reconciler(ReconcilerOptions::default()),
        Path::WebhooksWithSignals | Path::Reconcile => {
            setup.reconciler(ReconcilerOptions::default()).signals()
        }
        Path::Backfill => setup.signals().backfill(
            HarvestOptions::default(),
            BackfillOptions {
                days: 35,
                reserve: 0,
                poll: Duration::from_millis(20),
                retry_wait: Duration::from_millis(20),
                ..BackfillOptions::default()
            },
        ),
    };
    let r = setup.start().await;
    // The installation lists the repository by its name when installed.
    let installed = installation_created(g.history.installation, &g.history.name_at(start));
    r.send("installation", "install-1", installed).await;
    r
}

/// Let the worker file, the reconciler then the signal fetcher attempt
/// what they hold (the worker filing each one's results before the next),
/// and the publisher publish.
async fn settle(r: &Tester) {
    r.t.app.wait_idle().await;
    if let Some(rc) = &r.tasks.reconciler {
        rc.flush().await;
        r.t.app.wait_idle().await;
    }
    if let Some(s) = &r.tasks.signals {
        s.flush().await;
        r.t.app.wait_idle().await;
    }
    if let Some(p) = &r.tasks.publisher {
        p.flush().await;
    }
}

/// Move the clock to `at`, letting checkpoints and signal reads happen.
async fn advance(r: &Tester, at: DateTime<Utc>) {
    if std::env::var("DIFF_TRACE").is_ok() {
        eprintln!("advance to {at}");
    }
    if at > r.t.clock.now() {
        r.t.advance_to(at).await;
        settle(r).await;
    }
}

/// What the path ended with; the App stopped.
async fn ended(r: Tester) -> Ended {
    trace("ending");
    settle(&r).await;
    let outcomes = r.t.outcomes().await;
    trace(&format!(
        "stopping; outputs: {:?}",
        outcomes
            .iter()
            .filter(|(_, o)| o.safe_output_type.contains("comment"))
            .map(|(k, o)| (k, o.target.as_ref().map(|t| t.key())))
            .collect::<Vec<_>>()
    ));
    let check_runs = r.gh.check_runs();
    r.stop().await;
    Ended {
        outcomes,
        check_runs,
    }
}

async fn post_manifests(r: &Tester, g: &Generated) {
    for run in &g.runs {
        r.post_manifest(&g.history.repo, run.run_id, "agent", &run.lines)
            .await;
    }
}

/// What happens in the (a)/(d) story, in order: deliveries, the manifests
/// (posted when their run completed), and the checkpoints (plus the signal
/// fetcher's batch wait) so that reads happen when they would.
enum Step {
    Deliver(webhooks::Delivery),
    Manifests,
    Tick,
}

fn story(g: &Generated) -> Vec<(DateTime<Utc>, Step)> {
    let mut steps: Vec<(DateTime<Utc>, Step)> = webhooks::deliveries(&g.history)
        .into_iter()
        .map(|d| (d.at, Step::Deliver(d)))
        .collect();
    let run = g.runs.first().expect("a run");
    steps.push((
        run.executed_at + chrono::Duration::minutes(5),
        Step::Manifests,
    ));
    let wait = chrono::Duration::from_std(signals::BATCH_WAIT).unwrap();
    for (_, hours) in CHECKPOINTS {
        let due = run.executed_at + chrono::Duration::hours(hours);
        steps.push((due, Step::Tick));
        steps.push((due + wait + chrono::Duration::minutes(1), Step::Tick));
    }
    steps.sort_by_key(|(at, _)| *at);
    steps
}

/// (a) or (d): every delivery when GitHub sends it.
pub async fn webhooks(g: &Generated, path: Path) -> Ended {
    let start = g.history.events.first().map(|e| e.at).unwrap_or_default();
    let r = rig(g, start - chrono::Duration::hours(1), path).await;
    for (at, step) in story(g) {
        advance(&r, at).await;
        match step {
            Step::Deliver(d) => {
                if std::env::var("DIFF_TRACE").is_ok() {
                    eprintln!("deliver {} {}", d.event, d.id);
                }
                let body = d.body.to_string();
                let a = r.t.client.deliver(&d.event, &d.id, body.as_bytes()).await;
                let a = a.expect("delivered");
                assert!(
                    a.status < 300,
                    "{} {}: {} {}",
                    d.event,
                    d.id,
                    a.status,
                    a.body
                );
            }
            Step::Manifests => post_manifests(&r, g).await,
            Step::Tick => {}
        }
    }
    let end = end(g);
    advance(&r, end).await;
    let wait = chrono::Duration::from_std(signals::BATCH_WAIT).unwrap();
    advance(&r, end + wait + chrono::Duration::minutes(1)).await;
    ended(r).await
}

/// (b): installed after the fact; the day-one backfill harvests the run and
/// judges its outputs from what the API answers then.
pub async fn backfill(g: &Generated) -> Ended {
    let r = rig(g, end(g), Path::Backfill).await;
    r.t.app.wait_idle().await;
    let b = r.tasks.backfill.as_ref().expect("the backfill runs");
    for _ in 0..200 {
        trace("backfill pass");
        b.flush().await;
        r.t.app.wait_idle().await;
        let status = r.t.client.get("/status").await.unwrap().body;
        let jobs: &Value = &status["github"]["backfill"]["jobs"];
        if jobs["done"] == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let wait = chrono::Duration::from_std(signals::BATCH_WAIT).unwrap();
    advance(&r, end(g) + wait + chrono::Duration::minutes(1)).await;
    ended(r).await
}

/// (c): the manifests arrived, every delivery was lost; the reconciler
/// judges the outputs from the API after the fact.
pub async fn reconcile(g: &Generated) -> Ended {
    let run = g.runs.first().expect("a run");
    let r = rig(
        g,
        run.executed_at + chrono::Duration::minutes(5),
        Path::Reconcile,
    )
    .await;
    post_manifests(&r, g).await;
    r.t.app.wait_idle().await;
    advance(&r, end(g)).await;
    let reconciler = r.tasks.reconciler.as_ref().expect("the reconciler runs");
    for id in r.t.outcomes().await.keys() {
        let a =
            r.t.client
                .post_json(
                    &format!("/api/v1/outputs/{id}/reconcile"),
                    &serde_json::json!({}),
                )
                .await
                .unwrap();
        assert!(
            a.status < 300 || a.status == 404 || a.status == 409,
            "{id}: {} {}",
            a.status,
            a.body
        );
    }
    reconciler.flush().await;
    r.t.app.wait_idle().await;
    let wait = chrono::Duration::from_std(signals::BATCH_WAIT).unwrap();
    advance(&r, end(g) + wait + chrono::Duration::minutes(1)).await;
    ended(r).await
}

pub async fn run(g: &Generated, path: Path) -> Ended {
    trace(&format!("path {}", path.name()));
    match path {
        Path::Webhooks | Path::WebhooksWithSignals => webhooks(g, path).await,
        Path::Backfill => backfill(g).await,
        Path::Reconcile => reconcile(g).await,
    }
}

fn trace(what: &str) {
    if std::env::var("DIFF_TRACE").is_ok() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter("safe_outcomes=debug")
            .with_writer(std::io::stderr)
            .try_init();
        eprintln!("{what}");
    }
}
