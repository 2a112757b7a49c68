//! The database goes away: a `serve` on PostgreSQL whose cluster is stopped
//! (`pg_ctl stop -m fast`, every connection cut) answers webhook deliveries
//! and manifests with 503 — never a 2xx for something it could not commit —
//! and `/status` says the database is unreachable and why. When the cluster
//! comes back (same port), the same process recovers by itself: the refused
//! delivery, sent again as GitHub's redelivery would, is accepted as new
//! (it was not half-stored) and processed to the outcome a sled instance
//! gives.
//!
//! Needs a PostgreSQL cluster of its own (`common::pg`); without the
//! binaries it fails under CI and skips loudly otherwise.

use crate::common;
use std::path::Path;
use std::time::Duration;

use chrono::{DateTime, Duration as ChronoDuration, Utc};
use common::pg::Pg;
use common::serve::ServeChild;
use safe_outcomes::bench::payloads::{issue, IssueEvent};
use safe_outcomes::ingest::client::Client;
use serde_json::{json, Value};

const SECRET: &str = "db-down-secret";
const TOKEN: &str = "db-down-token";
const REPO: &str = "acme/widgets";
const RUN: u64 = 7100;
const OUTPUT: &str = "acme/widgets:7100:0";

fn opened_at() -> DateTime<Utc> {
    "2024-02-01T09:00:00Z".parse().unwrap()
}

fn issue_body(action: &str, minutes: i64, sender: &str) -> Vec<u8> {
    issue(&IssueEvent {
        repo: REPO,
        number: 300,
        action,
        at: opened_at() + ChronoDuration::minutes(minutes),
        sender,
        gh_aw_run: Some(RUN),
        label: None,
        comment_id: None,
    })
    .to_string()
    .into_bytes()
}

fn manifest() -> String {
    json!({"type": "create_issue", "url": format!("https://github.com/{REPO}/issues/300"),
           "number": 300, "repo": REPO, "timestamp": opened_at().to_rfc3339()})
    .to_string()
}

/// `serve` in listen-only mode on `database`, or on sled under `dir` when None.
async fn serve(dir: &Path, database: Option<&str>) -> ServeChild {
    let env = vec![
        ("WEBHOOK_SECRET", SECRET),
        ("API_TOKEN", TOKEN),
        ("LOG_LEVEL", "warn"),
    ];
    crate::load::serve_on(dir, env, database).await
}

