//! Reads: the cuts a reader asks for and what a reader may see (`query`), the
//! report with its three rates (`report`), an output as the lists give it
//! with its next window (`listed`), and the exports (`export`: outcome
//! records and opentraces records). Reads never wait on the worker:
//! they read stored outcome records.
//!
//! May import: `model`, `store`, `ingest`, `judge`, `github`.

pub mod export;
pub mod line_survival;
pub(crate) mod line_totals;
pub(crate) mod listed;
pub mod query;
pub mod report;
pub mod rollup;

/// The instant an RFC 3339 text names (tests).
#[cfg(test)]
pub(crate) fn at(s: &str) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339(s)
        .unwrap()
        .with_timezone(&chrono::Utc)
}
