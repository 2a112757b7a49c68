//! Judgement, pure: an execution record and the observations of its targets
//! → an outcome. No I/O, no async, no store.
//!
//! `evaluate` holds one evaluator per output-type family and the type
//! registry; `assess` turns an evaluation into the outcome record with its
//! checkpoints; `reads` is the table of what each path reads for each type
//! (the facts, their webhooks, the API reads that recover them).
//!
//! Depends on: `safe-outcomes-model` only.

pub mod assess;
pub mod evaluate;
pub mod reads;
