//! Fetching an output's target state from the GitHub API into an
//! [`ApiState`], for reconciliation (`reconcile` maps it to observations).
//!
//! Every request goes through [`GitHubClient::call`] (counted, retried by our
//! rules) with routes relative to the API base: octocrab attaches the token
//! only to relative routes or `api.github.com`, so pagination links (absolute
//! URLs) are turned back into relative routes before they are followed.
//!
//! - REST paths of `ingest::reconcile::required_endpoints`, then of
//!   `ingest::reconcile::follow_up_endpoints`, each GET as
//!   `/repos/{owner}/{repo}/{path}`, raw JSON.
//! - List endpoints are read 100 per page, following `Link: rel="next"` up
//!   to [`MAX_PAGES`] pages (1,000 items); anything beyond is left out and
//!   logged (a thread with more activity than that is judged on its first
//!   1,000 items of each list).
//! - `graphql/...` keys are GraphQL queries (module doc of `reconcile`):
//!   review threads are paged the same way (100 threads per page, the first
//!   100 comments of each thread), minimized state, discussions and
//!   projects are one query each. GraphQL's `__typename` of an actor becomes its `type`, so
//!   bots are told from people as in REST.
//! - A `301`/`302`/`307`/`308` answer is followed to its `Location` (octocrab
//!   is built without its redirect layer, so GitHub's redirect reaches here
//!   as an error carrying its headers): the answer there is kept under the
//!   path asked and the move in `ApiState::moved` (a transferred issue, a
//!   renamed repository). At most [`MAX_REDIRECTS`] hops.
//! - A failed request is recorded in `errors` by HTTP status (`NotFound`
//!   404, `Gone` 410, ...; transient failures after the retry budget: 429
//!   for a rate limit, 0 for a connection failure or timeout, else 503). An
//!   error on the primary endpoint, or a transient one anywhere, ends the
//!   fetch: the attempt cannot be judged from what is left.

use chrono::{DateTime, Utc};
use octocrab::Page;
use serde_json::{json, Map, Value};

use super::client::{Endpoint, GitHubClient};
use super::error::GitHubError;
use crate::ingest::reconcile::{
    follow_up_endpoints, is_transient_status, required_endpoints, ApiState, Endpoint as ApiPath,
};
use crate::model::ExecutionRecord;

/// Most redirects followed for one path.
pub(crate) const MAX_REDIRECTS: usize = 3;

/// Most pages read of one list endpoint (100 items each).
pub(crate) const MAX_PAGES: usize = 10;
const PER_PAGE: u32 = 100;

/// What a fetch got, with what the caller needs to schedule another try.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Fetched {
    pub state: ApiState,
    /// What went wrong, per failed path (for logs and the failure detail).
    pub messages: Vec<(String, String)>,
    /// When GitHub said trying again makes sense (rate limits).
    pub retry_at: Option<DateTime<Utc>>,
}

/// The state of `record`'s target, as installation `installation` sees
/// it, with failure messages and the rate-limit reset.
pub(crate) async fn fetch(
    client: &GitHubClient,
    installation: u64,
    record: &ExecutionRecord,
) -> Fetched {
    let repo = record
        .target
        .as_ref()
        .map_or(record.repo.as_str(), |t| t.repo.as_str());
    let (owner, name) = repo.split_once('/').unwrap_or((repo, ""));
    let mut out = Fetched::default();
    let required = required_endpoints(record);
    if !fetch_all(client, installation, owner, name, &required, &mut out).await {
        return out;
    }
    let follow_ups = follow_up_endpoints(record, &out.state);
    fetch_all(client, installation, owner, name, &follow_ups, &mut out).await;
    out
}

