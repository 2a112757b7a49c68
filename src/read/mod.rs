//! Reads: the cuts a reader asks for and what a reader may see (`query`), the
//! report with its three rates (`report`), an output as the lists give it
//! with its next window (`listed`), and the exports (`export`: outcome
//! records and opentraces records). Reads never wait on the worker:
//! they read stored outcome records.
//!
//! May import: `model`, `store`, `ingest`, `judge`, `github`.

pub mod export;
pub mod line_survival;
pub mod line_totals;
pub mod listed;
pub mod query;
pub mod report;
pub mod rollup;
