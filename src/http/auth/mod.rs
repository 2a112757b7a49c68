//! Who may see what through the browser, and the first run (DESIGN.md §4):
//!
//! - **Setup** (`setup`): an App with no credentials serves a page at `/` that
//!   registers a GitHub App from `app-manifest.json` through GitHub's manifest
//!   flow, takes the code back at `GET /setup`, and writes the credentials to
//!   `.env` (`envfile`).
//! - **Sign-in with GitHub** (`signin`): the App's user authorization (OAuth
//!   web flow with `GITHUB_CLIENT_ID`/`GITHUB_CLIENT_SECRET`), a signed,
//!   HttpOnly, SameSite=Lax session cookie (`signed`, `sessions`).
//! - **Scope**: a signed-in viewer sees the repositories their GitHub account
//!   can see among the App's installations (`github_web::viewer_repos`),
//!   cached for a short time; `http::read::Reader` turns a session into
//!   `RepoScope::Only`.
//! - **Local link** (`local`): `demo --serve` starts its server with a local
//!   key; `/auth/local?key=…` opens a local session that sees everything
//!   (`RepoScope::All`). `serve` never has one.

pub mod envfile;
pub mod github_web;
pub mod local;
pub(crate) mod page;
pub mod sessions;
pub mod setup;
pub mod signed;
pub mod signin;
pub mod tokens;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::HeaderMap;
use axum::routing::get;
use axum::Router;

use crate::http::{ApiError, State};
use github_web::WebError;
use sessions::{Session, SessionKind, Sessions, ViewerScope};

/// Name of the session cookie.
pub const SESSION_COOKIE: &str = "so_session";

/// How long a viewer's repository list is trusted before GitHub is asked again.
pub const SCOPE_TTL: Duration = Duration::from_secs(60);
/// How long a session lasts (GitHub's user access tokens last 8 hours).
pub const SESSION_TTL: Duration = Duration::from_secs(8 * 3600);

/// The command-line/env settings of sign-in and setup (flattened into `serve`).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct AuthArgs {
    /// The App's OAuth client id, for sign-in with GitHub (written by the setup page).
    #[arg(long, env = "GITHUB_CLIENT_ID")]
    pub github_client_id: Option<String>,
    /// The App's OAuth client secret.
    #[arg(long, env = "GITHUB_CLIENT_SECRET", hide_env_values = true)]
    pub github_client_secret: Option<String>,
    /// GitHub's web address, for the sign-in and App registration pages
    /// (default: https://github.com for api.github.com, https://HOST for a
    /// GHES API at https://HOST/api/v3, else GITHUB_API_URL itself).
    #[arg(long, env = "GITHUB_WEB_URL")]
    pub github_web_url: Option<String>,
    /// Key that signs session cookies (default: derived from GITHUB_CLIENT_SECRET).
    #[arg(long, env = "SESSION_SECRET", hide_env_values = true)]
    pub session_secret: Option<String>,
    /// Where the setup page writes the registered App's credentials.
    #[arg(long, env = "ENV_FILE", default_value = ".env")]
    pub env_file: PathBuf,
}

impl AuthArgs {
    /// The options for a server at `public_url` calling `api_url`; the setup
    /// page is served only when the App has no credentials.
    pub fn options(
        &self,
        public_url: &str,
        api_url: &str,
        webhook_path: &str,
        has_credentials: bool,
    ) -> AuthOptions {
        let oauth = match (&self.github_client_id, &self.github_client_secret) {
            (Some(id), Some(secret)) if !id.trim().is_empty() && !secret.trim().is_empty() => {
                Some(OAuthApp {
                    client_id: id.trim().to_string(),
                    client_secret: secret.trim().to_string(),
                })
            }
            _ => None,
        };
        AuthOptions {
            public_url: public_url.trim_end_matches('/').to_string(),
            api_url: api_url.trim_end_matches('/').to_string(),
            web_url: self
                .github_web_url
                .clone()
                .unwrap_or_else(|| web_url_for(api_url)),
            oauth,
            session_secret: self.session_secret.clone().filter(|s| !s.is_empty()),
            setup: (!has_credentials).then(|| SetupOptions {
                env_file: self.env_file.clone(),
                webhook_path: webhook_path.to_string(),
            }),
            scope_ttl: SCOPE_TTL,
            session_ttl: SESSION_TTL,
            local_key: None,
        }
    }
}

/// GitHub's web address for an API address.
pub fn web_url_for(api_url: &str) -> String {
    let api = api_url.trim_end_matches('/');
    if api == "https://api.github.com" {
        return "https://github.com".to_string();
    }
    api.strip_suffix("/api/v3").unwrap_or(api).to_string()
}

/// The App's OAuth client.
#[derive(Clone)]
pub struct OAuthApp {
    pub client_id: String,
    pub client_secret: String,
}

impl std::fmt::Debug for OAuthApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthApp")
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

/// The setup page's settings (present only while the App has no credentials).
#[derive(Clone, Debug)]
pub struct SetupOptions {
    pub env_file: PathBuf,
    pub webhook_path: String,
}