/// GET each endpoint into `out`; false when the fetch must stop.
async fn fetch_all(
    client: &GitHubClient,
    installation: u64,
    owner: &str,
    repo: &str,
    endpoints: &[ApiPath],
    out: &mut Fetched,
) -> bool {
    for e in endpoints {
        if out.state.responses.contains_key(&e.path) {
            continue;
        }
        let got = if e.path.starts_with("graphql/") {
            graphql(client, installation, owner, repo, &e.path)
                .await
                .map(|v| (v, None))
        } else {
            rest(client, installation, owner, repo, &e.path).await
        };
        match got {
            Ok((value, moved)) => {
                if let Some(to) = moved {
                    out.state.moved.insert(e.path.clone(), to);
                }
                out.state.responses.insert(e.path.clone(), value);
            }
            Err(failure) => {
                let transient = is_transient_status(failure.status);
                tracing::debug!(path = %e.path, status = failure.status, message = %failure.message, "reconcile fetch failed");
                out.state.errors.insert(e.path.clone(), failure.status);
                out.messages.push((e.path.clone(), failure.message));
                out.retry_at = out.retry_at.max(failure.retry_at);
                if e.primary || transient {
                    return false;
                }
            }
        }
    }
    true
}

/// One failed path.
#[derive(Debug)]
pub(super) struct Failure {
    pub(super) status: u16,
    pub(super) message: String,
    pub(super) retry_at: Option<DateTime<Utc>>,
}

impl From<GitHubError> for Failure {
    fn from(e: GitHubError) -> Failure {
        let mut retry_at = None;
        let status = match &e {
            GitHubError::NotFound { .. } => 404,
            GitHubError::Gone { .. } => 410,
            GitHubError::Unauthorized { .. } => 401,
            GitHubError::Forbidden { .. } => 403,
            GitHubError::Unprocessable { .. } => 422,
            GitHubError::Rejected { status, .. } => *status,
            GitHubError::Transient { last, .. } => transient_status(last),
            GitHubError::BudgetExhausted {
                last, retry_at: at, ..
            } => {
                retry_at = *at;
                transient_status(last)
            }
            // An unreadable answer may be a proxy's page: try again later.
            GitHubError::Decode { .. } => 502,
            GitHubError::Client { .. } => 0,
        };
        Failure {
            status,
            message: e.to_string(),
            retry_at,
        }
    }
}

/// The status a transient failure is recorded as, from the retry helper's reason.
fn transient_status(reason: &str) -> u16 {
    if reason.contains("rate limit") {
        429
    } else if reason.starts_with("transport") {
        0
    } else {
        reason
            .strip_prefix("server error ")
            .and_then(|r| r.get(..3))
            .and_then(|s| s.parse().ok())
            .unwrap_or(503)
    }
}

/// The counted label of a REST path.
fn label(path: &str) -> &'static str {
    let segs: Vec<&str> = path.split('/').collect();
    match segs.as_slice() {
        ["issues", "comments", _] => "issues.get_comment",
        ["issues", _] => "issues.get",
        ["issues", _, "comments"] => "issues.list_comments",
        ["issues", _, "timeline"] => "issues.list_timeline",
        ["issues", _, "events"] => "issues.list_events",
        ["issues", _, "labels"] => "issues.list_labels",
        ["issues", _, "sub_issues"] => "issues.list_sub_issues",
        ["issues", _, "parent"] => "issues.get_parent",
        ["milestones", _] => "issues.get_milestone",
        ["pulls", "comments", _] => "pulls.get_review_comment",
        ["pulls", _] => "pulls.get",
        ["pulls", _, "reviews"] => "pulls.list_reviews",
        ["pulls", _, "commits"] => "pulls.list_commits",
        ["pulls", _, "comments"] => "pulls.list_review_comments",
        ["pulls", _, "requested_reviewers"] => "pulls.requested_reviewers",
        ["actions", "runs", _] => "actions.get_run",
        ["actions", listed] if listed.starts_with("runs?") => "actions.list_runs",
        ["compare", _] => "repos.compare",
        ["check-runs", _] => "checks.get",
        ["commits", _, listed] if listed.starts_with("check-runs?") => "checks.list_for_ref",
        ["code-scanning", "alerts", _] => "code_scanning.get_alert",
        ["releases", "tags", ..] => "releases.get_by_tag",
        _ => "reconcile.get",
    }
}

/// A listing GitHub pages as an array. `checks.list_for_ref` answers an
/// object (`check_runs`), read as one page of 100 (`same_name_runs`).
fn is_list(label: &str) -> bool {
    label.contains(".list_") && label != "checks.list_for_ref"
}

