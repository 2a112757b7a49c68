//! The signals no webhook carries: reactions, team membership, and the PR
//! that closed an issue. GitHub sends no webhook for them, so they are read
//! at the window checkpoints, for the outputs that are due and that a
//! signal could still change ([`open_to_signals`]), and handed to the worker as
//! observations (`InboxItem::Reconciled`, durable like a delivery), so that
//! evaluation stays a pure function of the record, the observations and the
//! time.
//!
//! What each output needs ([`needs`]):
//! - `create_issue`, `create_pull_request`, `create_discussion`: the item's
//!   reactions (and, for issues, the latest `ClosedEvent` and its closer),
//!   through **one GraphQL query per installation per batch** of up to
//!   [`MAX_ITEMS`] items, one alias per item. `reactions(first: 100)` gives
//!   each reaction's `createdAt` and `user`; a bot's reaction comes back with
//!   `user: null` (the field is typed `User`), which is skipped, and that is
//!   what we want: bots are never human evidence. (`reactionGroups` would
//!   name bots but has no per-reaction time.) An issue transferred away is
//!   `NOT_FOUND` there (GraphQL resolves a number in its own repository
//!   only); its reactions are then read by REST, which follows the old
//!   path's `301` to the issue's new place.
//! - `add_comment`, `comment_memory`: reactions on the comment, in the same
//!   GraphQL batch by the comment's node id (`node(id:) { ... on
//!   IssueComment { reactions } }`) when its delivery gave one; else by REST
//!   (`issues/comments/{id}/reactions`), first page of 100, as a
//!   conditional request.
//! - `add_reviewer` with team requests: for each visible non-bot who
//!   reviewed or commented and is not a requested user, and each requested
//!   team, `GET /orgs/{owner}/teams/{slug}/memberships/{login}`, conditional.
//!   A 404 ("not a member" or "team not visible") files nothing.
//!
//! Due outputs wait up to [`BATCH_WAIT`] (an hour) for others, so that the
//! outputs whose checkpoints fall near each other share one query; a
//! checkpoint's signals are filed at most that late, with GitHub's times.
//!
//! Conditional requests: every REST answer's `ETag` and `Last-Modified` are
//! kept per route (at most [`MAX_VALIDATORS`] routes; the cache is emptied
//! when full) and sent back as `If-None-Match` / `If-Modified-Since`; a 304
//! costs no rate limit and the kept answer is used. ETags are per token and
//! tokens rotate hourly, which is why `If-Modified-Since` is sent too.
//!
//! All requests go through `GitHubClient::call` (counted, retried, budgeted).
//! A failure (a GraphQL answer with `errors` for an item, a transient REST
//! failure) changes nothing: the output is kept and tried again after a
//! backoff (1 min, doubling, by the App's clock), at most [`MAX_ATTEMPTS`]
//! times per window.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use axum::http::{HeaderMap, HeaderValue, StatusCode};
use chrono::{DateTime, Utc};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};

use super::client::{Endpoint, GitHubClient};
use super::fetch::{query, Failure};
use super::installations::reading_installation;
use crate::ingest::reconcile::{observations_from_api, ApiState};
use crate::model::clock::Clock;
use crate::model::{
    EvidenceStrength, ExecutionRecord, Observation, ObservationKind as K, OutcomeRecord,
    OutcomeStatus, TargetKind,
};
use crate::store::inbox::{InboxItem, InboxWriter};
use crate::store::Store;

mod batch;

use batch::item_state;
pub use batch::{batch_query, graphql_documents};

/// Most items in one GraphQL query (GitHub's `nodes(ids:)` bound; one alias each).
pub(crate) const MAX_ITEMS: usize = 100;
/// Most routes whose validators are kept.
pub(crate) const MAX_VALIDATORS: usize = 10_000;
/// Most attempts for one output's signals in one window.
pub(crate) const MAX_ATTEMPTS: u32 = 3;
/// Wait before trying a failed read again (doubling per attempt, up to `RETRY_MAX`).
const RETRY_MIN: std::time::Duration = std::time::Duration::from_secs(60);
const RETRY_MAX: std::time::Duration = std::time::Duration::from_secs(15 * 60);
/// How long a due output waits for others to share its read (by the App's
/// clock): a checkpoint's signals are read at most this late.
pub const BATCH_WAIT: std::time::Duration = std::time::Duration::from_secs(3600);
/// How often the fetcher looks for reads that came due with nothing else to do.
const RETRY_POLL: std::time::Duration = std::time::Duration::from_secs(30);

