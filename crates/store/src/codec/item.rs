//! The v3 form of an inbox item, variant for variant.

use super::observation::ObservationV3;
use super::outcome::ExecutionV3;
use super::{Stored, Time};
use crate::inbox_item::InboxItem;
use safe_outcomes_model::{ExecutionRecord, Observation};
use serde::{Deserialize, Serialize};

/// `InboxItem`, variant for variant (append only).
#[derive(Serialize, Deserialize)]
pub(super) enum ItemV3 {
    Delivery {
        delivery_id: String,
        event: String,
        action: Option<String>,
        received_at: Time,
        observations: Vec<ObservationV3>,
        discoveries: Vec<ExecutionV3>,
        /// `InstallationChange` as JSON ("" when none): rare, and small.
        installation_change: String,
    },
    Manifest {
        key: String,
        received_at: Time,
        records: Vec<ExecutionV3>,
    },
    ManifestChunks {
        key: String,
        received_at: Time,
        upload: u64,
        chunks: u32,
    },
    Reconciled {
        output_id: String,
        fetched_at: Time,
        observations: Vec<ObservationV3>,
        failure: Option<String>,
    },
}

impl From<&InboxItem> for ItemV3 {
    fn from(item: &InboxItem) -> ItemV3 {
        let records = |r: &[ExecutionRecord]| -> Vec<ExecutionV3> {
            r.iter().map(ExecutionV3::from).collect()
        };
        let observations = |o: &[Observation]| -> Vec<ObservationV3> {
            o.iter().map(ObservationV3::from).collect()
        };
        match item {
            InboxItem::Delivery {
                delivery_id,
                event,
                action,
                received_at,
                observations: obs,
                discoveries,
                installation_change,
            } => ItemV3::Delivery {
                delivery_id: delivery_id.clone(),
                event: event.clone(),
                action: action.clone(),
                received_at: (*received_at).into(),
                observations: observations(obs),
                discoveries: records(discoveries),
                installation_change: installation_change.as_ref().map_or_else(String::new, |c| {
                    serde_json::to_string(c).expect("a change serializes")
                }),
            },
            InboxItem::Manifest {
                key,
                received_at,
                records: r,
            } => ItemV3::Manifest {
                key: key.clone(),
                received_at: (*received_at).into(),
                records: records(r),
            },
            InboxItem::ManifestChunks {
                key,
                received_at,
                upload,
                chunks,
            } => ItemV3::ManifestChunks {
                key: key.clone(),
                received_at: (*received_at).into(),
                upload: *upload,
                chunks: *chunks,
            },
            InboxItem::Reconciled {
                output_id,
                fetched_at,
                observations: obs,
                failure,
            } => ItemV3::Reconciled {
                output_id: output_id.clone(),
                fetched_at: (*fetched_at).into(),
                observations: observations(obs),
                failure: failure.clone(),
            },
        }
    }
}

impl Stored<InboxItem> for ItemV3 {
    fn into_model(self) -> std::result::Result<InboxItem, String> {
        type Out<T> = std::result::Result<Vec<T>, String>;
        let records = |r: Vec<ExecutionV3>| -> Out<ExecutionRecord> {
            r.into_iter().map(ExecutionV3::into_model).collect()
        };
        let observations = |o: Vec<ObservationV3>| -> Out<Observation> {
            o.into_iter().map(ObservationV3::into_model).collect()
        };
        Ok(match self {
            ItemV3::Delivery {
                delivery_id,
                event,
                action,
                received_at,
                observations: obs,
                discoveries,
                installation_change,
            } => InboxItem::Delivery {
                delivery_id,
                event,
                action,
                received_at: received_at.into_model()?,
                observations: observations(obs)?,
                discoveries: records(discoveries)?,
                installation_change: match installation_change.as_str() {
                    "" => None,
                    text => Some(serde_json::from_str(text).map_err(|e| e.to_string())?),
                },
            },
            ItemV3::Manifest {
                key,
                received_at,
                records: r,
            } => InboxItem::Manifest {
                key,
                received_at: received_at.into_model()?,
                records: records(r)?,
            },
            ItemV3::ManifestChunks {
                key,
                received_at,
                upload,
                chunks,
            } => InboxItem::ManifestChunks {
                key,
                received_at: received_at.into_model()?,
                upload,
                chunks,
            },
            ItemV3::Reconciled {
                output_id,
                fetched_at,
                observations: obs,
                failure,
            } => InboxItem::Reconciled {
                output_id,
                fetched_at: fetched_at.into_model()?,
                observations: observations(obs)?,
                failure,
            },
        })
    }
}