/// An answer, or GitHub's redirect to where the object is now.
enum Got<T> {
    Body(T),
    Moved(String),
}

/// The relative route a redirect's `Location` names (`/repositories/1/issues/3`,
/// `/repos/o/r2/issues/3`), when the answer is one.
fn location_of(e: &octocrab::Error) -> Option<String> {
    let octocrab::Error::GitHub { source, .. } = e else {
        return None;
    };
    if !matches!(source.status_code.as_u16(), 301 | 302 | 307 | 308) {
        return None;
    }
    let location = source
        .headers
        .as_ref()?
        .get(axum::http::header::LOCATION)?
        .to_str()
        .ok()?;
    let uri: axum::http::Uri = location.parse().ok()?;
    // Relative, so octocrab sends the token (see the module doc).
    uri.path_and_query()
        .map(|p| p.as_str().to_string())
        .filter(|p| p.starts_with('/'))
}

/// GET `route` as `T`, or the redirect GitHub answered instead.
async fn get_or_moved<T: octocrab::FromResponse>(
    client: &GitHubClient,
    installation: u64,
    label: &'static str,
    route: &str,
) -> Result<Got<T>, Failure> {
    client
        .call(installation, Endpoint::idempotent(label), |crab| {
            let route = route.to_string();
            async move {
                match crab.get::<T, _, _>(route, None::<&()>).await {
                    Ok(v) => Ok(Got::Body(v)),
                    Err(e) => match location_of(&e) {
                        Some(to) => Ok(Got::Moved(to)),
                        None => Err(e),
                    },
                }
            }
        })
        .await
        .map_err(Failure::from)
}

/// The route a moved path is read at from now on, as a path relative to
/// the API (without its leading `/`).
fn moved_path(route: &str) -> String {
    route
        .split('?')
        .next()
        .unwrap_or_default()
        .trim_start_matches('/')
        .to_string()
}

/// GET one REST path (all pages of a list, up to the bound), following
/// redirects; the answer and where a redirect sent it.
async fn rest(
    client: &GitHubClient,
    installation: u64,
    owner: &str,
    repo: &str,
    path: &str,
) -> Result<(Value, Option<String>), Failure> {
    let label = label(path);
    let mut first = format!("/repos/{owner}/{repo}/{path}");
    let mut moved = None;
    if !is_list(label) {
        for _ in 0..=MAX_REDIRECTS {
            match get_or_moved::<Value>(client, installation, label, &first).await? {
                Got::Body(v) => return Ok((v, moved)),
                Got::Moved(to) => {
                    moved = Some(moved_path(&to));
                    first = to;
                }
            }
        }
        return Err(too_many_redirects(path));
    }
    let mut items = Vec::new();
    // A listing filtered by its path (`actions/runs?event=...`) keeps its
    // query: the page size joins it.
    let join = if first.contains('?') { '&' } else { '?' };
    let mut route = Some(format!("{first}{join}per_page={PER_PAGE}"));
    let mut pages = 0;
    let mut hops = 0;
    while let Some(r) = route.take() {
        if pages == MAX_PAGES {
            tracing::warn!(
                path,
                pages,
                "list longer than the page bound; the rest is left out"
            );
            break;
        }
        let page: Page<Value> = match get_or_moved(client, installation, label, &r).await? {
            Got::Body(page) => page,
            Got::Moved(to) if hops < MAX_REDIRECTS => {
                hops += 1;
                moved = Some(moved_path(&to));
                route = Some(to);
                continue;
            }
            Got::Moved(_) => return Err(too_many_redirects(path)),
        };
        pages += 1;
        items.extend(page.items);
        // Relative, so octocrab sends the token (see the module doc).
        route = page
            .next
            .as_ref()
            .and_then(|u| u.path_and_query())
            .map(|p| p.as_str().to_string());
    }
    Ok((Value::Array(items), moved))
}

