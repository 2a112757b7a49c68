//! Repository state for reconciliation (installation-token auth): issues,
//! PRs, their comments, reviews, commits, timeline and events, requested
//! reviewers, workflow runs, compares, code-scanning alerts, releases by
//! tag, and the GraphQL queries the reconciler sends; reactions, team
//! memberships and the signals fetcher's batched GraphQL query.
//!
//! REST answers carry an `ETag` (a digest of the answer); a request whose
//! `If-None-Match` matches it gets 304 with no body and costs no rate limit
//! (`Inner::rate_limited_reads` counts the reads that do).
//!
//! The test sets the JSON each path answers with `FakeGitHub::set_api(repo,
//! path, value)`, with paths as the reconciler's `ApiState` keys
//! (`pulls/42`, `issues/42/comments`, `graphql/review_threads/42`). An unset
//! path answers 404 (GraphQL: a null object with a NOT_FOUND error). Lists
//! are paged like GitHub: `per_page` (default 30) and `page`, with an
//! absolute `Link: <…>; rel="next"` URL on this server's host.

use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};

use super::{base_url, error, link_next, require_token, Authorized, Fake, FakeGitHub};

pub const GET_ISSUE: &str = "GET /repos/{owner}/{repo}/issues/{number}";
pub const GET_ISSUE_COMMENTS: &str = "GET /repos/{owner}/{repo}/issues/{number}/comments";
pub const GET_TIMELINE: &str = "GET /repos/{owner}/{repo}/issues/{number}/timeline";
pub(crate) const GET_ISSUE_EVENTS: &str = "GET /repos/{owner}/{repo}/issues/{number}/events";
pub(crate) const GET_ISSUE_LABELS: &str = "GET /repos/{owner}/{repo}/issues/{number}/labels";
pub(crate) const GET_COMMENT: &str = "GET /repos/{owner}/{repo}/issues/comments/{id}";
pub const GET_PULL: &str = "GET /repos/{owner}/{repo}/pulls/{number}";
pub const GET_REVIEWS: &str = "GET /repos/{owner}/{repo}/pulls/{number}/reviews";
pub const GET_PR_COMMITS: &str = "GET /repos/{owner}/{repo}/pulls/{number}/commits";
pub(crate) const GET_PR_REVIEW_COMMENTS: &str = "GET /repos/{owner}/{repo}/pulls/{number}/comments";
pub(crate) const GET_REQUESTED_REVIEWERS: &str =
    "GET /repos/{owner}/{repo}/pulls/{number}/requested_reviewers";
pub const GET_REVIEW_COMMENT: &str = "GET /repos/{owner}/{repo}/pulls/comments/{id}";
pub(crate) const GET_RUN: &str = "GET /repos/{owner}/{repo}/actions/runs/{run_id}";
pub const GET_COMPARE: &str = "GET /repos/{owner}/{repo}/compare/{basehead}";
pub(crate) const GET_ALERT: &str = "GET /repos/{owner}/{repo}/code-scanning/alerts/{number}";
pub(crate) const GET_RELEASE_BY_TAG: &str = "GET /repos/{owner}/{repo}/releases/tags/{tag}";
pub const GRAPHQL: &str = "POST /graphql";
pub const GET_COMMENT_REACTIONS: &str = "GET /repos/{owner}/{repo}/issues/comments/{id}/reactions";
pub(crate) const GET_ISSUE_REACTIONS: &str = "GET /repos/{owner}/{repo}/issues/{number}/reactions";
pub const GET_TEAM_MEMBERSHIP: &str = "GET /orgs/{org}/teams/{team_slug}/memberships/{username}";

