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

use serde::{Deserialize, Serialize};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{IntoParams, OpenApi, ToSchema};

use super::{Mount, State};

/// `GET /api/v1/openapi.json` (no authentication: it holds no data).
pub(crate) fn routes(_: &Mount) -> Router<State> {
    Router::new().route("/api/v1/openapi.json", get(document))
}

async fn document() -> Json<utoipa::openapi::OpenApi> {
    Json(openapi())
}

/// The answers' examples, `"METHOD PATH STATUS"` → a real answer of the
/// demo scenario (arrays cut to their first item). Written by the schema
/// test from what the server answered (`SAFE_OUTCOMES_WRITE_OPENAPI_EXAMPLES=1
/// cargo test --test it schema::`), and checked by it on every run: each
/// example validates against its schema, and has the shape of the real
/// answer it stands for.
pub(crate) const EXAMPLES: &str = include_str!("openapi-examples.json");

/// The document, for tests and `safe-outcomes` itself: the generated one,
/// each JSON answer with its example from `EXAMPLES`.
pub fn openapi() -> utoipa::openapi::OpenApi {
    static DOC: std::sync::OnceLock<utoipa::openapi::OpenApi> = std::sync::OnceLock::new();
    DOC.get_or_init(|| with_examples(ApiDoc::openapi(), EXAMPLES))
        .clone()
}

/// `doc` with `examples` (`EXAMPLES`' form) set on the `application/json`
/// content of the answers they name. An example naming no such answer is a
/// mistake of the file: it panics (the schema test runs this).
fn with_examples(mut doc: utoipa::openapi::OpenApi, examples: &str) -> utoipa::openapi::OpenApi {
    use utoipa::openapi::RefOr;
    let examples: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(examples).expect("openapi-examples.json is a JSON object");
    for (key, example) in examples {
        let mut parts = key.splitn(3, ' ');
        let (Some(method), Some(path), Some(status)) = (parts.next(), parts.next(), parts.next())
        else {
            panic!("openapi-examples.json: {key:?} is not \"METHOD PATH STATUS\"");
        };
        let item = doc.paths.paths.get_mut(path);
        let operation = item.and_then(|item| match method {
            "GET" => item.get.as_mut(),
            "POST" => item.post.as_mut(),
            "PUT" => item.put.as_mut(),
            "DELETE" => item.delete.as_mut(),
            _ => None,
        });
        let content = operation
            .and_then(|op| op.responses.responses.get_mut(status))
            .and_then(|answer| match answer {
                RefOr::T(answer) => answer.content.get_mut("application/json"),
                RefOr::Ref(_) => None,
            })
            .and_then(|content| match content {
                RefOr::T(content) => Some(content),
                RefOr::Ref(_) => None,
            })
            .unwrap_or_else(|| panic!("openapi-examples.json: no JSON answer {key:?}"));
        content.example = Some(example);
    }
    doc
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "safe-outcomes",
        description = "What became of the writes AI agent workflows made to GitHub. Field names are the outcome record's everywhere (docs/export.md, \"One vocabulary\"); fields marked deprecated are aliases kept for /api/v1 only.",
    ),
    paths(
        list_outputs, get_output, reconcile_output, run_outcomes, report, series, export,
        export_jsonl, post_manifest, post_backfill, get_backfill, me, openapi_json, status,
        ping, ready,
    ),
    components(schemas(
        ErrorBody, super::api::ObservationDoc, crate::read::export::TraceRecord,
        // The parameters' and `/status`'s enumerations.
        ReportWindow, SeriesWindow, SeriesBy, ExportFormat, ModeDoc, DurabilityDoc, WorkerDoc,
        crate::model::OutcomeStatus, crate::model::EvidenceStrength,
    )),
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

