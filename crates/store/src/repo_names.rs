//! The names of renamed repositories, per installation (`n/a/`, `n/m/`).
//!
//! Outputs and observations are keyed by a repository's full name
//! (`owner/name#n`). GitHub keeps a renamed or transferred repository's id,
//! so a rename (`repository.renamed`/`transferred`, filed by
//! `github::installations`) ties its names together by that id: the name
//! its outputs are keyed by (`n/a/`: installation, repository id → name,
//! the name before the first rename seen, kept through every later one)
//! and each later name it was seen under (`n/m/`: installation, name →
//! repository id, dropped when the repository leaves the name, so that a
//! repository that takes the name later is not mistaken for it). An owner
//! renamed (`organization.renamed`) renames every repository of it at once,
//! with no repository ids: its later login leads to the login its
//! repositories' outputs are keyed by (`n/o/`: installation, login now →
//! login before its first rename seen). Nothing here crosses
//! installations: every key starts with the installation id.

use super::{keys, ExternalBatch, Result, Store};

impl ExternalBatch {
    /// Key the outputs of repository `repo_id` of `installation` by `name`.
    pub fn key_repo_by(&mut self, installation: u64, repo_id: u64, name: &str) {
        self.0.insert(
            keys::repo_keyed_name(installation, repo_id),
            name.as_bytes(),
        );
    }

    /// `name` is now the name of repository `repo_id` (renamed).
    pub fn note_later_name(&mut self, installation: u64, name: &str, repo_id: u64) {
        self.0.insert(
            keys::repo_later_name(installation, name),
            repo_id.to_be_bytes(),
        );
    }

    /// `name` is no longer a later name of a renamed repository.
    pub fn forget_later_name(&mut self, installation: u64, name: &str) {
        self.0.remove(keys::repo_later_name(installation, name));
    }

    /// The repositories of owner `now` are keyed under owner `keyed`
    /// (renamed from it); `None`: under `now` itself again.
    pub fn key_owner_by(&mut self, installation: u64, now: &str, keyed: Option<&str>) {
        let key = keys::owner_keyed_name(installation, now);
        match keyed {
            Some(keyed) => {
                self.0.insert(key, keyed.as_bytes());
            }
            None => {
                self.0.remove(key);
            }
        }
    }
}

impl Store {
    /// The name the outputs of repository `repo_id` are keyed by, when it
    /// was renamed within `installation`.
    pub fn repo_keyed_name(&self, installation: u64, repo_id: u64) -> Result<Option<String>> {
        Ok(self
            .db
            .get(keys::repo_keyed_name(installation, repo_id))?
            .and_then(|v| String::from_utf8(v.as_ref().to_vec()).ok()))
    }

    /// The login the repositories of owner `now` are keyed under, when the
    /// owner was renamed.
    pub fn owner_keyed_name(&self, installation: u64, now: &str) -> Result<Option<String>> {
        Ok(self
            .db
            .get(keys::owner_keyed_name(installation, now))?
            .and_then(|v| String::from_utf8(v.as_ref().to_vec()).ok()))
    }

    /// The repository id a later name of a renamed repository stands for.
    pub fn repo_of_later_name(&self, installation: u64, name: &str) -> Result<Option<u64>> {
        Ok(self
            .db
            .get(keys::repo_later_name(installation, name))?
            .and_then(|v| v.as_ref().try_into().ok().map(u64::from_be_bytes)))
    }

    /// The name outputs are keyed by for a repository `installation` names
    /// `name` now (a manifest line's, with no repository id): the name
    /// before its renames, or `None` when it was not renamed.
    pub fn keyed_name_of(&self, installation: u64, name: &str) -> Result<Option<String>> {
        match self.repo_of_later_name(installation, name)? {
            Some(id) => self.repo_keyed_name(installation, id),
            None => Ok(None),
        }
    }
}
