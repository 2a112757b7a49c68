//! First run, like Probot — but only the operator can finish it. While the
//! App has no credentials, `serve` prints a one-time **setup key** in its
//! terminal (like Jupyter's token: a link `PUBLIC_URL/?setup_key=…`), kept in
//! the store so every replica takes the same one. `GET /` asks for that key;
//! with it (a signed cookie then remembers it for an hour) `/` is the setup
//! page, whose "Register GitHub App" button posts `app-manifest.json` (with
//! this server's `PUBLIC_URL` in the webhook, redirect and callback URLs) to
//! GitHub's manifest flow, for a personal account or an organization
//! (`/?org=LOGIN`). GitHub sends the browser back to
//! `GET /setup?code=…&state=…`; the state must match the signed, HttpOnly
//! cookie the page set, the browser must still hold the key, and the flow is
//! taken from the store (`flows`: single use, so a replayed state converts
//! nothing); the code is exchanged (`POST /app-manifests/{code}/conversions`)
//! and the credentials written to `.env` (`envfile`). The answer links to the
//! App's install page and asks for a restart, which loads `.env`. The key is
//! then spent, and `/` tells anyone only that an App was registered — not
//! which. Wrong keys are rate-limited per source (`login::Limiter`, counted apart
//! from the sign-in form's tokens); the right key is never refused for
//! another source's wrong ones.

use axum::extract::{Request, State as StateExtractor};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::flows::{self, Flow};
use super::login::{self, Secret, Source};
use super::page::{esc, message, page};
use super::signin::{redirect, with_cookie};
use super::{envfile, github_web, signed, Auth};
use crate::http::State;
use crate::store::Store;

/// The manifest in the repository root.
pub const MANIFEST: &str = include_str!("../../../app-manifest.json");
const SETUP_COOKIE: &str = "so_setup";
/// The cookie that remembers a browser gave the setup key.
const KEY_COOKIE: &str = "so_setup_key";
/// GitHub wants the three steps done within an hour.
const STATE_TTL: i64 = 3600;
/// Names in the store: the setup key, and the mark of a registered App.
const SETUP_KEY: &str = "setup-key";
const REGISTERED: &str = "registered-app";
const TITLE: &str = "Set up safe-outcomes";

/// The setup key, made (and kept in the store) by the first to ask.
pub fn setup_key(store: &Store) -> crate::store::Result<crate::settings::Secret> {
    let bytes = store.secret_or_create(SETUP_KEY, || {
        hex::encode(&signed::random_bytes()[..24]).into_bytes()
    })?;
    Ok(String::from_utf8_lossy(&bytes).into_owned().into())
}

/// A start without credentials: setup is open again (an App registered
/// before is forgotten: its credentials were not loaded); the setup key.
pub(crate) fn begin(store: &Store) -> crate::store::Result<crate::settings::Secret> {
    store.take_secret(REGISTERED)?;
    setup_key(store)
}

/// The link `serve` prints: the setup page, with the key.
pub(crate) fn setup_link(public_url: &str, key: &str) -> String {
    format!("{}/?setup_key={key}", public_url.trim_end_matches('/'))
}

/// True once an App was registered here (until the restart that loads it).
fn registered(store: &Store) -> bool {
    store.secret(REGISTERED).ok().flatten().is_some()
}

/// The App the setup registered.
#[derive(Clone, Debug)]
pub(crate) struct Registered {
    pub app_id: u64,
    pub name: String,
    pub html_url: String,
    pub written: envfile::Written,
}

/// `app-manifest.json` with this server's addresses filled in.
pub(crate) fn manifest(public_url: &str, webhook_path: &str) -> Value {
    let mut m: Value = serde_json::from_str(MANIFEST).expect("app-manifest.json is JSON");
    m["hook_attributes"]["url"] = Value::String(format!("{public_url}{webhook_path}"));
    m["redirect_url"] = Value::String(format!("{public_url}/setup"));
    m["callback_urls"] = serde_json::json!([format!("{public_url}/auth/callback")]);
    m
}

/// An organization login (GitHub: alphanumerics and single hyphens, ≤ 39).
fn valid_login(org: &str) -> bool {
    !org.is_empty()
        && org.len() <= 39
        && org.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && !org.starts_with('-')
}