/// An item read through GraphQL.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Item {
    pub repo: String,
    /// The issue, pull request or discussion number; a comment's id.
    pub number: u64,
    pub kind: TargetKind,
    /// A comment's GraphQL node id, by which it is read (`node(id:)`).
    pub node: Option<String>,
}

/// What one output needs read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Need {
    pub item: Option<Item>,
    /// `issues/comments/{id}/reactions` (repository-relative).
    pub rest: Vec<String>,
    /// `orgs/{org}/teams/{slug}/memberships/{login}`.
    pub memberships: Vec<String>,
}

impl Need {
    fn is_empty(&self) -> bool {
        self.item.is_none() && self.rest.is_empty() && self.memberships.is_empty()
    }
}

/// True when `record`'s type reads signals at all (before looking at its
/// observations).
pub(crate) fn wants(record: &ExecutionRecord) -> bool {
    matches!(
        record.output_type.as_str(),
        "add_comment"
            | "comment_memory"
            | "create_issue"
            | "create_pull_request"
            | "create_discussion"
            | "add_reviewer"
    ) && record.target.is_some()
}

/// True when the checkpoint of `hours` after execution is one at which
/// `record`'s signals are read ([`reading_checkpoints`]).
pub(crate) fn reads_at(record: &ExecutionRecord, hours: i64) -> bool {
    reading_checkpoints(record).contains(&hours)
}

/// The checkpoints (hours after execution) at which `record`'s signals are
/// read: the end of the window in which silence becomes `ignored` (7d for
/// issues, comments and discussions; 30d for pull requests), where a
/// reaction decides between `ignored` and engagement; 24h, 7d and 30d for
/// `add_reviewer` (the team membership of whoever acted by then: found by
/// the differential, 2026-12-06, once teams were modelled: a member's
/// comment at T+3d was never read in real time, and was by a read after
/// the fact); and, for the types read at 7d, the
/// last window (30d) again. Reactions given earlier are read then, with
/// GitHub's times: late, not lost; every window reflects them from that
/// read on. Reading at every window would cost one call per open output per
/// window, over the budget (`bench api`).
///
/// The 30d read is a rule of dating, not of thrift: a read dates only what
/// was given before it. The human check: a person looking at a comment at
/// T+30d sees the +1 given at T+12d and calls it engaged (seed 000 §5
/// "T+30d: long-term"; gh-aw §3 add_comment "reactions > 0 → accepted");
/// read only at 7d, the real-time path never saw it and called the 30d
/// window `ignored`, where a backfill or reconcile reading the same list
/// after the fact (`read_now`) dates it at T+12d and finds it (measured by
/// the differential test, CI seed, comment_memory, 2026-11-26).
pub(crate) fn reading_checkpoints(record: &ExecutionRecord) -> &'static [i64] {
    match record.output_type.as_str() {
        "create_pull_request" => &[720],
        // Membership is read for the people who reviewed or commented by
        // then: one who acts after 24h is read at 7d or 30d (a read costs a
        // call only for such a person, `memberships`).
        "add_reviewer" => &[24, 168, 720],
        _ => &[168, 720],
    }
}

/// True when a signals read now could still change `record`'s outcome:
/// none yet; the latest outcome is open to signals ([`open_status`]); or a
/// window this read is the first to see reactions for is open, and the
/// output's object is still there.
///
/// The windows a read is the first to see for: those after the reading
/// checkpoint before the one just passed. A reaction carries GitHub's time
/// and a read sees every reaction given before it, so the first read (7d
/// for issues, comments and discussions) is also the first that can find a
/// reaction given before the 1h or 24h window closed; a later read finds
/// only reactions given since the one before, which no earlier window
/// looks at. The human check: a person looking at the 1h window of a
/// discussion someone gave a heart at T+52m, and answered at T+1h29m, sees
/// the heart inside the hour (seed 000 §5 "T+1h: immediate reaction";
/// gh-aw §3 create_discussion "reactions > 0 → accepted"). Found by the
/// random differential (2026-12-06): the answer decided the latest outcome
/// before the 7d read, and the real-time path never read the heart that a
/// read after the fact dates inside the hour.
///
/// A deleted object's windows may be open, but its reactions can no longer
/// be read: it is not read for them.
pub(crate) fn open_to_signals(record: &ExecutionRecord, outcome: Option<&OutcomeRecord>) -> bool {
    let Some(o) = outcome else {
        return true;
    };
    if open_status(o.outcome_status, o.evidence_strength, &o.human_check_signal) {
        return true;
    }
    if gone(&o.human_check_signal) {
        return false;
    }
    let seen_before = previous_reading(record, o.evaluated_at);
    o.windows.iter().any(|(name, w)| {
        checkpoint_hours(name).is_some_and(|h| h > seen_before)
            && open_status(w.outcome_status, w.evidence_strength, &w.human_check_signal)
    })
}

