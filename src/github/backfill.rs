//! Day-one history: the gh-aw runs of the last N days of a repository,
//! harvested and evaluated from API state, so an org that installs the App
//! today gets last month's answer today (docs/architecture.md, "Commands"; docs/backfill.md).
//!
//! - **Jobs**: one per repository (`store::backfill`), planned by the worker
//!   for `installation.created` / `installation_repositories.added` (in the
//!   batch that files the installation), or by `POST /api/v1/backfill`
//!   (the `safe-outcomes backfill` command). The window is `[now - days, now]`
//!   at planning time, so the listing is stable while new runs happen.
//! - **Listing**: first the repository's workflows
//!   (`GET /repos/{o}/{r}/actions/workflows`, one call for most
//!   repositories), keeping gh-aw's: those whose `path` ends in
//!   `.lock.yml`. A repository with none costs that one call. Then, for
//!   each of them, `GET …/actions/workflows/{id}/runs?created=A..B&status=completed`
//!   page by page, newest first: the last seven days of every workflow
//!   (`store::backfill::RECENT`) before anything older, so last week's
//!   answer comes first. A window is listed whole (up to `slice`) and
//!   split only when GitHub says it holds more than it returns
//!   (`total_count` over its 1,000-result cap): then its newer half first.
//!   A page's runs and the cursor moved past it are written in one batch:
//!   a page is never listed twice, even after SIGKILL.
//! - **Order**: every job's last seven days are listed, harvested and
//!   judged before any job goes further back; `/status` shows how far back
//!   day one has reached (`backfill.reached_back_to`,
//!   `last_seven_days_judged`).
//! - **Harvest**: each run goes through the harvester's own `harvest` (same
//!   artifact lookup, blob download, inbox dedupe key and `n/h/` marker as
//!   for webhook-fed runs); then the backfill waits for the worker to file
//!   the manifest.
//! - **Evaluation**: each output of the run (`{repo}:{run}:…`) that webhooks
//!   have told us nothing about is evaluated once from API state through the
//!   reconciler's `reconcile_output`; outputs with webhook observations need
//!   no fetch. A marker per output (`n/e/`) makes it once across restarts.
//! - **Rate limit**: the remaining budget is read from `x-ratelimit-*` of the
//!   listing and of `GET /rate_limit` (free against the primary limit), and
//!   kept current by counting every request made since for the installation
//!   (`ApiCalls`, which counts the harvester's, reconciler's and
//!   publisher's requests too). Before each step, at or below `reserve` the
//!   job pauses (`paused_until` on `/status`) until the reset, looking at
//!   `/rate_limit` at least every `poll`; a rate-limit answer pauses it too.
//! - **Bounded**: memory holds one page of runs; a run or output whose
//!   attempts keep failing is given up after `max_failures` (counted in
//!   `runs_failed`) so one bad item never stops the queue.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, SecondsFormat, Utc};
use http_body_util::BodyExt;
use serde::Deserialize;

use super::client::{Endpoint, GitHubClient};
use super::error::GitHubError;
use super::harvest::{
    is_gh_aw_workflow, HarvestError, HarvestOptions, Harvested, Harvester, RunRef,
};
use super::installations::{self, installation_for_repo, InstallationAction, InstallationChange};
use super::reconciler::{
    from_reconcile, ReconcileStats, Reconciled, Reconciler, ReconcilerOptions,
};
use super::task;
use crate::ingest::tenancy::TenancyStats;
use crate::model::clock::Clock;
use crate::store::backfill::{BackfillJob, BackfillRun, RunStage};
use crate::store::inbox::InboxWriter;
use crate::store::{ExternalBatch, Store, StoreError};

const LIST_WORKFLOWS: Endpoint = Endpoint::idempotent("actions.list_workflows");
const LIST_RUNS: Endpoint = Endpoint::idempotent("actions.list_workflow_runs");
const RATE_LIMIT: Endpoint = Endpoint::idempotent("rate_limit.get");

/// GitHub returns at most this many results per filtered runs search.
const SEARCH_CAP: u64 = 1000;

