//! A unit of work: typed reads and writes that see the unit's own
//! uncommitted writes, committed all at once (one sled batch) or not at all.
//!
//! The worker processes many inbox items per unit: sled's `apply_batch` takes
//! a process-wide write lock, so one commit per few hundred items instead of
//! one per item keeps the inbox writer (the acks) from queueing behind the
//! worker. A savepoint lets one item's writes be undone inside the unit when
//! that item fails, so a failing item leaves nothing half-written while the
//! items before it in the same unit still commit.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::{counter, encode, keys, Result, Store, StoredOutput};
use safe_outcomes_model::Observation;

/// Reads shared by the store and a unit of work (which also sees its own
/// writes): what the worker's caches load through.
pub trait ReadStore {
    /// The value under `key`.
    #[doc(hidden)]
    fn get_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>>;
    /// Every key and value under `prefix`, in key order.
    #[doc(hidden)]
    fn scan_raw(&self, prefix: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>>;
    /// Every key and value in `start..end`, in key order.
    #[doc(hidden)]
    fn range_raw(&self, start: &[u8], end: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>>;
    /// True on PostgreSQL, whose unit answers the prefixes its `ReadPlan`
    /// named from what it read ahead, and no other range.
    #[doc(hidden)]
    fn reads_ahead_by_prefix(&self) -> bool;

    /// Everything filed under one target: its observations, in stored
    /// order (time, id), and the ids of the outputs watching it. They sit
    /// side by side (`keys::outputs_on`), so on sled this is one read of
    /// the tree where two scans walked it twice from its root (a quarter
    /// of an event's drain on random outputs, docs/store.md); on
    /// PostgreSQL the two prefixes a unit's `ReadPlan` names.
    fn target_entries(&self, target: &str) -> Result<TargetEntries> {
        let observations_of = keys::observations_of(target);
        let outputs_on = keys::outputs_on(target);
        let entries = if self.reads_ahead_by_prefix() {
            let mut all = self.scan_raw(&observations_of)?;
            all.extend(self.scan_raw(&outputs_on)?);
            all
        } else {
            self.range_raw(&observations_of, &keys::target_entries_end(target))?
        };
        let mut found = TargetEntries::default();
        for (k, v) in &entries {
            if k.starts_with(&observations_of) {
                found
                    .observations
                    .push(super::codec::decode_observation(k, v)?);
            } else if let Some(id) = keys::suffix(k, &outputs_on) {
                found.outputs.push(id);
            }
        }
        Ok(found)
    }

    /// What follows `prefix` in each key under it, as text: the entries of
    /// an index (a target's outputs, the threads on a ref).
    fn suffixes(&self, prefix: &[u8]) -> Result<Vec<String>> {
        Ok(self
            .scan_raw(prefix)?
            .iter()
            .filter_map(|(k, _)| keys::suffix(k, prefix))
            .collect())
    }

    /// Observations filed under one target, in stored order (time, id).
    fn observations_of(&self, target: &str) -> Result<Vec<Observation>> {
        self.scan_raw(&keys::observations_of(target))?
            .iter()
            .map(|(k, v)| super::codec::decode_observation(k, v))
            .collect()
    }

    /// Observations of the given targets, sorted by (`at`, `id`), without repeats.
    fn observations_of_all(&self, targets: &[String]) -> Result<Vec<Observation>> {
        let mut all = Vec::new();
        for target in targets {
            all.extend(self.observations_of(target)?);
        }
        all.sort_by(|a, b| (a.at, &a.id).cmp(&(b.at, &b.id)));
        all.dedup_by(|a, b| a.id == b.id);
        Ok(all)
    }

    /// True when `ref_key` is already linked to `thread` (`Unit::link`).
    fn is_linked(&self, ref_key: &str, thread: &str) -> Result<bool> {
        Ok(self.get_raw(&keys::ref_link(ref_key, thread))?.is_some())
    }

    /// Resolve an output id through aliases left by manifest merges. An id
    /// with a record filed under it is canonical (`Unit::retire_output`
    /// removes the record of the id it makes an alias, `Unit::put_output`
    /// the alias of the id it files), so the alias is read only for an id
    /// without a record: an event on an output reads the record's leaf,
    /// not the aliases' one too (docs/store.md, "Leaves an event reads").
    fn canonical(&self, id: &str) -> Result<String> {
        if self.get_raw(&keys::output(id))?.is_some() {
            return Ok(id.to_string());
        }
        Ok(self.alias_of(id)?.unwrap_or_else(|| id.to_string()))
    }

    /// The output under `id`, or under the id it is an alias of: (its
    /// canonical id, its record), read the way `canonical` reads (the
    /// record first), without decoding a record twice.
    fn resolve(&self, id: &str) -> Result<Option<(String, StoredOutput)>> {
        if let Some(stored) = self.output_by_canonical(id)? {
            return Ok(Some((id.to_string(), stored)));
        }
        let Some(canonical) = self.alias_of(id)? else {
            return Ok(None);
        };
        Ok(self
            .output_by_canonical(&canonical)?
            .map(|stored| (canonical, stored)))
    }

    /// The id `id` is an alias of, if it is one (`a/`, left by a merge).
    fn alias_of(&self, id: &str) -> Result<Option<String>> {
        Ok(self
            .get_raw(&keys::alias(id))?
            .map(|v| String::from_utf8_lossy(&v).into_owned()))
    }

    /// The stored output with this (canonical) id.
    fn output_by_canonical(&self, id: &str) -> Result<Option<StoredOutput>> {
        let key = keys::output(id);
        self.get_raw(&key)?
            .map(|v| super::codec::decode_output(&key, &v))
            .transpose()
    }
}

/// What `ReadStore::target_entries` finds filed under a target.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct TargetEntries {
    /// Its observations, in stored order (time, id).
    pub observations: Vec<Observation>,
    /// The ids of the outputs watching it, in key order.
    pub outputs: Vec<String>,
}

impl ReadStore for Store {
    fn get_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.db.get(key)?.map(|v| v.to_vec()))
    }

    fn scan_raw(&self, prefix: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        self.db
            .scan_prefix(prefix)
            .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())))
            .collect()
    }

    fn range_raw(&self, start: &[u8], end: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        self.db
            .range(start..end)
            .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())))
            .collect()
    }

    fn reads_ahead_by_prefix(&self) -> bool {
        self.db.is_pg()
    }
}

