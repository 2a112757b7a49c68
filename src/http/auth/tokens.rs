//! Read tokens for machines (a Grafana, a script) that should see one
//! installation's numbers and no more. A viewer signed in with GitHub issues
//! one on `GET /auth/tokens` (a POST form with the session's CSRF token) for
//! an installation they can see some repositories of.
//!
//! A token is `soi_` + 32 random bytes; the store keeps (space `Token`, under
//! the token's SHA-256, grouped by issuer) who issued it, for which
//! installation, **the repositories the issuer could see in it then**, and
//! its expiry (`TOKEN_TTL_DAYS`). At each read its scope is
//! - those repositories,
//! - that are still the installation's (and the installation still active),
//! - and that the issuer can still see: what their account was last seen
//!   to see (`note_access`: each time a signed-in account's repositories
//!   are asked of GitHub, the store keeps them) while younger than the
//!   scope's cache and made under the current access epoch
//!   (`access::epoch`); else asked of GitHub again with one of the issuer's
//!   live sessions; with none, asked of GitHub with the installation token
//!   (`issuer`: their access to each repository, at most every `RECHECK`).
//!   A token never sees what its issuer has since lost, and never reads
//!   on what was last seen when GitHub cannot be asked.
//!
//! So a repository added to the installation later stays invisible, and
//! nothing outside the issuer's view ever shows. Nothing about a token can be
//! made offline: it is random, known to the store only by its digest.
//! Tokens are listed on `/auth/tokens` (the issuer's own; the operator's
//! session lists all) and revoked one by one (`POST /auth/tokens/revoke`);
//! every issuing and revoking is recorded (space `Audit`, a year) and logged.

use std::collections::BTreeSet;

use axum::body::Bytes;
use axum::extract::State as StateExtractor;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::Response;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::page::{esc, message, page_for};
use super::sessions::{self, account, Session, SessionKind, ViewerScope};
use super::{access, github_web, issuer, signed, store_error, Auth};
use crate::github::installations::{installation, repos_of, InstallationStatus};
use crate::http::shell::Viewer;
use crate::http::{ApiError, State};
use crate::store::{Space, Store};

pub(crate) const PREFIX: &str = "soi_";
pub(crate) const TOKEN_TTL_DAYS: i64 = 30;
/// How long the audit of a token stays.
const AUDIT_DAYS: i64 = 365;
/// Tokens one issuer may hold at once.
pub(crate) const PER_ISSUER: usize = 50;
/// Rows of tokens and audit events a page shows.
const LISTED: usize = 500;
const TITLE: &str = "Read tokens";

/// An issued token, as stored.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct TokenRecord {
    pub installation: u64,
    #[serde(default)]
    pub account: String,
    pub issuer_login: String,
    pub issuer_id: u64,
    /// What the issuer could see of the installation when it was issued.
    pub repos: BTreeSet<String>,
    pub issued_at: DateTime<Utc>,
}

/// What an account was last seen to see (space `Access`, by account id).
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Access {
    at: DateTime<Utc>,
    scope: ViewerScope,
    /// The access epoch it was seen under (`access::epoch`).
    #[serde(default)]
    epoch: u64,
}

/// One issuing or revoking, as recorded.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct AuditEvent {
    pub at: DateTime<Utc>,
    /// `issued` or `revoked`.
    pub action: String,
    /// The token's short id (the first 12 hex digits of its digest).
    pub token: String,
    pub installation: u64,
    pub issuer: String,
    /// Who did it.
    pub by: String,
}

/// The short id of a token's digest, as pages and logs show it.
fn short(digest: &str) -> &str {
    &digest[..digest.len().min(12)]
}

fn expiry(days: i64) -> DateTime<Utc> {
    Utc::now() + chrono::Duration::days(days)
}

/// Keep what account `user_id` can see now (asked under the access epoch
/// `epoch`), for its tokens' reads.
pub(crate) fn note_access(
    store: &Store,
    user_id: u64,
    scope: &ViewerScope,
    epoch: u64,
) -> crate::store::Result<()> {
    let access = Access {
        at: Utc::now(),
        scope: scope.clone(),
        epoch,
    };
    store.put_expiring(
        Space::Access,
        &user_id.to_string(),
        None,
        expiry(TOKEN_TTL_DAYS),
        &access,
    )
}

