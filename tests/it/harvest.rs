//! Manifest harvest end to end: a signed `workflow_run` completed delivery
//! for a gh-aw workflow, through the real router in App mode, makes the
//! harvester list the run's artifacts on the fake GitHub, follow the 302 to
//! the blob without the token, unzip a real zip and ingest the manifest,
//! exactly once per run.

use crate::{common, fake_github};
use std::time::Duration;

use common::tester::{Setup, Tester};
use common::{at, t0, TestApp};
use fake_github::{zip_of, Failure, FakeGitHub, BLOB, DOWNLOAD_ARTIFACT, LIST_ARTIFACTS, TOKENS};
use safe_outcomes::app::{App, AppOptions};
use safe_outcomes::github::harvest::{self, HarvestOptions, HarvestRequests};
use safe_outcomes::http::RouterOptions;
use safe_outcomes::model::clock::Clock;
use safe_outcomes::store::{counter, ReadStore, Store};
use serde_json::{json, Value};

const INSTALLATION: u64 = 555;
const REPO: &str = "acme/widgets";
const RUN: u64 = 9001;
const LOCK: &str = ".github/workflows/ci-coach.lock.yml";

/// The manifest gh-aw's safe outputs job wrote for the run.
fn manifest() -> String {
    [
        json!({"type": "create_issue", "url": "https://github.com/acme/widgets/issues/12",
               "number": 12, "repo": REPO, "temporaryId": "aw_a1", "timestamp": at(5)}),
        json!({"type": "add_comment", "url": "https://github.com/acme/widgets/issues/3#issuecomment-77",
               "commentId": 77, "number": 3, "repo": REPO, "timestamp": at(6)}),
    ]
    .iter()
    .map(Value::to_string)
    .collect::<Vec<_>>()
    .join("\n")
        + "\n"
}

fn artifact_zip() -> Vec<u8> {
    zip_of(&[
        ("safe-output-items.jsonl", &manifest()),
        (
            "temporary-id-map.json",
            r#"{"aw_a1":{"repo":"acme/widgets","number":12}}"#,
        ),
    ])
}

/// The App with a harvester (retries wait long: only the tests' flushes
/// retry, so counts are exact), on `gh`, harvesting with `options`.
fn setup(gh: FakeGitHub, options: HarvestOptions) -> Setup {
    Tester::setup(t0() + chrono::Duration::hours(1))
        .github(gh)
        .harvester(HarvestOptions {
            retry_min: Duration::from_secs(600),
            ..options
        })
}

/// A fresh App on a fresh fake GitHub.
async fn start() -> Tester {
    setup(FakeGitHub::start().await, HarvestOptions::default())
        .start()
        .await
}

/// `start`, with gh-aw's manifest (`safe-outputs-items`) uploaded by run
/// `RUN`.
async fn start_with_manifest() -> Tester {
    let h = start().await;
    h.gh.add_artifact(REPO, RUN, "safe-outputs-items", artifact_zip());
    h
}

/// Deliver `workflow_run.completed` for `run` of the workflow at `path`.
async fn complete_run(h: &Tester, delivery: &str, run: u64, path: &str, conclusion: &str) {
    h.send(
        "workflow_run",
        delivery,
        run_completed(run, path, conclusion),
    )
    .await;
}

fn outputs_of_run(h: &Tester, run: u64) -> Vec<String> {
    h.t.app
        .store
        .outputs(&format!("{REPO}:{run}:"), None)
        .map(|o| o.unwrap().execution.id)
        .collect()
}

fn manifest_items(h: &Tester) -> u64 {
    // Every harvested manifest is one inbox item with a `manifest:harvest:` key.
    h.t.app
        .store
        .scan_raw(b"i/d/manifest:harvest:")
        .unwrap()
        .len() as u64
}

