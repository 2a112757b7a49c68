//! Read tokens scoped to one installation, for machines that should see one
//! organization's numbers and no more (a Grafana, a script). A signed-in
//! viewer issues one from `GET /auth/tokens` (a POST form with the session's
//! CSRF token) for an installation **all of whose known repositories they
//! can see** on GitHub, so a token never shows more than its issuer could.
//!
//! The token is `soi_` + a value signed like the cookies (purpose
//! `installation-token`): the installation id, the issuer's login and an
//! expiry (`TOKEN_TTL_DAYS`). Nothing is stored: a token is valid while its
//! signature and expiry hold and the installation is active; its scope is the
//! installation's repositories as this server knows them at read time.
//! Changing `SESSION_SECRET` revokes every token (without a configured
//! secret, tokens die with the process).

use std::collections::BTreeSet;

use axum::body::Bytes;
use axum::extract::State as StateExtractor;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::Response;

use super::page::{esc, message, page_for};
use super::{signed, Auth};
use crate::github::installations::{installation, repos_of, InstallationStatus};
use crate::http::dashboard::shell::Viewer;
use crate::http::{ApiError, State};
use crate::store::Store;

pub const PREFIX: &str = "soi_";
pub const TOKEN_TTL_DAYS: i64 = 30;
const PURPOSE: &str = "installation-token";
const TITLE: &str = "Installation tokens";

/// A new token for `installation`, issued by `login`.
pub fn issue(auth: &Auth, installation: u64, login: &str) -> String {
    let expires = signed::now() + TOKEN_TTL_DAYS * 86_400;
    format!(
        "{PREFIX}{}",
        auth.key
            .seal(PURPOSE, &format!("{installation}:{login}"), expires)
    )
}

/// The bearer token of a request, if it is an installation token (and not
/// the API token).
fn installation_bearer<'a>(headers: &'a HeaderMap, api_token: Option<&str>) -> Option<&'a str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim_start().split_once(' ')?;
    let token = token.trim();
    let is_api_token = api_token.is_some_and(|t| !t.is_empty() && signed::same(t, token));
    (scheme.eq_ignore_ascii_case("bearer") && token.starts_with(PREFIX) && !is_api_token)
        .then_some(token)
}

/// The scope of an installation token in `headers`: `None` when the request
/// carries none; a 401 when it is forged, expired or its installation is
/// gone.
pub fn scope_of_token(
    auth: &Auth,
    store: &Store,
    headers: &HeaderMap,
    api_token: Option<&str>,
) -> Result<Option<BTreeSet<String>>, ApiError> {
    let Some(token) = installation_bearer(headers, api_token) else {
        return Ok(None);
    };
    let value = auth
        .key
        .open(PURPOSE, &token[PREFIX.len()..])
        .map_err(|e| ApiError::unauthorized(format!("installation token refused: {e}")))?;
    let id: u64 = value
        .split(':')
        .next()
        .and_then(|i| i.parse().ok())
        .ok_or_else(|| ApiError::unauthorized("installation token refused: malformed"))?;
    let active = installation(store, id)?.is_some_and(|r| r.status == InstallationStatus::Active);
    if !active {
        return Err(ApiError::unauthorized(format!(
            "installation {id} is no longer active"
        )));
    }
    Ok(Some(
        repos_of(store, id)?
            .into_iter()
            .map(|r| r.to_ascii_lowercase())
            .collect(),
    ))
}

/// May a viewer who sees `viewer` issue a token for an installation whose
/// known repositories are `known`? Only if they see every one.
pub fn may_issue(viewer: &BTreeSet<String>, known: &[String]) -> bool {
    !known.is_empty()
        && known
            .iter()
            .all(|r| viewer.contains(&r.to_ascii_lowercase()))
}

