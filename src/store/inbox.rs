//! The durable inbox and its group-commit writer.
//!
//! Handlers hand an `InboxItem` to one writer thread and await its reply. The
//! writer takes everything that queued up while it was flushing, writes it in
//! one batch, flushes once, and only then replies: a delivery is durable before
//! its 2xx, and one fsync serves the whole batch.

use std::collections::HashSet;
use std::sync::Arc;
use std::thread::JoinHandle;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot};

use super::{counter, encode, keys, Store, StoreError};
use crate::github::installations::InstallationChange;
use crate::model::{ExecutionRecord, Observation};

/// Most items written per flush.
const MAX_BATCH: usize = 2048;

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

impl InboxItem {
    fn dedupe_key(&self) -> String {
        match self {
            InboxItem::Delivery { delivery_id, .. } => delivery_id.clone(),
            InboxItem::Manifest { key, .. } | InboxItem::ManifestChunks { key, .. } => {
                format!("manifest:{key}")
            }
            // The same findings at the same time are one item; anything
            // else found is a new one, even within the same instant.
            InboxItem::Reconciled {
                output_id,
                fetched_at,
                observations,
                failure,
            } => {
                use sha2::{Digest, Sha256};
                let digest = Sha256::digest(encode(&(observations, failure)));
                format!(
                    "reconcile:{output_id}:{}:{}",
                    fetched_at.timestamp_nanos_opt().unwrap_or_default(),
                    hex::encode(&digest[..8])
                )
            }
        }
    }
}

/// What happened to an enqueued item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enqueued {
    /// Stored under this inbox sequence number.
    Stored(u64),
    /// Seen before (same `X-GitHub-Delivery`): nothing stored.
    Duplicate,
}

#[derive(Debug, thiserror::Error)]
pub enum InboxError {
    #[error("inbox is shut down")]
    Closed,
    #[error("inbox write failed: {0}")]
    Write(String),
}

struct Request {
    item: InboxItem,
    reply: oneshot::Sender<Result<Enqueued, InboxError>>,
}

/// Handle to the writer thread; cheap to clone.
#[derive(Clone)]
pub struct InboxWriter {
    tx: mpsc::Sender<Request>,
}

/// Called after each flushed batch with the highest stored sequence, the
/// number of items the batch stored, and the duplicates seen so far.
pub type OnStored = Arc<dyn Fn(u64, u64, u64) + Send + Sync>;

impl InboxWriter {
    pub fn start(store: Store, on_stored: OnStored) -> (InboxWriter, JoinHandle<()>) {
        let (tx, rx) = mpsc::channel(16 * 1024);
        let handle = std::thread::Builder::new()
            .name("inbox-writer".into())
            .spawn(move || write_loop(store, rx, on_stored))
            .expect("spawn inbox writer");
        (InboxWriter { tx }, handle)
    }

    /// Store an item durably; returns once it is flushed to disk.
    pub async fn enqueue(&self, item: InboxItem) -> Result<Enqueued, InboxError> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Request { item, reply })
            .await
            .map_err(|_| InboxError::Closed)?;
        rx.await.map_err(|_| InboxError::Closed)?
    }
}

/// Whether an item with dedupe `key` was stored before (or earlier in this
/// batch). A failed read is an error, never "not seen": storing a possible
/// duplicate would process it twice.
fn seen_before(
    in_batch: &HashSet<String>,
    key: &str,
    stored: impl Fn(Vec<u8>) -> sled::Result<bool>,
) -> Result<bool, InboxError> {
    if in_batch.contains(key) {
        return Ok(true);
    }
    stored(keys::inbox_delivery(key))
        .map_err(|e| InboxError::Write(format!("reading the dedupe index: {e}")))
}

fn write_loop(store: Store, mut rx: mpsc::Receiver<Request>, on_stored: OnStored) {
    let mut seq = store.counter(counter::RECEIVED);
    let mut duplicates = store.counter(counter::DUPLICATES);
    while let Some(first) = rx.blocking_recv() {
        let mut requests = vec![first];
        while requests.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(r) => requests.push(r),
                Err(_) => break,
            }
        }
        let (start_seq, start_dups) = (seq, duplicates);
        let mut batch = sled::Batch::default();
        let mut in_batch = HashSet::new();
        let mut results = Vec::with_capacity(requests.len());
        for req in &requests {
            let key = req.item.dedupe_key();
            let seen = match seen_before(&in_batch, &key, |k| store.db().contains_key(k)) {
                Ok(seen) => seen,
                Err(e) => {
                    // Not knowing is not "not seen": refuse (503, GitHub retries).
                    results.push(Err(e));
                    continue;
                }
            };
            if seen {
                duplicates += 1;
                results.push(Ok(Enqueued::Duplicate));
                continue;
            }
            seq += 1;
            batch.insert(keys::inbox_queue(seq), encode(&req.item));
            batch.insert(keys::inbox_delivery(&key), &seq.to_be_bytes());
            if let InboxItem::ManifestChunks { upload, .. } = &req.item {
                // Its chunks are no longer swept at start-up.
                batch.insert(keys::manifest_committed(*upload), &[]);
            }
            in_batch.insert(key);
            results.push(Ok(Enqueued::Stored(seq)));
        }
        Store::set_counter(&mut batch, counter::RECEIVED, seq);
        Store::set_counter(&mut batch, counter::DUPLICATES, duplicates);
        let written = store
            .db()
            .apply_batch(batch)
            .map_err(StoreError::from)
            .and_then(|_| store.flush());
        match written {
            Ok(()) => {
                // Before the replies: once a client has its 2xx, `wait_idle`
                // must already count the item as stored.
                if seq > start_seq || duplicates > start_dups {
                    on_stored(seq, seq - start_seq, duplicates);
                }
                for (req, result) in requests.into_iter().zip(results) {
                    let _ = req.reply.send(result);
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "inbox write failed");
                (seq, duplicates) = (start_seq, start_dups);
                for req in requests {
                    let _ = req.reply.send(Err(InboxError::Write(e.to_string())));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_dedupe_read_is_an_error_not_unseen() {
        let none = HashSet::new();
        let failing = |_: Vec<u8>| -> sled::Result<bool> {
            Err(sled::Error::Io(std::io::Error::other("disk gone")))
        };
        let e = seen_before(&none, "guid-1", failing).unwrap_err();
        assert!(e.to_string().contains("disk gone"), "{e}");
        assert!(seen_before(&none, "guid-1", |_| Ok(true)).unwrap());
        assert!(!seen_before(&none, "guid-1", |_| Ok(false)).unwrap());
        let batch: HashSet<String> = ["guid-1".to_string()].into();
        assert!(seen_before(&batch, "guid-1", failing).unwrap());
    }
}
