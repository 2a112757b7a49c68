//! Offline compaction. sled keeps superseded versions of rewritten nodes in
//! its log until it reclaims whole segments, so a store that has run for a
//! while takes several times the bytes of its live records. `compact` copies
//! the live records into a fresh store beside the old one and swaps it in.
//! The server must be stopped (sled's lock refuses a second opener).
//!
//! The swap is two renames: `DIR` → `DIR.compact-old`, then the copy →
//! `DIR`. If the process dies between them, `DIR` is missing and
//! `Store::open` refuses to create an empty store in its place (see
//! `interrupted_compaction`), so nothing is silently lost.

use std::path::{Path, PathBuf};

use super::engine::{Batch, Engine};
use super::{Store, StoreError};

/// Records copied per sled batch.
const COPY_BATCH: usize = 10_000;

/// What a compaction did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compacted {
    pub records: u64,
    pub bytes_before: u64,
    pub bytes_after: u64,
    /// False when the copy came out larger and the store was kept as it
    /// was (`bytes_after` is then the copy's size, removed).
    pub swapped: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum CompactError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Io(String),
    #[error("{0}")]
    Interrupted(String),
    #[error("no store at {0} (DATA_DIR is the directory that holds `store/`)")]
    NoStore(String),
    #[error("the copy has {copied} records, the store {expected}: nothing was swapped")]
    Mismatch { copied: u64, expected: u64 },
}

fn sibling(dir: &Path, suffix: &str) -> PathBuf {
    let mut name = dir.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    dir.with_file_name(name)
}

/// Where a compaction keeps the old store while it swaps the new one in.
pub fn old_dir(dir: &Path) -> PathBuf {
    sibling(dir, ".compact-old")
}

fn copy_dir(dir: &Path) -> PathBuf {
    sibling(dir, ".compact-new")
}

/// An error when `dir` is missing because a compaction stopped between its
/// two renames: the store is in `DIR.compact-old` (the old one, whole).
pub(crate) fn interrupted_compaction(dir: &Path) -> Option<String> {
    let old = old_dir(dir);
    (!dir.exists() && old.exists()).then(|| {
        format!(
            "{} is missing but {} exists: a compaction was interrupted. \
             Rename {} back to {} and run it again.",
            dir.display(),
            old.display(),
            old.display(),
            dir.display()
        )
    })
}

fn io(what: &str, path: &Path, e: std::io::Error) -> CompactError {
    CompactError::Io(format!("{what} {}: {e}", path.display()))
}

/// Copy the live records of the store in `dir` into a fresh store and swap
/// it in. The old store is removed only once the copy is complete and flushed.
pub fn compact(dir: &Path) -> Result<Compacted, CompactError> {
    compact_waiting(dir, super::STORE_LOCK_WAIT)
}

/// `compact`, waiting up to `wait` for a stopping instance's lock.
fn compact_waiting(dir: &Path, wait: std::time::Duration) -> Result<Compacted, CompactError> {
    if let Some(message) = interrupted_compaction(dir) {
        return Err(CompactError::Interrupted(message));
    }
    // Opening a path that holds no store would make an empty one there.
    if !dir.join("conf").is_file() {
        return Err(CompactError::NoStore(dir.display().to_string()));
    }
    let new_dir = copy_dir(dir);
    if new_dir.exists() {
        // A copy left by an earlier attempt that stopped before its swap.
        std::fs::remove_dir_all(&new_dir).map_err(|e| io("removing", &new_dir, e))?;
    }
    // The store's size as it stands, before opening it writes a snapshot.
    let bytes_before = dir_bytes(dir);
    let (records, bytes_after) = copy_live(dir, &new_dir, wait)?;
    if bytes_after > bytes_before {
        // Already compact: sled's fresh log weighs more than what the old
        // one holds (see `copy_live`). Keep the store as it is.
        std::fs::remove_dir_all(&new_dir).map_err(|e| io("removing", &new_dir, e))?;
        return Ok(Compacted {
            records,
            bytes_before,
            bytes_after,
            swapped: false,
        });
    }
    let old_dir = old_dir(dir);
    std::fs::rename(dir, &old_dir).map_err(|e| io("moving", dir, e))?;
    std::fs::rename(&new_dir, dir).map_err(|e| io("moving", &new_dir, e))?;
    std::fs::remove_dir_all(&old_dir).map_err(|e| io("removing", &old_dir, e))?;
    Ok(Compacted {
        records,
        bytes_before,
        bytes_after,
        swapped: true,
    })
}

/// Copy every live record of the store in `dir` — the main key space with
/// the inbox's journal, and every named tree (`attribution`) — into a
/// fresh store in `new_dir`, flush it, and return the records copied and
/// the copy's bytes once both stores are closed.
fn copy_live(
    dir: &Path,
    new_dir: &Path,
    wait: std::time::Duration,
) -> Result<(u64, u64), CompactError> {
    let records = {
        // Compaction is of sled's files, whatever SAFE_OUTCOMES_TEST_PG says.
        let old = Store::open_sled_waiting(dir, wait)?;
        let new = Store::open_sled(new_dir)?;
        let mut records = copy_all(old.db().iter(), |b| new.db().apply_batch(b))?;
        let copied = new.db().len() as u64;
        if copied != records {
            return Err(CompactError::Mismatch {
                copied,
                expected: records,
            });
        }
        if let Engine::Sled(from) = old.db() {
            let names = from.with(|parts| Ok(parts.db.tree_names()))?;
            let main = from.with(|parts| Ok(parts.db.name()))?;
            for name in names.into_iter().filter(|name| *name != main) {
                let to = new.db().open_tree(&String::from_utf8_lossy(&name))?;
                let from = from.with(|parts| Ok(parts.db.open_tree(&name)?))?;
                let items = from.iter().map(|r| r.map_err(StoreError::from));
                records += copy_all(items, |b| to.apply_batch(b))?;
            }
        }
        new.flush()?;
        records
    };
    // Closed: the size of the files as they stay.
    Ok((records, dir_bytes(new_dir)))
}

