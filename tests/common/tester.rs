//! One harness with verbs (issue 48, item 4): a real App whose GitHub tasks
//! talk to the model of GitHub over real HTTP, behind the real router. A
//! test says which tasks it turns on (`Tester::setup().reconciler(…)`),
//! then speaks in verbs: `send`, `install`, `post_manifest`, `settle`,
//! `advance`, `outcome`, `status`, `stop`. What only one file needs stays
//! a function of that file taking a `&Tester`.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use safe_outcomes::app::{App, AppConfig, GitHubConfig, Running};
use safe_outcomes::bench::github_model::{recorded_policy, FakeGitHub, Sleeps};
use safe_outcomes::github::backfill::{BackfillHandle, BackfillOptions};
use safe_outcomes::github::harvest::{HarvestOptions, HarvesterHandle};
use safe_outcomes::github::publisher::{PublisherHandle, PublisherOptions};
use safe_outcomes::github::reconciler::{ReconcilerHandle, ReconcilerOptions};
use safe_outcomes::github::signals::SignalsHandle;
use safe_outcomes::http::RouterOptions;
use safe_outcomes::model::clock::Clock;
use safe_outcomes::model::OutcomeRecord;

use super::TestApp;

/// What a test turns on before the App starts.
pub struct Setup {
    clock: Clock,
    policy_clock: Option<Clock>,
    attempts: u32,
    gh: Option<FakeGitHub>,
    dir: Option<tempfile::TempDir>,
    data: Option<PathBuf>,
    /// App mode (a GitHub client on the model); off: no GitHub at all.
    app_mode: bool,
    github: Vec<Configure>,
    router: Router,
}

/// A change to the App's GitHub configuration (`Setup::configure`).
type Configure = Box<dyn Fn(&mut GitHubConfig)>;
/// The router options from the model's and the App's addresses.
type Router = Box<dyn FnOnce(&FakeGitHub, &str) -> RouterOptions>;

/// The App's GitHub tasks a test turned on.
#[derive(Default)]
pub struct Tasks {
    pub harvester: Option<HarvesterHandle>,
    pub reconciler: Option<ReconcilerHandle>,
    pub backfill: Option<BackfillHandle>,
    pub signals: Option<SignalsHandle>,
    pub publisher: Option<PublisherHandle>,
}

/// A running App on the model of GitHub.
pub struct Tester {
    pub t: TestApp,
    pub gh: FakeGitHub,
    pub tasks: Tasks,
    /// The waits the retry policy asked for (recorded, not slept).
    pub sleeps: Sleeps,
    /// The router options the App is served with.
    pub options: RouterOptions,
    /// Where the App's data is.
    data: PathBuf,
    /// The directory the tester made for it, removed after the App (fields
    /// drop in order); none when the test keeps the data (`data_at`).
    dir: Option<tempfile::TempDir>,
}

/// What is left of a stopped tester: its data, to restart on or read.
pub struct Stopped {
    pub data: PathBuf,
    /// Removes the data when dropped (if the tester made the directory).
    pub dir: Option<tempfile::TempDir>,
}

impl Stopped {
    pub fn path(&self) -> &Path {
        &self.data
    }
}

/// The App's public address in the tests of its check runs.
pub const PUBLIC_URL: &str = "https://outcomes.example";

impl Tester {
    /// The App with a check-run publisher linking to [`PUBLIC_URL`], against
    /// the model of GitHub, four hours after `t0`: debounce and retry waits
    /// are long, so only the test's flushes publish and counts are exact;
    /// four tries a call, the retry policy on its own clock at `t0`.
    pub async fn with_check_runs() -> Tester {
        Tester::setup(super::t0() + chrono::Duration::hours(4))
            .policy_clock(Clock::manual(super::t0()))
            .attempts(4)
            .publisher(PublisherOptions {
                debounce: std::time::Duration::from_secs(600),
                retry_min: std::time::Duration::from_secs(600),
                ..PublisherOptions::new(PUBLIC_URL)
            })
            .start()
            .await
    }

    /// A setup on a manual clock at `start`: no task on yet, three tries a call.
    pub fn setup(start: DateTime<Utc>) -> Setup {
        Setup::on_clock(Clock::manual(start))
    }

    /// A setup on `clock` (e.g. `Clock::System`).
    pub fn setup_on(clock: Clock) -> Setup {
        Setup::on_clock(clock)
    }
}

