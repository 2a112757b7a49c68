//! `bench api`: GitHub API calls per output per evaluation window (docs/architecture.md,
//! "Performance targets"), counted by the model of GitHub (`github_model`, lenient).
//!
//! - Webhook-fed (ours): the bundled demo scenario replayed in App mode (the
//!   check-run publisher and the reconciler pointed at the fake, a manual
//!   clock moved through the windows as `demo` does). Outcomes come from
//!   the deliveries; the API is read only for outputs none of whose targets
//!   was ever seen (the reconciler).
//! - Reconciled (the gh-aw way, baseline): every output of the same
//!   scenario has its API state fetched once per window (`fetch::fetch`:
//!   `required_endpoints` and the follow-ups), as a poller would.
//!
//! Calls are counted by kind: evaluation reads (repository GETs and
//! GraphQL), check-run writes (how the App shows results: not evaluation),
//! installation tokens. Counts do not depend on speed, so a debug build
//! gives the same figures as a release one.

use std::collections::BTreeSet;
use std::sync::Arc;

use anyhow::Context;
use serde_json::{json, Value};

use super::github_model::{CallKind, Counts, FakeGitHub, APP_ID, PRIVATE_KEY};
use super::{Row, Table};
use crate::app::{App, GitHubConfig, Running};
use crate::github::fetch;
use crate::github::publisher::PublisherOptions;
use crate::github::reconciler::ReconcilerOptions;
use crate::github::signals;
use crate::github::{ApiCalls, AppCredentials, GitHubClient, RetryPolicy};
use crate::http::{router, RouterOptions, RunningServer};
use crate::ingest::client::{parse_scenario, Client, Step};
use crate::model::clock::Clock;
use crate::model::{ExecutionRecord, TargetKind, CHECKPOINTS};

/// The installation the scenario's deliveries name.
const INSTALLATION: u64 = 4242;
/// docs/architecture.md, "Performance targets": evaluation calls per output per window, webhook-fed.
pub const TARGET: f64 = 0.05;
/// gh-aw's poller, per output per look (4 for a PR).
const GH_AW_PER_LOOK: f64 = 1.6;

/// What one run counted.
#[derive(Debug, Clone)]
pub struct ApiFigures {
    pub outputs: usize,
    pub windows: usize,
    /// The webhook-fed replay.
    pub webhook: Counts,
    /// The per-window fetch of every output.
    pub reconciled: Counts,
    /// Outputs the webhook-fed App reconciled from the API (their manifest
    /// came before any delivery about their target).
    pub webhook_reconciles: u64,
    /// PR outputs, and the evaluation calls the per-window fetch made for them.
    pub pr_outputs: usize,
    pub pr_reconciled_calls: u64,
}

impl ApiFigures {
    fn per_output_window(&self, n: u64) -> f64 {
        n as f64 / (self.outputs * self.windows).max(1) as f64
    }

    /// Evaluation calls per output per window, webhook-fed.
    pub fn webhook_evaluation(&self) -> f64 {
        self.per_output_window(self.webhook.of(CallKind::Evaluation))
    }

    /// Evaluation calls per output per look, reconciled.
    pub fn reconciled_evaluation(&self) -> f64 {
        self.per_output_window(self.reconciled.of(CallKind::Evaluation))
    }

    pub(crate) fn check_run_calls(&self) -> f64 {
        self.per_output_window(self.webhook.of(CallKind::CheckRun))
    }
}

/// The App behind its real router on a loopback port, in App mode, and a
/// client that signs deliveries for it.
pub(super) async fn serve(app: &App) -> anyhow::Result<(RunningServer, Client)> {
    let (secret, token) = ("bench-webhook-secret", "bench-api-token");
    let routes = router(
        app,
        RouterOptions::keyed("/api/github/webhooks", secret, token),
    );
    let server = RunningServer::start(routes, "127.0.0.1:0".parse()?).await?;
    let sender = Client::new(&server.url(), Some(secret.into()), Some(token.into()));
    Ok((server, sender))
}

pub(crate) async fn run() -> anyhow::Result<Table> {
    Ok(table(&measure().await?))
}