/// Open the App with the harvest hook. After a restart in the same test,
/// sled's background threads may hold the store's file lock a moment longer.
async fn open_app(dir: &std::path::Path, clock: &Clock, requests: &HarvestRequests) -> App {
    let mut tries = 0;
    loop {
        let options = AppOptions {
            harvest_requests: Some(requests.clone()),
            ..AppOptions::default()
        };
        match App::start_with(dir, clock.clone(), options) {
            Ok(app) => return app,
            Err(e) if tries < 100 && e.to_string().contains("lock") => {
                tries += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("{e}"),
        }
    }
}

fn run_completed(run: u64, path: &str, conclusion: &str) -> Value {
    json!({
        "action": "completed",
        "workflow_run": {
            "id": run, "name": "CI Coach", "path": path, "head_branch": "main", "head_sha": "abc1234",
            "event": "schedule", "status": "completed", "conclusion": conclusion, "run_attempt": 1,
            "created_at": at(1), "run_started_at": at(1), "updated_at": at(9)
        },
        "repository": {"full_name": REPO, "name": "widgets", "owner": {"login": "acme"}},
        "installation": {"id": INSTALLATION},
        "sender": {"login": "github-actions[bot]", "type": "Bot"}
    })
}

#[tokio::test]
async fn a_completed_gh_aw_run_is_harvested_once_even_when_delivered_twice() {
    let h = start().await;
    let gh = &h.gh;
    gh.add_artifact(REPO, RUN, "agent-output", zip_of(&[("output.json", "{}")]));
    gh.add_artifact(REPO, RUN, "safe-outputs-items", artifact_zip());
    // A partial run (failure) executed outputs too: it is harvested.
    complete_run(&h, "d-run-1", RUN, LOCK, "failure").await;
    h.settle().await;
    assert_eq!(gh.calls(LIST_ARTIFACTS), 1);
    assert_eq!(gh.calls(DOWNLOAD_ARTIFACT), 1);
    assert_eq!(gh.calls(BLOB), 1);
    assert_eq!(
        gh.blob_requests_with_auth(),
        0,
        "the token never goes to the blob"
    );
    assert_eq!(manifest_items(&h), 1);
    let ids = outputs_of_run(&h, RUN);
    assert_eq!(ids.len(), 2, "{ids:?}");
    let marker = harvest::harvested(&h.t.app.store, REPO, RUN, 1)
        .unwrap()
        .expect("the run is marked harvested");
    assert_eq!((marker.accepted, marker.rejected), (2, 0));

    // Another delivery for the same run (GitHub sends `completed` per
    // attempt; a redelivery has the same GUID, which the inbox drops).
    let received = h.t.app.store.counter(counter::RECEIVED);
    complete_run(&h, "d-run-2", RUN, LOCK, "failure").await;
    complete_run(&h, "d-run-1", RUN, LOCK, "failure").await;
    h.settle().await;
    assert_eq!(
        h.t.app.store.counter(counter::RECEIVED),
        received + 1,
        "only the new delivery is stored: no second manifest item"
    );
    assert_eq!(gh.calls(LIST_ARTIFACTS), 1, "nothing listed again");
    assert_eq!(gh.calls(DOWNLOAD_ARTIFACT), 1, "nothing downloaded again");
    assert_eq!(gh.calls(BLOB), 1);
    assert_eq!(manifest_items(&h), 1);
    assert_eq!(outputs_of_run(&h, RUN), ids);
    assert_eq!(gh.calls(TOKENS), 1);

    // The harvested outputs are the run's, in the gh-aw-shaped run view.
    let run =
        h.t.client
            .get(&format!("/api/v1/runs/{REPO}/{RUN}"))
            .await
            .unwrap();
    assert_eq!(run.status, 200, "{}", run.body);
    assert_eq!(run.body["run_id"], RUN);
    assert_eq!(run.body["workflow"], "ci-coach");
    assert_eq!(run.body["summary"]["total"], 2);
    let types: Vec<&str> = run.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["type"].as_str().unwrap())
        .collect();
    assert!(
        types.contains(&"create_issue") && types.contains(&"add_comment"),
        "{types:?}"
    );

    // The same manifest also posted by the workflow (`record`): same outputs.
    let posted =
        h.t.client
            .post_manifest(REPO, RUN, Some("CI Coach"), manifest())
            .await
            .unwrap();
    assert!(posted.status < 300, "{}", posted.body);
    h.t.app.wait_idle().await;
    assert_eq!(outputs_of_run(&h, RUN), ids);

    let status = h.t.get("/status").await.body;
    assert_eq!(status["github"]["manifests_harvested"], 1);
    // The list and the download (token mints and the blob are not counted).
    assert_eq!(status["github"]["api_calls"], 2);
    h.stop().await;
}

