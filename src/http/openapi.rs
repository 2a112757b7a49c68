//! `GET /api/v1/openapi.json`: the OpenAPI 3.1 document of our own API,
//! generated (`utoipa`) from the types the handlers answer with — the
//! outcome record, the report, the series, the read API's pages — so it
//! cannot drift from them without the schema test (`tests/it/schema.rs`,
//! every endpoint's real answers on the demo scenario checked against this
//! document) failing.
//!
//! The endpoints are described here, one function each, rather than on the
//! handlers, so an area's file keeps only its behaviour. The few answers
//! still built as JSON values in their handlers (manifest ingest, backfill,
//! reconcile, `/status`) are described by the `…Doc` types below, which the
//! same test holds to what those handlers send.

use axum::routing::get;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{IntoParams, OpenApi, ToSchema};

use super::{Mount, State};

/// `GET /api/v1/openapi.json` (no authentication: it holds no data).
pub fn routes(_: &Mount) -> Router<State> {
    Router::new().route("/api/v1/openapi.json", get(document))
}

async fn document() -> Json<utoipa::openapi::OpenApi> {
    Json(ApiDoc::openapi())
}

/// The document, for tests and `safe-outcomes` itself.
pub fn openapi() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "safe-outcomes",
        description = "What became of the writes AI agent workflows made to GitHub. Field names are the outcome record's everywhere (docs/export.md, \"One vocabulary\"); fields marked deprecated are aliases kept for /api/v1 only.",
    ),
    paths(
        list_outputs, get_output, reconcile_output, run_outcomes, report, series, export,
        export_jsonl, post_manifest, post_backfill, get_backfill, openapi_json, status, ping,
        ready,
    ),
    components(schemas(ErrorBody, ObservationDoc, crate::read::export::TraceRecord)),
    modifiers(&Security),
    tags(
        (name = "read", description = "Outcome records, runs, the report, the series, the export"),
        (name = "ingest", description = "Manifests and backfill"),
        (name = "health", description = "Health, without repository data"),
    )
)]
struct ApiDoc;

/// `bearer`: `Authorization: Bearer API_TOKEN` (a dashboard session cookie
/// is accepted by the read endpoints too).
struct Security;

