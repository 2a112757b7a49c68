//! Exports of the outcome records: plain JSONL (one `OutcomeRecord` a line),
//! CSV (a header, then one row an output: the record's scalar fields and its
//! next window, for a spreadsheet) or opentraces (one `TraceRecord`, schema
//! 0.9.0, a line; seed 004). All stream from the store through the read
//! filters of `http::read`, so memory stays bounded by one record whatever
//! the store holds.

pub(crate) mod mapping;
pub use crate::github::attribution::murmur3;
pub use crate::model::ident::new_trace_id;
use crate::model::ident::uuid_string;

use sha2::{Digest, Sha256};

use crate::read::query::{ReadFilter, RepoScope};
use crate::store::{Store, StoreError, StoredOutput};
pub use mapping::{trace_record, ExportInput, TraceRecord};

/// What an export writes a line of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// The outcome record as stored.
    Jsonl,
    /// An opentraces `TraceRecord`.
    Opentraces,
    /// A CSV row (`CSV_COLUMNS`), after a header line.
    Csv,
}

impl Format {
    /// Every format's name, as `format=` takes it.
    pub(crate) const NAMES: [&'static str; 3] = ["jsonl", "csv", "opentraces"];

    pub(crate) fn parse(s: &str) -> Option<Format> {
        match s {
            "jsonl" => Some(Format::Jsonl),
            "opentraces" => Some(Format::Opentraces),
            "csv" => Some(Format::Csv),
            _ => None,
        }
    }

    /// The media type of the response.
    pub(crate) fn content_type(self) -> &'static str {
        match self {
            Format::Csv => "text/csv; charset=utf-8",
            _ => "application/x-ndjson",
        }
    }

    /// The file name a browser saves it under.
    pub(crate) fn file_name(self) -> &'static str {
        match self {
            Format::Jsonl => "outcomes.jsonl",
            Format::Opentraces => "outcomes.opentraces.jsonl",
            Format::Csv => "outcomes.csv",
        }
    }
}

/// The CSV export's columns, in order: the outcome record's scalar fields
/// (the target as its kind and URL) and where the output stands in its
/// windows.
pub(crate) const CSV_COLUMNS: [&str; 20] = [
    "safe_output_id",
    "safe_output_type",
    "repo",
    "workflow",
    "run_id",
    "created_at",
    "evaluated_at",
    "outcome_status",
    "evidence_strength",
    "human_check_signal",
    "confidence",
    "target_kind",
    "target_url",
    "time_to_acceptance_hours",
    "visible_non_bot_actor_count",
    "bot_actor_count",
    "next_window",
    "next_window_due_at",
    "verdict_final",
    "notes",
];

/// One CSV cell: quoted when it holds a comma, quote or line break (quotes
/// doubled, RFC 4180); a text that a spreadsheet would run as a formula
/// (`=`, `+`, `-`, `@` first) is kept as text with a leading `'`.
pub(crate) fn csv_cell(value: &str) -> String {
    let value = if value.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{value}")
    } else {
        value.to_string()
    };
    if value.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", value.replace('"', "\"\""))
    } else {
        value
    }
}

/// The CSV header line (without the newline).
pub(crate) fn csv_header() -> Vec<u8> {
    CSV_COLUMNS.join(",").into_bytes()
}

/// An outcome record as a CSV row (without the newline).
pub(crate) fn csv_row(outcome: &crate::model::OutcomeRecord) -> Vec<u8> {
    let listed = crate::read::listed::ListedOutput::of(outcome.clone());
    let o = &listed.record;
    let opt = |v: Option<String>| v.unwrap_or_default();
    let cells: [String; 20] = [
        o.safe_output_id.clone(),
        o.safe_output_type.clone(),
        o.safe_output_id.split(':').next().unwrap_or("").to_string(),
        opt(o.workflow.clone()),
        opt(o.run_id.map(|r| r.to_string())),
        o.created_at.to_rfc3339(),
        o.evaluated_at.to_rfc3339(),
        o.outcome_status.as_str().to_string(),
        o.evidence_strength.as_str().to_string(),
        o.human_check_signal.clone(),
        serde_json::to_value(o.confidence)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        opt(o.target.as_ref().map(|t| {
            serde_json::to_value(t.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        })),
        opt(o.target.as_ref().and_then(|t| t.url.clone())),
        opt(o.time_to_acceptance_hours.map(|h| h.to_string())),
        o.actor_summary.visible_non_bot_actor_count.to_string(),
        o.actor_summary.bot_actor_count.to_string(),
        opt(listed.next_window.clone()),
        opt(listed.next_window_due_at.map(|d| d.to_rfc3339())),
        listed.verdict_final.to_string(),
        o.notes.clone(),
    ];
    cells
        .iter()
        .map(|c| csv_cell(c))
        .collect::<Vec<_>>()
        .join(",")
        .into_bytes()
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
pub(crate) fn line(
    store: &Store,
    stored: &StoredOutput,
    format: Format,
) -> Result<Option<Vec<u8>>, StoreError> {
    let Some(outcome) = stored.outcome.as_ref() else {
        return Ok(None);
    };
    let bytes = match format {
        Format::Jsonl => serde_json::to_vec(outcome),
        Format::Csv => Ok(csv_row(outcome)),
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
pub(crate) fn write_lines(
    store: &Store,
    filter: &ReadFilter,
    scope: &RepoScope,
    format: Format,
    mut emit: impl FnMut(Vec<u8>) -> bool,
) -> Result<u64, StoreError> {
    let mut written = 0;
    let prefixes = crate::read::rollup::output_prefixes(store, filter, scope)?;
    if format == Format::Csv {
        let mut header = csv_header();
        header.push(b'\n');
        if !emit(header) {
            return Ok(written);
        }
    }
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
        let text = include_str!("../../../crates/store/src/record_dictionary_v1.json");
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
        assert_eq!(Format::parse("csv"), Some(Format::Csv));
        assert_eq!(Format::parse("xlsx"), None);
        for name in Format::NAMES {
            assert!(Format::parse(name).is_some(), "{name}");
        }
    }

    #[test]
    fn csv_cells_are_quoted_and_never_formulas() {
        assert_eq!(csv_cell("plain"), "plain");
        assert_eq!(csv_cell("a,b"), "\"a,b\"");
        assert_eq!(csv_cell("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_cell("two\nlines"), "\"two\nlines\"");
        assert_eq!(csv_cell("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(csv_cell("@team"), "'@team");
        assert_eq!(
            csv_header().split(|b| *b == b',').count(),
            CSV_COLUMNS.len()
        );
    }
}