/// The output's outcome once it is there (200), within 30 s.
async fn outcome_of(c: &Client) -> Value {
    for _ in 0..300 {
        let a = c.get(&format!("/api/v1/outputs/{OUTPUT}")).await.unwrap();
        if a.status == 200 && !a.body["outcome"].is_null() {
            return a.body["outcome"].clone();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{OUTPUT} never appeared");
}

/// Why the database is unreachable, if `/status` says it is.
fn unreachable_because(status: &Value) -> Option<String> {
    let d = &status["database"];
    let text = d.to_string().to_lowercase();
    let down = d["reachable"] == false || d["ok"] == false || text.contains("unreachable");
    if !down {
        return None;
    }
    ["error", "reason", "last_error", "message"]
        .iter()
        .filter_map(|k| d[*k].as_str())
        .find(|s| !s.trim().is_empty())
        .map(str::to_string)
}

async fn status(c: &Client) -> Value {
    c.get("/status")
        .await
        .map(|a| a.body)
        .unwrap_or(Value::Null)
}

/// What a sled instance makes of the same three requests: the outcome to
/// converge to.
async fn sled_outcome(dir: &Path) -> Value {
    let mut one = serve(dir, None).await;
    let c = Client::new(&one.url, Some(SECRET.into()), Some(TOKEN.into()));
    let bot = "github-actions[bot]";
    assert_eq!(
        c.deliver("issues", "dd-open", &issue_body("opened", 0, bot))
            .await
            .unwrap()
            .status,
        202
    );
    let m = c
        .post_manifest(REPO, RUN, Some("issue-triage"), manifest())
        .await
        .unwrap();
    assert!((200..300).contains(&m.status), "{}", m.body);
    let closed = issue_body("closed", 90, "maria-lopez");
    let a = c.deliver("issues", "dd-closed", &closed).await.unwrap();
    assert_eq!(a.status, 202, "{}", a.body);
    // Everything stored is processed (sled's counters are exact).
    for _ in 0..300 {
        let d = status(&c).await["deliveries"].clone();
        if d["backlog"] == 0 && d["received"] == d["processed"] {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let outcome = outcome_of(&c).await;
    one.terminate().await;
    outcome
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_outage_gives_503s_and_the_app_recovers_by_itself() {
    let Some(pg) = Pg::own("database_down::a_database_outage_gives_503s_and_the_app_recovers")
    else {
        return;
    };
    let cluster = pg.cluster().expect("a cluster of our own");
    let database = pg.fresh_database("so_database_down");
    let dir = tempfile::tempdir().unwrap();
    let want = sled_outcome(&dir.path().join("sled")).await;
    let mut child = serve(&dir.path().join("pg"), Some(&database)).await;
    let c = Client::new(&child.url, Some(SECRET.into()), Some(TOKEN.into()));

    // Up: the output and its target are stored.
    let bot = "github-actions[bot]";
    let a = c
        .deliver("issues", "dd-open", &issue_body("opened", 0, bot))
        .await
        .unwrap();
    assert_eq!(a.status, 202, "{}", a.body);
    let m = c
        .post_manifest(REPO, RUN, Some("issue-triage"), manifest())
        .await
        .unwrap();
    assert!((200..300).contains(&m.status), "{}", m.body);
    let before = outcome_of(&c).await;
    assert!(unreachable_because(&status(&c).await).is_none());

    // Down: 503s, never a 2xx.
    cluster.stop();
    let closed = issue_body("closed", 90, "maria-lopez");
    for attempt in 0..5 {
        let a = c.deliver("issues", "dd-closed", &closed).await.unwrap();
        assert_eq!(
            a.status, 503,
            "attempt {attempt}: a delivery that cannot be committed: {}",
            a.body
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let m = c
        .post_manifest(REPO, RUN + 1, Some("issue-triage"), manifest())
        .await
        .unwrap();
    // Asserted at the end, so one wrong answer does not hide the rest.
    let manifest_while_down = (m.status, m.body.to_string());
    let mut said = None;
    for _ in 0..100 {
        said = unreachable_because(&status(&c).await);
        if said.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let last = status(&c).await;
    let why = said.unwrap_or_else(|| {
        panic!("/status does not say the database is unreachable and why: {last}")
    });
    eprintln!("/status while down: {why}");

    // Back (same port): the same process recovers without a restart.
    cluster.start_again();
    let mut back = false;
    for _ in 0..600 {
        let s = status(&c).await;
        if !s.is_null() && unreachable_because(&s).is_none() {
            back = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(back, "still unreachable: {}", status(&c).await);
    assert!(
        child.child.try_wait().unwrap().is_none(),
        "serve exited: {}",
        child.output()
    );
    // The refused delivery was not half-stored: accepted as new, processed.
    let mut accepted = None;
    for _ in 0..100 {
        let a = c.deliver("issues", "dd-closed", &closed).await.unwrap();
        if a.status != 503 {
            accepted = Some(a);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let a = accepted.expect("deliveries accepted again within 10 s");
    assert_eq!(a.status, 202, "{}", a.body);
    let want = without_evaluated_at(want);
    let mut got = without_evaluated_at(outcome_of(&c).await);
    for _ in 0..300 {
        if got == want {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        got = without_evaluated_at(outcome_of(&c).await);
    }
    assert_ne!(
        without_evaluated_at(before),
        want,
        "the closing delivery changes the outcome"
    );
    assert_eq!(got, want);
    child.terminate().await;
    assert_eq!(
        manifest_while_down.0, 503,
        "a manifest that cannot be committed: {}",
        manifest_while_down.1
    );
}

fn without_evaluated_at(mut o: Value) -> Value {
    if let Some(m) = o.as_object_mut() {
        m.remove("evaluated_at");
    }
    o
}
