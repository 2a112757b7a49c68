//! A hostile world: deliveries, stored records and clients that try to stop
//! or fool the App, through the real HTTP path on real sled stores.
//!
//! Sections (each helper keeps to its own):
//! - Poison items and dead letters: a delivery with an impossible time, an
//!   item already stored that fails or carries such a time, the worker's
//!   death; and the whole pipeline on generated extreme inputs (proptest).
//! - Small doors: read-API refusals counted, the auth scheme's case.

use std::process::Command;

use chrono::{DateTime, Utc};
use proptest::prelude::*;
use safe_outcomes::bench::pipeline::{Input, Probe};
use safe_outcomes::ingest::webhook::{normalize, Normalized};
use safe_outcomes::store::inbox::InboxItem;
use safe_outcomes::store::{ReadStore, Store};
use serde_json::{json, Value};

use crate::common::{self, TestApp, TOKEN};

fn start() -> DateTime<Utc> {
    "2026-05-30T12:00:00Z".parse().unwrap()
}

/// The gh-aw issue fixture, as issue `number`, with `action`.
fn issue(number: u64, action: &str) -> Value {
    let path = common::manifest_dir().join("fixtures/webhooks/issues/opened.gh-aw.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    v["action"] = action.into();
    v["issue"]["number"] = number.into();
    v["issue"]["html_url"] = format!("https://github.com/acme/widgets/issues/{number}").into();
    if action != "opened" {
        v["issue"]["updated_at"] = "2026-05-30T13:00:00Z".into();
    }
    v
}

async fn status(t: &TestApp) -> (u16, Value) {
    let a = t.get("/status").await;
    (a.status, a.body)
}

async fn metrics(t: &TestApp) -> String {
    let resp = reqwest::Client::new()
        .get(format!("{}/metrics", t.server.url()))
        .bearer_auth(crate::common::TOKEN)
        .send()
        .await
        .unwrap();
    resp.text().await.unwrap()
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_safe-outcomes"))
}

fn run_cli(args: &[&str], dir: &std::path::Path) -> (bool, String) {
    let out = bin()
        .args(args)
        .arg("--data-dir")
        .arg(dir)
        .output()
        .unwrap();
    common::success_and_text(&out)
}

// ---------------------------------------------------------------------------
// Poison items and dead letters
// ---------------------------------------------------------------------------

/// Issue 9's poison delivery: a signed `pull_request.opened` from gh-aw with
/// `created_at` 8210266012799 (epoch seconds, near chrono's maximum). It is
/// refused at the boundary naming the field, nothing is stored, and the
/// deliveries after it are processed.
#[tokio::test]
async fn the_poison_delivery_is_refused_and_later_deliveries_are_processed() {
    let dir = tempfile::tempdir().unwrap();
    let t = TestApp::start(dir.path(), start()).await;
    let mut poison = issue(7, "opened");
    poison["pull_request"] = poison["issue"].take();
    poison.as_object_mut().unwrap().remove("issue");
    poison["pull_request"]["created_at"] = 8_210_266_012_799i64.into();
    let before = t.dump();
    let a = t.deliver("pull_request", "poison-1", &poison).await;
    assert_eq!(a.status, 400, "{}", a.body);
    let detail = a.body["detail"].as_str().unwrap();
    assert!(detail.contains("pull_request.created_at"), "{detail}");
    assert!(detail.contains("2200-01-01"), "{detail}");
    assert_eq!(t.dump(), before, "nothing stored");

    t.deliver_ok("issues", "good-1", &issue(41, "opened")).await;
    t.deliver_ok("issues", "good-2", &issue(41, "closed")).await;
    let outcomes = t.settled_outcomes().await;
    assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    let (code, s) = status(&t).await;
    assert_eq!(code, 200, "{s}");
    assert_eq!(s["deliveries"]["processed"], 2, "{s}");
    assert_eq!(s["deliveries"]["backlog"], 0, "{s}");
    assert_eq!(s["deliveries"]["rejected"], 1, "{s}");
    assert_eq!(s["dead_letters"], 0, "{s}");
    assert_eq!(s["worker"], "running", "{s}");
    assert_eq!(s["last_error"], Value::Null, "{s}");
    t.stop().await;
}

/// An item stored with that time anyway (before the boundary existed, or
/// by a bug): the arithmetic on it saturates, so it is processed like any
/// other, across a restart, and the queue goes on.
#[tokio::test]
async fn a_poison_item_already_stored_is_processed_without_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let far = DateTime::from_timestamp(8_210_266_012_799, 0).unwrap();
    {
        let t = TestApp::start_with(dir.path(), start(), false).await;
        let body = issue(7, "opened").to_string();
        let Ok(Normalized::Relevant(mut d)) = normalize("issues", "poison-1", body.as_bytes())
        else {
            panic!("the fixture normalizes");
        };
        for r in &mut d.discoveries {
            r.executed_at = far;
        }
        for o in &mut d.observations {
            o.at = far;
        }
        assert_eq!(d.discoveries.len(), 1);
        let item = InboxItem::Delivery {
            delivery_id: "poison-1".into(),
            event: d.event,
            action: d.action,
            received_at: start(),
            observations: d.observations,
            discoveries: d.discoveries,
            installation_change: None,
        };
        t.app.writer.enqueue(item).await.unwrap();
        t.deliver_ok("issues", "good-1", &issue(41, "opened")).await;
        t.stop().await;
    }
    let t = TestApp::start(dir.path(), start()).await;
    t.settle().await;
    t.advance_to("2026-07-01T00:00:00Z".parse().unwrap()).await;
    let (code, s) = status(&t).await;
    assert_eq!(code, 200, "{s}");
    assert_eq!(s["dead_letters"], 0, "{s}");
    assert_eq!(s["worker"], "running", "{s}");
    assert_eq!(s["deliveries"]["backlog"], 0, "{s}");
    let outcomes = t.outcomes().await;
    assert_eq!(outcomes.len(), 2, "both outputs assessed: {outcomes:?}");
    let poisoned = outcomes.values().find(|o| o.created_at == far).unwrap();
    let history = t
        .get(&format!("/api/v1/outputs/{}", poisoned.safe_output_id))
        .await;
    assert_eq!(history.status, 200, "{}", history.body);
    t.stop().await;
}

