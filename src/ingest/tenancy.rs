//! The tenancy rule (`model::tenancy`) bound to what the store knows of the
//! App's installations, and the counts of what it refused.
//!
//! Where it is applied (docs/auth.md, "Tenancy"):
//! - every manifest line, posted or harvested, before it is staged
//!   (`ingress::manifest_stream`, with the run's repository as anchor): a
//!   refused line is listed in the answer with its reason, nothing of it is
//!   stored;
//! - every output the worker registers (`app::worker`'s `upsert_output`,
//!   whatever brought it: webhook discovery, a manifest chunk, an item
//!   stored before this rule): a refused output is not stored;
//! - every fact a webhook delivery files (`http::webhook`, `check_key`):
//!   one under a repository outside the delivery's installation is dropped;
//! - every read of GitHub for an output (`github::installations::reading_installation`:
//!   reconciler, backfill, signals) and every observation a reconcile brings
//!   back (`within_reach`).
//!
//! Each refusal is counted by where and why (`TenancyStats`, on `/status`
//! and `/metrics`, without repository names) and logged with them.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use crate::model::tenancy::{self, Refusal};
use crate::model::ExecutionRecord;
use crate::store::{Store, StoreError};

/// Check `record` against the installation of `run_repo` as the store knows it.
pub fn check(
    store: &Store,
    run_repo: &str,
    record: &ExecutionRecord,
) -> Result<Result<(), Refusal>, StoreError> {
    tenancy::check(run_repo, record, |repo| store.installation_of_repo(repo))
}

/// Check an output on its own: anchored to its own repository, the run's
/// as far as a stored record knows (registration, and every reader of a
/// stored output: reads of GitHub, the check run, line attribution).
pub(crate) fn check_output(
    store: &Store,
    record: &ExecutionRecord,
) -> Result<Result<(), Refusal>, StoreError> {
    check(store, &record.repo, record)
}

/// May a delivery from `repo` file a fact under `key`? Only within `repo`'s
/// installation (a sub-issue of another repository is a fact about that
/// repository: it is kept only when the same installation covers it).
pub(crate) fn check_key(
    store: &Store,
    repo: &str,
    key: &str,
) -> Result<Result<(), Refusal>, StoreError> {
    let part = std::iter::once((tenancy::Part::Target, crate::model::ids::repo_of_key(key)));
    tenancy::check_parts(repo, part, |r| store.installation_of_repo(r))
}

/// True when an observation filed under `key` (`{repo}#…`) lies in one of
/// the repositories `record` reads: what a read for an output brings back
/// may be filed for it only there.
pub(crate) fn within_reach(record: &ExecutionRecord, key: &str) -> bool {
    let repo = crate::model::ids::repo_of_key(key);
    tenancy::parts(record).any(|(_, mine)| tenancy::same(mine, repo))
}

/// Installation lookups one manifest remembers, at most (its lines name
/// few repositories; past this each lookup is a store read again).
const REMEMBERED: usize = 256;

/// The rule for the lines of one manifest: the run's repository (`None`:
/// each line's own) and the lookups already made.
pub(crate) struct ManifestTenancy {
    store: Store,
    run_repo: Option<String>,
    known: HashMap<String, Option<u64>>,
}

impl ManifestTenancy {
    pub fn new(store: &Store, run_repo: Option<String>) -> ManifestTenancy {
        ManifestTenancy {
            store: store.clone(),
            run_repo,
            known: HashMap::new(),
        }
    }

    pub fn check(&mut self, record: &ExecutionRecord) -> Result<Result<(), Refusal>, StoreError> {
        let run_repo = self.run_repo.as_deref().unwrap_or(&record.repo);
        let (store, known) = (&self.store, &mut self.known);
        tenancy::check(run_repo, record, |repo| {
            let key = repo.to_ascii_lowercase();
            if let Some(found) = known.get(&key) {
                return Ok(*found);
            }
            let found = store.installation_of_repo(repo)?;
            if known.len() < REMEMBERED {
                known.insert(key, found);
            }
            Ok(found)
        })
    }
}

/// Where an output (or a line, or a read) was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Where {
    /// A fact a webhook delivery would file under another installation's
    /// repository (`http::webhook`).
    Webhook,
    /// A line of a posted manifest (`POST /api/v1/manifests`).
    Manifest,
    /// A line of a harvested manifest artifact (webhook-fed or backfill).
    Harvest,
    /// An output the worker was about to register.
    Registration,
    /// A read of GitHub for a stored output, or what it brought back.
    Reconcile,
}

impl Where {
    pub fn as_str(self) -> &'static str {
        match self {
            Where::Webhook => "webhook",
            Where::Manifest => "manifest",
            Where::Harvest => "harvest",
            Where::Registration => "registration",
            Where::Reconcile => "reconcile",
        }
    }
}

/// Refusals by where and why (`Refusal::kind`). Shared by the handlers, the
/// worker and the GitHub tasks (`app::state::Shared::tenancy`).
#[derive(Debug, Default)]
pub struct TenancyStats {
    counts: Mutex<BTreeMap<(Where, &'static str), u64>>,
}

impl TenancyStats {
    /// Count a refusal and log it with its reason (which names repositories:
    /// the log is the operator's).
    pub fn refused(&self, at: Where, subject: &str, refusal: &Refusal) {
        tracing::warn!(at = at.as_str(), %subject, reason = %refusal, "refused: outside the output's installation");
        self.add(at, refusal.kind(), 1);
    }

    pub fn add(&self, at: Where, kind: &'static str, n: u64) {
        if n > 0 {
            *self
                .counts
                .lock()
                .expect("tenancy stats lock")
                .entry((at, kind))
                .or_default() += n;
        }
    }

    /// `(where, why, count)` for every count so far.
    pub fn rows(&self) -> Vec<(&'static str, &'static str, u64)> {
        self.counts
            .lock()
            .expect("tenancy stats lock")
            .iter()
            .map(|((at, kind), n)| (at.as_str(), *kind, *n))
            .collect()
    }

    pub fn total(&self) -> u64 {
        self.rows().iter().map(|(_, _, n)| n).sum()
    }
}
