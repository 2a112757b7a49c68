//! Workflow runs and the primary rate limit, for the backfill.
//!
//! - `GET /repos/{o}/{r}/actions/runs`: newest first, filtered by `created`
//!   (`A..B`, `>=A`, `<=A`, `>A`, `<A`, inclusive ranges as in GitHub's
//!   search syntax) and `status`, paged by `per_page` / `page`, with
//!   `total_count`; a filtered search reaches 1,000 runs at most (github-facts-2 §6).
//! - `GET /repos/{o}/{r}/actions/workflows`: the workflows of the repository
//!   (one per distinct path among its runs, id `workflow_id(repo, path)`),
//!   paged, with `total_count`.
//! - `GET /repos/{o}/{r}/actions/workflows/{workflow_id}/runs`: the runs
//!   list above, of one workflow (by id or by file name, as GitHub takes it).
//! - The rate limit (when set with `set_rate_limit`): every request made
//!   with an installation token costs one, answers carry `x-ratelimit-*`,
//!   and at zero the answer is GitHub's 403 (`rate_limited` counts those).
//!   `GET /rate_limit` costs nothing (github-facts-2 §7).

use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::Json;
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::json;

use super::{Authorized, Fake, FakeGitHub};

pub(crate) const RATE_LIMIT: &str = "GET /rate_limit";
/// Results of a filtered runs search (github-facts-2 §6).
pub(crate) const SEARCH_CAP: usize = 1000;

#[derive(Debug, Clone)]
pub struct Run {
    pub id: u64,
    pub repo: String,
    pub path: String,
    pub status: String,
    pub created_at: DateTime<Utc>,
    /// What triggered it (`schedule` for runs added with `add_run`).
    pub event: String,
    /// Set when completed (`success` for runs added with `add_run`).
    pub conclusion: Option<String>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Copy)]
pub struct RateLimit {
    pub limit: u64,
    pub remaining: u64,
    /// Unix seconds.
    pub reset: i64,
}

#[derive(Debug, Default)]
pub struct Runs {
    pub all: Vec<Run>,
    pub rate: Option<RateLimit>,
    /// Requests refused with 403 because the budget was spent.
    pub rate_limited: u64,
}

impl FakeGitHub {
    pub fn add_run(
        &self,
        repo: &str,
        id: u64,
        path: &str,
        status: &str,
        created_at: DateTime<Utc>,
    ) {
        self.fake.lock().runs.all.push(Run {
            id,
            repo: repo.to_string(),
            path: path.to_string(),
            status: status.to_string(),
            created_at,
            event: "schedule".into(),
            conclusion: (status == "completed").then(|| "success".into()),
            updated_at: created_at,
        });
    }

    /// Start metering installation requests: `remaining` left until `reset`.
    pub fn set_rate_limit(&self, limit: u64, remaining: u64, reset: i64) {
        self.fake.lock().runs.rate = Some(RateLimit {
            limit,
            remaining,
            reset,
        });
    }

    pub fn rate_limit(&self) -> Option<RateLimit> {
        self.fake.lock().runs.rate
    }

    pub fn rate_limited(&self) -> u64 {
        self.fake.lock().runs.rate_limited
    }
}

/// The rate-limit headers of an answer.
pub(crate) fn headers(rate: &RateLimit) -> [(String, String); 5] {
    [
        ("x-ratelimit-limit".into(), rate.limit.to_string()),
        ("x-ratelimit-remaining".into(), rate.remaining.to_string()),
        (
            "x-ratelimit-used".into(),
            (rate.limit - rate.remaining).to_string(),
        ),
        ("x-ratelimit-reset".into(), rate.reset.to_string()),
        ("x-ratelimit-resource".into(), "core".into()),
    ]
}

#[derive(Debug, Deserialize)]
pub(crate) struct ListQuery {
    created: Option<String>,
    status: Option<String>,
    event: Option<String>,
    per_page: Option<usize>,
    page: Option<usize>,
}

fn parse(t: &str) -> Option<DateTime<Utc>> {
    t.parse().ok().or_else(|| {
        chrono::NaiveDate::parse_from_str(t, "%Y-%m-%d")
            .ok()
            .map(|d| d.and_hms_opt(0, 0, 0).unwrap().and_utc())
    })
}

/// GitHub's `created` qualifier, or `None` when it does not parse.
fn created_matches(filter: &str, at: DateTime<Utc>) -> Option<bool> {
    if let Some((a, b)) = filter.split_once("..") {
        return Some(parse(a)? <= at && at <= parse(b)?);
    }
    for (op, f) in [
        (
            ">=",
            (|a, t| t >= a) as fn(DateTime<Utc>, DateTime<Utc>) -> bool,
        ),
        ("<=", |a, t| t <= a),
        (">", |a, t| t > a),
        ("<", |a, t| t < a),
    ] {
        if let Some(rest) = filter.strip_prefix(op) {
            return Some(f(parse(rest)?, at));
        }
    }
    Some(parse(filter)? == at)
}

