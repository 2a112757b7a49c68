//! Crash: `safe-outcomes serve` under load is killed with SIGKILL after k
//! acknowledged requests, for several k, and restarted on the same DATA_DIR;
//! what did not get a 2xx is sent again (as GitHub redelivers). In the end
//! every acknowledged delivery is processed exactly once and the outcomes
//! equal those of a run that never crashed.
//!
//! Events are dated 2024, so every checkpoint has passed whatever the system
//! clock says: the outcomes do not depend on when the test runs.

use crate::common;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use chrono::{DateTime, Duration as ChronoDuration, Utc};
use common::serve::ServeChild;
use safe_outcomes::bench::payloads::{issue, pull_request, IssueEvent, PrEvent};
use safe_outcomes::ingest::client::Client;
use safe_outcomes::model::OutcomeRecord;

use crate::load::{base, outcomes, send_spread, KillAt, Send, REPO};
use serde_json::{json, Value};

const SECRET: &str = "crash-test-secret";
const TOKEN: &str = "crash-test-token";

fn manifest_line(kind: &str, path: &str, number: u64, at: DateTime<Utc>) -> Value {
    json!({
        "type": kind, "url": format!("https://github.com/{REPO}/{path}/{number}"),
        "number": number, "repo": REPO, "timestamp": at.to_rfc3339()
    })
}

/// Issues and PRs opened by gh-aw, their manifests, then human activity:
/// label churn, comments, closes and merges.
fn load() -> Vec<Send> {
    let mut sends = Vec::new();
    let humans = ["maria-lopez", "dev-kim", "stale[bot]"];
    let mut n = 0;
    let mut id = || {
        n += 1;
        format!("crash-{n:04}")
    };
    for k in 0..6u64 {
        let number = 100 + k;
        let run = 7000 + k;
        let opened = base() + ChronoDuration::hours(k as i64);
        let ev = |action, at, sender, label, comment_id| IssueEvent {
            label,
            comment_id,
            ..IssueEvent::of_agent_run(REPO, number, run, action, at, sender)
        };
        let body = |e: IssueEvent| issue(&e).to_string().into_bytes();
        sends.push(Send::Webhook {
            event: "issues",
            id: id(),
            body: body(ev("opened", opened, "github-actions[bot]", None, None)),
        });
        sends.push(Send::Manifest {
            run,
            workflow: "issue-triage",
            body: manifest_line("create_issue", "issues", number, opened).to_string(),
        });
        for j in 0..12i64 {
            let at = opened + ChronoDuration::minutes(10 + j);
            let action = if j % 2 == 0 { "labeled" } else { "unlabeled" };
            let label = if k % 2 == 0 || j < 11 {
                Some("triage")
            } else {
                None
            };
            sends.push(Send::Webhook {
                event: "issues",
                id: id(),
                body: body(ev(action, at, humans[(j % 3) as usize], label, None)),
            });
        }
        if k % 3 != 2 {
            let at = opened + ChronoDuration::hours(3);
            sends.push(Send::Webhook {
                event: "issue_comment",
                id: id(),
                body: body(ev(
                    "created",
                    at,
                    humans[(k % 2) as usize],
                    None,
                    Some(90_000 + k),
                )),
            });
        }
        if k % 2 == 1 {
            let at = opened + ChronoDuration::days(2);
            sends.push(Send::Webhook {
                event: "issues",
                id: id(),
                body: body(ev("closed", at, humans[(k % 3) as usize], None, None)),
            });
        }
    }
    for k in 0..4u64 {
        let number = 200 + k;
        let run = 8000 + k;
        let opened = base() + ChronoDuration::hours(10 + k as i64);
        let pr = |action, at, sender, label, merged| {
            pull_request(&PrEvent {
                label,
                merged,
                ..PrEvent::of_agent_run(REPO, number, run, action, at, sender)
            })
            .to_string()
            .into_bytes()
        };
        sends.push(Send::Webhook {
            event: "pull_request",
            id: id(),
            body: pr("opened", opened, "github-actions[bot]", None, false),
        });
        sends.push(Send::Manifest {
            run,
            workflow: "ci-coach",
            body: manifest_line("create_pull_request", "pull", number, opened).to_string(),
        });
        for j in 0..6i64 {
            sends.push(Send::Webhook {
                event: "pull_request",
                id: id(),
                body: pr(
                    "labeled",
                    opened + ChronoDuration::minutes(5 + j),
                    humans[(j % 2) as usize],
                    Some("ci"),
                    false,
                ),
            });
        }
        if k != 3 {
            sends.push(Send::Webhook {
                event: "pull_request",
                id: id(),
                body: pr(
                    "closed",
                    opened + ChronoDuration::days(1),
                    "maria-lopez",
                    None,
                    k % 2 == 0,
                ),
            });
        }
    }
    sends
}