#[derive(Debug, Clone)]
pub struct BackfillOptions {
    /// Days of history (from now back).
    pub days: u32,
    /// Requests left at which a job pauses until the rate limit resets.
    pub reserve: u64,
    /// The widest `created` window one listing asks for; a window is
    /// narrower only when GitHub says it holds more than it returns.
    pub slice: chrono::Duration,
    pub per_page: u32,
    /// Longest sleep while paused before looking at `/rate_limit` again.
    pub poll: Duration,
    /// Attempts of one run or output before it is given up.
    pub max_failures: u32,
    /// Wait after a transient failure that named no time.
    pub retry_wait: Duration,
}

impl Default for BackfillOptions {
    fn default() -> BackfillOptions {
        BackfillOptions {
            days: 30,
            reserve: 500,
            slice: chrono::Duration::days(400),
            per_page: 100,
            poll: Duration::from_secs(60),
            max_failures: 5,
            retry_wait: Duration::from_secs(30),
        }
    }
}

/// A request to the backfill: jobs were planned, look at them. (A flush,
/// the tests' and shutdown's sync point, is `task`'s own.)
pub(crate) struct Wake;

/// The worker's and the API's side: plan jobs and wake the backfill.
#[derive(Clone, Debug)]
pub struct BackfillRequests {
    tx: task::Sender<Wake>,
    days: u32,
    slice: chrono::Duration,
}

/// What the backfill needs of the running App (`app::App` is one): the
/// backfill sits below the App that starts it.
pub(crate) trait BackfillHost {
    fn store(&self) -> Store;
    fn writer(&self) -> InboxWriter;
    fn reconcile_stats(&self) -> Arc<ReconcileStats>;
    /// Where the tenancy rule's refusals are counted (`ingest::tenancy`).
    fn tenancy_stats(&self) -> Arc<TenancyStats>;
    fn caught_up(&self) -> Arc<dyn CaughtUp>;
}

/// Waits until the worker has processed every item stored so far.
pub(crate) trait CaughtUp: Send + Sync {
    fn wait_caught_up(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>>;
}

/// The backfill's end of the channel.
pub(crate) type BackfillInbox = task::Inbox<Wake>;

pub(crate) fn channel(options: &BackfillOptions) -> (BackfillRequests, BackfillInbox) {
    let (tx, rx) = task::channel();
    let requests = BackfillRequests {
        tx,
        days: options.days,
        slice: options.slice,
    };
    (requests, rx)
}

/// Why a backfill request was refused.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RequestError {
    #[error("{0:?} is not a repository name (owner/name)")]
    BadRepo(String),
    #[error("no active installation of the App covers {0}")]
    NotCovered(String),
    #[error("days must be between 1 and 400, not {0}")]
    BadDays(u32),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl BackfillRequests {
    pub(crate) fn wake(&self) {
        let _ = self.tx.send(Wake);
    }

    /// The worker's part: plan jobs for the repositories an installation
    /// change brings (`created`, `repositories added`) into `batch`.
    /// Returns whether any was planned (then `wake` after the commit).
    pub(crate) fn plan_change(
        &self,
        store: &Store,
        change: &InstallationChange,
        now: DateTime<Utc>,
        batch: &mut ExternalBatch,
    ) -> Result<bool, StoreError> {
        if !matches!(
            change.action,
            InstallationAction::Created | InstallationAction::ReposAdded
        ) {
            return Ok(false);
        }
        let mut planned = false;
        for repo in &change.repos_added {
            let job = self.job(change.installation_id, repo, now, self.days);
            planned |= store.plan_backfill(&job, batch)?;
        }
        Ok(planned)
    }

    /// The API's part: plan jobs for `repo`, or for every repository of the
    /// active installations; returns the repositories planned (a repository
    /// whose job is still running keeps it).
    pub(crate) fn request(
        &self,
        store: &Store,
        repo: Option<&str>,
        days: Option<u32>,
        now: DateTime<Utc>,
    ) -> Result<Vec<String>, RequestError> {
        let days = days.unwrap_or(self.days);
        if !(1..=400).contains(&days) {
            return Err(RequestError::BadDays(days));
        }
        let targets = match repo {
            Some(r) => {
                if !valid_repo(r) {
                    return Err(RequestError::BadRepo(r.to_string()));
                }
                let id = installation_for_repo(store, r)?
                    .ok_or_else(|| RequestError::NotCovered(r.to_string()))?;
                vec![(id, r.to_string())]
            }
            None => covered_repos(store)?,
        };
        let mut batch = ExternalBatch::default();
        let mut planned = Vec::new();
        for (id, repo) in targets {
            if store.plan_backfill(&self.job(id, &repo, now, days), &mut batch)? {
                planned.push(repo);
            }
        }
        store.commit_batch(batch)?;
        store.flush()?;
        self.wake();
        Ok(planned)
    }

    fn job(&self, installation: u64, repo: &str, now: DateTime<Utc>, days: u32) -> BackfillJob {
        let since = now - chrono::Duration::days(days.into());
        BackfillJob::new(installation, repo, since, now, self.slice)
    }
}

fn valid_repo(repo: &str) -> bool {
    let ok = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    repo.split_once('/').is_some_and(|(o, n)| ok(o) && ok(n))
}

/// Every repository of an active installation.
fn covered_repos(store: &Store) -> Result<Vec<(u64, String)>, StoreError> {
    let mut out = Vec::new();
    for inst in installations::list(store)? {
        if inst.status != installations::InstallationStatus::Active {
            continue;
        }
        for repo in installations::repos_of(store, inst.id)? {
            out.push((inst.id, repo));
        }
    }
    Ok(out)
}

/// Handle on the running backfill.
pub struct BackfillHandle(task::Handle<Wake>);

impl BackfillHandle {
    /// Work on every job and wait until the pass is over.
    pub async fn flush(&self) {
        self.0.flush(false).await
    }