/// An error answer: `{"error": code, "detail": why}`, the one shape of
/// every refusal (the framework's own included: `http::errors`).
#[derive(Serialize, ToSchema)]
pub(crate) struct ErrorBody {
    /// A stable machine name: `bad_request`, `unauthorized`, `forbidden`,
    /// `not_found`, `method_not_allowed`, `payload_too_large`,
    /// `unsupported_media_type`, `listen_only`, `unavailable`, … (a client
    /// may meet codes added later).
    pub error: String,
    /// What was wrong, for a person.
    pub detail: String,
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
    /// `safe_output_type`, e.g. `create_pull_request`. Any name: gh-aw
    /// workflows declare custom types of their own, so this is no closed list.
    r#type: Option<String>,
    /// `outcome_status`.
    status: Option<crate::model::OutcomeStatus>,
    /// `evidence_strength`.
    strength: Option<crate::model::EvidenceStrength>,
    /// Outputs executed at or after this instant (an RFC 3339 instant or a
    /// date, midnight UTC; real calendar dates of the years 1000 to 2999
    /// only, `read::query::YEARS`). With `until`, it must not come after it
    /// (equal: an empty range).
    #[param(value_type = Option<String>, pattern = r"^([12][0-9]{3}-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|1[0-9]|2[0-8]))|([12][0-9](0[48]|[2468][048]|[13579][26])|(1[26]|2[048])00)-02-29)(T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,9})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9]))?$")]
    since: Option<String>,
    /// Outputs executed before this instant (an RFC 3339 instant or a date,
    /// midnight UTC; years 1000 to 2999). With `since`, it must not come
    /// before it.
    #[param(value_type = Option<String>, pattern = r"^([12][0-9]{3}-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|1[0-9]|2[0-8]))|([12][0-9](0[48]|[2468][048]|[13579][26])|(1[26]|2[048])00)-02-29)(T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,9})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9]))?$")]
    until: Option<String>,
}

/// `limit` of `GET /api/v1/outputs`.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
struct PageParams {
    /// `next_cursor` of the previous page.
    cursor: Option<String>,
    /// Records per page, default 100; taken as 1 below it and as 1000
    /// above it (any other text, or a number past 64-bit, is a 400).
    #[param(minimum = 0)]
    limit: Option<i64>,
}

/// `window` of `GET /api/v1/report`.
#[derive(Serialize, ToSchema)]
#[allow(dead_code)]
enum ReportWindow {
    /// Each output's latest outcome (the default).
    #[serde(rename = "latest")]
    Latest,
    /// The latest window every output in scope has reached.
    #[serde(rename = "mature")]
    Mature,
    #[serde(rename = "1h")]
    H1,
    #[serde(rename = "24h")]
    H24,
    #[serde(rename = "7d")]
    D7,
    #[serde(rename = "30d")]
    D30,
}

/// `window` of `GET /api/v1/series`: a checkpoint; absent (or empty), the
/// latest window every output in the range has reached.
#[derive(Serialize, ToSchema)]
#[allow(dead_code)]
enum SeriesWindow {
    #[serde(rename = "1h")]
    H1,
    #[serde(rename = "24h")]
    H24,
    #[serde(rename = "7d")]
    D7,
    #[serde(rename = "30d")]
    D30,
}

/// `by` of `GET /api/v1/series`: the period (only weeks are offered).
#[derive(Serialize, ToSchema)]
#[allow(dead_code)]
enum SeriesBy {
    #[serde(rename = "week")]
    Week,
}

/// `format` of the export: outcome records (`jsonl`, also when absent), a
/// spreadsheet's rows (`csv`) or opentraces `TraceRecord`s. An empty
/// `format=` is refused (400) like any other value not listed.
#[derive(Serialize, ToSchema)]
#[allow(dead_code)]
enum ExportFormat {
    #[serde(rename = "jsonl")]
    Jsonl,
    #[serde(rename = "csv")]
    Csv,
    #[serde(rename = "opentraces")]
    Opentraces,
}

