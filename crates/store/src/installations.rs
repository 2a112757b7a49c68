//! Typed reads of the App's installation records (`n/i/…`, written by
//! `github::installations::apply` with the inbox item that carried them), so
//! readers outside the store, like the manifest handler's OIDC owner check,
//! never scan sled themselves.

use super::{keys, Result, Store};
use safe_outcomes_model::installation::{InstallationRecord, InstallationStatus};

impl Store {
    /// Every installation record, by id.
    pub fn installation_records(&self) -> Result<Vec<InstallationRecord>> {
        self.decoded_under(keys::INSTALLATION)
    }

    /// The installation records whose status is active.
    pub fn active_installations(&self) -> Result<Vec<InstallationRecord>> {
        let mut records = self.installation_records()?;
        records.retain(|r| r.status == InstallationStatus::Active);
        Ok(records)
    }
}
