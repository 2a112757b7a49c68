//! The re-check of a read token's issuer when no session of theirs is live:
//! the App asks GitHub itself, with the token's installation token, whether
//! the issuer still has access to each repository the token was issued for
//! (`GET /repos/{owner}/{repo}/collaborators/{username}`: 204 yes, 404 no;
//! GitHub counts organization members through teams and base permissions,
//! outside collaborators and owners). That is what the token's repositories
//! were based on: the issuer's repository access in the installation
//! (`GET /user/installations/{id}/repositories` at issue time).
//!
//! The answer is kept in the store (space `Access`, under
//! `check:{installation}:{user id}`) for `RECHECK` (`AuthOptions::
//! issuer_recheck`), so GitHub is asked at
//! most that often per issuer and installation, by any replica; a change of
//! the access epoch (`access::epoch`: an offboarding webhook) makes it stale
//! at once. A GitHub that cannot answer leaves the token reading nothing
//! (a 503): never what was last seen.

use std::collections::BTreeSet;
use std::time::Duration;

use chrono::Utc;
use serde::{Deserialize, Serialize};

use super::tokens::TokenRecord;
use crate::github::client::Endpoint;
use crate::github::{GitHubClient, GitHubError};
use crate::store::{Space, Store};

/// How long an issuer's access, as the installation token found it, is
/// trusted before GitHub is asked again.
pub(crate) const RECHECK: Duration = Duration::from_secs(300);
/// The label (and GitHub operation) of the check.
const CHECK: Endpoint = Endpoint::idempotent("repos.check_collaborator");

/// What a re-check found, as stored.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Checked {
    /// The access epoch it was made under (`access::epoch`).
    epoch: u64,
    /// Of the token's repositories, those the issuer still has access to.
    repos: BTreeSet<String>,
}

/// Why an issuer could not be re-checked.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RecheckError {
    #[error("this server has no App credentials to ask GitHub with")]
    NoApp,
    #[error("GitHub could not say: {0}")]
    GitHub(GitHubError),
    #[error("the store cannot be read: {0}")]
    Store(#[from] crate::store::StoreError),
}

fn key(record: &TokenRecord) -> String {
    format!("check:{}:{}", record.installation, record.issuer_id)
}

/// How a re-check is made: with which client, trusted how long, under
/// which access epoch.
pub(crate) struct Recheck<'a> {
    pub github: Option<&'a GitHubClient>,
    /// How long an answer stands (`RECHECK` by default).
    pub every: Duration,
    pub epoch: u64,
}

/// Of `candidates` (the token's repositories still in its installation),
/// those its issuer still has access to: as checked within `how.every`
/// under the same epoch, or asked of GitHub now.
pub(crate) async fn still_accessible(
    store: &Store,
    how: &Recheck<'_>,
    record: &TokenRecord,
    candidates: &BTreeSet<String>,
) -> Result<BTreeSet<String>, RecheckError> {
    let epoch = how.epoch;
    let now = Utc::now();
    let kept = store.expiring::<Checked>(Space::Access, &key(record), now)?;
    if let Some(k) = kept.map(|k| k.value).filter(|k| k.epoch == epoch) {
        return Ok(candidates.intersection(&k.repos).cloned().collect());
    }
    let github = how.github.ok_or(RecheckError::NoApp)?;
    let mut repos = BTreeSet::new();
    for repo in candidates {
        if collaborator(github, record, repo).await? {
            repos.insert(repo.clone());
        }
    }
    tracing::info!(
        issuer = %record.issuer_login, installation = record.installation,
        kept = repos.len(), of = candidates.len(),
        "a read token's issuer re-checked with the installation token"
    );
    let checked = Checked {
        epoch,
        repos: repos.clone(),
    };
    let ttl = chrono::Duration::from_std(how.every).unwrap_or_default();
    store.put_expiring(Space::Access, &key(record), None, now + ttl, &checked)?;
    Ok(repos)
}

/// Whether the token's issuer has access to `repo`: 204 yes, 404 no.
async fn collaborator(
    github: &GitHubClient,
    record: &TokenRecord,
    repo: &str,
) -> Result<bool, RecheckError> {
    let route = format!("/repos/{repo}/collaborators/{}", record.issuer_login);
    let asked = github
        .call(record.installation, CHECK, |crab| {
            let route = route.clone();
            async move {
                let response = crab._get_with_headers(route, None).await?;
                octocrab::map_github_error(response).await.map(|_| ())
            }
        })
        .await;
    match asked {
        Ok(()) => Ok(true),
        Err(GitHubError::NotFound { .. }) => Ok(false),
        Err(e) => Err(RecheckError::GitHub(e)),
    }
}