/// `POST /api/v1/manifests`: what was stored and what was refused.
#[derive(Serialize, ToSchema)]
pub(crate) struct ManifestAnswerDoc {
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
pub(crate) struct ManifestRefusalDoc {
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
pub(crate) struct RejectedLineDoc {
    /// 1-based line number.
    pub line: u64,
    pub error: String,
}

/// `POST /api/v1/backfill`: the repositories planned.
#[derive(Serialize, ToSchema)]
pub(crate) struct BackfillPlannedDoc {
    /// Repositories whose backfill was planned (one still running keeps its
    /// job and is not listed).
    pub planned: Vec<String>,
}

/// `GET /api/v1/me` (`http::api::me`): who is reading, and what
/// they may see.
#[derive(Serialize, ToSchema)]
#[allow(dead_code)]
pub(crate) struct MeDoc {
    /// The signed-in viewer's GitHub login, or a read token's issuer;
    /// null for the `API_TOKEN`.
    pub login: Option<String>,
    /// How the session signed in; null with a bearer.
    pub session: Option<SessionKindDoc>,
    /// With a bearer: which one.
    #[schema(nullable = false)]
    pub bearer: Option<BearerDoc>,
    /// With a read token: the installation it reads through, and its account.
    #[schema(nullable = false)]
    pub installation: Option<u64>,
    #[schema(nullable = false)]
    pub account: Option<String>,
    /// `all` (the `API_TOKEN`, an operator or local session) or
    /// `repositories` (exactly those of `repositories`).
    pub scope: ScopeDoc,
    /// With `scope: repositories`: the `owner/name`s, lower-case.
    #[schema(nullable = false)]
    pub repositories: Option<Vec<String>>,
}

/// `session` of `/api/v1/me` (`http::auth::sessions::SessionKind`).
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
pub(crate) enum SessionKindDoc {
    #[serde(rename = "github")]
    GitHub,
    Local,
    Operator,
}

/// `bearer` of `/api/v1/me`.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
pub(crate) enum BearerDoc {
    ApiToken,
    ReadToken,
}

/// `scope` of `/api/v1/me`.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
pub(crate) enum ScopeDoc {
    All,
    Repositories,
}

/// `POST /api/v1/outputs/{id}/reconcile`: the output queued.
#[derive(Serialize, ToSchema)]
pub(crate) struct ReconcileQueuedDoc {
    pub queued: String,
}

/// `GET /status`: health, without repository data.
#[derive(Serialize, ToSchema)]
pub(crate) struct StatusDoc {
    pub version: String,
    #[schema(value_type = ModeDoc)]
    pub mode: String,
    pub uptime_seconds: u64,
    pub store_bytes: Option<u64>,
    #[schema(value_type = DurabilityDoc)]
    pub durability: String,
    #[schema(value_type = Object)]
    pub database: serde_json::Value,
    #[schema(value_type = Object)]
    pub deliveries: serde_json::Value,
    pub outputs_tracked: Option<u64>,
    #[schema(value_type = WorkerDoc)]
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
pub(crate) struct ReadyDoc {
    pub ready: bool,
    /// `engine` (`sled`, `postgres`), `writable`, and while not: `cause`,
    /// `for_seconds`, `failed_reopen_attempts`; `reopens` since start.
    #[schema(value_type = Object)]
    pub store: serde_json::Value,
    /// `running` or `dead`.
    pub worker: String,
    pub worker_error: Option<String>,
    /// `running`, or `stopped`: the inbox's mover (sled) ended while the
    /// store is open, so every acknowledgement is refused until a restart.
    pub inbox: String,
}

/// How this server talks to GitHub.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
#[allow(dead_code)]
enum ModeDoc {
    ListenOnly,
    App,
    AppUnverified,
    AppFailing,
    AppCredentialsRefused,
}

/// What a store write survives before it is answered.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum DurabilityDoc {
    ProcessCrash,
    PowerLoss,
}

/// The worker thread.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum WorkerDoc {
    Running,
    Dead,
}

/// `#[utoipa::path]` of an endpoint behind the bearer token: `security`
/// says `bearer`, and `responses` gets what every such endpoint can answer
/// besides its own: 401 without the token (checked before anything else)
/// and 503 when the store or GitHub (asked which repositories a viewer
/// sees) cannot answer, or the reads are all busy.
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
            responses($($answer)*,
                (status = 401, body = ErrorBody, description = "No bearer token or session, or a wrong one (`unauthorized`)"),
                (status = 503, body = ErrorBody, description = "The store, GitHub or the read budget cannot serve it now (`unavailable`)")),
            security(("bearer" = [])))]
        #[allow(dead_code)]
        fn $name() {}
    };
}

bearer_path! {
    /// Outcome records, paginated in output id order.
    get "/api/v1/outputs", tag = "read", fn list_outputs,
    responses(
        (status = 200, body = super::api::OutputsPage, description = "A page of outcome records"),
        (status = 400, body = ErrorBody, description = "An unknown or repeated parameter, a bad value or a malformed query (`bad_request`)")),
    params(ReadParams, PageParams)
}

bearer_path! {
    /// One output: its outcome record, execution record, the changes of verdict
    /// and the observations behind them.
    get "/api/v1/outputs/{id}", tag = "read", fn get_output,
    responses(
        (status = 200, body = super::api::OutputDetail, description = "The output and its history"),
        (status = 400, body = ErrorBody, description = "An unknown or repeated parameter, a bad value, or a path that is not UTF-8 (`bad_request`)"),
        (status = 404, body = ErrorBody, description = "No such output, or not one the reader may see (`not_found`)")),
    params(("id" = String, Path, description = "`safe_output_id`, e.g. `acme/widgets:2101:0`"), ReadParams)
}

