//! Reads: the cuts a reader asks for and what a reader may see (`query`), the
//! report with its three rates (`report`), and the exports (`export`:
//! outcome records and opentraces records). Reads never wait on the worker:
//! they read stored outcome records.
//!
//! May import: `model`, `store`, `ingest`, `judge`, `github`.

pub mod export;
pub mod line_survival;
pub mod query;
pub mod report;
pub mod rollup;