/// The routes of this module (counted and failure-injected like all others).
pub(crate) fn routes() -> Router<Fake> {
    let paths = [
        GET_ISSUE,
        GET_ISSUE_COMMENTS,
        GET_TIMELINE,
        GET_ISSUE_EVENTS,
        GET_ISSUE_LABELS,
        GET_COMMENT,
        GET_PULL,
        GET_REVIEWS,
        GET_PR_COMMITS,
        GET_PR_REVIEW_COMMENTS,
        GET_REQUESTED_REVIEWERS,
        GET_REVIEW_COMMENT,
        GET_RUN,
        GET_COMPARE,
        GET_ALERT,
        GET_RELEASE_BY_TAG,
        GET_COMMENT_REACTIONS,
        GET_ISSUE_REACTIONS,
        GET_TEAM_MEMBERSHIP,
    ];
    let mut router = Router::new();
    for route in paths {
        let path = route.strip_prefix("GET ").unwrap();
        router = router.route(path, get(rest_get));
    }
    router.route("/graphql", post(graphql))
}

impl FakeGitHub {
    /// What `GET /repos/{repo}/{path}` (or a GraphQL key) answers.
    pub fn set_api(&self, repo: &str, path: &str, value: Value) {
        self.fake.lock().api.insert(format!("{repo}/{path}"), value);
    }

    /// What `GET /{path}` answers for a path outside repositories
    /// (`orgs/acme/teams/infra/memberships/frank`).
    pub fn set_org_api(&self, path: &str, value: Value) {
        self.fake.lock().api.insert(path.to_string(), value);
    }

    /// Reads that cost rate limit, and 304 answers, so far.
    pub fn rate_limited_reads(&self) -> (u64, u64) {
        let inner = self.fake.lock();
        (inner.rate_limited_reads, inner.not_modified)
    }

    /// Make `path` answer 404 again.
    pub fn remove_api(&self, repo: &str, path: &str) {
        self.fake.lock().api.remove(&format!("{repo}/{path}"));
    }
}

/// GitHub's paging: `per_page` (default 30, at most 100) and `page` (from 1).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Paging {
    per_page: Option<usize>,
    page: Option<usize>,
}

impl Paging {
    /// The page asked for: the index of its first item, and its size.
    pub(crate) fn window(&self) -> (usize, usize) {
        page_window(self.per_page, self.page)
    }
}

/// Page `page` (from 1; 1 when not given) of `per_page` items (30 when not
/// given, 1 to 100): the index of its first item, and its size.
pub(crate) fn page_window(per_page: Option<usize>, page: Option<usize>) -> (usize, usize) {
    let per_page = per_page.unwrap_or(30).clamp(1, 100);
    let page = page.unwrap_or(1).max(1);
    ((page - 1) * per_page, per_page)
}

async fn rest_get(
    State(fake): State<Fake>,
    uri: Uri,
    headers: HeaderMap,
    Query(paging): Query<Paging>,
) -> Response {
    if let Err(r) = require_token(&fake, &headers) {
        return r;
    }
    let path = uri.path();
    let key = path
        .strip_prefix("/repos/")
        .unwrap_or(path.trim_start_matches('/'));
    if let Some(to) = moved(&fake, key) {
        // GitHub's answer for a transferred issue: 301 with its new place.
        return moved_permanently(&headers, &to, None);
    }
    if gone(&fake, key) {
        // GitHub's answer for a deleted issue (`Fact::DeleteIssue`).
        return error(StatusCode::GONE, "This issue was deleted");
    }
    let set = fake.lock().api.get(key).cloned();
    let value = set.or_else(|| from_history(&fake, key));
    let tag = value.as_ref().map(etag_of);
    let asked = headers.get("if-none-match").and_then(|v| v.to_str().ok());
    if let (Some(tag), Some(asked)) = (&tag, asked) {
        if asked == tag {
            fake.lock().not_modified += 1;
            let mut r = StatusCode::NOT_MODIFIED.into_response();
            r.headers_mut()
                .insert("etag", HeaderValue::from_str(tag).unwrap());
            return r;
        }
    }
    fake.lock().rate_limited_reads += 1;
    let value = value.or_else(|| lenient_answer(&fake, key));
    let Some(value) = value else {
        return error(StatusCode::NOT_FOUND, "Not Found");
    };
    let tag = tag.unwrap_or_default();
    let Value::Array(items) = value else {
        let mut r = Json(value).into_response();
        r.headers_mut()
            .insert("etag", HeaderValue::from_str(&tag).unwrap());
        return r;
    };
    let (start, per_page) = paging.window();
    let slice: Vec<Value> = items.iter().skip(start).take(per_page).cloned().collect();
    let mut response = Json(Value::Array(slice)).into_response();
    response
        .headers_mut()
        .insert("etag", HeaderValue::from_str(&tag).unwrap());
    if start + per_page < items.len() {
        let next = format!(
            "{}{path}?per_page={per_page}&page={}",
            base_url(&headers),
            // This page is `start / per_page + 1` (pages count from 1).
            start / per_page + 2
        );
        link_next(&mut response, &next);
    }
    response
}