/// Record an issuing or revoking in the store and the log.
fn audit(store: &Store, event: &AuditEvent, issuer_group: &str) -> crate::store::Result<()> {
    tracing::info!(
        action = %event.action, token = %event.token, installation = event.installation,
        issuer = %event.issuer, by = %event.by, "read token {}", event.action
    );
    let id = format!(
        "{:020}-{}",
        event.at.timestamp_micros(),
        short(&signed::random_token())
    );
    store.put_expiring(
        Space::Audit,
        &id,
        Some(issuer_group),
        expiry(AUDIT_DAYS),
        event,
    )
}

/// Issue a token for `installation`'s repositories `repos` (what the
/// session's account sees of it) and record it; the token, shown once.
pub fn issue(
    store: &Store,
    session: &Session,
    installation: u64,
    account_login: &str,
    repos: BTreeSet<String>,
) -> crate::store::Result<String> {
    let group = session.account();
    // An issuer's oldest tokens make way beyond `PER_ISSUER`.
    let mine = store.expiring_ids(Space::Token, Some(&group), PER_ISSUER + 1)?;
    for old in mine
        .iter()
        .take((mine.len() + 1).saturating_sub(PER_ISSUER))
    {
        revoke(store, old, &session.login)?;
    }
    let token = format!("{PREFIX}{}", signed::random_token());
    let digest = signed::digest(&token);
    let record = TokenRecord {
        installation,
        account: account_login.to_string(),
        issuer_login: session.login.clone(),
        issuer_id: session.user_id,
        repos,
        issued_at: Utc::now(),
    };
    store.put_expiring(
        Space::Token,
        &digest,
        Some(&group),
        expiry(TOKEN_TTL_DAYS),
        &record,
    )?;
    let event = AuditEvent {
        at: record.issued_at,
        action: "issued".into(),
        token: short(&digest).to_string(),
        installation,
        issuer: session.login.clone(),
        by: session.login.clone(),
    };
    audit(store, &event, &group)?;
    Ok(token)
}

/// Revoke the token with digest `digest` (by `by`); false if there was none.
pub fn revoke(store: &Store, digest: &str, by: &str) -> crate::store::Result<bool> {
    let Some(found) = store.expiring::<TokenRecord>(Space::Token, digest, Utc::now())? else {
        return store.remove_expiring(Space::Token, digest);
    };
    store.remove_expiring(Space::Token, digest)?;
    let record = found.value;
    let event = AuditEvent {
        at: Utc::now(),
        action: "revoked".into(),
        token: short(digest).to_string(),
        installation: record.installation,
        issuer: record.issuer_login.clone(),
        by: by.to_string(),
    };
    audit(
        store,
        &event,
        &account(SessionKind::GitHub, record.issuer_id),
    )?;
    Ok(true)
}

/// The bearer token of a request, if it is a read token (and not the API
/// token).
fn installation_bearer<'a>(headers: &'a HeaderMap, api_token: Option<&str>) -> Option<&'a str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim_start().split_once(' ')?;
    let token = token.trim();
    let is_api_token = api_token.is_some_and(|t| !t.is_empty() && signed::same(t, token));
    (scheme.eq_ignore_ascii_case("bearer") && token.starts_with(PREFIX) && !is_api_token)
        .then_some(token)
}

/// The repositories `record` was issued for that are still its
/// installation's (a 401 when the installation is no longer active).
pub(crate) fn candidates(
    store: &Store,
    record: &TokenRecord,
) -> Result<BTreeSet<String>, ApiError> {
    let id = record.installation;
    let active = installation(store, id)?.is_some_and(|r| r.status == InstallationStatus::Active);
    if !active {
        return Err(ApiError::unauthorized(format!(
            "installation {id} is no longer active"
        )));
    }
    let current: BTreeSet<String> = repos_of(store, id)?
        .into_iter()
        .map(|r| r.to_ascii_lowercase())
        .collect();
    Ok(record.repos.intersection(&current).cloned().collect())
}

