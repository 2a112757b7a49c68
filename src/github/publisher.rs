//! The check-run publisher: a task that hears from the worker which PRs'
//! outcomes changed, waits a debounce interval so a burst of deliveries makes
//! one API call, then creates or updates each PR's `safe-outcomes` check run
//! from the store. A failure is logged and retried later with backoff; it
//! never blocks evaluation, and retries stop after `max_failures` until the
//! PR changes again.
//!
//! Check runs only where they help: none is created on a PR the App first
//! learned of after it closed (merged or not; backfill, reconcile: no
//! snapshot of it ever said open) unless the operator asks
//! (`PublisherOptions::closed_prs`, `CHECK_RUNS_ON_CLOSED_PRS`). Every PR the
//! App saw open gets one whenever it closes — also one opened and closed
//! within the debounce, before its first publish — and one made while the
//! PR was open is updated when it closes. Every
//! write is paced within GitHub's secondary limits for content-creating
//! calls (`pacing`: 80 a minute, 500 an hour per installation): a write that
//! would pass one waits in the queue, not counted as a failure.
//!
//! Pending PRs live in memory: after a restart a PR's check run is refreshed
//! at its next change.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use octocrab::params::checks::{CheckRunConclusion, CheckRunOutput, CheckRunStatus};

use super::checks::{self, CheckContent, CheckRunRecord, CHECK_NAME};
use super::client::{Endpoint, GitHubClient};
use super::error::GitHubError;
use super::installations::installation_for_repo;
use super::task;
use crate::model::clock::Clock;
use crate::store::{Store, StoreError};

const CREATE: Endpoint = Endpoint::create("checks.create");
const UPDATE: Endpoint = Endpoint::idempotent("checks.update");
const LIST: Endpoint = Endpoint::idempotent("checks.list_for_ref");

/// The worker's side: tell the publisher a PR changed. Cheap to clone.
#[derive(Clone, Debug)]
pub struct PrChanges(task::Sender<String>);

impl PrChanges {
    /// This PR thread key's outcomes may have changed.
    pub(crate) fn changed(&self, pr: String) {
        self.0.send(pr);
    }
}

/// The publisher's end of the channel.
pub(crate) type PublisherInbox = task::Inbox<String>;

pub(crate) fn channel() -> (PrChanges, PublisherInbox) {
    task::channel_of(PrChanges)
}

#[derive(Debug, Clone)]
pub struct PublisherOptions {
    /// Wait after a PR's first change before publishing it.
    pub debounce: Duration,
    /// Base of the dashboard links in the summary (`PUBLIC_URL`).
    pub public_url: String,
    /// GitHub's web address, the base of the Actions run links
    /// (`https://github.com`, or a GHES host).
    pub web_url: String,
    /// First wait after a failed publish; doubles per failure.
    pub retry_min: Duration,
    pub retry_max: Duration,
    /// Failed publishes of one PR before giving up until it changes again.
    pub max_failures: u32,
    /// Create check runs on PRs already closed when first published
    /// (`CHECK_RUNS_ON_CLOSED_PRS`; default: no, they are noise on old PRs).
    pub closed_prs: bool,
}

impl PublisherOptions {
    pub fn new(public_url: &str) -> PublisherOptions {
        PublisherOptions {
            debounce: Duration::from_secs(2),
            public_url: public_url.to_string(),
            web_url: "https://github.com".to_string(),
            retry_min: Duration::from_secs(10),
            retry_max: Duration::from_secs(15 * 60),
            max_failures: 8,
            closed_prs: false,
        }
    }
}

/// A PR waiting to be published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pending {
    pub due: Instant,
    pub failures: u32,
    /// A create may have happened without us learning its id: look it up first.
    pub ambiguous_create: bool,
}

/// The per-PR pending set. Pure (time is passed in) so the debounce rule is
/// unit-tested without sleeping.
#[derive(Debug)]
pub(crate) struct PendingSet {
    options: PublisherOptions,
    items: BTreeMap<String, Pending>,
}

impl PendingSet {
    pub(crate) fn new(options: PublisherOptions) -> PendingSet {
        PendingSet {
            options,
            items: BTreeMap::new(),
        }
    }

    /// A change: publish `debounce` after the first change of a burst. A PR
    /// waiting out a failure keeps its later time, but gets its failure
    /// count reset (it changed, so it is worth new attempts).
    pub(crate) fn mark(&mut self, pr: String, now: Instant) {
        let due = now + self.options.debounce;
        self.items
            .entry(pr)
            .and_modify(|p| p.failures = 0)
            .or_insert(Pending {
                due,
                failures: 0,
                ambiguous_create: false,
            });
    }

