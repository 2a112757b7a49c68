//! Decoded observations of the targets the worker touched lately. The worker
//! is the only writer of observations, so it keeps this cache in step with
//! its own inserts; decoding a target's observations again for every event
//! on it was the largest single cost of processing a delivery.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};

use super::{decode, keys, Result, Store};
use crate::model::Observation;

/// Targets kept (first in, first out): a few MiB.
const CACHED_TARGETS: usize = 4096;

/// The sort key sled keeps observations under: (time in ms, id).
fn sled_order(o: &Observation) -> (i64, &str) {
    (o.at.timestamp_millis(), o.id.as_str())
}

#[derive(Default)]
pub struct ObservationCache {
    by_target: HashMap<String, Vec<Observation>>,
    order: VecDeque<String>,
}

impl ObservationCache {
    /// Note an observation just written under `target` (same key replaces).
    pub fn inserted(&mut self, target: &str, obs: &Observation) {
        let Some(list) = self.by_target.get_mut(target) else {
            return;
        };
        match list.binary_search_by(|o| sled_order(o).cmp(&sled_order(obs))) {
            Ok(i) => list[i] = obs.clone(),
            Err(i) => list.insert(i, obs.clone()),
        }
    }

    fn load<'a>(&'a mut self, store: &Store, target: &str) -> Result<&'a [Observation]> {
        if !self.by_target.contains_key(target) {
            let mut list = Vec::new();
            for item in store.db().scan_prefix(keys::observations_of(target)) {
                let (k, v) = item?;
                list.push(decode(&k, &v)?);
            }
            if self.order.len() >= CACHED_TARGETS {
                if let Some(old) = self.order.pop_front() {
                    self.by_target.remove(&old);
                }
            }
            self.order.push_back(target.to_string());
            self.by_target.insert(target.to_string(), list);
        }
        Ok(&self.by_target[target])
    }

    /// What `Store::observations` returns, from the cache where it can.
    /// One target whose list is already in order is lent, not copied: most
    /// outputs watch one target, and copying a busy PR's observations for
    /// every event on it made the cost of an event grow with its history.
    pub fn observations<'a>(
        &'a mut self,
        store: &Store,
        target_keys: &[String],
    ) -> Result<Cow<'a, [Observation]>> {
        for target in target_keys {
            self.load(store, target)?;
        }
        let lists: Option<Vec<&'a [Observation]>> = target_keys
            .iter()
            .map(|t| self.by_target.get(t).map(Vec::as_slice))
            .collect();
        let Some(lists) = lists else {
            // Evicted while loading the others (more keys than the cache
            // holds): the store is the truth.
            return Ok(Cow::Owned(store.observations(target_keys)?));
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

    /// Forget everything (after a failed write, the store is the truth).
    pub fn clear(&mut self) {
        self.by_target.clear();
        self.order.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ObservationKind;
    use chrono::{DateTime, Utc};

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
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut cache = ObservationCache::default();
        let put = |cache: &mut ObservationCache, o: &Observation| {
            store
                .db()
                .insert(
                    keys::observation(&o.target, o.at, &o.id),
                    super::super::encode(o),
                )
                .unwrap();
            cache.inserted(&o.target, o);
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
}
