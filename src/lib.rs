//! safe-outcomes: a GitHub App that measures what became of the writes AI agent
//! workflows make to GitHub ("safe outputs").

pub mod app;
pub mod assess;
pub mod bench;
pub mod cli;
pub mod client;
pub mod clock;
pub mod conformance;
pub mod demo;
pub mod escape;
pub mod evaluate;
pub mod github;
pub mod ingress;
#[cfg(test)]
mod layers;
pub mod manifest;
pub mod markers;
pub mod model;
pub mod oidc;
pub mod pressure;
pub mod probe;
pub mod reconcile;
pub mod report;
pub mod sane_time;
pub mod server;
pub mod signature;
pub mod spec;
pub mod state;
pub mod store;
pub mod targets;
pub mod webhook;
pub mod wire;
pub mod worker;