    /// Take the PRs due at `now` (all of them with `all`).
    pub(crate) fn take_due(&mut self, now: Instant, all: bool) -> Vec<(String, Pending)> {
        task::take_due(&mut self.items, now, all, |p| p.due)
    }

    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub(crate) fn next_due(&self) -> Option<Instant> {
        self.items.values().map(|p| p.due).min()
    }

    /// Put a paced PR back, due at `due` (not a failure). A change that came
    /// in meanwhile keeps its own entry.
    pub(crate) fn requeue(&mut self, pr: String, mut p: Pending, due: Instant) {
        p.due = due;
        self.items.entry(pr).or_insert(p);
    }

    /// Put a failed PR back with backoff (or `retry_at` if later). Returns
    /// false, and drops it, once it has failed `max_failures` times. A change
    /// that came in meanwhile keeps its own entry.
    pub(crate) fn retry_later(
        &mut self,
        pr: String,
        mut p: Pending,
        now: Instant,
        at_least: Duration,
    ) -> bool {
        p.failures += 1;
        if p.failures >= self.options.max_failures {
            return false;
        }
        let backoff = crate::github::retry::doubling(
            self.options.retry_min,
            self.options.retry_max,
            p.failures,
        )
        .max(at_least);
        p.due = now + backoff;
        let ambiguous = p.ambiguous_create;
        self.items
            .entry(pr)
            .and_modify(|q| q.ambiguous_create |= ambiguous)
            .or_insert(p);
        true
    }
}