#[tokio::test]
async fn transient_failures_are_retried_and_still_ingest_once() {
    let h = start_with_manifest().await;
    let gh = &h.gh;
    // The API's 502 is retried by the retry helper; the blob's 503 by a
    // fresh redirect.
    gh.fail_next(DOWNLOAD_ARTIFACT, 1, Failure::status(502));
    gh.fail_next(BLOB, 1, Failure::status(503));
    complete_run(&h, "d-run-1", RUN, LOCK, "success").await;
    h.settle().await;
    assert_eq!(gh.calls(DOWNLOAD_ARTIFACT), 3);
    assert_eq!(gh.calls(BLOB), 2);
    assert_eq!(manifest_items(&h), 1);
    assert_eq!(outputs_of_run(&h, RUN).len(), 2);

    // Failures past the call's budget put the run back for later; it is
    // harvested on a later try, once.
    let other = RUN + 1;
    gh.add_artifact(REPO, other, "safe-outputs-items", artifact_zip());
    gh.fail_next(LIST_ARTIFACTS, 3, Failure::status(500));
    complete_run(&h, "d-other", other, LOCK, "cancelled").await;
    h.settle().await;
    assert_eq!(gh.calls(LIST_ARTIFACTS), 1 + 3);
    assert!(outputs_of_run(&h, other).is_empty());
    assert!(harvest::harvested(&h.t.app.store, REPO, other, 1)
        .unwrap()
        .is_none());
    h.settle().await;
    assert_eq!(gh.calls(LIST_ARTIFACTS), 1 + 3, "it waits out its backoff");
    h.harvester().retry_now().await;
    h.t.app.wait_idle().await;
    assert_eq!(gh.calls(LIST_ARTIFACTS), 1 + 3 + 1);
    assert_eq!(outputs_of_run(&h, other).len(), 2);
    assert_eq!(manifest_items(&h), 2);
    h.harvester().retry_now().await;
    assert_eq!(gh.calls(LIST_ARTIFACTS), 5, "done is done");
    h.stop().await;
}

#[tokio::test]
async fn only_completed_gh_aw_runs_are_harvested() {
    let h = start_with_manifest().await;
    let gh = &h.gh;
    // A plain workflow has no manifest.
    complete_run(&h, "d-ci", RUN, ".github/workflows/ci.yml", "success").await;
    // A gh-aw run still in progress is not done writing.
    let mut running = run_completed(RUN, LOCK, "success");
    running["action"] = json!("in_progress");
    running["workflow_run"]["status"] = json!("in_progress");
    running["workflow_run"]["conclusion"] = Value::Null;
    h.send("workflow_run", "d-running", running).await;
    h.settle().await;
    assert_eq!(gh.calls(LIST_ARTIFACTS), 0);
    assert_eq!(gh.calls(TOKENS), 0);
    assert!(outputs_of_run(&h, RUN).is_empty());
    assert_eq!(
        h.t.app.store.scan_raw(b"n/q/").unwrap().len(),
        0,
        "nothing queued"
    );
    h.stop().await;
}

#[tokio::test]
async fn a_run_without_a_manifest_artifact_is_marked_and_not_asked_again() {
    let h = start().await;
    let gh = &h.gh;
    // A staged-mode run uploads no manifest.
    gh.add_artifact(REPO, RUN, "agent-output", zip_of(&[("output.json", "{}")]));
    complete_run(&h, "d-1", RUN, LOCK, "success").await;
    h.settle().await;
    let marker = harvest::harvested(&h.t.app.store, REPO, RUN, 1)
        .unwrap()
        .unwrap();
    assert!(marker.note.unwrap().contains("no `safe-outputs-items`"));
    complete_run(&h, "d-2", RUN, LOCK, "success").await;
    h.settle().await;
    assert_eq!(gh.calls(LIST_ARTIFACTS), 1);
    assert_eq!(gh.calls(DOWNLOAD_ARTIFACT), 0);

    // Under workflow_call the artifact name carries a prefix.
    let called = RUN + 5;
    gh.add_artifact(REPO, called, "a1b2c3-safe-outputs-items", artifact_zip());
    complete_run(&h, "d-3", called, LOCK, "success").await;
    h.settle().await;
    assert_eq!(outputs_of_run(&h, called).len(), 2);
    h.stop().await;
}

