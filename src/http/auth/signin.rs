//! Sign-in with GitHub (the App's user authorization, OAuth web flow with
//! PKCE): `GET /auth/login/github?next=/path` starts a flow in the store
//! (`flows`: the PKCE verifier and where to go back, 10 minutes like
//! GitHub's code) and sends the browser to GitHub's authorize page with its
//! state, which a signed, HttpOnly, SameSite=Lax cookie also binds to this
//! browser; `GET /auth/callback` checks the cookie against the state, *takes*
//! the flow (so a replayed state finds nothing and GitHub is not called),
//! exchanges the code for a user token, asks `GET /user` who it is, opens a
//! session and sets the session cookie. The callback may land on any replica.
//! `POST /auth/logout` (with the session's CSRF token) ends the session on
//! every replica; `POST /auth/logout/everywhere` ends every session of the
//! account; `GET /auth/logout` shows both forms. (`GET /api/v1/me`, who a reader
//! is, is a read endpoint: `http::api::me`.)

use axum::body::Bytes;
use axum::extract::{RawQuery, State as StateExtractor};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use super::flows::{self, Flow};
use super::page::{esc, message, page};
use super::sessions::Who;
use super::{github_web, signed, Auth, SESSION_COOKIE};
use crate::http::State;

const OAUTH_COOKIE: &str = "so_oauth";
/// GitHub's authorization codes last 10 minutes.
const OAUTH_TTL: i64 = 600;
/// The flow's state in the cookie and the store.
const OAUTH_PURPOSE: &str = "oauth";
const TITLE: &str = "Sign in with GitHub";

fn query_pairs(query: Option<&str>) -> Vec<(String, String)> {
    serde_urlencoded::from_str(query.unwrap_or("")).unwrap_or_default()
}

pub(super) fn param<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// A path on this server to return to (never another site: `//host`, a
/// scheme or a backslash is refused).
pub(crate) fn local_path(next: Option<&str>) -> String {
    match next {
        Some(p)
            if p.starts_with('/')
                && !p.starts_with("//")
                && !p.contains('\\')
                && !p.chars().any(|c| c.is_whitespace() || c.is_control()) =>
        {
            p.to_string()
        }
        _ => "/".to_string(),
    }
}

pub(super) fn secure(auth: &Auth) -> bool {
    auth.options.public_url.starts_with("https://")
}

pub(super) fn with_cookie(mut resp: Response, cookie: &str) -> Response {
    if let Ok(v) = HeaderValue::from_str(cookie) {
        resp.headers_mut().append(header::SET_COOKIE, v);
    }
    resp
}