/// What publishing one PR did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Published {
    Created(u64),
    Updated(u64),
    /// Same content as last sent: no call.
    Unchanged,
    /// Nothing to publish (not a PR, no outputs, no installation, closed).
    Skipped(&'static str),
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum PublishError {
    #[error(transparent)]
    GitHub(#[from] GitHubError),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The write would pass GitHub's secondary limits: try after this wait.
    #[error("paced: the secondary limits allow the next write in {0:?}")]
    Paced(Duration),
}

/// Handle on the running publisher.
pub struct PublisherHandle(task::Handle<String>);

impl PublisherHandle {
    /// Publish every pending PR now and wait until done: the tests' sync point.
    pub async fn flush(&self) {
        self.0.flush(false).await
    }

    /// Publish what is pending, then stop.
    pub async fn stop(self) {
        self.flush().await;
        self.0.stop().await;
    }
}

/// The publisher's queue: PRs waiting out their debounce or a retry.
struct PublisherQueue {
    publisher: Publisher,
    pending: PendingSet,
}

impl task::Queue for PublisherQueue {
    type Work = String;

    fn take(&mut self, pr: String) {
        self.pending.mark(pr, Instant::now());
    }

    fn next_due(&self) -> Option<Instant> {
        self.pending.next_due()
    }

    /// A flush publishes every pending PR, due or not.
    async fn run(&mut self, why: task::Run) {
        let all = matches!(why, task::Run::Flush { .. });
        self.publisher.publish_due(&mut self.pending, all).await
    }
}

pub(crate) struct Publisher {
    store: Store,
    clock: Clock,
    client: Arc<GitHubClient>,
    options: PublisherOptions,
}

/// What our check run says, on a create and an update alike (octocrab's two
/// builders have the same setters but no common trait): completed, neutral,
/// `content` as its output, and the dashboard link when there is one.
macro_rules! completed_neutral {
    ($run:expr, $now:expr, $content:expr) => {{
        let mut run = $run
            .status(CheckRunStatus::Completed)
            .conclusion(CheckRunConclusion::Neutral)
            .completed_at($now)
            .output(Publisher::output($content));
        if let Some(url) = &$content.details_url {
            run = run.details_url(url);
        }
        run
    }};
}

impl Publisher {
    pub(crate) fn new(
        store: Store,
        clock: Clock,
        client: Arc<GitHubClient>,
        options: PublisherOptions,
    ) -> Publisher {
        Publisher {
            store,
            clock,
            client,
            options,
        }
    }

    /// Run on a tokio task. `changes` must be the sender paired with `inbox`.
    pub(crate) fn spawn(self, changes: &PrChanges, inbox: PublisherInbox) -> PublisherHandle {
        let pending = PendingSet::new(self.options.clone());
        let queue = PublisherQueue {
            publisher: self,
            pending,
        };
        PublisherHandle(task::Handle::spawn(&changes.0, inbox, async { queue }))
    }

    async fn publish_due(&self, pending: &mut PendingSet, all: bool) {
        for (pr, mut p) in pending.take_due(Instant::now(), all) {
            match self.publish(&pr, p.ambiguous_create).await {
                Ok(done) => tracing::debug!(pr = %pr, ?done, "check run published"),
                Err(PublishError::Paced(wait)) => {
                    tracing::debug!(pr = %pr, ?wait, "check run paced");
                    pending.requeue(pr, p, Instant::now() + wait);
                }
                Err(e) => {
                    self.client.calls().check_run_failed(e.to_string());
                    let mut at_least = Duration::ZERO;
                    if let PublishError::GitHub(g) = &e {
                        if matches!(g, GitHubError::Transient { endpoint, .. } if *endpoint == CREATE.label)
                        {
                            p.ambiguous_create = true;
                        }
                        if let GitHubError::BudgetExhausted {
                            retry_at: Some(at), ..
                        } = g
                        {
                            at_least = (*at - self.clock.now()).to_std().unwrap_or_default();
                        }
                    }
                    let retryable = match &e {
                        PublishError::GitHub(g) => g.is_transient(),
                        PublishError::Store(_) | PublishError::Paced(_) => true,
                    };
                    if retryable && pending.retry_later(pr.clone(), p, Instant::now(), at_least) {
                        tracing::warn!(pr = %pr, error = %e, "check run publish failed; will retry");
                    } else {
                        tracing::warn!(pr = %pr, error = %e, "check run publish failed; giving up until the PR changes");
                    }
                }
            }
        }
    }

    /// Create or update the check run of one PR.
    pub(crate) async fn publish(
        &self,
        pr: &str,
        ambiguous_create: bool,
    ) -> Result<Published, PublishError> {
        let Some(state) = checks::pr_state(&self.store, pr)? else {
            return Ok(Published::Skipped("not a PR with tracked outputs"));
        };
        let Some(installation) = installation_for_repo(&self.store, &state.repo)? else {
            return Ok(Published::Skipped(
                "no active installation for the repository",
            ));
        };
        let content = checks::render(&state, &self.options.public_url, &self.options.web_url);
        let digest = content.digest();
        let (owner, repo) = state.repo.split_once('/').unwrap_or((&state.repo, ""));
        let sha = state.head_sha.as_str();
        // One check-run writer per (PR, head sha) across replicas.
        let _writer = self
            .store
            .lock(&format!("check-run:{pr}:{sha}"), Duration::from_secs(30))
            .await?;
        let at = RunAt {
            installation,
            owner,
            repo,
            sha,
            pr,
        };
        let mut known = checks::check_run(&self.store, pr, sha)?;
        if known.is_none() && ambiguous_create {
            known = self.find_ours(at).await?.map(|id| CheckRunRecord {
                check_run_id: id,
                digest: String::new(),
            });
        }
        if known.is_none() && state.closed && !state.seen_open && !self.options.closed_prs {
            return Ok(Published::Skipped(
                "the App learned of the PR after it closed",
            ));
        }
        if known.as_ref().is_some_and(|r| r.digest == digest) {
            return Ok(Published::Unchanged);
        }
        self.pace(installation)?;
        if let Some(record) = known {
            match self.update(at, record.check_run_id, &content).await {
                Ok(()) => {
                    let r = CheckRunRecord {
                        check_run_id: record.check_run_id,
                        digest,
                    };
                    checks::save_check_run(&self.store, pr, sha, &r)?;
                    return Ok(Published::Updated(record.check_run_id));
                }
                // Deleted on GitHub's side: make a new one.
                Err(e) if e.is_missing() => checks::forget_check_run(&self.store, pr, sha)?,
                Err(e) => return Err(e.into()),
            }
        }
        let id = self.create(at, &content).await?;
        checks::save_check_run(
            &self.store,
            pr,
            sha,
            &CheckRunRecord {
                check_run_id: id,
                digest,
            },
        )?;
        Ok(Published::Created(id))
    }

    /// Ask the pacer for one write now (`pacing`); counted when allowed.
    fn pace(&self, installation: u64) -> Result<(), PublishError> {
        let pacer = &self.client.calls().pacing;
        let now = Instant::now();
        let wait = pacer.wait(installation, now);
        if !wait.is_zero() {
            return Err(PublishError::Paced(wait));
        }
        pacer.wrote(installation, now);
        Ok(())
    }

    fn output(content: &CheckContent) -> CheckRunOutput {
        CheckRunOutput {
            title: content.title.clone(),
            summary: content.summary.clone(),
            text: None,
            annotations: Vec::new(),
            images: Vec::new(),
        }
    }

    async fn create(&self, at: RunAt<'_>, content: &CheckContent) -> Result<u64, GitHubError> {
        let now = self.clock.now();
        let run = self
            .client
            .call(at.installation, CREATE, |crab| async move {
                let checks = crab.checks(at.owner, at.repo);
                let run = checks
                    .create_check_run(CHECK_NAME, at.sha)
                    .external_id(at.pr);
                completed_neutral!(run, now, content).send().await
            })
            .await?;
        Ok(run.id.into_inner())
    }

    async fn update(
        &self,
        at: RunAt<'_>,
        id: u64,
        content: &CheckContent,
    ) -> Result<(), GitHubError> {
        let now = self.clock.now();
        self.client
            .call(at.installation, UPDATE, |crab| async move {
                let checks = crab.checks(at.owner, at.repo);
                let run = checks.update_check_run(id.into());
                completed_neutral!(run, now, content).send().await
            })
            .await?;
        Ok(())
    }

    /// Our check run on `sha`, if a create we could not confirm made one
    /// (found by name and `external_id`).
    async fn find_ours(&self, at: RunAt<'_>) -> Result<Option<u64>, GitHubError> {
        let route = format!(
            "/repos/{}/{}/commits/{}/check-runs",
            at.owner, at.repo, at.sha
        );
        let list: serde_json::Value = self
            .client
            .call(at.installation, LIST, |crab| {
                let route = route.clone();
                async move {
                    crab.get(
                        route,
                        Some(&[("check_name", CHECK_NAME), ("per_page", "100")]),
                    )
                    .await
                }
            })
            .await?;
        Ok(list["check_runs"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|r| {
                r["external_id"].as_str() == Some(at.pr) && r["name"].as_str() == Some(CHECK_NAME)
            })
            .and_then(|r| r["id"].as_u64()))
    }
}

/// Where one PR's check run is: the installation, the repository and the
/// head commit it is on, and the PR (the run's `external_id`).
#[derive(Debug, Clone, Copy)]
struct RunAt<'a> {
    installation: u64,
    owner: &'a str,
    repo: &'a str,
    sha: &'a str,
    pr: &'a str,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> PublisherOptions {
        PublisherOptions {
            debounce: Duration::from_millis(100),
            retry_min: Duration::from_secs(1),
            retry_max: Duration::from_secs(4),
            max_failures: 3,
            ..PublisherOptions::new("http://x")
        }
    }

    #[test]
    fn a_burst_of_changes_is_published_once_after_the_debounce() {
        let mut set = PendingSet::new(options());
        let t0 = Instant::now();
        for ms in [0, 10, 50, 90] {
            set.mark("o/r#1".into(), t0 + Duration::from_millis(ms));
        }
        set.mark("o/r#2".into(), t0 + Duration::from_millis(60));
        assert!(set
            .take_due(t0 + Duration::from_millis(99), false)
            .is_empty());
        let due = set.take_due(t0 + Duration::from_millis(100), false);
        assert_eq!(due.len(), 1, "one publish for the burst on #1");
        assert_eq!(set.next_due(), Some(t0 + Duration::from_millis(160)));
    }

    #[test]
    fn failures_back_off_and_stop() {
        let mut set = PendingSet::new(options());
        let t0 = Instant::now();
        set.mark("p".into(), t0);
        let (k, p) = set.take_due(t0 + Duration::from_secs(1), false).remove(0);
        assert!(set.retry_later(k, p, t0, Duration::ZERO));
        assert_eq!(set.next_due(), Some(t0 + Duration::from_secs(1)));
        let (k, p) = set.take_due(t0, true).remove(0);
        assert!(set.retry_later(k, p, t0, Duration::ZERO));
        assert_eq!(set.next_due(), Some(t0 + Duration::from_secs(2)));
        let (k, p) = set.take_due(t0, true).remove(0);
        assert!(
            !set.retry_later(k, p, t0, Duration::ZERO),
            "gives up at max_failures"
        );
        assert!(set.is_empty());
    }

    #[test]
    fn a_rate_limit_reset_pushes_the_retry_out() {
        let mut set = PendingSet::new(options());
        let t0 = Instant::now();
        set.mark("p".into(), t0);
        let (k, p) = set.take_due(t0, true).remove(0);
        assert!(set.retry_later(k, p, t0, Duration::from_secs(30)));
        assert_eq!(set.next_due(), Some(t0 + Duration::from_secs(30)));
    }
}
