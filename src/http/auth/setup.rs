//! First run, like Probot: while the App has no credentials, `GET /` is a
//! setup page whose "Register GitHub App" button posts `app-manifest.json`
//! (with this server's `PUBLIC_URL` in the webhook, redirect and callback
//! URLs) to GitHub's manifest flow, for a personal account or an
//! organization (`/?org=LOGIN`). GitHub sends the browser back to
//! `GET /setup?code=…&state=…`; the state must match the signed, HttpOnly
//! cookie the page set (CSRF), the code is exchanged
//! (`POST /app-manifests/{code}/conversions`), and the credentials are
//! written to `.env` (`envfile`). The answer links to the App's install page
//! and asks for a restart, which loads `.env`.

use axum::extract::{Request, State as StateExtractor};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use serde_json::Value;

use super::page::{esc, message, page};
use super::{envfile, github_web, signed, Auth};
use crate::http::State;

/// The manifest in the repository root.
pub const MANIFEST: &str = include_str!("../../../app-manifest.json");
const SETUP_COOKIE: &str = "so_setup";
/// GitHub wants the three steps done within an hour.
const STATE_TTL: i64 = 3600;

/// The App the setup registered.
#[derive(Clone, Debug)]
pub struct Registered {
    pub app_id: u64,
    pub name: String,
    pub html_url: String,
    pub written: envfile::Written,
}

/// `app-manifest.json` with this server's addresses filled in.
pub fn manifest(public_url: &str, webhook_path: &str) -> Value {
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

/// Serve the setup page at `GET /` while the App has no credentials; any
/// other request goes on to the router.
pub async fn intercept(
    StateExtractor(state): StateExtractor<State>,
    req: Request,
    next: Next,
) -> Response {
    if state.auth.setup_enabled() && req.method() == Method::GET && req.uri().path() == "/" {
        let pairs: Vec<(String, String)> =
            serde_urlencoded::from_str(req.uri().query().unwrap_or("")).unwrap_or_default();
        let org = pairs
            .iter()
            .find(|(k, _)| k == "org")
            .map(|(_, v)| v.trim().to_string())
            .filter(|o| !o.is_empty());
        return setup_page(&state.auth, org.as_deref());
    }
    next.run(req).await
}

fn setup_page(auth: &Auth, org: Option<&str>) -> Response {
    if let Some(done) = auth.registered.lock().expect("registered lock").clone() {
        return registered_page(&done, StatusCode::OK);
    }
    if let Some(o) = org.filter(|o| !valid_login(o)) {
        return message(
            StatusCode::BAD_REQUEST,
            "Set up safe-outcomes",
            &format!("{o:?} is not an organization login."),
        );
    }
    let options = &auth.options;
    let setup = options.setup.as_ref().expect("setup enabled");
    let state = signed::random_token();
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
         <button type=\"submit\">Use it</button></p></form>",
        hook = esc(&format!("{}{}", options.public_url, setup.webhook_path)),
        action = esc(&action),
        state = esc(&state),
        manifest = esc(&manifest),
        org = esc(org.unwrap_or("")),
    );
    let mut resp = page(StatusCode::OK, "Set up safe-outcomes", &body);
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
pub struct SetupQuery {
    code: Option<String>,
    state: Option<String>,
}

/// `GET /setup?code=…&state=…`: GitHub's redirect after registration.
pub async fn callback(
    StateExtractor(state): StateExtractor<State>,
    headers: HeaderMap,
    axum::extract::RawQuery(query): axum::extract::RawQuery,
) -> Response {
    let auth = &state.auth;
    let title = "Set up safe-outcomes";
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
    let state_ok = match (expected, q.state) {
        (Some(e), Some(given)) => signed::same(&e, &given),
        _ => false,
    };
    if !state_ok {
        return message(
            StatusCode::FORBIDDEN,
            title,
            "The state does not match the one this browser was given (or it expired): \
             start again from the setup page.",
        );
    }
    match register(auth, &setup, &code).await {
        Ok(done) => {
            *auth.registered.lock().expect("registered lock") = Some(done.clone());
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
        ("PRIVATE_KEY", app.pem.as_str()),
        ("WEBHOOK_SECRET", secret.as_str()),
        ("GITHUB_CLIENT_ID", app.client_id.as_str()),
        ("GITHUB_CLIENT_SECRET", app.client_secret.as_str()),
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
