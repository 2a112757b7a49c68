//! What the inbox stores: one unit of work (a delivery, a manifest post, a
//! reconcile's findings). Its own file so that the codec that encodes it and
//! the inbox that writes it both stand above it.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use safe_outcomes_model::installation::InstallationChange;
use safe_outcomes_model::{ExecutionRecord, Observation};

/// A unit of work, stored before it is acknowledged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "item", rename_all = "snake_case")]
pub enum InboxItem {
    /// A webhook delivery, already normalized (a few hundred bytes, not the raw body).
    Delivery {
        delivery_id: String,
        event: String,
        action: Option<String>,
        received_at: DateTime<Utc>,
        observations: Vec<Observation>,
        discoveries: Vec<ExecutionRecord>,
        /// Installation bookkeeping (`github::installations`); absent in
        /// items stored before it existed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        installation_change: Option<InstallationChange>,
    },
    /// The accepted lines of one manifest post.
    Manifest {
        /// Digest of the post, so a repeated post is a duplicate.
        key: String,
        received_at: DateTime<Utc>,
        records: Vec<ExecutionRecord>,
    },
    /// A manifest post whose records were streamed into chunks
    /// (`store::staging`): the worker applies them one chunk at a time.
    ManifestChunks {
        /// Digest of the post, so a repeated post is a duplicate.
        key: String,
        received_at: DateTime<Utc>,
        upload: u64,
        chunks: u32,
    },
    /// What reconciling one output from the GitHub API found
    /// (`github::reconciler`): observations of the kinds webhooks give, or
    /// why the attempt failed (filed as `ObservationKind::ReconcileFailed`).
    Reconciled {
        output_id: String,
        /// When the fetch ended; the time of a failure.
        fetched_at: DateTime<Utc>,
        observations: Vec<Observation>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        failure: Option<String>,
    },
}