/// An item that fails in the worker (here: the stored output it must
/// re-assess no longer decodes) is moved to the dead letters after its
/// attempts, shown on `/status` and `/metrics`; the items after it are
/// processed; once the record is repaired, `dead-letters replay` puts it
/// back and the next start processes it. On PostgreSQL the command is
/// given the database (`--database-url`), and may run beside the server.
#[tokio::test]
async fn a_failing_item_is_dead_lettered_shown_and_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let pg = safe_outcomes::store::pg::test_pg_from_env().map(|admin| {
        let path = safe_outcomes::app::store_path(dir.path());
        safe_outcomes::store::pg::test_database_url(&admin, &path)
    });
    let run_cli = |args: &[&str], dir: &std::path::Path| {
        let mut args = args.to_vec();
        if let Some(url) = &pg {
            args.extend(["--database-url", url.as_str()]);
        }
        run_cli(&args, dir)
    };
    let t = TestApp::start(dir.path(), start()).await;
    t.deliver_ok("issues", "d-1", &issue(41, "opened")).await;
    let id = t.settled_outcomes().await.into_keys().next().unwrap();
    t.stop().await;

    let path = safe_outcomes::app::store_path(dir.path());
    let good = {
        let store = Store::open_waiting(&path, std::time::Duration::from_secs(5)).unwrap();
        let key = Store::output_key_for_tests(&id);
        let good = store.get_raw(&key).unwrap().unwrap();
        store
            .put_raw_for_tests(&key, &b"\x02not a record"[..])
            .unwrap();
        store.flush().unwrap();
        good
    };

    let t = TestApp::start(dir.path(), start()).await;
    t.deliver_ok("issues", "d-2", &issue(41, "edited")).await;
    t.deliver_ok("issues", "d-3", &issue(42, "opened")).await;
    t.settle().await;
    let (code, s) = status(&t).await;
    assert_eq!(code, 200, "{s}");
    assert_eq!(s["dead_letters"], 1, "{s}");
    assert_eq!(s["worker"], "running", "{s}");
    assert_eq!(s["deliveries"]["backlog"], 0, "{s}");
    assert_eq!(s["deliveries"]["processed"], 3, "{s}");
    let last = s["last_error"].as_str().unwrap();
    assert!(
        last.contains("inbox item 2 moved to the dead letters"),
        "{last}"
    );
    assert!(last.contains("corrupt record"), "{last}");
    assert!(metrics(&t)
        .await
        .contains("\nsafe_outcomes_dead_letters 1\n"));
    let outputs: Vec<String> = t
        .dump()
        .into_iter()
        .map(|(k, _)| k)
        .filter(|k| k.starts_with("o/"))
        .collect();
    assert!(
        outputs.iter().any(|k| k.ends_with("issue-42")),
        "d-3 processed: {outputs:?}"
    );
    // On sled not while a server holds the store; on PostgreSQL beside it.
    let (ok, out) = run_cli(&["dead-letters", "list"], dir.path());
    match &pg {
        None => assert!(!ok && out.contains("stop the server"), "{out}"),
        Some(_) => assert!(ok && out.contains("1 dead letter(s)"), "{out}"),
    }
    t.stop().await;

    let (ok, out) = run_cli(&["dead-letters", "list"], dir.path());
    assert!(ok, "{out}");
    assert!(out.contains("2\t") && out.contains("3 attempt(s)"), "{out}");
    assert!(
        out.contains("delivery d-2 (issues)") && out.contains("1 dead letter(s)"),
        "{out}"
    );
    let (ok, out) = run_cli(&["dead-letters", "replay", "--id", "9"], dir.path());
    assert!(!ok && out.contains("no dead letter 9"), "{out}");
    {
        let store = Store::open_waiting(&path, std::time::Duration::from_secs(5)).unwrap();
        store
            .put_raw_for_tests(&Store::output_key_for_tests(&id), &good)
            .unwrap();
        store.flush().unwrap();
    }
    let (ok, out) = run_cli(&["dead-letters", "replay", "--id", "2"], dir.path());
    assert!(ok && out.contains("1 dead letter(s) moved back"), "{out}");

    let t = TestApp::start(dir.path(), start()).await;
    t.settle().await;
    let (_, s) = status(&t).await;
    assert_eq!(s["dead_letters"], 0, "{s}");
    assert_eq!(s["deliveries"]["backlog"], 0, "{s}");
    assert_eq!(s["deliveries"]["processed"], 4, "the replayed item: {s}");
    assert_eq!(s["last_error"], Value::Null, "{s}");
    t.stop().await;
    let (ok, out) = run_cli(&["dead-letters", "list"], dir.path());
    assert!(ok && out.contains("0 dead letter(s)"), "{out}");
}

