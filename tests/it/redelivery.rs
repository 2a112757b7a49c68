//! Missed webhook deliveries against the fake GitHub over real HTTP: the
//! failed deliveries we never stored get one redelivery request each, the
//! stored or successful ones none, and none is asked for again and again.

use crate::{common, fake_github};
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use common::TestApp;
use fake_github::{
    recorded_policy, Delivery, Failure, FakeGitHub, Sleeps, LIST_DELIVERIES, REDELIVER,
};
use safe_outcomes::github::redelivery::{Redeliverer, RedeliveryOptions};
use safe_outcomes::github::GitHubClient;
use serde_json::json;

fn now() -> DateTime<Utc> {
    "2026-10-04T12:00:00Z".parse().unwrap()
}

fn minutes_ago(m: i64) -> DateTime<Utc> {
    now() - chrono::Duration::minutes(m)
}

fn delivery(id: u64, guid: &str, status_code: u16, at: DateTime<Utc>) -> Delivery {
    Delivery {
        id,
        guid: guid.into(),
        status_code,
        delivered_at: at,
        redelivery: false,
        event: "issues".into(),
    }
}

/// `delivery`, as a redelivery GitHub made of an earlier one.
fn redelivered(id: u64, guid: &str, status_code: u16, at: DateTime<Utc>) -> Delivery {
    Delivery {
        redelivery: true,
        ..delivery(id, guid, status_code, at)
    }
}

struct Setup {
    t: TestApp,
    _dir: tempfile::TempDir,
    gh: FakeGitHub,
    client: Arc<GitHubClient>,
    sleeps: Sleeps,
}

impl Setup {
    /// The app on a store of its own (removed with the Setup) and the fake GitHub.
    async fn start() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let gh = FakeGitHub::start().await;
        let t = TestApp::start(dir.path(), now()).await;
        let sleeps = Sleeps::default();
        let client = Arc::new(gh.client(
            t.app.shared.github_calls.clone(),
            recorded_policy(&sleeps, t.clock.clone(), 4),
        ));
        Setup {
            t,
            _dir: dir,
            gh,
            client,
            sleeps,
        }
    }

    /// `start`, with GitHub listing `failed` among the App's deliveries.
    async fn listing(failed: Delivery) -> Setup {
        let s = Setup::start().await;
        s.gh.add_delivery(failed);
        s
    }

    fn redeliverer(&self, per_page: u32) -> Redeliverer {
        Redeliverer::new(
            self.t.app.store.clone(),
            self.client.clone(),
            self.t.clock.clone(),
            RedeliveryOptions {
                per_page,
                overlap: chrono::Duration::minutes(5),
                ..RedeliveryOptions::default()
            },
        )
    }

    /// Store a delivery the ordinary way: signed, through the router.
    async fn receive(&self, guid: &str) {
        let body = json!({
            "action": "opened",
            "issue": {"number": 7, "title": "Flaky test", "state": "open",
                      "user": {"login": "alice", "type": "User"},
                      "created_at": "2026-10-04T11:00:00Z", "updated_at": "2026-10-04T11:00:00Z"},
            "repository": {"full_name": "acme/widgets", "name": "widgets", "owner": {"login": "acme"}},
            "sender": {"login": "alice", "type": "User"}
        });
        let a = self
            .t
            .client
            .deliver("issues", guid, body.to_string().as_bytes())
            .await
            .unwrap();
        assert!(a.status < 300, "{}: {}", a.status, a.body);
        self.t.app.wait_idle().await;
        assert!(self.t.app.store.has_delivery(guid).unwrap());
    }

    fn requested_sorted(&self) -> Vec<u64> {
        let mut ids = self.gh.redelivery_requests();
        ids.sort();
        ids
    }
}

#[tokio::test]
async fn failed_deliveries_never_stored_are_redelivered_and_nothing_else() {
    let s = Setup::start().await;
    // Failed at GitHub's end (our 502 after storing, say) but stored: not missed.
    s.receive("g-stored").await;
    let gh = &s.gh;
    gh.add_delivery(delivery(
        100,
        "g-too-old",
        500,
        now() - chrono::Duration::days(4),
    ));
    gh.add_delivery(delivery(101, "g-stored", 502, minutes_ago(60)));
    gh.add_delivery(delivery(102, "g-timeout", 0, minutes_ago(50)));
    gh.add_delivery(delivery(103, "g-5xx", 503, minutes_ago(40)));
    gh.add_delivery(delivery(104, "g-ok", 200, minutes_ago(30)));
    gh.add_delivery(delivery(105, "g-fixed", 502, minutes_ago(20)));
    gh.add_delivery(redelivered(106, "g-fixed", 202, minutes_ago(10)));

    // Two per page: the fake's Link is absolute, only its cursor is followed.
    let mut r = s.redeliverer(2);
    let report = r.pass().await.unwrap();
    assert_eq!(s.requested_sorted(), vec![102, 103]);
    assert_eq!(report.missed, 2);
    assert_eq!(
        gh.calls(LIST_DELIVERIES),
        4,
        "pages until one reaches past the 3-day window"
    );
    assert_eq!(report.listed, 7);
    assert_eq!(s.client.calls().of("app.hook_deliveries"), 4);
    assert_eq!(s.client.calls().of("app.hook_delivery_redeliver"), 2);

    let status = s.t.get("/status").await.body;
    assert_eq!(status["github"]["redeliveries_requested"], 2);
    assert_eq!(status["github"]["api_calls_by_installation"]["app"], 6);

    // The next pass asks for nothing again, and reads only back to a little
    // before the last pass's newest delivery (one page here).
    let report = r.pass().await.unwrap();
    assert!(report.requested.is_empty(), "{report:?}");
    assert_eq!(gh.redelivery_requests().len(), 2);
    assert_eq!(gh.calls(LIST_DELIVERIES), 5);
    assert!(s.sleeps.lock().unwrap().is_empty());
    s.t.stop().await;
}