impl Setup {
    /// A setup on `clock` (e.g. `Clock::System`).
    pub fn on_clock(clock: Clock) -> Setup {
        Setup {
            clock,
            policy_clock: None,
            attempts: 3,
            gh: None,
            dir: None,
            data: None,
            app_mode: true,
            github: Vec::new(),
            router: Box::new(|_, _| RouterOptions::default()),
        }
    }

    /// On this model of GitHub (a fresh one otherwise).
    pub fn github(mut self, gh: FakeGitHub) -> Setup {
        self.gh = Some(gh);
        self
    }

    /// On the data already in `dir` (a restart).
    pub fn dir(mut self, dir: tempfile::TempDir) -> Setup {
        self.dir = Some(dir);
        self
    }

    /// The App's data at `path` (the test keeps the directory).
    pub fn data_at(mut self, path: PathBuf) -> Setup {
        self.data = Some(path);
        self
    }

    /// No App credentials: the App knows no GitHub (the model still runs,
    /// for sign-in).
    pub fn without_app(mut self) -> Setup {
        self.app_mode = false;
        self
    }

    /// Tries a call gets from the retry policy.
    pub fn attempts(mut self, n: u32) -> Setup {
        self.attempts = n;
        self
    }

    /// The retry policy's own clock (the App's otherwise).
    pub fn policy_clock(mut self, clock: Clock) -> Setup {
        self.policy_clock = Some(clock);
        self
    }

    /// Any other change to the App's GitHub configuration.
    pub fn configure(mut self, f: impl Fn(&mut GitHubConfig) + 'static) -> Setup {
        self.github.push(Box::new(f));
        self
    }

    pub fn harvester(self, options: HarvestOptions) -> Setup {
        self.configure(move |g| g.harvester = Some(options.clone()))
    }

    pub fn reconciler(self, options: ReconcilerOptions) -> Setup {
        self.configure(move |g| g.reconciler = Some(options.clone()))
    }

    pub fn backfill(self, harvest: HarvestOptions, options: BackfillOptions) -> Setup {
        self.configure(move |g| g.backfill = Some((harvest.clone(), options.clone())))
    }

    pub fn signals(self) -> Setup {
        self.configure(|g| g.signals = true)
    }

    pub fn publisher(self, options: PublisherOptions) -> Setup {
        self.configure(move |g| g.publisher = Some(options.clone()))
    }

    /// The router options, made knowing the model's address and the
    /// App's own (its `PUBLIC_URL`).
    pub fn router(mut self, f: impl FnOnce(&FakeGitHub, &str) -> RouterOptions + 'static) -> Setup {
        self.router = Box::new(f);
        self
    }

    /// Start the App, its tasks and its server.
    pub async fn start(self) -> Tester {
        let gh = match self.gh {
            Some(gh) => gh,
            None => FakeGitHub::start().await,
        };
        let dir = match self.dir {
            Some(d) => Some(d),
            None if self.data.is_some() => None,
            None => Some(tempfile::tempdir().unwrap()),
        };
        let data = match (&self.data, &dir) {
            (Some(p), _) => p.clone(),
            (None, d) => d.as_ref().unwrap().path().to_path_buf(),
        };
        let sleeps = Sleeps::default();
        let policy_clock = self.policy_clock.unwrap_or_else(|| self.clock.clone());
        let config = || {
            self.app_mode.then(|| {
                let policy = recorded_policy(&sleeps, policy_clock.clone(), self.attempts);
                let mut github = GitHubConfig::new(gh.client_factory(policy));
                for f in &self.github {
                    f(&mut github);
                }
                github
            })
        };
        let running = launch(&data, &self.clock, config).await;
        let tasks = Tasks {
            harvester: running.harvester,
            reconciler: running.reconciler,
            backfill: running.backfill,
            signals: running.signals,
            publisher: running.publisher,
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let options = (self.router)(&gh, &url);
        let t = TestApp::serve_on(running.app, self.clock, &data, listener, options.clone());
        Tester {
            t,
            gh,
            tasks,
            sleeps,
            options,
            data,
            dir,
        }
    }
}

/// `App::launch`, tried again while a stopped App's store on the same
/// directory still holds its file lock (sled's threads let go a moment
/// after a restart's stop).
async fn launch(dir: &Path, clock: &Clock, config: impl Fn() -> Option<GitHubConfig>) -> Running {
    for _ in 0..100 {
        let app = App::launch(AppConfig {
            data_dir: dir.to_path_buf(),
            clock: clock.clone(),
            github: config(),
            database_url: None,
        });
        match app {
            Ok(running) => return running,
            Err(e) if e.to_string().contains("lock") => {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await
            }
            Err(e) => panic!("the App starts: {e:#}"),
        }
    }
    panic!("the store stayed locked")
}

impl Tester {
    /// Deliver a signed webhook; it must be taken (2xx).
    pub async fn send(&self, event: &str, delivery: &str, body: Value) {
        self.t.deliver_ok(event, delivery, &body).await;
    }

