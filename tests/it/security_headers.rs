//! Security headers on every answer (`http::headers`): every route of the
//! real router — read from the router itself (`routes::of`), never listed by
//! hand — with each method it answers and one it does not, with the API
//! token and without, and a path no route takes, under two configurations
//! (signing in, and the first-run setup page). Every answer is `nosniff`
//! with `frame-ancestors 'none'`; every HTML page carries the strict CSP
//! (no script source, styles from this server only) and `Referrer-Policy`,
//! holds no inline script or style, and its stylesheet is served. Every
//! answer but the static assets is `Cache-Control: no-store` (pages, API
//! answers and exports carry a viewer's data).

use reqwest::header::{HeaderMap, CONTENT_TYPE};
use safe_outcomes::app::App;
use safe_outcomes::http::auth::{AuthOptions, OAuthApp, SetupOptions};
use safe_outcomes::http::{router, RouterOptions, RunningServer};
use safe_outcomes::model::clock::Clock;

use crate::common::{self, TOKEN};
use crate::routes;

/// A value for each path parameter, naming something the store holds.
fn sample(name: &str) -> String {
    match name {
        "owner" => "acme".into(),
        "repo" => "widgets".into(),
        "run_id" => "9".into(),
        "name" => "triage".into(),
        "id" => "acme/widgets:9:0".into(),
        _ => "x".into(),
    }
}

/// Check the headers of one answer; true when it is an HTML page.
fn check(what: &str, status: u16, headers: &HeaderMap, body: &str) -> bool {
    let get = |name: &str| {
        headers
            .get(name)
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default()
    };
    assert_eq!(get("x-content-type-options"), "nosniff", "{what} {status}");
    assert_eq!(get("referrer-policy"), "no-referrer", "{what} {status}");
    // No cache keeps a viewer's data: only the static assets are cacheable.
    let cache = get("cache-control");
    if status == 200 && what.split_whitespace().any(|w| w.starts_with("/assets/")) {
        assert!(cache.starts_with("public"), "{what}: {cache:?}");
    } else {
        assert_eq!(cache, "no-store", "{what} {status}");
    }
    let csp = get("content-security-policy");
    assert!(
        csp.contains("frame-ancestors 'none'"),
        "{what} {status}: {csp:?}"
    );
    assert!(csp.starts_with("default-src 'none'"), "{what}: {csp:?}");
    assert!(
        !csp.contains("unsafe") && !csp.contains("script-src"),
        "{what}: {csp}"
    );
    let html = get("content-type").starts_with("text/html");
    if html {
        assert!(csp.contains("style-src 'self'"), "{what}: {csp}");
        for inline in ["<script", "<style", " style=", " onload=", " onclick="] {
            assert!(
                !body.contains(inline),
                "{what}: inline {inline:?} in\n{body}"
            );
        }
    }
    html
}

/// The stylesheets a page links, each served as CSS with the headers too.
async fn check_stylesheets(base: &str, what: &str, body: &str) {
    for link in body.split("<link rel=\"stylesheet\" href=\"").skip(1) {
        let href = link.split('"').next().unwrap();
        let r = reqwest::get(format!("{base}{href}")).await.unwrap();
        assert_eq!(r.status(), 200, "{what}: {href}");
        let kind = r.headers()[CONTENT_TYPE].to_str().unwrap().to_string();
        assert!(kind.starts_with("text/css"), "{what}: {href} {kind}");
        check(href, 200, &r.headers().clone(), "");
        assert!(r.text().await.unwrap().contains('{'), "{href}");
    }
}

/// Walk every route of `options`' router; returns how many HTML pages were seen.
async fn walk(app: &App, options: RouterOptions) -> usize {
    let (found, server, client) = routes::serve_walkable(app, options.clone()).await;
    let base = server.url();
    let mut pages = 0;
    let mut tried = vec!["/no/such/route".to_string()];
    for route in &found {
        let path = route.fill(sample);
        for method in route.methods.iter().map(String::as_str).chain(["DELETE"]) {
            for token in [Some(TOKEN), None] {
                let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
                let mut req = client.request(method.clone(), format!("{base}{path}"));
                if let Some(t) = token {
                    req = req.bearer_auth(t);
                }
                if method == reqwest::Method::POST {
                    req = req.header(CONTENT_TYPE, "application/json").body("{}");
                }
                let r = req.send().await.unwrap();
                let (status, headers) = (r.status().as_u16(), r.headers().clone());
                let body = r.text().await.unwrap();
                let what = format!("{method} {path} (token: {})", token.is_some());
                if check(&what, status, &headers, &body) {
                    pages += 1;
                    check_stylesheets(&base, &what, &body).await;
                }
            }
        }
        tried.push(path);
    }
    let r = client
        .get(format!("{base}{}", tried[0]))
        .send()
        .await
        .unwrap();
    check(
        "a path no route takes",
        r.status().as_u16(),
        &r.headers().clone(),
        "",
    );
    server.stop().await;
    pages
}

#[tokio::test]
async fn every_answer_of_every_route_carries_the_security_headers() {
    let dir = tempfile::tempdir().unwrap();
    let app = App::start(&dir.path().join("data"), Clock::System).unwrap();
    let base = common::signed_options();
    // An output for the pages to show.
    let seeded = router(&app, base.clone());
    let server = RunningServer::start(seeded, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let line = r#"{"type":"create_issue","url":"https://github.com/acme/widgets/issues/5","number":5,"repo":"acme/widgets","timestamp":"2026-10-01T00:00:00Z"}"#;
    let poster =
        safe_outcomes::ingest::client::Client::new(&server.url(), None, Some(TOKEN.into()));
    let a = poster
        .post_manifest("acme/widgets", 9, Some("triage"), line.to_string())
        .await
        .unwrap();
    assert_eq!(a.status, 202, "{}", a.body);
    app.wait_idle().await;
    server.stop().await;

    let signing_in = RouterOptions {
        auth: AuthOptions {
            public_url: "http://127.0.0.1:1".into(),
            api_url: "http://127.0.0.1:1".into(),
            web_url: "https://github.example".into(),
            oauth: Some(OAuthApp {
                client_id: "id".into(),
                client_secret: "secret".into(),
            }),
            ..AuthOptions::default()
        },
        ..base.clone()
    };
    let pages = walk(&app, signing_in).await;
    assert!(
        pages >= 10,
        "the dashboard's pages and the auth pages: {pages}"
    );
    let setup = RouterOptions {
        listen_only: true,
        auth: AuthOptions {
            web_url: "https://github.example".into(),
            setup: Some(SetupOptions {
                env_file: dir.path().join(".env"),
                webhook_path: "/api/github/webhooks".into(),
            }),
            ..AuthOptions::default()
        },
        ..base
    };
    let pages = walk(&app, setup).await;
    assert!(pages >= 1, "the setup page");
    tokio::task::spawn_blocking(move || app.shutdown())
        .await
        .unwrap();
}