/// GET one route as JSON, following GitHub's redirects (a renamed
/// repository's old name, a transferred issue) as `rest` does, up to
/// [`MAX_REDIRECTS`] hops (the signal reads).
pub(super) async fn get_following(
    client: &GitHubClient,
    installation: u64,
    label: &'static str,
    route: &str,
) -> Result<Value, Failure> {
    let mut route = route.to_string();
    for _ in 0..=MAX_REDIRECTS {
        match get_or_moved::<Value>(client, installation, label, &route).await? {
            Got::Body(v) => return Ok(v),
            Got::Moved(to) => route = to,
        }
    }
    Err(too_many_redirects(&route))
}

/// Where a redirect answer sends a route: its `Location` as a route
/// relative to the API (`None` for any other answer, or a `Location` that
/// is not one).
pub(super) fn redirect_of(status: u16, location: Option<&str>) -> Option<String> {
    if !matches!(status, 301 | 302 | 307 | 308) {
        return None;
    }
    let uri: axum::http::Uri = location?.parse().ok()?;
    uri.path_and_query()
        .map(|p| p.as_str().to_string())
        .filter(|p| p.starts_with('/'))
}

pub(super) fn too_many_redirects(path: &str) -> Failure {
    Failure {
        status: 310,
        message: format!("{path}: more than {MAX_REDIRECTS} redirects"),
        retry_at: None,
    }
}

const REVIEW_THREADS: &str = "query($owner: String!, $repo: String!, $number: Int!, $first: Int!, $after: String) {
  repository(owner: $owner, name: $repo) {
    pullRequest(number: $number) {
      reviewThreads(first: $first, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes {
          id isResolved path
          resolvedBy { login __typename }
          comments(first: 100) {
            nodes { fullDatabaseId createdAt author { login __typename } replyTo { fullDatabaseId } pullRequestReview { fullDatabaseId } }
          }
        }
      }
    }
  }
}";

const MINIMIZED: &str = "query($id: ID!) {
  node(id: $id) {
    ... on IssueComment { isMinimized minimizedReason updatedAt createdAt }
    ... on PullRequestReviewComment { isMinimized minimizedReason updatedAt createdAt }
    ... on DiscussionComment { isMinimized minimizedReason updatedAt createdAt }
    ... on CommitComment { isMinimized minimizedReason updatedAt createdAt }
  }
}";

const DISCUSSION: &str = "query($owner: String!, $repo: String!, $number: Int!) {
  repository(owner: $owner, name: $repo) {
    discussion(number: $number) {
      id title body closed closedAt stateReason createdAt updatedAt
      author { login __typename }
      answer { databaseId }
      answerChosenAt
      answerChosenBy { login __typename }
      labels(first: 100) { nodes { name } }
      comments(first: 100) { nodes { databaseId createdAt body author { login __typename } } }
    }
  }
}";

/// A PR's base changes: REST's `base_ref_changed` names who and when, not
/// the branches; GraphQL's `BaseRefChangedEvent` names both.
const BASE_CHANGES: &str = "query($owner: String!, $repo: String!, $number: Int!) {
  repository(owner: $owner, name: $repo) {
    pullRequest(number: $number) {
      timelineItems(itemTypes: [BASE_REF_CHANGED_EVENT], first: 100) {
        nodes {
          ... on BaseRefChangedEvent {
            createdAt previousRefName currentRefName
            actor { login __typename }
          }
        }
      }
    }
  }
}";

/// A project of an organization or a user (`create_project`): whether and
/// since when it is closed, and who created it. GitHub's `ProjectV2` names
/// no closer (REST's `projects-v2` neither: `closed_at`, `state`).
const PROJECT: &str = "query($owner: String!, $number: Int!) {
  repositoryOwner(login: $owner) {
    ... on ProjectV2Owner {
      projectV2(number: $number) {
        id number title closed closedAt createdAt updatedAt
        creator { login __typename }
      }
    }
  }
}";

const GRAPHQL: Endpoint = Endpoint::idempotent("graphql.query");

/// The GraphQL documents this file sends, by name (checked against GitHub's
/// schema by `tests/it/github_contract.rs`).
pub fn graphql_documents() -> Vec<(String, String)> {
    [
        ("fetch::REVIEW_THREADS", REVIEW_THREADS),
        ("fetch::MINIMIZED", MINIMIZED),
        ("fetch::DISCUSSION", DISCUSSION),
        ("fetch::BASE_CHANGES", BASE_CHANGES),
        ("fetch::PROJECT", PROJECT),
    ]
    .into_iter()
    .map(|(n, q)| (n.to_string(), q.to_string()))
    .collect()
}