    pub async fn stop(self) {
        self.0.stop().await
    }
}

#[derive(Debug, thiserror::Error)]
enum BackfillError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    GitHub(#[from] GitHubError),
    #[error("no active installation covers the repository any more")]
    NoInstallation,
    #[error("the runs list: {0}")]
    Decode(String),
}

/// The rate-limit budget last read for an installation.
#[derive(Debug, Clone, Copy)]
struct Budget {
    remaining: u64,
    reset: DateTime<Utc>,
    /// The installation's request count when `remaining` was read.
    calls_at: u64,
}

pub(crate) struct Backfill {
    store: Store,
    clock: Clock,
    client: Arc<GitHubClient>,
    caught_up: Arc<dyn CaughtUp>,
    harvester: Harvester,
    reconciler: Reconciler,
    options: BackfillOptions,
    budgets: HashMap<u64, Budget>,
    /// When the next pass is due (`task::Queue`): at once when woken,
    /// `retry_wait` after a pass that left jobs unfinished, else never.
    due: Option<Instant>,
}

/// The backfill's passes on the tasks' scaffold: a pass over every
/// unfinished job when due; a flush is one more pass.
impl task::Queue for Backfill {
    type Work = Wake;

    fn take(&mut self, _: Wake) {
        self.due = Some(Instant::now());
    }

    fn next_due(&self) -> Option<Instant> {
        self.due
    }

    async fn run(&mut self, _: task::Run) {
        let unfinished = self.pass().await;
        self.due = unfinished.then(|| Instant::now() + self.options.retry_wait);
    }
}

#[derive(Debug, Deserialize)]
struct WorkflowList {
    #[serde(default)]
    total_count: u64,
    #[serde(default)]
    workflows: Vec<ListedWorkflow>,
}

#[derive(Debug, Deserialize)]
struct ListedWorkflow {
    id: u64,
    #[serde(default)]
    path: String,
}

#[derive(Debug, Deserialize)]
struct RunList {
    #[serde(default)]
    total_count: u64,
    #[serde(default)]
    workflow_runs: Vec<ListedRun>,
}

#[derive(Debug, Deserialize)]
struct ListedRun {
    id: u64,
    #[serde(default)]
    run_attempt: Option<u64>,
    #[serde(default)]
    path: String,
    #[serde(default)]
    status: Option<String>,
    created_at: DateTime<Utc>,
}

impl Backfill {
    /// The backfill of `app`, harvesting with the harvester's code and
    /// evaluating with the reconciler's (counted in the App's reconcile stats).
    pub(crate) fn new(
        app: &impl BackfillHost,
        clock: Clock,
        client: Arc<GitHubClient>,
        harvest: HarvestOptions,
        options: BackfillOptions,
    ) -> Backfill {
        let harvester = Harvester::new(
            app.store(),
            clock.clone(),
            client.clone(),
            app.writer(),
            harvest,
        )
        .with_tenancy(app.tenancy_stats());
        let reconciler = Reconciler::new(
            app.store(),
            clock.clone(),
            client.clone(),
            app.writer(),
            ReconcilerOptions::default(),
        )
        .with_stats(app.reconcile_stats())
        .with_tenancy(app.tenancy_stats());
        Backfill {
            store: app.store(),
            clock,
            client,
            caught_up: app.caught_up(),
            harvester,
            reconciler,
            options,
            budgets: HashMap::new(),
            // The jobs left unfinished first.
            due: Some(Instant::now()),
        }
    }

