//! The data model: what was executed (`ExecutionRecord`), what GitHub told us
//! afterwards (`Observation`), and what we concluded (`Evaluation`, `OutcomeRecord`).
//!
//! Also the words everything else shares: `OutputType`, `Signal` (every
//! human-check signal with its gh-aw twin), the tenancy rule (`tenancy`: an
//! output and what it reads lie in one installation), identifiers
//! (`ident`), GitHub's object shapes as webhooks and the API send them
//! (`wire`), gh-aw body markers (`markers`), the clock, times from outside
//! (`sane_time`), escaping for what people read (`escape`), and where tests
//! find `../shared` (`shared_data`).
//!
//! The bottom crate of the workspace: it depends on no other crate of it.

pub mod actions;
pub mod attribution;
pub mod challenge;
pub mod clock;
pub mod escape;
pub mod execution;
pub mod ident;
pub mod ids;
pub mod installation;
pub mod markers;
pub mod observation;
pub mod outcome;
pub(crate) mod outcome_record;
pub mod output_type;
pub mod sane_time;
#[cfg(feature = "shared-data")]
pub mod shared_data;
pub mod signal;
pub mod target;
pub mod tenancy;
pub mod windows;
pub mod wire;

pub use execution::ExecutionRecord;
pub use observation::{Actor, ItemSnapshot, Observation, ObservationKind};
pub use outcome::{
    ActorClass, ActorSummary, Confidence, Evaluation, EvidenceStrength, OutcomeStatus,
    WindowSnapshot, CHECKPOINTS,
};
pub use outcome_record::OutcomeRecord;
pub use output_type::OutputType;
pub use signal::Signal;
pub use target::{Target, TargetKind};
pub use windows::Windows;