/// Answer one `graphql/...` key with the query documented in `reconcile`.
async fn graphql(
    client: &GitHubClient,
    installation: u64,
    owner: &str,
    repo: &str,
    key: &str,
) -> Result<Value, Failure> {
    let segs: Vec<&str> = key.splitn(3, '/').collect();
    let (kind, arg) = match segs.as_slice() {
        [_, kind, arg] => (*kind, *arg),
        _ => return Err(bad_key(key)),
    };
    let number = || arg.parse::<u64>().map_err(|_| bad_key(key));
    match kind {
        "review_threads" => {
            let number = number()?;
            let mut nodes = Vec::new();
            let mut after: Option<String> = None;
            for _ in 0..MAX_PAGES {
                let vars = json!({"owner": owner, "repo": repo, "number": number,
                                  "first": PER_PAGE, "after": after});
                let data = query(client, installation, REVIEW_THREADS, vars).await?;
                let threads = present(&data, "/repository/pullRequest/reviewThreads", key)?;
                nodes.extend(threads["nodes"].as_array().cloned().unwrap_or_default());
                after = threads
                    .pointer("/pageInfo/endCursor")
                    .and_then(Value::as_str)
                    .filter(|_| threads.pointer("/pageInfo/hasNextPage") == Some(&json!(true)))
                    .map(str::to_string);
                if after.is_none() {
                    break;
                }
            }
            Ok(json!({ "nodes": nodes }))
        }
        "minimized" => {
            let data = query(client, installation, MINIMIZED, json!({"id": arg})).await?;
            present(&data, "/node", key).cloned()
        }
        "base_changes" => {
            let vars = json!({"owner": owner, "repo": repo, "number": number()?});
            let data = query(client, installation, BASE_CHANGES, vars).await?;
            present(&data, "/repository/pullRequest/timelineItems", key).cloned()
        }
        "discussion" => {
            let vars = json!({"owner": owner, "repo": repo, "number": number()?});
            let data = query(client, installation, DISCUSSION, vars).await?;
            present(&data, "/repository/discussion", key).cloned()
        }
        // The owner is the target's (a project's target names no repository).
        "project" => {
            let vars = json!({"owner": owner, "number": number()?});
            let data = query(client, installation, PROJECT, vars).await?;
            present(&data, "/repositoryOwner/projectV2", key).cloned()
        }
        _ => Err(bad_key(key)),
    }
}

/// The object at `pointer` in a query's `data`; absent or null, the query
/// for `key` found nothing ([`missing`]).
fn present<'a>(data: &'a Value, pointer: &str, key: &str) -> Result<&'a Value, Failure> {
    data.pointer(pointer)
        .filter(|v| !v.is_null())
        .ok_or_else(|| missing(key, data))
}

fn bad_key(key: &str) -> Failure {
    Failure {
        status: 400,
        message: format!("{key}: not a GraphQL key this App knows"),
        retry_at: None,
    }
}

/// A GraphQL query's `data` (actors normalized), or its errors as a status.
/// GitHub answers 200 with `errors` for a missing object or a rate limit.
pub(super) async fn query(
    client: &GitHubClient,
    installation: u64,
    query: &str,
    variables: Value,
) -> Result<Value, Failure> {
    let body = json!({"query": query, "variables": variables});
    let mut answer: Value = client
        .call(installation, GRAPHQL, |crab| {
            let body = body.clone();
            async move { crab.post::<_, Value>("/graphql", Some(&body)).await }
        })
        .await?;
    let data = answer
        .get_mut("data")
        .map(Value::take)
        .unwrap_or(Value::Null);
    if data.is_null() {
        return Err(graphql_errors(&answer));
    }
    let mut data = data;
    normalize_actors(&mut data);
    // Partial data with errors: what is there is used; a missing object is
    // detected by the caller and named by these errors.
    if let Some(errors) = answer.get("errors").filter(|e| !e.is_null()) {
        if let Some(o) = data.as_object_mut() {
            o.insert("__errors".into(), errors.clone());
        }
    }
    Ok(data)
}

