//! safe-outcomes: a GitHub App that measures what became of the writes AI agent
//! workflows make to GitHub ("safe outputs").
//!
//! A map of the modules (docs/architecture.md tells the data flow and where
//! each kind of change goes). Roughly top to bottom; no two top-level
//! modules import each other, directly or through others (`layers` tests it).
//!
//! - Entry points: `cli` (one file per command), `demo`, `bench`, `probe`.
//! - Wiring: `app` (`App::launch` starts store, writer, worker and the
//!   GitHub tasks: one wiring for `serve`, `demo`, `bench` and tests).
//! - HTTP: `server` (router and handlers; `server::auth` setup and sign-in,
//!   `server::dashboard` the pages, `server::read` who may read what),
//!   `ingress` (errors, body limits
//!   and manifest staging, shared with the harvester), `signature`, `oidc`,
//!   `client` (the sending side: signed deliveries, manifest posts).
//! - Processing: `worker` (inbox → observations → outcomes, checkpoints),
//!   `attribution` (an agent's landed lines and their survival), `export`
//!   (opentraces records),
//!   `state` (what handlers, writer and worker share), `pressure`.
//! - GitHub: `github` (App auth, the API client, check runs, reconciler,
//!   harvester, backfill, signals, redelivery), `reconcile` (API state →
//!   observations).
//! - Input vocabulary: `webhook` (a delivery → observations and
//!   discoveries), `manifest` (a gh-aw manifest line → an execution record),
//!   `targets` (what each output type targets), `markers`, `wire` (GitHub's
//!   objects as both webhooks and the API send them).
//! - Judgement (pure): `evaluate` (one evaluator per output-type family and
//!   the type registry), `assess` (record + observations → outcome),
//!   `conformance`, `spec` (docs/evaluation.md rendered from the code).
//! - Data: `model`, `store` (sled, units of work), `query` (read cuts and
//!   scopes), `report`, `clock`, `sane_time`, `escape`.
//! - Tests' helpers: `shared_data` (the `../shared` data CI requires).

pub mod app;
pub mod assess;
pub mod attribution;
pub mod bench;
pub mod cli;
pub mod client;
pub mod clock;
pub mod conformance;
pub mod demo;
pub mod escape;
pub mod evaluate;
pub mod export;
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
pub mod query;
pub mod reconcile;
pub mod report;
pub mod sane_time;
pub mod server;
pub mod shared_data;
pub mod signature;
pub mod spec;
pub mod state;
pub mod store;
pub mod targets;
pub mod webhook;
pub mod wire;
pub mod worker;