/// What the router needs for setup and sign-in. The default serves neither.
#[derive(Clone, Debug, Default)]
pub struct AuthOptions {
    /// Where users reach this server (no trailing slash).
    pub public_url: String,
    pub api_url: String,
    pub web_url: String,
    pub oauth: Option<OAuthApp>,
    pub session_secret: Option<String>,
    pub setup: Option<SetupOptions>,
    pub scope_ttl: Duration,
    pub session_ttl: Duration,
    /// The key of the local sign-in link (`demo --serve` only; `local`).
    pub local_key: Option<String>,
}

/// Setup and sign-in at run time: the options, the signing key, the sessions.
pub struct Auth {
    pub options: AuthOptions,
    key: signed::Key,
    sessions: Sessions,
    /// The App registered by the setup page (until the restart that loads it).
    registered: Mutex<Option<setup::Registered>>,
    http: reqwest::Client,
}

impl Auth {
    pub fn new(mut options: AuthOptions) -> Auth {
        if options.scope_ttl.is_zero() {
            options.scope_ttl = SCOPE_TTL;
        }
        if options.session_ttl.is_zero() {
            options.session_ttl = SESSION_TTL;
        }
        let secret = options
            .session_secret
            .clone()
            .or_else(|| options.oauth.as_ref().map(|o| o.client_secret.clone()));
        let key = match secret {
            Some(s) => signed::Key::derive(&s),
            None => signed::Key::random(),
        };
        Auth {
            options,
            key,
            sessions: Sessions::default(),
            registered: Mutex::new(None),
            http: github_web::http_client(),
        }
    }

    pub fn setup_enabled(&self) -> bool {
        self.options.setup.is_some()
    }

    /// The signed-in session a request carries, if its cookie is valid.
    pub fn session(&self, headers: &HeaderMap) -> Result<Option<Session>, ApiError> {
        let Some(raw) = signed::cookie(headers, SESSION_COOKIE) else {
            return Ok(None);
        };
        let sid = self
            .key
            .open("session", &raw)
            .map_err(|e| ApiError::unauthorized(format!("session cookie refused: {e}")))?;
        self.sessions
            .get(&sid)
            .map(Some)
            .ok_or_else(|| ApiError::unauthorized("session expired or signed out; sign in again"))
    }

    /// The repositories a session may see: cached, or asked of GitHub.
    pub async fn scope_of(&self, session: &Session) -> Result<BTreeSet<String>, ApiError> {
        let per_installation = self.installations_of(session).await?;
        Ok(per_installation.into_values().flatten().collect())
    }

    /// The repositories a session may see, per installation.
    pub async fn installations_of(&self, session: &Session) -> Result<ViewerScope, ApiError> {
        if session.kind == SessionKind::Local {
            // No GitHub account behind it: no installation of its own.
            return Ok(ViewerScope::new());
        }
        if let Some(repos) = self
            .sessions
            .fresh_scope(&session.id, self.options.scope_ttl)
        {
            return Ok(repos);
        }
        match github_web::viewer_repos(&self.http, &self.options.api_url, &session.token).await {
            Ok(repos) => {
                self.sessions.set_scope(&session.id, repos.clone());
                Ok(repos)
            }
            Err(WebError::Unauthorized(why)) => {
                self.sessions.remove(&session.id);
                Err(ApiError::unauthorized(format!(
                    "GitHub no longer accepts this sign-in ({why}); sign in again"
                )))
            }
            Err(e) => Err(ApiError::unavailable(format!(
                "could not ask GitHub which repositories you can see: {e}"
            ))),
        }
    }
}

/// A signed-in viewer, for pages that show who is signed in and carry the
/// CSRF token in their forms (`csrf` field of POST forms).
#[derive(Clone, Debug)]
pub struct SignedIn {
    pub login: String,
    pub csrf: String,
}

impl FromRequestParts<State> for SignedIn {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &State) -> Result<SignedIn, ApiError> {
        let auth = &state.auth;
        let session = auth
            .session(&parts.headers)?
            .ok_or_else(|| ApiError::unauthorized("not signed in"))?;
        Ok(SignedIn {
            login: session.login.clone(),
            csrf: auth.key.csrf(&session.id),
        })
    }
}

/// The routes of setup and sign-in.
pub fn routes(_: &crate::http::Mount) -> Router<State> {
    Router::new()
        .route("/setup", get(setup::callback))
        .route("/auth/login", get(signin::login))
        .route("/auth/callback", get(signin::callback))
        .route(
            "/auth/logout",
            get(signin::logout_page).post(signin::logout),
        )
        .route("/api/v1/me", get(signin::me))
        .route("/auth/local", get(local::sign_in))
        .route(
            "/auth/tokens",
            get(tokens::page_of_tokens).post(tokens::issue_token),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_web_address_follows_the_api_address() {
        assert_eq!(web_url_for("https://api.github.com"), "https://github.com");
        assert_eq!(
            web_url_for("https://ghe.example/api/v3/"),
            "https://ghe.example"
        );
        assert_eq!(web_url_for("http://127.0.0.1:9"), "http://127.0.0.1:9");
    }
}
