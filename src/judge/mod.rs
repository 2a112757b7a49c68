//! Judgement, pure: an execution record and the observations of its targets
//! → an outcome. `evaluate` holds one evaluator per output-type family and
//! the type registry; `assess` turns an evaluation into the outcome record with
//! its checkpoints; `conformance` runs gh-aw's cases through the API-state
//! path; `reads` is the table of what each path reads for each type (the
//! facts, their webhooks, the API reads that recover them; `reads_tests`
//! holds it equal to the readers); `spec` renders docs/evaluation.md from the
//! code.
//!
//! May import: `model`, `ingest` (conformance parses gh-aw items and API state
//! the way ingest does).

pub mod api_state;
pub mod assess;
pub mod conformance;
pub mod evaluate;
pub mod reads;
pub mod spec;

#[cfg(test)]
mod reads_tests;
