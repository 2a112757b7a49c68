//! One error shape (`http::errors`): every route of the real router — read
//! from the router itself (`routes::of`) — walked over real HTTP with
//! malformed input (a query that is not UTF-8 and repeats its names, path
//! parameters that are not UTF-8 or not numbers, a body that is not JSON
//! under a media type no route takes) and no token, with every method it
//! answers and one it does not; then a path no route has. Every refusal is
//! the API's JSON error with a code (or an HTML page of the dashboard),
//! never the framework's text; every API route answers 401 before it looks
//! at its input; and with the token the same input is a JSON 4xx.

use reqwest::header::{ALLOW, CONTENT_TYPE};
use reqwest::Method;
use safe_outcomes::app::App;
use safe_outcomes::http::{router, RouterOptions, RunningServer};
use safe_outcomes::model::clock::Clock;

use crate::common::{self, TOKEN};
use crate::routes;

/// A malformed value for each path parameter.
fn malformed(name: &str) -> String {
    match name {
        "run_id" | "number" => "not-a-number".into(),
        _ => "%FF%FE".into(),
    }
}

/// A query string no handler can take: not UTF-8, a repeated name, a bad
/// status.
const BAD_QUERY: &str = "run_id=1&run_id=2&status=nope&%FF=%FE";

/// Is this a refusal in one of our shapes? Returns its `error` code, or
/// `html` for a page.
fn shape(what: &str, status: u16, kind: &str, body: &str) -> String {
    if kind.starts_with("text/html") {
        return "html".into();
    }
    assert!(
        kind.starts_with("application/json"),
        "{what}: {status} answered as {kind:?}: {body}"
    );
    let v: serde_json::Value =
        serde_json::from_str(body).unwrap_or_else(|e| panic!("{what}: {e}: {body}"));
    let code = v["error"].as_str().unwrap_or_default().to_string();
    assert!(
        !code.is_empty() && code.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
        "{what}: {status} without a stable code: {body}"
    );
    assert!(v["detail"].is_string(), "{what}: {body}");
    code
}

