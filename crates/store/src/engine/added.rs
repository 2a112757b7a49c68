//! What sled's additions last left in each key they add to (`Op::Add`'s
//! counters, `Op::AddAll`'s packed counts: the rollup cells and sums of
//! `store::rollup`, the `m/` counters), kept in memory so that an addition
//! does not read the key back from sled first. Every event that moves an
//! output's outcome adds to six rollup keys (its day, week and all-time
//! cell and sums cell, old and new), and without this each was a random
//! read of sled's tree: 8 of the 10 random reads an event cost at 100k
//! outputs (BENCHMARKS.md, `bench scale`'s "by key" row).
//!
//! One per opening of sled (`embedded::Embedded`): a reopened store starts
//! with it empty. It is right only because every write to sled's main tree
//! goes through `Embedded` (`apply_batch`, `insert`, `remove`, `take`),
//! which holds its lock across the read, the write and the update, so no
//! write lands between a value read here and the value written; sled's
//! `apply_batch` takes a process-wide write lock anyway, so batches were
//! one at a time before. Bounded by `CAP_BYTES` (keys and values): past it,
//! entries are dropped until a quarter is free, and read again from sled
//! when next added to.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

/// The most bytes (keys and values) kept: the rollups of a store of 1M
/// outputs over 500 repositories take 1.2 MB (`bench scale`'s live bytes).
pub(crate) const CAP_BYTES: usize = 16 * 1024 * 1024;

/// The values additions left, by key.
#[derive(Default)]
pub struct Added {
    inner: Mutex<Values>,
}

/// The values, and their size in bytes.
#[derive(Default)]
pub struct Values {
    map: HashMap<Vec<u8>, Vec<u8>>,
    bytes: usize,
}

impl Added {
    /// Hold the values while a write is read, made and remembered.
    pub fn lock(&self) -> MutexGuard<'_, Values> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Values {
    /// What the last addition to `key` left, if it is remembered.
    pub fn get(&self, key: &[u8]) -> Option<&Vec<u8>> {
        self.map.get(key)
    }

    /// Remember what an addition left in `key` (empty: nothing).
    pub fn put(&mut self, key: Vec<u8>, value: Vec<u8>) {
        let size = key.len() + value.len();
        if let Some(old) = self.map.insert(key.clone(), value) {
            self.bytes -= key.len() + old.len();
        }
        self.bytes += size;
        if self.bytes > CAP_BYTES {
            self.shrink();
        }
    }

    /// Forget `key`: something other than an addition wrote it.
    pub fn forget(&mut self, key: &[u8]) {
        if let Some(old) = self.map.remove(key) {
            self.bytes -= key.len() + old.len();
        }
    }

    /// Drop entries (in the map's own order) until a quarter is free.
    fn shrink(&mut self) {
        let goal = CAP_BYTES / 4 * 3;
        let drop: Vec<Vec<u8>> = self
            .map
            .iter()
            .scan(self.bytes, |bytes, (k, v)| {
                (*bytes > goal).then(|| {
                    *bytes -= k.len() + v.len();
                    k.clone()
                })
            })
            .collect();
        for k in drop {
            self.forget(&k);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_kept_stays_under_the_cap() {
        let added = Added::default();
        let mut v = added.lock();
        for i in 0..100_000u32 {
            v.put(i.to_be_bytes().to_vec(), vec![0; 300]);
            assert!(v.bytes <= CAP_BYTES);
        }
        let counted: usize = v.map.iter().map(|(k, v)| k.len() + v.len()).sum();
        assert_eq!(counted, v.bytes);
        v.put(b"k".to_vec(), b"1".to_vec());
        v.put(b"k".to_vec(), b"22".to_vec());
        assert_eq!(v.get(b"k"), Some(&b"22".to_vec()));
        v.forget(b"k");
        assert_eq!(v.get(b"k"), None);
    }
}
