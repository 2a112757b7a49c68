//! An output's snapshots at the checkpoints it has passed (`windows` of the
//! outcome record), kept and shown in time order: `1h`, `24h`, `7d`, `30d`.
//!
//! A map keyed by name would order them as text (`1h`, `24h`, `30d`, `7d`),
//! and every reader of the JSON would see that order; the order is fixed
//! here, at the type, so every endpoint, export and page shows the same one.
//! A name that is no checkpoint (a record from elsewhere) sorts after them,
//! by name.

use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::outcome::{WindowSnapshot, CHECKPOINTS};

/// The checkpoint snapshots, in time order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Windows(Vec<(String, WindowSnapshot)>);

/// Where `name` sorts: its checkpoint's place, or after every checkpoint.
fn rank(name: &str) -> (usize, &str) {
    let place = CHECKPOINTS
        .iter()
        .position(|(n, _)| *n == name)
        .unwrap_or(CHECKPOINTS.len());
    (place, name)
}

impl Windows {
    pub fn new() -> Windows {
        Windows::default()
    }

    /// The snapshot at checkpoint `name` (`1h`, `24h`, `7d`, `30d`).
    pub fn get(&self, name: &str) -> Option<&WindowSnapshot> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, s)| s)
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Set the snapshot at `name` in its place; returns the one it replaces.
    pub fn insert(
        &mut self,
        name: impl Into<String>,
        snapshot: WindowSnapshot,
    ) -> Option<WindowSnapshot> {
        let name = name.into();
        if let Some((_, s)) = self.0.iter_mut().find(|(n, _)| *n == name) {
            return Some(std::mem::replace(s, snapshot));
        }
        let at = self
            .0
            .iter()
            .position(|(n, _)| rank(n) > rank(&name))
            .unwrap_or(self.0.len());
        self.0.insert(at, (name, snapshot));
        None
    }

    /// Name and snapshot, in time order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &WindowSnapshot)> {
        self.0.iter().map(|(n, s)| (n.as_str(), s))
    }

    /// The checkpoint names passed, in time order.
    pub fn keys(&self) -> impl Iterator<Item = &str> + fmt::Debug {
        self.0.iter().map(|(n, _)| n.as_str())
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::ops::Index<&str> for Windows {
    type Output = WindowSnapshot;

    fn index(&self, name: &str) -> &WindowSnapshot {
        self.get(name)
            .unwrap_or_else(|| panic!("no snapshot at window {name:?}"))
    }
}

impl<S: Into<String>> FromIterator<(S, WindowSnapshot)> for Windows {
    fn from_iter<I: IntoIterator<Item = (S, WindowSnapshot)>>(items: I) -> Windows {
        let mut windows = Windows::new();
        for (name, snapshot) in items {
            windows.insert(name, snapshot);
        }
        windows
    }
}

impl<'a> IntoIterator for &'a Windows {
    type Item = (&'a str, &'a WindowSnapshot);
    type IntoIter = Box<dyn Iterator<Item = (&'a str, &'a WindowSnapshot)> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl Serialize for Windows {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, snapshot) in &self.0 {
            map.serialize_entry(name, snapshot)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Windows {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Windows, D::Error> {
        struct Entries;
        impl<'de> Visitor<'de> for Entries {
            type Value = Windows;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map of checkpoint name to snapshot")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Windows, A::Error> {
                let mut windows = Windows::new();
                while let Some((name, snapshot)) = map.next_entry::<String, WindowSnapshot>()? {
                    windows.insert(name, snapshot);
                }
                Ok(windows)
            }
        }
        deserializer.deserialize_map(Entries)
    }
}

/// In the OpenAPI document: an object with an optional snapshot per
/// checkpoint, in time order.
impl utoipa::PartialSchema for Windows {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Ref, Type};
        let snapshot = || Ref::from_schema_name("WindowSnapshot");
        let mut object = ObjectBuilder::new().schema_type(Type::Object).description(Some(
            "The outcome at each checkpoint already passed (T+1h, T+24h, T+7d, T+30d), in time order.",
        ));
        for (name, _) in CHECKPOINTS {
            object = object.property(name, snapshot());
        }
        object.additional_properties(Some(snapshot())).into()
    }
}

impl utoipa::ToSchema for Windows {
    fn schemas(
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        use utoipa::PartialSchema;
        schemas.push(("WindowSnapshot".into(), WindowSnapshot::schema()));
        <WindowSnapshot as utoipa::ToSchema>::schemas(schemas);
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use super::*;
    use crate::{EvidenceStrength, OutcomeStatus};

    fn snap(hours: i64) -> WindowSnapshot {
        WindowSnapshot {
            outcome_status: OutcomeStatus::Pending,
            evidence_strength: EvidenceStrength::Weak,
            human_check_signal: "open".into(),
            evaluated_at: Utc.with_ymd_and_hms(2026, 11, 1, 0, 0, 0).unwrap()
                + chrono::Duration::hours(hours),
        }
    }

    /// Whatever order they are set or read in, they are kept, iterated and
    /// written in time order, and read back the same.
    #[test]
    fn windows_are_in_time_order_whatever_the_input_order() {
        let names = ["30d", "7d", "1h", "24h"];
        // Every rotation and its reverse.
        for start in 0..names.len() {
            for reverse in [false, true] {
                let mut order: Vec<&str> =
                    names.iter().cycle().skip(start).take(4).copied().collect();
                if reverse {
                    order.reverse();
                }
                let windows: Windows = order
                    .iter()
                    .enumerate()
                    .map(|(i, n)| (*n, snap(i as i64)))
                    .collect();
                assert_eq!(
                    windows.keys().collect::<Vec<_>>(),
                    ["1h", "24h", "7d", "30d"],
                    "{order:?}"
                );
                let json = serde_json::to_string(&windows).unwrap();
                let positions: Vec<usize> = ["\"1h\"", "\"24h\"", "\"7d\"", "\"30d\""]
                    .iter()
                    .map(|k| json.find(k).unwrap())
                    .collect();
                assert!(positions.windows(2).all(|p| p[0] < p[1]), "{json}");
                // Read from text in its own (alphabetical) order: time order again.
                let text = format!(
                    "{{{}}}",
                    order
                        .iter()
                        .map(|n| format!(
                            "\"{n}\":{}",
                            serde_json::to_string(windows.get(n).unwrap()).unwrap()
                        ))
                        .collect::<Vec<_>>()
                        .join(",")
                );
                let back: Windows = serde_json::from_str(&text).unwrap();
                assert_eq!(back, windows);
            }
        }
    }

    #[test]
    fn a_name_that_is_no_checkpoint_comes_last_and_a_second_insert_replaces() {
        let mut w = Windows::new();
        w.insert("later", snap(0));
        w.insert("7d", snap(1));
        w.insert("1h", snap(2));
        assert_eq!(w.keys().collect::<Vec<_>>(), ["1h", "7d", "later"]);
        assert_eq!(w.insert("7d", snap(5)), Some(snap(1)));
        assert_eq!(w["7d"], snap(5));
        assert_eq!(w.len(), 3);
        assert!(w.contains_key("later") && !w.contains_key("30d"));
    }
}
