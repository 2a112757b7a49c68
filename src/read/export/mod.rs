//! Exports of the outcome records: plain JSONL (one `OutcomeRecord` a line)
//! or opentraces (one `TraceRecord`, schema 0.9.0, a line; seed 004). Both
//! stream from the store through the read filters of `http::read`, so
//! memory stays bounded by one record whatever the store holds.

pub mod mapping;
pub use crate::github::attribution::murmur3;
pub use crate::model::ident::new_trace_id;
use crate::model::ident::uuid_string;

use sha2::{Digest, Sha256};

use crate::read::query::{ReadFilter, RepoScope};
use crate::store::{Store, StoreError, StoredOutput};
pub use mapping::{trace_record, ExportInput, TraceRecord};

/// What an export writes a line of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The outcome record as stored.
    Jsonl,
    /// An opentraces `TraceRecord`.
    Opentraces,
}

impl Format {
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "jsonl" => Some(Format::Jsonl),
            "opentraces" => Some(Format::Opentraces),
            _ => None,
        }
    }
}

/// The trace id of an output stored before trace ids were: derived from the
/// output id, so it is the same on every export.
fn derived_trace_id(output_id: &str) -> String {
    let digest = Sha256::digest(format!("safe-outcomes trace {output_id}").as_bytes());
    let mut b = [0u8; 16];
    b.copy_from_slice(&digest[..16]);
    uuid_string(b)
}

/// The trace id an output is exported under.
pub fn trace_id_of(stored: &StoredOutput) -> String {
    stored
        .trace_id
        .clone()
        .unwrap_or_else(|| derived_trace_id(&stored.execution.id))
}

/// One output's line in `format` (without the newline); `None` when it has
/// no outcome yet.
pub fn line(
    store: &Store,
    stored: &StoredOutput,
    format: Format,
) -> Result<Option<Vec<u8>>, StoreError> {
    let Some(outcome) = stored.outcome.as_ref() else {
        return Ok(None);
    };
    let bytes = match format {
        Format::Jsonl => serde_json::to_vec(outcome),
        Format::Opentraces => {
            let observations = store.observations(&stored.execution.watch_keys())?;
            let attribution = crate::store::attribution::get(store, &stored.execution.id)?;
            let trace_id = trace_id_of(stored);
            serde_json::to_vec(&trace_record(&ExportInput {
                execution: &stored.execution,
                outcome,
                trace_id: &trace_id,
                observations: &observations,
                attribution: attribution.as_ref(),
            }))
        }
    };
    Ok(Some(bytes.expect("export records serialize")))
}

/// Write the line of every output the filter and scope admit, in id order
/// (only the repositories the scope sees are read),
/// each followed by `\n`, to `emit`; stops early when `emit` returns false
/// (the reader went away). Returns the number of lines written. Blocking:
/// run it off the async runtime.
pub fn write_lines(
    store: &Store,
    filter: &ReadFilter,
    scope: &RepoScope,
    format: Format,
    mut emit: impl FnMut(Vec<u8>) -> bool,
) -> Result<u64, StoreError> {
    let mut written = 0;
    let mut prefixes: Vec<String> = crate::read::rollup::repositories(store, filter, scope)?
        .into_iter()
        .flat_map(|(_, exact)| exact)
        .map(|r| format!("{r}:"))
        .collect();
    prefixes.sort();
    for prefix in prefixes {
        for stored in filter.scan(store, scope, &prefix, None) {
            let stored = stored?;
            if let Some(mut bytes) = line(store, &stored, format)? {
                bytes.push(b'\n');
                if !emit(bytes) {
                    return Ok(written);
                }
                written += 1;
            }
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_ids_are_version_4_uuids_and_fresh_each_time() {
        let a = new_trace_id();
        let b = new_trace_id();
        assert_ne!(a, b);
        for id in [&a, &b, &derived_trace_id("o/r:1:0")] {
            assert_eq!(id.len(), 36, "{id}");
            assert_eq!(&id[14..15], "4", "{id}");
            assert!("89ab".contains(&id[19..20]), "{id}");
        }
        assert_eq!(derived_trace_id("o/r:1:0"), derived_trace_id("o/r:1:0"));
        assert_ne!(derived_trace_id("o/r:1:0"), derived_trace_id("o/r:1:1"));
    }

    /// The stored trace id's cost: a typical stored output (the one in the
    /// store's compression dictionary) encoded with and without it.
    #[test]
    fn a_stored_trace_id_costs_under_64_bytes_per_output() {
        let text = include_str!("../../store/record_dictionary_v1.json");
        // Other values than the dictionary's own (as its own test does).
        let sample = text
            .lines()
            .last()
            .unwrap()
            .replace("acme/widgets", "globex/payments-api")
            .replace("2101", "88231")
            .replace("ci-coach", "dependency-updater");
        let mut stored: StoredOutput = serde_json::from_str(&sample).unwrap();
        stored.trace_id = None;
        let without = crate::store::encode(&stored).len();
        stored.trace_id = Some(new_trace_id());
        let with = crate::store::encode(&stored).len();
        eprintln!("stored output: {without} B encoded, {with} B with a trace id");
        assert!(with > without && with - without < 64, "{without} → {with}");
    }

    #[test]
    fn formats_parse() {
        assert_eq!(Format::parse("jsonl"), Some(Format::Jsonl));
        assert_eq!(Format::parse("opentraces"), Some(Format::Opentraces));
        assert_eq!(Format::parse("csv"), None);
    }
}
