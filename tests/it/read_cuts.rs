//! The read API's cuts through the real router over the demo scenario:
//! `workflow=`, `type=`, `since=`/`until=` narrow every endpoint, an unknown
//! parameter is a 400 everywhere, and `/api/v1/series` gives the three rates
//! and the counts per week, adding up to the report's totals.

use crate::common;
use common::TestApp;
use safe_outcomes::ingest::client::Client;
use serde_json::Value;

async fn get_ok(c: &Client, path: &str) -> Value {
    let a = c.get(path).await.unwrap();
    assert_eq!(a.status, 200, "{path}: {}", a.body);
    a.body
}

fn ids(items: &Value) -> Vec<String> {
    items
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["safe_output_id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn every_cut_narrows_the_outputs_and_the_report() {
    let (_dir, t) = TestApp::fresh_demo().await;
    let c = &t.client;
    let all = get_ok(c, "/api/v1/outputs?limit=1000").await["items"].clone();
    let all = all.as_array().unwrap();
    let by = |f: &dyn Fn(&Value) -> bool| -> Vec<String> {
        all.iter()
            .filter(|o| f(o))
            .map(|o| o["safe_output_id"].as_str().unwrap().to_string())
            .collect()
    };
    let cases: Vec<(&str, Vec<String>)> = vec![
        ("workflow=ci-coach", by(&|o| o["workflow"] == "ci-coach")),
        (
            "type=add_comment",
            by(&|o| o["safe_output_type"] == "add_comment"),
        ),
        (
            "repo=acme/docs",
            by(&|o| o["target"]["repo"] == "acme/docs"),
        ),
        (
            "since=2026-10-15&until=2026-11-01",
            by(&|o| {
                let t = o["created_at"].as_str().unwrap();
                ("2026-10-15".."2026-11-01").contains(&t)
            }),
        ),
    ];
    for (query, expected) in cases {
        assert!(!expected.is_empty(), "{query}: the demo has such outputs");
        assert!(expected.len() < all.len(), "{query}: a real cut");
        let got = get_ok(c, &format!("/api/v1/outputs?limit=1000&{query}")).await;
        assert_eq!(ids(&got["items"]), expected, "{query}");
        let report = get_ok(c, &format!("/api/v1/report?{query}")).await;
        assert_eq!(
            report["totals"]["total_safe_outputs"],
            expected.len(),
            "{query}"
        );
    }
    // A run's outcomes and one output take the cuts too.
    let run = get_ok(c, "/api/v1/runs/acme/widgets/2101").await;
    assert!(!run["items"].as_array().unwrap().is_empty());
    for cut in [
        "/api/v1/runs/acme/widgets/2101?workflow=no-such",
        "/api/v1/outputs/acme/widgets:2101:0?type=add_labels",
    ] {
        let a = c.get(cut).await.unwrap();
        assert_eq!(a.status, 404, "{cut}: {}", a.body);
    }
    t.stop().await;
}

#[tokio::test]
async fn an_unknown_or_bad_parameter_is_a_400_on_every_read_endpoint() {
    let (_dir, t) = TestApp::fresh_demo().await;
    for path in [
        "/api/v1/outputs?wokflow=ci-coach",
        "/api/v1/outputs?limit=lots",
        "/api/v1/outputs/acme/widgets:2101:0?cursor=x",
        "/api/v1/runs/acme/widgets/2101?window=7d",
        "/api/v1/report?windw=7d",
        "/api/v1/report?window=2d",
        "/api/v1/report?since=yesterday",
        "/api/v1/series?by=month",
        "/api/v1/series?cursor=x",
        "/api/v1/series?since=1990-01-01",
    ] {
        let a = t.get(path).await;
        assert_eq!(a.status, 400, "{path}: {}", a.body);
        assert!(a.body["detail"].as_str().is_some(), "{path}: {}", a.body);
    }
    let anonymous = Client::new(&t.server.url(), None, None);
    for path in ["/api/v1/series", "/api/v1/report", "/api/v1/outputs"] {
        assert_eq!(anonymous.get(path).await.unwrap().status, 401, "{path}");
    }
    t.stop().await;
}

#[tokio::test]
async fn the_series_gives_three_rates_and_counts_per_week_adding_up_to_the_report() {
    let (_dir, t) = TestApp::fresh_demo().await;
    let c = &t.client;
    for cut in ["", "&workflow=ci-coach", "&repo=acme/docs"] {
        let range = "since=2026-09-28&until=2026-11-23";
        let series = get_ok(c, &format!("/api/v1/series?by=week&{range}{cut}")).await;
        // The series reads every week at one window (by default the latest
        // every output reached: the demo has outputs in flight): the report
        // at that window holds the same outputs.
        let window = series["window"].as_str().unwrap();
        let report = get_ok(c, &format!("/api/v1/report?{range}{cut}&window={window}")).await;
        let periods = series["periods"].as_array().unwrap();
        let not_yet = common::total(periods, |p| &p["not_yet_at_window"]);
        assert_eq!(not_yet, report["not_yet_at_window"], "{cut}");
        assert_eq!(periods.len(), 8, "{cut}: eight Mondays from 2026-09-28");
        assert_eq!(periods[0]["week"], "2026-W40");
        assert_eq!(periods[0]["period_start"], "2026-09-28T00:00:00Z");
        for field in [
            "total_safe_outputs",
            "accepted_strong",
            "rejected",
            "pending",
        ] {
            let sum = common::total(periods, |p| &p["totals"][field]);
            assert_eq!(sum, report["totals"][field], "{cut} {field}");
        }
        for p in periods {
            let evaluable = p["evaluable_outputs"].as_u64().unwrap();
            for rate in [
                "strict_acceptance_rate",
                "human_check_acceptance_rate",
                "sticky_artifact_rate",
            ] {
                assert_eq!(p[rate].is_null(), evaluable == 0, "{cut} {rate} {p}");
            }
            if evaluable > 0 {
                let strong = p["totals"]["accepted_strong"].as_f64().unwrap();
                let strict = p["strict_acceptance_rate"].as_f64().unwrap();
                assert!((strict - strong / evaluable as f64).abs() < 1e-9);
            }
        }
    }
    // By default: the twelve weeks up to now.
    let series = get_ok(c, "/api/v1/series").await;
    assert_eq!(series["periods"].as_array().unwrap().len(), 12);
    t.stop().await;
}
