//! Clock jumps: `serve` runs under libfaketime, and its wall clock is
//! stepped forward and back while it runs, the way NTP or an operator steps
//! a machine's clock (the monotonic clock is left alone, as a step leaves
//! it). The time file is re-read at every reading of the clock.
//!
//! What holds (docs/store.md and `judge::assess::judged_as_of`):
//! - a step forward takes every checkpoint it passes, at the next pass of
//!   the schedule, without a restart;
//! - a step back refuses nothing and loses nothing: deliveries are
//!   acknowledged and processed, readiness stays true, and an output is
//!   never judged as of an earlier time than it already was — no
//!   checkpoint snapshot once taken disappears, none is scheduled again;
//! - back to the true time, the rest of the checkpoints are taken once.
//!
//! Needs libfaketime (Debian's `faketime`); `.ci/run` installs it. Without
//! it the test says so and passes, except under `CI`, where it fails.

use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, Duration as ChronoDuration, Utc};
use safe_outcomes::bench::payloads::{issue, IssueEvent};
use safe_outcomes::ingest::client::Client;
use serde_json::{json, Value};

use crate::common::serve::ServeChild;

const SECRET: &str = "clock-jump-secret";
const TOKEN: &str = "clock-jump-token";
const REPO: &str = "acme/widgets";
const RUN: u64 = 424_242;
const NUMBER: u64 = 77;

/// Where Debian and others put libfaketime.
const LIBFAKETIME: [&str; 4] = [
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/faketime/libfaketime.so.1",
    "/usr/local/lib/faketime/libfaketime.so.1",
];

fn libfaketime() -> Option<PathBuf> {
    LIBFAKETIME.iter().map(PathBuf::from).find(|p| p.exists())
}

/// Step the server's wall clock to `offset` from the true time
/// (libfaketime's relative format: `+26h`, `-2d`, `+0`).
fn step_clock(file: &Path, offset: &str) {
    std::fs::write(file, format!("{offset}\n")).unwrap();
}

/// The one output's record as `GET /api/v1/outputs/{id}` reads it.
async fn detail(client: &Client, id: &str) -> Value {
    let answer = client
        .get(&format!("/api/v1/outputs/{id}"))
        .await
        .expect("the server answers");
    assert_eq!(answer.status, 200, "{}", answer.body);
    answer.body
}

/// The checkpoints the output's record has passed, sorted by name.
fn windows(detail: &Value) -> Vec<String> {
    let mut names: Vec<String> = detail["outcome"]["windows"]
        .as_object()
        .map(|w| w.keys().cloned().collect())
        .unwrap_or_default();
    names.sort();
    names
}

/// `names`, sorted as `windows` sorts them.
fn sorted(names: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    names.sort();
    names
}