    /// `installation.created` for installation `id` of `login` on `repos`.
    pub async fn install(&self, id: u64, login: &str, repos: &[&str]) {
        let body = json!({"action": "created",
            "installation": {"id": id, "account": {"login": login, "id": id * 10 + 1}},
            "repositories": repos.iter().map(|r| json!({"full_name": r})).collect::<Vec<_>>(),
            "sender": super::user("admin")});
        self.send("installation", &format!("inst-{id}"), body).await;
    }

    /// Post `lines` as the manifest of run `run` of `workflow` on `repo`.
    pub async fn post_manifest(&self, repo: &str, run: u64, workflow: &str, lines: &[Value]) {
        self.t.post_manifest_ok(repo, run, workflow, lines).await;
    }

    /// Let the worker file what it was sent, every task attempt what it
    /// has queued now (no retry comes due early), and the worker file the
    /// results.
    pub async fn settle(&self) {
        self.t.app.wait_idle().await;
        let tasks = &self.tasks;
        if let Some(h) = &tasks.harvester {
            h.flush().await;
        }
        if let Some(b) = &tasks.backfill {
            b.flush().await;
        }
        if let Some(r) = &tasks.reconciler {
            r.flush().await;
        }
        if let Some(s) = &tasks.signals {
            s.flush().await;
        }
        if let Some(p) = &tasks.publisher {
            p.flush().await;
        }
        self.t.app.wait_idle().await;
    }

    /// `settle` twice: what one task filed may give another work (a
    /// backfill's harvest queues a reconcile).
    pub async fn settle_chain(&self) {
        self.settle().await;
        self.settle().await;
    }

    pub fn harvester(&self) -> &HarvesterHandle {
        self.tasks.harvester.as_ref().expect("the harvester is on")
    }

    pub fn reconciler(&self) -> &ReconcilerHandle {
        self.tasks
            .reconciler
            .as_ref()
            .expect("the reconciler is on")
    }

    pub fn backfill(&self) -> &BackfillHandle {
        self.tasks.backfill.as_ref().expect("the backfill is on")
    }

    pub fn signals(&self) -> &SignalsHandle {
        self.tasks
            .signals
            .as_ref()
            .expect("the signal fetcher is on")
    }

    pub fn publisher(&self) -> &PublisherHandle {
        self.tasks.publisher.as_ref().expect("the publisher is on")
    }

    /// Move the clock to `at` (checkpoints come due) and settle.
    pub async fn advance(&self, at: DateTime<Utc>) {
        self.t.advance_to(at).await;
        self.settle().await;
    }

    /// Output `id`'s outcome record.
    pub async fn outcome(&self, id: &str) -> OutcomeRecord {
        self.t
            .outcomes()
            .await
            .remove(id)
            .unwrap_or_else(|| panic!("output {id} is tracked"))
    }

    /// `/status`.
    pub async fn status(&self) -> Value {
        self.t.client.get("/status").await.unwrap().body
    }

    /// Stop the tasks, then the App; the data directory, which is removed
    /// when dropped (keep it to restart on it or read it with the CLI).
    pub async fn stop(self) -> Stopped {
        let Tasks {
            harvester,
            reconciler,
            backfill,
            signals,
            publisher,
        } = self.tasks;
        if let Some(h) = harvester {
            h.stop().await;
        }
        if let Some(b) = backfill {
            b.stop().await;
        }
        if let Some(r) = reconciler {
            r.stop().await;
        }
        if let Some(s) = signals {
            s.stop().await;
        }
        if let Some(p) = publisher {
            p.stop().await;
        }
        self.t.server.stop().await;
        let app = self.t.app;
        tokio::task::spawn_blocking(move || app.shutdown())
            .await
            .unwrap();
        Stopped {
            data: self.data,
            dir: self.dir,
        }
    }

    /// The App's own address (its `PUBLIC_URL` in sign-in tests).
    pub fn url(&self) -> String {
        self.t.server.url()
    }

    /// The App's data directory.
    pub fn path(&self) -> &Path {
        &self.data
    }
}
