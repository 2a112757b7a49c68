//! Discovering and registering outputs: manifest records and chunks merged
//! into stored outputs, and the reconciles asked for outputs whose targets
//! were never observed. Registration is where the tenancy rule
//! (`ingest::tenancy`) is the last word: an output naming a repository
//! outside its installation is never stored, whatever brought it.

use super::*;
use crate::ingest::tenancy;

impl Worker {
    /// Register a manifest's records; collects the outputs to re-assess and
    /// those never observed (to reconcile).
    pub(super) fn upsert_manifest_records(
        &mut self,
        unit: &mut Unit,
        mut records: Vec<ExecutionRecord>,
        outputs: &mut BTreeSet<String>,
        fx: &mut Effects,
    ) -> Result<()> {
        self.manifest_under_keyed_names(&mut records)?;
        for record in records {
            let Some(id) = self.upsert_output(unit, record, fx)? else {
                continue;
            };
            if self.shared.reconcile_requests.is_some() && self.never_observed(unit, &id)? {
                fx.unobserved.push(id.clone());
            }
            outputs.insert(id);
        }
        Ok(())
    }

    /// Apply one staged chunk of a streamed manifest in its own commit, which
    /// also removes the chunk: memory is one chunk's worth whatever the size
    /// of the manifest, and after a crash the applied chunks are not redone.
    pub(super) fn process_chunk(&mut self, upload: u64, chunk: u32) -> Result<()> {
        let mut unit = self.store.begin();
        let expect = self.prefetch(&unit, &[], &[])?;
        let records = match staging::chunk(&self.store, upload, chunk) {
            Ok(Some(records)) => records,
            Ok(None) => return Ok(()),
            Err(e @ crate::store::StoreError::Decode { .. }) => {
                // A chunk that cannot decode would block the queue forever.
                self.shared.record_error(format!(
                    "dropped undecodable manifest chunk {chunk} of upload {upload}: {e}"
                ));
                unit.remove_staged_chunk(upload, chunk);
                return self.commit(unit, expect);
            }
            Err(e) => return Err(e),
        };
        let (mut outputs, mut fx) = (BTreeSet::new(), Effects::default());
        self.upsert_manifest_records(&mut unit, records, &mut outputs, &mut fx)?;
        for id in &outputs {
            fx.changed.extend(self.reassess(&mut unit, id)?);
        }
        unit.remove_staged_chunk(upload, chunk);
        self.commit(unit, expect)?;
        self.apply_effects(fx);
        Ok(())
    }

    pub(super) fn request_reconciles(&self, unobserved: Vec<String>) {
        if let Some(hook) = &self.shared.reconcile_requests {
            for id in unobserved {
                hook.request_if_unseen(id);
            }
        }
    }

    /// After a failed write the store is the truth: drop the caches.
    pub(super) fn forget_cached(&mut self) {
        if let Some(spans) = self.shared.outcome_spans.get() {
            spans.discard();
        }
        self.cache.clear();
        self.outputs.clear();
        self.seen_installations.clear();
        self.keyed_names.clear();
        self.epoch = None;
    }

    /// True when the API can be asked about an output and nothing at all
    /// has been filed under its watch keys (its target was never seen: the
    /// App was installed late, or webhooks were lost).
    pub(super) fn never_observed(&self, unit: &Unit, id: &str) -> Result<bool> {
        let Some(stored) = unit.output(id)? else {
            return Ok(false);
        };
        if crate::ingest::reconcile::required_endpoints(&stored.execution).is_empty() {
            return Ok(false);
        }
        Ok(!unit.has_observations(&stored.execution.watch_keys())?)
    }

    /// Register an output, or merge it into the one already known for the same
    /// object (a webhook discovery and a manifest line are one output).
    /// Returns the canonical id; `None` when the tenancy rule refuses it
    /// (counted and logged, nothing stored).
    pub(super) fn upsert_output(
        &mut self,
        unit: &mut Unit,
        record: ExecutionRecord,
        fx: &mut Effects,
    ) -> Result<Option<String>> {
        if let Err(refusal) = tenancy::check_output(&self.store, &record)? {
            let at = tenancy::Where::Registration;
            self.shared.tenancy.refused(at, &record.id, &refusal);
            return Ok(None);
        }
        let target_key = record.target.as_ref().map(|t| t.key());
        lock(unit, &record.id)?;
        let types = one_object_types(&record.output_type);
        if let Some(tk) = &target_key {
            for t in &types {
                lock(unit, &format!("type:{tk}:{t}"))?;
            }
        }
        let mut by_object = None;
        if let Some(tk) = &target_key {
            for t in &types {
                by_object = unit.output_of_type_on(tk, t)?;
                if by_object.is_some() {
                    break;
                }
            }
        }
        let same_id = unit.output(&record.id)?.map(|s| s.execution.id);
        let existing = match (same_id, by_object) {
            (Some(id), _) => Some(id),
            (None, Some(id)) => {
                let other = unit.output(&id)?;
                // Two manifest lines on one object are two outputs; only a
                // webhook discovery and a manifest line are one.
                other
                    .filter(|o| o.execution.sources.manifest != record.sources.manifest)
                    .map(|o| o.execution.id)
            }
            (None, None) => None,
        };
        let new = existing.is_none();
        let stored = match existing {
            Some(old_id) => {
                lock(unit, &old_id)?;
                let mut stored = unit.output(&old_id)?.expect("looked up above");
                stored.execution.merge(record);
                stored
                    .trace_id
                    .get_or_insert_with(crate::model::ident::new_trace_id);
                let new_id = stored.execution.id.clone();
                if new_id != old_id {
                    self.outputs.forget(&old_id);
                    let watch = stored.execution.watch_keys();
                    unit.retire_output(&old_id, &new_id, &watch)?;
                    for key in &watch {
                        self.cache.output_retired(key, &old_id);
                    }
                }
                stored
            }
            None => {
                fx.new_outputs += 1;
                StoredOutput {
                    execution: record,
                    outcome: None,
                    trace_id: Some(crate::model::ident::new_trace_id()),
                }
            }
        };
        let id = stored.execution.id.clone();
        if new {
            unit.put_new_output(&stored)?;
        } else {
            unit.put_output(&stored)?;
        }
        for key in stored.execution.watch_keys() {
            self.cache.output_filed(&key, &id);
        }
        self.outputs.written(stored);
        Ok(Some(id))
    }
}

/// The types one object can be the output of, `output_type` first: a
/// comment discovered from its gh-aw marker is taken for an `add_comment`,
/// and is the same output as a manifest's `comment_memory` on it.
fn one_object_types(output_type: &str) -> Vec<&str> {
    const COMMENTS: [&str; 2] = ["add_comment", "comment_memory"];
    if COMMENTS.contains(&output_type) {
        let mut types = vec![output_type];
        types.extend(COMMENTS.iter().filter(|t| **t != output_type));
        types
    } else {
        vec![output_type]
    }
}