/// Wait until the output's record has passed exactly `want`.
async fn until_windows(serve: &ServeChild, client: &Client, id: &str, want: &[&str]) -> Value {
    // The worker reads the schedule every 15 s.
    for _ in 0..45 {
        let d = detail(client, id).await;
        if windows(&d) == sorted(want) {
            return d;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    panic!(
        "{id} never passed {want:?}: {}\n{}",
        detail(client, id).await,
        serve.output()
    );
}

/// Deliver one issue event, as GitHub does; asserts the 2xx.
async fn deliver(client: &Client, n: u32, action: &str, at: DateTime<Utc>, sender: &str) {
    let event = IssueEvent {
        comment_id: (action == "created").then_some(9_000 + n as u64),
        ..IssueEvent::of_agent_run(REPO, NUMBER, RUN, action, at, sender)
    };
    let kind = if action == "created" {
        "issue_comment"
    } else {
        "issues"
    };
    let body = issue(&event).to_string().into_bytes();
    let answer = client
        .deliver(kind, &format!("clock-jump-{n}"), &body)
        .await
        .expect("the server answers");
    assert!(
        (200..300).contains(&answer.status),
        "delivery {n}: {}",
        answer.body
    );
}

/// maria-lopez's issue event `n`, delivered and processed: with the
/// agent's issue and its manifest before it, `n + 1` processed in all.
async fn person_acts(client: &Client, n: u32, action: &str, at: DateTime<Utc>) {
    deliver(client, n, action, at, "maria-lopez").await;
    drained(client, u64::from(n) + 1).await;
}

/// When the output of `detail` was last judged.
fn judged_at(detail: &Value) -> DateTime<Utc> {
    detail["outcome"]["evaluated_at"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

/// Wait until everything received was processed; returns the count.
async fn drained(client: &Client, at_least: u64) -> u64 {
    for _ in 0..300 {
        let s = client.get("/status").await.unwrap().body;
        let d = &s["deliveries"];
        let processed = d["processed"].as_u64().unwrap_or(0);
        if d["backlog"] == 0 && processed >= at_least {
            return processed;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "the backlog did not drain: {}",
        client.get("/status").await.unwrap().body
    );
}

/// Wait until the server's clock (its `Date` header) reads `offset` from
/// the true time, give or take an hour: libfaketime works in it. (Only
/// for steps forward: hyper keeps the `Date` it formatted until the clock
/// passes the second after it, so after a step back it stands still.)
async fn until_clock(url: &str, offset: ChronoDuration) {
    let http = reqwest::Client::new();
    let mut seen = String::new();
    for _ in 0..50 {
        let answer = http.get(format!("{url}/ping")).send().await.unwrap();
        seen = answer.headers()["date"].to_str().unwrap().to_string();
        let date = DateTime::parse_from_rfc2822(&seen.replace("GMT", "+0000")).unwrap();
        let off = date.with_timezone(&Utc) - Utc::now();
        if (off - offset).num_minutes().abs() < 60 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("the server's clock never moved to {offset}: Date {seen}");
}

async fn ready(client: &Client) {
    let answer = client.get("/ready").await.unwrap();
    assert_eq!(answer.status, 200, "{}", answer.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkpoints_follow_a_wall_clock_stepped_forward_and_back() {
    let Some(lib) = libfaketime() else {
        crate::common::skip_without(
            &format!("libfaketime (Debian: apt-get install faketime; looked in {LIBFAKETIME:?})"),
            "checkpoints were not tested on a stepped wall clock",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let time_file = dir.path().join("faketime.rc");
    step_clock(&time_file, "+0");
    let data_dir = dir.path().join("data");
    let lib = lib.to_string_lossy().into_owned();
    let time_file_s = time_file.to_string_lossy().into_owned();
    let serve = ServeChild::start(
        &data_dir,
        &[
            ("WEBHOOK_SECRET", SECRET),
            ("API_TOKEN", TOKEN),
            ("LOG_LEVEL", "warn"),
            ("LD_PRELOAD", &lib),
            ("FAKETIME_TIMESTAMP_FILE", &time_file_s),
            ("FAKETIME_NO_CACHE", "1"),
            ("FAKETIME_DONT_FAKE_MONOTONIC", "1"),
        ],
    )
    .await;
    let client = Client::new(&serve.url, Some(SECRET.into()), Some(TOKEN.into()));

    // The agent opens an issue now and its run's manifest names it.
    let t0 = Utc::now();
    deliver(&client, 1, "opened", t0, "github-actions[bot]").await;
    let line = json!({
        "type": "create_issue", "url": format!("https://github.com/{REPO}/issues/{NUMBER}"),
        "number": NUMBER, "repo": REPO, "timestamp": t0.to_rfc3339()
    });
    let answer = client
        .post_manifest(REPO, RUN, Some("issue-triage"), line.to_string())
        .await
        .unwrap();
    assert!((200..300).contains(&answer.status), "{}", answer.body);
    drained(&client, 2).await;
    let list = client.get("/api/v1/outputs").await.unwrap().body;
    let id = list["items"][0]["safe_output_id"]
        .as_str()
        .unwrap_or_else(|| panic!("one output: {list}"))
        .to_string();
    assert!(windows(&detail(&client, &id).await).is_empty());

    // A day and two hours on: the 1h and 24h checkpoints, no restart.
    step_clock(&time_file, "+26h");
    until_clock(&serve.url, ChronoDuration::hours(26)).await;
    let d = until_windows(&serve, &client, &id, &["1h", "24h"]).await;
    let judged = judged_at(&d);
    assert!(judged >= t0 + ChronoDuration::hours(26), "{d}");
    ready(&client).await;

    // Stepped back two days, before the output's execution: a person's
    // comment is acknowledged and processed, the output re-judged, and
    // nothing taken is undone.
    step_clock(&time_file, "-2d");
    person_acts(&client, 2, "created", t0 + ChronoDuration::hours(2)).await;
    ready(&client).await;
    let d = detail(&client, &id).await;
    assert_eq!(
        windows(&d),
        sorted(&["1h", "24h"]),
        "a step back undid checkpoints: {d}"
    );
    let judged_after = judged_at(&d);
    assert!(judged_after >= judged, "judged as of an earlier time: {d}");
    // Still two days back, a pass of the schedule (every 15 s) takes nothing again.
    tokio::time::sleep(Duration::from_secs(16)).await;
    assert_eq!(windows(&detail(&client, &id).await), sorted(&["1h", "24h"]));

    // A month on: 7d and 30d, the verdict final.
    step_clock(&time_file, "+31d");
    until_clock(&serve.url, ChronoDuration::days(31)).await;
    let d = until_windows(&serve, &client, &id, &["1h", "24h", "7d", "30d"]).await;
    assert_eq!(d["schedule"]["verdict_final"], true, "{}", d["schedule"]);

    // Back to the true time: a final verdict stays final.
    step_clock(&time_file, "+0");
    person_acts(&client, 3, "labeled", t0 + ChronoDuration::hours(3)).await;
    let d = detail(&client, &id).await;
    assert_eq!(windows(&d), sorted(&["1h", "24h", "7d", "30d"]), "{d}");
    assert_eq!(d["schedule"]["verdict_final"], true, "{}", d["schedule"]);
    ready(&client).await;
    let s = client.get("/status").await.unwrap().body;
    assert_eq!(s["dead_letters"], 0, "{s}");
}