impl utoipa::Modify for Security {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// An error answer: `{"error": kind, "detail": why}`.
#[derive(Serialize, ToSchema)]
pub struct ErrorBody {
    /// A short machine name: `bad_request`, `unauthorized`, `not_found`, …
    pub error: String,
    /// What was wrong, for a person.
    pub detail: String,
}

/// Who did something.
#[derive(Serialize, ToSchema)]
pub struct ActorDoc {
    pub login: String,
    /// GitHub's account type: `User`, `Bot`, `Organization`, `Mannequin`.
    #[serde(rename = "type")]
    pub account_type: String,
}

/// One fact observed about a target, with GitHub's own timestamp. Its
/// `kind` says what happened (`opened`, `closed`, `merged`, `labeled`, …);
/// each kind has its own further fields.
#[derive(Serialize, ToSchema)]
pub struct ObservationDoc {
    pub id: String,
    pub at: DateTime<Utc>,
    /// The key of the target it is filed under.
    pub target: String,
    pub kind: String,
    pub actor: Option<ActorDoc>,
    /// The issue or PR state after the event, when the delivery carried it.
    #[schema(value_type = Option<Object>)]
    pub snapshot: Option<serde_json::Value>,
    /// The fields of its `kind` (`before`/`after` of a push, `state` of a
    /// review, `label` of a label event, …).
    #[serde(flatten)]
    pub fields: std::collections::HashMap<String, serde_json::Value>,
}

/// The cuts every read endpoint takes.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
struct ReadParams {
    /// `owner/name`.
    repo: Option<String>,
    /// The workflow's name.
    workflow: Option<String>,
    /// `safe_output_type`, e.g. `create_pull_request`.
    r#type: Option<String>,
    /// `outcome_status`: accepted, rejected, pending, ignored, skipped, unknown.
    status: Option<String>,
    /// `evidence_strength`: strong, medium, weak, none.
    strength: Option<String>,
    /// Outputs executed at or after this instant (RFC 3339 or a date).
    since: Option<String>,
    /// Outputs executed before this instant (RFC 3339 or a date).
    until: Option<String>,
}

/// `POST /api/v1/manifests`: what was stored and what was refused.
#[derive(Serialize, ToSchema)]
pub struct ManifestAnswerDoc {
    /// Lines stored as outputs.
    pub accepted: u64,
    /// The ids of the outputs stored (the first ones; see `outputs_omitted`).
    pub outputs: Vec<String>,
    pub outputs_omitted: u64,
    /// The lines refused, with why (the first ones; see `rejected_total`).
    pub rejected: Vec<RejectedLineDoc>,
    pub rejected_total: u64,
    /// Of the refused lines, those naming a repository or target outside
    /// the run's installation (the tenancy rule, docs/auth.md).
    pub outside_installation: u64,
    /// True when the same manifest was posted before (nothing new stored).
    pub duplicate: bool,
}

/// `POST /api/v1/manifests` when no line could be used: nothing stored.
#[derive(Serialize, ToSchema)]
pub struct ManifestRefusalDoc {
    /// `bad_request`.
    pub error: String,
    pub detail: String,
    /// 0 (absent when the query, not the lines, was refused).
    pub accepted: Option<u64>,
    pub rejected: Option<Vec<RejectedLineDoc>>,
    pub rejected_total: Option<u64>,
    /// Of the refused lines, those outside the run's installation.
    pub outside_installation: Option<u64>,
}

/// A manifest line refused.
#[derive(Serialize, ToSchema)]
pub struct RejectedLineDoc {
    /// 1-based line number.
    pub line: u64,
    pub error: String,
}

/// `POST /api/v1/backfill`: the repositories planned.
#[derive(Serialize, ToSchema)]
pub struct BackfillPlannedDoc {
    /// Repositories whose backfill was planned (one still running keeps its
    /// job and is not listed).
    pub planned: Vec<String>,
}

/// `POST /api/v1/outputs/{id}/reconcile`: the output queued.
#[derive(Serialize, ToSchema)]
pub struct ReconcileQueuedDoc {
    pub queued: String,
}

/// `GET /status`: health, without repository data.
#[derive(Serialize, ToSchema)]
pub struct StatusDoc {
    pub version: String,
    /// `listen-only`, `app`, `app-unverified`, `app-failing`, `app-credentials-refused`.
    pub mode: String,
    pub uptime_seconds: u64,
    pub store_bytes: Option<u64>,
    /// `process_crash` or `power_loss`.
    pub durability: String,
    #[schema(value_type = Object)]
    pub database: serde_json::Value,
    #[schema(value_type = Object)]
    pub deliveries: serde_json::Value,
    pub outputs_tracked: Option<u64>,
    /// `running` or `dead`.
    pub worker: String,
    pub worker_error: Option<String>,
    /// Inbox items moved aside after failing.
    pub dead_letters: u64,
    pub last_error: Option<String>,
    /// When `last_error` was recorded (RFC 3339).
    pub last_error_at: Option<String>,
    /// True when `last_error` was the database's and it has answered since.
    pub last_error_resolved: bool,
    #[schema(value_type = Object)]
    pub github: serde_json::Value,
    /// What the tenancy rule refused, by where and why (counts only,
    /// docs/auth.md "Tenancy").
    #[schema(value_type = Object)]
    pub tenancy: serde_json::Value,
}

/// `GET /ready`.
#[derive(Serialize, ToSchema)]
pub struct ReadyDoc {
    pub ready: bool,
    /// `engine` (`sled`, `postgres`), `writable`, and while not: `cause`,
    /// `for_seconds`, `failed_reopen_attempts`; `reopens` since start.
    #[schema(value_type = Object)]
    pub store: serde_json::Value,
    /// `running` or `dead`.
    pub worker: String,
    pub worker_error: Option<String>,
}

/// `#[utoipa::path]` of an endpoint behind the bearer token: `security`
/// says `bearer`, and `responses` gets the 401 such an endpoint answers
/// without it.
macro_rules! bearer_path {
    (
        $(#[$attr:meta])*
        $method:ident $path:literal, tag = $tag:literal, fn $name:ident,
        responses($($answer:tt)*)
        $(, $part:ident($($inner:tt)*))* $(,)?
    ) => {
        $(#[$attr])*
        #[utoipa::path($method, path = $path, tag = $tag,
            $($part($($inner)*),)*
            responses($($answer)*, (status = 401, body = ErrorBody)),
            security(("bearer" = [])))]
        #[allow(dead_code)]
        fn $name() {}
    };
}

bearer_path! {
    /// Outcome records, paginated in output id order.
    get "/api/v1/outputs", tag = "read", fn list_outputs,
    responses(
        (status = 200, body = super::api::OutputsPage),
        (status = 400, body = ErrorBody, description = "An unknown parameter or a bad value")),
    params(ReadParams,
        ("cursor" = Option<String>, Query, description = "`next_cursor` of the previous page"),
        ("limit" = Option<u32>, Query, description = "Records per page (1–1000, default 100)"))
}

bearer_path! {
    /// One output: its outcome record, execution record, the changes of verdict
    /// and the observations behind them.
    get "/api/v1/outputs/{id}", tag = "read", fn get_output,
    responses(
        (status = 200, body = super::api::OutputDetail),
        (status = 404, body = ErrorBody, description = "No such output, or not one the reader may see")),
    params(("id" = String, Path, description = "`safe_output_id`, e.g. `acme/widgets:2101:0`"), ReadParams)
}

bearer_path! {
    /// Ask for an output to be evaluated from the GitHub API now (App mode).
    post "/api/v1/outputs/{id}/reconcile", tag = "read", fn reconcile_output,
    responses(
        (status = 202, body = ReconcileQueuedDoc),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "Listen-only mode: no GitHub API access")),
    params(("id" = String, Path, description = "`safe_output_id`"))
}