/// What the history of the key's repository answers (`answers::rest`);
/// for a repository with no history of its own, what the issues
/// transferred to it from a history answer (`answers::destination`).
fn from_history(fake: &Fake, key: &str) -> Option<Value> {
    if key.starts_with("orgs/") {
        // A team of a history's owner (`teams::membership`).
        let repos = fake.history_repos();
        return repos.iter().find_map(|r| {
            let w = fake.world(r)?;
            super::teams::membership(&w, key)
        });
    }
    let mut segs = key.splitn(3, '/');
    let (owner, name, rest) = (segs.next()?, segs.next()?, segs.next()?);
    let repo = format!("{owner}/{name}");
    if let Some(world) = fake.world(&repo) {
        return super::answers::rest(&world, rest);
    }
    let number = match rest.split('/').collect::<Vec<_>>().as_slice() {
        ["issues", n, ..] => n.parse::<u64>().ok()?,
        _ => return None,
    };
    fake.history_repos().iter().find_map(|r| {
        let w = fake.world_kept(r)?;
        let d = super::answers::destination(&w, &repo, number)?;
        super::answers::rest(&d, rest)
    })
}

/// GitHub's `301 Moved Permanently` to `to` (a path under the API root),
/// the query kept.
fn moved_permanently(headers: &HeaderMap, to: &str, query: Option<&str>) -> Response {
    let base = base_url(headers);
    let location = match query {
        Some(q) => format!("{base}/{to}?{q}"),
        None => format!("{base}/{to}"),
    };
    let mut r = (
        StatusCode::MOVED_PERMANENTLY,
        Json(json!({"message": "Moved Permanently", "url": location,
                    "documentation_url": "https://docs.github.com/rest/guides/best-practices-for-using-the-rest-api#follow-redirects"})),
    )
        .into_response();
    r.headers_mut()
        .insert("location", HeaderValue::from_str(&location).unwrap());
    r
}

/// Every GET of a renamed repository's old name (`/repos/{old}/...`, any
/// route: issues, runs, artifacts, check runs) answers GitHub's `301` to
/// the same path under its name now, the query kept.
pub(super) async fn follow_renames(
    State(fake): State<Fake>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    if req.method() == axum::http::Method::GET {
        let key = req.uri().path().strip_prefix("/repos/").map(str::to_string);
        if let Some(to) = key.and_then(|k| renamed(&fake, &k)) {
            return moved_permanently(req.headers(), &to, req.uri().query());
        }
    }
    next.run(req).await
}

/// Where a path of a renamed repository now is: the same path under the
/// repository's name now (`Fact::RenameRepo`).
fn renamed(fake: &Fake, key: &str) -> Option<String> {
    let mut segs = key.splitn(3, '/');
    let (owner, name, rest) = (segs.next()?, segs.next()?, segs.next()?);
    let asked = format!("{owner}/{name}");
    let (_, now) = fake.named(&asked)?;
    (!now.eq_ignore_ascii_case(&asked)).then(|| format!("repos/{now}/{rest}"))
}

/// True for a path of a deleted issue (`answers::gone`).
fn gone(fake: &Fake, key: &str) -> bool {
    let mut segs = key.splitn(3, '/');
    let (Some(owner), Some(name), Some(rest)) = (segs.next(), segs.next(), segs.next()) else {
        return false;
    };
    fake.world(&format!("{owner}/{name}"))
        .is_some_and(|w| super::answers::gone(&w, rest))
}

