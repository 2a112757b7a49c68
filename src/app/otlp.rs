//! Outcome spans over OTLP (HTTP/protobuf, `opentelemetry-otlp`): each time
//! an output's outcome record changes — a new verdict, or a checkpoint
//! taken — one span is exported, with gh-aw's attribute names
//! (`gh-aw.outcome.type`, `.result`, `.outcome_status`, `.evidence_strength`,
//! `.signal`, `.object_url`, `.repo`, `.run_id`, `.workflow`, `.checked_at`,
//! … as gh-aw's `emit_outcome_spans.cjs` writes them) and the outcome
//! record's own names under `safe_outcomes.*`.
//!
//! A span runs from the output's execution (`created_at`) to its evaluation
//! (`evaluated_at`), with an event per checkpoint passed; its trace id is the
//! output's own (the opentraces export's), so every span of one output is one
//! trace. `serve` starts it when `OTEL_EXPORTER_OTLP_ENDPOINT` (or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set.
//!
//! Spans are only for outputs the read API lists under that id for good
//! (`spans_for`): an output known from a webhook alone (its id
//! `…:pr-61`, discovered from a marker) is renamed when its manifest line
//! comes and merges it into the run's output (`…:0`), so its changes are
//! exported from then on, or once its first checkpoint (1h) is taken with
//! no manifest line. A manifest line later than that renames an output
//! that already has spans: they stay on its trace (the trace id is kept
//! through the merge), superseded by the spans under its new id — a trace
//! is one output, and its latest span says where it stands. An output
//! with no target carries its run's repository (`gh-aw.outcome.repo`, the
//! repository of its id).
//!
//! The worker stages a span when it writes a changed record and releases the
//! staged spans once its unit of work is committed (a unit rolled back
//! discards them), so only committed outcomes are exported. Export runs on
//! its own task, batched; a full queue drops spans (counted), never slows
//! the worker; the exporter retries a failing collector with backoff.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use anyhow::Context;
use opentelemetry::trace::{
    SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{InstrumentationScope, KeyValue, Value};
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanExporter, SpanLinks};
use opentelemetry_sdk::Resource;
use tokio::sync::{mpsc, oneshot};

use crate::model::OutcomeRecord;

/// Spans waiting for the exporter at most; more are dropped (and counted).
const QUEUE: usize = 4096;
/// Spans per export request at most.
const BATCH: usize = 512;
/// How long the exporter waits to fill a batch.
const LINGER: Duration = Duration::from_millis(500);
/// The span's name (gh-aw's attributes say the rest).
pub(crate) const SPAN_NAME: &str = "gh-aw.outcome";

/// One changed outcome, with the trace id of its output.
#[derive(Debug, Clone)]
pub(crate) struct Settled {
    pub trace_id: String,
    pub record: OutcomeRecord,
}

enum Msg {
    Span(Box<Settled>),
    Flush(oneshot::Sender<()>),
}

/// Where the worker hands changed outcomes.
pub struct SpanSink {
    staged: Mutex<Vec<Settled>>,
    tx: mpsc::Sender<Msg>,
    pub dropped: AtomicU64,
}

/// Is a changed record exported? Yes for an output with a manifest line
/// (`from_manifest`: its id is final); one known from webhooks alone only
/// once a checkpoint is taken, when no manifest line is coming to rename it.
pub(crate) fn spans_for(record: &OutcomeRecord, from_manifest: bool) -> bool {
    from_manifest || !record.windows.is_empty()
}

impl SpanSink {
    /// A changed record, written in the unit of work now open, of an output
    /// with a manifest line or not (`spans_for`).
    pub(crate) fn stage(&self, trace_id: String, record: OutcomeRecord, from_manifest: bool) {
        if !spans_for(&record, from_manifest) {
            return;
        }
        self.staged
            .lock()
            .expect("staged spans")
            .push(Settled { trace_id, record });
    }

