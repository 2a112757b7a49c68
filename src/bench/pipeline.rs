//! The whole pipeline on hostile input, for the `pipeline` fuzz target and
//! the property tests (`tests/it/hostile_world.rs`): normalize → inbox item
//! → worker → assess → report, in process, on a real App (sled store, inbox
//! writer and worker threads).
//!
//! Each probe normalizes a delivery the way the webhook handler does; stores
//! what the boundary accepted; also stores the same facts with the raw,
//! unchecked times and numbers (a record written before the boundary existed,
//! or by a bug); waits for the worker; then assesses every output it touched
//! at an arbitrary instant and builds the report. It panics when an
//! invariant breaks: the worker died, an item was dead-lettered, or the
//! backlog did not drain.

use std::sync::atomic::Ordering;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::app::App;
use crate::ingest::webhook::{normalize, Normalized, HANDLED_EVENTS};
use crate::judge::assess::{assess, transitions};
use crate::model::clock::Clock;
use crate::read::report::Report;
use crate::store::inbox::InboxItem;

/// An issue opened by a gh-aw workflow: the template the numbers and times
/// of a probe are written into.
const TEMPLATE: &str = include_str!("../../fixtures/webhooks/issues/opened.gh-aw.json");

/// Probes run on one App before it is replaced by a fresh one (the store
/// would otherwise grow for the whole fuzzing run, and with it the work of
/// each probe on the targets the template shares).
const PROBES_PER_APP: u64 = 200;

/// One hostile delivery.
#[derive(Debug, Clone)]
pub struct Input {
    /// Index into `HANDLED_EVENTS` (wrapping; one past the end is `ping`).
    pub event: u8,
    /// A raw body; `None`: the gh-aw template with the fields below.
    pub body: Option<Vec<u8>>,
    /// Times as epoch milliseconds: written into the template (as seconds)
    /// and forced onto the stored facts unchecked.
    pub created_ms: i64,
    pub observed_ms: i64,
    /// The instant outputs are assessed at.
    pub now_ms: i64,
    /// The issue number and run id written into the template.
    pub number: u64,
    pub run_id: u64,
    /// Strings written into the template (title, login, workflow id).
    pub text: String,
}

impl Input {
    /// Read an input from fuzzer bytes (any bytes are an input).
    pub fn from_bytes(data: &[u8]) -> Input {
        let word = |i: usize| {
            let mut b = [0u8; 8];
            for (j, slot) in b.iter_mut().enumerate() {
                *slot = data.get(1 + i * 8 + j).copied().unwrap_or(0);
            }
            i64::from_le_bytes(b)
        };
        let (created_ms, observed_ms, now_ms) = (word(0), word(1), word(2));
        let (number, run_id) = (word(3) as u64, word(4) as u64);
        let rest = data.get(41..).unwrap_or_default();
        let raw = data.first().is_some_and(|b| b & 0x80 != 0);
        Input {
            event: data.first().copied().unwrap_or(0) & 0x7f,
            body: raw.then(|| rest.to_vec()),
            created_ms,
            observed_ms,
            now_ms,
            number,
            run_id,
            text: String::from_utf8_lossy(rest).into_owned(),
        }
    }

    fn event(&self) -> &'static str {
        if self.body.is_none() {
            return "issues";
        }
        HANDLED_EVENTS
            .get(self.event as usize % (HANDLED_EVENTS.len() + 1))
            .copied()
            .unwrap_or("ping")
    }

    fn body(&self) -> Vec<u8> {
        if let Some(body) = &self.body {
            return body.clone();
        }
        let mut v: Value = serde_json::from_str(TEMPLATE).expect("template parses");
        let issue = &mut v["issue"];
        issue["number"] = self.number.into();
        issue["created_at"] = (self.created_ms / 1000).into();
        issue["updated_at"] = (self.observed_ms / 1000).into();
        issue["title"] = self.text.clone().into();
        issue["user"]["login"] = self.text.clone().into();
        let body = issue["body"]
            .as_str()
            .unwrap_or_default()
            .replace("1234567890", &self.run_id.to_string());
        issue["body"] = body.replace("ci-coach", &self.text).into();
        serde_json::to_vec(&v).expect("serializes")
    }
}

/// A time from any i64 of milliseconds: chrono's own range, clamped.
fn any_time(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or(if ms < 0 {
        DateTime::<Utc>::MIN_UTC
    } else {
        DateTime::<Utc>::MAX_UTC
    })
}

/// A running App the probes go through, with its own runtime and store.
pub struct Probe {
    runtime: tokio::runtime::Runtime,
    app: Option<App>,
    dir: Option<tempfile::TempDir>,
    probes: u64,
    deliveries: u64,
}