#[tokio::test]
async fn a_run_queued_before_a_restart_is_harvested_after_it() {
    let dir = tempfile::tempdir().unwrap();
    {
        // The worker queues the run, but the process stops before the harvest.
        let (requests, _inbox_dropped) = harvest::channel();
        let clock = Clock::manual(t0() + chrono::Duration::hours(1));
        let app = open_app(dir.path(), &clock, &requests).await;
        let t = TestApp::serve(app, clock, dir.path(), RouterOptions::default()).await;
        let a = t
            .client
            .deliver(
                "workflow_run",
                "d-1",
                run_completed(RUN, LOCK, "success").to_string().as_bytes(),
            )
            .await
            .unwrap();
        assert!(a.status < 300);
        t.app.wait_idle().await;
        assert_eq!(t.app.store.scan_raw(b"n/q/").unwrap().len(), 1);
        t.stop().await;
    }
    let gh = FakeGitHub::start().await;
    gh.add_artifact(REPO, RUN, "safe-outputs-items", artifact_zip());
    let h = setup(gh, HarvestOptions::default()).dir(dir).start().await;
    h.settle().await;
    assert_eq!(outputs_of_run(&h, RUN).len(), 2);
    assert_eq!(h.t.app.store.scan_raw(b"n/q/").unwrap().len(), 0);
    h.stop().await;
}

#[tokio::test]
async fn the_manifest_artifact_is_found_past_the_first_page_of_artifacts() {
    let h = start().await;
    let gh = &h.gh;
    // A matrix run uploads many artifacts; gh-aw's comes last, on page 2.
    for i in 0..130 {
        gh.add_artifact(
            REPO,
            RUN,
            &format!("coverage-{i}"),
            zip_of(&[("c.txt", "x")]),
        );
    }
    gh.add_artifact(REPO, RUN, "safe-outputs-items", artifact_zip());
    complete_run(&h, "d-run-many", RUN, LOCK, "success").await;
    h.settle().await;
    assert_eq!(gh.calls(LIST_ARTIFACTS), 2, "two pages of 100");
    assert_eq!(gh.calls(DOWNLOAD_ARTIFACT), 1);
    assert_eq!(outputs_of_run(&h, RUN).len(), 2);
}

/// Two replicas on one database never harvest the same run at once: while
/// another replica's lease on the run is live this one leaves it (no API
/// call), and once that lease runs out (the replica was killed midway)
/// this one's next scan of the durable queue takes the run over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_another_replica_holds_is_left_until_its_lease_runs_out() {
    let Some(admin) = safe_outcomes::store::pg::test_pg_from_env() else {
        return eprintln!("SKIPPED on sled: replicas share a PostgreSQL database");
    };
    let dir = tempfile::tempdir().unwrap();
    let gh = FakeGitHub::start().await;
    gh.add_artifact(REPO, RUN, "safe-outputs-items", artifact_zip());
    let options = HarvestOptions {
        rescan_every: Duration::from_millis(300),
        ..HarvestOptions::default()
    };
    let h = setup(gh, options).dir(dir).start().await;
    // The other replica: its own pool on the same database, harvesting.
    let path = safe_outcomes::app::store_path(h.path());
    let other = Store::on_pg(
        safe_outcomes::store::pg::test_database(&admin, &path).unwrap(),
        &path,
    );
    let lease = format!("harvest:{REPO}:{RUN}:1");
    assert!(other.take_lease(&lease, Duration::from_secs(3)).unwrap());
    complete_run(&h, "d-1", RUN, LOCK, "success").await;
    h.settle().await;
    tokio::time::sleep(Duration::from_millis(900)).await;
    h.settle().await;
    assert_eq!(h.gh.calls(LIST_ARTIFACTS), 0, "left to the lease's holder");
    assert_eq!(h.t.app.store.scan_raw(b"n/q/").unwrap().len(), 1);
    drop(other); // killed: its lease stays until it runs out
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while outputs_of_run(&h, RUN).len() < 2 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
        h.t.app.wait_idle().await;
    }
    assert_eq!(
        outputs_of_run(&h, RUN).len(),
        2,
        "taken over after the lease ran out"
    );
    assert_eq!(h.gh.calls(DOWNLOAD_ARTIFACT), 1);
    assert_eq!(h.t.app.store.scan_raw(b"n/q/").unwrap().len(), 0);
    h.stop().await;
}
