//! Moves of the key layout, made at open on a store written before them
//! (sled or PostgreSQL: the same keys), then the rollups' builds
//! (`Store::ensure_rollups`). Each move is idempotent and resumable: it
//! moves what is still under the old keys, a chunk per batch, and a store
//! with nothing there costs one empty range read.

use super::{engine::Batch, keys, Result, Store};

/// Keys moved per batch.
const MOVE_CHUNK: usize = 5_000;

impl Store {
    /// Bring a store written by an earlier version to this one's layout.
    pub(super) fn upgrade_at_open(&self) -> Result<()> {
        self.move_target_index()?;
        self.ensure_rollups()
    }

    /// The target index (target → outputs) moved from `x/<target>\0<id>`
    /// to `b/<target>\x01<id>`, beside the target's observations
    /// (`keys::outputs_on`), each rebuilt by `keys::target_index`; an entry
    /// no version of the App wrote (not text) is dropped. Returns the
    /// entries moved.
    pub(crate) fn move_target_index(&self) -> Result<u64> {
        let mut moved = 0;
        loop {
            let mut batch = Batch::default();
            for item in self
                .db
                .scan_prefix(keys::TARGET_INDEX_BEFORE)
                .take(MOVE_CHUNK)
            {
                let (key, _) = item?;
                let rest = &key[keys::TARGET_INDEX_BEFORE.len()..];
                let parts = rest.iter().position(|b| *b == 0).and_then(|nul| {
                    let target = std::str::from_utf8(&rest[..nul]).ok()?;
                    Some((target, std::str::from_utf8(&rest[nul + 1..]).ok()?))
                });
                if let Some((target, id)) = parts {
                    batch.insert(keys::target_index(target, id), []);
                }
                batch.remove(&key);
            }
            if batch.is_empty() {
                return Ok(moved);
            }
            moved += batch.len() as u64;
            self.db.apply_batch(batch)?;
        }
    }

    /// An entry of the target index as stores kept it before
    /// `move_target_index` (tests of the move).
    #[cfg(test)]
    pub(crate) fn put_target_index_as_before_for_tests(
        &self,
        target: &str,
        id: &str,
    ) -> Result<()> {
        let mut key = keys::TARGET_INDEX_BEFORE.to_vec();
        key.extend_from_slice(target.as_bytes());
        key.push(0);
        key.extend_from_slice(id.as_bytes());
        self.db.insert(key, [])
    }
}

#[cfg(test)]
mod tests {
    use crate::{test_output, ReadStore, Store};

    /// A store written before the move: its index entries are found where
    /// the index is now, none is left under `x/`, and opening again moves
    /// nothing.
    #[test]
    fn the_target_index_moves_beside_the_observations_at_open() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = Store::open(dir.path()).unwrap();
            let mut unit = store.begin();
            unit.put_output(&test_output("o/r:1:0", "w")).unwrap();
            unit.commit().unwrap();
            for n in 0..12_000 {
                let id = format!("o/r:{n}:1");
                store
                    .put_target_index_as_before_for_tests(&format!("o/r#{}", n % 7), &id)
                    .unwrap();
            }
            store.flush().unwrap();
        }
        let store = Store::open(dir.path()).unwrap();
        let on = |t: &str| store.outputs_on(t).unwrap();
        let mut all: Vec<String> = (0..7).flat_map(|t| on(&format!("o/r#{t}"))).collect();
        all.sort();
        let mut expected: Vec<String> = (0..12_000).map(|n| format!("o/r:{n}:1")).collect();
        expected.sort();
        assert_eq!(all, expected);
        assert_eq!(
            store.move_target_index().unwrap(),
            0,
            "nothing left to move"
        );
        assert_eq!(
            store.repeated_observations().unwrap(),
            0,
            "index entries are not read as observations"
        );
        assert!(store.observations_of("o/r#1").unwrap().is_empty());
    }
}
