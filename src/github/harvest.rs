//! Manifest harvest: when a gh-aw workflow run completes (any conclusion:
//! partial runs executed some outputs too), download its `safe-outputs-items`
//! artifact through the API and ingest the `safe-output-items.jsonl` inside
//! exactly as if it had been posted to `/api/v1/manifests` (gh-aw facts §2.3, §5).
//!
//! - **Which runs**: a run whose workflow file ends in `.lock.yml`, the file
//!   gh-aw compiles each `.md` workflow to (`ci-coach.md` →
//!   `.github/workflows/ci-coach.lock.yml`); plain workflows have no manifest.
//! - **Trigger**: the worker, filing a completed `WorkflowRun` observation,
//!   queues the run durably (`n/q/`, in the same batch as the delivery) and
//!   tells the harvester over a channel (`HarvestRequests`). The harvester
//!   does the API calls on its own task, outside the worker, and reads the
//!   durable queue at start-up, so a crash loses no run.
//! - **Idempotent per run**: the harvest of a run (and attempt) leaves a
//!   marker (`n/h/`), checked before anything is listed or downloaded, so a
//!   second `completed` delivery for the run, or a redelivery, costs nothing.
//!   The inbox dedupe key is also derived from the run
//!   (`harvest:{repo}:{run id}:{attempt}`), so even a lost marker never
//!   ingests twice. A re-run (attempt 2) has artifacts of its own and is
//!   harvested again.
//! - **Download**: `GET .../artifacts/{id}/zip` answers 302 to a pre-signed
//!   blob URL. The redirect is not followed by octocrab (it would not attach
//!   auth to an absolute URL anyway); the blob is fetched with a plain HTTP
//!   client that sends **no** Authorization header: the URL is the
//!   credential, and the installation token must never leave for another host.
//! - **Failures**: transient ones (5xx, rate limits, a blob that fails) are
//!   retried (the API call by the retry helper, the blob a few times with a
//!   fresh redirect, the whole run later with backoff); terminal ones (run
//!   or artifact gone, no permission, no artifact, a bad zip) mark the run
//!   done with a note, so it is not asked again.
//! - The run's workflow is recorded as the lock file's stem (`ci-coach`),
//!   gh-aw's `workflow_id`, the name its body markers carry.
//! - **Tenancy**: the run's repository is the anchor of every line
//!   (`ingest::tenancy`): a line whose own repository or target lies outside
//!   the run's installation is rejected and counted (`Where::Harvest`),
//!   never staged.

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::task;
use chrono::{DateTime, Utc};
use http_body_util::BodyExt;
use serde::{Deserialize, Serialize};

use super::client::{Endpoint, GitHubClient};
use super::error::GitHubError;
use super::installations::installation_for_repo;
use crate::ingest::ingress::manifest_stream::StreamedManifest;
use crate::ingest::manifest::{LineParser, ManifestDefaults};
use crate::ingest::tenancy::{TenancyStats, Where};
use crate::model::clock::Clock;
use crate::model::{Observation, ObservationKind};
use crate::store::inbox::{Enqueued, InboxError, InboxItem, InboxWriter};
use crate::store::{counter, ExternalBatch, Store, StoreError};

/// gh-aw's artifact name (`constants.SafeOutputItemsArtifactName`); under
/// `workflow_call` it carries a prefix.
pub(crate) const ARTIFACT: &str = "safe-outputs-items";
/// The manifest file inside the artifact.
pub(crate) const MANIFEST_FILE: &str = "safe-output-items.jsonl";

const LIST_ARTIFACTS: Endpoint = Endpoint::idempotent("actions.list_run_artifacts");
const DOWNLOAD: Endpoint = Endpoint::idempotent("actions.download_artifact");

/// gh-aw's compiled workflow suffix.
const LOCK_SUFFIX: &str = ".lock.yml";