bearer_path! {
    /// The outcomes of one workflow run, shaped like `gh aw outcomes RUN --json`.
    get "/api/v1/runs/{owner}/{repo}/{run_id}", tag = "read", fn run_outcomes,
    responses(
        (status = 200, body = super::api::RunView),
        (status = 404, body = ErrorBody, description = "No output of this run the reader may see")),
    params(
        ("owner" = String, Path), ("repo" = String, Path), ("run_id" = u64, Path),
        ReadParams)
}

bearer_path! {
    /// The report: totals, per-type rates (three rates, never one blended
    /// number), checkpoints, line survival.
    get "/api/v1/report", tag = "read", fn report,
    responses(
        (status = 200, body = crate::read::report::Report),
        (status = 400, body = ErrorBody)),
    params(ReadParams,
        ("window" = Option<String>, Query, description = "1h, 24h, 7d or 30d: the outcome as of that checkpoint"))
}

bearer_path! {
    /// The three rates and the counts per ISO week.
    get "/api/v1/series", tag = "read", fn series,
    responses(
        (status = 200, body = super::series::Series),
        (status = 400, body = ErrorBody)),
    params(ReadParams,
        ("by" = Option<String>, Query, description = "`week` (the only period offered)"))
}

bearer_path! {
    /// Every outcome record the reader may see, one JSON object a line
    /// (`format=jsonl`, the default), a CSV header and one row an output
    /// (`format=csv`), or one opentraces `TraceRecord` (schema 0.9.0) a line
    /// (`format=opentraces`). Streamed.
    get "/api/v1/export", tag = "read", fn export,
    responses(
        (status = 200, content_type = "application/x-ndjson",
         body = crate::model::OutcomeRecord,
         description = "One outcome record a line (with `format=opentraces`: one `TraceRecord` a line)"),
        (status = 400, body = ErrorBody)),
    params(ReadParams,
        ("format" = Option<String>, Query, description = "`jsonl` (outcome records), `csv` or `opentraces`"))
}

/// The export under its first name: the same as `/api/v1/export`.
#[utoipa::path(get, path = "/api/v1/export.jsonl", tag = "read", params(ReadParams),
    responses(
        (status = 200, content_type = "application/x-ndjson", body = crate::model::OutcomeRecord,
         description = "One outcome record a line")),
    security(("bearer" = [])))]
#[deprecated = "use /api/v1/export"]
#[allow(dead_code)]
fn export_jsonl() {}

bearer_path! {
    /// A gh-aw `safe-output-items.jsonl`, one item a line.
    post "/api/v1/manifests", tag = "ingest", fn post_manifest,
    responses(
        (status = 202, body = ManifestAnswerDoc, description = "Stored (durable before the answer)"),
        (status = 200, body = ManifestAnswerDoc, description = "The same manifest again: nothing new stored"),
        (status = 400, body = ManifestRefusalDoc, description = "No line could be used, or a bad query; nothing stored"),
        (status = 403, body = ErrorBody), (status = 413, body = ErrorBody), (status = 415, body = ErrorBody)),
    params(
        ("repo" = Option<String>, Query, description = "`owner/name` for lines that name none"),
        ("run_id" = Option<u64>, Query), ("workflow" = Option<String>, Query)),
    request_body(content = String, content_type = "application/x-ndjson")
}

