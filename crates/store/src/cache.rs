//! Decoded records the worker touched lately: what is filed under targets
//! (their observations, the outputs watching them), and outputs. The worker
//! is the only writer of all of them, so it keeps these caches in step with
//! its own writes; decoding a target's observations, or an output, again for
//! every event on it was the largest single cost of processing a delivery.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};

#[cfg(test)]
use super::keys;
use super::unit::{ReadStore, TargetEntries};
use super::{Result, StoredOutput};
use safe_outcomes_model::Observation;

/// Targets kept (first in, first out): a few MiB.
const CACHED_TARGETS: usize = 4096;

/// Outputs kept (first in, first out): a few KiB each decoded.
const CACHED_OUTPUTS: usize = 4096;

/// A map that forgets its oldest entries beyond a bound.
struct Bounded<V> {
    map: HashMap<String, V>,
    order: VecDeque<String>,
    capacity: usize,
}

impl<V> Bounded<V> {
    fn new(capacity: usize) -> Self {
        Bounded {
            map: HashMap::new(),
            order: VecDeque::new(),
            capacity,
        }
    }

    fn insert(&mut self, key: &str, value: V) {
        if self.map.insert(key.to_string(), value).is_none() {
            // A key removed and put back may sit twice in `order`: the stale
            // place only makes it leave a little early.
            while self.order.len() >= self.capacity {
                match self.order.pop_front() {
                    Some(old) if old != key => {
                        self.map.remove(&old);
                    }
                    Some(_) => {}
                    None => break,
                }
            }
            self.order.push_back(key.to_string());
        }
    }

    fn clear(&mut self) {
        self.map.clear();
        self.order.clear();
    }
}

/// The sort key sled keeps observations under: (time in ms, id).
fn sled_order(o: &Observation) -> (i64, &str) {
    (o.at.timestamp_millis(), o.id.as_str())
}

/// What is filed under targets: their observations and the outputs
/// watching them, read together (`ReadStore::target_entries`); and the
/// links of refs to threads known to exist (`Unit::link`: a link is never
/// removed, so only links found are kept).
pub struct ObservationCache {
    by_target: Bounded<TargetEntries>,
    linked: Bounded<()>,
}

impl Default for ObservationCache {
    fn default() -> Self {
        ObservationCache {
            by_target: Bounded::new(CACHED_TARGETS),
            linked: Bounded::new(CACHED_TARGETS),
        }
    }
}

/// How `ObservationCache::linked` keys a link (a key from outside holds no
/// control character, `model::ids`).
fn link_key(ref_key: &str, thread: &str) -> String {
    format!("{ref_key}\0{thread}")
}

impl ObservationCache {
    /// Note an observation just written under `target` (same key
    /// replaces). It is taken, not copied: the caller is done with it.
    pub fn inserted(&mut self, target: &str, obs: Observation) {
        let Some(entries) = self.by_target.map.get_mut(target) else {
            return;
        };
        let list = &mut entries.observations;
        match list.binary_search_by(|o| sled_order(o).cmp(&sled_order(&obs))) {
            Ok(i) => list[i] = obs,
            Err(i) => list.insert(i, obs),
        }
    }

    /// Note an output filed as watching `target` (`Unit::put_output`).
    pub fn output_filed(&mut self, target: &str, id: &str) {
        if let Some(entries) = self.by_target.map.get_mut(target) {
            if let Err(i) = entries.outputs.binary_search_by(|o| o.as_str().cmp(id)) {
                entries.outputs.insert(i, id.to_string());
            }
        }
    }

    /// Note an output that no longer watches `target` (`Unit::retire_output`).
    pub fn output_retired(&mut self, target: &str, id: &str) {
        if let Some(entries) = self.by_target.map.get_mut(target) {
            entries.outputs.retain(|o| o != id);
        }
    }

