//! Replicas: two real `serve` processes in App mode on one PostgreSQL
//! database, against the fake GitHub. Signed deliveries and manifests are
//! spread across both; one replica is SIGKILLed midway and restarted, and
//! what got no 2xx is sent again (as GitHub's redelivery would). In the end
//! every output has the outcome a single sled instance fed the same
//! deliveries gives (through the JSON export), and the fake GitHub holds
//! exactly one `safe-outcomes` check run per PR head SHA, showing what the
//! sled instance's shows.
//!
//! The load comes in three phases: the targets are opened; then the gh-aw
//! manifests and human activity (the kill lands here); then every PR is
//! closed or merged, so each PR's last change comes after the restart (a
//! publish pending in the killed process's memory is refreshed at the PR's
//! next change, docs/postgres.md). Events are dated 2024: every checkpoint
//! has passed, whatever the system clock says.
//!
//! Needs PostgreSQL (`common::pg`): `SAFE_OUTCOMES_TEST_PG`, else a cluster
//! of its own; without one it fails under CI and skips loudly otherwise.

use crate::{common, fake_github};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use chrono::{DateTime, Duration as ChronoDuration, Utc};
use common::pg::{self, Pg};
use common::serve::ServeChild;
use fake_github::FakeGitHub;
use safe_outcomes::bench::payloads::{issue, pull_request, sha, IssueEvent, PrEvent};
use safe_outcomes::ingest::client::Client;
use safe_outcomes::model::OutcomeRecord;

use crate::load::{base, outcomes, send_spread, serve_on, KillAt, Send, REPO};
use serde_json::{json, Value};

const SECRET: &str = "replicas-test-secret";
const TOKEN: &str = "replicas-test-token";
const PUBLIC_URL: &str = "https://outcomes.example";
const ISSUES: u64 = 6;
const PRS: u64 = 4;

fn manifest(kind: &str, path: &str, number: u64, run: u64, workflow: &'static str) -> Send {
    let at = match path {
        "pull" => pr_opened(number),
        _ => issue_opened(number),
    };
    let line = json!({
        "type": kind, "url": format!("https://github.com/{REPO}/{path}/{number}"),
        "number": number, "repo": REPO, "timestamp": at.to_rfc3339()
    });
    Send::Manifest {
        run,
        workflow,
        body: line.to_string(),
    }
}

fn issue_send(id: String, event: &'static str, e: IssueEvent) -> Send {
    Send::Webhook {
        event,
        id,
        body: issue(&e).to_string().into_bytes(),
    }
}

fn pr_send(
    id: String,
    number: u64,
    action: &str,
    minutes: i64,
    sender: &str,
    merged: bool,
) -> Send {
    let label = (action == "labeled").then_some("ci");
    let e = PrEvent {
        repo: REPO,
        number,
        action,
        at: pr_opened(number) + ChronoDuration::minutes(minutes),
        author: "github-actions[bot]",
        sender,
        gh_aw_run: Some(8000 + number - 200),
        label,
        merged,
    };
    Send::Webhook {
        event: "pull_request",
        id,
        body: pull_request(&e).to_string().into_bytes(),
    }
}

fn pr_opened(number: u64) -> DateTime<Utc> {
    base() + ChronoDuration::hours(10 + (number as i64 - 200))
}

fn issue_opened(number: u64) -> DateTime<Utc> {
    base() + ChronoDuration::hours(number as i64 - 100)
}

fn issue_event(
    number: u64,
    action: &'static str,
    minutes: i64,
    sender: &'static str,
) -> IssueEvent<'static> {
    IssueEvent {
        repo: REPO,
        number,
        action,
        at: issue_opened(number) + ChronoDuration::minutes(minutes),
        sender,
        gh_aw_run: Some(7000 + number - 100),
        label: None,
        comment_id: None,
    }
}