/// Serve the setup page at `GET /` while the App has no credentials —
/// but to a signed-in viewer (the operator, signed in with the `API_TOKEN`)
/// `/` is the dashboard's overview, and the setup page is at its own link,
/// `SETUP_PAGE`, or `/` with the setup form's own
/// parameters. Any other request goes on to the router.
pub(crate) async fn intercept(
    StateExtractor(state): StateExtractor<State>,
    req: Request,
    next: Next,
) -> Response {
    if state.auth.setup_enabled() && req.method() == Method::GET && setup_page_asked(&state, &req) {
        let pairs: Vec<(String, String)> =
            serde_urlencoded::from_str(req.uri().query().unwrap_or("")).unwrap_or_default();
        let value = |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let org = value("org");
        return gate(
            &state.auth,
            &req,
            value("setup_key").as_deref(),
            org.as_deref(),
        );
    }
    next.run(req).await
}

/// `/` during setup: the key's form, the key taken, or the setup page.
fn gate(auth: &Auth, req: &Request, given: Option<&str>, org: Option<&str>) -> Response {
    let (headers, source) = (req.headers(), Source::of(req.extensions()));
    if registered(&auth.store) {
        return message(
            StatusCode::OK,
            TITLE,
            "A GitHub App was registered for this server. Its operator restarts \
             safe-outcomes serve to load its credentials.",
        );
    }
    let key = match setup_key(&auth.store) {
        Ok(k) => k,
        Err(e) => return super::store_error(e).into_response(),
    };
    if let Some(given) = given {
        // Compared first, in constant time; only this source's own wrong
        // keys can hold it back.
        let right = signed::same(key.expose_secret(), given);
        if let Some(wait) = auth.failures.retry_after(Secret::SetupKey, source) {
            return login::too_many(wait, TITLE);
        }
        if !right {
            auth.failures.failed(Secret::SetupKey, source);
            tracing::warn!(source = ?source, "setup key refused");
            return key_form(
                auth,
                StatusCode::FORBIDDEN,
                Some("That is not the setup key."),
            );
        }
        // Taken: a cookie remembers it, and the key leaves the address bar.
        let sealed = auth.key.seal(
            "setup-key",
            &signed::digest(key.expose_secret()),
            signed::now() + STATE_TTL,
        );
        let back = match org {
            Some(o) => format!(
                "/?{}",
                serde_urlencoded::to_string([("org", o)]).unwrap_or_default()
            ),
            None => "/".to_string(),
        };
        return with_cookie(
            redirect(&back),
            &signed::set_cookie(KEY_COOKIE, &sealed, STATE_TTL, super::signin::secure(auth)),
        );
    }
    if !holds_key(auth, headers, key.expose_secret()) {
        return key_form(auth, StatusCode::OK, None);
    }
    setup_page(auth, org)
}

/// True when the browser's cookie says it gave the current setup key.
fn holds_key(auth: &Auth, headers: &HeaderMap, key: &str) -> bool {
    signed::cookie(headers, KEY_COOKIE)
        .and_then(|c| auth.key.open("setup-key", &c).ok())
        .is_some_and(|d| signed::same(&d, &signed::digest(key)))
}

/// The operator's warnings, as a list (empty: nothing).
fn warnings_html(auth: &Auth) -> String {
    if auth.options.warnings.is_empty() {
        return String::new();
    }
    let items: String = auth
        .options
        .warnings
        .iter()
        .map(|w| format!("<li>{}</li>", esc(w)))
        .collect();
    format!("<div class=\"warnings\"><p><strong>Before you register:</strong></p><ul>{items}</ul></div>")
}

/// The form that asks for the setup key.
fn key_form(auth: &Auth, status: StatusCode, problem: Option<&str>) -> Response {
    let problem = problem
        .map(|p| format!("<p class=\"error\">{}</p>", esc(p)))
        .unwrap_or_default();
    let body = format!(
        "{problem}<p>This safe-outcomes server has no GitHub App yet. Only its operator can \
         register one: <code>safe-outcomes serve</code> printed a setup link with a one-time \
         key in its terminal (<code>…/?setup_key=…</code>). Open that link, or enter the key:</p>\
         <form action=\"/\" method=\"get\"><p><label>Setup key \
         <input type=\"password\" name=\"setup_key\" autocomplete=\"off\" required></label> \
         <button type=\"submit\">Continue</button></p></form>{}",
        warnings_html(auth)
    );
    page(status, TITLE, &body)
}

