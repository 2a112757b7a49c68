//! Typed writes and reads of the App's own state for `github::` and the
//! rest of the crate (installations, harvest queue and markers,
//! redelivery records, inbox position), so that nothing outside `store/`
//! sees sled, key bytes or record encodings.

use serde::{de::DeserializeOwned, Serialize};

use super::{decode, encode, keys, ExternalBatch, Result, Store};
use safe_outcomes_model::installation::InstallationRecord;

impl ExternalBatch {
    /// Store an installation record (`n/i/`).
    pub fn put_installation(&mut self, record: &InstallationRecord) {
        self.0.insert(keys::installation(record.id), encode(record));
    }

    /// Map `repo` to installation `id` (`n/r/`).
    pub fn map_repo(&mut self, repo: &str, id: u64) {
        self.0
            .insert(keys::installation_repo(repo), id.to_be_bytes());
    }

    /// Drop the installation mapping of `repo`.
    pub fn unmap_repo(&mut self, repo: &str) {
        self.0.remove(keys::installation_repo(repo));
    }

    /// Queue a gh-aw run for the harvester (`n/q/`).
    pub fn queue_harvest<T: Serialize>(&mut self, repo: &str, run_id: u64, attempt: u64, run: &T) {
        self.0
            .insert(keys::harvest_queue(repo, run_id, attempt), encode(run));
    }
}

impl Store {
    /// Write a batch at once (all or nothing).
    pub fn commit_batch(&self, batch: ExternalBatch) -> Result<()> {
        self.db.apply_batch(batch.0)?;
        Ok(())
    }

    /// The harvest marker of a run (`n/h/`), if it was harvested.
    pub fn harvest_record<T: DeserializeOwned>(
        &self,
        repo: &str,
        run_id: u64,
        attempt: u64,
    ) -> Result<Option<T>> {
        let key = keys::harvest_done(repo, run_id, attempt);
        self.db.get(&key)?.map(|v| decode(&key, &v)).transpose()
    }

    /// Whether the run has a harvest marker.
    pub fn harvest_done(&self, repo: &str, run_id: u64, attempt: u64) -> Result<bool> {
        self.db
            .contains_key(keys::harvest_done(repo, run_id, attempt))
    }

    /// The runs waiting in the harvest queue (records that no longer decode
    /// are skipped).
    pub fn harvest_queue<T: DeserializeOwned>(&self) -> Vec<T> {
        self.db
            .scan_prefix(keys::HARVEST_QUEUE)
            .filter_map(|r| r.ok())
            .filter_map(|(k, v)| decode::<T>(&k, &v).ok())
            .collect()
    }

    /// Drop a run from the harvest queue.
    pub fn unqueue_harvest(&self, repo: &str, run_id: u64, attempt: u64) -> Result<()> {
        self.db.remove(keys::harvest_queue(repo, run_id, attempt))?;
        Ok(())
    }

    /// Store a run's harvest marker and drop it from the queue, in one
    /// batch, counting it under `counter` when given.
    pub fn mark_harvest_done<T: Serialize>(
        &self,
        (repo, run_id, attempt): (&str, u64, u64),
        record: &T,
        counter: Option<&str>,
    ) -> Result<()> {
        let mut batch = ExternalBatch::default();
        batch
            .0
            .insert(keys::harvest_done(repo, run_id, attempt), encode(record));
        batch.0.remove(keys::harvest_queue(repo, run_id, attempt));
        if let Some(name) = counter {
            self.bump_counter(&mut batch.0, name, 1);
        }
        self.commit_batch(batch)
    }

    /// The redeliveries asked for a webhook delivery GUID (`n/w/`).
    pub fn redelivery_record<T: DeserializeOwned>(&self, guid: &str) -> Result<Option<T>> {
        let key = keys::redelivery(guid);
        self.db.get(&key)?.map(|v| decode(&key, &v)).transpose()
    }

    /// Store the redelivery record of a GUID, counting it under `counter`
    /// when given, in one batch.
    pub fn save_redelivery<T: Serialize>(
        &self,
        guid: &str,
        record: &T,
        counter: Option<&str>,
    ) -> Result<()> {
        let mut batch = ExternalBatch::default();
        batch.0.insert(keys::redelivery(guid), encode(record));
        if let Some(name) = counter {
            self.bump_counter(&mut batch.0, name, 1);
        }
        self.commit_batch(batch)
    }

    /// The sequence number of the oldest item still in the inbox queue.
    pub fn oldest_queued_seq(&self) -> Option<u64> {
        self.db
            .range(keys::inbox_queue(self.queue_start())..keys::INBOX_QUEUE_END.to_vec())
            .next()
            .and_then(|r| r.ok())
            .and_then(|(k, _)| keys::inbox_seq(&k))
    }

    /// How many outputs are stored (scans `o/`).
    pub fn output_count(&self) -> u64 {
        self.db.scan_prefix(keys::OUTPUT).count() as u64
    }

    /// Write raw bytes under a key (tests: fault injection only).
    #[cfg(any(test, feature = "test-hooks"))]
    #[doc(hidden)]
    pub fn put_raw_for_tests(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.db.insert(key, value)?;
        Ok(())
    }

    /// The key an output is stored under (tests: fault injection only).
    #[cfg(any(test, feature = "test-hooks"))]
    #[doc(hidden)]
    pub fn output_key_for_tests(id: &str) -> Vec<u8> {
        keys::output(id)
    }
}

impl Store {
    /// `bench replay`'s store ceiling: take the oldest inbox items (up to
    /// `limit`, read in one range as the worker reads them), and for each
    /// file its observations and mark it processed, one batch an item, with
    /// none of the worker's logic. Returns how many it took (0: the inbox is
    /// empty). Taking one item per range read made the ceiling read a page
    /// of the journal for each item: 129.5 µs of CPU an event, against the
    /// worker's 49.2 (`bench replay`, 2026-11-26 19:22).
    #[doc(hidden)]
    pub fn bare_drain(&self, limit: usize) -> Result<usize> {
        use super::inbox::InboxItem;
        let items = self.inbox_items(0, limit)?;
        for (seq, value) in &items {
            let key = keys::inbox_queue(*seq);
            let item: InboxItem = super::codec::decode_item(&key, value)?;
            let mut batch = super::Batch::default();
            if let InboxItem::Delivery { observations, .. } = item {
                for obs in observations {
                    batch.insert(
                        keys::observation(&obs.target, obs.at, &obs.id),
                        super::codec::encode_observation(&obs),
                    );
                }
            }
            if self.is_pg() {
                batch.remove(key);
            } else {
                // As the worker does: sled records how far it went.
                Store::set_counter(&mut batch, super::counter::INBOX_DONE, *seq);
            }
            self.db.apply_batch(batch)?;
        }
        Ok(items.len())
    }
}
