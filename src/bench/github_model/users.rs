//! GitHub's web side and its users, for the setup page and sign-in:
//! - the manifest flow: `POST /settings/apps/new` and
//!   `POST /organizations/{org}/settings/apps/new` (the browser's form post:
//!   answered with GitHub's redirect to the manifest's `redirect_url` with a
//!   `code` and the `state`), and `POST /app-manifests/{code}/conversions`
//!   (single use, 201 with the test App's id, key and secrets);
//! - the OAuth web flow: `GET /login/oauth/authorize` (the signed-in GitHub
//!   user is named by the test browser's `x-fake-user` header) and
//!   `POST /login/oauth/access_token` (client secret, single-use code,
//!   `redirect_uri` and PKCE S256 checked; errors as HTTP 200 with `error`);
//! - user-to-server reads with the `ghu_` token: `GET /user`,
//!   `GET /user/installations`, `GET /user/installations/{id}/repositories`,
//!   paged by `per_page` (capped at `Users::max_per_page`) with `Link` next;
//! - with an installation token, `GET /repos/{owner}/{repo}/collaborators/{username}`
//!   (OpenAPI `repos/check-collaborator`): 204 with no body when the user
//!   has access to the repository (it is among theirs in that
//!   installation), else 404.

use std::collections::BTreeMap;

use axum::extract::{Path, Query, RawQuery, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use base64::Engine;
use serde_json::{json, Value};
use sha2::Digest;

use super::{bearer, error, Fake, FakeGitHub, APP_ID, PRIVATE_KEY};

pub const CLIENT_ID: &str = "Iv1.fakeclientid";
pub const CLIENT_SECRET: &str = "fake-client-secret";
pub const NEW_WEBHOOK_SECRET: &str = "whsec-from-the-manifest-flow";
pub const CONVERSIONS: &str = "POST /app-manifests/{code}/conversions";
pub const TOKEN_EXCHANGE: &str = "POST /login/oauth/access_token";
pub const USER_INSTALLATIONS: &str = "GET /user/installations";
pub const CHECK_COLLABORATOR: &str = "GET /repos/{owner}/{repo}/collaborators/{username}";

/// One GitHub user and what they can see: installation id → (account, repos).
#[derive(Clone, Debug, Default)]
pub struct FakeUser {
    pub id: u64,
    pub installations: BTreeMap<u64, (String, Vec<String>)>,
}

struct Code {
    login: String,
    redirect_uri: String,
    challenge: Option<String>,
}

pub struct Users {
    pub users: BTreeMap<String, FakeUser>,
    codes: BTreeMap<String, Code>,
    /// `ghu_` tokens → login.
    pub tokens: BTreeMap<String, String>,
    /// Manifest codes → (the manifest posted, the organization or none).
    manifests: BTreeMap<String, (Value, Option<String>)>,
    /// Manifests converted into an App, in order.
    pub registered: Vec<(Value, Option<String>)>,
    pub max_per_page: usize,
    next: u64,
}

impl Default for Users {
    fn default() -> Users {
        Users {
            users: BTreeMap::new(),
            codes: BTreeMap::new(),
            tokens: BTreeMap::new(),
            manifests: BTreeMap::new(),
            registered: Vec::new(),
            max_per_page: 100,
            next: 0,
        }
    }
}

impl Users {
    fn fresh(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}{}", self.next)
    }
}

impl FakeGitHub {
    /// A GitHub user who can see `repos` of installation `installation` (on `account`).
    pub fn add_user(&self, login: &str, installation: u64, account: &str, repos: &[&str]) {
        let mut inner = self.fake.lock();
        let n = inner.users.users.len() as u64;
        let user = inner
            .users
            .users
            .entry(login.to_string())
            .or_insert_with(|| FakeUser {
                id: 9000 + n,
                ..FakeUser::default()
            });
        user.installations.insert(
            installation,
            (
                account.to_string(),
                repos.iter().map(|r| r.to_string()).collect(),
            ),
        );
    }