    fn load<'a>(
        &'a mut self,
        store: &(impl ReadStore + ?Sized),
        target: &str,
    ) -> Result<&'a TargetEntries> {
        if !self.by_target.map.contains_key(target) {
            let entries = store.target_entries(target)?;
            self.by_target.insert(target, entries);
        }
        Ok(&self.by_target.map[target])
    }

    /// The ids of the outputs watching `target` (`Unit::outputs_on`), in
    /// key order, from the cache where it can.
    pub fn outputs_on<'a>(
        &'a mut self,
        store: &(impl ReadStore + ?Sized),
        target: &str,
    ) -> Result<&'a [String]> {
        let outputs = &self.load(store, target)?.outputs;
        debug_assert_eq!(
            outputs,
            &store.target_entries(target)?.outputs,
            "the cached outputs on {target} are the store's"
        );
        Ok(outputs)
    }

    /// What `Store::observations` returns, from the cache where it can.
    /// One target whose list is already in order is lent, not copied: most
    /// outputs watch one target, and copying a busy PR's observations for
    /// every event on it made the cost of an event grow with its history.
    pub fn observations<'a>(
        &'a mut self,
        store: &(impl ReadStore + ?Sized),
        target_keys: &[String],
    ) -> Result<Cow<'a, [Observation]>> {
        for target in target_keys {
            self.load(store, target)?;
        }
        let lists: Option<Vec<&'a [Observation]>> = target_keys
            .iter()
            .map(|t| self.by_target.map.get(t).map(|e| e.observations.as_slice()))
            .collect();
        let Some(lists) = lists else {
            // Evicted while loading the others (more keys than the cache
            // holds): the store is the truth.
            return Ok(Cow::Owned(store.observations_of_all(target_keys)?));
        };
        // Sorted as `Store::observations` sorts, with nothing its dedup drops.
        let in_order = |list: &[Observation]| {
            list.windows(2)
                .all(|w| (w[0].at, &w[0].id) < (w[1].at, &w[1].id) && w[0].id != w[1].id)
        };
        if let [only] = lists.as_slice() {
            if in_order(only) {
                return Ok(Cow::Borrowed(only));
            }
        }
        let mut all: Vec<Observation> = lists.concat();
        all.sort_by(|a, b| (a.at, &a.id).cmp(&(b.at, &b.id)));
        all.dedup_by(|a, b| a.id == b.id);
        Ok(Cow::Owned(all))
    }

    /// True when `ref_key` is linked to `thread` (`ReadStore::is_linked`), from
    /// the cache where it can: every event on a PR asked for its branch's,
    /// head commit's and merge commit's links.
    pub fn is_linked(
        &mut self,
        store: &(impl ReadStore + ?Sized),
        ref_key: &str,
        thread: &str,
    ) -> Result<bool> {
        let key = link_key(ref_key, thread);
        if self.linked.map.contains_key(&key) {
            return Ok(true);
        }
        let found = store.is_linked(ref_key, thread)?;
        if found {
            self.linked.insert(&key, ());
        }
        Ok(found)
    }

    /// Note a link just written (`Unit::link`).
    pub fn link(&mut self, ref_key: &str, thread: &str) {
        self.linked.insert(&link_key(ref_key, thread), ());
    }

    /// True when `target`'s observations are cached.
    pub fn has(&self, target: &str) -> bool {
        self.by_target.map.contains_key(target)
    }

    /// Forget everything (after a failed write, the store is the truth).
    pub fn clear(&mut self) {
        self.by_target.clear();
        self.linked.clear();
    }
}

/// Decoded outputs by canonical id, as the worker last wrote them (or will:
/// a change put in the item's batch is cached at once, and the cache is
/// cleared if that batch then fails to commit).
pub struct OutputCache {
    by_id: Bounded<StoredOutput>,
}

impl Default for OutputCache {
    fn default() -> Self {
        OutputCache {
            by_id: Bounded::new(CACHED_OUTPUTS),
        }
    }
}

impl OutputCache {
    /// The output, from the cache or else the store (`Store::output`).
    /// Entries are kept under canonical ids only, so an alias never shows
    /// a copy older than the canonical entry.
    pub fn get_mut(
        &mut self,
        store: &(impl ReadStore + ?Sized),
        id: &str,
    ) -> Result<Option<&mut StoredOutput>> {
        let key = if self.by_id.map.contains_key(id) {
            id.to_string()
        } else {
            let Some((canonical, stored)) = store.resolve(id)? else {
                return Ok(None);
            };
            if !self.by_id.map.contains_key(&canonical) {
                self.by_id.insert(&canonical, stored);
            }
            canonical
        };
        Ok(self.by_id.map.get_mut(&key))
    }

    /// Note an output just written (or put in the batch about to be). It
    /// is taken, not copied: the caller is done with it.
    pub fn written(&mut self, stored: StoredOutput) {
        match self.by_id.map.get_mut(&stored.execution.id) {
            Some(cached) => *cached = stored,
            None => {
                let id = stored.execution.id.clone();
                self.by_id.insert(&id, stored)
            }
        }
    }

    /// The cached output under canonical id `id`, without reading the store.
    pub fn peek(&self, id: &str) -> Option<&StoredOutput> {
        self.by_id.map.get(id)
    }

    /// Forget an output (its id became an alias after a merge).
    pub fn forget(&mut self, id: &str) {
        self.by_id.map.remove(id);
    }

    /// Forget everything (after a failed write, the store is the truth).
    pub fn clear(&mut self) {
        self.by_id.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, Utc};
    use safe_outcomes_model::ObservationKind;

    fn obs(id: &str, at: &str, target: &str) -> Observation {
        Observation {
            id: id.into(),
            at: at.parse::<DateTime<Utc>>().unwrap(),
            target: target.into(),
            actor: None,
            event: ObservationKind::Opened,
            snapshot: None,
        }
    }

