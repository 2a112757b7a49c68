//! Typed reads and writes of the GitHub App's bookkeeping records (check
//! runs, installations), so `github::` never sees sled or key bytes.

use serde::{Deserialize, Serialize};

use super::{decode, encode, keys, Result, Store};
use safe_outcomes_model::installation::InstallationRecord;

/// The check run made for one (PR, head sha).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckRunRecord {
    pub check_run_id: u64,
    /// Digest of the content last sent.
    pub digest: String,
}

impl Store {
    /// The check run made for one (PR, head sha).
    pub fn check_run_record(&self, pr: &str, head_sha: &str) -> Result<Option<CheckRunRecord>> {
        let key = keys::check_run(pr, head_sha);
        self.db.get(&key)?.map(|v| decode(&key, &v)).transpose()
    }

    /// Remember the check run made for one (PR, head sha).
    pub fn save_check_run_record(
        &self,
        pr: &str,
        head_sha: &str,
        record: &CheckRunRecord,
    ) -> Result<()> {
        self.db
            .insert(keys::check_run(pr, head_sha), encode(record))?;
        Ok(())
    }

    /// Forget the check run of one (PR, head sha).
    pub fn forget_check_run_record(&self, pr: &str, head_sha: &str) -> Result<()> {
        self.db.remove(keys::check_run(pr, head_sha))?;
        Ok(())
    }

    /// The installation record with this id.
    pub fn installation_record(&self, id: u64) -> Result<Option<InstallationRecord>> {
        let key = keys::installation(id);
        self.db.get(&key)?.map(|v| decode(&key, &v)).transpose()
    }

    /// The installation a repository is mapped to, whatever its status.
    pub fn installation_of_repo(&self, repo: &str) -> Result<Option<u64>> {
        Ok(self
            .db
            .get(keys::installation_repo(repo))?
            .and_then(|v| v.as_ref().try_into().ok().map(u64::from_be_bytes)))
    }

    /// Repositories mapped to an installation (scans the map: deletions are rare).
    pub fn repos_of_installation(&self, id: u64) -> Result<Vec<String>> {
        let mut repos = Vec::new();
        for item in self.db.scan_prefix(keys::INSTALLATION_REPO) {
            let (k, v) = item?;
            if v.as_ref() == id.to_be_bytes() {
                repos.extend(keys::suffix(&k, keys::INSTALLATION_REPO));
            }
        }
        Ok(repos)
    }
}