bearer_path! {
    /// Ask for an output to be evaluated from the GitHub API now (App mode).
    post "/api/v1/outputs/{id}/reconcile", tag = "read", fn reconcile_output,
    responses(
        (status = 202, body = ReconcileQueuedDoc, description = "Queued for the reconciler"),
        (status = 400, body = ErrorBody, description = "A path that is not UTF-8 (`bad_request`)"),
        (status = 404, body = ErrorBody, description = "No such output (`not_found`)"),
        (status = 409, body = ErrorBody, description = "Listen-only mode: no GitHub API access (`listen_only`), or the output lies outside its installation (`outside_installation`)")),
    params(("id" = String, Path, description = "`safe_output_id`"))
}

bearer_path! {
    /// The outcomes of one workflow run, shaped like `gh aw outcomes RUN --json`.
    get "/api/v1/runs/{owner}/{repo}/{run_id}", tag = "read", fn run_outcomes,
    responses(
        (status = 200, body = super::api::RunView, description = "The run's outcomes"),
        (status = 400, body = ErrorBody, description = "An unknown or repeated parameter, a bad value, or a `run_id` that is not a number (`bad_request`)"),
        (status = 404, body = ErrorBody, description = "No output of this run the reader may see (`not_found`)")),
    params(
        ("owner" = String, Path, description = "The repository's owner"),
        ("repo" = String, Path, description = "The repository's name"),
        ("run_id" = u64, Path, description = "The workflow run's id"),
        ReadParams)
}

bearer_path! {
    /// The report: totals, per-type rates (three rates, never one blended
    /// number), checkpoints, line survival.
    get "/api/v1/report", tag = "read", fn report,
    responses(
        (status = 200, body = crate::read::report::Report, description = "The report"),
        (status = 400, body = ErrorBody, description = "An unknown or repeated parameter or a bad value (`bad_request`)")),
    params(ReadParams,
        ("window" = Option<ReportWindow>, Query, description = "The outcome as of a checkpoint, each output's `latest` (the default) or the `mature` window"))
}

bearer_path! {
    /// The three rates and the counts per ISO week.
    get "/api/v1/series", tag = "read", fn series,
    responses(
        (status = 200, body = super::series::Series, description = "The weekly series"),
        (status = 400, body = ErrorBody, description = "An unknown or repeated parameter or a bad value (`bad_request`)")),
    params(ReadParams,
        ("by" = Option<SeriesBy>, Query, description = "The period: `week`"),
        ("window" = Option<SeriesWindow>, Query, description = "The outcome as of a checkpoint (absent: the latest window every output in range has reached)"))
}

bearer_path! {
    /// Every outcome record the reader may see, one JSON object a line
    /// (`format=jsonl`, the default), a CSV header and one row an output
    /// (`format=csv`), or one opentraces `TraceRecord` (schema 0.9.0) a line
    /// (`format=opentraces`). Streamed.
    get "/api/v1/export", tag = "read", fn export,
    responses(
        (status = 200,
         description = "One outcome record a line (with `format=opentraces`: one `TraceRecord` a line; with `format=csv`: a header, then one row an output)",
         content((crate::model::OutcomeRecord = "application/x-ndjson"), (String = "text/csv"))),
        (status = 400, body = ErrorBody, description = "An unknown or repeated parameter or a bad value (`bad_request`)")),
    params(ReadParams,
        ("format" = Option<ExportFormat>, Query, description = "`jsonl` (outcome records, the default), `csv` or `opentraces`"))
}

bearer_path! {
    /// The export under its first name: the same as `/api/v1/export`.
    #[deprecated = "use /api/v1/export"]
    get "/api/v1/export.jsonl", tag = "read", fn export_jsonl,
    responses(
        (status = 200,
         description = "One outcome record a line (with `format=opentraces`: one `TraceRecord` a line; with `format=csv`: a header, then one row an output)",
         content((crate::model::OutcomeRecord = "application/x-ndjson"), (String = "text/csv"))),
        (status = 400, body = ErrorBody, description = "An unknown or repeated parameter or a bad value (`bad_request`)")),
    params(ReadParams,
        ("format" = Option<ExportFormat>, Query, description = "`jsonl` (outcome records, the default), `csv` or `opentraces`"))
}

