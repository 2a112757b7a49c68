//! Ingest: what comes from outside, turned into our records and observations.
//! A webhook delivery (`webhook`, checked by `signature`), a gh-aw manifest
//! (`manifest`, `targets`, staged by `ingress`, or posted with an Actions
//! token checked by `oidc`), and API state read back (`reconcile`: API answers
//! → observations). `client` is the sending side (signed deliveries, manifest
//! posts, the scenario format). `tenancy` binds the model's tenancy rule to
//! the installations the store knows.
//!
//! May import: `model`, `store`.

pub mod client;
pub(crate) mod ingress;
pub mod manifest;
pub mod oidc;
pub mod reconcile;
pub mod signature;
pub(crate) mod targets;
pub(crate) mod tenancy;
pub mod webhook;