/// The hours of the reading checkpoint before the latest one passed by
/// `at` (0 when at most one has passed): reactions given before it were
/// seen by the read there, or could change nothing then.
fn previous_reading(record: &ExecutionRecord, at: DateTime<Utc>) -> i64 {
    let elapsed = at - record.executed_at;
    let passed: Vec<i64> = reading_checkpoints(record)
        .iter()
        .copied()
        .filter(|h| chrono::Duration::hours(*h) <= elapsed)
        .collect();
    passed.iter().rev().nth(1).copied().unwrap_or(0)
}

fn checkpoint_hours(name: &str) -> Option<i64> {
    crate::model::CHECKPOINTS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, h)| *h)
}

/// The output's own object is gone: nothing of it can be read.
fn gone(signal: &str) -> bool {
    use crate::model::Signal;
    [Signal::Deleted, Signal::CommentDeleted]
        .iter()
        .any(|s| s.as_str() == signal)
}

/// An outcome a signal could still change: `pending`, `unknown`, or
/// `ignored` (silence, or a close by automation, which a reaction or a
/// merged closing PR overrides); rejected by a negative reaction alone (a
/// person's positive reaction outweighs it); or accepted only on the word
/// of actors nobody can see (`accepted/weak/acted_on`: a reaction count
/// read early, before the reactor list that dates and names each reaction).
/// Other accepted and rejected outcomes are not read.
fn open_status(status: OutcomeStatus, strength: EvidenceStrength, signal: &str) -> bool {
    match status {
        OutcomeStatus::Pending | OutcomeStatus::Unknown | OutcomeStatus::Ignored => true,
        OutcomeStatus::Rejected => signal == crate::model::Signal::ReactedNegatively.as_str(),
        OutcomeStatus::Accepted => {
            strength == EvidenceStrength::Weak && signal == crate::model::Signal::ActedOn.as_str()
        }
        _ => false,
    }
}

/// What `record` needs read, given what is known of it.
pub(crate) fn needs(record: &ExecutionRecord, observations: &[Observation]) -> Need {
    let mut need = Need::default();
    let Some(t) = record.target.as_ref() else {
        return need;
    };
    let item = |kind| {
        t.number.map(|number| Item {
            repo: t.repo.clone(),
            number,
            kind,
            node: None,
        })
    };
    match (record.output_type.as_str(), t.kind) {
        // Read in the batch by its node id when the comment's delivery
        // gave it; by REST otherwise (a record from a manifest alone).
        ("add_comment" | "comment_memory", TargetKind::Comment) => match (t.id, &t.node_id) {
            (Some(id), Some(node)) => {
                need.item = Some(Item {
                    repo: t.repo.clone(),
                    number: id,
                    kind: TargetKind::Comment,
                    node: Some(node.clone()),
                })
            }
            (id, _) => need
                .rest
                .extend(id.map(|id| format!("issues/comments/{id}/reactions"))),
        },
        ("create_issue", TargetKind::Issue)
        | ("create_pull_request", TargetKind::PullRequest)
        | ("create_discussion", TargetKind::Discussion) => need.item = item(t.kind),
        ("add_reviewer", _) => need.memberships = memberships(record, observations),
        _ => {}
    }
    need
}