/// Copy `items` with `apply`, in batches of `COPY_BATCH`; returns how many.
fn copy_all<K: AsRef<[u8]>, V: AsRef<[u8]>>(
    items: impl Iterator<Item = super::Result<(K, V)>>,
    apply: impl Fn(Batch) -> super::Result<()>,
) -> Result<u64, CompactError> {
    let mut records = 0u64;
    let mut batch = Batch::default();
    for item in items {
        let (k, v) = item?;
        batch.insert(k, v);
        records += 1;
        if batch.len() == COPY_BATCH {
            apply(std::mem::take(&mut batch))?;
        }
    }
    apply(batch)?;
    Ok(records)
}

/// Bytes of the files under `dir` (and its subdirectories).
pub(crate) fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ReadStore;

    fn fill(dir: &Path) -> Vec<(Vec<u8>, Vec<u8>)> {
        let store = Store::open_sled(dir).unwrap();
        // Rewrite every record a few times: the log keeps the old versions.
        for round in 0..4u8 {
            for i in 0..2_000u32 {
                let value = vec![round; 300];
                store
                    .db()
                    .insert(format!("o/acme/r:{i}:0").as_bytes(), value)
                    .unwrap();
            }
        }
        store.flush().unwrap();
        store.scan_raw(b"").unwrap()
    }

    #[test]
    fn compaction_keeps_every_record_and_takes_less_room() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("data");
        let before = fill(&dir);
        let done = compact(&dir).unwrap();
        assert!(done.swapped, "{done:?}");
        assert_eq!(done.records, before.len() as u64);
        assert!(done.bytes_after < done.bytes_before, "{done:?}: no smaller");
        let store = Store::open_sled_waiting(&dir, super::super::STORE_LOCK_WAIT).unwrap();
        let after: Vec<_> = store
            .db()
            .iter()
            .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
            .collect();
        assert_eq!(after, before);
        assert!(!old_dir(&dir).exists() && !copy_dir(&dir).exists());
    }

    /// Half the records deleted, a named tree beside: the store never
    /// grows, and keeps every live record of both.
    #[test]
    fn compaction_never_grows_a_store_and_keeps_the_named_trees() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("data");
        fill(&dir);
        {
            let store = Store::open_sled(&dir).unwrap();
            for i in (0..2_000u32).step_by(2) {
                store.db().remove(format!("o/acme/r:{i}:0")).unwrap();
            }
            let tree = store.db().open_tree("attribution").unwrap();
            let mut batch = Batch::default();
            batch.insert(b"run/1", b"bot");
            tree.apply_batch(batch).unwrap();
            store.flush().unwrap();
        }
        for round in 0..2 {
            let before = dir_bytes(&dir);
            let done = compact(&dir).unwrap();
            assert_eq!(done.bytes_before, before, "round {round}");
            assert!(dir_bytes(&dir) <= before, "round {round}: {done:?}");
            assert_eq!(done.swapped, done.bytes_after <= before, "{done:?}");
            let store = Store::open_sled_waiting(&dir, super::super::STORE_LOCK_WAIT).unwrap();
            assert_eq!(store.db().scan_prefix(b"o/").count(), 1_000);
            let tree = store.db().open_tree("attribution").unwrap();
            let kept: Vec<_> = tree.range(b"".to_vec(), b"z".to_vec()).collect();
            assert_eq!(kept.len(), 1, "the attribution tree was copied");
        }
    }

    #[test]
    fn an_interrupted_swap_is_refused_not_replaced_by_an_empty_store() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("data");
        fill(&dir);
        // Stopped between the two renames.
        std::fs::rename(&dir, old_dir(&dir)).unwrap();
        let e = Store::open_sled(&dir).err().expect("refused");
        assert!(e.to_string().contains("compaction was interrupted"), "{e}");
        assert!(matches!(compact(&dir), Err(CompactError::Interrupted(_))));
        assert!(!dir.exists(), "no empty store was created");
    }

    #[test]
    fn a_path_without_a_store_is_refused_and_left_alone() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("nothing-here");
        let e = compact(&dir).unwrap_err();
        assert!(matches!(e, CompactError::NoStore(_)), "{e}");
        assert!(e.to_string().contains("no store at"), "{e}");
        assert!(!dir.exists());
    }

    #[test]
    fn a_store_in_use_is_not_compacted() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("data");
        fill(&dir);
        let _running = Store::open_sled_waiting(&dir, super::super::STORE_LOCK_WAIT).unwrap();
        let short = std::time::Duration::from_millis(200);
        assert!(compact_waiting(&dir, short).is_err());
        assert!(!old_dir(&dir).exists());
    }
}