/// Where a path of a transferred issue now is (`answers::moved`).
fn moved(fake: &Fake, key: &str) -> Option<String> {
    let mut segs = key.splitn(3, '/');
    let (owner, name, rest) = (segs.next()?, segs.next()?, segs.next()?);
    let world = fake.world(&format!("{owner}/{name}"))?;
    super::answers::moved(&world, rest)
}

/// In lenient mode, what an unknown object answers (`lenient`).
fn lenient_answer(fake: &Fake, key: &str) -> Option<Value> {
    if !fake.lock().lenient {
        return None;
    }
    if key.starts_with("orgs/") {
        return Some(json!({"role": "member", "state": "active"}));
    }
    let segs: Vec<&str> = key.split('/').collect();
    Some(super::lenient::repo_object(
        segs.get(2..).unwrap_or_default(),
    ))
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct GraphqlBody {
    query: String,
    variables: Value,
}

/// A weak digest of an answer, quoted like GitHub's.
fn etag_of(v: &Value) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    v.to_string().hash(&mut h);
    format!("\"{:016x}\"", h.finish())
}

/// The signals fetcher's batch: one line per alias, `sN: repository(owner:
/// "o", name: "r") { issue|pullRequest|discussion(number: N) { ... } }`,
/// each answered from the `graphql/item/<field>/<n>` key of that repository
/// (unset: a null object and a NOT_FOUND error, as GitHub answers), or `sN:
/// node(id: "IC_…") { ... on IssueComment { reactions … } }`, an issue
/// comment's reactions (a deleted comment: null and NOT_FOUND).
fn batch_answer(fake: &Fake, query: &str) -> Response {
    let mut data = serde_json::Map::new();
    let mut errors = Vec::new();
    for line in query.lines().map(str::trim) {
        if let Some((alias, rest)) = line.split_once(": node(id: ") {
            let id = rest.split('"').nth(1).unwrap_or_default();
            let found = fake
                .history_repos()
                .iter()
                .find_map(|r| super::answers::comment_reactions(&*fake.world(r)?, id));
            match found {
                Some(v) => {
                    data.insert(alias.to_string(), v);
                }
                None => {
                    data.insert(alias.to_string(), Value::Null);
                    errors.push(json!({"type": "NOT_FOUND", "path": [alias],
                        "message": format!("Could not resolve to a node with the global id of '{id}'")}));
                }
            }
            continue;
        }
        let Some((alias, rest)) = line.split_once(": repository(owner: ") else {
            continue;
        };
        let quoted: Vec<&str> = rest.split('"').collect();
        let (owner, name) = (quoted.get(1).copied(), quoted.get(3).copied());
        let field = ["issue", "pullRequest", "discussion"]
            .into_iter()
            .find(|f| rest.contains(&format!("{{ {f}(number: ")));
        let number = field.and_then(|f| {
            let after = rest.split(&format!("{f}(number: ")).nth(1)?;
            after.split(')').next()?.trim().parse::<u64>().ok()
        });
        let (Some(owner), Some(name), Some(field), Some(n)) = (owner, name, field, number) else {
            continue;
        };
        let key = format!("{owner}/{name}/graphql/item/{field}/{n}");
        let set = fake.lock().api.get(&key).cloned();
        let answer = set.or_else(|| {
            super::answers::signal_item(&*fake.world(&format!("{owner}/{name}"))?, field, n)
        });
        match answer {
            Some(v) => {
                data.insert(alias.to_string(), json!({ field: v }));
            }
            None => {
                data.insert(alias.to_string(), json!({ field: null }));
                errors.push(json!({"type": "NOT_FOUND", "path": [alias, field],
                    "message": format!("Could not resolve to an object with number {n}.")}));
            }
        }
    }
    if errors.is_empty() {
        Json(json!({ "data": data })).into_response()
    } else {
        Json(json!({ "data": data, "errors": errors })).into_response()
    }
}

