//! The sign-in page, `GET /auth/login?next=/path`: every way in this server
//! offers, so the dashboard is never a dead end —
//! - "Sign in with GitHub" (`signin`), only when an OAuth client is
//!   configured;
//! - a form for the `API_TOKEN` (the operator, who sees everything, as the
//!   token does on the API): `POST /auth/login` opens a session like any
//!   other. In `demo --serve` the same form takes the key of the printed
//!   Dashboard link, and the page says where that link is.
//!
//! The form is CSRF-checked before any session exists: the page sets a
//! signed `so_login` cookie holding a random nonce, and the form carries a
//! MAC of it; a post without both is refused. Wrong tokens are
//! rate-limited per source and per secret (`Limiter`: `MAX_FAILURES` per
//! `WINDOW` from one peer address at one secret, then 429 with
//! `Retry-After` for that source only; the setup key is counted apart). The
//! token is checked first, in constant time, and only failures count, so
//! nobody's wrong tries can keep another's right token out.

use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{ConnectInfo, RawQuery, State as StateExtractor};
use axum::http::{header, Extensions, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use super::page::{esc, message, page};
use super::sessions::Who;
use super::signin::{local_path, param, redirect, secure, with_cookie};
use super::{signed, Auth};
use crate::http::State;

const LOGIN_COOKIE: &str = "so_login";
const LOGIN_PURPOSE: &str = "login";
/// How long the sign-in form may stay open.
const FORM_TTL: i64 = 600;
const TITLE: &str = "Sign in";

/// Wrong tries one source may make at one secret per `WINDOW` before its
/// tries at that secret answer 429.
pub(crate) const MAX_FAILURES: usize = 10;
pub(crate) const WINDOW: Duration = Duration::from_secs(60);
/// Most (secret, source) pairs the limiter remembers at once.
pub(crate) const MAX_SOURCES: usize = 4096;

/// The secrets a wrong try may be aimed at; each is counted apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Secret {
    /// The sign-in form's token: the `API_TOKEN` or the demo's key.
    SignIn,
    /// The setup page's one-time key.
    SetupKey,
}

/// Where a try comes from: the peer address as this server sees it (an
/// IPv6 address by its /64, what one host usually holds); `None` when the
/// connection did not say (a router called without the accept loop).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Source(Option<IpAddr>);

impl Source {
    /// The source of a request, from the peer address the accept loop
    /// gives it (`http::accept`). Forwarded headers are not trusted: anyone
    /// can write them.
    pub fn of(extensions: &Extensions) -> Source {
        let ip = extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0.ip().to_canonical());
        Source(ip.map(|ip| match ip {
            IpAddr::V6(v6) => {
                let s = v6.segments();
                IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
            v4 => v4,
        }))
    }
}

/// Wrong tries of the last `WINDOW`, per secret and per source, in this
/// process's memory (at most `MAX_SOURCES` pairs). Only failures are
/// counted, and a source's failures close only that source's door to that
/// secret: another source's right secret is never refused for them.
#[derive(Default)]
pub(crate) struct Limiter {
    failures: Mutex<HashMap<(Secret, Source), VecDeque<Instant>>>,
}

impl Limiter {
    pub fn new() -> Limiter {
        Limiter::default()
    }

    /// How long `source` must wait before trying `secret` again, when its
    /// wrong tries of the last `WINDOW` reached `MAX_FAILURES`.
    pub fn retry_after(&self, secret: Secret, source: Source) -> Option<Duration> {
        let now = Instant::now();
        let mut map = self.failures.lock().expect("limiter lock");
        let tries = map.get_mut(&(secret, source))?;
        forget_old(tries, now);
        let first = *tries.front()?;
        (tries.len() >= MAX_FAILURES)
            .then(|| (first + WINDOW).saturating_duration_since(now) + Duration::from_secs(1))
    }

    /// Count one wrong try of `source` at `secret`.
    pub fn failed(&self, secret: Secret, source: Source) {
        let now = Instant::now();
        let mut map = self.failures.lock().expect("limiter lock");
        if !map.contains_key(&(secret, source)) && map.len() >= MAX_SOURCES {
            make_room(&mut map, now);
        }
        let tries = map.entry((secret, source)).or_default();
        forget_old(tries, now);
        tries.push_back(now);
        while tries.len() > MAX_FAILURES {
            tries.pop_front();
        }
    }

    /// The pairs remembered now (for the tests of the bound).
    #[cfg(test)]
    pub fn remembered(&self) -> usize {
        self.failures.lock().expect("limiter lock").len()
    }
}

/// Drop the tries older than `WINDOW`.
fn forget_old(tries: &mut VecDeque<Instant>, now: Instant) {
    while tries
        .front()
        .is_some_and(|t| now.saturating_duration_since(*t) >= WINDOW)
    {
        tries.pop_front();
    }
}

type Failures = HashMap<(Secret, Source), VecDeque<Instant>>;