    /// The id of a user, as GitHub's deliveries name them.
    pub fn user_id(&self, login: &str) -> Option<u64> {
        self.fake.lock().users.users.get(login).map(|u| u.id)
    }

    /// Revoke every token of a user (GitHub then answers 401).
    pub fn revoke_user_tokens(&self, login: &str) {
        self.fake.lock().users.tokens.retain(|_, l| l != login);
    }

    pub fn set_max_per_page(&self, n: usize) {
        self.fake.lock().users.max_per_page = n;
    }

    /// The manifests registered so far, with their organization.
    pub fn registered_manifests(&self) -> Vec<(Value, Option<String>)> {
        self.fake.lock().users.registered.clone()
    }
}

pub(crate) fn routes() -> Router<Fake> {
    Router::new()
        .route("/settings/apps/new", post(new_app))
        .route("/organizations/{org}/settings/apps/new", post(new_org_app))
        .route("/app-manifests/{code}/conversions", post(conversion))
        .route("/login/oauth/authorize", get(authorize))
        .route("/login/oauth/access_token", post(access_token))
        .route("/user", get(user))
        .route("/user/installations", get(installations))
        .route("/user/installations/{id}/repositories", get(repositories))
        .route(
            "/repos/{owner}/{repo}/collaborators/{username}",
            get(check_collaborator),
        )
}

fn found(location: &str) -> Response {
    let mut r = StatusCode::FOUND.into_response();
    r.headers_mut()
        .insert(header::LOCATION, HeaderValue::from_str(location).unwrap());
    r
}

fn with_query(url: &str, pairs: &[(&str, &str)]) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{}", serde_urlencoded::to_string(pairs).unwrap())
}

async fn new_app(
    State(fake): State<Fake>,
    RawQuery(q): RawQuery,
    Form(form): Form<BTreeMap<String, String>>,
) -> Response {
    register_form(&fake, None, q, form)
}

async fn new_org_app(
    State(fake): State<Fake>,
    Path(org): Path<String>,
    RawQuery(q): RawQuery,
    Form(form): Form<BTreeMap<String, String>>,
) -> Response {
    register_form(&fake, Some(org), q, form)
}

/// The browser posted the manifest form: GitHub (after the user confirms)
/// redirects to `redirect_url` with a code and the state.
fn register_form(
    fake: &Fake,
    org: Option<String>,
    query: Option<String>,
    form: BTreeMap<String, String>,
) -> Response {
    let Some(manifest) = form
        .get("manifest")
        .and_then(|m| serde_json::from_str::<Value>(m).ok())
    else {
        return error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "manifest is missing or not JSON",
        );
    };
    let Some(redirect) = manifest["redirect_url"].as_str().map(str::to_string) else {
        return error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "manifest has no redirect_url",
        );
    };
    if manifest["hook_attributes"]["url"].as_str().is_none() {
        return error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "hook_attributes.url is required",
        );
    }
    let state: Vec<(String, String)> =
        serde_urlencoded::from_str(query.as_deref().unwrap_or("")).unwrap_or_default();
    let state = state
        .iter()
        .find(|(k, _)| k == "state")
        .map(|(_, v)| v.clone());
    let mut inner = fake.lock();
    let code = inner.users.fresh("manifestcode");
    inner.users.manifests.insert(code.clone(), (manifest, org));
    let mut pairs = vec![("code", code.as_str())];
    if let Some(s) = state.as_deref() {
        pairs.push(("state", s));
    }
    found(&with_query(&redirect, &pairs))
}