/// Of `candidates`, those `scope` (an account's view) shows in the token's
/// installation.
fn seen_in(
    record: &TokenRecord,
    candidates: &BTreeSet<String>,
    scope: &ViewerScope,
) -> BTreeSet<String> {
    let seen = scope.get(&record.installation);
    candidates
        .iter()
        .filter(|r| seen.is_some_and(|s| s.contains(*r)))
        .cloned()
        .collect()
}

/// What the issuer of `record` was last seen to see, when it is still
/// good: seen since the token was issued, under the access epoch `epoch`,
/// within the scope's cache.
fn fresh_access(
    auth: &Auth,
    record: &TokenRecord,
    epoch: u64,
) -> Result<Option<ViewerScope>, ApiError> {
    let now = Utc::now();
    let ttl = chrono::Duration::from_std(auth.options.scope_ttl).unwrap_or_default();
    Ok(auth
        .store
        .expiring::<Access>(Space::Access, &record.issuer_id.to_string(), now)
        .map_err(store_error)?
        .map(|a| a.value)
        .filter(|a| a.at >= record.issued_at && a.epoch == epoch && now - a.at < ttl)
        .map(|a| a.scope))
}

/// What the issuer of `record` sees, asked of GitHub with their newest
/// live session; `None` when they have none GitHub accepts, or GitHub
/// cannot say.
async fn ask_with_session(
    auth: &Auth,
    record: &TokenRecord,
    epoch: u64,
) -> Result<Option<ViewerScope>, ApiError> {
    let group = account(SessionKind::GitHub, record.issuer_id);
    let digests = auth
        .store
        .expiring_ids(Space::Session, Some(&group), sessions::PER_ACCOUNT + 1)
        .map_err(store_error)?;
    for digest in digests.iter().rev() {
        let Some(token) = auth.sessions.github_token(digest).map_err(store_error)? else {
            continue;
        };
        match github_web::viewer_repos(&auth.http, &auth.options.api_url, &token).await {
            Ok(scope) => {
                note_access(&auth.store, record.issuer_id, &scope, epoch).map_err(store_error)?;
                return Ok(Some(scope));
            }
            Err(github_web::WebError::Unauthorized(_)) => continue,
            Err(e) => {
                tracing::warn!(error = %e, issuer = %record.issuer_login, "could not ask GitHub what a token's issuer sees with their session; asking with the installation token");
                break;
            }
        }
    }
    Ok(None)
}

/// The repositories `record` may read now (see the module's docs): its
/// candidates, narrowed to what its issuer sees — as last seen if fresh,
/// else asked with their session, else with the installation token.
pub(crate) async fn scope_now(
    auth: &Auth,
    record: &TokenRecord,
) -> Result<BTreeSet<String>, ApiError> {
    let candidates = candidates(&auth.store, record)?;
    let epoch = access::epoch(&auth.store).map_err(store_error)?;
    if let Some(scope) = fresh_access(auth, record, epoch)? {
        return Ok(seen_in(record, &candidates, &scope));
    }
    if let Some(scope) = ask_with_session(auth, record, epoch).await? {
        return Ok(seen_in(record, &candidates, &scope));
    }
    let how = issuer::Recheck {
        github: auth.github.as_deref(),
        every: auth.options.issuer_recheck,
        epoch,
    };
    issuer::still_accessible(&auth.store, &how, record, &candidates)
        .await
        .map_err(|e| {
            ApiError::unavailable(format!(
                "the read token's issuer could not be re-checked ({e}); try again later"
            ))
        })
}

/// The bearer token of a request, if it is a read token (and not the API
/// token), with its record; a 401 when it is unknown (made up, revoked) or
/// expired.
pub(crate) fn bearer_record(
    auth: &Auth,
    headers: &HeaderMap,
    api_token: Option<&str>,
) -> Result<Option<TokenRecord>, ApiError> {
    let Some(token) = installation_bearer(headers, api_token) else {
        return Ok(None);
    };
    let record = auth
        .store
        .expiring::<TokenRecord>(Space::Token, &signed::digest(token), Utc::now())
        .map_err(store_error)?
        .ok_or_else(|| ApiError::unauthorized("read token refused: unknown, revoked or expired"))?
        .value;
    Ok(Some(record))
}