fn setup_page(auth: &Auth, org: Option<&str>) -> Response {
    if let Some(o) = org.filter(|o| !valid_login(o)) {
        return message(
            StatusCode::BAD_REQUEST,
            TITLE,
            &format!("{o:?} is not an organization login."),
        );
    }
    let options = &auth.options;
    let setup = options.setup.as_ref().expect("setup enabled");
    let ttl = std::time::Duration::from_secs(STATE_TTL as u64);
    let state = match flows::start(&auth.store, &Flow::Setup, ttl) {
        Ok(s) => s,
        Err(e) => return super::store_error(e).into_response(),
    };
    let action = match org {
        Some(o) => format!("{}/organizations/{o}/settings/apps/new", options.web_url),
        None => format!("{}/settings/apps/new", options.web_url),
    };
    let manifest = manifest(&options.public_url, &setup.webhook_path).to_string();
    let account = match org {
        Some(o) => format!("the organization <strong>{}</strong>", esc(o)),
        None => "your personal account".to_string(),
    };
    let body = format!(
        "<p>This safe-outcomes server has no GitHub App credentials yet. Register a GitHub App \
         for {account}: GitHub shows the App's settings (from <code>app-manifest.json</code>, \
         webhooks to <code>{hook}</code>) and sends you back here.</p>\
         <form action=\"{action}?state={state}\" method=\"post\">\
         <input type=\"hidden\" name=\"manifest\" value=\"{manifest}\">\
         <button type=\"submit\">Register GitHub App</button></form>\
         <form action=\"/\" method=\"get\"><p><label>For an organization instead: \
         <input name=\"org\" value=\"{org}\" placeholder=\"organization login\"></label> \
         <button type=\"submit\">Use it</button></p></form>{warnings}",
        warnings = warnings_html(auth),
        hook = esc(&format!("{}{}", options.public_url, setup.webhook_path)),
        action = esc(&action),
        state = esc(&state),
        manifest = esc(&manifest),
        org = esc(org.unwrap_or("")),
    );
    let mut resp = page(StatusCode::OK, TITLE, &body);
    let cookie = signed::set_cookie(
        SETUP_COOKIE,
        &auth.key.seal("setup", &state, signed::now() + STATE_TTL),
        STATE_TTL,
        options.public_url.starts_with("https://"),
    );
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        resp.headers_mut().append(header::SET_COOKIE, v);
    }
    resp
}

fn registered_page(done: &Registered, status: StatusCode) -> Response {
    let install = format!("{}/installations/new", done.html_url.trim_end_matches('/'));
    let written = match &done.written {
        envfile::Written::Created(p) => {
            format!("written to <code>{}</code>", esc(&p.display().to_string()))
        }
        envfile::Written::Appended(p) => {
            format!("added to <code>{}</code>", esc(&p.display().to_string()))
        }
        envfile::Written::Beside { existing, written } => format!(
            "written to <code>{}</code>, because <code>{}</code> already configures an App: \
             move them into it yourself",
            esc(&written.display().to_string()),
            esc(&existing.display().to_string())
        ),
    };
    let body = format!(
        "<p>GitHub App <strong>{name}</strong> (id {id}) is registered. Its credentials \
         (<code>APP_ID</code>, <code>PRIVATE_KEY</code>, <code>WEBHOOK_SECRET</code>, \
         <code>GITHUB_CLIENT_ID</code>, <code>GITHUB_CLIENT_SECRET</code>) were {written}.</p>\
         <ol><li><a href=\"{install}\">Install the App</a> on the repositories to watch.</li>\
         <li>Restart <code>safe-outcomes serve</code> in this folder: it loads <code>.env</code> \
         at start-up.</li></ol>",
        name = esc(&done.name),
        id = done.app_id,
        install = esc(&install),
    );
    page(status, "GitHub App registered", &body)
}

#[derive(serde::Deserialize)]
pub(crate) struct SetupQuery {
    code: Option<String>,
    state: Option<String>,
}

/// `GET /setup?code=…&state=…`: GitHub's redirect after registration.
pub(crate) async fn callback(
    StateExtractor(state): StateExtractor<State>,
    headers: HeaderMap,
    axum::extract::RawQuery(query): axum::extract::RawQuery,
) -> Response {
    let auth = &state.auth;
    let title = TITLE;
    let Some(setup) = auth.options.setup.clone() else {
        return message(
            StatusCode::NOT_FOUND,
            title,
            "This server already runs with App credentials; there is nothing to set up.",
        );
    };
    let q: SetupQuery = match serde_urlencoded::from_str(query.as_deref().unwrap_or("")) {
        Ok(q) => q,
        Err(e) => {
            return message(
                StatusCode::BAD_REQUEST,
                title,
                &format!("malformed query: {e}"),
            )
        }
    };
    let Some(code) = q.code.filter(|c| !c.is_empty()) else {
        return message(
            StatusCode::BAD_REQUEST,
            title,
            "GitHub's redirect carries no code.",
        );
    };
    if !code
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return message(StatusCode::BAD_REQUEST, title, "The code is malformed.");
    }
    let expected =
        signed::cookie(&headers, SETUP_COOKIE).and_then(|c| auth.key.open("setup", &c).ok());
    let given = q.state.unwrap_or_default();
    let key = setup_key(&auth.store).unwrap_or_default();
    let state_ok = expected.is_some_and(|e| signed::same(&e, &given))
        && !key.is_empty()
        && holds_key(auth, &headers, key.expose_secret());
    if !state_ok {
        return message(
            StatusCode::FORBIDDEN,
            title,
            "The state does not match the one this browser was given (or it expired): \
             start again from the setup page.",
        );
    }
    // Single use: whoever comes back with this state first takes it.
    let spent = "This registration was already used, or expired: start again from the setup page.";
    let setup_flow = |f| matches!(f, Flow::Setup).then_some(());
    if let Err(refused) = flows::finish_page(&auth.store, &given, setup_flow, (title, spent)) {
        return *refused;
    }
    match register(auth, &setup, &code).await {
        Ok(done) => {
            // The key is spent; `/` now says only that an App was registered.
            let marked = auth
                .store
                .put_secret(REGISTERED, done.app_id.to_string().as_bytes())
                .and_then(|_| auth.store.take_secret(SETUP_KEY));
            if let Err(e) = marked {
                tracing::error!(error = %e, "the registration could not be marked in the store");
            }
            let mut resp = registered_page(&done, StatusCode::OK);
            if let Ok(v) = HeaderValue::from_str(&signed::clear_cookie(SETUP_COOKIE, false)) {
                resp.headers_mut().append(header::SET_COOKIE, v);
            }
            resp
        }
        Err((status, why)) => message(status, title, &why),
    }
}

