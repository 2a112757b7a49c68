//! GitHub Actions OIDC on manifest ingest: a local issuer (JWKS + the Actions
//! runtime's token endpoint) signs tokens with the test key under
//! fixtures/oidc/; the server accepts good ones and refuses the rest with
//! nothing stored; `safe-outcomes record` gets its token like a workflow does.
//! Only owners the App is installed on (filed from a real, signed
//! `installation` delivery) or named in the allow-list may post: a
//! stranger's well-signed token is refused.

use crate::common;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use axum::{Json, Router};
use common::{TestApp, TOKEN};
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use safe_outcomes::http::{RouterOptions, RunningServer};
use safe_outcomes::ingest::oidc::{OidcConfig, OidcError, OidcVerifier};
use serde_json::{json, Value};

pub(crate) const AUDIENCE: &str = "safe-outcomes";
const KID: &str = "test-kid";
pub(crate) const RUNTIME_TOKEN: &str = "actions-runtime-secret";
pub(crate) const REPO: &str = "octo/app";
/// The account id of `octo`, as GitHub gives it in tokens and installations.
const OCTO_ID: u64 = 65;

fn key_pem(name: &str) -> Vec<u8> {
    std::fs::read(common::manifest_dir().join("fixtures/oidc").join(name)).unwrap()
}

fn test_key() -> EncodingKey {
    EncodingKey::from_rsa_pem(&key_pem("test-key.pem")).unwrap()
}

fn other_key() -> EncodingKey {
    EncodingKey::from_rsa_pem(&key_pem("other-key.pem")).unwrap()
}

/// The public half of a key as a JWK with `kid`.
fn jwk(key: &EncodingKey, kid: &str) -> Value {
    let mut jwk = Jwk::from_encoding_key(key, Algorithm::RS256).unwrap();
    jwk.common.key_id = Some(kid.to_string());
    serde_json::to_value(jwk).unwrap()
}

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

fn sign(key: &EncodingKey, kid: &str, claims: &Value) -> String {
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some(kid.to_string());
    jsonwebtoken::encode(&header, claims, key).unwrap()
}

/// What GitHub puts in an Actions token, for `issuer`.
fn claims(issuer: &str) -> Value {
    let t = now();
    json!({
        "jti": "6f1a", "sub": "repo:octo/app:ref:refs/heads/main",
        "aud": AUDIENCE, "ref": "refs/heads/main", "sha": "e3b0c442",
        "repository": REPO, "repository_owner": "octo", "repository_id": "74",
        "repository_owner_id": OCTO_ID.to_string(),
        "run_id": "4242", "run_number": "7", "run_attempt": "1",
        "actor": "monalisa", "workflow": "ci-coach", "event_name": "schedule",
        "iss": issuer, "nbf": t - 5, "iat": t - 5, "exp": t + 300
    })
}

fn with(mut claims: Value, key: &str, value: Value) -> Value {
    claims[key] = value;
    claims
}

/// The fake issuer: its JWKS (the keys it serves can change) and the Actions
/// runtime's token endpoint.
pub(crate) struct Issuer {
    server: RunningServer,
    state: Arc<IssuerState>,
}

struct IssuerState {
    keys: Mutex<Vec<Value>>,
    jwks_hits: AtomicUsize,
    issuer: Mutex<String>,
}

async fn jwks(State(s): State<Arc<IssuerState>>) -> Json<Value> {
    s.jwks_hits.fetch_add(1, Ordering::SeqCst);
    Json(json!({"keys": *s.keys.lock().unwrap()}))
}

/// Like the Actions runtime: the runtime token in `Authorization`, the
/// audience in the query, a token for this run in `{"value": …}`.
async fn actions_token(
    State(s): State<Arc<IssuerState>>,
    Query(q): Query<std::collections::HashMap<String, String>>,
    headers: HeaderMap,
) -> Result<Json<Value>, StatusCode> {
    let auth = headers.get("authorization").and_then(|v| v.to_str().ok());
    if auth != Some(&format!("bearer {RUNTIME_TOKEN}")) || !q.contains_key("api-version") {
        return Err(StatusCode::UNAUTHORIZED);
    }
    let issuer = s.issuer.lock().unwrap().clone();
    let audience = q
        .get("audience")
        .cloned()
        .unwrap_or("https://github.com/octo".into());
    let token = sign(
        &test_key(),
        KID,
        &with(claims(&issuer), "aud", json!(audience)),
    );
    Ok(Json(json!({"count": 1, "value": token})))
}