/// Send `todo` with 8 in flight; kill the server with SIGKILL once `kill_after`
/// of them were acknowledged. Returns what did not get a 2xx.
async fn send_all(serve: &ServeChild, todo: Vec<Send>, kill_after: Option<usize>) -> Vec<Send> {
    let client = Client::new(&serve.url, Some(SECRET.into()), Some(TOKEN.into()));
    let pid = serve.child.id().expect("child pid");
    let kill = kill_after.map(|after| KillAt { after, pid });
    send_spread(8, &[client], todo, kill).await
}

/// Wait until the server processed everything it stored; returns (received, processed).
async fn drained(client: &Client) -> (u64, u64) {
    for _ in 0..600 {
        let s = client.get("/status").await.unwrap().body;
        // What this test demonstrates: acknowledged deliveries survive the
        // process being killed (README "Durability").
        // On PostgreSQL (the suite's engine when SAFE_OUTCOMES_TEST_PG is
        // set) an ack waits for a synced COMMIT: power loss.
        let on_pg = std::env::var_os(common::pg::TEST_PG).is_some();
        assert_eq!(s["database"]["engine"] == "postgres", on_pg, "{s}");
        let promised = if on_pg { "power_loss" } else { "process_crash" };
        assert_eq!(s["durability"], promised);
        let d = &s["deliveries"];
        let (received, processed) = (
            d["received"].as_u64().unwrap(),
            d["processed"].as_u64().unwrap(),
        );
        if d["backlog"] == 0 && received == processed {
            return (received, processed);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let s = client.get("/status").await.unwrap().body;
    panic!("the backlog did not drain: {}", s);
}

fn env() -> Vec<(&'static str, &'static str)> {
    vec![
        ("WEBHOOK_SECRET", SECRET),
        ("API_TOKEN", TOKEN),
        ("LOG_LEVEL", "warn"),
    ]
}

/// Run the load to the end, crashing at each kill point; returns the final
/// counters and outcomes.
async fn run(dir: &Path, kill_points: &[usize]) -> ((u64, u64), BTreeMap<String, OutcomeRecord>) {
    let mut todo = load();
    for &k in kill_points {
        let mut serve = ServeChild::start(dir, &env()).await;
        let before = todo.len();
        todo = send_all(&serve, todo, Some(k)).await;
        serve.kill9().await;
        eprintln!(
            "killed after {k} acks: {} of {before} to send again",
            todo.len()
        );
        if k < before {
            assert!(!todo.is_empty(), "the kill after {k} acks came too late");
        }
        if todo.is_empty() {
            break;
        }
    }
    let mut serve = ServeChild::start(dir, &env()).await;
    let left = send_all(&serve, todo, None).await;
    assert!(
        left.is_empty(),
        "{} not acknowledged without a crash",
        left.len()
    );
    let client = Client::new(&serve.url, Some(SECRET.into()), Some(TOKEN.into()));
    let counters = drained(&client).await;
    let result = outcomes(&client).await;
    serve.terminate().await;
    (counters, result)
}

fn kill_points() -> Vec<Vec<usize>> {
    if std::env::var_os("SAFE_OUTCOMES_LONG").is_some() {
        vec![vec![1], vec![7, 7, 7, 7, 7], vec![23, 41], vec![60, 3, 90]]
    } else {
        vec![vec![5, 40, 25]]
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_deliveries_survive_sigkill_exactly_once() {
    let total = load().len();
    assert!(total > 100, "{total}");
    let reference_dir = tempfile::tempdir().unwrap();
    let (reference_counters, reference) = run(reference_dir.path(), &[]).await;
    assert!(reference.len() >= 10, "{:?}", reference.keys());
    for points in kill_points() {
        let dir = tempfile::tempdir().unwrap();
        let (counters, crashed) = run(dir.path(), &points).await;
        // Stored once each (duplicates refused) and processed once each.
        assert_eq!(counters, reference_counters, "kill points {points:?}");
        assert_eq!(
            crashed.keys().collect::<Vec<_>>(),
            reference.keys().collect::<Vec<_>>(),
            "kill points {points:?}"
        );
        for (id, want) in &reference {
            assert_eq!(&crashed[id], want, "kill points {points:?}: {id}");
        }
    }
}
