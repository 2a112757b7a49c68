//! Security headers on every answer of the router, set by one layer
//! (`secure`) around all the areas, refusals and fallbacks included:
//!
//! - every answer: `X-Content-Type-Options: nosniff` (a JSON answer or an
//!   export is never sniffed into HTML), `Referrer-Policy: no-referrer`
//!   (page URLs name repositories and outputs), `X-Frame-Options: DENY`,
//!   and `Cache-Control: no-store` unless the handler set its own (only the
//!   static assets do): pages, API answers and exports carry a viewer's
//!   data, which no browser or proxy cache may keep;
//! - an HTML page: a strict `Content-Security-Policy` — nothing loads but
//!   this server's own stylesheets (`/assets/…`, no inline style) and
//!   `data:` images; no script at all (`default-src 'none'` and no
//!   `script-src`); forms post only here or to GitHub's web address (the
//!   setup page's manifest form); `frame-ancestors 'none'`; `base-uri 'none'`;
//! - any other answer: `default-src 'none'; frame-ancestors 'none'`, so a
//!   JSON or JSONL body opened in a browser runs and embeds nothing.
//!
//! The dashboard and the small auth pages hold no inline script or style;
//! the Chromium test (`tests/it/dashboard.rs`) fails on any CSP violation
//! it reports, and `tests/it/security_headers.rs` walks every route.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header::{self, HeaderValue};
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::Response;

/// The policy of HTML pages and of everything else, built once.
#[derive(Clone, Debug)]
pub struct Policy {
    html: HeaderValue,
    other: HeaderValue,
}

impl Policy {
    /// `github_web_url`: where the setup page's form posts (GitHub's web
    /// address); only its origin is allowed.
    pub fn new(github_web_url: &str) -> Policy {
        let github = origin(github_web_url)
            .map(|o| format!(" {o}"))
            .unwrap_or_default();
        let html = format!(
            "default-src 'none'; style-src 'self'; img-src 'self' data:; \
             form-action 'self'{github}; frame-ancestors 'none'; base-uri 'none'"
        );
        Policy {
            html: HeaderValue::from_str(&html)
                .unwrap_or_else(|_| HeaderValue::from_static(STRICT_HTML)),
            other: HeaderValue::from_static(OTHER),
        }
    }
}

/// The HTML policy when GitHub's origin cannot be written into a header.
const STRICT_HTML: &str = "default-src 'none'; style-src 'self'; img-src 'self' data:; \
                           form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
/// The policy of every answer that is not an HTML page.
const OTHER: &str = "default-src 'none'; frame-ancestors 'none'";

/// `scheme://host[:port]` of a URL, when it has one.
fn origin(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let host = rest.split(['/', '?', '#']).next()?;
    let plain = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b))
    };
    (matches!(scheme, "http" | "https") && plain(host)).then(|| format!("{scheme}://{host}"))
}

/// The layer: run the request, then set the headers on whatever answered.
pub(crate) async fn secure(
    State(policy): State<Arc<Policy>>,
    req: Request,
    next: Next,
) -> Response {
    let mut response = next.run(req).await;
    apply(&policy, response.headers_mut());
    response
}

/// Set the headers, the CSP by the answer's content type.
pub fn apply(policy: &Policy, headers: &mut HeaderMap) {
    let html = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.trim_start().to_ascii_lowercase().starts_with("text/html"));
    let csp = if html { &policy.html } else { &policy.other };
    headers.insert(header::CONTENT_SECURITY_POLICY, csp.clone());
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    if !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_html_policy_allows_no_script_and_only_githubs_origin_for_forms() {
        let p = Policy::new("https://ghe.example/some/path");
        let html = p.html.to_str().unwrap();
        assert!(
            html.contains("form-action 'self' https://ghe.example;"),
            "{html}"
        );
        assert!(html.contains("default-src 'none'") && !html.contains("script-src"));
        assert!(!html.contains("unsafe"), "{html}");
        // A web URL that is no plain origin is left out, not written raw.
        for odd in [
            "javascript:alert(1)",
            "https://x y",
            "https://a;script-src *",
        ] {
            let html = Policy::new(odd).html;
            assert_eq!(html.to_str().unwrap(), STRICT_HTML, "{odd}");
        }
    }

    #[test]
    fn pages_get_the_html_policy_and_everything_gets_nosniff() {
        let p = Policy::new("https://github.com");
        for (kind, html) in [
            ("text/html; charset=utf-8", true),
            ("application/json", false),
            ("application/x-ndjson", false),
            ("text/css", false),
        ] {
            let mut h = HeaderMap::new();
            h.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
            apply(&p, &mut h);
            let csp = h[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
            assert_eq!(csp.contains("style-src 'self'"), html, "{kind}");
            assert!(csp.contains("frame-ancestors 'none'"), "{kind}");
            assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
            assert_eq!(h[header::REFERRER_POLICY], "no-referrer");
            assert_eq!(h[header::CACHE_CONTROL], "no-store");
        }
        // A handler's own caching (the static assets) is kept.
        let mut h = HeaderMap::new();
        h.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("public, max-age=86400"),
        );
        apply(&p, &mut h);
        assert_eq!(h[header::CACHE_CONTROL], "public, max-age=86400");
    }
}