/// The membership routes worth asking for an `add_reviewer` output: each
/// requested team × each visible non-bot (not the workflow's actor) who
/// reviewed or commented after execution and is not a requested user.
fn memberships(record: &ExecutionRecord, observations: &[Observation]) -> Vec<String> {
    let list = |names: &[&str]| {
        names
            .iter()
            .map(|n| record.field_list(n))
            .find(|l| !l.is_empty())
            .unwrap_or_default()
    };
    let users: BTreeSet<String> = list(&["requested_reviewers", "reviewers"])
        .iter()
        .map(|u| u.trim().trim_start_matches('@').to_ascii_lowercase())
        .collect();
    let teams: BTreeSet<String> = list(&["requested_team_reviewers", "team_reviewers"])
        .iter()
        .map(|t| {
            let t = t.trim().trim_start_matches('@');
            t.rsplit('/').next().unwrap_or(t).to_ascii_lowercase()
        })
        .filter(|t| !t.is_empty())
        .collect();
    let org = record
        .target
        .as_ref()
        .map_or(record.repo.as_str(), |t| t.repo.as_str())
        .split('/')
        .next()
        .unwrap_or_default()
        .to_string();
    let reviewers: BTreeSet<String> = observations
        .iter()
        .filter(|o| o.at >= record.executed_at)
        .filter(|o| {
            matches!(
                o.event,
                K::ReviewSubmitted { .. }
                    | K::CommentCreated { .. }
                    | K::ReviewCommentCreated { .. }
            )
        })
        .filter_map(|o| o.actor.as_ref())
        .filter(|a| {
            a.classify(record.actor.as_deref()) == crate::model::ActorClass::VisibleNonBotActor
        })
        .map(|a| a.login.clone())
        .filter(|l| !users.contains(&l.to_ascii_lowercase()))
        .collect();
    let mut out = Vec::new();
    for team in &teams {
        for login in &reviewers {
            out.push(format!("orgs/{org}/teams/{team}/memberships/{login}"));
        }
    }
    out
}

pub(crate) enum SignalsMsg {
    /// These outputs reached a checkpoint: read what they need.
    Due(Vec<String>),
    /// Read what is ready now (see `ready`); reply when done.
    Flush(oneshot::Sender<()>),
}

/// The worker's side: hand over the outputs a checkpoint made due.
#[derive(Clone, Debug)]
pub struct SignalRequests(mpsc::UnboundedSender<SignalsMsg>);

impl SignalRequests {
    /// False when the fetcher has stopped.
    pub(crate) fn due(&self, ids: Vec<String>) -> bool {
        self.0.send(SignalsMsg::Due(ids)).is_ok()
    }
}

/// The fetcher's end of the channel.
pub(crate) struct SignalsInbox(mpsc::UnboundedReceiver<SignalsMsg>);

pub(crate) fn channel() -> (SignalRequests, SignalsInbox) {
    let (tx, rx) = mpsc::unbounded_channel();
    (SignalRequests(tx), SignalsInbox(rx))
}

/// A running fetcher.
pub struct SignalsHandle {
    tx: mpsc::UnboundedSender<SignalsMsg>,
    task: tokio::task::JoinHandle<()>,
}

impl SignalsHandle {
    /// Read what is ready now; returns when done (tests, benches).
    pub async fn flush(&self) {
        let (reply, rx) = oneshot::channel();
        if self.tx.send(SignalsMsg::Flush(reply)).is_ok() {
            let _ = rx.await;
        }
    }

    pub async fn stop(self) {
        self.task.abort();
        let _ = self.task.await;
    }
}

/// A REST answer kept for conditional requests.
#[derive(Debug, Clone)]
struct Kept {
    etag: Option<String>,
    last_modified: Option<String>,
    value: Value,
}

pub(crate) struct SignalFetcher {
    store: Store,
    clock: Clock,
    client: Arc<GitHubClient>,
    writer: InboxWriter,
    kept: Mutex<HashMap<String, Kept>>,
}

/// Why an output's signals were not all read.
#[derive(Debug)]
struct Unread(String);

impl SignalFetcher {
    pub(crate) fn new(
        store: Store,
        clock: Clock,
        client: Arc<GitHubClient>,
        writer: InboxWriter,
    ) -> SignalFetcher {
        SignalFetcher {
            store,
            clock,
            client,
            writer,
            kept: Mutex::new(HashMap::new()),
        }
    }