async fn conversion(State(fake): State<Fake>, Path(code): Path<String>) -> Response {
    let mut inner = fake.lock();
    let Some((manifest, org)) = inner.users.manifests.remove(&code) else {
        return error(StatusCode::NOT_FOUND, "Not Found");
    };
    inner.users.registered.push((manifest.clone(), org.clone()));
    let slug = manifest["name"].as_str().unwrap_or("app").to_string();
    (
        StatusCode::CREATED,
        Json(json!({
            "id": APP_ID, "slug": slug, "node_id": "A_new", "name": manifest["name"],
            "owner": {"login": org.unwrap_or_else(|| "octocat".into())},
            "html_url": format!("https://github.com/apps/{slug}"),
            "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET,
            "webhook_secret": NEW_WEBHOOK_SECRET, "pem": PRIVATE_KEY,
            "permissions": manifest["default_permissions"], "events": manifest["default_events"],
        })),
    )
        .into_response()
}

/// The authorize page: the user named by `x-fake-user` is signed in to GitHub
/// and approves at once.
async fn authorize(
    State(fake): State<Fake>,
    headers: HeaderMap,
    Query(q): Query<BTreeMap<String, String>>,
) -> Response {
    if q.get("client_id").map(String::as_str) != Some(CLIENT_ID) {
        return error(StatusCode::NOT_FOUND, "unknown client_id");
    }
    let Some(login) = headers.get("x-fake-user").and_then(|v| v.to_str().ok()) else {
        return error(StatusCode::UNAUTHORIZED, "not signed in to the fake GitHub");
    };
    let Some(redirect) = q.get("redirect_uri") else {
        return error(StatusCode::BAD_REQUEST, "this fake needs redirect_uri");
    };
    let challenge = match (q.get("code_challenge"), q.get("code_challenge_method")) {
        (Some(c), Some(m)) if m == "S256" => Some(c.clone()),
        (None, _) => None,
        _ => return error(StatusCode::BAD_REQUEST, "only S256"),
    };
    let mut inner = fake.lock();
    if !inner.users.users.contains_key(login) {
        return error(StatusCode::UNAUTHORIZED, "no such fake user");
    }
    let code = inner.users.fresh("oauthcode");
    inner.users.codes.insert(
        code.clone(),
        Code {
            login: login.to_string(),
            redirect_uri: redirect.clone(),
            challenge,
        },
    );
    let mut pairs = vec![("code", code.as_str())];
    if let Some(s) = q.get("state") {
        pairs.push(("state", s.as_str()));
    }
    found(&with_query(redirect, &pairs))
}

fn oauth_error(error: &str) -> Response {
    // GitHub answers these with HTTP 200.
    Json(json!({"error": error, "error_description": format!("fake: {error}")})).into_response()
}

async fn access_token(
    State(fake): State<Fake>,
    Form(form): Form<BTreeMap<String, String>>,
) -> Response {
    let get = |k: &str| form.get(k).map(String::as_str).unwrap_or("");
    if get("client_id") != CLIENT_ID || get("client_secret") != CLIENT_SECRET {
        return oauth_error("incorrect_client_credentials");
    }
    let mut inner = fake.lock();
    let Some(code) = inner.users.codes.remove(get("code")) else {
        return oauth_error("bad_verification_code");
    };
    if form
        .get("redirect_uri")
        .is_some_and(|r| *r != code.redirect_uri)
    {
        return oauth_error("redirect_uri_mismatch");
    }
    if let Some(challenge) = &code.challenge {
        let digest = sha2::Sha256::digest(get("code_verifier").as_bytes());
        let computed = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest);
        if &computed != challenge {
            return oauth_error("bad_verification_code");
        }
    }
    let token = inner.users.fresh(&format!("ghu_fake_{}_", code.login));
    inner.users.tokens.insert(token.clone(), code.login);
    Json(json!({
        "access_token": token, "expires_in": 28800, "refresh_token": "ghr_fake",
        "refresh_token_expires_in": 15811200, "scope": "", "token_type": "bearer"
    }))
    .into_response()
}

/// The user behind a `ghu_` token.
fn user_of(fake: &Fake, headers: &HeaderMap) -> Result<(String, FakeUser), Response> {
    let inner = fake.lock();
    bearer(headers)
        .and_then(|t| inner.users.tokens.get(t))
        .and_then(|login| Some((login.clone(), inner.users.users.get(login)?.clone())))
        .ok_or_else(|| error(StatusCode::UNAUTHORIZED, "Bad credentials"))
}