bearer_path! {
    /// Plan the backfill of the gh-aw runs of the last `days` days.
    post "/api/v1/backfill", tag = "ingest", fn post_backfill,
    responses(
        (status = 202, body = BackfillPlannedDoc),
        (status = 400, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "Listen-only mode")),
    request_body(content = Object, description = "`{\"days\": 30, \"repo\": \"owner/name\"}`, both optional")
}

bearer_path! {
    /// The backfill jobs and how far each has got (what `backfill --watch` shows).
    get "/api/v1/backfill", tag = "ingest", fn get_backfill,
    responses(
        (status = 200, body = super::backfill::BackfillJobs)),
    params(("repo" = Option<String>, Query, description = "Only this repository's job"))
}

/// This document.
#[utoipa::path(get, path = "/api/v1/openapi.json", tag = "health",
    responses((status = 200, body = Object, description = "OpenAPI 3.1")))]
#[allow(dead_code)]
fn openapi_json() {}

/// Health: version, uptime, store size, deliveries, outputs tracked, last error.
#[utoipa::path(get, path = "/status", tag = "health",
    responses(
        (status = 200, body = StatusDoc),
        (status = 503, body = StatusDoc, description = "The worker died, the database is unreachable, or the store cannot write (`database.store`); with `Retry-After`")))]
#[allow(dead_code)]
fn status() {}

/// Readiness: whether the store can write and the worker runs. `/ping` is
/// liveness; this is what a load balancer or Kubernetes readiness probe asks.
#[utoipa::path(get, path = "/ready", tag = "health",
    responses(
        (status = 200, body = ReadyDoc, description = "Ready: the store can write, the worker runs"),
        (status = 503, body = ReadyDoc, description = "Not ready, with the cause (a store reopening after an I/O error such as a full disk, an unreachable database, a dead worker); with `Retry-After`")))]
#[allow(dead_code)]
fn ready() {}

/// `PONG`.
#[utoipa::path(get, path = "/ping", tag = "health",
    responses((status = 200, body = String, content_type = "text/plain")))]
#[allow(dead_code)]
fn ping() {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every path is described with its answers, and every schema a path
    /// names is in the document's components.
    #[test]
    fn the_document_names_every_endpoint_and_resolves_every_reference() {
        let doc = serde_json::to_value(openapi()).unwrap();
        assert!(
            doc["openapi"].as_str().unwrap().starts_with("3.1"),
            "{}",
            doc["openapi"]
        );
        let paths = doc["paths"].as_object().unwrap();
        for path in [
            "/api/v1/outputs",
            "/api/v1/outputs/{id}",
            "/api/v1/outputs/{id}/reconcile",
            "/api/v1/runs/{owner}/{repo}/{run_id}",
            "/api/v1/report",
            "/api/v1/series",
            "/api/v1/export",
            "/api/v1/export.jsonl",
            "/api/v1/manifests",
            "/api/v1/backfill",
            "/api/v1/openapi.json",
            "/status",
            "/ping",
            "/ready",
        ] {
            assert!(paths.contains_key(path), "{path} is not described");
        }
        let text = doc.to_string();
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        for piece in text.split("\"$ref\":\"#/components/schemas/").skip(1) {
            let name = &piece[..piece.find('"').unwrap()];
            assert!(
                schemas.contains_key(name),
                "{name} is referenced but not described"
            );
        }
        // The record's own names, windows in time order.
        let record = &schemas["OutcomeRecord"]["properties"];
        for field in [
            "safe_output_id",
            "safe_output_type",
            "outcome_status",
            "evidence_strength",
            "human_check_signal",
            "evaluated_at",
            "windows",
        ] {
            assert!(record.get(field).is_some(), "OutcomeRecord.{field}");
        }
        // The windows are described in time order (as written, not as a
        // `Value` would sort them).
        let reference = record["windows"]["$ref"].as_str().unwrap_or_default();
        let name = reference.trim_start_matches("#/components/schemas/");
        let windows = serde_json::to_string(&openapi().components.unwrap().schemas[name]).unwrap();
        let at: Vec<usize> = ["\"1h\"", "\"24h\"", "\"7d\"", "\"30d\""]
            .iter()
            .map(|w| {
                windows
                    .find(w)
                    .unwrap_or_else(|| panic!("{w} in {windows}"))
            })
            .collect();
        assert!(at.windows(2).all(|p| p[0] < p[1]), "{windows}");
    }
}