pub(super) fn redirect(to: &str) -> Response {
    let mut resp = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(to) {
        resp.headers_mut().insert(header::LOCATION, v);
    }
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

fn not_configured() -> Response {
    message(
        StatusCode::SERVICE_UNAVAILABLE,
        TITLE,
        "Sign-in with GitHub is not configured on this server: set GITHUB_CLIENT_ID and \
         GITHUB_CLIENT_SECRET (the setup page writes them to .env).",
    )
}

/// The sign-in settings and the OAuth app, when sign-in is configured.
fn oauth_of(state: &State) -> Option<(&Auth, &super::OAuthApp)> {
    let auth = &state.auth;
    Some((auth, auth.options.oauth.as_ref()?))
}

/// `GET /auth/login/github?next=/path`: off to GitHub's authorize page.
pub async fn login(
    StateExtractor(state): StateExtractor<State>,
    RawQuery(q): RawQuery,
) -> Response {
    let Some((auth, oauth)) = oauth_of(&state) else {
        return not_configured();
    };
    let next = local_path(param(&query_pairs(q.as_deref()), "next"));
    let verifier = signed::random_token();
    let flow = Flow::OAuth {
        verifier: verifier.clone(),
        next,
    };
    let ttl = std::time::Duration::from_secs(OAUTH_TTL as u64);
    let csrf_state = match flows::start(&auth.store, &flow, ttl) {
        Ok(s) => s,
        Err(e) => return super::store_error(e).into_response(),
    };
    let redirect_uri = format!("{}/auth/callback", auth.options.public_url);
    let target = format!(
        "{}/login/oauth/authorize?{}",
        auth.options.web_url,
        serde_urlencoded::to_string([
            ("client_id", oauth.client_id.as_str()),
            ("redirect_uri", redirect_uri.as_str()),
            ("state", csrf_state.as_str()),
            ("code_challenge", signed::pkce_challenge(&verifier).as_str()),
            ("code_challenge_method", "S256"),
        ])
        .unwrap_or_default()
    );
    let sealed = auth
        .key
        .seal(OAUTH_PURPOSE, &csrf_state, signed::now() + OAUTH_TTL);
    with_cookie(
        redirect(&target),
        &signed::set_cookie(OAUTH_COOKIE, &sealed, OAUTH_TTL, secure(auth)),
    )
}

/// `GET /auth/callback?code=…&state=…`: GitHub's redirect after authorizing.
pub async fn callback(
    StateExtractor(state): StateExtractor<State>,
    headers: HeaderMap,
    RawQuery(q): RawQuery,
) -> Response {
    let Some((auth, oauth)) = oauth_of(&state) else {
        return not_configured();
    };
    let pairs = query_pairs(q.as_deref());
    if let Some(error) = param(&pairs, "error") {
        return message(
            StatusCode::FORBIDDEN,
            TITLE,
            &format!("GitHub did not sign you in: {error}."),
        );
    }
    let expected =
        signed::cookie(&headers, OAUTH_COOKIE).and_then(|c| auth.key.open(OAUTH_PURPOSE, &c).ok());
    let Some(expected) = expected else {
        return message(
            StatusCode::FORBIDDEN,
            TITLE,
            "This sign-in was not started in this browser, or took longer than 10 minutes: sign in again.",
        );
    };
    let given = param(&pairs, "state").unwrap_or("");
    if expected.is_empty() || !signed::same(&expected, given) {
        return message(
            StatusCode::FORBIDDEN,
            TITLE,
            "The state does not match: sign in again.",
        );
    }
    // Single use: whoever comes back with this state first takes the flow.
    let spent = "This sign-in was already used, or took longer than 10 minutes: sign in again.";
    let oauth_flow = |f| match f {
        Flow::OAuth { verifier, next } => Some((verifier, next)),
        Flow::Setup => None,
    };
    let (verifier, next) = match flows::finish_page(&auth.store, given, oauth_flow, (TITLE, spent))
    {
        Ok(taken) => taken,
        Err(refused) => return *refused,
    };
    let Some(code) = param(&pairs, "code").filter(|c| !c.is_empty()) else {
        return message(
            StatusCode::BAD_REQUEST,
            TITLE,
            "GitHub's redirect carries no code.",
        );
    };
    let redirect_uri = format!("{}/auth/callback", auth.options.public_url);
    let signed_in = async {
        let token = github_web::exchange_code(
            &auth.http,
            &auth.options.web_url,
            oauth,
            code,
            &redirect_uri,
            &verifier,
        )
        .await?;
        let (login, id) =
            github_web::user(&auth.http, &auth.options.api_url, &token.access_token).await?;
        Ok::<_, github_web::WebError>((login, id, token.access_token))
    }
    .await;
    let (login, id, token) = match signed_in {
        Ok(v) => v,
        Err(e) => {
            let status = match e {
                github_web::WebError::Unavailable(_) => StatusCode::BAD_GATEWAY,
                _ => StatusCode::FORBIDDEN,
            };
            return message(status, TITLE, &format!("GitHub did not sign you in: {e}"));
        }
    };
    tracing::info!(%login, "signed in with GitHub");
    let cookie = match auth.open_session(Who::github(login, id, token)) {
        Ok(c) => c,
        Err(e) => return e.into_response(),
    };
    let resp = with_cookie(redirect(&local_path(Some(&next))), &cookie);
    with_cookie(resp, &signed::clear_cookie(OAUTH_COOKIE, secure(auth)))
}

/// `GET /auth/logout`: the sign-out form (a POST with the CSRF token).
pub(crate) async fn logout_page(
    StateExtractor(state): StateExtractor<State>,
    headers: HeaderMap,
) -> Response {
    let auth = &state.auth;
    match auth.session(&headers) {
        Ok(Some(s)) => page(
            StatusCode::OK,
            "Sign out",
            &format!(
                "<p>Signed in as <strong>{}</strong>.</p>\
                 <form action=\"/auth/logout\" method=\"post\">\
                 <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
                 <button type=\"submit\">Sign out</button></form>\
                 <form action=\"/auth/logout/everywhere\" method=\"post\">\
                 <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
                 <p>Signed in elsewhere too (another browser, a lost laptop)?</p>\
                 <button type=\"submit\">Sign out everywhere</button></form>",
                esc(&s.login),
                csrf = esc(&auth.key.csrf(&s.id))
            ),
        ),
        _ => page(
            StatusCode::OK,
            "Sign out",
            "<p>You are not signed in. <a href=\"/auth/login\">Sign in</a>.</p>",
        ),
    }
}

/// `POST /auth/logout` with `csrf=…`: end the session.
pub async fn logout(
    StateExtractor(state): StateExtractor<State>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    sign_out(&state.auth, &headers, &body, false)
}

/// `POST /auth/logout/everywhere` with `csrf=…`: end every session of the
/// account (every browser, every replica).
pub(crate) async fn logout_everywhere(
    StateExtractor(state): StateExtractor<State>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    sign_out(&state.auth, &headers, &body, true)
}

/// End the request's session, or (`everywhere`) all of its account's.
fn sign_out(auth: &Auth, headers: &HeaderMap, body: &Bytes, everywhere: bool) -> Response {
    let clear = signed::clear_cookie(SESSION_COOKIE, secure(auth));
    let session = match auth.session(headers) {
        Ok(Some(s)) => s,
        _ => return with_cookie(redirect("/"), &clear),
    };
    let form: Vec<(String, String)> = serde_urlencoded::from_bytes(body).unwrap_or_default();
    let given = param(&form, "csrf").unwrap_or("");
    if !auth.key.csrf_matches(&session.id, given) {
        return message(
            StatusCode::FORBIDDEN,
            "Sign out",
            "The form's CSRF token does not match this session.",
        );
    }
    let ended = match everywhere {
        true => auth.sessions.end_account(&session.account()),
        false => auth.sessions.remove(&session.id).map(|()| 1),
    };
    match ended {
        Ok(n) => tracing::info!(login = %session.login, sessions = n, everywhere, "signed out"),
        Err(e) => return super::store_error(e).into_response(),
    }
    with_cookie(redirect("/"), &clear)
}

/// The `Set-Cookie` value of a new session `sid`: sealed, expiring with it.
pub(super) fn session_cookie(auth: &Auth, sid: &str, ttl: std::time::Duration) -> String {
    signed::set_cookie(
        SESSION_COOKIE,
        &auth
            .key
            .seal("session", sid, signed::now() + ttl.as_secs() as i64),
        ttl.as_secs() as i64,
        secure(auth),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_local_paths_are_returned_to() {
        assert_eq!(
            local_path(Some("/workflows?repo=a/b")),
            "/workflows?repo=a/b"
        );
        for bad in [
            "//evil.example",
            "https://evil.example",
            "/\\evil",
            "evil",
            "/a b",
        ] {
            assert_eq!(local_path(Some(bad)), "/", "{bad}");
        }
        assert_eq!(local_path(None), "/");
    }
}