/// The scope of a read token in `headers`: `None` when the request carries
/// none; a 401 when it is unknown (made up, revoked), expired or its
/// installation is gone.
pub(crate) async fn scope_of_token(
    auth: &Auth,
    headers: &HeaderMap,
    api_token: Option<&str>,
) -> Result<Option<BTreeSet<String>>, ApiError> {
    let Some(record) = bearer_record(auth, headers, api_token)? else {
        return Ok(None);
    };
    scope_now(auth, &record).await.map(Some)
}

/// The repositories of installation `id` a viewer who sees `viewer` of it
/// may issue a token for: those this server knows as the installation's.
pub(crate) fn issuable(viewer: &BTreeSet<String>, known: &[String]) -> BTreeSet<String> {
    known
        .iter()
        .map(|r| r.to_ascii_lowercase())
        .filter(|r| viewer.contains(r))
        .collect()
}

/// The signed-in session of a tokens page, or a 401.
fn session_of(auth: &Auth, headers: &HeaderMap) -> Result<Session, ApiError> {
    auth.session(headers)?
        .ok_or_else(|| ApiError::unauthorized("not signed in"))
}

/// `GET /auth/tokens`: the viewer's installations with a form to issue a
/// token for each, their tokens (all tokens for the operator) with a
/// revoke button each, and the recent audit.
pub(crate) async fn page_of_tokens(
    StateExtractor(state): StateExtractor<State>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let auth = &state.auth;
    let session = session_of(auth, &headers)?;
    let csrf = auth.key.csrf(&session.id);
    let mut body = String::new();
    if session.kind == SessionKind::GitHub {
        body.push_str(&issue_forms(auth, &state.store, &session, &csrf).await?);
    }
    body.push_str(&listed_tokens(&state.store, &session, &csrf)?);
    body.push_str(&recent_audit(&state.store, &session)?);
    Ok(page_for(
        StatusCode::OK,
        TITLE,
        &body,
        &signed_in(&session, csrf),
    ))
}

/// The viewer of a tokens page, for the navigation ("who is signed in").
fn signed_in(session: &Session, csrf: String) -> Viewer {
    Viewer::Session {
        login: session.login.clone(),
        local: session.kind == SessionKind::Local,
        csrf,
    }
}

/// A form per installation the viewer sees some repositories of.
async fn issue_forms(
    auth: &Auth,
    store: &Store,
    session: &Session,
    csrf: &str,
) -> Result<String, ApiError> {
    let mine = auth.installations_of(session).await?;
    let mut rows = String::new();
    for (id, repos) in &mine {
        let known = repos_of(store, *id)?;
        let account = installation(store, *id)?
            .and_then(|r| r.account)
            .unwrap_or_default();
        let covered = issuable(repos, &known);
        let action = if covered.is_empty() {
            "<p>None of its repositories this server knows is visible to you: no token.</p>"
                .to_string()
        } else {
            format!(
                "<form action=\"/auth/tokens\" method=\"post\">\
                 <input type=\"hidden\" name=\"csrf\" value=\"{}\">\
                 <input type=\"hidden\" name=\"installation\" value=\"{id}\">\
                 <button type=\"submit\">Issue a read token for these {}</button></form>",
                esc(csrf),
                covered.len()
            )
        };
        rows.push_str(&format!(
            "<li><strong>{}</strong> (installation {id}): you see {} of the {} repositories \
             this server knows.{action}</li>",
            esc(&account),
            covered.len(),
            known.len()
        ));
    }
    if rows.is_empty() {
        rows.push_str("<li>None of the App's installations is visible to your account.</li>");
    }
    Ok(format!(
        "<p>A read token reads the API (<code>Authorization: Bearer …</code>) for {TOKEN_TTL_DAYS} \
         days: only the repositories of one installation you can see when you issue it, and of \
         those only the ones you can still see.</p><h2>Issue</h2><ul>{rows}</ul>"
    ))
}