/// A write as the unit holds it: a value, or a removal.
type Write = Option<Vec<u8>>;

/// Begun with `Store::begin`; nothing reaches the store before `commit`.
pub struct Unit {
    store: Store,
    writes: BTreeMap<Vec<u8>, Write>,
    /// For each write since the unit began: the key and what the unit held
    /// under it before (`None`: nothing written yet), to roll back to a
    /// savepoint.
    undo: Vec<(Vec<u8>, Option<Write>)>,
    /// Counter values to write once, at commit.
    counters: BTreeMap<&'static str, u64>,
    /// Counter additions to write once, at commit (PostgreSQL).
    added: BTreeMap<&'static str, u64>,
    /// Writes made by `github::` helpers that still build a sled batch
    /// themselves (installations, harvest, backfill), committed first.
    external: ExternalBatch,
    /// The undo length when `external` was first handed out.
    external_at: Option<usize>,
    /// Additions to the rollups (`store::rollup`), folded at commit.
    rollups: Vec<(Vec<u8>, super::rollup::Counts)>,
    /// Outputs whose line-survival cells change (a first outcome, a merge
    /// away): their landed lines move after the commit
    /// (`attribution::move_lines`).
    line_moves: Vec<(Option<StoredOutput>, Option<StoredOutput>)>,
    /// Output records replaced in this unit and not encoded yet
    /// (`replace_output_record`, sled), by id: written at commit, or
    /// before anything else writes their key (`flush_replaced`).
    replaced: BTreeMap<String, Box<Replaced>>,
    /// For each change to `replaced` since the unit began, how to undo it
    /// (`rollback_to`).
    replaced_undo: Vec<ReplacedUndo>,
}

/// An output record replaced in a unit: as the unit held it before the
/// first replace (none for an output the unit registered,
/// `put_new_output`), and now.
struct Replaced {
    before: Option<StoredOutput>,
    now: StoredOutput,
}

/// How to undo a change to `Unit::replaced`.
enum ReplacedUndo {
    /// The id was not replaced before.
    Added(String),
    /// The id's record was replaced again: what it was before.
    Now(String, Box<StoredOutput>),
    /// The id's record was written out (`flush_replaced`).
    Written(String, Box<Replaced>),
}

/// A batch of typed writes that `github::` helpers fill (see
/// `Unit::external_batch`, `Store::commit_batch`); its keys and encodings
/// stay inside the store.
#[derive(Default)]
pub struct ExternalBatch(pub(super) super::Batch);

/// A point inside a unit to roll back to (`Unit::rollback_to`).
#[derive(Debug, Clone, Copy)]
pub struct Savepoint {
    undo: usize,
    rollups: usize,
    line_moves: usize,
    replaced: usize,
}

impl Store {
    /// Begin a unit of work. On PostgreSQL the unit is a transaction on one
    /// connection (begun at its first read): its reads, claims and locks
    /// go through it, its writes are written at commit, then COMMIT.
    pub fn begin(&self) -> Unit {
        let mut store = self.clone();
        match &self.db {
            super::Engine::Pg(pg) => store.db = super::Engine::Pg(pg.pinned()),
            // A unit begun on one opening of sled's files never writes to
            // the next (`heal`).
            sled => store.db = sled.pinned(),
        }
        Unit {
            store,
            writes: BTreeMap::new(),
            undo: Vec::new(),
            counters: BTreeMap::new(),
            added: BTreeMap::new(),
            external: ExternalBatch::default(),
            external_at: None,
            rollups: Vec::new(),
            line_moves: Vec::new(),
            replaced: BTreeMap::new(),
            replaced_undo: Vec::new(),
        }
    }
}