/// The three phases of the load: targets opened; manifests and activity;
/// every PR closed or merged.
fn load() -> [Vec<Send>; 3] {
    let humans = ["maria-lopez", "dev-kim", "stale[bot]"];
    let bot = "github-actions[bot]";
    let id = |phase: u32, n: usize| format!("replicas-{phase}-{n:04}");
    let mut opened = Vec::new();
    for k in 0..ISSUES {
        let e = issue_event(100 + k, "opened", 0, bot);
        opened.push(issue_send(id(1, opened.len()), "issues", e));
    }
    for k in 0..PRS {
        opened.push(pr_send(
            id(1, opened.len()),
            200 + k,
            "opened",
            0,
            bot,
            false,
        ));
    }
    let mut middle = Vec::new();
    for k in 0..ISSUES {
        let number = 100 + k;
        middle.push(manifest(
            "create_issue",
            "issues",
            number,
            7000 + k,
            "issue-triage",
        ));
        for j in 0..8i64 {
            let action = if j % 2 == 0 { "labeled" } else { "unlabeled" };
            let mut e = issue_event(number, action, 10 + j, humans[(j % 3) as usize]);
            e.label = Some("triage");
            middle.push(issue_send(id(2, middle.len()), "issues", e));
        }
        if k % 3 != 2 {
            let mut e = issue_event(number, "created", 180, humans[(k % 2) as usize]);
            e.comment_id = Some(90_000 + k);
            middle.push(issue_send(id(2, middle.len()), "issue_comment", e));
        }
        if k % 2 == 1 {
            let e = issue_event(number, "closed", 2 * 24 * 60, humans[(k % 3) as usize]);
            middle.push(issue_send(id(2, middle.len()), "issues", e));
        }
    }
    for k in 0..PRS {
        let number = 200 + k;
        middle.push(manifest(
            "create_pull_request",
            "pull",
            number,
            8000 + k,
            "ci-coach",
        ));
        for j in 0..4i64 {
            let sender = humans[(j % 2) as usize];
            middle.push(pr_send(
                id(2, middle.len()),
                number,
                "labeled",
                5 + j,
                sender,
                false,
            ));
        }
    }
    let mut closing = Vec::new();
    for k in 0..PRS {
        let merged = k % 2 == 0;
        let send = pr_send(
            id(3, closing.len()),
            200 + k,
            "closed",
            24 * 60,
            "maria-lopez",
            merged,
        );
        closing.push(send);
    }
    [opened, middle, closing]
}

fn client(serve: &ServeChild) -> Client {
    Client::new(&serve.url, Some(SECRET.into()), Some(TOKEN.into()))
}

