//! The one wiring: [`App::launch`] opens the store, starts the inbox writer and
//! the worker, and (App mode) the background tasks that talk to GitHub — the
//! check-run publisher, the reconciler, the signal fetcher, the manifest
//! harvester, the backfill and the redeliverer — each on the App's one
//! `GitHubClient` (one token cache, one call count). `serve`, `demo`,
//! `bench api` and the test rigs all start the App through it; a rig that
//! needs only some tasks turns on only those.

use std::path::PathBuf;
use std::sync::Arc;

use crate::app::{App, AppOptions};
use crate::github::attribution::driver::DriverOptions;
use crate::github::backfill::{self, Backfill, BackfillHandle, BackfillOptions};
use crate::github::calls::ApiCalls;
use crate::github::harvest::{self, HarvestOptions, Harvester, HarvesterHandle};
use crate::github::publisher::{self, Publisher, PublisherHandle, PublisherOptions};
use crate::github::reconciler::{self, Reconciler, ReconcilerHandle, ReconcilerOptions};
use crate::github::redelivery::{Redeliverer, RedeliveryOptions};
use crate::github::signals::{self, SignalFetcher, SignalsHandle};
use crate::github::GitHubClient;
use crate::model::clock::Clock;

/// Builds the App's GitHub client around the App's call counter.
pub type ClientFactory = Box<dyn FnOnce(Arc<ApiCalls>) -> anyhow::Result<GitHubClient> + Send>;

/// What `App::launch` starts.
pub struct AppConfig {
    pub data_dir: PathBuf,
    pub clock: Clock,
    /// App mode (`None`: listen only, no GitHub API calls).
    pub github: Option<GitHubConfig>,
    /// PostgreSQL (`DATABASE_URL`, `serve --database-url`); `None`: sled
    /// under `data_dir` (or the test cluster, `SAFE_OUTCOMES_TEST_PG`).
    pub database_url: Option<crate::settings::Secret>,
}

impl AppConfig {
    /// Listen-only: store, writer and worker, no GitHub tasks.
    pub fn listen_only(data_dir: impl Into<PathBuf>, clock: Clock) -> AppConfig {
        AppConfig {
            data_dir: data_dir.into(),
            clock,
            github: None,
            database_url: None,
        }
    }

    /// App mode on the embedded store: `listen_only` plus the GitHub tasks
    /// `github` turns on.
    pub fn app_mode(data_dir: impl Into<PathBuf>, clock: Clock, github: GitHubConfig) -> AppConfig {
        AppConfig {
            github: Some(github),
            ..AppConfig::listen_only(data_dir, clock)
        }
    }
}

/// The background tasks of App mode; each runs when its options are set.
pub struct GitHubConfig {
    pub client: ClientFactory,
    pub publisher: Option<PublisherOptions>,
    pub reconciler: Option<ReconcilerOptions>,
    /// Read the signals no webhook carries when a checkpoint comes due.
    pub signals: bool,
    pub harvester: Option<HarvestOptions>,
    /// The backfill harvests with these options (`.0`).
    pub backfill: Option<(HarvestOptions, BackfillOptions)>,
    pub redelivery: Option<RedeliveryOptions>,
    /// Check the App's credentials (`GET /app`) at start, so `/status` tells.
    pub verify: bool,
    /// Line attribution and survival of landed agent code (`attribution`).
    pub attribution: Option<DriverOptions>,
}

impl GitHubConfig {
    /// No task turned on yet: a rig turns on the ones it tests.
    pub fn new(client: ClientFactory) -> GitHubConfig {
        GitHubConfig {
            client,
            publisher: None,
            reconciler: None,
            signals: false,
            harvester: None,
            backfill: None,
            redelivery: None,
            verify: false,
            attribution: None,
        }
    }

    /// Every task, with default options: what `serve` runs.
    pub fn everything(
        client: ClientFactory,
        public_url: &str,
        backfill: BackfillOptions,
        redelivery: RedeliveryOptions,
    ) -> GitHubConfig {
        GitHubConfig {
            publisher: Some(PublisherOptions::new(public_url)),
            reconciler: Some(ReconcilerOptions::default()),
            signals: true,
            harvester: Some(HarvestOptions::default()),
            backfill: Some((HarvestOptions::default(), backfill)),
            redelivery: Some(redelivery),
            verify: true,
            attribution: Some(DriverOptions::default()),
            ..GitHubConfig::new(client)
        }
    }
}

/// The started App and the handles of its background tasks.
pub struct Running {
    pub app: App,
    pub publisher: Option<PublisherHandle>,
    pub reconciler: Option<ReconcilerHandle>,
    pub signals: Option<SignalsHandle>,
    pub harvester: Option<HarvesterHandle>,
    pub backfill: Option<BackfillHandle>,
    pub redeliverer: Option<tokio::task::JoinHandle<()>>,
    /// The credential check and the attribution pass (aborted at stop).
    pub loops: Vec<tokio::task::JoinHandle<()>>,
}

