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