    /// Run on a tokio task. `requests` must be the sender paired with `inbox`.
    pub(crate) fn spawn(self, requests: &SignalRequests, inbox: SignalsInbox) -> SignalsHandle {
        let tx = requests.0.clone();
        let task = tokio::spawn(self.run(inbox.0));
        SignalsHandle { tx, task }
    }

    async fn run(self, mut rx: mpsc::UnboundedReceiver<SignalsMsg>) {
        // Outputs whose last read failed: attempts so far, and when to try again.
        let mut retry: BTreeMap<String, (u32, DateTime<Utc>)> = BTreeMap::new();
        // Outputs due and not read yet, with when they came due.
        let mut waiting: BTreeMap<String, DateTime<Utc>> = BTreeMap::new();
        loop {
            let msg = tokio::select! {
                m = rx.recv() => match m {
                    Some(m) => Some(m),
                    None => break,
                },
                _ = tokio::time::sleep(RETRY_POLL) => None,
            };
            let now = self.clock.now();
            let mut replies = Vec::new();
            let mut take = |m: SignalsMsg| match m {
                SignalsMsg::Due(ids) => {
                    for id in ids {
                        waiting.entry(id).or_insert(now);
                    }
                }
                SignalsMsg::Flush(r) => replies.push(r),
            };
            if let Some(m) = msg {
                take(m);
            }
            while let Ok(m) = rx.try_recv() {
                take(m);
            }
            let batch = ready(&mut waiting, &mut retry, now);
            for (id, attempts) in self.read_batch(batch).await {
                if attempts < MAX_ATTEMPTS {
                    let wait = crate::github::retry::doubling(RETRY_MIN, RETRY_MAX, attempts);
                    let due = now + chrono::Duration::from_std(wait).unwrap_or_default();
                    retry.insert(id, (attempts, due));
                } else {
                    tracing::warn!(output = %id, attempts, "signals not read; giving up until the next window");
                }
            }
            for r in replies {
                let _ = r.send(());
            }
        }
    }

