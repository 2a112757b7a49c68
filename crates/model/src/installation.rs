//! What the App knows of its installations: the change a delivery reports
//! (inbox data) and the record kept per installation (`github::installations`
//! applies the one to the other). Plain data, below the store that keeps it.

use serde::{Deserialize, Serialize};

/// What a delivery says about an installation (inbox data, see `InboxItem`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstallationChange {
    pub installation_id: u64,
    pub action: InstallationAction,
    /// The account (user or org login) the App is installed on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// The account's id (it survives renames of the login).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_id: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repos_added: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repos_removed: Vec<String>,
    /// GitHub's id of the delivery's repository (`repository.id`): it
    /// survives renames and transfers, so the names a repository had are
    /// tied by it (`RepoRenamed`); absent in items stored before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo_id: Option<u64>,
    /// `RepoRenamed`: the repository's full name before the rename or
    /// transfer (its new name is `repos_added`'s one entry); `OwnerRenamed`:
    /// the owner's login before (its login now is `account`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renamed_from: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InstallationAction {
    Created,
    Deleted,
    Suspend,
    Unsuspend,
    NewPermissionsAccepted,
    /// `installation_repositories.added`
    ReposAdded,
    /// `installation_repositories.removed`
    ReposRemoved,
    /// Any other delivery from a repository, naming its installation.
    Seen,
    /// `repository.renamed` or `repository.transferred`: the repository
    /// (`repo_id`, now `repos_added`'s name) was `renamed_from` before.
    RepoRenamed,
    /// `organization.renamed`: the installation's owner (now `account`)
    /// was `renamed_from`, and every repository of it with it.
    OwnerRenamed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InstallationStatus {
    Active,
    Suspended,
    Deleted,
}

/// One installation of the App.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstallationRecord {
    pub id: u64,
    pub account: Option<String>,
    pub status: InstallationStatus,
    /// The account's id; absent in records filed before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_id: Option<u64>,
}