    /// Run on a tokio task, starting with the jobs left unfinished.
    pub(crate) fn spawn(self, requests: &BackfillRequests, inbox: BackfillInbox) -> BackfillHandle {
        BackfillHandle(task::Handle::spawn(
            &requests.tx,
            inbox,
            async move { self },
        ))
    }

    /// Work on every unfinished job; true when some are left (failed).
    async fn pass(&mut self) -> bool {
        let jobs = match self.store.backfill_jobs() {
            Ok(j) => j,
            Err(e) => {
                tracing::warn!(error = %e, "reading backfill jobs");
                return true;
            }
        };
        let mut unfinished = false;
        // Every job's last seven days first, then the rest of each window.
        let open: Vec<String> = jobs
            .into_iter()
            .filter(|j| !j.done)
            .map(|j| j.repo)
            .collect();
        for recent_only in [true, false] {
            unfinished |= self.pass_over(&open, recent_only).await;
        }
        unfinished
    }

    /// Drive each job of `repos` (to the end of its last seven days when
    /// `recent_only`); true when some stopped on an error.
    async fn pass_over(&mut self, repos: &[String], recent_only: bool) -> bool {
        let mut unfinished = false;
        for repo in repos {
            let repo = repo.clone();
            // One replica drives a job at a time; the others try it later.
            let Ok(Some(_driving)) = self.store.try_lock(&format!("backfill:{repo}")) else {
                unfinished = true;
                continue;
            };
            // As the replica that held it last left it.
            let job = match self.store.backfill_job(&repo) {
                Ok(Some(job)) if !job.done => job,
                _ => continue,
            };
            if let Err(e) = self.drive(job, recent_only).await {
                tracing::warn!(%repo, error = %e, "backfill stopped; will try again");
                unfinished = true;
                if let Ok(Some(mut job)) = self.store.backfill_job(&repo) {
                    job.last_error = Some(e.to_string());
                    let _ = self.store.save_backfill_job(&job);
                }
            }
        }
        unfinished
    }

    /// One job to the end (or, `recent_only`, to the end of its last seven
    /// days): the runs found so far, then the next page, until every slice
    /// is listed.
    async fn drive(
        &mut self,
        mut job: BackfillJob,
        recent_only: bool,
    ) -> Result<(), BackfillError> {
        tracing::info!(repo = %job.repo, state = job.state(), found = job.runs_found, "backfill");
        loop {
            if installation_for_repo(&self.store, &job.repo)? != Some(job.installation) {
                job.done = true;
                job.last_error = Some(BackfillError::NoInstallation.to_string());
                self.store.save_backfill_job(&job)?;
                return Ok(());
            }
            let mut open = self.store.backfill_runs_open(&job.repo)?;
            open.sort_by_key(|r| std::cmp::Reverse((r.created_at, r.run_id)));
            for run in open {
                self.process_run(&mut job, run).await?;
            }
            let before = job.reached;
            job.note_reached();
            if job.reached != before {
                self.store.save_backfill_job(&job)?;
            }
            if job.listed {
                break;
            }
            if recent_only && !job.in_recent_window() {
                return Ok(());
            }
            self.list_page(&mut job).await?;
        }
        job.done = true;
        job.paused_until = None;
        job.last_error = None;
        self.store.save_backfill_job(&job)?;
        tracing::info!(repo = %job.repo, runs = job.runs_found, evaluated = job.outputs_evaluated, "backfill done");
        Ok(())
    }