impl ReadStore for Unit {
    fn get_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        if let Some(r) = self.replaced_under(key) {
            return Ok(Some(super::codec::encode_output(&r.now)));
        }
        match self.writes.get(key) {
            Some(w) => Ok(w.clone()),
            None => self.store.get_raw(key),
        }
    }

    fn scan_raw(&self, prefix: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let end = super::engine::prefix_end(prefix);
        let mine = self
            .writes
            .range(prefix.to_vec()..)
            .take_while(|(k, _)| k.starts_with(prefix));
        self.merged(mine, prefix, end.as_deref(), || self.store.scan_raw(prefix))
    }

    fn range_raw(&self, start: &[u8], end: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let mine = self.writes.range(start.to_vec()..end.to_vec());
        self.merged(mine, start, Some(end), || self.store.range_raw(start, end))
    }

    fn reads_ahead_by_prefix(&self) -> bool {
        self.is_shared()
    }
}

impl Unit {
    /// What the store holds in `start..end` (`stored`), with the unit's
    /// own writes in it (`mine`, and the records replaced) laid over it.
    fn merged<'a>(
        &self,
        mine: impl Iterator<Item = (&'a Vec<u8>, &'a Write)>,
        start: &[u8],
        end: Option<&[u8]>,
        stored: impl FnOnce() -> Result<Vec<(Vec<u8>, Vec<u8>)>>,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let mut mine = mine.peekable();
        let replaced: Vec<(Vec<u8>, &Replaced)> = self
            .replaced
            .iter()
            .map(|(id, r)| (keys::output(id), &**r))
            .filter(|(k, _)| k.as_slice() >= start && end.is_none_or(|end| k.as_slice() < end))
            .collect();
        if mine.peek().is_none() && replaced.is_empty() {
            return stored();
        }
        let mut merged: BTreeMap<Vec<u8>, Vec<u8>> = stored()?.into_iter().collect();
        for (k, w) in mine {
            match w {
                Some(v) => merged.insert(k.clone(), v.clone()),
                None => merged.remove(k),
            };
        }
        for (k, r) in replaced {
            merged.insert(k, super::codec::encode_output(&r.now));
        }
        Ok(merged.into_iter().collect())
    }

    /// The record replaced and not encoded yet whose key is `key`.
    fn replaced_under(&self, key: &[u8]) -> Option<&Replaced> {
        if self.replaced.is_empty() {
            return None;
        }
        let id = std::str::from_utf8(key.strip_prefix(keys::OUTPUT)?).ok()?;
        self.replaced.get(id).map(|r| &**r)
    }

    /// Write out the record of `id` replaced and not encoded yet, if any:
    /// counted into the rollups once, from what the unit held before its
    /// first replace to what it holds now (the changes add up: `rollup::change`
    /// subtracts what the old record counted and adds what the new one does),
    /// and encoded once.
    fn flush_replaced(&mut self, id: &str) {
        if let Some(r) = self.replaced.remove(id) {
            self.roll_between(r.before.as_ref(), Some(&r.now));
            self.insert_output_record(&r.now);
            self.replaced_undo
                .push(ReplacedUndo::Written(id.to_string(), r));
        }
    }

    fn put(&mut self, key: Vec<u8>, value: Write) {
        let before = self.writes.insert(key.clone(), value);
        self.undo.push((key, before));
    }

    fn insert(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.put(key, Some(value));
    }

    fn remove(&mut self, key: Vec<u8>) {
        self.put(key, None);
    }

    /// Number of keys written so far.
    pub fn writes(&self) -> usize {
        self.writes.len() + self.replaced.len()
    }

    /// Mark the current state, to undo what follows if it fails.
    pub fn savepoint(&self) -> Savepoint {
        Savepoint {
            undo: self.undo.len(),
            rollups: self.rollups.len(),
            line_moves: self.line_moves.len(),
            replaced: self.replaced_undo.len(),
        }
    }

    /// The batch for helpers that write it themselves; it is committed with
    /// the unit, and a rollback to before it was handed out empties it.
    pub fn external_batch(&mut self) -> &mut ExternalBatch {
        self.external_at.get_or_insert(self.undo.len());
        &mut self.external
    }

    /// Undo every write made since `sp`.
    pub fn rollback_to(&mut self, sp: Savepoint) {
        if self.external_at.is_some_and(|at| at >= sp.undo) {
            self.external = ExternalBatch::default();
            self.external_at = None;
        }
        self.rollups.truncate(sp.rollups);
        self.line_moves.truncate(sp.line_moves);
        while self.replaced_undo.len() > sp.replaced {
            match self.replaced_undo.pop().expect("len checked") {
                ReplacedUndo::Added(id) => {
                    self.replaced.remove(&id);
                }
                ReplacedUndo::Now(id, before) => {
                    if let Some(r) = self.replaced.get_mut(&id) {
                        r.now = *before;
                    }
                }
                ReplacedUndo::Written(id, r) => {
                    self.replaced.insert(id, r);
                }
            }
        }
        while self.undo.len() > sp.undo {
            let (key, before) = self.undo.pop().expect("len checked");
            match before {
                Some(w) => self.writes.insert(key, w),
                None => self.writes.remove(&key),
            };
        }
    }

    /// Write everything in one batch (atomic: all or nothing): one sled
    /// batch, or the unit's transaction's writes and its COMMIT.
    pub fn commit(self) -> Result<()> {
        self.commit_after(None).map(|_| ())
    }

    /// `commit`, for a caller whose caches outlive its units: on PostgreSQL
    /// the commit bumps the unit epoch and, with `expect`, fails with
    /// `StoreError::Stale` (nothing written) unless the epoch still stood
    /// at `expect` — no other unit committed since the caller's last one.
    /// Returns the new epoch (PostgreSQL; `None` on sled, where the worker
    /// is the only writer and its caches never go stale).
    pub fn commit_after(mut self, expect: Option<u64>) -> Result<Option<u64>> {
        let ids: Vec<String> = self.replaced.keys().cloned().collect();
        for id in ids {
            self.flush_replaced(&id);
        }
        let mut batch = self.external.0;
        for (k, w) in self.writes {
            match w {
                Some(v) => batch.insert(k, v),
                None => batch.remove(k),
            }
        }
        for (name, value) in self.counters {
            batch.insert(keys::counter(name), value.to_be_bytes());
        }
        for (name, delta) in self.added {
            batch.add(keys::counter(name), delta as i64);
        }
        super::rollup::add_to_batch(&mut batch, self.rollups);
        if self.store.db.pg().is_some() {
            let moves = std::mem::take(&mut self.line_moves);
            super::attribution::move_lines_into(&self.store, &moves, &mut batch)?;
        }
        // On sled a unit is one atomic batch only if all of it is sled's:
        // the journal's commit would be durable before sled's flush.
        debug_assert!(
            self.store.db.pg().is_some()
                || !batch
                    .ops
                    .iter()
                    .any(|op| super::engine::journal::holds(op.key())),
            "a unit wrote a key of the inbox's journal"
        );
        let epoch = match self.store.db.pg() {
            Some(pg) => pg.commit_unit(batch, expect)?,
            None => self.store.db.apply_batch(batch).map(|_| None)?,
        };
        for (old, new) in &self.line_moves {
            super::attribution::move_lines(&self.store, old.as_ref(), new.as_ref())?;
        }
        Ok(epoch)
    }

    /// The engine the unit runs on (`store::prefetch`).
    pub(super) fn engine(&self) -> &super::Engine {
        &self.store.db
    }

    /// Set a durable counter (written once, at commit).
    pub fn set_counter(&mut self, name: &'static str, value: u64) {
        self.counters.insert(name, value);
    }

    /// True when the unit runs on PostgreSQL (shared with other replicas).
    pub fn is_shared(&self) -> bool {
        self.store.db.is_pg()
    }

    /// Take the lock on `key` (an output id, a target) for the rest of the
    /// unit, if no other replica's unit holds it; never waits. Always true
    /// on sled (one worker); on PostgreSQL a transaction-scoped advisory
    /// lock (`pg_try_advisory_xact_lock`).
    pub fn try_lock(&self, key: &str) -> Result<bool> {
        match self.store.db.pg() {
            Some(pg) => pg.try_xact_lock(key),
            None => Ok(true),
        }
    }

    /// Inbox items to process, oldest first, from `from`: on sled read
    /// (`Store::inbox_items`); on PostgreSQL claimed for this unit with
    /// `FOR UPDATE SKIP LOCKED` (what other replicas hold is skipped).
    pub fn claim_inbox(&self, from: u64, limit: usize) -> Result<Vec<(u64, Vec<u8>)>> {
        let Some(pg) = self.store.db.pg() else {
            return self.store.inbox_items(from, limit);
        };
        Ok(pg
            .claim(
                keys::inbox_queue(from),
                keys::INBOX_QUEUE_END.to_vec(),
                limit,
            )?
            .into_iter()
            .filter_map(|(k, v)| keys::inbox_seq(&k).map(|seq| (seq, v)))
            .collect())
    }

    /// Checkpoints due at or before `now`, at most `limit`, claimed for
    /// this unit on PostgreSQL like `claim_inbox`.
    pub fn claim_due(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<(DateTime<Utc>, String)>> {
        let Some(pg) = self.store.db.pg() else {
            return self.store.due_checkpoints(now, limit);
        };
        let end = keys::schedule(now, "\u{10FFFF}");
        Ok(pg
            .claim(keys::SCHEDULE.to_vec(), end, limit)?
            .into_iter()
            .filter_map(|(k, _)| keys::parse_schedule(&k))
            .collect())
    }

    /// Count `count` more inbox items processed, `base` being the count
    /// this worker knew: on sled the new total, on PostgreSQL an addition.
    pub fn count_processed(&mut self, base: u64, count: u64) {
        if self.is_shared() {
            *self.added.entry(counter::PROCESSED).or_default() += count;
        } else {
            self.set_processed(base + count);
        }
    }

    /// Remove a processed item from the inbox. On sled, where items are
    /// processed in order by one worker, the unit records that it processed
    /// through `seq` (`counter::INBOX_DONE`): the unit writes nothing of the
    /// journal, which drops the item once this commit is flushed
    /// (`Store::release_inbox_through`).
    pub fn remove_inbox_item(&mut self, seq: u64) {
        if self.is_shared() {
            self.remove(keys::inbox_queue(seq));
        } else {
            self.set_counter(counter::INBOX_DONE, seq);
        }
    }

    /// Mark all inbox items up to `processed` processed (the counter).
    pub(crate) fn set_processed(&mut self, processed: u64) {
        self.set_counter(counter::PROCESSED, processed);
    }

    /// File an observation under `target` (its key is deterministic:
    /// filing it again overwrites it).
    pub fn put_observation(&mut self, target: &str, obs: &Observation) {
        self.insert(
            keys::observation(target, obs.at, &obs.id),
            super::codec::encode_observation(obs),
        );
    }

    /// Threads (PRs) whose head is the given branch or commit.
    pub fn threads_on_ref(&self, ref_key: &str) -> Result<Vec<String>> {
        self.suffixes(&keys::threads_on_ref(ref_key))
    }

    /// Link a branch or commit to a PR thread.
    pub fn link(&mut self, ref_key: &str, thread: &str) {
        self.insert(keys::ref_link(ref_key, thread), Vec::new());
    }

    /// Ids of the outputs watching a target.
    pub fn outputs_on(&self, target: &str) -> Result<Vec<String>> {
        self.suffixes(&keys::outputs_on(target))
    }

    /// The output of a given type already filed on a target, if any.
    pub fn output_of_type_on(&self, target: &str, output_type: &str) -> Result<Option<String>> {
        Ok(self
            .get_raw(&keys::type_index(target, output_type))?
            .map(|v| String::from_utf8_lossy(&v).into_owned()))
    }

    /// The output under `id` or its alias.
    pub fn output(&self, id: &str) -> Result<Option<StoredOutput>> {
        Ok(self.resolve(id)?.map(|(_, stored)| stored))
    }

    /// True when anything has been filed under any of the keys.
    pub fn has_observations(&self, targets: &[String]) -> Result<bool> {
        for t in targets {
            if !self.scan_raw(&keys::observations_of(t))?.is_empty() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Count an output's change into the rollups and move its time index
    /// entry: from what the unit holds under its key now to `new`.
    fn roll(&mut self, id: &str, new: Option<&StoredOutput>) -> Result<()> {
        let old = self.output_by_canonical(id)?;
        self.roll_between(old.as_ref(), new);
        Ok(())
    }

    /// `roll`, from `old`: what the unit holds under the output's key now.
    fn roll_between(&mut self, old: Option<&StoredOutput>, new: Option<&StoredOutput>) {
        let change = super::rollup::change(old, new);
        let cells = |o: Option<&StoredOutput>| o.and_then(super::attribution::line_cells);
        if cells(old) != cells(new) {
            self.line_moves.push((old.cloned(), new.cloned()));
        }
        self.rollups.extend(change.adds);
        if let Some(k) = change.index_removed {
            self.remove(k);
        }
        if let Some((k, v)) = change.index_added {
            self.insert(k, v);
        }
    }

    /// Store an output with its indexes (target → output, type on target),
    /// and its outcome in the rollups.
    pub fn put_output(&mut self, stored: &StoredOutput) -> Result<()> {
        self.flush_replaced(&stored.execution.id);
        self.roll(&stored.execution.id, Some(stored))?;
        self.put_indexes(stored);
        self.insert_output_record(stored);
        // An id with a record is canonical (`ReadStore::canonical`).
        self.remove(keys::alias(&stored.execution.id));
        Ok(())
    }

    /// An output's indexes: target → output, type on target.
    fn put_indexes(&mut self, stored: &StoredOutput) {
        let id = &stored.execution.id;
        for key in stored.execution.watch_keys() {
            let index = keys::target_index(&key, id);
            if !matches!(self.writes.get(&index), Some(Some(_))) {
                self.insert(index, Vec::new());
            }
        }
        if let Some(t) = &stored.execution.target {
            self.insert(
                keys::type_index(&t.key(), &stored.execution.output_type),
                id.as_bytes().to_vec(),
            );
        }
    }

    /// `put_output` for an output the caller found none of under its id
    /// (`Unit::output` answered none: no record, and no alias leading to
    /// one): on sled its record is neither read
    /// back to count the rollups nor encoded now, but held with the records
    /// replaced (`replace_output_record`), so that judging it in the same
    /// unit replaces it there, and it is counted into the rollups and
    /// encoded once, at commit. On PostgreSQL, `put_output`.
    pub fn put_new_output(&mut self, stored: &StoredOutput) -> Result<()> {
        if self.is_shared() {
            return self.put_output(stored);
        }
        let id = &stored.execution.id;
        debug_assert!(
            self.output(id)?.is_none(),
            "a new output has no record in the unit, nor an alias leading to one"
        );
        self.put_indexes(stored);
        // A dangling alias (its output merged away since) goes, as in
        // `put_output`.
        self.remove(keys::alias(id));
        self.hold_replaced(id, None, stored.clone());
        Ok(())
    }

    /// Hold `id`'s record, not replaced in this unit before, as `now`
    /// over `before`, to encode and count once (`flush_replaced`).
    fn hold_replaced(&mut self, id: &str, before: Option<StoredOutput>, now: StoredOutput) {
        let r = Box::new(Replaced { before, now });
        self.replaced.insert(id.to_string(), r);
        self.replaced_undo.push(ReplacedUndo::Added(id.to_string()));
    }

    /// Store only the output record (its indexes are unchanged; its outcome
    /// is counted in the rollups).
    pub fn put_output_record(&mut self, stored: &StoredOutput) -> Result<()> {
        self.flush_replaced(&stored.execution.id);
        self.roll(&stored.execution.id, Some(stored))?;
        self.insert_output_record(stored);
        Ok(())
    }

    /// `put_output_record` over `old`, the record the unit holds under the
    /// output's key now, as the caller knows it (the worker's cache, which
    /// answers like the store: `store::cache::OutputCache`): on sled, where
    /// the worker is the only writer and its caches never go stale, it is
    /// not read again. Reading and decoding it was 1.4 µs of an event's
    /// drain (`bench replay`, BENCHMARKS.md 2026-11-27 morning); debug
    /// builds check `old` against the unit. Nor is the record encoded or
    /// counted into the rollups now: an output reassessed for several
    /// events of one unit is encoded and counted once, at commit or before
    /// anything else writes its key (`flush_replaced`). On PostgreSQL another replica
    /// may have committed since the cache was filled (the commit's epoch
    /// check refuses the unit then): the record is read, as
    /// `put_output_record` does.
    pub fn replace_output_record(
        &mut self,
        old: &StoredOutput,
        stored: &StoredOutput,
    ) -> Result<()> {
        if self.is_shared() {
            return self.put_output_record(stored);
        }
        debug_assert_eq!(
            self.output_by_canonical(&stored.execution.id)?.as_ref(),
            Some(old),
            "the record replaced is the one the unit holds"
        );
        let id = &stored.execution.id;
        match self.replaced.get_mut(id) {
            Some(r) => {
                let before = std::mem::replace(&mut r.now, stored.clone());
                self.replaced_undo
                    .push(ReplacedUndo::Now(id.clone(), Box::new(before)));
            }
            None => self.hold_replaced(id, Some(old.clone()), stored.clone()),
        }
        Ok(())
    }

    fn insert_output_record(&mut self, stored: &StoredOutput) {
        self.insert(
            keys::output(&stored.execution.id),
            super::codec::encode_output(stored),
        );
    }

    fn put_record<T: Serialize>(&mut self, key: Vec<u8>, value: &T) {
        self.insert(key, encode(value));
    }

    /// An output merged into another: `old_id` becomes an alias of `new_id`
    /// and leaves the indexes of `watch_keys`.
    pub fn retire_output(
        &mut self,
        old_id: &str,
        new_id: &str,
        watch_keys: &[String],
    ) -> Result<()> {
        self.flush_replaced(old_id);
        self.roll(old_id, None)?;
        self.remove(keys::output(old_id));
        self.insert(keys::alias(old_id), new_id.as_bytes().to_vec());
        for key in watch_keys {
            self.remove(keys::target_index(key, old_id));
        }
        Ok(())
    }

    /// Schedule an output's next checkpoint. Not read first: the worker
    /// schedules only a checkpoint its output's record does not show as
    /// scheduled (`app::worker::reassess`), and on PostgreSQL the empty
    /// value is written with `ON CONFLICT DO NOTHING`.
    pub fn schedule(&mut self, due: DateTime<Utc>, output_id: &str) {
        self.insert(keys::schedule(due, output_id), Vec::new());
    }

    /// Remove a taken checkpoint.
    pub fn unschedule(&mut self, due: DateTime<Utc>, output_id: &str) {
        self.remove(keys::schedule(due, output_id));
    }

    /// Move inbox item `seq` (its stored bytes) to the dead letters.
    pub fn dead_letter(
        &mut self,
        seq: u64,
        bytes: &[u8],
        error: String,
        attempts: u32,
        now: DateTime<Utc>,
    ) {
        let letter = super::dead_letters::DeadLetter::new(seq, bytes, error, attempts, now);
        self.put_record(keys::dead_letter(seq), &letter);
        self.remove_inbox_item(seq);
    }

    /// Remove a staged manifest chunk (applied, or undecodable).
    pub fn remove_staged_chunk(&mut self, upload: u64, chunk: u32) {
        self.remove(keys::staged_chunk(upload, chunk));
    }

    /// The upload's inbox item is processed: its chunks may be swept. On
    /// sled the journal drops the marker with the item (it holds the item's
    /// sequence).
    pub fn uncommit_upload(&mut self, upload: u64) {
        if self.is_shared() {
            self.remove(keys::manifest_committed(upload));
        }
    }
}

/// The inbox items waiting, oldest first, from sequence `from`: at most
/// `limit` of them, as (sequence, stored bytes).
impl Store {
    pub(crate) fn inbox_items(&self, from: u64, limit: usize) -> Result<Vec<(u64, Vec<u8>)>> {
        let mut out = Vec::new();
        let from = from.max(self.queue_start());
        // Bounded by the queue's prefix: on sled a range within the
        // journal's keys reads only the journal (`engine::sled_range`).
        for item in self
            .db
            .range(keys::inbox_queue(from)..keys::INBOX_QUEUE_END.to_vec())
        {
            let (k, v) = item?;
            let Some(seq) = keys::inbox_seq(&k) else {
                break;
            };
            out.push((seq, v.to_vec()));
            if out.len() >= limit {
                break;
            }
        }
        Ok(out)
    }

    /// Checkpoints due at or before `now`, at most `limit`: (due, output id).
    pub fn due_checkpoints(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<(DateTime<Utc>, String)>> {
        let end = keys::schedule(now, "\u{10FFFF}");
        let mut out = Vec::new();
        for item in self.db.range(keys::SCHEDULE.to_vec()..end).take(limit) {
            let (k, _) = item?;
            out.extend(keys::parse_schedule(&k));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use safe_outcomes_model::{ObservationKind, OutcomeStatus};

    /// A new store in a directory of its own (dropped with it).
    fn fresh() -> (tempfile::TempDir, Store) {
        let (dir, store) = crate::temp_store();
        (dir, store)
    }

    /// The ids of what is filed under `target`, in stored order.
    fn ids(reads: &impl ReadStore, target: &str) -> Vec<String> {
        let all = reads.observations_of(target).unwrap();
        all.into_iter().map(|o| o.id).collect()
    }

    fn obs(id: &str, secs: i64) -> Observation {
        Observation {
            id: id.into(),
            at: DateTime::from_timestamp(1_800_000_000 + secs, 0).unwrap(),
            target: "o/r#1".into(),
            actor: None,
            event: ObservationKind::Opened,
            snapshot: None,
        }
    }

    #[test]
    fn a_unit_reads_its_own_writes_and_commits_them_all_at_once() {
        let (_dir, store) = fresh();
        let mut first = store.begin();
        first.put_observation("o/r#1", &obs("a", 1));
        first.commit().unwrap();
        let mut unit = store.begin();
        unit.put_observation("o/r#1", &obs("b", 2));
        unit.link("o/r@main", "o/r#1");
        assert_eq!(
            ids(&unit, "o/r#1"),
            ["a", "b"],
            "committed and own writes, in order"
        );
        assert_eq!(unit.threads_on_ref("o/r@main").unwrap(), ["o/r#1"]);
        assert_eq!(store.observations_of("o/r#1").unwrap().len(), 1);
        unit.commit().unwrap();
        assert_eq!(store.observations_of("o/r#1").unwrap().len(), 2);
        assert_eq!(store.threads_on_ref("o/r@main").unwrap(), ["o/r#1"]);
    }

    #[test]
    fn rolling_back_to_a_savepoint_undoes_only_what_followed() {
        let (_dir, store) = fresh();
        let mut unit = store.begin();
        unit.put_observation("o/r#1", &obs("kept", 1));
        let sp = unit.savepoint();
        unit.put_observation("o/r#1", &obs("undone", 2));
        unit.put_observation("o/r#1", &obs("kept", 1));
        unit.link("o/r@x", "o/r#1");
        unit.rollback_to(sp);
        unit.commit().unwrap();
        assert_eq!(ids(&store, "o/r#1"), ["kept"]);
        assert!(store.threads_on_ref("o/r@x").unwrap().is_empty());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// What one read of a target finds is what its two scans find, on
        /// the store and on a unit over it, whatever is committed and what
        /// the unit wrote or removed since, with targets whose keys extend
        /// one another (`o/r#1`, `o/r#10`) side by side.
        #[test]
        fn one_read_of_a_target_finds_what_its_two_scans_find(
            ops in proptest::collection::vec((0usize..4, 0u8..3, 0u8..6, proptest::bool::ANY), 0..40),
        ) {
            const TARGETS: [&str; 4] = ["o/r#1", "o/r#10", "o/r#1@x", "o/r#"];
            let (_dir, store) = fresh();
            let mut committed = store.begin();
            let mut unit = None::<Unit>;
            for (t, kind, n, in_unit) in ops {
                if in_unit && unit.is_none() {
                    std::mem::replace(&mut committed, store.begin()).commit().unwrap();
                    unit = Some(store.begin());
                }
                let writer = match unit.as_mut() {
                    Some(u) if in_unit => u,
                    _ => &mut committed,
                };
                let target = TARGETS[t];
                match kind {
                    0 => writer.put_observation(
                        target,
                        &Observation { target: target.into(), ..obs(&format!("b{n}"), n.into()) },
                    ),
                    1 => writer.insert(keys::target_index(target, &format!("o/r:{n}:0")), Vec::new()),
                    _ => writer.remove(keys::target_index(target, &format!("o/r:{n}:0"))),
                }
            }
            committed.commit().unwrap();
            let unit = unit.unwrap_or_else(|| store.begin());
            for target in TARGETS {
                for reads in [&store as &dyn ReadStore, &unit] {
                    let one = reads.target_entries(target).unwrap();
                    proptest::prop_assert_eq!(&one.observations, &reads.observations_of(target).unwrap());
                    proptest::prop_assert_eq!(&one.outputs, &reads.suffixes(&keys::outputs_on(target)).unwrap());
                }
            }
        }
    }

    /// One step of an item in `replacing_a_record_writes_what_putting_it_writes`.
    #[derive(Debug, Clone)]
    enum Step {
        /// Give output `n` a new outcome (status, workflow).
        Judge(u8, u8, u8),
        /// File output `n` again, indexes and all.
        Put(u8),
        /// Merge output `n` into output 0.
        Retire(u8),
        /// Register output `n` if it has no record or alias yet, judged
        /// `status` (the worker registers outputs unjudged; the rule holds
        /// for any record).
        New(u8, Option<u8>),
    }

    fn step() -> impl proptest::strategy::Strategy<Value = Step> {
        use proptest::prelude::*;
        prop_oneof![
            6 => (0u8..5, 0u8..6, 0u8..2).prop_map(|(n, s, w)| Step::Judge(n, s, w)),
            1 => (0u8..5).prop_map(Step::Put),
            1 => (1u8..5).prop_map(Step::Retire),
            2 => (3u8..5, proptest::option::of(0u8..6)).prop_map(|(n, s)| Step::New(n, s)),
        ]
    }

    /// Run `items` (each its steps, then kept or rolled back) in one unit,
    /// new outcomes written with `replace_output_record` and new outputs
    /// with `put_new_output`, or else with `put_output_record` and
    /// `put_output`; every key of the store after the commit. Outputs 0–2
    /// are on record before the unit, 3 and 4 are not.
    fn run_items(items: &[(Vec<Step>, bool)], replace: bool) -> Vec<(Vec<u8>, Vec<u8>)> {
        let (_dir, store) = fresh();
        let id = |n: u8| format!("o/r:{n}:0");
        let mut first = store.begin();
        for n in 0..3 {
            first.put_output(&crate::test_output(&id(n), "w")).unwrap();
        }
        first.commit().unwrap();
        let mut unit = store.begin();
        for (steps, kept) in items {
            let sp = unit.savepoint();
            for step in steps {
                match *step {
                    Step::Judge(n, status, workflow) => {
                        let Some(old) = unit.output_by_canonical(&id(n)).unwrap() else {
                            continue;
                        };
                        let status = OutcomeStatus::ALL[usize::from(status)].as_str();
                        let workflow = ["w", "v"][usize::from(workflow)];
                        let mut new = crate::test_judged_output(&id(n), workflow, status);
                        new.execution.workflow = old.execution.workflow.clone();
                        if replace {
                            unit.replace_output_record(&old, &new).unwrap();
                        } else {
                            unit.put_output_record(&new).unwrap();
                        }
                    }
                    Step::Put(n) => {
                        if let Some(old) = unit.output_by_canonical(&id(n)).unwrap() {
                            unit.put_output(&old).unwrap();
                        }
                    }
                    Step::Retire(n) => {
                        if unit.output_by_canonical(&id(n)).unwrap().is_some() {
                            unit.retire_output(&id(n), &id(0), &[]).unwrap();
                        }
                    }
                    Step::New(n, status) => {
                        if unit.output(&id(n)).unwrap().is_none() {
                            let mut new = match status {
                                None => crate::test_output(&id(n), "w"),
                                Some(s) => crate::test_judged_output(
                                    &id(n),
                                    "w",
                                    OutcomeStatus::ALL[usize::from(s)].as_str(),
                                ),
                            };
                            // On an issue of its own: indexed by target and type.
                            new.execution.target = Some(
                                serde_json::from_value(serde_json::json!({
                                    "repo": "o/r", "kind": "issue", "number": n,
                                }))
                                .unwrap(),
                            );
                            if replace {
                                unit.put_new_output(&new).unwrap();
                            } else {
                                unit.put_output(&new).unwrap();
                            }
                        }
                    }
                }
            }
            if !kept {
                unit.rollback_to(sp);
            }
        }
        unit.commit().unwrap();
        store.scan_raw(b"").unwrap()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]
        /// A record replaced several times in a unit, through savepoints
        /// rolled back or kept and other writes of its key, leaves the store
        /// (records, rollups, time index) as writing it out at once each
        /// time does: encoding and counting it once, at commit, changes
        /// nothing but the cost. So does a new output registered without
        /// reading its record back or encoding it (`put_new_output`).
        #[test]
        fn replacing_a_record_writes_what_putting_it_writes(
            items in proptest::collection::vec(
                (proptest::collection::vec(step(), 1..4), proptest::bool::weighted(0.8)),
                1..12,
            ),
        ) {
            proptest::prop_assert_eq!(run_items(&items, true), run_items(&items, false));
        }
    }

    #[test]
    fn a_dropped_unit_writes_nothing() {
        let (_dir, store) = fresh();
        let mut unit = store.begin();
        unit.put_observation("o/r#1", &obs("a", 1));
        unit.set_processed(7);
        drop(unit);
        assert!(store.observations_of("o/r#1").unwrap().is_empty());
        assert_eq!(store.counter(counter::PROCESSED), 0);
    }
}