/// A panic outside any one item kills the worker loop: it is reported
/// (503, `worker: "dead"` with the reason, `worker_up 0`), never silent.
#[tokio::test]
async fn the_workers_death_is_reported_not_silent() {
    let dir = tempfile::tempdir().unwrap();
    let t = TestApp::start(dir.path(), start()).await;
    let (code, s) = status(&t).await;
    assert_eq!((code, &s["worker"]), (200, &json!("running")), "{s}");
    assert!(metrics(&t).await.contains("\nsafe_outcomes_worker_up 1\n"));
    safe_outcomes::app::supervise(&t.app.shared, || panic!("the schedule exploded"));
    let (code, s) = status(&t).await;
    assert_eq!(code, 503, "{s}");
    assert_eq!(s["worker"], "dead", "{s}");
    let why = s["worker_error"].as_str().unwrap();
    assert!(why.contains("the schedule exploded"), "{why}");
    assert!(metrics(&t).await.contains("\nsafe_outcomes_worker_up 0\n"));
    t.stop().await;
}

fn extreme_ms() -> impl Strategy<Value = i64> {
    prop_oneof![
        Just(i64::MIN),
        Just(i64::MAX),
        Just(0),
        Just(-1),
        Just(8_210_266_012_799_000),
        Just(946_684_800_000 - 1),
        Just(7_258_118_400_000),
        946_684_800_000i64..7_258_118_400_000,
        any::<i64>(),
    ]
}

