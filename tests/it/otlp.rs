//! Outcome spans over OTLP: an OTLP/HTTP receiver written here (protobuf
//! decoded with `opentelemetry-proto`) takes the spans the App exports while
//! the demo scenario plays through the real router, and every output's last
//! span must say what its outcome record says, in gh-aw's attribute names
//! (`gh-aw.outcome.*`), on the output's own trace id, from its execution to
//! its evaluation, with one event per checkpoint passed.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::Router;
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;

use crate::common;
use common::TestApp;
use safe_outcomes::ingest::client::parse_scenario;
use safe_outcomes::ingest::client::DEMO_SCENARIO as SCENARIO;

type Received = Arc<Mutex<Vec<ExportTraceServiceRequest>>>;

/// An OTLP/HTTP traces receiver on a loopback port: its URL and what it got.
async fn receiver() -> (String, Received) {
    let got: Received = Arc::default();
    let keep = got.clone();
    let app = Router::new().route(
        "/v1/traces",
        post(move |headers: HeaderMap, body: Bytes| {
            let keep = keep.clone();
            async move {
                assert_eq!(headers["content-type"], "application/x-protobuf");
                match ExportTraceServiceRequest::decode(body) {
                    Ok(request) => {
                        keep.lock().unwrap().push(request);
                        let answer = ExportTraceServiceResponse::default().encode_to_vec();
                        (
                            StatusCode::OK,
                            [("content-type", "application/x-protobuf")],
                            answer,
                        )
                    }
                    Err(_) => (
                        StatusCode::BAD_REQUEST,
                        [("content-type", "text/plain")],
                        Vec::new(),
                    ),
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, got)
}

fn attr<'a>(kvs: &'a [KeyValue], key: &str) -> Option<&'a Any> {
    kvs.iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v| v.value.as_ref())
}

fn text(kvs: &[KeyValue], key: &str) -> Option<String> {
    match attr(kvs, key) {
        Some(Any::StringValue(s)) => Some(s.clone()),
        _ => None,
    }
}

fn int(kvs: &[KeyValue], key: &str) -> Option<i64> {
    match attr(kvs, key) {
        Some(Any::IntValue(n)) => Some(*n),
        _ => None,
    }
}

fn nanos(t: chrono::DateTime<chrono::Utc>) -> u64 {
    t.timestamp_nanos_opt().unwrap() as u64
}

#[tokio::test]
async fn outcome_spans_reach_an_otlp_receiver_with_gh_aw_attributes() {
    let (url, got) = receiver().await;
    let dir = tempfile::tempdir().unwrap();
    let steps = parse_scenario(SCENARIO).unwrap();
    let t = TestApp::start(dir.path(), steps[0].at()).await;
    let otlp =
        safe_outcomes::app::otlp::start(&t.app.shared, &safe_outcomes::app::otlp::traces_url(&url))
            .unwrap();
    t.play(&steps).await;
    t.app.wait_idle().await;
    otlp.flush(std::time::Duration::from_secs(20)).await;

    let requests = got.lock().unwrap().clone();
    assert!(!requests.is_empty(), "no export reached the receiver");
    let mut spans: Vec<Span> = Vec::new();
    for request in &requests {
        for rs in &request.resource_spans {
            let resource = &rs.resource.as_ref().unwrap().attributes;
            assert_eq!(
                text(resource, "service.name").as_deref(),
                Some("safe-outcomes")
            );
            for ss in &rs.scope_spans {
                spans.extend(ss.spans.iter().cloned());
            }
        }
    }
    assert_eq!(
        otlp.exported.load(std::sync::atomic::Ordering::Relaxed),
        spans.len() as u64
    );
    assert!(spans.iter().all(|s| s.name == "gh-aw.outcome"));

    // The last span of each output says what its record says now.
    let mut last: BTreeMap<String, &Span> = BTreeMap::new();
    for s in &spans {
        let id = text(&s.attributes, "safe_outcomes.safe_output_id").expect("an output id");
        let newer = last
            .get(&id)
            .is_none_or(|prev| prev.end_time_unix_nano <= s.end_time_unix_nano);
        if newer {
            last.insert(id, s);
        }
    }
    let outcomes = t.outcomes().await;
    // Every output has spans, and every span is of an output the read API
    // lists: one discovered from a webhook and then merged into its
    // manifest line's (one output, two ids) has none under the id it lost.
    for id in outcomes.keys() {
        assert!(last.contains_key(id), "{id} has no span");
    }
    let listed = t.get("/api/v1/outputs?limit=1000").await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    let listed: std::collections::BTreeSet<String> = listed.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["safe_output_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(listed.len(), outcomes.len());
    // An output known from a webhook for over an hour before its manifest
    // line merged it (renamed it) had spans under its first id: they are on
    // the trace of the output it became, superseded by that output's later
    // spans (app::otlp, "superseded"). No other span is of an unlisted id.
    for id in last.keys().filter(|id| !listed.contains(*id)) {
        let old = last[id];
        let heir = last
            .iter()
            .filter(|(other, _)| listed.contains(*other))
            .find(|(_, s)| s.trace_id == old.trace_id)
            .unwrap_or_else(|| panic!("{id}: a span of no listed output's trace"));
        assert!(
            heir.1.end_time_unix_nano >= old.end_time_unix_nano,
            "{id}: superseded by {}",
            heir.0
        );
        assert!(
            old.events.iter().any(|e| e.name.starts_with("checkpoint")),
            "{id}: a webhook-only output's span before its first checkpoint"
        );
    }
    assert!(
        outcomes.values().any(|o| o.target.is_none()),
        "the scenario has an output without a target"
    );
    assert!(
        spans.len() > outcomes.len(),
        "outcomes change as the scenario plays"
    );
    for (id, o) in &outcomes {
        let s = last[id];
        let a = &s.attributes;
        // The record's words, each as an attribute.
        for (attribute, word) in [
            ("gh-aw.outcome.type", o.safe_output_type.as_str()),
            ("gh-aw.outcome.outcome_status", o.outcome_status.as_str()),
            ("gh-aw.outcome.result", o.outcome_status.as_str()),
            (
                "gh-aw.outcome.evidence_strength",
                o.evidence_strength.as_str(),
            ),
            ("gh-aw.outcome.signal", o.gh_aw_signal.as_str()),
            (
                "safe_outcomes.human_check_signal",
                o.human_check_signal.as_str(),
            ),
        ] {
            assert_eq!(
                text(a, attribute).as_deref(),
                Some(word),
                "{id} {attribute}"
            );
        }
        // The target's repository, or (no target) the run's.
        let run_repo = id.split(':').next().unwrap().to_string();
        assert_eq!(
            text(a, "gh-aw.outcome.repo"),
            Some(o.target.as_ref().map_or(run_repo, |t| t.repo.clone())),
            "{id}"
        );
        assert_eq!(
            text(a, "gh-aw.outcome.object_url"),
            o.target.as_ref().and_then(|t| t.url.clone()),
            "{id}"
        );
        assert_eq!(
            int(a, "gh-aw.outcome.run_id"),
            o.run_id.map(|r| r as i64),
            "{id}"
        );
        assert_eq!(
            text(a, "gh-aw.outcome.workflow"),
            o.workflow.clone(),
            "{id}"
        );
        assert_eq!(
            text(a, "gh-aw.outcome.checked_at"),
            Some(o.evaluated_at.to_rfc3339()),
            "{id}"
        );
        assert_eq!(s.start_time_unix_nano, nanos(o.created_at), "{id}");
        assert_eq!(
            s.end_time_unix_nano,
            nanos(o.evaluated_at.max(o.created_at)),
            "{id}"
        );
        // One event per checkpoint passed, in time order.
        let events: Vec<String> = s.events.iter().map(|e| e.name.clone()).collect();
        let windows: Vec<String> = o
            .windows
            .keys()
            .map(|w| format!("checkpoint {w}"))
            .collect();
        assert_eq!(events, windows, "{id}");
        // The output's own trace id: the one its opentraces record carries.
        let stored = t.app.store.output(id).unwrap().unwrap();
        let trace = safe_outcomes::read::export::trace_id_of(&stored).replace('-', "");
        assert_eq!(hex::encode(&s.trace_id), trace, "{id}");
        assert_eq!(s.span_id.len(), 8);
    }
    otlp.stop().await;
    t.stop().await;
}