bearer_path! {
    /// A gh-aw `safe-output-items.jsonl`, one item a line.
    post "/api/v1/manifests", tag = "ingest", fn post_manifest,
    responses(
        (status = 202, body = ManifestAnswerDoc, description = "Stored (durable before the answer)"),
        (status = 200, body = ManifestAnswerDoc, description = "The same manifest again: nothing new stored"),
        (status = 400, body = ManifestRefusalDoc, description = "No line could be used, or a bad query; nothing stored (`bad_request`)"),
        (status = 403, body = ErrorBody, description = "An OIDC token of an owner without an installation, or for another repository (`forbidden`)"),
        (status = 413, body = ErrorBody, description = "Over the body or line budget; nothing stored (`payload_too_large`)"),
        (status = 415, body = ErrorBody, description = "Not one of the manifest media types (`unsupported_media_type`)")),
    params(
        ("repo" = Option<String>, Query, description = "`owner/name` for lines that name none"),
        ("run_id" = u64, Query, description = "The workflow run the manifest came from (with an OIDC token instead of the bearer, its `run_id` claim stands in)"),
        ("workflow" = Option<String>, Query, description = "The workflow's name for lines that name none")),
    request_body(content(
        (String = "application/x-ndjson", example = json!("{\"type\":\"create_issue\",\"title\":\"Flaky test\",\"body\":\"Seen twice\"}\n")),
        (String = "text/plain", example = json!("{\"type\":\"create_issue\",\"title\":\"Flaky test\",\"body\":\"Seen twice\"}\n"))),
        description = "One JSON object a line (gh-aw's `safe-output-items.jsonl`)")
}

/// `POST /api/v1/backfill`'s body: both fields optional; any other field
/// is refused (400).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub(crate) struct BackfillRequestDoc {
    /// Days back from now (default: `BACKFILL_DAYS`).
    #[schema(minimum = 1)]
    pub days: Option<u32>,
    /// `owner/name` (default: every repository of the active installations).
    pub repo: Option<String>,
}

bearer_path! {
    /// Plan the backfill of the gh-aw runs of the last `days` days.
    post "/api/v1/backfill", tag = "ingest", fn post_backfill,
    responses(
        (status = 202, body = BackfillPlannedDoc, description = "The repositories planned"),
        (status = 400, body = ErrorBody, description = "A body that is not a backfill request, a bad `days` or `repo` (`bad_request`)"),
        (status = 404, body = ErrorBody, description = "A repository no installation covers (`not_found`)"),
        (status = 409, body = ErrorBody, description = "Listen-only mode (`listen_only`)")),
    request_body(content = BackfillRequestDoc, content_type = "application/json",
        description = "`{\"days\": 30, \"repo\": \"owner/name\"}`, both optional; an empty body plans the defaults")
}

bearer_path! {
    /// The backfill jobs and how far each has got (what `backfill --watch` shows).
    get "/api/v1/backfill", tag = "ingest", fn get_backfill,
    responses(
        (status = 200, body = super::backfill::BackfillJobs, description = "Every backfill job"),
        (status = 400, body = ErrorBody, description = "An unknown or repeated parameter or a malformed query (`bad_request`)")),
    params(("repo" = Option<String>, Query, description = "Only this repository's job"))
}

bearer_path! {
    /// Who is reading (the bearer's holder, or the session's viewer) and
    /// which repositories they may see.
    get "/api/v1/me", tag = "read", fn me,
    responses(
        (status = 200, body = MeDoc, description = "The reader and their scope"))
}

/// This document.
#[utoipa::path(get, path = "/api/v1/openapi.json", tag = "health",
    responses((status = 200, body = Object, description = "This OpenAPI 3.1 document")))]
#[allow(dead_code)]
fn openapi_json() {}

/// Health: version, uptime, store size, deliveries, outputs tracked, last error.
#[utoipa::path(get, path = "/status", tag = "health",
    responses(
        (status = 200, body = StatusDoc, description = "Healthy"),
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
    responses((status = 200, body = String, content_type = "text/plain", description = "`PONG`")))]
#[allow(dead_code)]
fn ping() {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The examples change nothing else: the document read back after they
    /// are set is the generated one plus its examples.
    #[test]
    fn examples_are_added_and_nothing_else_changes() {
        let plain = serde_json::to_value(ApiDoc::openapi()).unwrap();
        let empty = serde_json::to_value(with_examples(ApiDoc::openapi(), "{}")).unwrap();
        assert_eq!(plain, empty, "no examples: the generated document");
        let with = serde_json::to_value(openapi()).unwrap();
        let examples: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(EXAMPLES).unwrap();
        let mut found = 0;
        for (path, ops) in with["paths"].as_object().unwrap() {
            for (method, op) in ops.as_object().unwrap() {
                for (status, answer) in op["responses"].as_object().unwrap() {
                    if let Some(e) = answer["content"]["application/json"].get("example") {
                        let key = format!("{} {path} {status}", method.to_uppercase());
                        assert_eq!(Some(e), examples.get(&key), "{key}");
                        found += 1;
                    }
                }
            }
        }
        assert_eq!(found, examples.len());
    }

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