    /// Read the signals of `batch` (id → failed attempts so far). Returns the
    /// outputs to try again, with their attempts.
    pub(crate) async fn read_batch(&self, batch: BTreeMap<String, u32>) -> Vec<(String, u32)> {
        let mut by_installation: BTreeMap<u64, Vec<(ExecutionRecord, Need)>> = BTreeMap::new();
        for id in batch.keys() {
            match self.prepare(id) {
                Ok(Some((installation, record, need))) => {
                    by_installation
                        .entry(installation)
                        .or_default()
                        .push((record, need));
                }
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(output = %id, error = %e, "signals: cannot read the output")
                }
            }
        }
        let mut again = Vec::new();
        for (installation, outputs) in by_installation {
            for chunk in outputs.chunks(MAX_ITEMS) {
                for (id, why) in self.read_chunk(installation, chunk).await {
                    let attempts = batch.get(&id).copied().unwrap_or(0) + 1;
                    tracing::debug!(output = %id, attempts, reason = %why.0, "signals read failed");
                    again.push((id, attempts));
                }
            }
        }
        again
    }

    /// The output, its installation and its needs, when it is unresolved
    /// and needs anything.
    fn prepare(&self, id: &str) -> crate::store::Result<Option<(u64, ExecutionRecord, Need)>> {
        let id = self.store.canonical_id(id)?;
        let Some(stored) = self.store.output(&id)? else {
            return Ok(None);
        };
        let record = stored.execution;
        if !open_to_signals(&record, stored.outcome.as_ref()) || !wants(&record) {
            return Ok(None);
        }
        let observations = self.store.observations(&record.watch_keys())?;
        let need = needs(&record, &observations);
        if need.is_empty() {
            return Ok(None);
        }
        // An output outside its own installation (the tenancy rule) is
        // never read for (the reconciler counts it).
        let installation = reading_installation(&self.store, &record)?.ok().flatten();
        Ok(installation.map(|i| (i, record, need)))
    }

    /// One GraphQL query for the chunk's items, then the REST reads; each
    /// output's findings go to the worker. Returns the outputs not fully read.
    async fn read_chunk(
        &self,
        installation: u64,
        chunk: &[(ExecutionRecord, Need)],
    ) -> Vec<(String, Unread)> {
        let items: Vec<&Item> = chunk.iter().filter_map(|(_, n)| n.item.as_ref()).collect();
        let answers = if items.is_empty() {
            Ok(Value::Null)
        } else {
            query(&self.client, installation, &batch_query(&items), json!({})).await
        };
        let mut failed = Vec::new();
        for (record, need) in chunk {
            let mut state = ApiState::default();
            let read = self
                .read_one(installation, record, need, &answers, &items, &mut state)
                .await;
            let fetched_at = self.clock.now();
            let observations = observations_from_api(record, &state);
            if !observations.is_empty() {
                let item = InboxItem::Reconciled {
                    output_id: record.id.clone(),
                    fetched_at,
                    observations,
                    failure: None,
                };
                if let Err(e) = self.writer.enqueue(item).await {
                    failed.push((record.id.clone(), Unread(format!("inbox: {e}"))));
                    continue;
                }
            }
            if let Err(why) = read {
                failed.push((record.id.clone(), why));
            }
        }
        failed
    }

    /// Fill `state` with one output's findings.
    async fn read_one(
        &self,
        installation: u64,
        record: &ExecutionRecord,
        need: &Need,
        answers: &Result<Value, Failure>,
        items: &[&Item],
        state: &mut ApiState,
    ) -> Result<(), Unread> {
        let reader = Conditional(self, installation);
        read_need(
            &reader,
            record,
            need,
            answers,
            items,
            state,
            self.clock.now(),
        )
        .await
    }

    /// `conditional_get_once`, following GitHub's redirects (a renamed
    /// repository's old name) up to `fetch::MAX_REDIRECTS` hops.
    async fn conditional_get(
        &self,
        installation: u64,
        label: &'static str,
        route: &str,
    ) -> Result<Value, Failure> {
        let mut route = route.to_string();
        for _ in 0..=super::fetch::MAX_REDIRECTS {
            match self
                .conditional_get_once(installation, label, &route)
                .await?
            {
                Ok(value) => return Ok(value),
                Err(to) => route = to,
            }
        }
        Err(super::fetch::too_many_redirects(&route))
    }

    /// One conditional GET: the answer, or (`Err`) where a redirect sends it.
    async fn conditional_get_once(
        &self,
        installation: u64,
        label: &'static str,
        route: &str,
    ) -> Result<Result<Value, String>, Failure> {
        let kept = self
            .kept
            .lock()
            .expect("validators lock")
            .get(route)
            .cloned();
        let mut headers = HeaderMap::new();
        if let Some(k) = &kept {
            let mut put = |name: &'static str, v: &Option<String>| {
                if let Some(v) = v.as_deref().and_then(|v| HeaderValue::from_str(v).ok()) {
                    headers.insert(name, v);
                }
            };
            put("if-none-match", &k.etag);
            put("if-modified-since", &k.last_modified);
        }
        let (status, etag, last_modified, body) = self
            .client
            .call(installation, Endpoint::idempotent(label), |crab| {
                let (route, headers) = (route.to_string(), headers.clone());
                async move {
                    let response = crab._get_with_headers(route, Some(headers)).await?;
                    if response.status() == StatusCode::NOT_MODIFIED {
                        return Ok((304, None, None, Vec::new()));
                    }
                    let location = response
                        .headers()
                        .get(axum::http::header::LOCATION)
                        .and_then(|v| v.to_str().ok());
                    let status = response.status().as_u16();
                    if let Some(to) = super::fetch::redirect_of(status, location) {
                        return Ok((301, Some(to), None, Vec::new()));
                    }
                    let response = octocrab::map_github_error(response).await?;
                    let header = |n: &str| {
                        response
                            .headers()
                            .get(n)
                            .and_then(|v| v.to_str().ok())
                            .map(str::to_string)
                    };
                    let (etag, modified) = (header("etag"), header("last-modified"));
                    let body = response.into_body().collect().await?.to_bytes().to_vec();
                    Ok((200u16, etag, modified, body))
                }
            })
            .await
            .map_err(Failure::from)?;
        if status == 301 {
            if let Some(to) = etag {
                return Ok(Err(to));
            }
        }
        if status == 304 {
            if let Some(k) = kept {
                return Ok(Ok(k.value));
            }
        }
        let value: Value = serde_json::from_slice(&body).map_err(|e| Failure {
            status: 502,
            message: format!("{route}: unreadable answer: {e}"),
            retry_at: None,
        })?;
        let mut kept = self.kept.lock().expect("validators lock");
        if kept.len() >= MAX_VALIDATORS {
            kept.clear();
        }
        if etag.is_some() || last_modified.is_some() {
            kept.insert(
                route.to_string(),
                Kept {
                    etag,
                    last_modified,
                    value: value.clone(),
                },
            );
        }
        Ok(Ok(value))
    }
}