/// The id of the workflow at `path` in `repo`: stable, as GitHub's is.
pub fn workflow_id(repo: &str, path: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in repo
        .to_ascii_lowercase()
        .bytes()
        .chain([b'/'])
        .chain(path.bytes())
    {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    100_000 + h % 900_000_000
}

pub(crate) async fn list(
    State(fake): State<Fake>,
    Path((owner, repo)): Path<(String, String)>,
    Query(q): Query<ListQuery>,
    _auth: Authorized,
) -> Response {
    runs_of(&fake, &format!("{owner}/{repo}"), &q, |_| true)
}

pub(crate) async fn list_for_workflow(
    State(fake): State<Fake>,
    Path((owner, repo, workflow)): Path<(String, String, String)>,
    Query(q): Query<ListQuery>,
    _auth: Authorized,
) -> Response {
    let full = format!("{owner}/{repo}");
    let exists = fake
        .all_runs()
        .iter()
        .any(|r| r.repo.eq_ignore_ascii_case(&full) && names_workflow(&full, &r.path, &workflow));
    if !exists {
        return super::error(axum::http::StatusCode::NOT_FOUND, "Not Found");
    }
    runs_of(&fake, &full, &q, |r| {
        names_workflow(&full, &r.path, &workflow)
    })
}

/// `workflow` (an id, or a file name) names the workflow at `path`.
fn names_workflow(repo: &str, path: &str, workflow: &str) -> bool {
    workflow == workflow_id(repo, path).to_string()
        || path.rsplit('/').next().is_some_and(|file| file == workflow)
}

pub(crate) async fn list_workflows(
    State(fake): State<Fake>,
    Path((owner, repo)): Path<(String, String)>,
    Query(q): Query<ListQuery>,
    _auth: Authorized,
) -> Response {
    let full = format!("{owner}/{repo}");
    let mut paths: Vec<(String, DateTime<Utc>)> = Vec::new();
    for r in fake
        .all_runs()
        .into_iter()
        .filter(|r| r.repo.eq_ignore_ascii_case(&full))
    {
        match paths.iter_mut().find(|(p, _)| *p == r.path) {
            Some((_, first)) => *first = (*first).min(r.created_at),
            None => paths.push((r.path, r.created_at)),
        }
    }
    paths.sort();
    let total = paths.len();
    let (start, per_page) = super::repos::page_window(q.per_page, q.page);
    let page: Vec<_> = paths
        .into_iter()
        .skip(start)
        .take(per_page)
        .map(|(path, first)| {
            let id = workflow_id(&full, &path);
            let file = path.rsplit('/').next().unwrap_or_default().to_string();
            json!({
                "id": id, "node_id": format!("W_kwDO{id:08}"), "name": file, "path": path,
                "state": "active",
                "created_at": first.to_rfc3339(), "updated_at": first.to_rfc3339(),
                "url": format!("https://api.github.com/repos/{full}/actions/workflows/{id}"),
                "html_url": format!("https://github.com/{full}/blob/main/{path}"),
                "badge_url": format!("https://github.com/{full}/workflows/{file}/badge.svg"),
            })
        })
        .collect();
    Json(json!({"total_count": total, "workflows": page})).into_response()
}

/// The runs of `full` that `keep` admits, filtered and paged as `q` asks.
fn runs_of(fake: &Fake, full: &str, q: &ListQuery, keep: impl Fn(&Run) -> bool) -> Response {
    let all = fake.all_runs();
    let mut runs = Vec::new();
    for r in all
        .iter()
        .filter(|r| r.repo.eq_ignore_ascii_case(full) && keep(r))
    {
        if let Some(filter) = &q.created {
            match created_matches(filter, r.created_at) {
                Some(true) => {}
                Some(false) => continue,
                None => {
                    return super::error(
                        axum::http::StatusCode::UNPROCESSABLE_ENTITY,
                        "Validation Failed: created",
                    )
                }
            }
        }
        if q.status.as_ref().is_some_and(|s| *s != r.status) {
            continue;
        }
        if q.event.as_ref().is_some_and(|e| *e != r.event) {
            continue;
        }
        runs.push(r);
    }
    runs.sort_by_key(|r| std::cmp::Reverse((r.created_at, r.id)));
    let total = runs.len();
    if q.created.is_some() || q.status.is_some() || q.event.is_some() {
        // GitHub answers at most 1,000 results of a filtered search.
        runs.truncate(SEARCH_CAP);
    }
    let (start, per_page) = super::repos::page_window(q.per_page, q.page);
    let page: Vec<_> = runs
        .into_iter()
        .skip(start)
        .take(per_page)
        .map(|r| {
            let name = r.path.rsplit('/').next().unwrap_or_default();
            json!({
                "id": r.id, "name": name, "path": r.path, "status": r.status,
                "workflow_id": workflow_id(&r.repo, &r.path),
                "conclusion": r.conclusion, "run_attempt": 1, "event": r.event,
                "head_branch": "main",
                "created_at": r.created_at.to_rfc3339(), "updated_at": r.updated_at.to_rfc3339(),
                "repository": {"full_name": r.repo}
            })
        })
        .collect();
    Json(json!({"total_count": total, "workflow_runs": page})).into_response()
}

pub(crate) async fn rate_limit(State(fake): State<Fake>, _auth: Authorized) -> Response {
    let rate = fake.lock().runs.rate.unwrap_or(RateLimit {
        limit: 5000,
        remaining: 5000,
        reset: Utc::now().timestamp() + 3600,
    });
    let core = json!({"limit": rate.limit, "remaining": rate.remaining,
                      "used": rate.limit - rate.remaining, "reset": rate.reset});
    let mut resp = Json(json!({"resources": {"core": core}, "rate": core})).into_response();
    for (k, v) in self::headers(&rate) {
        resp.headers_mut().insert(
            axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
            v.parse().unwrap(),
        );
    }
    resp
}
