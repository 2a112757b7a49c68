//! The bundled scenario end to end through the real router: final outcomes
//! record by record, and the same outcomes whatever the order, repetition or
//! interruption of the deliveries.

use crate::common;
use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use common::{comparable, shuffle, TestApp};
use safe_outcomes::ingest::client::DEMO_SCENARIO as SCENARIO;
use safe_outcomes::ingest::client::{parse_scenario, Step};
use safe_outcomes::model::{OutcomeRecord, CHECKPOINTS};
use safe_outcomes::store::counter;
use serde_json::Value;

fn expected() -> Value {
    let path = common::manifest_dir().join("fixtures/demo/expected.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn final_at() -> DateTime<Utc> {
    expected()["final_at"].as_str().unwrap().parse().unwrap()
}

fn steps() -> Vec<Step> {
    parse_scenario(SCENARIO).unwrap()
}

/// The scenario played in order on a fresh App: the reference outcomes.
async fn reference_outcomes() -> BTreeMap<String, OutcomeRecord> {
    let (_dir, t) = TestApp::fresh_demo().await;
    t.advance_to(final_at()).await;
    let outcomes = t.outcomes().await;
    t.stop().await;
    outcomes
}

#[tokio::test]
async fn the_demo_gives_the_expected_outcome_for_every_output() {
    let dir = tempfile::tempdir().unwrap();
    let result = common::run_demo(dir.path()).await;
    assert!(result.refusals.is_empty(), "{:?}", result.refusals);
    let expected = expected();
    let expected = expected["outputs"].as_object().unwrap();
    let got: BTreeMap<&str, &OutcomeRecord> = result
        .outcomes
        .iter()
        .map(|o| (o.safe_output_id.as_str(), o))
        .collect();
    assert_eq!(
        got.keys().copied().collect::<Vec<_>>(),
        expected.keys().map(String::as_str).collect::<Vec<_>>(),
        "the set of outputs"
    );
    let mut mismatches = Vec::new();
    for (id, want) in expected {
        let o = got[id.as_str()];
        let have = (
            o.outcome_status.as_str(),
            o.evidence_strength.as_str(),
            o.human_check_signal.as_str(),
        );
        let wanted = (
            want["outcome_status"].as_str().unwrap(),
            want["evidence_strength"].as_str().unwrap(),
            want["human_check_signal"].as_str().unwrap(),
        );
        if have != wanted {
            mismatches.push(format!(
                "{id} ({}): got {have:?}, want {wanted:?} — {}",
                o.safe_output_type, want["why"]
            ));
        }
    }
    assert!(mismatches.is_empty(), "\n{}", mismatches.join("\n"));

    // By the end every output has a snapshot at every checkpoint, but those
    // still in flight: theirs up to the window before their next one.
    for o in &result.outcomes {
        let reached = match expected[&o.safe_output_id]["next_window"].as_str() {
            None => 4,
            Some(next) => CHECKPOINTS.iter().position(|(w, _)| *w == next).unwrap(),
        };
        assert_eq!(
            o.windows.len(),
            reached,
            "{}: {:?}",
            o.safe_output_id,
            o.windows.keys()
        );
    }
    assert!(
        expected
            .values()
            .filter(|e| e.get("next_window").is_some())
            .count()
            >= 2,
        "the demo has outputs in flight"
    );
    // The malformed manifest line is reported, not stored.
    let rejected: usize = result
        .manifest_answers
        .iter()
        .map(|a| a["rejected"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(rejected, 1);
    // The report counts what the records say.
    let t = &result.report.totals;
    assert_eq!(t.total_safe_outputs as usize, expected.len());
    let accepted = result
        .outcomes
        .iter()
        .filter(|o| o.outcome_status.as_str() == "accepted")
        .count() as u64;
    assert_eq!(
        t.accepted_strong + t.accepted_medium + t.accepted_weak,
        accepted
    );
    // The JSONL file holds one record per output.
    let jsonl = std::fs::read_to_string(&result.jsonl_path).unwrap();
    assert_eq!(jsonl.lines().count(), expected.len());

    // The reverted PR: accepted at 24h and 7d, reversed by day 10, counted once.
    let reverted = got["acme/widgets:2106:0"];
    assert_eq!(
        reverted.details.get("accepted_then_reverted"),
        Some(&Value::Bool(true)),
        "{:?}",
        reverted.details
    );
    let window = |o: &OutcomeRecord, w: &str| o.windows[w].outcome_status.as_str().to_string();
    assert_eq!(
        ["24h", "7d", "30d"].map(|w| window(reverted, w)),
        ["accepted", "accepted", "rejected"]
    );
    assert_eq!(t.durable_reversal_count, 1);
    // The flaky check: failed then passed on the PR's head; evidence, not a verdict.
    let flaky = got["acme/widgets:2107:0"];
    assert_eq!(
        flaky.details.get("deferred_nondeterministic"),
        Some(&serde_json::json!(["test (ubuntu-latest)"])),
        "{:?}",
        flaky.details
    );
    assert_eq!(flaky.details.get("ci"), Some(&Value::from("success")));
    // One report per checkpoint, each covering every output by the end.
    let windows: Vec<Option<&str>> = result
        .window_reports
        .iter()
        .map(|r| r.window.as_deref())
        .collect();
    assert_eq!(windows, [Some("1h"), Some("24h"), Some("7d"), Some("30d")]);
    for (r, (window, _)) in result.window_reports.iter().zip(CHECKPOINTS) {
        assert_eq!(
            (r.totals.total_safe_outputs + r.not_yet_at_window) as usize,
            expected.len()
        );
        // Outputs in flight whose next window is this one or a later one.
        let at = |w: &str| CHECKPOINTS.iter().position(|(c, _)| *c == w).unwrap();
        let not_yet = expected
            .values()
            .filter_map(|e| e["next_window"].as_str())
            .filter(|next| at(next) <= at(window))
            .count() as u64;
        assert_eq!(r.not_yet_at_window, not_yet, "{window}");
    }
}

/// The outputs still in flight at the end of the demo: the list API gives
/// each its next window and its due time (execution + the window), the
/// others `verdict_final` — as `fixtures/demo/expected.json` says.
#[tokio::test]
async fn the_demo_ends_with_outputs_in_flight_and_the_list_says_when_each_is_due() {
    let (_dir, t) = TestApp::fresh_demo().await;
    assert_eq!(t.clock.now(), final_at(), "the demo ends at final_at");
    let expected = expected();
    let expected = expected["outputs"].as_object().unwrap();
    let listed = t.get("/api/v1/outputs?limit=100").await.body;
    let items = listed["items"].as_array().unwrap();
    assert_eq!(items.len(), expected.len());
    let mut in_flight = 0;
    for item in items {
        let id = item["safe_output_id"].as_str().unwrap();
        match expected[id]["next_window"].as_str() {
            Some(next) => {
                in_flight += 1;
                assert_eq!(item["next_window"], next, "{id}");
                assert_eq!(item["verdict_final"], false, "{id}");
                let hours = CHECKPOINTS.iter().find(|(w, _)| *w == next).unwrap().1;
                let executed: DateTime<Utc> = item["created_at"].as_str().unwrap().parse().unwrap();
                let due: DateTime<Utc> = item["next_window_due_at"]
                    .as_str()
                    .unwrap()
                    .parse()
                    .unwrap();
                assert_eq!(due, executed + chrono::Duration::hours(hours), "{id}");
                assert!(due > final_at(), "{id} is due after the demo's end");
            }
            None => {
                assert_eq!(item["next_window"], Value::Null, "{id}");
                assert_eq!(item["next_window_due_at"], Value::Null, "{id}");
                assert_eq!(item["verdict_final"], true, "{id}");
            }
        }
    }
    assert_eq!(in_flight, 2);
    t.stop().await;
}

#[tokio::test]
async fn duplicated_and_shuffled_deliveries_converge_to_the_same_outcomes() {
    let reference = reference_outcomes().await;
    for seed in [1u64, 7, 42] {
        let mut sends: Vec<Step> = steps()
            .into_iter()
            .filter(|s| !matches!(s, Step::Advance { .. }))
            .collect();
        // Every delivery twice, all in a random order.
        let copies: Vec<Step> = sends
            .iter()
            .filter(|s| matches!(s, Step::Webhook { .. }))
            .cloned()
            .collect();
        sends.extend(copies);
        shuffle(&mut sends, seed);
        let dir = tempfile::tempdir().unwrap();
        let t = TestApp::start(dir.path(), steps()[0].at()).await;
        for step in &sends {
            let a = t.client.send_step(step).await.unwrap().unwrap();
            assert!(a.status < 300, "{}: {}", a.status, a.body);
        }
        t.advance_to(final_at()).await;
        let shuffled = t.outcomes().await;
        t.stop().await;
        assert_eq!(shuffled.len(), reference.len(), "seed {seed}");
        for (id, want) in &reference {
            let got = shuffled
                .get(id)
                .unwrap_or_else(|| panic!("seed {seed}: {id} missing"));
            assert_eq!(
                comparable(got.clone()),
                comparable(want.clone()),
                "seed {seed}: {id}"
            );
        }
    }
}

#[tokio::test]
async fn acknowledged_deliveries_survive_a_crash_before_processing() {
    let reference = reference_outcomes().await;
    let dir = tempfile::tempdir().unwrap();
    let steps = steps();
    // A process that acknowledges every delivery and dies before its worker runs.
    let t = TestApp::start_with(dir.path(), steps[0].at(), false).await;
    let mut acknowledged = 0;
    for step in &steps {
        t.clock.advance_to(step.at());
        if let Some(a) = t.client.send_step(step).await.unwrap() {
            assert!(a.status < 300, "{}: {}", a.status, a.body);
            if a.status == 202 {
                acknowledged += 1;
            }
        }
    }
    // On sled the inbox's mover files the logged deliveries in the
    // journal after their answer; the counters are the journal's.
    t.app.writer.settled().await;
    assert_eq!(t.app.store.counter(counter::PROCESSED), 0);
    assert_eq!(t.app.store.counter(counter::RECEIVED), acknowledged);
    assert_eq!(t.app.store.backlog(), acknowledged);
    t.stop().await;

    // Restart on the same store: everything is processed, once.
    let t = TestApp::start(dir.path(), steps.last().unwrap().at()).await;
    t.app.wait_idle().await;
    assert_eq!(t.app.store.counter(counter::PROCESSED), acknowledged);
    assert_eq!(t.app.store.backlog(), 0);
    t.advance_to(final_at()).await;
    let recovered = t.outcomes().await;
    // A second restart processes nothing again.
    t.stop().await;
    let t = TestApp::start(dir.path(), final_at()).await;
    t.settle().await;
    assert_eq!(t.app.store.counter(counter::PROCESSED), acknowledged);
    t.stop().await;

    assert_eq!(recovered.len(), reference.len());
    for (id, want) in &reference {
        assert_eq!(
            comparable(recovered[id].clone()),
            comparable(want.clone()),
            "{id}"
        );
    }
}