/// What to read now: the retries that came due, and every waiting output
/// once the oldest has waited [`BATCH_WAIT`] (or [`MAX_ITEMS`] are waiting),
/// so that outputs due at nearby times share one query.
/// How the reads of one need are made: conditionally (the fetcher, with its
/// validators) or plainly (an evaluation from the API, `read_now`).
trait Reader {
    async fn get(&self, label: &'static str, route: &str) -> Result<Value, Failure>;
}

struct Conditional<'a>(&'a SignalFetcher, u64);

impl Reader for Conditional<'_> {
    async fn get(&self, label: &'static str, route: &str) -> Result<Value, Failure> {
        self.0.conditional_get(self.1, label, route).await
    }
}

struct Plain<'a>(&'a GitHubClient, u64);

impl Reader for Plain<'_> {
    async fn get(&self, label: &'static str, route: &str) -> Result<Value, Failure> {
        super::fetch::get_following(self.0, self.1, label, route).await
    }
}

/// Fill `state` with what `need` reads: the item's part of the batch
/// answer, then the REST reactions and team memberships through `reader`.
async fn read_need(
    reader: &impl Reader,
    record: &ExecutionRecord,
    need: &Need,
    answers: &Result<Value, Failure>,
    items: &[&Item],
    state: &mut ApiState,
    now: DateTime<Utc>,
) -> Result<(), Unread> {
    state.read_at = Some(now);
    let mut result = Ok(());
    if let Some(item) = &need.item {
        let alias = items
            .iter()
            .position(|i| *i == item)
            .map(|i| format!("s{i}"));
        match (answers, alias) {
            (Ok(data), Some(alias)) => {
                if let Err(e) = item_state(item, data, &alias, state) {
                    if moved_reactions(reader, item, data, &alias, state)
                        .await
                        .is_none()
                    {
                        result = Err(e);
                    }
                }
            }
            (Err(f), _) => result = Err(Unread(f.message.clone())),
            (Ok(_), None) => {}
        }
    }
    let (owner, name) = record
        .target
        .as_ref()
        .map_or(record.repo.as_str(), |t| t.repo.as_str())
        .split_once('/')
        .unwrap_or_default();
    for path in &need.rest {
        let route = format!("/repos/{owner}/{name}/{path}?per_page=100");
        match reader.get("reactions.list", &route).await {
            Ok(v) => {
                state.responses.insert(path.clone(), v);
            }
            Err(f) if f.status == 404 => {}
            Err(f) => result = Err(Unread(f.message)),
        }
    }
    for path in &need.memberships {
        let route = format!("/{path}");
        match reader.get("teams.get_membership", &route).await {
            Ok(mut v) => {
                if let Some(o) = v.as_object_mut() {
                    o.insert("_fetched_at".into(), json!(now));
                }
                state.responses.insert(path.clone(), v);
            }
            // Not a member, or not visible: unknown (nothing filed).
            Err(f) if f.status == 404 => {
                state.errors.insert(path.clone(), 404);
            }
            Err(f) => result = Err(Unread(f.message)),
        }
    }
    result
}

/// An issue or PR GraphQL cannot find under its number (`NOT_FOUND`: it was
/// transferred, and GraphQL resolves a number in its own repository only)
/// has its reactions read by REST, which answers a transferred issue's paths
/// `301` with its new place (followed by `reader`): the issue moves with its
/// reactions, and a person's reaction before the move still answers the
/// output. `Some` once read; `None` when this is not such an item or
/// REST cannot find it either (deleted: the batch's error stands).
async fn moved_reactions(
    reader: &impl Reader,
    item: &Item,
    data: &Value,
    alias: &str,
    state: &mut ApiState,
) -> Option<()> {
    if item.kind == TargetKind::Discussion || !batch::not_found(data, alias) {
        return None;
    }
    let n = item.number;
    let path = match item.kind {
        // A comment GraphQL cannot resolve is read as REST reads it (a 404
        // there, a deleted comment, files nothing).
        TargetKind::Comment => format!("issues/comments/{n}/reactions"),
        _ => format!("issues/{n}/reactions"),
    };
    let route = format!("/repos/{}/{path}?per_page=100", item.repo);
    match reader.get("reactions.list", &route).await {
        Ok(listed) => {
            state.responses.insert(path, listed);
        }
        Err(f) if f.status == 404 && item.kind == TargetKind::Comment => {}
        Err(_) => return None,
    }
    Some(())
}

