//! A tiny fake GitHub API for `bench api`: real HTTP on 127.0.0.1, just
//! enough answers for the App's own client to run (installation tokens,
//! check runs, the repository reads and GraphQL queries reconciliation
//! sends), and a count of every request by kind. The stateful fake with
//! auth checks and failure injection lives in `tests/fake_github`; the
//! binary cannot use it, and counting needs none of that (tokens and JWTs
//! are not verified).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use serde_json::{json, Value};

/// What a request was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CallKind {
    /// `POST /app/installations/{id}/access_tokens`.
    Token,
    /// Check-run create, update or list: the App showing its results.
    CheckRun,
    /// Repository reads and GraphQL queries: evaluating an output.
    Evaluation,
    /// Anything else (answered 404).
    Other,
}

/// Requests seen, by kind and by route (`"GET /repos/{repo}/issues/{n}"`-like).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    pub by_kind: BTreeMap<CallKind, u64>,
    pub by_route: BTreeMap<String, u64>,
}

impl Counts {
    pub fn of(&self, kind: CallKind) -> u64 {
        self.by_kind.get(&kind).copied().unwrap_or(0)
    }

    /// What was counted since `earlier`.
    pub fn since(&self, earlier: &Counts) -> Counts {
        let sub = |now: u64, then: Option<&u64>| now - then.copied().unwrap_or(0);
        Counts {
            by_kind: self
                .by_kind
                .iter()
                .map(|(k, n)| (*k, sub(*n, earlier.by_kind.get(k))))
                .filter(|(_, n)| *n > 0)
                .collect(),
            by_route: self
                .by_route
                .iter()
                .map(|(k, n)| (k.clone(), sub(*n, earlier.by_route.get(k))))
                .filter(|(_, n)| *n > 0)
                .collect(),
        }
    }
}

#[derive(Default)]
struct Inner {
    counts: Counts,
    next_id: u64,
}

type Shared = Arc<Mutex<Inner>>;

/// A running fake; stopped when dropped.
pub struct FakeGitHub {
    pub url: String,
    shared: Shared,
    task: tokio::task::JoinHandle<()>,
}