/// Answers the reconciler's three queries from the `graphql/...` keys.
async fn graphql(
    State(fake): State<Fake>,
    _auth: Authorized,
    Json(body): Json<GraphqlBody>,
) -> Response {
    let var = |k: &str| body.variables.get(k).cloned().unwrap_or(Value::Null);
    let repo = format!(
        "{}/{}",
        var("owner").as_str().unwrap_or_default(),
        var("repo").as_str().unwrap_or_default()
    );
    let world = fake.world(&repo);
    let get = |key: String| {
        let set = fake.lock().api.get(&key).cloned();
        set.or_else(|| {
            let w = world.as_ref()?;
            let rest = key.strip_prefix(&format!("{repo}/graphql/"))?;
            let (kind, n) = rest.split_once('/')?;
            let n = n.parse().ok()?;
            match kind {
                "review_threads" => super::answers::review_threads(w, n).map(Value::from),
                "discussion" => super::answers::discussion(w, n),
                "base_changes" => super::answers::base_changes(w, n),
                _ => None,
            }
        })
    };
    let not_found = |data: Value| {
        Json(json!({"data": data,
                    "errors": [{"type": "NOT_FOUND", "message": "Could not resolve to a node."}]}))
        .into_response()
    };
    if fake.lock().lenient {
        return Json(super::lenient::graphql(&body.query)).into_response();
    }
    if body.query.contains(": repository(owner: ") {
        return batch_answer(&fake, &body.query);
    }
    if body.query.contains("BASE_REF_CHANGED_EVENT") {
        let number = var("number").as_u64().unwrap_or_default();
        return match get(format!("{repo}/graphql/base_changes/{number}")) {
            Some(items) => Json(json!({"data": {"repository": {"pullRequest": {
                "timelineItems": items
            }}}}))
            .into_response(),
            None => not_found(json!({"repository": {"pullRequest": null}})),
        };
    }
    if body.query.contains("reviewThreads") {
        let number = var("number").as_u64().unwrap_or_default();
        let Some(threads) = get(format!("{repo}/graphql/review_threads/{number}")) else {
            return not_found(json!({"repository": {"pullRequest": null}}));
        };
        let all = threads
            .get("nodes")
            .cloned()
            .unwrap_or(threads)
            .as_array()
            .cloned()
            .unwrap_or_default();
        let first = var("first").as_u64().unwrap_or(100) as usize;
        let start = var("after")
            .as_str()
            .and_then(|c| c.parse::<usize>().ok())
            .unwrap_or(0);
        let nodes: Vec<Value> = all.iter().skip(start).take(first).cloned().collect();
        let end = start + nodes.len();
        return Json(
            json!({"data": {"repository": {"pullRequest": {"reviewThreads": {
                "pageInfo": {"hasNextPage": end < all.len(), "endCursor": end.to_string()},
                "nodes": nodes
            }}}}}),
        )
        .into_response();
    }
    if body.query.contains("node(id") {
        let id = var("id").as_str().unwrap_or_default().to_string();
        let set = fake
            .lock()
            .api
            .iter()
            .find(|(k, _)| k.ends_with(&format!("/graphql/minimized/{id}")))
            .map(|(_, node)| node.clone());
        let node = set.or_else(|| {
            fake.history_repos()
                .iter()
                .find_map(|r| super::answers::minimized(&*fake.world(r)?, &id))
        });
        return match node {
            Some(node) => Json(json!({"data": {"node": node}})).into_response(),
            None => not_found(json!({"node": null})),
        };
    }
    if body.query.contains("projectV2(") {
        let (owner, number) = (var("owner"), var("number").as_u64().unwrap_or_default());
        let owner = owner.as_str().unwrap_or_default();
        let found = fake
            .history_repos()
            .iter()
            .find_map(|r| super::answers::project_v2(&*fake.world(r)?, owner, number));
        return match found {
            Some(p) => Json(json!({"data": {"repositoryOwner": {"projectV2": p}}})).into_response(),
            None => not_found(json!({"repositoryOwner": {"projectV2": null}})),
        };
    }
    if body.query.contains("discussion(") {
        let number = var("number").as_u64().unwrap_or_default();
        return match get(format!("{repo}/graphql/discussion/{number}")) {
            Some(d) => Json(json!({"data": {"repository": {"discussion": d}}})).into_response(),
            None => not_found(json!({"repository": {"discussion": null}})),
        };
    }
    error(StatusCode::BAD_REQUEST, "the fake does not know this query")
}