    /// GET `route` for `job`'s listing, with its retries: transient
    /// failures are tried again (after the time GitHub names), up to
    /// `max_failures`; `None` when GitHub refuses for good (403 without
    /// Actions permission, 404): nothing to backfill, and the job says why.
    async fn list_get<T: serde::de::DeserializeOwned>(
        &mut self,
        job: &mut BackfillJob,
        endpoint: Endpoint,
        route: &str,
    ) -> Result<Option<T>, BackfillError> {
        let mut failures = 0;
        loop {
            self.ensure_budget(job).await?;
            match self.get_raw(job.installation, endpoint, route).await {
                Ok((headers, body)) => {
                    self.note_budget(job.installation, &headers);
                    return serde_json::from_slice(&body)
                        .map(Some)
                        .map_err(|e| BackfillError::Decode(e.to_string()));
                }
                Err(e) if e.is_transient() => {
                    failures += 1;
                    if failures >= self.options.max_failures {
                        return Err(e.into());
                    }
                    self.wait_after(job, retry_at(&e)).await?;
                }
                Err(e) => {
                    job.listed = true;
                    job.last_error = Some(e.to_string());
                    self.store.backfill_page_listed(job, &[])?;
                    return Ok(None);
                }
            }
        }
    }

    /// The next step of the listing: the workflows first, then a page of
    /// the cursor's slice of one workflow's runs.
    async fn list_page(&mut self, job: &mut BackfillJob) -> Result<(), BackfillError> {
        let Some(workflows) = job.workflows.clone() else {
            return self.list_workflows(job).await;
        };
        let Some(&workflow) = workflows.get(job.workflow_at) else {
            job.listed = true;
            self.store.save_backfill_job(job)?;
            return Ok(());
        };
        let (owner, name) = job.repo.split_once('/').unwrap_or((&job.repo, ""));
        let stamp = |t: DateTime<Utc>| t.to_rfc3339_opts(SecondsFormat::Secs, true);
        let route = format!(
            "/repos/{owner}/{name}/actions/workflows/{workflow}/runs?created={}..{}&status=completed&per_page={}&page={}",
            stamp(job.slice_start),
            stamp(job.slice_end),
            self.options.per_page,
            job.next_page
        );
        let Some(list) = self.list_get::<RunList>(job, LIST_RUNS, &route).await? else {
            return Ok(());
        };
        let span = job.slice_end - job.slice_start;
        if job.next_page == 1
            && list.total_count > SEARCH_CAP
            && span > chrono::Duration::minutes(1)
        {
            // GitHub holds more than it returns: the newer half first.
            job.narrow();
            self.store.save_backfill_job(job)?;
            return Ok(());
        }
        let per_page = self.options.per_page as u64;
        let last = (list.workflow_runs.len() as u64) < per_page
            || job.next_page as u64 * per_page >= list.total_count.min(SEARCH_CAP);
        let runs: Vec<BackfillRun> = list
            .workflow_runs
            .into_iter()
            .filter(|r| is_gh_aw_workflow(&r.path) && r.status.as_deref() == Some("completed"))
            .map(|r| BackfillRun {
                repo: job.repo.clone(),
                run_id: r.id,
                run_attempt: r.run_attempt.unwrap_or(1).max(1),
                workflow_path: r.path,
                created_at: r.created_at,
                stage: RunStage::Found,
            })
            .collect();
        if last {
            job.advance(self.options.slice);
        } else {
            job.next_page += 1;
        }
        self.store.backfill_page_listed(job, &runs)?;
        Ok(())
    }

    /// List the repository's workflows (every page), keep gh-aw's, and
    /// start the runs' listing; a repository without any is done here.
    async fn list_workflows(&mut self, job: &mut BackfillJob) -> Result<(), BackfillError> {
        let repo = job.repo.clone();
        let (owner, name) = repo.split_once('/').unwrap_or((&repo, ""));
        let per_page = self.options.per_page.max(1);
        let mut ids = Vec::new();
        for page in 1u32.. {
            let route =
                format!("/repos/{owner}/{name}/actions/workflows?per_page={per_page}&page={page}");
            let Some(list) = self
                .list_get::<WorkflowList>(job, LIST_WORKFLOWS, &route)
                .await?
            else {
                return Ok(());
            };
            let got = list.workflows.len() as u64;
            ids.extend(
                list.workflows
                    .into_iter()
                    .filter(|w| is_gh_aw_workflow(&w.path))
                    .map(|w| w.id),
            );
            if got < per_page as u64 || page as u64 * per_page as u64 >= list.total_count {
                break;
            }
        }
        tracing::info!(repo = %job.repo, workflows = ids.len(), "gh-aw workflows");
        job.start_listing(ids, self.options.slice);
        self.store.save_backfill_job(job)?;
        Ok(())
    }