async fn user(State(fake): State<Fake>, headers: HeaderMap) -> Response {
    match user_of(&fake, &headers) {
        Ok((login, u)) => Json(json!({"login": login, "id": u.id, "type": "User"})).into_response(),
        Err(r) => r,
    }
}

/// One page of `items` under `key`, with GitHub's `Link` to the next.
fn paged(
    fake: &Fake,
    path: &str,
    q: &BTreeMap<String, String>,
    key: &str,
    items: Vec<Value>,
    host: &str,
) -> Response {
    let max = fake.lock().users.max_per_page;
    let per_page = q
        .get("per_page")
        .and_then(|p| p.parse::<usize>().ok())
        .unwrap_or(30)
        .clamp(1, max);
    let page = q
        .get("page")
        .and_then(|p| p.parse::<usize>().ok())
        .unwrap_or(1)
        .max(1);
    let total = items.len();
    let chunk: Vec<Value> = items
        .into_iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .collect();
    let mut resp = Json(json!({"total_count": total, key: chunk})).into_response();
    if page * per_page < total {
        let next = format!(
            "<http://{host}{path}?per_page={per_page}&page={}>; rel=\"next\"",
            page + 1
        );
        resp.headers_mut()
            .insert(header::LINK, HeaderValue::from_str(&next).unwrap());
    }
    resp
}

fn host(headers: &HeaderMap) -> String {
    headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1")
        .to_string()
}

async fn installations(
    State(fake): State<Fake>,
    headers: HeaderMap,
    Query(q): Query<BTreeMap<String, String>>,
) -> Response {
    let (_, u) = match user_of(&fake, &headers) {
        Ok(v) => v,
        Err(r) => return r,
    };
    let items = u
        .installations
        .iter()
        .map(
            |(id, (account, _))| json!({"id": id, "account": {"login": account}, "app_id": APP_ID}),
        )
        .collect();
    paged(
        &fake,
        "/user/installations",
        &q,
        "installations",
        items,
        &host(&headers),
    )
}

async fn repositories(
    State(fake): State<Fake>,
    headers: HeaderMap,
    Path(id): Path<u64>,
    Query(q): Query<BTreeMap<String, String>>,
) -> Response {
    let (_, u) = match user_of(&fake, &headers) {
        Ok(v) => v,
        Err(r) => return r,
    };
    let Some((_, repos)) = u.installations.get(&id) else {
        return error(StatusCode::NOT_FOUND, "Not Found");
    };
    let items = repos
        .iter()
        .map(
            |r| json!({"full_name": r, "name": r.split('/').nth(1), "permissions": {"pull": true}}),
        )
        .collect();
    let path = format!("/user/installations/{id}/repositories");
    paged(&fake, &path, &q, "repositories", items, &host(&headers))
}

/// `GET /repos/{owner}/{repo}/collaborators/{username}` with an installation
/// token: 204 (no body) when `username` has access to the repository in the
/// token's installation, 404 otherwise (as for a repository the token
/// cannot see).
async fn check_collaborator(
    State(fake): State<Fake>,
    headers: HeaderMap,
    Path((owner, repo, username)): Path<(String, String, String)>,
) -> Response {
    let installation = match super::require_token(&fake, &headers) {
        Ok(id) => id,
        Err(r) => return r,
    };
    let full = format!("{owner}/{repo}");
    let inner = fake.lock();
    let has = inner
        .users
        .users
        .iter()
        .find(|(login, _)| login.eq_ignore_ascii_case(&username))
        .and_then(|(_, u)| u.installations.get(&installation))
        .is_some_and(|(_, repos)| repos.iter().any(|r| r.eq_ignore_ascii_case(&full)));
    match has {
        true => StatusCode::NO_CONTENT.into_response(),
        false => error(StatusCode::NOT_FOUND, "Not Found"),
    }
}