impl Issuer {
    pub(crate) async fn start() -> Issuer {
        safe_outcomes::ingest::oidc::install_crypto_provider();
        let state = Arc::new(IssuerState {
            keys: Mutex::new(vec![jwk(&test_key(), KID)]),
            jwks_hits: AtomicUsize::new(0),
            issuer: Mutex::new(String::new()),
        });
        let routes = Router::new()
            .route("/.well-known/jwks", get(jwks))
            .route("/_apis/token", get(actions_token))
            .with_state(state.clone());
        let server = RunningServer::start(routes, "127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
        *state.issuer.lock().unwrap() = server.url();
        Issuer { server, state }
    }

    pub(crate) fn url(&self) -> String {
        self.server.url()
    }

    pub(crate) fn verifier(&self) -> Arc<OidcVerifier> {
        Arc::new(OidcVerifier::new(OidcConfig::new(&self.url(), AUDIENCE)))
    }

    fn token(&self) -> String {
        sign(&test_key(), KID, &claims(&self.url()))
    }

    fn jwks_hits(&self) -> usize {
        self.state.jwks_hits.load(Ordering::SeqCst)
    }
}

fn start() -> chrono::DateTime<chrono::Utc> {
    "2026-10-01T00:00:00Z".parse().unwrap()
}

/// An App with no installation filed yet.
async fn bare_app(dir: &std::path::Path, verifier: Option<Arc<OidcVerifier>>) -> TestApp {
    let options = RouterOptions {
        oidc: verifier,
        ..Default::default()
    };
    TestApp::start_with_options(dir, start(), true, options).await
}

/// An App installed on `octo` (account id `OCTO_ID`).
pub(crate) async fn app_with(
    dir: &std::path::Path,
    verifier: Option<Arc<OidcVerifier>>,
) -> TestApp {
    let t = bare_app(dir, verifier).await;
    install(&t, "installation-octo", "created", "octo", OCTO_ID).await;
    t
}

/// An issuer, and in a directory of its own an App installed on `octo`
/// that takes the issuer's tokens.
async fn installed() -> (Issuer, tempfile::TempDir, TestApp) {
    let (issuer, dir, t) = not_installed().await;
    install(&t, "installation-octo", "created", "octo", OCTO_ID).await;
    (issuer, dir, t)
}

/// An issuer and an App trusting it (`bare_app`), installed nowhere, in
/// a temporary folder.
async fn not_installed() -> (Issuer, tempfile::TempDir, TestApp) {
    let issuer = Issuer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let t = bare_app(dir.path(), Some(issuer.verifier())).await;
    (issuer, dir, t)
}

/// Deliver a signed `installation` webhook for account `login`/`id`
/// (installation id 900 + account id), and let the worker file it.
async fn install(t: &TestApp, delivery: &str, action: &str, login: &str, id: u64) {
    let body = json!({
        "action": action,
        "installation": {"id": 900 + id, "account": {"login": login, "id": id, "type": "Organization"}},
        "repositories": [{"full_name": format!("{login}/app")}],
        "sender": {"login": "admin", "id": 1, "type": "User"}
    });
    t.deliver_ok("installation", delivery, &body).await;
    t.settle().await;
}

/// A token from `owner/app`, signed by the issuer's key like a real one.
pub(crate) fn token_from(issuer: &Issuer, owner: &str, owner_id: &str) -> String {
    let c = with(
        claims(&issuer.url()),
        "repository",
        json!(format!("{owner}/app")),
    );
    let c = with(c, "repository_owner", json!(owner));
    let c = with(c, "repository_owner_id", json!(owner_id));
    sign(&test_key(), KID, &c)
}

fn line(repo: &str, number: u64) -> String {
    json!({
        "type": "create_issue", "repo": repo, "number": number,
        "url": format!("https://github.com/{repo}/issues/{number}"),
        "timestamp": "2026-10-01T00:00:00Z"
    })
    .to_string()
}

async fn post(t: &TestApp, query: &str, bearer: &str, body: String) -> (u16, Value) {
    crate::common::post_ndjson(&t.server.url(), query, bearer, body).await
}

#[tokio::test]
async fn a_valid_token_is_accepted_and_its_claims_fill_run_and_workflow() {
    let (issuer, _dir, t) = installed().await;

    let body = format!("{}\n{}\n", line(REPO, 5), line("OCTO/App", 6));
    let (status, answer) = post(&t, "", &issuer.token(), body).await;
    assert_eq!(status, 202, "{answer}");
    assert_eq!(
        answer["outputs"],
        json!(["octo/app:4242:0", "OCTO/App:4242:1"])
    );
    let outcomes = t.settled_outcomes().await;
    let first = &outcomes["octo/app:4242:0"];
    assert_eq!(first.run_id, Some(4242));
    assert_eq!(first.workflow.as_deref(), Some("ci-coach"));

    // The query's own run id and workflow win over the claims.
    let (status, answer) = post(
        &t,
        "?repo=octo/app&run_id=9&workflow=nightly",
        &issuer.token(),
        line(REPO, 7),
    )
    .await;
    assert_eq!(status, 202, "{answer}");
    assert_eq!(answer["outputs"], json!(["octo/app:9:0"]));
    t.settle().await;
    assert_eq!(
        t.outcomes().await["octo/app:9:0"].workflow.as_deref(),
        Some("nightly")
    );

    // The API token still works, for any repository.
    let (status, answer) = post(&t, "?repo=x/y&run_id=1", TOKEN, line("x/y", 1)).await;
    assert_eq!(status, 202, "{answer}");
    assert_eq!(
        issuer.jwks_hits(),
        1,
        "the key set is fetched once, then cached"
    );
    t.stop().await;
}

#[tokio::test]
async fn every_bad_token_or_foreign_repo_is_refused_and_stores_nothing() {
    let (issuer, _dir, t) = installed().await;
    let iss = issuer.url();
    let good = claims(&iss);
    let mut hs256 = Header::new(Algorithm::HS256);
    hs256.kid = Some(KID.into());
    let hs256 = jsonwebtoken::encode(&hs256, &good, &EncodingKey::from_secret(b"k")).unwrap();
    // Warm the key cache so the unknown-kid case is a refetch, not a first fetch.
    assert_eq!(post(&t, "", &issuer.token(), String::new()).await.0, 202);
    t.settle().await;
    let before = t.dump();

    let own = line(REPO, 5);
    type Case = (
        &'static str,
        String,
        &'static str,
        String,
        u16,
        &'static str,
    );
    let cases: Vec<Case> = vec![
        (
            "wrong audience",
            sign(
                &test_key(),
                KID,
                &with(good.clone(), "aud", json!("https://github.com/octo")),
            ),
            "",
            own.clone(),
            401,
            "audience",
        ),
        (
            "expired",
            sign(
                &test_key(),
                KID,
                &with(good.clone(), "exp", json!(now() - 600)),
            ),
            "",
            own.clone(),
            401,
            "expired",
        ),
        (
            "signed by another key",
            sign(&other_key(), KID, &good),
            "",
            own.clone(),
            401,
            "signature",
        ),
        (
            "unknown issuer",
            sign(
                &test_key(),
                KID,
                &with(good.clone(), "iss", json!("https://token.evil.example")),
            ),
            "",
            own.clone(),
            401,
            "issuer",
        ),
        (
            "unknown kid",
            sign(&other_key(), "rotated-away", &good),
            "",
            own.clone(),
            401,
            "key id",
        ),
        ("HS256", hs256, "", own.clone(), 401, "RS256"),
        (
            "garbage with two dots",
            "a.b.c".into(),
            "",
            own.clone(),
            401,
            "JWT",
        ),
        (
            "a line in another repo",
            issuer.token(),
            "",
            format!("{own}\n{}\n", line("evil/other", 1)),
            403,
            "evil/other",
        ),
        (
            "a query repo that is not the token's",
            issuer.token(),
            "?repo=evil/other",
            json!({"type": "add_comment", "number": 3}).to_string(),
            403,
            "evil/other",
        ),
        (
            "a line whose target is in another repo",
            issuer.token(),
            "",
            json!({"type": "add_comment", "repo": REPO,
                   "url": "https://github.com/evil/other/issues/3#issuecomment-9"})
            .to_string(),
            403,
            "evil/other",
        ),
    ];
    for (name, token, query, body, status, detail) in cases {
        let (got, answer) = post(&t, query, &token, body).await;
        assert_eq!(got, status, "{name}: {answer}");
        let expected_error = if status == 403 {
            "forbidden"
        } else {
            "unauthorized"
        };
        assert_eq!(answer["error"], expected_error, "{name}: {answer}");
        let text = answer["detail"].as_str().unwrap_or_default();
        assert!(
            text.contains(detail),
            "{name}: {text:?} should name {detail:?}"
        );
        t.settle().await;
        assert_eq!(t.dump(), before, "{name} changed the store");
    }
    // The unknown kid came within a minute of the last fetch: no refetch.
    assert_eq!(issuer.jwks_hits(), 1);
    t.stop().await;
}

#[tokio::test]
async fn without_an_oidc_audience_a_jwt_is_refused_as_not_configured() {
    let issuer = Issuer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let t = app_with(dir.path(), None).await;
    let before = t.dump();
    let (status, answer) = post(&t, "", &issuer.token(), line(REPO, 1)).await;
    assert_eq!(status, 401, "{answer}");
    assert!(answer["detail"]
        .as_str()
        .unwrap()
        .contains("OIDC is not configured"));
    let (status, answer) = post(&t, "", "not-the-token", line(REPO, 1)).await;
    assert_eq!(status, 401);
    assert_eq!(answer["detail"], "bearer token does not match");
    t.settle().await;
    assert_eq!(t.dump(), before);
    t.stop().await;
}

#[tokio::test]
async fn keys_are_refetched_on_rotation_but_at_most_once_per_interval() {
    let issuer = Issuer::start().await;
    let verifier = issuer.verifier();
    let mut config = OidcConfig::new(&issuer.url(), AUDIENCE);
    config.min_refetch = Duration::ZERO;
    let eager = OidcVerifier::new(config);
    for _ in 0..2 {
        verifier.verify(&issuer.token()).await.unwrap();
        eager.verify(&issuer.token()).await.unwrap();
    }
    assert_eq!(issuer.jwks_hits(), 2, "each verifier fetched once");

    // GitHub rotates to a new key.
    issuer
        .state
        .keys
        .lock()
        .unwrap()
        .push(jwk(&other_key(), "new-kid"));
    let rotated = sign(&other_key(), "new-kid", &claims(&issuer.url()));

    // Under a minute since its last fetch: no refetch, the kid is unknown.
    let refused = verifier.verify(&rotated).await.unwrap_err();
    assert!(matches!(refused, OidcError::Invalid(ref d) if d.contains("key id")));
    assert_eq!(issuer.jwks_hits(), 2);

    // Once the interval has passed, an unknown kid refetches and verifies.
    let claims = eager.verify(&rotated).await.unwrap();
    assert_eq!(claims.repository, REPO);
    assert_eq!(claims.run_id_number(), Some(4242));
    assert_eq!(eager.jwks_fetches(), 2);
    assert_eq!(issuer.jwks_hits(), 3);
}

#[tokio::test]
async fn an_unreachable_key_set_is_unavailable_not_unauthorized() {
    let issuer = Issuer::start().await;
    let token = issuer.token();
    let closed = issuer.url();
    issuer.server.stop().await;
    let verifier = OidcVerifier::new(OidcConfig::new(&closed, AUDIENCE));
    assert!(matches!(
        verifier.verify(&token).await,
        Err(OidcError::Unavailable(_))
    ));
}

#[tokio::test]
async fn record_in_a_workflow_gets_an_oidc_token_and_posts_the_manifest() {
    let (issuer, dir, t) = installed().await;
    let manifest = dir.path().join("safe-output-items.jsonl");
    std::fs::write(
        &manifest,
        format!("{}\n{}\n", line(REPO, 11), line(REPO, 12)),
    )
    .unwrap();

    let run = |audience: &str| {
        tokio::process::Command::new(env!("CARGO_BIN_EXE_safe-outcomes"))
            .args(["record", "--manifest"])
            .arg(&manifest)
            .args(["--to", &t.server.url(), "--audience", audience])
            .env_remove("API_TOKEN")
            .env_remove("SAFE_OUTCOMES_AUDIENCE")
            .env(
                "ACTIONS_ID_TOKEN_REQUEST_URL",
                format!("{}/_apis/token?api-version=2.0", issuer.url()),
            )
            .env("ACTIONS_ID_TOKEN_REQUEST_TOKEN", RUNTIME_TOKEN)
            .env("GITHUB_REPOSITORY", REPO)
            .env("GITHUB_RUN_ID", "4242")
            .output()
    };

    let out = run("someone-else").await.unwrap();
    assert!(
        !out.status.success(),
        "a token for another audience is refused"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains("unauthorized") && stdout.contains("audience"),
        "{stdout} {stderr}"
    );
    assert!(t.outcomes().await.is_empty());

    let out = run(AUDIENCE).await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "record failed: {stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answer: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        answer["outputs"],
        json!(["octo/app:4242:0", "octo/app:4242:1"])
    );
    let outcomes = t.settled_outcomes().await;
    assert_eq!(outcomes.len(), 2);
    assert_eq!(
        outcomes["octo/app:4242:1"].workflow.as_deref(),
        Some("ci-coach")
    );
    t.stop().await;
}