/// Make room for one more pair: forget the pairs with no try in the window,
/// else the one whose last try is the oldest.
fn make_room(map: &mut Failures, now: Instant) {
    map.retain(|_, tries| {
        forget_old(tries, now);
        !tries.is_empty()
    });
    if map.len() < MAX_SOURCES {
        return;
    }
    let oldest = map
        .iter()
        .min_by_key(|(_, tries)| tries.back().copied())
        .map(|(k, _)| *k);
    if let Some(k) = oldest {
        map.remove(&k);
    }
}

/// The 429 page of a limiter that is full.
pub(super) fn too_many(wait: Duration, title: &str) -> Response {
    let mut resp = message(
        StatusCode::TOO_MANY_REQUESTS,
        title,
        &format!(
            "Too many wrong attempts: try again in {} seconds.",
            wait.as_secs()
        ),
    );
    if let Ok(v) = HeaderValue::from_str(&wait.as_secs().to_string()) {
        resp.headers_mut().insert(header::RETRY_AFTER, v);
    }
    resp
}

/// The CSRF field of the sign-in form for the browser's nonce.
fn form_csrf(auth: &Auth, nonce: &str) -> String {
    auth.key.csrf(&format!("{LOGIN_PURPOSE}:{nonce}"))
}

/// The nonce the browser's `so_login` cookie holds, if valid.
fn nonce_of(auth: &Auth, headers: &HeaderMap) -> Option<String> {
    signed::cookie(headers, LOGIN_COOKIE).and_then(|c| auth.key.open(LOGIN_PURPOSE, &c).ok())
}

/// `GET /auth/login?next=/path`: the ways in.
pub async fn sign_in(
    StateExtractor(state): StateExtractor<State>,
    headers: HeaderMap,
    RawQuery(q): RawQuery,
) -> Response {
    let pairs: Vec<(String, String)> =
        serde_urlencoded::from_str(q.as_deref().unwrap_or("")).unwrap_or_default();
    let next = local_path(param(&pairs, "next"));
    sign_in_page(&state.auth, &headers, &next, StatusCode::OK, None)
}

/// The sign-in page, with `problem` said above the form; sets the form's
/// nonce cookie when the browser has none.
fn sign_in_page(
    auth: &Auth,
    headers: &HeaderMap,
    next: &str,
    status: StatusCode,
    problem: Option<&str>,
) -> Response {
    let (nonce, fresh) = match nonce_of(auth, headers) {
        Some(n) => (n, false),
        None => (signed::random_token(), true),
    };
    let mut body = String::new();
    if let Some(p) = problem {
        body.push_str(&format!("<p class=\"error\">{}</p>", esc(p)));
    }
    if let Some(viewer) = auth.viewer(headers) {
        body.push_str(&format!(
            "<p>You are signed in as <strong>{}</strong>. <a href=\"{}\">Continue</a> · \
             <a href=\"/auth/logout\">Sign out</a></p>",
            esc(&viewer.login),
            esc(next)
        ));
    }
    body.push_str(&ways_in(auth, next, &form_csrf(auth, &nonce)));
    let mut resp = page(status, TITLE, &body);
    if fresh {
        let sealed = auth
            .key
            .seal(LOGIN_PURPOSE, &nonce, signed::now() + FORM_TTL);
        resp = with_cookie(
            resp,
            &signed::set_cookie(LOGIN_COOKIE, &sealed, FORM_TTL, secure(auth)),
        );
    }
    resp
}

/// The choices this server offers, as HTML.
fn ways_in(auth: &Auth, next: &str, csrf: &str) -> String {
    let mut body = String::new();
    if auth.options.oauth.is_some() {
        let github = format!(
            "/auth/login/github?{}",
            serde_urlencoded::to_string([("next", next)]).unwrap_or_default()
        );
        body.push_str(&format!(
            "<p><a class=\"button\" href=\"{}\">Sign in with GitHub</a></p>\
             <p>You will see the repositories your GitHub account can see among this App's \
             installations.</p>",
            esc(&github)
        ));
    }
    let demo = auth.options.local_key.is_some();
    if auth.api_token.is_some() || demo {
        if demo {
            body.push_str(
                "<p>This server is <code>safe-outcomes demo --serve</code>: open the \
                 <strong>Dashboard</strong> link it printed in its terminal, or paste the key \
                 from that link (what follows <code>key=</code>) below. Lost it? Stop the demo \
                 (Ctrl-C) and start it again for a new link.</p>",
            );
        }
        let label = match (auth.api_token.is_some(), demo) {
            (true, true) => "API token, or the demo's key",
            (false, true) => "The demo's key",
            _ => "API token (the server's API_TOKEN)",
        };
        body.push_str(&format!(
            "<form action=\"/auth/login\" method=\"post\">\
             <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
             <input type=\"hidden\" name=\"next\" value=\"{next}\">\
             <p><label>{label} <input type=\"password\" name=\"token\" \
             autocomplete=\"current-password\" required></label></p>\
             <p><button type=\"submit\">Sign in with the token</button></p></form>\
             <p>The token signs you in as the operator, who sees every repository.</p>",
            csrf = esc(csrf),
            next = esc(next),
            label = esc(label),
        ));
    }
    if body.is_empty() {
        body.push_str(
            "<p>No way to sign in is configured on this server. Its operator can set \
             <code>API_TOKEN</code> (and sign in with it here), or <code>GITHUB_CLIENT_ID</code> \
             and <code>GITHUB_CLIENT_SECRET</code> for sign-in with GitHub (the setup page \
             writes them).</p>",
        );
    }
    body
}

