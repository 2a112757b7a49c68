//! A load sent over HTTP the way GitHub and gh-aw send it: signed webhook
//! deliveries and manifest posts, what got a 2xx, the outcomes read back
//! through the JSON export, and `serve` started on sled or on a PostgreSQL
//! database. Shared by the crash, replicas and database-down tests.

use crate::common;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use common::comparable;
use common::pg;
use common::serve::ServeChild;
use safe_outcomes::ingest::client::Client;
use safe_outcomes::model::OutcomeRecord;

pub const REPO: &str = "acme/widgets";

/// One request of the load.
#[derive(Clone, Debug)]
pub enum Send {
    Webhook {
        event: &'static str,
        id: String,
        body: Vec<u8>,
    },
    Manifest {
        run: u64,
        /// The same workflow id the body markers name (see `ExecutionRecord::merge`).
        workflow: &'static str,
        body: String,
    },
}

/// When the load's story starts: 2024, so every checkpoint has passed
/// whatever the system clock says.
pub fn base() -> DateTime<Utc> {
    "2024-01-10T09:00:00Z".parse().unwrap()
}

/// Send one request; true when it got a 2xx.
pub async fn send_one(client: &Client, s: &Send) -> bool {
    let answer = match s {
        Send::Webhook { event, id, body } => client.deliver(event, id, body).await,
        Send::Manifest {
            run,
            workflow,
            body,
        } => {
            client
                .post_manifest(REPO, *run, Some(workflow), body.clone())
                .await
        }
    };
    matches!(answer, Ok(a) if (200..300).contains(&a.status))
}

/// A SIGKILL for process `pid` once `after` requests were acknowledged.
#[derive(Clone, Copy)]
pub struct KillAt {
    pub after: usize,
    pub pid: u32,
}

/// Send `todo` spread round-robin over `clients`, `in_flight` at a time; returns what
/// got no 2xx (refused, or cut by the kill).
pub async fn send_spread(
    in_flight: usize,
    clients: &[Client],
    todo: Vec<Send>,
    kill: Option<KillAt>,
) -> Vec<Send> {
    let clients = Arc::new(clients.to_vec());
    let todo = Arc::new(todo);
    let next = Arc::new(AtomicUsize::new(0));
    let acked = Arc::new(AtomicUsize::new(0));
    let failed = Arc::new(Mutex::new(Vec::new()));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..in_flight {
        let (clients, todo, next, acked, failed) = (
            clients.clone(),
            todo.clone(),
            next.clone(),
            acked.clone(),
            failed.clone(),
        );
        tasks.spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(s) = todo.get(i) else { return };
                if send_one(&clients[i % clients.len()], s).await {
                    let n = acked.fetch_add(1, Ordering::SeqCst) + 1;
                    if let Some(k) = kill.filter(|k| k.after == n) {
                        let _ = std::process::Command::new("kill")
                            .args(["-KILL", &k.pid.to_string()])
                            .status();
                    }
                } else {
                    failed.lock().unwrap().push(i);
                }
            }
        });
    }
    while let Some(r) = tasks.join_next().await {
        r.unwrap();
    }
    let mut failed = failed.lock().unwrap().clone();
    failed.sort();
    failed.into_iter().map(|i| todo[i].clone()).collect()
}

/// Every output's outcome, through `export.jsonl`, without what differs
/// from run to run (`common::comparable`).
pub async fn outcomes(client: &Client) -> BTreeMap<String, OutcomeRecord> {
    let answer = client.get("/api/v1/export.jsonl").await.unwrap();
    assert_eq!(answer.status, 200, "{}", answer.body);
    answer
        .body
        .as_str()
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<OutcomeRecord>(l).unwrap())
        .map(|o| (o.safe_output_id.clone(), comparable(o)))
        .collect()
}

/// `serve` with `env` on PostgreSQL `database`, or on sled under `dir`
/// when None (whatever `SAFE_OUTCOMES_TEST_PG` says).
pub async fn serve_on(
    dir: &Path,
    mut env: Vec<(&str, &str)>,
    database: Option<&str>,
) -> ServeChild {
    match database {
        Some(url) => {
            env.push(("DATABASE_URL", url));
            ServeChild::start_without(dir, &env, &[pg::TEST_PG]).await
        }
        None => ServeChild::start_without(dir, &env, &["DATABASE_URL", pg::TEST_PG]).await,
    }
}