#[tokio::test]
async fn a_strangers_well_signed_token_is_refused_and_nothing_is_stored() {
    let (issuer, _dir, t) = installed().await;
    let before = t.dump();
    // Valid issuer, audience, signature and expiry; its own repository; but
    // no installation of the App is on `evil`.
    let stranger = token_from(&issuer, "evil", "666");
    let (status, answer) = post(&t, "", &stranger, line("evil/app", 1)).await;
    assert_eq!(status, 403, "{answer}");
    assert_eq!(answer["error"], "forbidden");
    let detail = answer["detail"].as_str().unwrap();
    assert!(
        detail.contains("\"evil\" (id 666)") && detail.contains("no installation"),
        "{detail}"
    );
    // Nor may it claim the installed owner's login with its own id.
    let squatter = token_from(&issuer, "octo", "666");
    let (status, answer) = post(&t, "", &squatter, line("octo/app", 1)).await;
    assert_eq!(status, 403, "{answer}");
    t.settle().await;
    assert_eq!(t.dump(), before, "a refused token changed the store");
    assert!(t.outcomes().await.is_empty());

    // The installed owner's token is accepted, and so is a renamed owner's
    // (same account id, new login).
    let (status, answer) = post(&t, "", &issuer.token(), line(REPO, 2)).await;
    assert_eq!(status, 202, "{answer}");
    let renamed = token_from(&issuer, "octo-renamed", &OCTO_ID.to_string());
    let (status, answer) = post(&t, "", &renamed, line("octo-renamed/app", 3)).await;
    assert_eq!(status, 202, "{answer}");
    assert_eq!(t.settled_outcomes().await.len(), 2);
    t.stop().await;
}