/// The tokens the viewer may revoke: their own, or every one for the
/// operator.
fn listed_tokens(store: &Store, session: &Session, csrf: &str) -> Result<String, ApiError> {
    let now = Utc::now();
    let group = session.account();
    let ids = match session.kind.sees_everything() {
        true => store.expiring_ids(Space::Token, None, LISTED),
        false => store.expiring_ids(Space::Token, Some(&group), LISTED),
    }
    .map_err(store_error)?;
    let mut rows = String::new();
    for id in ids {
        let Some(t) = store
            .expiring::<TokenRecord>(Space::Token, &id, now)
            .map_err(store_error)?
        else {
            continue;
        };
        rows.push_str(&format!(
            "<tr><td><code>{short}</code></td><td>{account} ({inst})</td><td>{n}</td>\
             <td>{issuer}</td><td>{issued}</td><td>{expires}</td><td>\
             <form action=\"/auth/tokens/revoke\" method=\"post\">\
             <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
             <input type=\"hidden\" name=\"token\" value=\"{id}\">\
             <button type=\"submit\">Revoke</button></form></td></tr>",
            short = esc(short(&id)),
            account = esc(&t.value.account),
            inst = t.value.installation,
            n = t.value.repos.len(),
            issuer = esc(&t.value.issuer_login),
            issued = t.value.issued_at.format("%Y-%m-%d %H:%M UTC"),
            expires = t.expires.format("%Y-%m-%d"),
            csrf = esc(csrf),
            id = esc(&id),
        ));
    }
    if rows.is_empty() {
        return Ok("<h2>Tokens</h2><p>No live tokens.</p>".into());
    }
    Ok(format!(
        "<h2>Tokens</h2><table><thead><tr><th>token</th><th>installation</th>\
         <th>repositories</th><th>issuer</th><th>issued</th><th>expires</th><th></th></tr>\
         </thead><tbody>{rows}</tbody></table>"
    ))
}

/// The latest issuings and revokings the viewer may see, newest first.
fn recent_audit(store: &Store, session: &Session) -> Result<String, ApiError> {
    let group = session.account();
    let group = (!session.kind.sees_everything()).then_some(group.as_str());
    let now = Utc::now();
    let mut events: Vec<AuditEvent> = Vec::new();
    for id in store
        .expiring_ids(Space::Audit, group, LISTED)
        .map_err(store_error)?
    {
        if let Some(e) = store
            .expiring::<AuditEvent>(Space::Audit, &id, now)
            .map_err(store_error)?
        {
            events.push(e.value);
        }
    }
    events.sort_by_key(|e| std::cmp::Reverse(e.at));
    let rows: String = events
        .iter()
        .take(50)
        .map(|e| {
            format!(
                "<li>{} — token <code>{}</code> (installation {}, issuer {}) {} by {}</li>",
                e.at.format("%Y-%m-%d %H:%M:%S UTC"),
                esc(&e.token),
                e.installation,
                esc(&e.issuer),
                esc(&e.action),
                esc(&e.by)
            )
        })
        .collect();
    if rows.is_empty() {
        return Ok(String::new());
    }
    Ok(format!("<h2>Recorded</h2><ul>{rows}</ul>"))
}

/// The fields of a form post.
fn form_of(body: &Bytes) -> Vec<(String, String)> {
    serde_urlencoded::from_bytes(body).unwrap_or_default()
}

fn field<'a>(form: &'a [(String, String)], name: &str) -> &'a str {
    super::signin::param(form, name).unwrap_or("")
}

/// A form post on the tokens page whose CSRF token matched its session.
type Checked = (Session, Vec<(String, String)>);

