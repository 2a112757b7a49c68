//! safe-outcomes: a GitHub App that measures what became of the writes AI agent
//! workflows make to GitHub ("safe outputs").

pub mod evaluate;
pub mod manifest;
pub mod markers;
pub mod model;
pub mod webhook;
