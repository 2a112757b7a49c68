//! The GitHub App side: App authentication (`auth`), the one disciplined way to
//! call the API (`client`, with `retry` deciding what is transient and what is
//! terminal), the installations we know (`installations`), and the outcome
//! check run on PRs (`checks` renders and stores it, `publisher` debounces and
//! sends it), reconciliation from the API state (`fetch` reads it,
//! `reconciler` queues outputs and hands the results to the worker),
//! missed deliveries (`redelivery`), the signals no webhook carries
//! (`signals`: reactions, team membership, closing PRs, read at checkpoints)
//! and gh-aw manifests pulled from workflow run artifacts (`harvest`), also
//! for the runs of the last days of a new installation (`backfill`). Without `APP_ID` none of this runs
//! (listen-only mode).
//! Line attribution (`attribution`: an agent's landed lines and their
//! survival) lives here too: it reads commits and files through the same client.
//!
//! May import: `model`, `store`, `ingest`, `judge`.

pub mod attribution;
pub(crate) mod auth;
pub mod backfill;
pub mod calls;
pub(crate) mod checks;
pub mod client;
pub(crate) mod error;
pub mod fetch;
pub mod harvest;
pub(crate) mod installations;
pub(crate) mod pacing;
pub mod publisher;
pub mod reconciler;
pub mod redelivery;
pub(crate) mod retry;
pub mod signals;
pub(crate) mod task;
pub mod verify;

pub use auth::{AppCredentials, ConfigError};
pub use calls::ApiCalls;
pub use client::{Endpoint, GitHubClient};
pub use error::GitHubError;
pub use retry::RetryPolicy;
