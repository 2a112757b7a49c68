//! safe-outcomes: a GitHub App that measures what became of the writes AI agent
//! workflows make to GitHub ("safe outputs").
//!
//! The App crate of the workspace. Below it, crates the compiler keeps
//! apart (crates/README.md), re-exported here under the names the rooms use:
//!
//! | crate | re-exported as | owns |
//! |---|---|---|
//! | `safe-outcomes-model` | `model` | the vocabulary: records, observations, outcomes, targets, identifiers, GitHub's object shapes (`wire`), gh-aw markers, the clock, times from outside, escaping |
//! | `safe-outcomes-judge` | `judge::{assess, evaluate, reads}` | pure judgement: evaluators and the type registry, assessment and checkpoints, the read table |
//! | `safe-outcomes-store` | `store` | the one facade over sled or PostgreSQL: inbox, outputs, observations, units of work |
//!
//! The rooms of `src/`, bottom to top. A room may import only the rooms below
//! it and the crates (`tests/it/layers.rs` enforces the directions and the
//! crates' order; docs/architecture.md tells the data flow and where each
//! kind of change goes).
//!
//! | room | owns |
//! |---|---|
//! | `settings` | every environment variable read, declared once (the table the README's configuration section is rendered from), and `Secret`, the string that never prints |
//! | `ingest` | outside input → records and observations: webhooks, signatures, manifests, targets, OIDC, API state (`reconcile`), the sending client |
//! | `judge` | the judge crate, and what needs ingest besides it: judging from API state, gh-aw conformance, the rendered spec |
//! | `github` | the App's API side: auth, client, check runs, reconciler, signals, harvest, backfill, redelivery, line attribution |
//! | `read` | read cuts and scopes, the report, the exports |
//! | `app` | the wiring (`App::launch`), the worker, the state handlers and worker share, ingest pressure |
//! | `http` | the server: router, webhook and manifest endpoints, read API, sign-in, dashboard |
//! | `bench` | the performance harness and the whole-pipeline probe |
//! | `cli` | one file per command, and the demo |

pub mod app;
pub mod bench;
pub mod cli;
pub mod github;
pub mod http;
pub mod ingest;
pub mod judge;
pub mod read;
pub mod settings;

pub use safe_outcomes_model as model;
pub use safe_outcomes_store as store;
