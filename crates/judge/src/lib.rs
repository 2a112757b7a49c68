//! Judgement, pure: an execution record and the observations of its targets
//! → an outcome. No I/O, no async, no store.
//!
//! `evaluate` holds one evaluator per output-type family and the type
//! registry; `assess` turns an evaluation into the outcome record with its
//! checkpoints; `reads` is the table of what each path reads for each type
//! (the facts, their webhooks, the API reads that recover them).
//!
//! Depends on: `safe-outcomes-model` only.
//!
//! # Judging one output
//!
//! An agent opened pull request #7; two days later a person merged it. The
//! record says what the agent did (as gh-aw's manifest line does), the
//! observations what GitHub showed afterwards (as its webhooks or its API
//! do); [`evaluate()`] judges as of a time, [`assess()`] adds the 24 h, 72 h
//! and 7 d checkpoints that have passed:
//!
//! ```
//! use chrono::{Duration, TimeZone, Utc};
//! use safe_outcomes_judge::{assess, evaluate};
//! use safe_outcomes_model::{
//!     Actor, EvidenceStrength, ExecutionRecord, ItemSnapshot, Observation, ObservationKind,
//!     OutcomeStatus, Target, TargetKind,
//! };
//!
//! let executed_at = Utc.with_ymd_and_hms(2026, 11, 2, 9, 0, 0).unwrap();
//! let pr = Target::thread("acme/widgets", TargetKind::PullRequest, 7);
//! let record = ExecutionRecord {
//!     id: ExecutionRecord::output_id("acme/widgets", Some(4242), "0"),
//!     output_type: "create_pull_request".into(),
//!     repo: "acme/widgets".into(),
//!     run_id: Some(4242),
//!     index: Some(0),
//!     target: Some(pr.clone()),
//!     executed_at,
//!     actor: Some("github-actions[bot]".into()),
//!     ..ExecutionRecord::default()
//! };
//! let opened = Observation {
//!     id: "delivery-0/0".into(),
//!     at: executed_at,
//!     target: pr.key(),
//!     actor: Some(Actor::new("github-actions[bot]", "Bot")),
//!     event: ObservationKind::Opened,
//!     snapshot: Some(ItemSnapshot { state: "open".into(), ..ItemSnapshot::default() }),
//! };
//! let merged = Observation {
//!     id: "delivery-1/0".into(),
//!     at: executed_at + Duration::days(2),
//!     target: pr.key(),
//!     actor: Some(Actor::new("octocat", "User")),
//!     event: ObservationKind::Closed,
//!     snapshot: Some(ItemSnapshot {
//!         state: "closed".into(),
//!         merged: true,
//!         merged_by: Some(Actor::new("octocat", "User")),
//!         ..ItemSnapshot::default()
//!     }),
//! };
//! let observations = [opened, merged];
//!
//! let day_one = evaluate(&record, &observations, executed_at + Duration::days(1));
//! assert_eq!(day_one.status, OutcomeStatus::Pending);
//!
//! let week = evaluate(&record, &observations, executed_at + Duration::days(7));
//! assert_eq!(week.status, OutcomeStatus::Accepted);
//! assert_eq!(week.strength, EvidenceStrength::Strong);
//! assert_eq!(week.signal.as_str(), "merged");
//!
//! let outcome = assess(&record, &observations, executed_at + Duration::days(3));
//! assert_eq!(outcome.outcome_status, OutcomeStatus::Accepted);
//! assert_eq!(outcome.windows.len(), 2, "24h and 72h have passed");
//! ```

#![warn(missing_docs)]

pub mod assess;
pub mod evaluate;
pub mod reads;

pub use assess::assess;
pub use evaluate::evaluate;
