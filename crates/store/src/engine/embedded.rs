//! The embedded engine's files as one open set: sled's tree and the
//! inbox's journal (`journal`), opened together and, after an I/O error,
//! closed and reopened together (`store::heal`). `Engine::Sled` reaches
//! them through a `heal::Handle`, one cheap load per operation; each set
//! carries the generation it was opened as (0 at start, one more per
//! reopen), so a unit of work begun on one set never writes to the next.

use std::ops::Bound;

use super::{apply_sled, journal, prefix_end, Batch, Bytes, Iter, IterInner, Merge, Op, Tree};
use crate::{counter, keys, Result};

/// sled's tree and the inbox's journal of one opening of the store.
pub(crate) struct Embedded {
    pub db: sled::Db,
    pub journal: journal::Journal,
    /// Which opening of the store this is (0 at start).
    pub generation: u64,
    /// What sled's additions last left (`added`): every write to `db`
    /// below keeps it right.
    pub added: super::added::Added,
}

impl Embedded {
    pub fn get(&self, key: &[u8]) -> Result<Option<Bytes>> {
        if journal::holds(key) {
            return Ok(self.journal.get(key)?.map(Bytes::Owned));
        }
        Ok(self.db.get(key)?.map(Bytes::Sled))
    }

    pub fn contains_key(&self, key: &[u8]) -> Result<bool> {
        if journal::holds(key) {
            return Ok(self.journal.get(key)?.is_some());
        }
        Ok(self.db.contains_key(key)?)
    }

    pub fn insert(&self, key: &[u8], value: &[u8]) -> Result<()> {
        if journal::holds(key) {
            return self
                .journal
                .apply(vec![Op::Insert(key.to_vec(), value.to_vec())]);
        }
        let mut added = self.added.lock();
        self.db.insert(key, value)?;
        added.forget(key);
        Ok(())
    }

    pub fn remove(&self, key: &[u8]) -> Result<()> {
        if journal::holds(key) {
            return self.journal.apply(vec![Op::Remove(key.to_vec())]);
        }
        let mut added = self.added.lock();
        self.db.remove(key)?;
        added.forget(key);
        Ok(())
    }

    /// Remove `key` and return what it held, atomically.
    pub fn take(&self, key: &[u8]) -> Result<Option<Bytes>> {
        if journal::holds(key) {
            return Ok(self.journal.take(key)?.map(Bytes::Owned));
        }
        let mut added = self.added.lock();
        let taken = self.db.remove(key)?.map(Bytes::Sled);
        added.forget(key);
        Ok(taken)
    }

    /// Every key starting with `prefix`, in key order.
    pub(crate) fn scan_prefix(&self, prefix: &[u8]) -> Iter {
        let end = prefix_end(prefix).map_or(Bound::Unbounded, Bound::Excluded);
        self.range(Bound::Included(prefix.to_vec()), end)
    }

    /// A range: from sled, from the journal, or both merged, depending on
    /// which holds keys in it.
    pub fn range(&self, start: Bound<Vec<u8>>, end: Bound<Vec<u8>>) -> Iter {
        if journal::within(&start, &end) {
            return Iter(IterInner::Journal(self.journal.pages(start, end)));
        }
        if !journal::overlaps(&start, &end) {
            return Iter(IterInner::Sled(self.db.range::<Vec<u8>, _>((start, end))));
        }
        let sled = self.db.range::<Vec<u8>, _>((start.clone(), end.clone()));
        Iter(IterInner::Both(Box::new(Merge {
            sled: sled.peekable(),
            journal: self.journal.pages(start, end).peekable(),
        })))
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.db.len() + self.journal.visible_entries().unwrap_or(0)
    }

    /// The journal's keys are one commit of the journal, the rest one
    /// batch of sled's, in that order (`journal`: only offline tools write
    /// both at once).
    pub(crate) fn apply_batch(&self, batch: Batch) -> Result<()> {
        let (inbox, rest): (Vec<Op>, Vec<Op>) = batch
            .ops
            .into_iter()
            .partition(|op| journal::holds(op.key()));
        if !inbox.is_empty() {
            self.journal.apply(inbox)?;
        }
        if rest.is_empty() {
            return Ok(());
        }
        let processed = journal::processed_in(&rest);
        apply_sled(&self.db, Batch { ops: rest }, Some(&self.added))?;
        if let Some(seq) = processed {
            self.journal.set_processed(seq);
        }
        Ok(())
    }

    pub fn flush(&self) -> Result<()> {
        self.db.flush()?;
        Ok(())
    }

    pub(crate) fn generate_id(&self) -> Result<u64> {
        Ok(self.db.generate_id()?)
    }

    pub(crate) fn open_tree(&self, name: &str) -> Result<Tree> {
        Ok(Tree::Sled(self.db.open_tree(name)?))
    }

    /// Write to both files and make it durable: a reopened store is
    /// trusted again only once this passes (`heal`). It counts the reopen
    /// in sled (`counter::STORE_REOPENS`) and commits the journal.
    pub fn probe(&self) -> Result<()> {
        let key = keys::counter(counter::STORE_REOPENS);
        let before = self
            .db
            .get(&key)?
            .and_then(|v| v.as_ref().try_into().ok().map(u64::from_be_bytes))
            .unwrap_or(0);
        self.db.insert(&key, &(before + 1).to_be_bytes())?;
        self.added.lock().forget(&key);
        self.db.flush()?;
        self.journal.apply(Vec::new())
    }
}