    /// GET `route` as the installation: the answer's headers and body.
    async fn get_raw(
        &self,
        installation: u64,
        endpoint: Endpoint,
        route: &str,
    ) -> Result<(axum::http::HeaderMap, Vec<u8>), GitHubError> {
        self.client
            .call(installation, endpoint, |crab| async move {
                let response = crab._get(route).await?;
                let response = octocrab::map_github_error(response).await?;
                let headers = response.headers().clone();
                let body = response.into_body().collect().await?.to_bytes();
                Ok((headers, body.to_vec()))
            })
            .await
    }

    /// Remember the `x-ratelimit-*` of an answer.
    fn note_budget(&mut self, installation: u64, headers: &axum::http::HeaderMap) {
        let read = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<i64>().ok())
        };
        let (Some(remaining), Some(reset)) =
            (read("x-ratelimit-remaining"), read("x-ratelimit-reset"))
        else {
            return;
        };
        let Some(reset) = DateTime::from_timestamp(reset, 0) else {
            return;
        };
        let budget = Budget {
            remaining: remaining.max(0) as u64,
            reset,
            calls_at: self.calls_of(installation),
        };
        self.budgets.insert(installation, budget);
    }

    fn calls_of(&self, installation: u64) -> u64 {
        self.client
            .calls()
            .by_installation()
            .get(&installation.to_string())
            .copied()
            .unwrap_or(0)
    }

    /// What is left now: the last reading less the requests made since.
    /// `None` when unknown or past its reset.
    fn estimate(&self, installation: u64) -> Option<Budget> {
        let b = self.budgets.get(&installation)?;
        if self.clock.now() >= b.reset {
            return None;
        }
        let used = self.calls_of(installation).saturating_sub(b.calls_at);
        Some(Budget {
            remaining: b.remaining.saturating_sub(used),
            ..*b
        })
    }

    /// Read the budget from `GET /rate_limit` (free against the primary limit).
    async fn probe(&mut self, installation: u64) -> Result<(), GitHubError> {
        let (headers, _) = self
            .get_raw(installation, RATE_LIMIT, "/rate_limit")
            .await?;
        self.note_budget(installation, &headers);
        Ok(())
    }

    /// Return when the installation has more than `reserve` requests left;
    /// pause the job (durably, for `/status`) until then.
    async fn ensure_budget(&mut self, job: &mut BackfillJob) -> Result<(), BackfillError> {
        let installation = job.installation;
        let mut probed = false;
        loop {
            let Some(budget) = self.estimate(installation) else {
                if probed {
                    // The rate limit is not reported: go on.
                    return self.resume(job);
                }
                self.probe(installation).await?;
                probed = true;
                continue;
            };
            if budget.remaining > self.options.reserve {
                return self.resume(job);
            }
            if job.paused_until != Some(budget.reset) {
                tracing::info!(repo = %job.repo, remaining = budget.remaining, reserve = self.options.reserve, until = %budget.reset, "backfill pauses until the rate limit resets");
                job.paused_until = Some(budget.reset);
                self.store.save_backfill_job(job)?;
            }
            let wait = (budget.reset - self.clock.now())
                .to_std()
                .unwrap_or_default()
                .min(self.options.poll);
            tokio::time::sleep(wait).await;
            self.probe(installation).await?;
            probed = true;
        }
    }

    fn resume(&self, job: &mut BackfillJob) -> Result<(), BackfillError> {
        if job.paused_until.take().is_some() {
            tracing::info!(repo = %job.repo, "backfill resumes");
            self.store.save_backfill_job(job)?;
        }
        Ok(())
    }

    /// After a transient failure: a rate limit (GitHub named a time) pauses
    /// the job until then; anything else waits `retry_wait`.
    async fn wait_after(
        &mut self,
        job: &mut BackfillJob,
        retry_at: Option<DateTime<Utc>>,
    ) -> Result<(), BackfillError> {
        match retry_at {
            Some(at) => {
                // Forget the reading: the next step looks at /rate_limit.
                self.budgets.insert(
                    job.installation,
                    Budget {
                        remaining: 0,
                        reset: at,
                        calls_at: self.calls_of(job.installation),
                    },
                );
                self.ensure_budget(job).await
            }
            None => {
                tokio::time::sleep(self.options.retry_wait).await;
                Ok(())
            }
        }
    }

    /// Harvest a run (unless done), then evaluate its outputs.
    async fn process_run(
        &mut self,
        job: &mut BackfillJob,
        mut run: BackfillRun,
    ) -> Result<(), BackfillError> {
        if run.stage == RunStage::Found {
            match self.harvest(job, &run).await? {
                Ok(done) => {
                    tracing::debug!(repo = %run.repo, run = run.run_id, ?done, "backfill harvest");
                    job.runs_harvested += 1;
                }
                Err(e) => {
                    tracing::warn!(repo = %run.repo, run = run.run_id, error = %e, "backfill: run not harvested");
                    job.runs_failed += 1;
                }
            }
            // The manifest is in the inbox: let the worker file its outputs.
            self.caught_up.wait_caught_up().await;
            run.stage = RunStage::Harvested;
            self.store.backfill_run_moved(job, &run)?;
        }
        let prefix = format!("{}:{}:", run.repo, run.run_id);
        let ids: Vec<String> = self
            .store
            .outputs(&prefix, None)
            .filter_map(|o| o.ok().map(|o| o.execution.id))
            .collect();
        for id in ids {
            if !self.store.backfill_evaluated(&id)? {
                self.evaluate(job, &id).await?;
            }
        }
        run.stage = RunStage::Evaluated;
        Ok(self.store.backfill_run_moved(job, &run)?)
    }

    /// The harvester's harvest of one run, within the budget, retried a
    /// bounded number of times. The outer error stops the job.
    async fn harvest(
        &mut self,
        job: &mut BackfillJob,
        run: &BackfillRun,
    ) -> Result<Result<Harvested, HarvestError>, BackfillError> {
        let run_ref = RunRef {
            repo: run.repo.clone(),
            run_id: run.run_id,
            run_attempt: run.run_attempt,
            workflow_path: run.workflow_path.clone(),
        };
        let mut failures = 0;
        loop {
            self.ensure_budget(job).await?;
            match self.harvester.harvest(&run_ref).await {
                Ok(Harvested::Skipped(_)) => return Err(BackfillError::NoInstallation),
                Err(HarvestError::GitHub(e))
                    if e.is_transient() && failures + 1 < self.options.max_failures =>
                {
                    failures += 1;
                    self.wait_after(job, retry_at(&e)).await?;
                }
                Err(e) if e.is_transient() && failures + 1 < self.options.max_failures => {
                    failures += 1;
                    tokio::time::sleep(self.options.retry_wait).await;
                }
                other => return Ok(other),
            }
        }
    }

    /// Evaluate one output from API state, once; an output webhooks have
    /// told us about needs no fetch.
    async fn evaluate(&mut self, job: &mut BackfillJob, id: &str) -> Result<(), BackfillError> {
        let Some(stored) = self.store.output(id)? else {
            return Ok(());
        };
        let observed = self
            .store
            .observations(&stored.execution.watch_keys())?
            .iter()
            .any(|o| !from_reconcile(o));
        if observed || crate::ingest::reconcile::required_endpoints(&stored.execution).is_empty() {
            job.outputs_observed += 1;
            return Ok(self.store.backfill_output_done(job, id)?);
        }
        let mut failures = 0;
        loop {
            self.ensure_budget(job).await?;
            let (result, retry_at) = match self.reconciler.reconcile_output(id).await {
                Ok(r) => r,
                Err(e) => (
                    Reconciled::Failed {
                        retry: true,
                        detail: e.to_string(),
                    },
                    None,
                ),
            };
            let retry = matches!(result, Reconciled::Failed { retry: true, .. });
            failures += 1;
            if !retry || failures >= self.options.max_failures {
                break;
            }
            self.wait_after(job, retry_at).await?;
        }
        job.outputs_evaluated += 1;
        Ok(self.store.backfill_output_done(job, id)?)
    }
}

/// When GitHub said to come back (rate limits).
fn retry_at(error: &GitHubError) -> Option<DateTime<Utc>> {
    match error {
        GitHubError::BudgetExhausted { retry_at, .. } => *retry_at,
        _ => None,
    }
}

#[cfg(test)]
mod tests;