/// The sled instance: wait until it processed everything it stored.
async fn drained(client: &Client) {
    for _ in 0..600 {
        let d = client.get("/status").await.unwrap().body["deliveries"].clone();
        if d["backlog"] == 0 && d["received"] == d["processed"] {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the sled instance's backlog did not drain");
}

/// What a check run shows, per head SHA: (count, conclusion, title, summary
/// of the last one).
type Checks = BTreeMap<String, (usize, Value)>;

fn checks(gh: &FakeGitHub) -> Checks {
    let mut by_sha: Checks = BTreeMap::new();
    for run in gh.check_runs() {
        assert_eq!(run.name, "safe-outcomes");
        let shown = json!({"conclusion": run.conclusion, "status": run.status,
                           "title": run.title,
                           "summary": run.summary.as_deref().map(without_port)});
        let entry = by_sha
            .entry(run.head_sha.clone())
            .or_insert((0, Value::Null));
        entry.0 += 1;
        entry.1 = shown;
    }
    by_sha
}

/// `text` with each loopback address's port dropped: the runs' links
/// point at the model of GitHub each instance was given, on its own port.
fn without_port(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("http://127.0.0.1:") {
        let (before, after) = rest.split_at(at + "http://127.0.0.1".len());
        out.push_str(before);
        rest = after[1..].trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

fn pr_head_shas() -> Vec<String> {
    (0..PRS).map(|k| sha(200 + k)).collect()
}

/// Poll `f` every 250 ms for up to `secs` seconds until it is true.
async fn eventually(secs: u64, mut f: impl AsyncFnMut() -> bool) -> bool {
    for _ in 0..secs * 4 {
        if f().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    false
}

/// `serve` in App mode against `gh`; on `database` (PostgreSQL) or, when
/// None, on sled under `dir` whatever the test's environment says.
async fn serve(dir: &Path, gh: &FakeGitHub, key: &Path, database: Option<&str>) -> ServeChild {
    let key = key.to_str().unwrap();
    let env = vec![
        ("APP_ID", "4242"),
        ("PRIVATE_KEY_PATH", key),
        ("GITHUB_API_URL", gh.url.as_str()),
        ("WEBHOOK_SECRET", SECRET),
        ("API_TOKEN", TOKEN),
        ("PUBLIC_URL", PUBLIC_URL),
        ("REDELIVERY_INTERVAL_SECS", "0"),
        ("LOG_LEVEL", "warn"),
        // The load closes its PRs quickly, maybe before a first check run
        // (by default none is created on a closed PR): every PR gets one
        // here, so that both set-ups are compared on all of them.
        ("CHECK_RUNS_ON_CLOSED_PRS", "true"),
    ];
    serve_on(dir, env, database).await
}

/// The reference: one sled instance, the three phases in order.
async fn reference(dir: &Path, key: &Path) -> (BTreeMap<String, OutcomeRecord>, Checks) {
    let gh = FakeGitHub::start().await;
    let mut one = serve(&dir.join("sled"), &gh, key, None).await;
    let c = client(&one);
    for phase in load() {
        let left = send_spread(4, std::slice::from_ref(&c), phase, None).await;
        assert!(left.is_empty(), "the sled instance refused {left:?}");
        drained(&c).await;
    }
    let result = outcomes(&c).await;
    // Every PR's check run, settled (the publisher debounces).
    let settled = eventually(60, async || {
        let before = checks(&gh);
        tokio::time::sleep(Duration::from_secs(3)).await;
        let after = checks(&gh);
        before == after && pr_head_shas().iter().all(|s| after.contains_key(s))
    })
    .await;
    assert!(settled, "the sled instance's check runs: {:?}", checks(&gh));
    let shown = checks(&gh);
    one.terminate().await;
    (result, shown)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_one_killed_midway_lose_nothing_and_match_sled() {
    let Some(pg) = Pg::get("replicas::two_replicas_one_killed_midway_lose_nothing_and_match_sled")
    else {
        return;
    };
    let name = pg::database_name("so_replicas");
    let database = pg.fresh_database(&name);
    let dir = tempfile::tempdir().unwrap();
    let key = crate::common::write_app_key(dir.path());
    let (want, want_checks) = reference(dir.path(), &key).await;
    assert_eq!(want.len() as u64, ISSUES + PRS, "{:?}", want.keys());

    let gh = FakeGitHub::start().await;
    let (dir_a, dir_b) = (dir.path().join("a"), dir.path().join("b"));
    let a = serve(&dir_a, &gh, &key, Some(&database)).await;
    let mut b = serve(&dir_b, &gh, &key, Some(&database)).await;
    let [opened, middle, closing] = load();

    // Phase 1, then a moment for it to be processed (pacing only: nothing
    // asserted here).
    let left = send_spread(4, &[client(&a), client(&b)], opened, None).await;
    assert!(left.is_empty(), "refused while both run: {left:?}");
    tokio::time::sleep(Duration::from_secs(1)).await;

    // Phase 2 with B killed after a third of it was acknowledged.
    let total = middle.len();
    let kill = KillAt {
        after: total / 3,
        pid: b.child.id().expect("B's pid"),
    };
    let left = send_spread(4, &[client(&a), client(&b)], middle, Some(kill)).await;
    b.kill9().await;
    eprintln!(
        "B killed after {} acks: {} of {total} to send again",
        kill.after,
        left.len()
    );
    assert!(!left.is_empty(), "the kill landed after the load");
    let output_b = b.output();

    // B comes back on the same database; what got no 2xx is sent again,
    // then the last phase, across both.
    let b = serve(&dir_b, &gh, &key, Some(&database)).await;
    let both = [client(&a), client(&b)];
    let left = send_spread(4, &both, left, None).await;
    assert!(left.is_empty(), "refused after the restart: {left:?}");
    let left = send_spread(4, &both, closing, None).await;
    assert!(left.is_empty(), "refused after the restart: {left:?}");

    // Every output converges to the sled instance's outcome, on both.
    let converged = eventually(120, async || outcomes(&both[0]).await == want).await;
    let got = outcomes(&both[0]).await;
    if !converged {
        eprintln!("A's output:\n{}\nB's first life:\n{output_b}", a.output());
    }
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>()
    );
    for (id, o) in &want {
        assert_eq!(&got[id], o, "{id}");
    }
    assert_eq!(outcomes(&both[1]).await, want, "B reads the same store");

    // Exactly one check run per PR head SHA, showing what sled's shows.
    let same = eventually(60, async || {
        let got = checks(&gh);
        pr_head_shas()
            .iter()
            .all(|s| got.get(s).map(|c| &c.1) == want_checks.get(s).map(|c| &c.1))
    })
    .await;
    let got_checks = checks(&gh);
    assert!(
        same,
        "check runs: got {got_checks:#?}\nwant {want_checks:#?}"
    );
    assert_eq!(
        got_checks.keys().collect::<Vec<_>>(),
        want_checks.keys().collect::<Vec<_>>()
    );
    for (sha, (count, _)) in &got_checks {
        assert_eq!(
            *count,
            1,
            "check runs for head {sha}: {:?}",
            gh.check_runs()
        );
    }
    let mut a = a;
    let mut b = b;
    a.terminate().await;
    b.terminate().await;
    pg.drop_database(&name);
}