/// Replay the demo scenario webhook-fed, then fetch every output per window.
pub async fn measure() -> anyhow::Result<ApiFigures> {
    let fake = FakeGitHub::start().await;
    // The demo scenario's objects live only in its deliveries.
    fake.lenient();
    let dir = crate::app::temp::TempFolder::new("safe-outcomes-bench-")?;
    let creds = AppCredentials::from_config(&APP_ID.to_string(), Some(PRIVATE_KEY.into()), None)?;
    let new_client = |calls: Arc<ApiCalls>| -> anyhow::Result<Arc<GitHubClient>> {
        Ok(Arc::new(GitHubClient::new(
            creds.app_client(&fake.url)?,
            calls,
            RetryPolicy::default(),
        )))
    };

    let steps = parse_scenario(crate::ingest::client::DEMO_SCENARIO)?;
    let start = steps.first().map(Step::at).context("empty scenario")?;
    let clock = Clock::manual(start);
    let key = creds.app_client(&fake.url)?;
    let mut github = GitHubConfig::new(Box::new(move |calls| {
        Ok(GitHubClient::new(key, calls, RetryPolicy::default()))
    }));
    github.publisher = Some(PublisherOptions::new("http://127.0.0.1"));
    github.reconciler = Some(ReconcilerOptions::default());
    github.signals = true;
    let running = super::launch_app(dir.path(), &clock, github)?;
    let Running {
        app,
        publisher: Some(publisher),
        reconciler: Some(reconciler),
        signals: Some(signals),
        ..
    } = running
    else {
        anyhow::bail!("App::launch started fewer tasks than asked for");
    };
    let (server, sender) = serve(&app).await?;

    // Settle: deliveries processed and check runs sent (the publisher's
    // debounce stands for "same moment"; time moves per step). Reconciles are
    // attempted only once the clock has moved past the reconciler's grace
    // period for unseen targets, as they would be in real time.
    let grace = ReconcilerOptions::default().unseen_grace;
    let (app_ref, reconciler_ref, publisher_ref) = (&app, &reconciler, &publisher);
    let settle = |reconcile: bool| async move {
        app_ref.wait_idle().await;
        if reconcile {
            reconciler_ref.flush().await;
            app_ref.wait_idle().await;
        }
        publisher_ref.flush().await;
    };
    // The App was installed on every repository of the scenario before it
    // starts (as `installation.created` tells it), so which outputs get
    // reconciled does not hang on which delivery names the installation first.
    sender
        .send_step(&installation_created(&steps, start))
        .await?;
    for step in &steps {
        if step.at() > clock.now() {
            let past_grace = (step.at() - clock.now())
                .to_std()
                .is_ok_and(|gap| gap >= grace);
            settle(past_grace).await;
            clock.advance_to(step.at());
            app.tick().await;
        }
        sender.send_step(step).await?;
    }
    settle(true).await;
    app.tick().await;
    settle(true).await;
    // Every window checkpoint of every output, as the worker's 15 s poll
    // would take them: due times rounded up to the poll, each tick's due
    // outputs handed to the signals fetcher as one batch.
    let executed: Vec<_> = app
        .store
        .outputs("", None)
        .filter_map(|o| o.ok().map(|o| o.execution.executed_at))
        .collect();
    for due in checkpoint_ticks(&executed) {
        if due > clock.now() {
            clock.advance_to(due);
        }
        app.tick().await;
        signals.flush().await;
        app.wait_idle().await;
    }
    // The last due outputs' batch wait.
    let wait = chrono::Duration::from_std(signals::BATCH_WAIT)?;
    clock.advance_to(clock.now() + wait);
    app.tick().await;
    signals.flush().await;
    settle(false).await;
    let webhook = fake.counts();
    let webhook_reconciles = reconciler.stats().snapshot()["attempts"];

    let records: Vec<ExecutionRecord> = app
        .store
        .outputs("", None)
        .map(|o| o.map(|o| o.execution))
        .collect::<Result<_, _>>()?;
    // The poller's own client: its token requests are its own.
    let poller = new_client(Arc::new(ApiCalls::default()))?;
    let is_pr = |r: &ExecutionRecord| {
        r.target
            .as_ref()
            .is_some_and(|t| t.kind == TargetKind::PullRequest)
    };
    let mut pr_reconciled_calls = 0;
    for _ in CHECKPOINTS {
        for record in &records {
            let before = fake.counts().of(CallKind::Evaluation);
            fetch::fetch(&poller, INSTALLATION, record).await;
            if is_pr(record) {
                pr_reconciled_calls += fake.counts().of(CallKind::Evaluation) - before;
            }
        }
    }
    let reconciled = fake.counts().since(&webhook);

    server.stop().await;
    signals.stop().await;
    reconciler.stop().await;
    publisher.stop().await;
    app.shutdown();
    Ok(ApiFigures {
        outputs: records.len(),
        windows: CHECKPOINTS.len(),
        webhook,
        reconciled,
        webhook_reconciles,
        pr_outputs: records.iter().filter(|r| is_pr(r)).count(),
        pr_reconciled_calls,
    })
}

/// The worker's poll, to which checkpoint times are rounded up.
const POLL_SECS: i64 = 15;

/// The distinct times (rounded up to the poll) at which some output's
/// window checkpoint comes due, in order.
fn checkpoint_ticks(
    executed: &[chrono::DateTime<chrono::Utc>],
) -> Vec<chrono::DateTime<chrono::Utc>> {
    let mut ticks = BTreeSet::new();
    for at in executed {
        for (_, hours) in CHECKPOINTS {
            let due = (*at + chrono::Duration::hours(hours)).timestamp();
            let rounded = due.div_euclid(POLL_SECS) * POLL_SECS
                + if due.rem_euclid(POLL_SECS) == 0 {
                    0
                } else {
                    POLL_SECS
                };
            ticks.extend(chrono::DateTime::from_timestamp(rounded, 0));
        }
    }
    ticks.into_iter().collect()
}