/// The status GraphQL errors stand for (`type`: NOT_FOUND, FORBIDDEN, RATE_LIMITED).
fn graphql_errors(answer: &Value) -> Failure {
    let errors = answer
        .get("errors")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let has = |t: &str| errors.iter().any(|e| e["type"].as_str() == Some(t));
    let status = if has("NOT_FOUND") {
        404
    } else if has("RATE_LIMITED") {
        429
    } else if has("FORBIDDEN") {
        403
    } else if errors.is_empty() {
        502
    } else {
        422
    };
    let message = errors
        .iter()
        .filter_map(|e| e["message"].as_str())
        .collect::<Vec<_>>()
        .join("; ");
    Failure {
        status,
        message: format!("graphql: {message}"),
        retry_at: None,
    }
}

/// The object a key asked for is null: why, from the errors kept in `data`.
fn missing(key: &str, data: &Value) -> Failure {
    let mut f =
        graphql_errors(&json!({"errors": data.get("__errors").cloned().unwrap_or(json!([]))}));
    if f.status == 502 {
        // No error named: the object is simply not there.
        f.status = 404;
    }
    f.message = format!("{key}: {}", f.message);
    f
}

/// GraphQL names an actor's kind `__typename`; REST (and the mapping) `type`.
fn normalize_actors(v: &mut Value) {
    match v {
        Value::Object(o) => {
            if let (Some(kind), false) = (typename(o), o.contains_key("type")) {
                o.insert("type".into(), Value::String(kind));
            }
            for child in o.values_mut() {
                normalize_actors(child);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(normalize_actors),
        _ => {}
    }
}

fn typename(o: &Map<String, Value>) -> Option<String> {
    o.contains_key("login")
        .then(|| o.get("__typename")?.as_str().map(str::to_string))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_get_stable_labels_and_lists_are_paged() {
        assert_eq!(label("pulls/7"), "pulls.get");
        assert_eq!(label("pulls/comments/5"), "pulls.get_review_comment");
        assert_eq!(label("issues/7/timeline"), "issues.list_timeline");
        assert_eq!(label("releases/tags/v1.0"), "releases.get_by_tag");
        assert!(is_list(label("pulls/7/reviews")));
        assert!(!is_list(label("pulls/7/requested_reviewers")));
        assert!(!is_list(label("issues/comments/5")));
    }

    #[test]
    fn errors_become_the_statuses_assess_from_api_expects() {
        let status = |e: GitHubError| Failure::from(e).status;
        let nf = GitHubError::NotFound {
            endpoint: "x",
            message: String::new(),
        };
        assert_eq!(status(nf), 404);
        let exhausted = |last: &str| GitHubError::BudgetExhausted {
            endpoint: "x",
            attempts: 3,
            last: last.into(),
            retry_at: None,
            class: crate::github::error::FailureClass::ServerError,
        };
        assert_eq!(status(exhausted("server error 502: bad gateway")), 502);
        assert_eq!(status(exhausted("transport: connection reset")), 0);
        assert_eq!(
            status(exhausted("secondary rate limit (429): slow down")),
            429
        );
    }

    #[test]
    fn graphql_errors_name_missing_objects_and_rate_limits() {
        let f = graphql_errors(
            &json!({"errors": [{"type": "NOT_FOUND", "message": "Could not resolve"}]}),
        );
        assert_eq!(f.status, 404);
        let f = graphql_errors(&json!({"errors": [{"type": "RATE_LIMITED", "message": "slow"}]}));
        assert_eq!(f.status, 429);
        assert_eq!(
            missing(
                "graphql/discussion/3",
                &json!({"repository": {"discussion": null}})
            )
            .status,
            404
        );
    }

    #[test]
    fn graphql_actors_get_a_type() {
        let mut v = json!({"nodes": [{"author": {"login": "dependabot", "__typename": "Bot"}, "x": {"__typename": "Foo"}}]});
        normalize_actors(&mut v);
        assert_eq!(v["nodes"][0]["author"]["type"], "Bot");
        assert!(v["nodes"][0]["x"].get("type").is_none());
    }
}