    #[test]
    fn answers_like_the_store_after_inserts() {
        let (_dir, store) = crate::temp_store();
        let mut cache = ObservationCache::default();
        let put = |cache: &mut ObservationCache, o: &Observation| {
            store
                .db()
                .insert(
                    keys::observation(&o.target, o.at, &o.id),
                    super::super::encode(o),
                )
                .unwrap();
            cache.inserted(&o.target, o.clone());
        };
        put(&mut cache, &obs("b", "2026-01-01T00:00:02Z", "o/r#1"));
        let watch = vec!["o/r#1".to_string(), "o/r@main".to_string()];
        assert_eq!(
            cache.observations(&store, &watch).unwrap().as_ref(),
            store.observations(&watch).unwrap()
        );
        for o in [
            obs("a", "2026-01-01T00:00:03Z", "o/r#1"),
            obs("c", "2026-01-01T00:00:01Z", "o/r@main"),
            obs("b", "2026-01-01T00:00:02Z", "o/r#1"),
            obs("c", "2026-01-01T00:00:01Z", "o/r#1"),
            // One id filed at two times (an API fact that changed): the store
            // keeps one of them, and so must the cache.
            obs("d", "2026-01-01T00:00:05Z", "o/r#1"),
            obs("d", "2026-01-01T00:00:06Z", "o/r#1"),
        ] {
            put(&mut cache, &o);
            assert_eq!(
                cache.observations(&store, &watch).unwrap().as_ref(),
                store.observations(&watch).unwrap()
            );
            let one = vec!["o/r#1".to_string()];
            assert_eq!(
                cache.observations(&store, &one).unwrap().as_ref(),
                store.observations(&one).unwrap()
            );
        }
    }

    fn output(id: &str, workflow: &str) -> StoredOutput {
        crate::test_output(id, workflow)
    }

    #[test]
    fn outputs_answer_like_the_store_and_only_under_canonical_ids() {
        let (_dir, store) = crate::temp_store();
        let mut cache = OutputCache::default();
        assert!(cache.get_mut(&store, "o/r:1:0").unwrap().is_none());
        let first = output("o/r:1:0", "a");
        store
            .db()
            .insert(keys::output("o/r:1:0"), super::super::encode(&first))
            .unwrap();
        assert_eq!(cache.get_mut(&store, "o/r:1:0").unwrap().unwrap(), &first);

        // The worker's own write shows at once, before its batch commits.
        let second = output("o/r:1:0", "b");
        cache.written(second.clone());
        assert_eq!(cache.get_mut(&store, "o/r:1:0").unwrap().unwrap(), &second);

        // An alias resolves to the canonical entry, never to a copy of its own.
        store
            .db()
            .insert(keys::alias("o/r:9:pr-5"), "o/r:1:0".as_bytes())
            .unwrap();
        assert_eq!(
            cache.get_mut(&store, "o/r:9:pr-5").unwrap().unwrap(),
            &second
        );
        cache.written(output("o/r:1:0", "c"));
        assert_eq!(
            cache
                .get_mut(&store, "o/r:9:pr-5")
                .unwrap()
                .unwrap()
                .execution
                .workflow
                .as_deref(),
            Some("c")
        );

        // Forgotten or cleared, the store is read again.
        cache.clear();
        assert_eq!(cache.get_mut(&store, "o/r:1:0").unwrap().unwrap(), &first);
    }

    #[test]
    fn links_answer_like_the_store() {
        let (_dir, store) = crate::temp_store();
        let mut cache = ObservationCache::default();
        store
            .db()
            .insert(keys::ref_link("o/r@main", "o/r#1"), [])
            .unwrap();
        assert!(cache.is_linked(&store, "o/r@main", "o/r#1").unwrap());
        assert!(!cache.is_linked(&store, "o/r@main", "o/r#2").unwrap());
        // A link not found is not remembered: written later, it is found.
        store
            .db()
            .insert(keys::ref_link("o/r@main", "o/r#2"), [])
            .unwrap();
        assert!(cache.is_linked(&store, "o/r@main", "o/r#2").unwrap());
        // One the worker wrote shows before its unit commits.
        cache.link("o/r@dev", "o/r#1");
        assert!(cache.is_linked(&store, "o/r@dev", "o/r#1").unwrap());
        assert!(!cache.is_linked(&store, "o/r@de", "vo/r#1").unwrap());
        cache.clear();
        assert!(!cache.is_linked(&store, "o/r@dev", "o/r#1").unwrap());
    }

    #[test]
    fn the_bounded_map_forgets_its_oldest_entries() {
        let mut m = Bounded::new(2);
        m.insert("a", 1);
        m.insert("b", 2);
        m.insert("a", 10);
        m.insert("c", 3);
        assert_eq!(m.map.get("a"), None);
        assert_eq!((m.map.get("b"), m.map.get("c")), (Some(&2), Some(&3)));
    }
}