#[tokio::test]
async fn a_delivery_that_keeps_failing_is_asked_for_at_most_three_times() {
    let s = Setup::listing(delivery(200, "g-flaky", 502, minutes_ago(30))).await;
    let gh = &s.gh;
    let mut r = s.redeliverer(100);
    r.pass().await.unwrap();
    // Each redelivery that fails again is a new delivery id with the same GUID.
    for (id, minutes) in [(201, 25), (202, 20), (203, 15)] {
        gh.add_delivery(redelivered(id, "g-flaky", 504, minutes_ago(minutes)));
        r.pass().await.unwrap();
    }
    assert_eq!(gh.redelivery_requests(), vec![200, 201, 202]);
    // A fresh redeliverer (a restart) remembers too: it is in the store.
    let mut again = s.redeliverer(100);
    again.pass().await.unwrap();
    assert_eq!(gh.redelivery_requests().len(), 3);
    let status = s.t.get("/status").await.body;
    assert_eq!(status["github"]["redeliveries_requested"], 3);

    // Once it went through, nothing more is asked, even below the cap.
    gh.add_delivery(delivery(300, "g-other", 500, minutes_ago(10)));
    gh.add_delivery(redelivered(301, "g-other", 200, minutes_ago(5)));
    again.pass().await.unwrap();
    assert_eq!(gh.redelivery_requests().len(), 3);
    s.t.stop().await;
}

#[tokio::test]
async fn the_redelivery_post_follows_the_retry_rules() {
    let s = Setup::listing(delivery(400, "g-a", 500, minutes_ago(30))).await;
    let gh = &s.gh;
    // A 502 may come after GitHub took the request: not repeated, and not
    // asked for again on the next pass either.
    gh.fail_next(REDELIVER, 1, Failure::status(502).after_processing());
    let mut r = s.redeliverer(100);
    let report = r.pass().await.unwrap();
    assert_eq!(gh.calls(REDELIVER), 1);
    assert_eq!(report.errors.len(), 1, "{report:?}");
    r.pass().await.unwrap();
    assert_eq!(gh.calls(REDELIVER), 1);

    // A rate limit proves it was refused before processing: retried at once.
    gh.add_delivery(delivery(401, "g-b", 500, minutes_ago(20)));
    gh.fail_next(REDELIVER, 1, Failure::secondary_rate_limit(3));
    let report = r.pass().await.unwrap();
    assert_eq!(report.requested, vec![401]);
    assert_eq!(gh.calls(REDELIVER), 3);
    assert_eq!(*s.sleeps.lock().unwrap(), vec![Duration::from_secs(3)]);

    // Listing is a read: a 502 is retried.
    gh.fail_next(LIST_DELIVERIES, 1, Failure::status(502));
    r.pass().await.unwrap();
    let status = s.t.get("/status").await.body;
    assert_eq!(
        status["github"]["redeliveries_requested"], 1,
        "only requests GitHub confirmed are counted"
    );
    s.t.stop().await;
}

#[tokio::test]
async fn a_pass_reads_at_most_max_pages() {
    let s = Setup::start().await;
    for id in 1..=10 {
        s.gh.add_delivery(delivery(
            id,
            &format!("g-{id}"),
            200,
            minutes_ago(id as i64),
        ));
    }
    let mut r = Redeliverer::new(
        s.t.app.store.clone(),
        s.client.clone(),
        s.t.clock.clone(),
        RedeliveryOptions {
            per_page: 2,
            max_pages: 3,
            ..RedeliveryOptions::default()
        },
    );
    let report = r.pass().await.unwrap();
    assert_eq!((report.pages, report.listed), (3, 6));
    // Every pass is bounded.
    let report = r.pass().await.unwrap();
    assert_eq!(report.pages, 3);
    assert_eq!(s.gh.calls(LIST_DELIVERIES), 6);
    s.t.stop().await;
}
