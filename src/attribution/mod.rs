//! Line attribution (seed 004): which of an agent's lines landed on the
//! default branch when its PR merged or its push landed, and how many of them
//! survive at the 7- and 30-day checkpoints.

pub mod attribute;
pub mod diff;
pub mod record;
pub mod survival;

pub use attribute::{line_hash, DEFAULT_MAX_FILES};
