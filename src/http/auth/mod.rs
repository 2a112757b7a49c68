//! Who may see what through the browser, and the first run (docs/auth.md).
//! Everything a request may need from any replica lives in the store
//! (`store::web_state`): sessions, flows in progress, read tokens, the
//! signing key.
//!
//! - **Setup** (`setup`): an App with no credentials serves a page at `/`
//!   that registers a GitHub App from `app-manifest.json` through GitHub's
//!   manifest flow — only for whoever holds the one-time setup key `serve`
//!   prints in its terminal — takes the code back at `GET /setup`, and writes
//!   the credentials to `.env` (`envfile`).
//! - **Sign-in** (`login`, `signin`): the sign-in page `/auth/login` offers
//!   "Sign in with GitHub" when an OAuth client is configured (the App's user
//!   authorization, OAuth web flow with PKCE, `signin`) and a form for the
//!   `API_TOKEN` (the operator); both open a session (`sessions`) held in a
//!   signed, HttpOnly, SameSite=Lax cookie (`signed`).
//! - **Scope**: a signed-in viewer sees the repositories their GitHub account
//!   can see among the App's installations (`github_web::viewer_repos`),
//!   cached for a short time; `http::read::Reader` turns a session into
//!   `RepoScope::Only` (the operator's and the local viewer's into `All`).
//! - **Read tokens** (`tokens`): `soi_…` tokens for machines, issued on
//!   `/auth/tokens`, bound to what their issuer could see and can still see
//!   (asked with their session, else with the installation token:
//!   `issuer`), revocable one by one, their issuing and revoking recorded.
//! - **Access that ends** (`access`): offboarding webhooks (a member
//!   removed, a team membership removed, repositories removed, the App
//!   uninstalled) make every cached answer about access stale at once;
//!   "sign out everywhere" ends all of an account's sessions.
//! - **Local link** (`local`): `demo --serve` starts its server with a local
//!   key; `/auth/local?key=…` opens a local session that sees everything
//!   (`RepoScope::All`). `serve` never has one.
//!
//! The signing key of cookies and CSRF tokens is `SESSION_SECRET`'s, or a
//! random key made once and kept in the store (shared by replicas, kept
//! across restarts); never one derived from another secret.

pub(crate) mod access;
pub(crate) mod envfile;
pub(crate) mod flows;
pub(crate) mod github_web;
pub(crate) mod issuer;
pub(crate) mod local;
pub(crate) mod login;
pub(crate) mod page;
pub mod sessions;
pub mod setup;
pub mod signed;
pub(crate) mod signin;
pub(crate) mod tokens;
mod viewer;
pub(crate) mod warnings;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::HeaderMap;
use axum::routing::get;
use axum::Router;

use crate::github::GitHubClient;
use crate::http::{ApiError, State};
use crate::store::Store;
use github_web::WebError;
use sessions::{Session, SessionKind, Sessions, ViewerScope, Who};

/// Name of the session cookie.
pub(crate) const SESSION_COOKIE: &str = "so_session";

/// How long a viewer's repository list is trusted before GitHub is asked again.
pub(crate) const SCOPE_TTL: Duration = Duration::from_secs(60);
/// How long a session lasts (GitHub's user access tokens last 8 hours).
pub(crate) const SESSION_TTL: Duration = Duration::from_secs(8 * 3600);

/// The command-line/env settings of sign-in and setup (flattened into `serve`).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct AuthArgs {
    /// The App's OAuth client id, for sign-in with GitHub (written by the setup page).
    #[arg(long, env = crate::settings::GITHUB_CLIENT_ID.name)]
    pub github_client_id: Option<String>,
    /// The App's OAuth client secret.
    #[arg(long, env = crate::settings::GITHUB_CLIENT_SECRET.name, hide_env_values = true)]
    pub github_client_secret: Option<crate::settings::Secret>,
    /// GitHub's web address, for the sign-in and App registration pages
    /// (default: https://github.com for api.github.com, https://HOST for a
    /// GHES API at https://HOST/api/v3, else GITHUB_API_URL itself).
    #[arg(long, env = crate::settings::GITHUB_WEB_URL.name)]
    pub github_web_url: Option<String>,
    /// Key that signs session cookies and CSRF tokens (default: a random key
    /// made once and kept in the store, shared by every replica).
    #[arg(long, env = crate::settings::SESSION_SECRET.name, hide_env_values = true)]
    pub session_secret: Option<crate::settings::Secret>,
    /// Where the setup page writes the registered App's credentials.
    #[arg(long, env = crate::settings::ENV_FILE.name, default_value = ".env")]
    pub env_file: PathBuf,
}