/// The session and fields of a form post on the tokens page, or the
/// page that refuses it (no session: 401; another CSRF token: 403).
fn checked_form(
    auth: &Auth,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<Result<Checked, Response>, ApiError> {
    let session = session_of(auth, headers)?;
    let form = form_of(body);
    if !auth.key.csrf_matches(&session.id, field(&form, "csrf")) {
        return Ok(Err(message(
            StatusCode::FORBIDDEN,
            TITLE,
            "The form's CSRF token does not match this session.",
        )));
    }
    Ok(Ok((session, form)))
}

/// `POST /auth/tokens` with `csrf` and `installation`: show a new token once.
pub async fn issue_token(
    StateExtractor(state): StateExtractor<State>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let auth = &state.auth;
    let (session, form) = match checked_form(auth, &headers, &body)? {
        Ok(checked) => checked,
        Err(refused) => return Ok(refused),
    };
    let Ok(id) = field(&form, "installation").parse::<u64>() else {
        return Err(ApiError::bad_request("installation must be an id"));
    };
    if session.kind != SessionKind::GitHub {
        return Ok(message(
            StatusCode::FORBIDDEN,
            TITLE,
            "Read tokens are issued by accounts signed in with GitHub: a token is bound to what its issuer can see.",
        ));
    }
    let mine = auth.installations_of(&session).await?;
    let known = repos_of(&state.store, id)?;
    let covered = mine
        .get(&id)
        .map(|repos| issuable(repos, &known))
        .unwrap_or_default();
    if covered.is_empty() {
        return Ok(message(
            StatusCode::FORBIDDEN,
            TITLE,
            "You cannot see any repository of this installation, so you cannot issue its token.",
        ));
    }
    let account = installation(&state.store, id)?
        .and_then(|r| r.account)
        .unwrap_or_default();
    let n = covered.len();
    let token = issue(&state.store, &session, id, &account, covered).map_err(store_error)?;
    Ok(page_for(
        StatusCode::OK,
        TITLE,
        &format!(
            "<p>Read token for installation {id}, {n} repositories (shown once; valid \
             {TOKEN_TTL_DAYS} days):</p><p><code>{}</code></p>\
             <p><a href=\"/auth/tokens\">Back to the tokens</a></p>",
            esc(&token)
        ),
        &signed_in(&session, state.auth.key.csrf(&session.id)),
    ))
}

/// `POST /auth/tokens/revoke` with `csrf` and `token` (a token's digest, as
/// the list gives it): revoke it, if it is the viewer's (any, for the
/// operator).
pub(crate) async fn revoke_token(
    StateExtractor(state): StateExtractor<State>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let (session, form) = match checked_form(&state.auth, &headers, &body)? {
        Ok(checked) => checked,
        Err(refused) => return Ok(refused),
    };
    let digest = field(&form, "token");
    let record = state
        .store
        .expiring::<TokenRecord>(Space::Token, digest, Utc::now())
        .map_err(store_error)?;
    let allowed = record.as_ref().is_some_and(|t| {
        session.kind.sees_everything()
            || (session.kind == SessionKind::GitHub && t.value.issuer_id == session.user_id)
    });
    if !allowed {
        return Ok(message(
            StatusCode::NOT_FOUND,
            TITLE,
            "No such token of yours (already revoked or expired?).",
        ));
    }
    revoke(&state.store, digest, &session.login).map_err(store_error)?;
    Ok(page_for(
        StatusCode::OK,
        TITLE,
        &format!(
            "<p>Token <code>{}</code> is revoked: it reads nothing from now on, on every replica.</p>\
             <p><a href=\"/auth/tokens\">Back to the tokens</a></p>",
            esc(short(digest))
        ),
        &signed_in(&session, state.auth.key.csrf(&session.id)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_covers_only_what_its_issuer_sees_of_the_known_repositories() {
        let viewer: BTreeSet<String> = ["acme/a".into(), "acme/b".into()].into();
        assert_eq!(
            issuable(
                &viewer,
                &["acme/a".into(), "Acme/B".into(), "acme/c".into()]
            ),
            ["acme/a".to_string(), "acme/b".to_string()].into()
        );
        assert!(issuable(&viewer, &["acme/c".into()]).is_empty());
        assert!(issuable(&viewer, &[]).is_empty());
    }
}
