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
//! rate-limited (`Limiter`: `MAX_FAILURES` per `WINDOW` across every
//! replica, counted in the store, then 429 with `Retry-After`; the setup key
//! shares it).

use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{RawQuery, State as StateExtractor};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use super::page::{esc, message, page};
use super::sessions::Who;
use super::signin::{local_path, param, redirect, secure, with_cookie};
use super::{signed, Auth};
use crate::http::State;
use crate::store::{Space, Store};

const LOGIN_COOKIE: &str = "so_login";
const LOGIN_PURPOSE: &str = "login";
/// How long the sign-in form may stay open.
const FORM_TTL: i64 = 600;
const TITLE: &str = "Sign in";

/// Wrong tokens or keys allowed per `WINDOW` before the form answers 429.
pub const MAX_FAILURES: usize = 10;
pub const WINDOW: Duration = Duration::from_secs(60);

/// Failed attempts (tokens, keys) of the last `WINDOW`, kept in the store
/// (space `Attempt`, each expiring after `WINDOW`), so every replica counts
/// the same ones.
pub struct Limiter {
    store: Store,
}

/// The group failed attempts count in.
const ATTEMPTS: &str = "sign-in";

impl Limiter {
    pub fn new(store: Store) -> Limiter {
        Limiter { store }
    }

    /// How long to wait before trying again, when the limit is reached (a
    /// store that cannot be read limits nothing: sign-in then fails anyway).
    pub fn retry_after(&self) -> Option<Duration> {
        let now = chrono::Utc::now();
        let live = self
            .store
            .expiries_in_group(Space::Attempt, ATTEMPTS, now, MAX_FAILURES)
            .inspect_err(|e| tracing::warn!(error = %e, "cannot count failed sign-ins"))
            .ok()?;
        (live.len() >= MAX_FAILURES).then(|| {
            let first = live.first().copied().unwrap_or(now);
            (first - now).to_std().unwrap_or_default() + Duration::from_secs(1)
        })
    }

    /// Count one failed attempt.
    pub fn failed(&self) {
        let now = chrono::Utc::now();
        let window = chrono::Duration::from_std(WINDOW).unwrap_or_default();
        let kept = self
            .store
            .sweep_expiring(Space::Attempt, now, MAX_FAILURES)
            .and_then(|_| {
                self.store.put_expiring(
                    Space::Attempt,
                    &signed::random_token(),
                    Some(ATTEMPTS),
                    now + window,
                    &(),
                )
            });
        if let Err(e) = kept {
            tracing::warn!(error = %e, "cannot count a failed sign-in");
        }
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
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let auth = &state.auth;
    let form: Vec<(String, String)> = serde_urlencoded::from_bytes(&body).unwrap_or_default();
    let next = local_path(param(&form, "next"));
    if let Some(wait) = auth.failures.retry_after() {
        return too_many(wait, TITLE);
    }
    let csrf_ok = nonce_of(auth, &headers)
        .is_some_and(|n| signed::same(&form_csrf(auth, &n), param(&form, "csrf").unwrap_or("")));
    if !csrf_ok {
        return sign_in_page(
            auth,
            &headers,
            &next,
            StatusCode::FORBIDDEN,
            Some("The form expired or did not come from this page: try again."),
        );
    }
    let given = param(&form, "token").unwrap_or("").trim();
    let matches = |t: &Option<String>| {
        t.as_deref()
            .is_some_and(|t| !t.is_empty() && signed::same(t, given))
    };
    let who = if matches(&auth.api_token) {
        Who::operator(given)
    } else if matches(&auth.options.local_key) {
        Who::local(given)
    } else {
        auth.failures.failed();
        tracing::warn!("sign-in with a token refused: wrong token");
        return sign_in_page(
            auth,
            &headers,
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

    #[test]
    fn the_limiter_closes_after_the_failures_of_a_window_for_every_replica() {
        let (_dir, store) = super::super::test_store();
        let (one, other) = (Limiter::new(store.clone()), Limiter::new(store));
        for n in 0..MAX_FAILURES - 1 {
            [&one, &other][n % 2].failed();
            assert!(one.retry_after().is_none());
        }
        other.failed();
        for l in [&one, &other] {
            let wait = l.retry_after().unwrap();
            assert!(wait > Duration::ZERO && wait <= WINDOW + Duration::from_secs(1));
        }
    }
}
