//! Judgement wired to the App: the pure judge (the `safe-outcomes-judge`
//! crate, re-exported here as `assess`, `evaluate`, `reads`) and what needs
//! ingest besides it: `api_state` (an output judged from API state),
//! `conformance` (gh-aw's cases through the API-state path) and `spec`
//! (docs/evaluation.md rendered from the code). `reads_tests` holds the read
//! table equal to the readers; `rules_tests` and `mapping_tests` check the
//! general rules and the conformance mapping over every registered type.
//!
//! May import: `model`, `ingest` (conformance parses gh-aw items and API state
//! the way ingest does).

pub use safe_outcomes_judge::{assess, evaluate, reads};

pub(crate) mod api_state;
pub mod conformance;
pub mod spec;

#[cfg(test)]
mod mapping_tests;
#[cfg(test)]
mod reads_tests;
#[cfg(test)]
mod rules_tests;