fn huge_id() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0),
        Just(u64::MAX),
        Just(i64::MAX as u64 + 1),
        any::<u64>(),
        1u64..100
    ]
}

fn hostile_text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just(" ".to_string()),
        Just("\u{0}".to_string()),
        Just("ci-coach".to_string()),
        ".{0,40}",
    ]
}

fn hostile_input() -> impl Strategy<Value = Input> {
    (
        extreme_ms(),
        extreme_ms(),
        extreme_ms(),
        huge_id(),
        huge_id(),
        hostile_text(),
    )
        .prop_map(
            |(created_ms, observed_ms, now_ms, number, run_id, text)| Input {
                event: 0,
                body: None,
                created_ms,
                observed_ms,
                now_ms,
                number,
                run_id,
                text,
            },
        )
}

/// The whole pipeline (normalize → inbox → worker → assess → report) on
/// generated deliveries with extreme dates, huge ids and empty strings: no
/// panic, no dead worker, no dead letter, the backlog drains.
#[test]
fn the_pipeline_survives_extreme_dates_huge_ids_and_empty_strings() {
    let probe = std::cell::RefCell::new(Probe::new());
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 128,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    runner
        .run(&hostile_input(), |input| {
            probe.borrow_mut().run(&input);
            Ok(())
        })
        .unwrap();
}

/// The fuzz target's seeds, replayed (`fuzz/seeds/pipeline`).
#[test]
fn the_pipeline_fuzz_seeds_pass() {
    let seeds = common::manifest_dir().join("fuzz/seeds/pipeline");
    let mut probe = Probe::new();
    let mut n = 0;
    for entry in std::fs::read_dir(seeds).unwrap() {
        probe.run(&Input::from_bytes(
            &std::fs::read(entry.unwrap().path()).unwrap(),
        ));
        n += 1;
    }
    assert!(n >= 5, "{n} seeds");
}

// ---------------------------------------------------------------------------
// Small doors
// ---------------------------------------------------------------------------

async fn get_with(t: &TestApp, auth: Option<&str>) -> u16 {
    let mut req = reqwest::Client::new().get(format!("{}/api/v1/outputs", t.server.url()));
    if let Some(auth) = auth {
        req = req.header("authorization", auth);
    }
    req.send().await.unwrap().status().as_u16()
}

/// 401s on the read API are counted as rejected requests (and logged).
#[tokio::test]
async fn read_api_refusals_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let t = TestApp::start(dir.path(), start()).await;
    assert_eq!(get_with(&t, None).await, 401);
    assert_eq!(get_with(&t, Some("Bearer wrong")).await, 401);
    let (_, s) = status(&t).await;
    assert_eq!(s["deliveries"]["rejected"], 2, "{s}");
    assert!(metrics(&t)
        .await
        .contains("\nsafe_outcomes_requests_rejected_total 2\n"));
    t.stop().await;
}

/// The auth scheme is case-insensitive; the token is not.
#[tokio::test]
async fn the_bearer_scheme_is_case_insensitive() {
    let dir = tempfile::tempdir().unwrap();
    let t = TestApp::start(dir.path(), start()).await;
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
        let auth = format!("{scheme} {TOKEN}");
        assert_eq!(get_with(&t, Some(&auth)).await, 200, "{auth}");
    }
    let upper = format!("Bearer {}", TOKEN.to_uppercase());
    assert_eq!(get_with(&t, Some(&upper)).await, 401);
    assert_eq!(get_with(&t, Some(&format!("Basic {TOKEN}"))).await, 401);
    t.stop().await;
}