impl AuthArgs {
    /// The options for a server at `public_url` calling `api_url`; the setup
    /// page is served only when the App has no credentials.
    pub(crate) fn options(
        &self,
        public_url: &str,
        api_url: &str,
        webhook_path: &str,
        has_credentials: bool,
    ) -> AuthOptions {
        let oauth = match (&self.github_client_id, &self.github_client_secret) {
            (Some(id), Some(secret))
                if !id.trim().is_empty() && !secret.expose_secret().trim().is_empty() =>
            {
                Some(OAuthApp {
                    client_id: id.trim().to_string(),
                    client_secret: secret.trimmed(),
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
            issuer_recheck: issuer::RECHECK,
            local_key: None,
            warnings: Vec::new(),
        }
    }
}

/// GitHub's web address for an API address.
pub(crate) fn web_url_for(api_url: &str) -> String {
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
    pub client_secret: crate::settings::Secret,
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
    pub session_secret: Option<crate::settings::Secret>,
    pub setup: Option<SetupOptions>,
    pub scope_ttl: Duration,
    pub session_ttl: Duration,
    /// How long a token issuer's access, as the installation token found
    /// it, is trusted (`issuer::RECHECK`; zero: that).
    pub issuer_recheck: Duration,
    /// The key of the local sign-in link (`demo --serve` only; `local`).
    pub local_key: Option<crate::settings::Secret>,
    /// What the operator should fix (`warnings`), shown on the setup and
    /// sign-in pages; `serve` logs them at start-up.
    pub warnings: Vec<String>,
}

/// Name of the signing key in the store.
const SIGNING_KEY: &str = "signing-key";

/// Setup and sign-in at run time: the options, the signing key, the sessions.
pub(crate) struct Auth {
    pub options: AuthOptions,
    store: Store,
    key: signed::Key,
    sessions: Sessions,
    /// The `API_TOKEN`, which also signs the operator in (`login`).
    api_token: Option<crate::settings::Secret>,
    /// Wrong tokens and setup keys, counted per source and secret (`login`).
    failures: login::Limiter,
    http: reqwest::Client,
    /// The App's GitHub client (App mode), to re-check a token's issuer.
    github: Option<Arc<GitHubClient>>,
}

impl Auth {
    pub(crate) fn new(
        mut options: AuthOptions,
        store: Store,
        api_token: Option<crate::settings::Secret>,
    ) -> Auth {
        if options.scope_ttl.is_zero() {
            options.scope_ttl = SCOPE_TTL;
        }
        if options.session_ttl.is_zero() {
            options.session_ttl = SESSION_TTL;
        }
        if options.issuer_recheck.is_zero() {
            options.issuer_recheck = issuer::RECHECK;
        }
        let key = signing_key(crate::settings::exposed(&options.session_secret), &store);
        Auth {
            options,
            sessions: Sessions::new(store.clone()),
            failures: login::Limiter::new(),
            store,
            key,
            api_token: api_token.filter(|t| !t.is_empty()),
            http: github_web::http_client(),
            github: None,
        }
    }

    /// Re-check tokens' issuers with `github`'s installation tokens.
    pub(crate) fn with_github(mut self, github: Option<Arc<GitHubClient>>) -> Auth {
        self.github = github;
        self
    }

    /// End the access a signed delivery of `event` ends (`access`), if it
    /// is an offboarding one. A store that cannot be written is an error:
    /// the delivery is refused (503), and GitHub delivers it again.
    pub(crate) fn end_access(&self, event: &str, body: &[u8]) -> Result<(), ApiError> {
        let Some(ending) = access::ending(event, body) else {
            return Ok(());
        };
        let ended = access::end(&self.store, &self.sessions, &ending).map_err(store_error)?;
        tracing::info!(
            event,
            ?ending,
            sessions_ended = ended,
            "access ended by a delivery"
        );
        Ok(())
    }

    pub(crate) fn setup_enabled(&self) -> bool {
        self.options.setup.is_some()
    }

    /// The signed-in session a request carries, if its cookie is valid.
    pub(crate) fn session(&self, headers: &HeaderMap) -> Result<Option<Session>, ApiError> {
        let Some(raw) = signed::cookie(headers, SESSION_COOKIE) else {
            return Ok(None);
        };
        let sid = self
            .key
            .open("session", &raw)
            .map_err(|e| ApiError::unauthorized(format!("session cookie refused: {e}")))?;
        let session = self
            .sessions
            .get(&sid)
            .map_err(store_error)?
            .ok_or_else(|| {
                ApiError::unauthorized("session expired or signed out; sign in again")
            })?;
        // The operator's and the local viewer's sessions last only while
        // the token or key they signed in with is still the server's.
        let credential = match session.kind {
            SessionKind::GitHub => return Ok(Some(session)),
            SessionKind::Operator => crate::settings::exposed(&self.api_token),
            SessionKind::Local => crate::settings::exposed(&self.options.local_key),
        };
        if !credential.is_some_and(|c| signed::same(&signed::digest(c), &session.token)) {
            let _ = self.sessions.remove(&sid);
            return Err(ApiError::unauthorized(
                "the token this session signed in with is no longer the server's; sign in again",
            ));
        }
        Ok(Some(session))
    }

    /// Open a session for `who`; the `Set-Cookie` value that carries it.
    pub(crate) fn open_session(&self, who: Who) -> Result<String, ApiError> {
        let ttl = self.options.session_ttl;
        let sid = self.sessions.open(who, ttl).map_err(store_error)?;
        Ok(signin::session_cookie(self, &sid, ttl))
    }

    /// Who is signed in on this request, with the CSRF token of their
    /// session (for pages that show who is signed in and a sign-out form).
    pub(crate) fn viewer(&self, headers: &HeaderMap) -> Option<SignedIn> {
        let session = self.session(headers).ok().flatten()?;
        Some(SignedIn {
            login: session.login.clone(),
            csrf: self.key.csrf(&session.id),
        })
    }

    /// The repositories a session may see: cached, or asked of GitHub.
    pub(crate) async fn scope_of(&self, session: &Session) -> Result<BTreeSet<String>, ApiError> {
        let per_installation = self.installations_of(session).await?;
        Ok(per_installation.into_values().flatten().collect())
    }

    /// The repositories a session may see, per installation.
    pub(crate) async fn installations_of(
        &self,
        session: &Session,
    ) -> Result<ViewerScope, ApiError> {
        if session.kind != SessionKind::GitHub {
            // No GitHub account behind it: no installation of its own.
            return Ok(ViewerScope::new());
        }
        let epoch = access::epoch(&self.store).map_err(store_error)?;
        if let Some(repos) = self
            .sessions
            .fresh_scope(&session.id, self.options.scope_ttl, epoch)
        {
            return Ok(repos);
        }
        match github_web::viewer_repos(&self.http, &self.options.api_url, &session.token).await {
            Ok(repos) => {
                let ttl = self.options.scope_ttl;
                self.sessions
                    .set_scope(&session.id, repos.clone(), ttl, epoch);
                // What this account sees now narrows its read tokens.
                tokens::note_access(&self.store, session.user_id, &repos, epoch)
                    .map_err(store_error)?;
                Ok(repos)
            }
            Err(WebError::Unauthorized(why)) => {
                let _ = self.sessions.remove(&session.id);
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

/// The signing key: `SESSION_SECRET`'s, else the random one kept in the
/// store (made by the first replica to start). A store that cannot be read
/// gets a key of this process only, said in the log.
fn signing_key(session_secret: Option<&str>, store: &Store) -> signed::Key {
    if let Some(secret) = session_secret.filter(|s| !s.is_empty()) {
        return signed::Key::derive(secret);
    }
    let kept = store.secret_or_create(SIGNING_KEY, || signed::random_bytes().to_vec());
    match kept.as_deref().map(signed::Key::from_bytes) {
        Ok(Some(key)) => key,
        Ok(None) => {
            tracing::error!("the signing key in the store is malformed; using a key of this process only (set SESSION_SECRET)");
            signed::Key::random()
        }
        Err(e) => {
            tracing::error!(error = %e, "cannot read the signing key from the store; using a key of this process only (set SESSION_SECRET)");
            signed::Key::random()
        }
    }
}

/// A store failure on the sign-in path: a 503 (the viewer may retry).
pub(crate) fn store_error(e: crate::store::StoreError) -> ApiError {
    ApiError::unavailable(format!("the store cannot be read: {e}"))
}

/// A signed-in viewer, for pages that show who is signed in and carry the
/// CSRF token in their forms (`csrf` field of POST forms).
#[derive(Clone, Debug)]
pub(crate) struct SignedIn {
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
pub(crate) fn routes(_: &crate::http::Mount) -> Router<State> {
    Router::new()
        .route("/setup", get(setup::callback))
        .route("/auth/login", get(login::sign_in).post(login::with_token))
        .route("/auth/login/github", get(signin::login))
        .route("/auth/callback", get(signin::callback))
        .route(
            "/auth/logout",
            get(signin::logout_page).post(signin::logout),
        )
        .route(
            "/auth/logout/everywhere",
            axum::routing::post(signin::logout_everywhere),
        )
        .route("/auth/local", get(local::sign_in))
        .route(
            "/auth/tokens",
            get(tokens::page_of_tokens).post(tokens::issue_token),
        )
        .route(
            "/auth/tokens/revoke",
            axum::routing::post(tokens::revoke_token),
        )
}

/// A store in a fresh folder, for the tests of sign-in's parts (the folder
/// goes when the `TempDir` is dropped).
#[cfg(test)]
fn test_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_sled(dir.path()).unwrap();
    (dir, store)
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
