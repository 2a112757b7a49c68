//! The data model: what was executed (`ExecutionRecord`), what GitHub told us
//! afterwards (`Observation`), and what we concluded (`Evaluation`, `OutcomeRecord`).

pub mod actions;
pub mod attribution;
pub mod clock;
pub mod escape;
pub mod execution;
pub mod ident;
pub mod installation;
pub mod markers;
pub mod observation;
pub mod outcome;
pub mod sane_time;
pub mod shared_data;
pub mod target;
pub mod vocabulary;
pub mod wire;

pub use execution::ExecutionRecord;
pub use observation::{Actor, ItemSnapshot, Observation, ObservationKind};
pub use outcome::{
    ActorClass, ActorSummary, Confidence, Evaluation, EvidenceStrength, OutcomeRecord,
    OutcomeStatus, WindowSnapshot, CHECKPOINTS,
};
pub use target::{Target, TargetKind};