/// An `installation.created` delivery for installation 4242 on every
/// repository the scenario names.
fn installation_created(steps: &[Step], at: chrono::DateTime<chrono::Utc>) -> Step {
    let repos: BTreeSet<String> = steps
        .iter()
        .filter_map(|s| match s {
            Step::Manifest { repo, .. } => Some(repo.clone()),
            Step::Webhook { payload, .. } => payload
                .pointer("/repository/full_name")
                .and_then(Value::as_str)
                .map(str::to_string),
            Step::Advance { .. } => None,
        })
        .collect();
    let repositories: Vec<Value> = repos.iter().map(|r| json!({"full_name": r})).collect();
    Step::Webhook {
        at,
        event: "installation".into(),
        delivery: "bench-api-installation-created".into(),
        payload: json!({
            "action": "created",
            "installation": {"id": INSTALLATION, "account": {"login": "acme", "type": "Organization"}},
            "repositories": repositories,
            "sender": {"login": "acme-admin", "type": "User"}
        }),
    }
}

pub fn table(f: &ApiFigures) -> Table {
    let mut t = Table::new(format!(
        "bench api: GitHub API calls, bundled demo scenario ({} outputs × {} windows)",
        f.outputs, f.windows
    ));
    let ours = f.webhook_evaluation();
    let base = f.reconciled_evaluation();
    let ratio = |a: f64, b: f64| (b > 0.0).then(|| a / b);
    t.push(
        Row::new(
            "evaluation calls / output / window, webhook-fed",
            format!("{ours:.3}"),
        )
        .baseline(format!("{base:.3} (reconciled)"), ratio(ours, base))
        .target(format!("≤ {TARGET}"), ours <= TARGET),
    );
    t.push(
        Row::new(
            "evaluation calls / output / look, reconciled",
            format!("{base:.3}"),
        )
        .baseline(
            format!("{GH_AW_PER_LOOK} (gh-aw poller; 4 for a PR)"),
            ratio(base, GH_AW_PER_LOOK),
        ),
    );
    let pr_looks = (f.pr_outputs * f.windows).max(1) as f64;
    let pr_base = f.pr_reconciled_calls as f64 / pr_looks;
    t.push(
        Row::new(
            format!(
                "evaluation calls / PR output / look, reconciled ({} PRs)",
                f.pr_outputs
            ),
            format!("{pr_base:.3}"),
        )
        .baseline("4 (gh-aw poller)", ratio(pr_base, 4.0)),
    );
    t.push(
        Row::new(
            "outputs reconciled by the webhook-fed App",
            format!("{} of {}", f.webhook_reconciles, f.outputs),
        )
        .baseline(format!("{0} of {0}, every window", f.outputs), None),
    );
    t.push(Row::new(
        "check-run calls / output / window (writes showing results)",
        format!("{:.3}", f.check_run_calls()),
    ));
    t.push(
        Row::new(
            "installation token requests",
            f.webhook.of(CallKind::Token).to_string(),
        )
        .baseline(f.reconciled.of(CallKind::Token).to_string(), None),
    );
    t.push(
        Row::new(
            "evaluation calls, total",
            f.webhook.of(CallKind::Evaluation).to_string(),
        )
        .baseline(
            f.reconciled.of(CallKind::Evaluation).to_string(),
            ratio(
                f.webhook.of(CallKind::Evaluation) as f64,
                f.reconciled.of(CallKind::Evaluation) as f64,
            ),
        ),
    );
    let routes = |c: &Counts| {
        c.by_route
            .iter()
            .map(|(r, n)| format!("{r} ×{n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    t.notes.push(format!(
        "Webhook-fed evaluation calls are the reconciler's one look at outputs whose targets were still unseen a grace period (10 min) after their manifest was filed ({} here, since every target's webhooks follow its manifest within seconds), and the signals no webhook carries (reactions, team membership, closing PRs: `github::signals`), read for the outputs a signal could still change at the checkpoints where it decides (7d and again 30d for issues, comments and discussions, 30d for PRs, 24h for team membership; the first of these also for an earlier window still open), due outputs waiting up to an hour to share one GraphQL query (comments by their node id); REST for the reactions of comments whose node id is not known and for team memberships (a conditional read answered 304 is counted as a call too). Manifest harvesting and redelivery are off.",
        f.webhook_reconciles
    ));
    t.notes
        .push(format!("Webhook-fed requests: {}.", routes(&f.webhook)));
    t.notes
        .push(format!("Reconciled requests: {}.", routes(&f.reconciled)));
    t.notes.push(
        "Counted by the model of GitHub (`bench::github_model`); counts do not depend on speed (a debug build gives the same figures)."
            .into(),
    );
    t
}