#[tokio::test]
async fn every_refusal_of_every_route_is_the_json_error_and_auth_comes_first() {
    let dir = tempfile::tempdir().unwrap();
    let app = App::start(&dir.path().join("data"), Clock::System).unwrap();
    let (found, server, client) = routes::serve_walkable(&app, common::signed_options()).await;
    let base = server.url();
    let mut refused = 0;
    let mut unauthorized = 0;
    for route in &found {
        let path = route.fill(malformed);
        let api = path.starts_with("/api/v1/") && !path.starts_with("/api/v1/openapi");
        for method in route.methods.iter().map(String::as_str).chain(["PATCH"]) {
            let method = Method::from_bytes(method.as_bytes()).unwrap();
            let declared = method != Method::PATCH;
            for token in [None, Some(TOKEN)] {
                let mut req = client
                    .request(method.clone(), format!("{base}{path}?{BAD_QUERY}"))
                    .header(CONTENT_TYPE, "application/x-unheard-of")
                    .body("{not json");
                if let Some(t) = token {
                    req = req.bearer_auth(t);
                }
                let r = req.send().await.unwrap();
                let status = r.status().as_u16();
                let kind = r
                    .headers()
                    .get(CONTENT_TYPE)
                    .map(|v| v.to_str().unwrap().to_string())
                    .unwrap_or_default();
                let allow = r.headers().get(ALLOW).cloned();
                let body = r.text().await.unwrap();
                let what = format!("{method} {path} (token: {})", token.is_some());
                if status < 400 {
                    continue;
                }
                refused += 1;
                let code = shape(&what, status, &kind, &body);
                // A method the route does not take, or one the route takes
                // for another of its resources (`/api/v1/outputs/{*id}`
                // is an output and its `/reconcile`): 405, and `Allow`
                // names the resource's methods, never this one.
                if !declared || status == 405 {
                    assert_eq!(status, 405, "{what}: {body}");
                    assert_eq!(code, "method_not_allowed", "{what}");
                    let allow = allow.unwrap_or_else(|| panic!("{what}: 405 without Allow"));
                    let allow = allow.to_str().unwrap().to_string();
                    assert!(
                        !allow.split(',').any(|m| m.trim() == method.as_str()),
                        "{what}: refused, yet Allow: {allow}"
                    );
                } else if api && token.is_none() {
                    assert_eq!(status, 401, "{what}: authentication first: {body}");
                    assert_eq!(code, "unauthorized", "{what}");
                    unauthorized += 1;
                } else if api {
                    assert_ne!(status, 401, "{what}: {body}");
                }
            }
        }
    }
    // (`POST /api/v1/outputs/{*id}` without `/reconcile` is a 405 of the
    // output resource, not a 401: the method is refused before the token,
    // as on every route.)
    assert!(unauthorized >= 11, "API routes walked: {unauthorized}");
    assert!(refused >= 40, "refusals seen: {refused}");
    let r = client
        .get(format!("{base}/no/such/route"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    let kind = r.headers()[CONTENT_TYPE].to_str().unwrap().to_string();
    let code = shape("no route", 404, &kind, &r.text().await.unwrap());
    assert_eq!(code, "not_found");

    // The case: a repeated query name on the manifest route.
    for (token, status, code) in [
        (None, 401, "unauthorized"),
        (Some(TOKEN), 400, "bad_request"),
    ] {
        let mut req = client
            .post(format!("{base}/api/v1/manifests?run_id=1&run_id=2"))
            .header(CONTENT_TYPE, "application/x-ndjson")
            .body("{}\n");
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let r = req.send().await.unwrap();
        assert_eq!(r.status().as_u16(), status);
        let kind = r.headers()[CONTENT_TYPE].to_str().unwrap().to_string();
        let body = r.text().await.unwrap();
        assert_eq!(shape("manifest", status, &kind, &body), code, "{body}");
    }
    server.stop().await;
    tokio::task::spawn_blocking(move || app.shutdown())
        .await
        .unwrap();
}

/// The route `/api/v1/outputs/{*id}` holds two resources of the OpenAPI
/// document, `/api/v1/outputs/{id}` (GET, HEAD) and
/// `/api/v1/outputs/{id}/reconcile` (POST): every other method on either is
/// a 405 whose `Allow` lists exactly that resource's methods, with the
/// token and without (schemathesis ST204/ST205, issue 45); the methods it
/// takes reach their handlers (401 without the token, 404 for no output).
#[tokio::test]
async fn each_resource_of_the_shared_output_route_allows_its_own_methods() {
    let dir = tempfile::tempdir().unwrap();
    let app = App::start(&dir.path().join("data"), Clock::System).unwrap();
    let options = RouterOptions {
        api_token: Some(TOKEN.into()),
        ..RouterOptions::default()
    };
    let server = RunningServer::start(router(&app, options), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let base = server.url();
    let client = reqwest::Client::new();
    let output = "/api/v1/outputs/acme/widgets:1:0";
    let reconcile = "/api/v1/outputs/acme/widgets:1:0/reconcile";
    let cases: [(&str, &str, &[&str]); 2] = [
        (output, "GET, HEAD", &["GET", "HEAD"]),
        (reconcile, "POST", &["POST"]),
    ];
    for (path, allow, taken) in cases {
        for method in [
            "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE",
        ] {
            for token in [None, Some(TOKEN)] {
                let mut req = client.request(
                    Method::from_bytes(method.as_bytes()).unwrap(),
                    format!("{base}{path}"),
                );
                if let Some(t) = token {
                    req = req.bearer_auth(t);
                }
                let r = req.send().await.unwrap();
                let what = format!("{method} {path} (token: {})", token.is_some());
                let status = r.status().as_u16();
                if taken.contains(&method) {
                    // Without the token 401; with it the handler's own
                    // answer (no such output: 404; reconcile in
                    // listen-only mode: 409).
                    let expected: &[u16] = if token.is_none() { &[401] } else { &[404, 409] };
                    assert!(expected.contains(&status), "{what}: {status}");
                    assert!(r.headers().get(ALLOW).is_none(), "{what}");
                } else {
                    assert_eq!(status, 405, "{what}");
                    assert_eq!(r.headers()[ALLOW], allow, "{what}");
                    if method != "HEAD" {
                        let kind = r.headers()[CONTENT_TYPE].to_str().unwrap().to_string();
                        let body = r.text().await.unwrap();
                        assert_eq!(shape(&what, 405, &kind, &body), "method_not_allowed");
                    }
                }
            }
        }
    }
    server.stop().await;
}