/// `POST /auth/login` with `csrf`, `token` and `next`: sign the operator
/// (or the demo's local viewer) in.
pub async fn with_token(
    StateExtractor(state): StateExtractor<State>,
    parts: axum::http::request::Parts,
    body: Bytes,
) -> Response {
    let (auth, headers) = (&state.auth, &parts.headers);
    let source = Source::of(&parts.extensions);
    let form: Vec<(String, String)> = serde_urlencoded::from_bytes(&body).unwrap_or_default();
    let next = local_path(param(&form, "next"));
    let csrf_ok = nonce_of(auth, headers)
        .is_some_and(|n| signed::same(&form_csrf(auth, &n), param(&form, "csrf").unwrap_or("")));
    if !csrf_ok {
        return sign_in_page(
            auth,
            headers,
            &next,
            StatusCode::FORBIDDEN,
            Some("The form expired or did not come from this page: try again."),
        );
    }
    let given = param(&form, "token").unwrap_or("").trim();
    // Both compared, in constant time, before the limit is looked at.
    let matches = |t: &Option<crate::settings::Secret>| {
        crate::settings::exposed(t).is_some_and(|t| !t.is_empty() && signed::same(t, given))
    };
    let (operator, local) = (matches(&auth.api_token), matches(&auth.options.local_key));
    if let Some(wait) = auth.failures.retry_after(Secret::SignIn, source) {
        return too_many(wait, TITLE);
    }
    let who = if operator {
        Who::operator(given)
    } else if local {
        Who::local(given)
    } else {
        auth.failures.failed(Secret::SignIn, source);
        tracing::warn!(source = ?source.0, "sign-in with a token refused: wrong token");
        return sign_in_page(
            auth,
            headers,
            &next,
            StatusCode::UNAUTHORIZED,
            Some("That token is not this server's."),
        );
    };
    let cookie = match auth.open_session(who.clone()) {
        Ok(c) => c,
        Err(e) => return e.into_response(),
    };
    tracing::info!(login = %who.login, "signed in with a token");
    let resp = with_cookie(redirect(&next), &cookie);
    with_cookie(resp, &signed::clear_cookie(LOGIN_COOKIE, secure(auth)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(ip: &str) -> Source {
        let mut ext = Extensions::new();
        ext.insert(ConnectInfo(SocketAddr::new(ip.parse().unwrap(), 4000)));
        Source::of(&ext)
    }

    #[test]
    fn a_source_closes_only_its_own_door_to_one_secret() {
        let limiter = Limiter::new();
        let (bad, good) = (from("203.0.113.9"), from("198.51.100.7"));
        for _ in 0..MAX_FAILURES - 1 {
            limiter.failed(Secret::SignIn, bad);
            assert!(limiter.retry_after(Secret::SignIn, bad).is_none());
        }
        limiter.failed(Secret::SignIn, bad);
        let wait = limiter.retry_after(Secret::SignIn, bad).unwrap();
        assert!(wait > Duration::ZERO && wait <= WINDOW + Duration::from_secs(1));
        assert!(limiter.retry_after(Secret::SignIn, good).is_none());
        assert!(limiter.retry_after(Secret::SetupKey, bad).is_none());
    }

    #[test]
    fn an_ipv6_host_counts_as_its_slash_64() {
        assert_eq!(from("2001:db8:1:2::1"), from("2001:db8:1:2:ffff::9"));
        assert_ne!(from("2001:db8:1:2::1"), from("2001:db8:1:3::1"));
        assert_eq!(from("::ffff:192.0.2.1"), from("192.0.2.1"));
        assert_eq!(Source::of(&Extensions::new()), Source(None));
    }

    #[test]
    fn the_memory_is_bounded_and_keeps_the_latest_offenders() {
        let limiter = Limiter::new();
        let hot = from("192.0.2.200");
        for _ in 0..MAX_FAILURES {
            limiter.failed(Secret::SignIn, hot);
        }
        for n in 0..MAX_SOURCES as u32 + 500 {
            let ip = std::net::Ipv4Addr::from(0x0a00_0000 + n);
            limiter.failed(Secret::SignIn, Source(Some(IpAddr::V4(ip))));
            if n % 1000 == 0 {
                limiter.failed(Secret::SignIn, hot);
            }
        }
        assert!(limiter.remembered() <= MAX_SOURCES);
        assert!(limiter.retry_after(Secret::SignIn, hot).is_some());
    }
}