impl App {
    /// Start the App as `config` says. Must be called inside a tokio runtime
    /// (the GitHub tasks are tokio tasks).
    pub fn launch(config: AppConfig) -> anyhow::Result<Running> {
        let database_url = config.database_url;
        let Some(github) = config.github else {
            let options = AppOptions {
                database_url,
                ..AppOptions::default()
            };
            let app = App::start_with(&config.data_dir, config.clock, options)?;
            return Ok(Running::bare(app));
        };
        let clock = config.clock;
        let publisher = github.publisher.map(|o| (publisher::channel(), o));
        let reconciler = github.reconciler.map(|o| (reconciler::channel(), o));
        let harvester = github.harvester.map(|o| (harvest::channel(), o));
        let backfill = github.backfill.map(|(h, o)| (backfill::channel(&o), h, o));
        let options = AppOptions {
            pr_changes: publisher.as_ref().map(|((tx, _), _)| tx.clone()),
            reconcile_requests: reconciler.as_ref().map(|((tx, _), _)| tx.clone()),
            harvest_requests: harvester.as_ref().map(|((tx, _), _)| tx.clone()),
            backfill_requests: backfill.as_ref().map(|((tx, _), _, _)| tx.clone()),
            database_url,
        };
        let app = App::start_with(&config.data_dir, clock.clone(), options)?;
        let client = Arc::new((github.client)(app.shared.github_calls.clone())?);
        client.watch_marks(app.store.clone());
        let _ = app.shared.github.set(client.clone());
        let mut running = Running::bare(app);
        let app = &running.app;
        running.publisher = publisher.map(|((tx, inbox), o)| {
            Publisher::new(app.store.clone(), clock.clone(), client.clone(), o).spawn(&tx, inbox)
        });
        running.reconciler = reconciler.map(|((tx, inbox), o)| {
            let writer = app.writer.clone();
            Reconciler::new(app.store.clone(), clock.clone(), client.clone(), writer, o)
                .with_stats(app.shared.reconcile_stats.clone())
                .with_tenancy(app.shared.tenancy.clone())
                .spawn(&tx, inbox)
        });
        if github.signals {
            let (tx, inbox) = signals::channel();
            let _ = app.shared.signal_requests.set(tx.clone());
            let writer = app.writer.clone();
            running.signals = Some(
                SignalFetcher::new(app.store.clone(), clock.clone(), client.clone(), writer)
                    .spawn(&tx, inbox),
            );
        }
        running.harvester = harvester.map(|((tx, inbox), o)| {
            let writer = app.writer.clone();
            Harvester::new(app.store.clone(), clock.clone(), client.clone(), writer, o)
                .with_tenancy(app.shared.tenancy.clone())
                .spawn(&tx, inbox)
        });
        running.backfill = backfill.map(|((tx, inbox), h, o)| {
            Backfill::new(app, clock.clone(), client.clone(), h, o).spawn(&tx, inbox)
        });
        running.redeliverer = github
            .redelivery
            .map(|o| Redeliverer::new(app.store.clone(), client.clone(), clock.clone(), o).spawn());
        if github.verify {
            running
                .loops
                .push(crate::github::verify::spawn(client.clone()));
        }
        if let Some(o) = github.attribution {
            let store = app.store.clone();
            let pass =
                crate::github::attribution::driver::spawn(store, client.clone(), clock.clone(), o);
            running.loops.push(pass);
        }
        Ok(running)
    }
}

impl Running {
    fn bare(app: App) -> Running {
        Running {
            app,
            publisher: None,
            reconciler: None,
            signals: None,
            harvester: None,
            backfill: None,
            redeliverer: None,
            loops: Vec::new(),
        }
    }

    /// Stop the tasks (the publisher last, so it publishes what the others
    /// changed), then the worker and writer, and flush the store.
    pub async fn stop(self) -> anyhow::Result<()> {
        if let Some(r) = self.redeliverer {
            r.abort();
        }
        for task in self.loops {
            task.abort();
        }
        if let Some(b) = self.backfill {
            b.stop().await;
        }
        if let Some(s) = self.signals {
            s.stop().await;
        }
        if let Some(r) = self.reconciler {
            r.stop().await;
        }
        if let Some(h) = self.harvester {
            h.stop().await;
        }
        if let Some(p) = self.publisher {
            p.stop().await;
        }
        let app = self.app;
        tokio::task::spawn_blocking(move || app.shutdown()).await?;
        Ok(())
    }
}