impl FakeGitHub {
    pub async fn start() -> anyhow::Result<FakeGitHub> {
        let shared: Shared = Arc::default();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        let router = Router::new().fallback(answer).with_state(shared.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Ok(FakeGitHub { url, shared, task })
    }

    pub fn counts(&self) -> Counts {
        self.shared.lock().expect("fake GitHub lock").counts.clone()
    }
}

impl Drop for FakeGitHub {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Every request: classify, count, answer.
async fn answer(State(shared): State<Shared>, req: Request) -> Response {
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (kind, route) = classify(&method, &segs);
    let id = {
        let mut inner = shared.lock().expect("fake GitHub lock");
        *inner.counts.by_kind.entry(kind).or_default() += 1;
        *inner
            .counts
            .by_route
            .entry(format!("{method} {route}"))
            .or_default() += 1;
        inner.next_id += 1;
        1000 + inner.next_id
    };
    match (kind, &method) {
        (CallKind::Token, _) => (
            StatusCode::CREATED,
            Json(json!({
                "token": format!("ghs_bench_{id}"),
                "expires_at": (chrono::Utc::now() + chrono::Duration::hours(1))
                    .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                "permissions": {"checks": "write"},
                "repository_selection": "all"
            })),
        )
            .into_response(),
        (CallKind::CheckRun, &Method::GET) => {
            Json(json!({"total_count": 0, "check_runs": []})).into_response()
        }
        (CallKind::CheckRun, _) => {
            let repo = format!("{}/{}", segs[1], segs[2]);
            let run_id = segs.get(4).and_then(|s| s.parse().ok()).unwrap_or(id);
            let status = if method == Method::POST {
                StatusCode::CREATED
            } else {
                StatusCode::OK
            };
            (status, Json(check_run(&repo, run_id))).into_response()
        }
        (CallKind::Evaluation, _) if segs[0] == "graphql" => {
            let body = axum::body::to_bytes(req.into_body(), 1 << 20)
                .await
                .unwrap_or_default();
            let query: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let query = query["query"].as_str().unwrap_or_default();
            Json(graphql(query)).into_response()
        }
        (CallKind::Evaluation, _) if segs[0] == "orgs" => {
            Json(json!({"role": "member", "state": "active"})).into_response()
        }
        (CallKind::Evaluation, _) => Json(repo_object(&segs[3..])).into_response(),
        (CallKind::Other, _) => (
            StatusCode::NOT_FOUND,
            Json(json!({"message": "Not Found (bench fake GitHub)"})),
        )
            .into_response(),
    }
}

/// The kind of a request and its route with ids blanked (for the notes).
fn classify(method: &Method, segs: &[&str]) -> (CallKind, String) {
    let m = method.as_str();
    match segs {
        ["app", "installations", _, "access_tokens"] if m == "POST" => (
            CallKind::Token,
            "/app/installations/{id}/access_tokens".into(),
        ),
        ["repos", _, _, "check-runs"] if m == "POST" => {
            (CallKind::CheckRun, "/repos/{repo}/check-runs".into())
        }
        ["repos", _, _, "check-runs", _] if m == "PATCH" => {
            (CallKind::CheckRun, "/repos/{repo}/check-runs/{id}".into())
        }
        ["repos", _, _, "commits", _, "check-runs"] if m == "GET" => (
            CallKind::CheckRun,
            "/repos/{repo}/commits/{sha}/check-runs".into(),
        ),
        ["graphql"] if m == "POST" => (CallKind::Evaluation, "/graphql".into()),
        ["orgs", _, "teams", _, "memberships", _] if m == "GET" => (
            CallKind::Evaluation,
            "/orgs/{org}/teams/{team}/memberships/{login}".into(),
        ),
        ["repos", _, _, rest @ ..] if m == "GET" && !rest.is_empty() => {
            // Numbers and SHAs become `{n}`, so routes group.
            let blanked: Vec<&str> = rest
                .iter()
                .map(|s| {
                    let id = s.parse::<u64>().is_ok() || s.len() >= 20;
                    if id {
                        "{n}"
                    } else {
                        *s
                    }
                })
                .collect();
            (
                CallKind::Evaluation,
                format!("/repos/{{repo}}/{}", blanked.join("/")),
            )
        }
        _ => (CallKind::Other, format!("/{}", segs.join("/"))),
    }
}

fn check_run(repo: &str, id: u64) -> Value {
    json!({
        "id": id, "node_id": format!("CR_{id}"), "head_sha": "0".repeat(40),
        "external_id": null, "name": "safe-outcomes",
        "url": format!("https://api.github.com/repos/{repo}/check-runs/{id}"),
        "html_url": format!("https://github.com/{repo}/runs/{id}"),
        "details_url": null, "status": "completed", "conclusion": "neutral",
        "started_at": null, "completed_at": null,
        "output": {"title": null, "summary": null, "text": null, "annotations_count": 0,
                   "annotations_url": format!("https://api.github.com/repos/{repo}/check-runs/{id}/annotations")},
        "pull_requests": [], "app": {"id": 1}
    })
}

/// A minimal answer for `repos/{owner}/{repo}/{rest}`: lists are empty,
/// objects exist, open and untouched (so every endpoint the fetcher asks
/// for is read, as for a live output).
fn repo_object(rest: &[&str]) -> Value {
    const LISTS: [&str; 7] = [
        "comments",
        "timeline",
        "reviews",
        "commits",
        "labels",
        "events",
        "reactions",
    ];
    let last = rest.last().copied().unwrap_or_default();
    if LISTS.contains(&last) {
        return json!([]);
    }
    if last == "requested_reviewers" {
        return json!({"users": [], "teams": []});
    }
    let number = rest.get(1).and_then(|s| s.parse::<u64>().ok());
    json!({
        "id": number.unwrap_or(1), "number": number, "state": "open", "merged": false,
        "status": "completed", "conclusion": "success",
        "created_at": "2026-10-01T09:00:00Z", "updated_at": "2026-10-01T09:00:00Z",
        "user": {"login": "github-actions[bot]", "type": "Bot"},
        "labels": [], "assignees": [], "body": ""
    })
}

/// An empty review-thread page, or for the signals fetcher's batch (one
/// `sN: repository(...) { field(number: N) { ... } }` alias per line) each
/// item with no reactions and no close.
fn graphql(query: &str) -> Value {
    if !query.contains(": repository(owner: ") {
        return json!({"data": {"repository": {"pullRequest": {"reviewThreads": {
            "pageInfo": {"hasNextPage": false, "endCursor": null}, "nodes": []
        }}}}});
    }
    let mut data = serde_json::Map::new();
    for line in query.lines().map(str::trim) {
        let Some((alias, rest)) = line.split_once(": repository(") else {
            continue;
        };
        let field = ["issue", "pullRequest", "discussion"]
            .into_iter()
            .find(|f| rest.contains(&format!("{{ {f}(number: ")))
            .unwrap_or("issue");
        data.insert(
            alias.to_string(),
            json!({ field: {"reactions": {"nodes": []}, "timelineItems": {"nodes": []}} }),
        );
    }
    json!({ "data": data })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_classified_by_what_they_are_for() {
        let kind = |m: Method, p: &str| {
            let segs: Vec<&str> = p.trim_matches('/').split('/').collect();
            classify(&m, &segs)
        };
        assert_eq!(
            kind(Method::POST, "/app/installations/4242/access_tokens").0,
            CallKind::Token
        );
        assert_eq!(
            kind(Method::PATCH, "/repos/a/b/check-runs/7").0,
            CallKind::CheckRun
        );
        assert_eq!(
            kind(Method::POST, "/repos/a/b/check-runs").0,
            CallKind::CheckRun
        );
        assert_eq!(
            kind(Method::GET, "/repos/a/b/issues/comments/12"),
            (
                CallKind::Evaluation,
                "/repos/{repo}/issues/comments/{n}".to_string()
            )
        );
        assert_eq!(kind(Method::POST, "/graphql").0, CallKind::Evaluation);
        assert_eq!(
            kind(Method::GET, "/orgs/a/teams/t/memberships/u").0,
            CallKind::Evaluation
        );
        assert_eq!(kind(Method::DELETE, "/repos/a/b/x").0, CallKind::Other);
    }

    #[test]
    fn lists_are_empty_and_objects_exist() {
        assert_eq!(repo_object(&["issues", "5", "timeline"]), json!([]));
        assert_eq!(repo_object(&["pulls", "5"])["number"], 5);
        assert_eq!(repo_object(&["issues", "5", "reactions"]), json!([]));
    }

    #[test]
    fn the_signals_batch_gets_every_alias() {
        let q = "query {\n  s0: repository(owner: \"o\", name: \"r\") { issue(number: 1) { x } }\n  s1: repository(owner: \"o\", name: \"r\") { pullRequest(number: 2) { x } }\n}";
        let d = graphql(q);
        assert!(d.pointer("/data/s0/issue/reactions").is_some());
        assert!(d.pointer("/data/s1/pullRequest/reactions").is_some());
    }
}
