//! Every route of the real router, read from the router itself: axum's
//! `Debug` of a `Router` lists each path of its path router and, per path,
//! the methods it answers (`allow_header`). A test that must cover every
//! route (`security_headers`, `tenancy`) walks this list, so a new route is
//! covered the day it is added; if axum ever prints its router otherwise,
//! `of` fails loudly instead of finding nothing.

/// One route: its path pattern (`/runs/{owner}/{repo}/{run_id}`) and the
/// methods it answers (`GET`, `POST`, …; `HEAD` left out).
#[derive(Debug, Clone)]
pub struct Route {
    pub path: String,
    pub methods: Vec<String>,
}

impl Route {
    /// The path with each `{name}` / `{*name}` replaced by `value(name)`.
    pub fn fill(&self, value: impl Fn(&str) -> String) -> String {
        let mut out = String::new();
        let mut rest = self.path.as_str();
        while let Some(start) = rest.find('{') {
            out.push_str(&rest[..start]);
            let end = rest[start..].find('}').expect("a closed parameter") + start;
            out.push_str(&value(rest[start + 1..end].trim_start_matches('*')));
            rest = &rest[end + 1..];
        }
        out.push_str(rest);
        out
    }
}

/// The routes of `app`'s router with `options`, that router served on a
/// loopback port, and a client that follows no redirect (each answer is
/// the route's own) and gives up after 30 s.
pub async fn serve_walkable(
    app: &safe_outcomes::app::App,
    options: safe_outcomes::http::RouterOptions,
) -> (
    Vec<Route>,
    safe_outcomes::http::RunningServer,
    reqwest::Client,
) {
    let routed = safe_outcomes::http::router(app, options);
    let found = of(&routed);
    let server = safe_outcomes::http::RunningServer::start(routed, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(std::time::Duration::from_secs(30))
        .build()
        .unwrap();
    (found, server, client)
}

/// The routes of `router` (its path router; the fallback is not a route).
pub fn of(router: &axum::Router) -> Vec<Route> {
    let text = format!("{router:?}");
    let text = text
        .split("fallback_router:")
        .next()
        .expect("a router prints its path router first");
    let mut methods = std::collections::BTreeMap::new();
    let mut paths = std::collections::BTreeMap::new();
    for piece in text.split("RouteId(").skip(1) {
        let (id, rest) = piece.split_once("): ").expect("RouteId(n): …");
        let id: u64 = id.parse().expect("a route id");
        if let Some(quoted) = rest.strip_prefix('"') {
            paths.insert(id, unquote(quoted));
        } else if rest.starts_with("MethodRouter") {
            let allow = rest
                .split_once("allow_header: Bytes(b\"")
                .and_then(|(_, a)| a.split_once('"'))
                .map(|(a, _)| a)
                .expect("a method router prints its allow header");
            let list: Vec<String> = allow
                .split(',')
                .filter(|m| !m.is_empty() && *m != "HEAD")
                .map(str::to_string)
                .collect();
            methods.insert(id, list);
        }
    }
    let routes: Vec<Route> = paths
        .into_iter()
        .map(|(id, path)| Route {
            methods: methods.get(&id).cloned().unwrap_or_default(),
            path,
        })
        .collect();
    assert!(
        routes.len() >= 15 && routes.iter().all(|r| !r.methods.is_empty()),
        "axum's Debug of the router changed: {routes:?}"
    );
    routes
}

/// A Rust `Debug` string body up to its closing quote.
fn unquote(quoted: &str) -> String {
    let mut out = String::new();
    let mut chars = quoted.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return out,
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    panic!("an unterminated path in the router's Debug: {quoted}")
}