/// The file name of a workflow path.
fn workflow_file(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// True for a gh-aw compiled workflow file (`*.lock.yml`).
pub(crate) fn is_gh_aw_workflow(path: &str) -> bool {
    workflow_file(path).ends_with(LOCK_SUFFIX)
}

/// A workflow run to harvest.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RunRef {
    pub repo: String,
    pub run_id: u64,
    pub run_attempt: u64,
    /// The workflow file path (`.github/workflows/ci-coach.lock.yml`).
    pub workflow_path: String,
}

impl RunRef {
    /// The run of a completed gh-aw `WorkflowRun` observation.
    pub(crate) fn from_observation(obs: &Observation) -> Option<RunRef> {
        let ObservationKind::WorkflowRun {
            run_id,
            workflow,
            status,
            run_attempt,
            ..
        } = &obs.event
        else {
            return None;
        };
        if status != "completed" || !is_gh_aw_workflow(workflow) {
            return None;
        }
        let (repo, _) = crate::model::ids::split_key(&obs.target)?;
        Some(RunRef {
            repo: repo.to_string(),
            run_id: *run_id,
            run_attempt: (*run_attempt).max(1),
            workflow_path: workflow.clone(),
        })
    }

    /// gh-aw's `workflow_id`: the lock file's stem.
    pub(crate) fn workflow(&self) -> &str {
        let file = workflow_file(&self.workflow_path);
        file.strip_suffix(LOCK_SUFFIX).unwrap_or(file)
    }

    /// The inbox dedupe key of the run's manifest.
    pub(crate) fn manifest_key(&self) -> String {
        format!(
            "harvest:{}:{}:{}",
            self.repo.to_ascii_lowercase(),
            self.run_id,
            self.run_attempt
        )
    }

    /// The run's identity in the store: repository, run id, attempt.
    fn run_key(&self) -> (&str, u64, u64) {
        (&self.repo, self.run_id, self.run_attempt)
    }
}

/// What the harvest of one run found (`n/h/`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HarvestRecord {
    pub harvested_at: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_id: Option<u64>,
    /// Manifest lines accepted and rejected.
    pub accepted: usize,
    pub rejected: usize,
    /// Why nothing was ingested, when so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The harvest marker of a run, if it was harvested.
pub fn harvested(
    store: &Store,
    repo: &str,
    run_id: u64,
    attempt: u64,
) -> Result<Option<HarvestRecord>, StoreError> {
    store.harvest_record(repo, run_id, attempt)
}

/// The worker's part: queue `run` durably in `batch`, unless it was
/// harvested already. Returns whether it was queued (then send it).
pub(crate) fn queue(
    store: &Store,
    run: &RunRef,
    batch: &mut ExternalBatch,
) -> Result<bool, StoreError> {
    if store.harvest_done(&run.repo, run.run_id, run.run_attempt)? {
        return Ok(false);
    }
    batch.queue_harvest(&run.repo, run.run_id, run.run_attempt, run);
    Ok(true)
}

/// The worker's side of the channel. Cheap to clone.
#[derive(Clone, Debug)]
pub struct HarvestRequests(task::Sender<RunRef>);

impl HarvestRequests {
    pub(crate) fn request(&self, run: RunRef) {
        self.0.send(run);
    }
}

/// The harvester's end of the channel.
pub type HarvestInbox = task::Inbox<RunRef>;

pub fn channel() -> (HarvestRequests, HarvestInbox) {
    task::channel_of(HarvestRequests)
}

#[derive(Debug, Clone)]
pub struct HarvestOptions {
    /// First wait after a transient failure of a run; doubles per failure.
    pub retry_min: Duration,
    pub retry_max: Duration,
    /// Failed attempts of a run before giving up (until a new delivery).
    pub max_failures: u32,
    /// Blob fetches per download (each after a fresh redirect).
    pub blob_attempts: u32,
    /// Largest artifact (zip) and manifest (unzipped) read.
    pub max_bytes: u64,
    /// Timeout of one blob fetch.
    pub blob_timeout: Duration,
    /// How often the durable queue is read for runs no live lease holds.
    pub rescan_every: Duration,
}