/// The signals `record` needs, read now for an evaluation from the API
/// (a backfilled or reconciled output: its past windows need the reactions
/// and memberships the checkpoint reads would have read). Read exactly when
/// the fetcher would have: the output's reading checkpoint has passed and,
/// judged from `observations` at that checkpoint, a signal could still
/// change it ([`open_to_signals`]). The answers, to be mapped with the state
/// they complete (a rollup read with a reactor list counts only what the
/// list does not show); empty when nothing was due; `Err` when a read failed.
pub(crate) async fn read_now(
    client: &GitHubClient,
    installation: u64,
    record: &ExecutionRecord,
    observations: &[Observation],
    now: DateTime<Utc>,
) -> Result<ApiState, String> {
    if !wants(record) {
        return Ok(ApiState::default());
    }
    if !read_due(record, observations, now) {
        // Not yet, or nothing a read could change.
        return Ok(ApiState::default());
    }
    let need = needs(record, observations);
    if need.is_empty() {
        return Ok(ApiState::default());
    }
    let items: Vec<&Item> = need.item.iter().collect();
    let answers = if items.is_empty() {
        Ok(Value::Null)
    } else {
        query(client, installation, &batch_query(&items), json!({})).await
    };
    let mut state = ApiState::default();
    let reader = Plain(client, installation);
    read_need(&reader, record, &need, &answers, &items, &mut state, now)
        .await
        .map_err(|e| e.0)?;
    Ok(state)
}

/// True when the fetcher would have read `record`'s signals by `now`: at
/// one of its reading checkpoints passed, judged from `observations` then,
/// a signal could still change the outcome or a window that read is the
/// first to see for ([`open_to_signals`]). (Made at once after the fact,
/// the reads see what the fetcher's would have, and more only after the
/// last checkpoint, where no window looks.)
pub(crate) fn read_due(
    record: &ExecutionRecord,
    observations: &[Observation],
    now: DateTime<Utc>,
) -> bool {
    let due = |hours: i64| {
        crate::model::sane_time::plus(record.executed_at, chrono::Duration::hours(hours))
    };
    let open_at = |hours: i64| {
        let then = crate::judge::evaluate::evaluate(record, observations, due(hours));
        (
            open_status(then.status, then.strength, then.signal.as_str()),
            gone(then.signal.as_str()),
        )
    };
    let mut seen_before = 0;
    for &hours in reading_checkpoints(record) {
        if due(hours) > now {
            break;
        }
        let (open, gone) = open_at(hours);
        if open {
            return true;
        }
        let earlier_open = !gone
            && crate::model::CHECKPOINTS
                .iter()
                .filter(|(_, h)| *h > seen_before && *h < hours)
                .any(|(_, h)| open_at(*h).0);
        if earlier_open {
            return true;
        }
        seen_before = hours;
    }
    false
}

fn ready(
    waiting: &mut BTreeMap<String, DateTime<Utc>>,
    retry: &mut BTreeMap<String, (u32, DateTime<Utc>)>,
    now: DateTime<Utc>,
) -> BTreeMap<String, u32> {
    let mut batch = BTreeMap::new();
    retry.retain(|id, (attempts, due)| {
        let keep = *due > now;
        if !keep {
            batch.insert(id.clone(), *attempts);
        }
        keep
    });
    let oldest = waiting.values().min().copied();
    let wait = chrono::Duration::from_std(BATCH_WAIT).unwrap_or_default();
    if oldest.is_some_and(|t| now - t >= wait) || waiting.len() >= MAX_ITEMS {
        for id in std::mem::take(waiting).into_keys() {
            batch.entry(id).or_insert(0);
        }
    }
    batch
}

#[cfg(test)]
mod tests;