impl Default for Probe {
    fn default() -> Probe {
        Probe::new()
    }
}

impl Probe {
    pub fn new() -> Probe {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        Probe {
            runtime,
            app: None,
            dir: None,
            probes: 0,
            deliveries: 0,
        }
    }

    fn app(&mut self) -> &App {
        if self.probes.is_multiple_of(PROBES_PER_APP) {
            if let Some(app) = self.app.take() {
                app.shutdown();
            }
            // On tmpfs where there is one: the inbox flushes every batch,
            // and the probe is about the pipeline, not the disk.
            let shm = std::path::Path::new("/dev/shm");
            let dir = match shm.is_dir() {
                true => tempfile::tempdir_in(shm),
                false => tempfile::tempdir(),
            }
            .expect("temp dir");
            let start = DateTime::from_timestamp(1_800_000_000, 0).expect("start");
            self.app = Some(App::start(dir.path(), Clock::manual(start)).expect("app starts"));
            self.dir = Some(dir);
        }
        self.app.as_ref().expect("started above")
    }

    /// Run one input through the pipeline; panics when an invariant breaks.
    pub fn run(&mut self, input: &Input) {
        self.deliveries += 1;
        let delivery = format!("probe-{}", self.deliveries);
        let event = input.event();
        let body = input.body();
        let app = self.app();
        let mut items = Vec::new();
        let accepted = match normalize(event, &delivery, &body) {
            Ok(Normalized::Relevant(d)) => Some(d),
            _ => None,
        };
        // What the boundary refused still reaches the worker below, with
        // its raw times: the template with ordinary times gives the facts.
        let facts = accepted.clone().or_else(|| {
            let ordinary = Input {
                created_ms: 1_790_000_000_000,
                observed_ms: 1_790_000_000_000,
                ..input.clone()
            };
            match input
                .body
                .is_none()
                .then(|| normalize(event, &delivery, &ordinary.body()))
            {
                Some(Ok(Normalized::Relevant(d))) => Some(d),
                _ => None,
            }
        });
        if let Some(d) = facts {
            let received_at = app.shared.clock.now();
            let item = |id: String, observations, discoveries| InboxItem::Delivery {
                delivery_id: id,
                event: d.event.clone(),
                action: d.action.clone(),
                received_at,
                observations,
                discoveries,
                installation_change: d.installation_change.clone(),
            };
            if accepted.is_some() {
                items.push(item(
                    delivery.clone(),
                    d.observations.clone(),
                    d.discoveries.clone(),
                ));
            }
            // The same facts with unchecked times: what a store written
            // before the boundary existed may hold.
            let mut observations = d.observations.clone();
            for o in &mut observations {
                o.at = any_time(input.observed_ms);
            }
            let mut discoveries = d.discoveries.clone();
            for r in &mut discoveries {
                r.executed_at = any_time(input.created_ms);
            }
            items.push(item(format!("{delivery}-raw"), observations, discoveries));
        }
        let ids: Vec<String> = items
            .iter()
            .flat_map(|item| match item {
                InboxItem::Delivery { discoveries, .. } => discoveries.clone(),
                _ => Vec::new(),
            })
            .map(|r| r.id)
            .collect();
        let runtime = &self.runtime;
        let app = self.app.as_ref().expect("started");
        runtime.block_on(async {
            for item in items {
                app.writer.enqueue(item).await.expect("stored");
            }
            app.wait_idle().await;
        });
        let shared = &app.shared;
        assert_eq!(shared.worker_death(), None, "the worker died");
        assert_eq!(
            shared.dead_letters.load(Ordering::Relaxed),
            0,
            "an item failed: {:?}",
            shared.last_error()
        );
        assert_eq!(app.store.backlog(), 0, "the backlog did not drain");
        self.assess(&ids, any_time(input.now_ms));
        self.probes += 1;
    }

    /// Assess the probe's outputs at `now`, and build the report.
    fn assess(&self, ids: &[String], now: DateTime<Utc>) {
        let app = self.app.as_ref().expect("started");
        let mut outcomes = Vec::new();
        for id in ids {
            let stored = app.store.output(id).expect("stored outputs decode");
            let stored = stored.expect("a discovered output is stored");
            let observations = app
                .store
                .observations(&stored.execution.watch_keys())
                .expect("observations decode");
            outcomes.push(assess(&stored.execution, &observations, now));
            transitions(&stored.execution, &observations, now);
        }
        let report = Report::build(&outcomes, None, Some("7d"), now);
        report.to_table();
        serde_json::to_string(&report).expect("the report serializes");
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        if let Some(app) = self.app.take() {
            app.shutdown();
        }
    }
}