impl Default for HarvestOptions {
    fn default() -> HarvestOptions {
        HarvestOptions {
            retry_min: Duration::from_secs(30),
            retry_max: Duration::from_secs(30 * 60),
            max_failures: 6,
            blob_attempts: 3,
            max_bytes: crate::ingest::ingress::MAX_BODY as u64,
            blob_timeout: Duration::from_secs(60),
            rescan_every: RESCAN_EVERY,
        }
    }
}

/// What harvesting one run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Harvested {
    /// The manifest was read and enqueued (`duplicate`: the inbox had it).
    Ingested {
        accepted: usize,
        rejected: usize,
        duplicate: bool,
    },
    /// Harvested before: nothing listed or downloaded.
    AlreadyDone,
    /// Done, with nothing to ingest (no artifact, empty manifest, ...).
    Nothing(String),
    /// Not attempted (no active installation for the repository).
    Skipped(&'static str),
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum HarvestError {
    #[error(transparent)]
    GitHub(#[from] GitHubError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Inbox(#[from] InboxError),
    #[error("artifact blob: {message}")]
    Blob { transient: bool, message: String },
    #[error("artifact: {0}")]
    Artifact(String),
}

impl HarvestError {
    /// True when trying again later can succeed.
    pub(crate) fn is_transient(&self) -> bool {
        match self {
            HarvestError::GitHub(g) => g.is_transient(),
            HarvestError::Store(_) | HarvestError::Inbox(_) => true,
            HarvestError::Blob { transient, .. } => *transient,
            HarvestError::Artifact(_) => false,
        }
    }
}

/// Handle on the running harvester.
pub struct HarvesterHandle(task::Handle<RunRef>);

impl HarvesterHandle {
    /// Harvest the runs sent so far (not those waiting out a failure) and
    /// wait: the tests' sync point.
    pub async fn flush(&self) {
        self.0.flush(false).await
    }

    /// Also retry the runs waiting out a failure, now.
    pub async fn retry_now(&self) {
        self.0.flush(true).await
    }

    pub async fn stop(self) {
        self.0.stop().await
    }
}

/// How long a harvest's lease lasts: a replica killed mid-harvest leaves
/// the run to another once it runs out.
pub(crate) const HARVEST_LEASE: Duration = Duration::from_secs(300);

/// How often the harvester reads the durable queue for runs nobody holds
/// (the first time when it starts): queued before a restart, or left by a
/// replica that died harvesting them.
const RESCAN_EVERY: Duration = Duration::from_secs(60);

/// The harvester's queue: runs by reference, each with when it is due.
struct HarvestQueue {
    harvester: Harvester,
    pending: BTreeMap<RunRef, Pending>,
    /// When the durable queue is read next.
    next_scan: Instant,
}

impl task::Queue for HarvestQueue {
    type Work = RunRef;

    fn take(&mut self, run: RunRef) {
        self.pending
            .entry(run.clone())
            .or_insert_with(|| Pending::now(run));
    }

    fn next_due(&self) -> Option<Instant> {
        let due = self.pending.values().map(|p| p.due).min();
        Some(due.map_or(self.next_scan, |d| d.min(self.next_scan)))
    }

    /// A flush harvests what is due, and with `retry` also what waits to
    /// retry; when a scan is due, the durable queue's runs join first.
    async fn run(&mut self, why: task::Run) {
        if Instant::now() >= self.next_scan {
            self.next_scan = Instant::now() + self.harvester.options.rescan_every;
            for run in self.harvester.queued() {
                self.pending
                    .entry(run.clone())
                    .or_insert_with(|| Pending::now(run));
            }
        }
        let retry = matches!(why, task::Run::Flush { retry: true });
        self.harvester.harvest_due(&mut self.pending, retry).await
    }
}

/// A run waiting to be (re)tried.
struct Pending {
    run: RunRef,
    due: Instant,
    failures: u32,
}

pub(crate) struct Harvester {
    store: Store,
    clock: Clock,
    client: Arc<GitHubClient>,
    writer: InboxWriter,
    http: reqwest::Client,
    options: HarvestOptions,
    tenancy: Arc<TenancyStats>,
}

#[derive(Debug, Deserialize)]
struct ArtifactList {
    #[serde(default)]
    total_count: u64,
    #[serde(default)]
    artifacts: Vec<Artifact>,
}

/// Pages of 100 artifacts read per run, at most.
const MAX_ARTIFACT_PAGES: u32 = 10;

#[derive(Debug, Clone, Deserialize)]
struct Artifact {
    id: u64,
    #[serde(default)]
    name: String,
    #[serde(default)]
    size_in_bytes: u64,
    #[serde(default)]
    expired: bool,
}

/// Where `/zip` sent us.
enum Located {
    Redirect(String),
    /// Served directly (some proxies and GHES setups).
    Body(Vec<u8>),
}

impl Harvester {
    pub(crate) fn new(
        store: Store,
        clock: Clock,
        client: Arc<GitHubClient>,
        writer: InboxWriter,
        options: HarvestOptions,
    ) -> Harvester {
        // No default headers and no auth: the blob URL is pre-signed.
        let http = reqwest::Client::builder()
            .timeout(options.blob_timeout)
            .user_agent(concat!("safe-outcomes/", env!("CARGO_PKG_VERSION")))
            .build()
            .expect("the HTTP client builds");
        Harvester {
            store,
            clock,
            client,
            writer,
            http,
            options,
            tenancy: Arc::default(),
        }
    }

    /// Count the lines the tenancy rule refuses into these stats (the
    /// App's, on `/status` and `/metrics`) instead of the harvester's own.
    pub(crate) fn with_tenancy(mut self, stats: Arc<TenancyStats>) -> Harvester {
        self.tenancy = stats;
        self
    }

    /// Run on a tokio task; the durable queue is read now and every
    /// `RESCAN_EVERY`. `requests` must be the sender paired with `inbox`.
    pub(crate) fn spawn(self, requests: &HarvestRequests, inbox: HarvestInbox) -> HarvesterHandle {
        HarvesterHandle(task::Handle::spawn(&requests.0, inbox, async move {
            HarvestQueue {
                harvester: self,
                pending: BTreeMap::new(),
                next_scan: Instant::now(),
            }
        }))
    }

    /// Runs in the durable queue.
    fn queued(&self) -> Vec<RunRef> {
        self.store.harvest_queue()
    }

    async fn harvest_due(&self, pending: &mut BTreeMap<RunRef, Pending>, all: bool) {
        for (key, mut p) in task::take_due(pending, Instant::now(), all, |p| p.due) {
            match self.harvest(&p.run).await {
                Ok(done) => {
                    tracing::debug!(repo = %p.run.repo, run = p.run.run_id, ?done, "harvest")
                }
                Err(e) if e.is_transient() && p.failures + 1 < self.options.max_failures => {
                    p.failures += 1;
                    let wait = crate::github::retry::doubling(
                        self.options.retry_min,
                        self.options.retry_max,
                        p.failures,
                    );
                    tracing::warn!(repo = %p.run.repo, run = p.run.run_id, error = %e, "harvest failed; will retry");
                    p.due = Instant::now() + wait;
                    pending.insert(key, p);
                }
                Err(e) if e.is_transient() => {
                    tracing::warn!(repo = %p.run.repo, run = p.run.run_id, error = %e, "harvest failed; giving up until the run is delivered again");
                    self.unqueue(&p.run);
                }
                Err(e) => {
                    tracing::warn!(repo = %p.run.repo, run = p.run.run_id, error = %e, "harvest failed for good");
                    let record = self.record(None, 0, 0, Some(e.to_string()));
                    if let Err(e) = self.mark_done(&p.run, &record, false) {
                        tracing::warn!(error = %e, "storing a harvest marker");
                    }
                }
            }
        }
    }

    fn unqueue(&self, run: &RunRef) {
        let (repo, id, attempt) = run.run_key();
        if let Err(e) = self.store.unqueue_harvest(repo, id, attempt) {
            tracing::warn!(error = %e, "removing a harvest from the queue");
        }
    }

    fn record(
        &self,
        artifact_id: Option<u64>,
        accepted: usize,
        rejected: usize,
        note: Option<String>,
    ) -> HarvestRecord {
        HarvestRecord {
            harvested_at: self.clock.now(),
            artifact_id,
            accepted,
            rejected,
            note,
        }
    }

    /// Store the marker and drop the run from the queue, in one batch.
    fn mark_done(
        &self,
        run: &RunRef,
        record: &HarvestRecord,
        count: bool,
    ) -> Result<(), StoreError> {
        let counted = count.then_some(counter::HARVESTED);
        self.store.mark_harvest_done(run.run_key(), record, counted)
    }

    /// Harvest one run: list its artifacts, download the manifest artifact,
    /// ingest its lines, mark the run done.
    pub(crate) async fn harvest(&self, run: &RunRef) -> Result<Harvested, HarvestError> {
        // One replica harvests a run, under a lease; it marks it done for
        // the others. A replica killed midway leaves the lease to run out,
        // and the run to whichever replica's scan finds it then.
        let lease = format!("harvest:{}:{}:{}", run.repo, run.run_id, run.run_attempt);
        if !self.store.take_lease(&lease, HARVEST_LEASE)? {
            return Ok(Harvested::Skipped("another replica is harvesting the run"));
        }
        let result = self.harvest_leased(run).await;
        if let Err(e) = self.store.release_lease(&lease) {
            tracing::warn!(error = %e, "letting go of a harvest's lease");
        }
        result
    }

    /// `harvest`, with the run's lease held.
    async fn harvest_leased(&self, run: &RunRef) -> Result<Harvested, HarvestError> {
        if self
            .store
            .harvest_done(&run.repo, run.run_id, run.run_attempt)?
        {
            self.unqueue(run);
            return Ok(Harvested::AlreadyDone);
        }
        let Some(installation) = installation_for_repo(&self.store, &run.repo)? else {
            self.unqueue(run);
            return Ok(Harvested::Skipped(
                "no active installation for the repository",
            ));
        };
        let (owner, repo) = run
            .repo
            .split_once('/')
            .ok_or_else(|| HarvestError::Artifact(format!("bad repository {:?}", run.repo)))?;
        let nothing = |note: String| -> Result<Harvested, HarvestError> {
            self.mark_done(run, &self.record(None, 0, 0, Some(note.clone())), false)?;
            Ok(Harvested::Nothing(note))
        };
        let Some(artifact) = self.find_artifact(installation, owner, repo, run).await? else {
            return nothing(format!("the run has no `{ARTIFACT}` artifact"));
        };
        if artifact.expired {
            return nothing(format!("artifact {} has expired", artifact.id));
        }
        if artifact.size_in_bytes > self.options.max_bytes {
            return nothing(format!(
                "artifact {} is {} bytes, over the {} byte limit",
                artifact.id, artifact.size_in_bytes, self.options.max_bytes
            ));
        }
        let zip = self
            .download(installation, owner, repo, artifact.id)
            .await?;
        let Some(text) = manifest_from_zip(&zip, self.options.max_bytes)
            .map_err(|e| HarvestError::Artifact(format!("artifact {}: {e}", artifact.id)))?
        else {
            return nothing(format!("artifact {} holds no {MANIFEST_FILE}", artifact.id));
        };
        let now = self.clock.now();
        let defaults = ManifestDefaults {
            repo: Some(run.repo.clone()),
            run_id: Some(run.run_id),
            workflow: Some(run.workflow().to_string()),
        };
        // Staged in bounded chunks like a posted manifest: memory does not
        // grow with the artifact (docs/hostile-world.md "Big manifests").
        let limits = crate::ingest::ingress::Limits::default();
        let parser = LineParser::new(defaults, now, limits.manifest_max_line_bytes);
        let anywhere = |_: &crate::model::ExecutionRecord| Ok(());
        let refused = |e: crate::ingest::ingress::ApiError| {
            HarvestError::Artifact(format!("artifact {}: {}", artifact.id, e.detail))
        };
        let mut manifest =
            StreamedManifest::new(&self.store, &limits, parser, "", &anywhere).map_err(refused)?;
        if let Err(e) = manifest.read(axum::body::Body::from(text)).await {
            manifest.discard().await;
            return nothing(format!(
                "artifact {} was refused: {}",
                artifact.id, e.detail
            ));
        }
        let (accepted, rejected) = (manifest.accepted, manifest.rejected_total);
        for (kind, n) in &manifest.outside_installation {
            self.tenancy.add(Where::Harvest, kind, *n as u64);
        }
        if manifest.outside_installation_total() > 0 {
            tracing::warn!(repo = %run.repo, run = run.run_id, refused = manifest.outside_installation_total(), "harvested manifest lines outside the run's installation refused");
        }
        if rejected > 0 {
            tracing::info!(repo = %run.repo, run = run.run_id, rejected, lines = %manifest.rejected_json(), "harvested manifest lines skipped");
        }
        let mut duplicate = false;
        if accepted > 0 {
            let item = InboxItem::ManifestChunks {
                key: run.manifest_key(),
                received_at: now,
                upload: manifest.upload,
                chunks: manifest.chunks,
            };
            manifest
                .keep()
                .await
                .map_err(|e| HarvestError::Inbox(InboxError::Write(e.detail)))?;
            duplicate = self.writer.enqueue(item).await? == Enqueued::Duplicate;
            if duplicate {
                manifest.discard().await;
            }
        } else {
            manifest.discard().await;
        }
        let note = (accepted == 0).then(|| "the manifest has no usable line".to_string());
        let record = self.record(Some(artifact.id), accepted, rejected, note);
        self.mark_done(run, &record, true)?;
        Ok(Harvested::Ingested {
            accepted,
            rejected,
            duplicate,
        })
    }

    /// The run's manifest artifact: one not expired first, then the exact
    /// name before a prefixed one (`workflow_call`), then the newest.
    async fn find_artifact(
        &self,
        installation: u64,
        owner: &str,
        repo: &str,
        run: &RunRef,
    ) -> Result<Option<Artifact>, GitHubError> {
        let route = format!(
            "/repos/{owner}/{repo}/actions/runs/{}/artifacts",
            run.run_id
        );
        let mut artifacts = Vec::new();
        // A run with more than a page of artifacts (matrix jobs upload many):
        // read on, within a bound, until the list is complete.
        for page in 1..=MAX_ARTIFACT_PAGES {
            let list: ArtifactList = self
                .client
                .call(installation, LIST_ARTIFACTS, |crab| {
                    let route = route.clone();
                    let page = page.to_string();
                    async move {
                        crab.get(route, Some(&[("per_page", "100"), ("page", page.as_str())]))
                            .await
                    }
                })
                .await?;
            let last = list.artifacts.len() < 100
                || artifacts.len() + list.artifacts.len() >= list.total_count as usize;
            artifacts.extend(list.artifacts);
            if last {
                break;
            }
        }
        let best = artifacts
            .into_iter()
            .filter(|a| a.name.ends_with(ARTIFACT))
            .max_by_key(|a| (!a.expired, a.name == ARTIFACT, a.id));
        Ok(best)
    }

    /// The artifact's zip: the API's redirect, then the blob without auth.
    /// A failed blob fetch gets a fresh redirect (pre-signed URLs are short-lived).
    async fn download(
        &self,
        installation: u64,
        owner: &str,
        repo: &str,
        artifact_id: u64,
    ) -> Result<Vec<u8>, HarvestError> {
        let route = format!("/repos/{owner}/{repo}/actions/artifacts/{artifact_id}/zip");
        let policy = self.client.policy().clone();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let located = self
                .client
                .call(installation, DOWNLOAD, |crab| {
                    let route = route.clone();
                    async move {
                        let response = crab._get(route.as_str()).await?;
                        if response.status().is_redirection() {
                            let location = response
                                .headers()
                                .get(axum::http::header::LOCATION)
                                .and_then(|v| v.to_str().ok())
                                .unwrap_or_default()
                                .to_string();
                            return Ok(Located::Redirect(location));
                        }
                        let response = octocrab::map_github_error(response).await?;
                        let body = response.into_body().collect().await?.to_bytes();
                        Ok(Located::Body(body.to_vec()))
                    }
                })
                .await?;
            let url = match located {
                Located::Body(bytes) => return Ok(bytes),
                Located::Redirect(url) => url,
            };
            match self.fetch_blob(&url).await {
                Ok(bytes) => return Ok(bytes),
                Err(HarvestError::Blob {
                    transient: true,
                    message,
                }) if attempt < self.options.blob_attempts => {
                    tracing::debug!(attempt, %message, "artifact blob fetch failed; retrying");
                    (policy.sleeper)(policy.backoff(attempt)).await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// GET the pre-signed blob URL, with no Authorization header, capped.
    async fn fetch_blob(&self, url: &str) -> Result<Vec<u8>, HarvestError> {
        let blob = |transient: bool, message: String| HarvestError::Blob { transient, message };
        if !(url.starts_with("https://") || url.starts_with("http://")) {
            return Err(blob(
                false,
                format!("redirect to {url:?} is not an absolute URL"),
            ));
        }
        let mut response = self
            .http
            .get(url)
            .send()
            .await
            .map_err(|e| blob(true, format!("request failed: {e}")))?;
        let status = response.status();
        if !status.is_success() {
            // 403: the signature expired; 5xx, 408, 429: the store's trouble.
            let transient = status.is_server_error() || matches!(status.as_u16(), 403 | 408 | 429);
            return Err(blob(transient, format!("answered {status}")));
        }
        let max = self.options.max_bytes;
        if response.content_length().is_some_and(|n| n > max) {
            return Err(blob(false, format!("larger than {max} bytes")));
        }
        let mut out = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| blob(true, format!("reading the body: {e}")))?
        {
            out.extend_from_slice(&chunk);
            if out.len() as u64 > max {
                return Err(blob(false, format!("larger than {max} bytes")));
            }
        }
        Ok(out)
    }
}

impl Pending {
    fn now(run: RunRef) -> Pending {
        Pending {
            run,
            due: Instant::now(),
            failures: 0,
        }
    }
}

/// The text of `safe-output-items.jsonl` in an artifact zip (at any depth),
/// at most `max` bytes unzipped.
pub(crate) fn manifest_from_zip(bytes: &[u8], max: u64) -> Result<Option<String>, String> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| format!("not a zip archive: {e}"))?;
    for i in 0..archive.len() {
        let file = archive
            .by_index(i)
            .map_err(|e| format!("zip entry {i}: {e}"))?;
        let Ok(path) = file.name() else {
            continue;
        };
        let name = path.rsplit(['/', '\\']).next().unwrap_or_default();
        if !file.is_file() || name != MANIFEST_FILE {
            continue;
        }
        if file.size() > max {
            return Err(format!("{MANIFEST_FILE} is over {max} bytes"));
        }
        let mut text = String::new();
        file.take(max + 1)
            .read_to_string(&mut text)
            .map_err(|e| format!("reading {MANIFEST_FILE}: {e}"))?;
        if text.len() as u64 > max {
            return Err(format!("{MANIFEST_FILE} is over {max} bytes"));
        }
        return Ok(Some(text));
    }
    Ok(None)
}

mod zip_of;
pub use zip_of::zip_of;

#[cfg(test)]
mod tests;
