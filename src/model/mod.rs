//! The data model: what was executed (`ExecutionRecord`), what GitHub told us
//! afterwards (`Observation`), and what we concluded (`Evaluation`, `OutcomeRecord`).

pub mod actions;
pub mod attribution;
pub mod execution;
pub mod ident;
pub mod installation;
pub mod observation;
pub mod outcome;
pub mod target;
pub mod vocabulary;

pub use execution::ExecutionRecord;
pub use observation::{Actor, ItemSnapshot, Observation, ObservationKind};
pub use outcome::{
    ActorClass, ActorSummary, Confidence, Evaluation, EvidenceStrength, OutcomeRecord,
    OutcomeStatus, WindowSnapshot, CHECKPOINTS,
};
pub use target::{Target, TargetKind};
