//! The integration suite, linked as one test binary: one link of the whole
//! dependency tree instead of one per file keeps CI's time and disk small.
//! Each module is one area of behaviour; `common` is the harness (a real App
//! behind the real router) and `fake_github` the model of GitHub
//! (`safe_outcomes::bench::github_model`, the one fake GitHub) over real HTTP.
//! The backpressure test measures the process's memory, so it keeps a
//! binary of its own (`tests/backpressure.rs`).

#[path = "../common/mod.rs"]
mod common;
use safe_outcomes::bench::github_model as fake_github;

mod answers;
mod attribution;
mod backfill;
mod bad_input;
mod bench_api;
mod big_manifests;
mod browser;
mod clean_hands;
mod cli;
mod cli_web;
mod clock_jumps;
mod closed_doors;
mod conformance;
mod coverage_of_types;
mod crash;
mod dashboard;
mod dashboard_details;
mod database_down;
mod demo_scenario;
mod demo_serve;
mod differential;
mod disk_full;
mod doors;
mod error_shape;
mod export;
mod faults;
mod first_hour;
mod github_app;
mod github_contract;
mod github_failures;
mod github_payloads;
mod give_way;
mod harvest;
mod hostile_input;
mod hostile_world;
mod injection;
mod layers;
mod load;
mod metadata_outputs;
mod metrics;
mod oidc;
mod operator_sign_in;
mod order_property;
mod otlp;
mod outcomes_sql;
mod payloads;
mod raw_webhook;
mod read_api;
mod read_cuts;
mod read_tokens;
mod readme;
mod reconcile;
mod redelivery;
mod replicas;
mod restart;
mod rollups;
mod routes;
mod schema;
mod security;
mod security_headers;
mod settings;
mod shared_sessions;
mod sign_in;
mod signals;
mod source;
mod store_refusals;
mod tenancy;
mod vocabulary;
mod windows;
mod workflow_outputs;