#[tokio::test]
async fn a_deleted_installation_no_longer_lets_its_owner_post() {
    let (issuer, _dir, t) = installed().await;
    assert_eq!(post(&t, "", &issuer.token(), line(REPO, 1)).await.0, 202);
    install(&t, "installation-octo-gone", "deleted", "octo", OCTO_ID).await;
    let (status, answer) = post(&t, "", &issuer.token(), line(REPO, 2)).await;
    assert_eq!(status, 403, "{answer}");
    t.stop().await;
}

#[tokio::test]
async fn with_no_installation_and_no_allow_list_oidc_is_refused() {
    let (issuer, _dir, t) = not_installed().await;
    let before = t.dump();
    let (status, answer) = post(&t, "", &issuer.token(), line(REPO, 1)).await;
    assert_eq!(status, 403, "{answer}");
    assert!(
        answer["detail"]
            .as_str()
            .unwrap()
            .contains("OIDC_ALLOWED_OWNERS is empty"),
        "{answer}"
    );
    t.settle().await;
    assert_eq!(t.dump(), before);
    // The API token is not affected.
    let (status, answer) = post(&t, "?run_id=1", TOKEN, line(REPO, 1)).await;
    assert_eq!(status, 202, "{answer}");
    t.stop().await;
}

#[tokio::test]
async fn the_allow_list_admits_owners_by_login_or_id() {
    let issuer = Issuer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = OidcConfig::new(&issuer.url(), AUDIENCE).with_allowed_owners(&["Partner", "4242"]);
    let t = bare_app(dir.path(), Some(Arc::new(OidcVerifier::new(config)))).await;
    let cases = [
        ("partner", "1", 202),
        ("anyone", "4242", 202),
        ("octo", "65", 403),
        ("partner-not", "4243", 403),
    ];
    for (n, (owner, id, want)) in cases.into_iter().enumerate() {
        let token = token_from(&issuer, owner, id);
        let (status, answer) =
            post(&t, "", &token, line(&format!("{owner}/app"), n as u64 + 1)).await;
        assert_eq!(status, want, "{owner} ({id}): {answer}");
    }
    assert_eq!(t.settled_outcomes().await.len(), 2);
    t.stop().await;
}

#[tokio::test]
async fn a_token_workflow_name_with_control_characters_is_left_out() {
    let (issuer, _dir, t) = installed().await;
    let c = with(
        claims(&issuer.url()),
        "workflow",
        json!("ci\u{1b}[2J\u{202E}"),
    );
    let token = sign(&test_key(), KID, &c);
    let (status, answer) = post(&t, "", &token, line(REPO, 1)).await;
    assert_eq!(status, 202, "{answer}");
    assert_eq!(t.settled_outcomes().await["octo/app:4242:0"].workflow, None);
    t.stop().await;
}