/// `GET /auth/tokens`: the viewer's installations, with a form for each one
/// they may issue a token for.
pub async fn page_of_tokens(
    StateExtractor(state): StateExtractor<State>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let auth = &state.auth;
    let session = auth
        .session(&headers)?
        .ok_or_else(|| ApiError::unauthorized("not signed in"))?;
    let mine = auth.installations_of(&session).await?;
    let csrf = auth.key.csrf(&session.id);
    let mut rows = String::new();
    for (id, repos) in &mine {
        let known = repos_of(&state.store, *id)?;
        let account = installation(&state.store, *id)?
            .and_then(|r| r.account)
            .unwrap_or_default();
        let action = if may_issue(repos, &known) {
            format!(
                "<form action=\"/auth/tokens\" method=\"post\">\
                 <input type=\"hidden\" name=\"csrf\" value=\"{}\">\
                 <input type=\"hidden\" name=\"installation\" value=\"{id}\">\
                 <button type=\"submit\">Issue a read token</button></form>",
                esc(&csrf)
            )
        } else {
            "<p>You cannot see all of its repositories: no token.</p>".to_string()
        };
        rows.push_str(&format!(
            "<li><strong>{}</strong> (installation {id}): you see {} of the {} repositories \
             this server knows.{action}</li>",
            esc(&account),
            repos.len(),
            known.len()
        ));
    }
    if rows.is_empty() {
        rows.push_str("<li>None of the App's installations is visible to your account.</li>");
    }
    Ok(page_for(
        StatusCode::OK,
        TITLE,
        &format!(
            "<p>A token reads the API (<code>Authorization: Bearer …</code>) for one \
             installation's repositories, for {TOKEN_TTL_DAYS} days.</p><ul>{rows}</ul>"
        ),
        &signed_in(&session.login, csrf),
    ))
}

/// The viewer of a tokens page, for the navigation.
fn signed_in(login: &str, csrf: String) -> Viewer {
    Viewer::Session {
        login: login.to_string(),
        local: false,
        csrf,
    }
}

/// `POST /auth/tokens` with `csrf` and `installation`: show a new token once.
pub async fn issue_token(
    StateExtractor(state): StateExtractor<State>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let auth = &state.auth;
    let session = auth
        .session(&headers)?
        .ok_or_else(|| ApiError::unauthorized("not signed in"))?;
    let form: Vec<(String, String)> = serde_urlencoded::from_bytes(&body).unwrap_or_default();
    let field = |k: &str| {
        form.iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
            .unwrap_or("")
    };
    if !auth.key.csrf_matches(&session.id, field("csrf")) {
        return Ok(message(
            StatusCode::FORBIDDEN,
            TITLE,
            "The form's CSRF token does not match this session.",
        ));
    }
    let Ok(id) = field("installation").parse::<u64>() else {
        return Err(ApiError::bad_request("installation must be an id"));
    };
    let mine = auth.installations_of(&session).await?;
    let known = repos_of(&state.store, id)?;
    let allowed = mine.get(&id).is_some_and(|repos| may_issue(repos, &known));
    if !allowed {
        return Ok(message(
            StatusCode::FORBIDDEN,
            TITLE,
            "You cannot see every repository of this installation, so you cannot issue its token.",
        ));
    }
    let token = issue(auth, id, &session.login);
    tracing::info!(login = %session.login, installation = id, "installation read token issued");
    Ok(page_for(
        StatusCode::OK,
        TITLE,
        &format!(
            "<p>Read token for installation {id} (shown once; valid {TOKEN_TTL_DAYS} days):</p>\
             <p><code>{}</code></p>",
            esc(&token)
        ),
        &signed_in(&session.login, auth.key.csrf(&session.id)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_issued_only_to_who_sees_every_repository() {
        let viewer: BTreeSet<String> = ["acme/a".into(), "acme/b".into()].into();
        assert!(may_issue(&viewer, &["acme/a".into(), "Acme/B".into()]));
        assert!(!may_issue(&viewer, &["acme/a".into(), "acme/c".into()]));
        assert!(!may_issue(&viewer, &[]));
    }
}