    /// The unit committed: export what it staged.
    pub(crate) fn release(&self) {
        let staged = std::mem::take(&mut *self.staged.lock().expect("staged spans"));
        for s in staged {
            if self.tx.try_send(Msg::Span(Box::new(s))).is_err() {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// The unit was rolled back: nothing it staged happened.
    pub(crate) fn discard(&self) {
        self.staged.lock().expect("staged spans").clear();
    }
}

/// The running exporter.
pub struct Otlp {
    tx: mpsc::Sender<Msg>,
    task: tokio::task::JoinHandle<()>,
    pub exported: std::sync::Arc<AtomicU64>,
}

impl Otlp {
    /// Export every span released so far; wait at most `timeout`.
    pub async fn flush(&self, timeout: Duration) {
        let (done, wait) = oneshot::channel();
        if self.tx.send(Msg::Flush(done)).await.is_ok() {
            let _ = tokio::time::timeout(timeout, wait).await;
        }
    }

    /// Flush, then stop.
    pub async fn stop(self) {
        self.flush(Duration::from_secs(5)).await;
        self.task.abort();
    }
}

/// The traces URL the OTLP environment names: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
/// as it is, or `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces` (the OTLP spec's rule).
pub(crate) fn traces_url_from_env() -> Option<String> {
    use crate::settings::{read, OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT};
    let var = |s| read(s).filter(|v: &String| !v.trim().is_empty());
    var(&OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
        .or_else(|| var(&OTEL_EXPORTER_OTLP_ENDPOINT).map(|base| traces_url(&base)))
}

/// `base` + `/v1/traces`.
pub fn traces_url(base: &str) -> String {
    format!("{}/v1/traces", base.trim_end_matches('/'))
}

/// Start exporting the App's outcome spans to `traces_url` (a full URL,
/// e.g. `http://collector:4318/v1/traces`). Headers come from
/// `OTEL_EXPORTER_OTLP_HEADERS` as the exporter reads them.
pub fn start(shared: &crate::app::Shared, traces_url: &str) -> anyhow::Result<Otlp> {
    let mut exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(Reqwest(
            reqwest::Client::builder()
                .timeout(Duration::from_secs(10))
                .build()?,
        ))
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(traces_url)
        .build()
        .with_context(|| format!("OTLP exporter for {traces_url}"))?;
    exporter.set_resource(
        &Resource::builder()
            .with_service_name("safe-outcomes")
            .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
            .build(),
    );
    let (tx, rx) = mpsc::channel(QUEUE);
    let sink = SpanSink {
        staged: Mutex::new(Vec::new()),
        tx: tx.clone(),
        dropped: AtomicU64::new(0),
    };
    if shared.outcome_spans.set(sink).is_err() {
        anyhow::bail!("outcome spans are already exported");
    }
    let exported = std::sync::Arc::new(AtomicU64::new(0));
    let task = tokio::spawn(export_loop(exporter, rx, exported.clone()));
    tracing::info!(url = traces_url, "exporting outcome spans over OTLP");
    Ok(Otlp { tx, task, exported })
}

/// Gather spans into batches and export them, until the channel closes.
async fn export_loop(
    exporter: opentelemetry_otlp::SpanExporter,
    mut rx: mpsc::Receiver<Msg>,
    exported: std::sync::Arc<AtomicU64>,
) {
    let scope = InstrumentationScope::builder("safe-outcomes")
        .with_version(env!("CARGO_PKG_VERSION"))
        .build();
    let mut batch: Vec<SpanData> = Vec::new();
    let mut waiting: Vec<oneshot::Sender<()>> = Vec::new();
    loop {
        // None: the channel closed; Some(None): the batch lingered long enough.
        let next = match batch.is_empty() {
            true => rx.recv().await.map(Some),
            false => match tokio::time::timeout(LINGER, rx.recv()).await {
                Ok(m) => m.map(Some),
                Err(_) => Some(None),
            },
        };
        let closed = next.is_none();
        let mut due = closed;
        match next {
            Some(Some(Msg::Span(s))) => batch.push(span(&s, &scope)),
            Some(Some(Msg::Flush(done))) => {
                waiting.push(done);
                due = true;
            }
            Some(None) => due = true,
            None => {}
        }
        if due || batch.len() >= BATCH {
            if !batch.is_empty() {
                let n = batch.len() as u64;
                match exporter.export(std::mem::take(&mut batch)).await {
                    Ok(()) => {
                        exported.fetch_add(n, Ordering::Relaxed);
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, spans = n, "OTLP export failed; spans dropped")
                    }
                }
            }
            for done in waiting.drain(..) {
                let _ = done.send(());
            }
        }
        if closed {
            return;
        }
    }
}

/// The span of one changed outcome.
pub(crate) fn span(s: &Settled, scope: &InstrumentationScope) -> SpanData {
    let o = &s.record;
    let trace_id = TraceId::from_hex(&s.trace_id.replace('-', "")).unwrap_or(TraceId::INVALID);
    let mut id = [0u8; 8];
    let _ = getrandom::getrandom(&mut id);
    let start: SystemTime = o.created_at.into();
    let end: SystemTime = o.evaluated_at.max(o.created_at).into();
    let mut events = SpanEvents::default();
    for (name, w) in o.windows.iter() {
        events.events.push(opentelemetry::trace::Event::new(
            format!("checkpoint {name}"),
            w.evaluated_at.into(),
            vec![
                KeyValue::new("gh-aw.outcome.window", name.to_string()),
                KeyValue::new("gh-aw.outcome.outcome_status", w.outcome_status.as_str()),
                KeyValue::new(
                    "gh-aw.outcome.evidence_strength",
                    w.evidence_strength.as_str(),
                ),
                KeyValue::new(
                    "safe_outcomes.human_check_signal",
                    w.human_check_signal.clone(),
                ),
            ],
            0,
        ));
    }
    SpanData {
        span_context: SpanContext::new(
            trace_id,
            SpanId::from_bytes(id),
            TraceFlags::SAMPLED,
            false,
            TraceState::NONE,
        ),
        parent_span_id: SpanId::INVALID,
        parent_span_is_remote: false,
        span_kind: SpanKind::Internal,
        name: SPAN_NAME.into(),
        start_time: start,
        end_time: end,
        attributes: attributes(o),
        dropped_attributes_count: 0,
        events,
        links: SpanLinks::default(),
        status: Status::Unset,
        instrumentation_scope: scope.clone(),
    }
}

/// gh-aw's outcome attributes, then the record's own names.
pub(crate) fn attributes(o: &OutcomeRecord) -> Vec<KeyValue> {
    let mut a = Vec::new();
    let mut put = |key: &str, value: Option<Value>| {
        if let Some(v) = value {
            a.push(KeyValue::new(key.to_string(), v));
        }
    };
    let target = o.target.as_ref();
    let text = |s: &str| Some(Value::from(s.to_string()));
    let int = |n: u64| Some(Value::I64(i64::try_from(n).unwrap_or(i64::MAX)));
    let (status, strength) = (
        text(o.outcome_status.as_str()),
        text(o.evidence_strength.as_str()),
    );
    put("gh-aw.outcome.type", text(&o.safe_output_type));
    put("gh-aw.outcome.result", status.clone());
    put("gh-aw.outcome.outcome_status", status.clone());
    put("gh-aw.outcome.evidence_strength", strength.clone());
    put("gh-aw.outcome.signal", text(&o.gh_aw_signal));
    put(
        "gh-aw.outcome.detail",
        Some(o.notes.clone())
            .filter(|n| !n.is_empty())
            .map(Value::from),
    );
    let url = target.and_then(|t| t.url.clone());
    put("gh-aw.outcome.object_url", url.clone().map(Value::from));
    put("gh-aw.outcome.url", url.map(Value::from));
    put(
        "gh-aw.outcome.object_number",
        target
            .and_then(|t| t.number.or(t.parent_number))
            .and_then(int),
    );
    // The target's repository, else the run's (the output id's first part).
    let run_repo = o.safe_output_id.split(':').next().filter(|r| !r.is_empty());
    put(
        "gh-aw.outcome.repo",
        target
            .map(|t| t.repo.as_str())
            .or(run_repo)
            .map(|r| Value::from(r.to_string())),
    );
    put("gh-aw.outcome.run_id", o.run_id.and_then(int));
    put("gh-aw.outcome.source_run_id", o.run_id.and_then(int));
    put(
        "gh-aw.outcome.workflow",
        o.workflow.clone().map(Value::from),
    );
    put("gh-aw.outcome.created_at", text(&o.created_at.to_rfc3339()));
    put(
        "gh-aw.outcome.checked_at",
        text(&o.evaluated_at.to_rfc3339()),
    );
    put(
        "gh-aw.outcome.time_to_outcome_hours",
        o.time_to_acceptance_hours.map(Value::F64),
    );
    put(
        "gh-aw.outcome.human_comments",
        o.details
            .get("human_comments")
            .and_then(|v| v.as_u64())
            .and_then(int),
    );
    put("safe_outcomes.safe_output_id", text(&o.safe_output_id));
    put("safe_outcomes.safe_output_type", text(&o.safe_output_type));
    put("safe_outcomes.outcome_status", status);
    put("safe_outcomes.evidence_strength", strength);
    put(
        "safe_outcomes.human_check_signal",
        text(&o.human_check_signal),
    );
    put(
        "safe_outcomes.evaluation_window_hours",
        Some(Value::I64(o.evaluation_window_hours)),
    );
    put(
        "safe_outcomes.target_resolved",
        Some(Value::Bool(o.target_resolved)),
    );
    put(
        "safe_outcomes.dedicated_evaluator",
        Some(Value::Bool(o.dedicated_evaluator)),
    );
    put(
        "safe_outcomes.visible_non_bot_actor_count",
        int(o.actor_summary.visible_non_bot_actor_count.into()),
    );
    a
}

/// The exporter's HTTP client: our own reqwest, on the App's runtime.
#[derive(Debug, Clone)]
struct Reqwest(reqwest::Client);

#[async_trait::async_trait]
impl HttpClient for Reqwest {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (parts, body) = request.into_parts();
        let answer = self
            .0
            .request(parts.method, parts.uri.to_string())
            .headers(parts.headers)
            .body(body)
            .send()
            .await?;
        let mut response = Response::builder().status(answer.status());
        if let Some(headers) = response.headers_mut() {
            *headers = answer.headers().clone();
        }
        Ok(response.body(answer.bytes().await?)?)
    }
}