/// Exchange the code and write the credentials.
async fn register(
    auth: &Auth,
    setup: &super::SetupOptions,
    code: &str,
) -> Result<Registered, (StatusCode, String)> {
    let app = github_web::convert_manifest(&auth.http, &auth.options.api_url, code)
        .await
        .map_err(|e| match e {
            github_web::WebError::Unavailable(m) => (StatusCode::BAD_GATEWAY, m),
            other => (
                StatusCode::BAD_REQUEST,
                format!("GitHub refused the code (it works once, within an hour): {other}"),
            ),
        })?;
    let id = app.id.to_string();
    let secret = app.webhook_secret.clone().unwrap_or_default();
    let pairs = [
        ("APP_ID", id.as_str()),
        ("PRIVATE_KEY", app.pem.expose_secret()),
        ("WEBHOOK_SECRET", secret.expose_secret()),
        ("GITHUB_CLIENT_ID", app.client_id.as_str()),
        ("GITHUB_CLIENT_SECRET", app.client_secret.expose_secret()),
    ];
    let written = envfile::write(&setup.env_file, app.id, &pairs).map_err(|e| {
        (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!(
                "GitHub registered App {} but its credentials could not be written to {}: {e}",
                app.id,
                setup.env_file.display()
            ),
        )
    })?;
    tracing::info!(app_id = app.id, slug = %app.slug, path = %written.path().display(), "GitHub App registered; credentials written");
    Ok(Registered {
        app_id: app.id,
        name: if app.name.is_empty() {
            app.slug
        } else {
            app.name
        },
        html_url: app.html_url,
        written,
    })
}

/// The setup page's own link while the App has no credentials (`/` shows
/// it too, to anyone not signed in).
pub(crate) const SETUP_PAGE: &str = "/setup/app";

/// Is this `GET` the setup page (`auth::setup::intercept`, while the App has
/// no credentials)? Its own link always; `/` with the setup form's own
/// parameters (`setup_key`, `org`) always; a bare `/` unless a viewer is
/// signed in — the operator signed in with the `API_TOKEN` gets the
/// overview there, with a link to the setup page.
pub(crate) fn setup_page_asked(state: &State, req: &axum::extract::Request) -> bool {
    let path = req.uri().path();
    if path == SETUP_PAGE {
        return true;
    }
    if path != "/" {
        return false;
    }
    let pairs: Vec<(String, String)> =
        serde_urlencoded::from_str(req.uri().query().unwrap_or("")).unwrap_or_default();
    if pairs.iter().any(|(k, _)| k == "setup_key" || k == "org") {
        return true;
    }
    !matches!(state.auth.session(req.headers()), Ok(Some(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_points_github_at_this_server() {
        let m = manifest("https://so.example", "/api/github/webhooks");
        assert_eq!(
            m["hook_attributes"]["url"],
            "https://so.example/api/github/webhooks"
        );
        assert_eq!(m["redirect_url"], "https://so.example/setup");
        assert_eq!(m["callback_urls"][0], "https://so.example/auth/callback");
        assert_eq!(m["default_permissions"]["checks"], "write");
    }

    #[test]
    fn organization_logins_are_checked() {
        assert!(valid_login("acme-corp"));
        assert!(!valid_login("acme/../x"));
        assert!(!valid_login("-acme"));
        assert!(!valid_login(""));
    }
}
