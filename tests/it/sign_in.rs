//! Issue 14 §1 and §3 through the real router and the fake GitHub: the
//! setup page registers an App through the manifest flow and writes `.env`;
//! `/status` tells wrong credentials and failing calls apart from a healthy
//! App; sign-in with GitHub gives each viewer exactly the repositories their
//! account can see, and a forged, expired, revoked or signed-out session
//! reads nothing.

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{COOKIE, LOCATION, SET_COOKIE};
use reqwest::redirect::Policy;
use safe_outcomes::app::App;
use safe_outcomes::github::{verify, ApiCalls, AppCredentials, GitHubClient};
use safe_outcomes::http::auth::{AuthOptions, OAuthApp, SetupOptions};
use safe_outcomes::http::RouterOptions;
use safe_outcomes::model::clock::Clock;
use serde_json::Value;

use crate::answers;
use crate::common::tester::{Setup, Tester};
use crate::common::{self, serve::ServeChild};
use crate::fake_github::users::{self, CLIENT_ID, CLIENT_SECRET};
use crate::fake_github::{self, Failure, FakeGitHub, Sleeps, GET_APP};

/// The sign-in tests' App: the tester on the system clock, its data in
/// `dir/data`, its `PUBLIC_URL` its own address (a port chosen first, for
/// the redirect URLs), its sign-in options `auth(url)` against `gh`.
pub(crate) type Rig = Tester;

fn web_setup(
    dir: &std::path::Path,
    gh: &FakeGitHub,
    auth: impl FnOnce(&str) -> AuthOptions + 'static,
    api_token: &str,
) -> Setup {
    let token = api_token.to_string();
    Tester::setup_on(Clock::System)
        .github(gh.clone())
        .data_at(dir.join("data"))
        .router(move |gh, url| {
            let mut options = auth(url);
            options.api_url = gh.url.clone();
            options.web_url = gh.url.clone();
            options.public_url = url.to_string();
            RouterOptions {
                api_token: Some(token.into()),
                auth: options,
                ..RouterOptions::default()
            }
        })
}

/// An App without credentials (no GitHub client) with sign-in on `gh`.
pub(crate) async fn web_rig(
    dir: &std::path::Path,
    gh: &FakeGitHub,
    auth: impl FnOnce(&str) -> AuthOptions + 'static,
) -> Tester {
    web_rig_with_token(dir, gh, auth, common::TOKEN).await
}

/// `web_rig` with another `API_TOKEN`.
pub(crate) async fn web_rig_with_token(
    dir: &std::path::Path,
    gh: &FakeGitHub,
    auth: impl FnOnce(&str) -> AuthOptions + 'static,
    api_token: &str,
) -> Tester {
    web_setup(dir, gh, auth, api_token)
        .without_app()
        .start()
        .await
}

/// `web_rig` in App mode: the App has credentials and a GitHub client on
/// `gh` (no background task), so it can ask GitHub with its installation
/// tokens.
pub(crate) async fn web_rig_in_app_mode(
    dir: &std::path::Path,
    gh: &FakeGitHub,
    auth: impl FnOnce(&str) -> AuthOptions + 'static,
) -> Tester {
    web_setup(dir, gh, auth, common::TOKEN)
        .attempts(2)
        .start()
        .await
}

/// GET `path` on `base` with the test API token; the body as text.
async fn get_with_token(base: &str, path: &str) -> String {
    let req = reqwest::Client::new().get(format!("{base}{path}"));
    answers::text(req.bearer_auth(common::TOKEN)).await
}

/// A browser that follows no redirect by itself.
pub(crate) fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(Policy::none())
        .build()
        .unwrap()
}

/// GET `url` from `web`.
pub(crate) async fn fetch(web: &reqwest::Client, url: impl reqwest::IntoUrl) -> reqwest::Response {
    web.get(url).send().await.unwrap()
}

/// GET `url` from `web` with the `Cookie` header `cookie`.
pub(crate) async fn get_with_cookie(
    web: &reqwest::Client,
    url: impl reqwest::IntoUrl,
    cookie: &str,
) -> reqwest::Response {
    web.get(url).header(COOKIE, cookie).send().await.unwrap()
}

pub(crate) fn location(r: &reqwest::Response) -> String {
    r.headers()
        .get(LOCATION)
        .unwrap_or_else(|| panic!("no Location on a {}", r.status()))
        .to_str()
        .unwrap()
        .to_string()
}

/// The value the response sets for cookie `name`.
pub(crate) fn set_cookie(r: &reqwest::Response, name: &str) -> Option<String> {
    r.headers().get_all(SET_COOKIE).iter().find_map(|v| {
        let v = v.to_str().ok()?;
        let (pair, attributes) = v.split_once(';').unwrap_or((v, ""));
        let (k, value) = pair.split_once('=')?;
        assert!(
            attributes.contains("HttpOnly") && attributes.contains("SameSite=Lax"),
            "{v}"
        );
        (k == name).then(|| value.to_string())
    })
}

pub(crate) fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The value of `attr="…"` after `marker` in `html`.
pub(crate) fn attribute_after(html: &str, marker: &str, attr: &str) -> String {
    let at = html
        .find(marker)
        .unwrap_or_else(|| panic!("{marker} not in {html}"));
    let rest = &html[at..];
    let start = rest.find(&format!("{attr}=\"")).unwrap() + attr.len() + 2;
    let end = start + rest[start..].find('"').unwrap();
    unescape(&rest[start..end])
}

/// `.env` lines as pairs (double-quoted values, `\n` escapes kept).
fn env_pairs(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.trim_matches('"').to_string()))
        .collect()
}

fn env_get(pairs: &[(String, String)], k: &str) -> String {
    pairs
        .iter()
        .find(|(n, _)| n == k)
        .unwrap_or_else(|| panic!("{k} not in .env"))
        .1
        .clone()
}

pub(crate) fn setup_options(dir: &std::path::Path) -> impl FnOnce(&str) -> AuthOptions {
    let env_file = dir.join(".env");
    move |_| AuthOptions {
        setup: Some(SetupOptions {
            env_file,
            webhook_path: "/api/github/webhooks".into(),
        }),
        ..AuthOptions::default()
    }
}

#[tokio::test]
async fn the_setup_page_registers_the_app_and_writes_env() {
    let dir = tempfile::tempdir().unwrap();
    let gh = FakeGitHub::start().await;
    let rig = web_rig(dir.path(), &gh, setup_options(dir.path())).await;
    let web = browser();

    // Without the setup key, `/` only asks for it: no form to GitHub, no
    // state, and a wrong key is refused.
    let stranger = web.get(format!("{}/", rig.url())).send().await.unwrap();
    assert_eq!(stranger.status(), 200);
    assert!(set_cookie(&stranger, "so_setup").is_none());
    let html = stranger.text().await.unwrap();
    assert!(
        html.contains("setup_key") && !html.contains("Register GitHub App"),
        "{html}"
    );
    assert!(!html.contains("settings/apps/new"), "{html}");
    let wrong = fetch(&web, format!("{}/?setup_key=not-the-key", rig.url())).await;
    assert_eq!(wrong.status(), 403);
    assert!(set_cookie(&wrong, "so_setup_key").is_none());

    // The key printed in the terminal: taken once, remembered by a cookie.
    let key = safe_outcomes::http::auth::setup::setup_key(&rig.t.app.store).unwrap();
    let key = key.expose_secret();
    let taken = fetch(&web, format!("{}/?setup_key={key}", rig.url())).await;
    assert_eq!(taken.status(), 303);
    assert_eq!(location(&taken), "/");
    let key_cookie = format!(
        "so_setup_key={}",
        set_cookie(&taken, "so_setup_key").expect("the key's cookie")
    );

    // The page: a form posting the manifest to GitHub, and a state cookie.
    let page = get_with_cookie(&web, format!("{}/", rig.url()), &key_cookie).await;
    assert_eq!(page.status(), 200);
    let state_cookie = set_cookie(&page, "so_setup").expect("a state cookie");
    let html = page.text().await.unwrap();
    assert!(html.contains("Register GitHub App"), "{html}");
    let action = attribute_after(&html, "<form", "action");
    assert!(
        action.starts_with(&format!("{}/settings/apps/new?state=", gh.url)),
        "{action}"
    );
    let manifest = attribute_after(&html, "name=\"manifest\"", "value");

    // For an organization, the form posts to the organization's page.
    let org_page =
        get_with_cookie(&web, format!("{}/?org=acme-corp", rig.url()), &key_cookie).await;
    let org_html = org_page.text().await.unwrap();
    let org_action = attribute_after(&org_html, "<form", "action");
    assert!(
        org_action.starts_with(&format!(
            "{}/organizations/acme-corp/settings/apps/new?state=",
            gh.url
        )),
        "{org_action}"
    );
    let bad = get_with_cookie(&web, format!("{}/?org=..%2Fx", rig.url()), &key_cookie).await;
    assert_eq!(bad.status(), 400);

    // The browser posts it; GitHub sends it back to /setup with a code.
    let back = web
        .post(&action)
        .form(&[("manifest", manifest.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(back.status(), 302);
    let callback = location(&back);
    assert!(
        callback.starts_with(&format!("{}/setup?code=", rig.url())),
        "{callback}"
    );
    assert!(
        gh.registered_manifests().is_empty(),
        "nothing converted before /setup"
    );

    // A forged state, no state cookie, or a browser without the key is
    // refused and converts nothing.
    let forged = callback.replace("state=", "state=x");
    let both = format!("so_setup={state_cookie}; {key_cookie}");
    for (url, cookie) in [
        (&forged, Some(both.clone())),
        (&callback, None),
        (&callback, Some(key_cookie.clone())),
        (&callback, Some(format!("so_setup={state_cookie}"))),
    ] {
        let mut req = web.get(url.as_str());
        if let Some(c) = cookie {
            req = req.header(COOKIE, c);
        }
        let r = req.send().await.unwrap();
        assert_eq!(r.status(), 403, "{url}");
    }
    assert_eq!(gh.calls(users::CONVERSIONS), 0);
    assert!(!dir.path().join(".env").exists());

    // The real redirect: exchanged, written, linked to the install page.
    let done = get_with_cookie(&web, &callback, &both).await;
    assert_eq!(done.status(), 200);
    let html = done.text().await.unwrap();
    assert!(
        html.contains("https://github.com/apps/safe-outcomes/installations/new"),
        "{html}"
    );
    let (registered, _) = gh.registered_manifests().pop().unwrap();
    assert_eq!(
        registered["hook_attributes"]["url"],
        format!("{}/api/github/webhooks", rig.url())
    );
    assert_eq!(registered["redirect_url"], format!("{}/setup", rig.url()));
    assert_eq!(
        registered["callback_urls"][0],
        format!("{}/auth/callback", rig.url())
    );
    assert_eq!(registered["default_permissions"]["checks"], "write");

    let env_path = dir.path().join(".env");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&env_path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    let env = env_pairs(&std::fs::read_to_string(&env_path).unwrap());
    assert_eq!(env_get(&env, "APP_ID"), "4242");
    assert_eq!(env_get(&env, "WEBHOOK_SECRET"), users::NEW_WEBHOOK_SECRET);
    assert_eq!(env_get(&env, "GITHUB_CLIENT_ID"), CLIENT_ID);
    assert_eq!(env_get(&env, "GITHUB_CLIENT_SECRET"), CLIENT_SECRET);
    // The key as written signs JWTs GitHub accepts.
    let creds = AppCredentials::from_config(
        &env_get(&env, "APP_ID"),
        Some(env_get(&env, "PRIVATE_KEY").into()),
        None,
    )
    .unwrap();
    let client = GitHubClient::new(
        creds.app_client(&gh.url).unwrap(),
        Arc::new(ApiCalls::default()),
        fake_github::recorded_policy(&Sleeps::default(), Clock::System, 1),
    );
    assert_eq!(
        verify::check_credentials(&client).await.unwrap(),
        "safe-outcomes-test"
    );

    // The state works once: a replay is refused before GitHub is asked,
    // and the .env is not touched again.
    let before = std::fs::read_to_string(&env_path).unwrap();
    let again = get_with_cookie(&web, &callback, &both).await;
    assert_eq!(again.status(), 403);
    assert_eq!(gh.calls(users::CONVERSIONS), 1);
    assert_eq!(std::fs::read_to_string(&env_path).unwrap(), before);

    // Once registered, `/` says so to anyone, and nothing about the App;
    // the key is spent.
    for cookie in [None, Some(&key_cookie)] {
        let mut req = web.get(format!("{}/", rig.url()));
        if let Some(c) = cookie {
            req = req.header(COOKIE, c);
        }
        let html = req.send().await.unwrap().text().await.unwrap();
        assert!(html.contains("registered"), "{html}");
        for secret in ["4242", "safe-outcomes-test", "installations/new", "<form"] {
            assert!(!html.contains(secret), "{secret} in {html}");
        }
    }
    let spent = fetch(&web, format!("{}/?setup_key={key}", rig.url())).await;
    assert!(set_cookie(&spent, "so_setup_key").is_none());
    rig.stop().await;
}

#[tokio::test]
async fn an_app_with_credentials_serves_no_setup() {
    let dir = tempfile::tempdir().unwrap();
    let gh = FakeGitHub::start().await;
    let rig = web_rig(dir.path(), &gh, |_| AuthOptions::default()).await;
    let web = browser();
    let root = web.get(format!("{}/", rig.url())).send().await.unwrap();
    assert_ne!(root.status(), 200);
    assert!(!root.text().await.unwrap().contains("Register GitHub App"));
    let setup = fetch(&web, format!("{}/setup?code=abc&state=x", rig.url())).await;
    assert_eq!(setup.status(), 404);
    assert_eq!(gh.calls(users::CONVERSIONS), 0);
    // No OAuth client: no "Sign in with GitHub" on the sign-in page (the
    // API token's form instead), and its path says what to set.
    let page = fetch(&web, format!("{}/auth/login", rig.url())).await;
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    assert!(!html.contains("Sign in with GitHub"), "{html}");
    assert!(html.contains("name=\"token\""), "{html}");
    let login = fetch(&web, format!("{}/auth/login/github", rig.url())).await;
    assert_eq!(login.status(), 503);
    assert!(login.text().await.unwrap().contains("GITHUB_CLIENT_ID"));
    rig.stop().await;
}

// --- /status ---------------------------------------------------------------

async fn status_of(t: &common::TestApp) -> Value {
    t.get("/status").await.body
}

#[tokio::test]
async fn status_tells_refused_credentials_and_failing_calls_from_a_healthy_app() {
    let dir = tempfile::tempdir().unwrap();
    let gh = FakeGitHub::start().await;
    let app = App::start(dir.path(), Clock::System).unwrap();
    let calls = app.shared.github_calls.clone();
    let t = common::TestApp::serve(app, Clock::System, dir.path(), RouterOptions::default()).await;
    let status = status_of(&t).await;
    assert_eq!(status["mode"], "app-unverified", "{status}");
    assert_eq!(status["github"]["credentials"]["state"], "unchecked");

    // Wrong App id: GitHub refuses the JWT.
    let wrong =
        AppCredentials::from_config("4243", Some(fake_github::PRIVATE_KEY.into()), None).unwrap();
    let policy = fake_github::recorded_policy(&Sleeps::default(), Clock::System, 2);
    let bad = GitHubClient::new(
        wrong.app_client(&gh.url).unwrap(),
        calls.clone(),
        policy.clone(),
    );
    assert!(verify::check_credentials(&bad).await.is_err());
    let status = status_of(&t).await;
    assert_eq!(status["mode"], "app-credentials-refused", "{status}");
    assert_eq!(status["github"]["credentials"]["state"], "refused");
    assert_eq!(status["github"]["last_error"]["kind"], "unauthorized");
    assert!(
        status["last_error"].as_str().unwrap().contains("401"),
        "{status}"
    );

    // The right credentials: verified, healthy.
    let good = gh.client(calls.clone(), policy);
    verify::check_credentials(&good).await.unwrap();
    let status = status_of(&t).await;
    assert_eq!(status["mode"], "app", "{status}");
    assert_eq!(status["github"]["credentials"]["state"], "verified");
    assert_eq!(status["github"]["consecutive_failures"], 0);

    // GitHub failing every call: not "app", and the error is shown.
    gh.fail_next(GET_APP, 100, Failure::status(502));
    for _ in 0..3 {
        assert!(verify::check_credentials(&good).await.is_err());
    }
    let status = status_of(&t).await;
    assert_eq!(status["mode"], "app-failing", "{status}");
    assert_eq!(status["github"]["consecutive_failures"], 3);
    assert_eq!(status["github"]["last_error"]["kind"], "budget_exhausted");
    assert!(
        status["github"]["last_error"]["message"]
            .as_str()
            .unwrap()
            .contains("502"),
        "{status}"
    );
    assert!(status["github"]["errors_by_kind"]["budget_exhausted"].as_u64() == Some(3));
    t.stop().await;
}

#[tokio::test]
async fn serve_with_wrong_credentials_is_not_reported_healthy() {
    let dir = tempfile::tempdir().unwrap();
    let gh = FakeGitHub::start().await;
    let mut serve = ServeChild::start(
        dir.path(),
        &[
            ("APP_ID", "4243"),
            ("PRIVATE_KEY", fake_github::PRIVATE_KEY),
            ("GITHUB_API_URL", &gh.url),
            ("WEBHOOK_SECRET", common::SECRET),
        ],
    )
    .await;
    let http = reqwest::Client::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let status = loop {
        let s = answers::json(http.get(format!("{}/status", serve.url))).await;
        if s["github"]["credentials"]["state"] == "refused" {
            break s;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{s}\n{}",
            serve.output()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_ne!(status["mode"], "app", "{status}");
    assert!(!status["last_error"].is_null(), "{status}");
    assert_eq!(gh.calls(GET_APP), 1);
    serve.terminate().await;
}

// --- Sign-in and scope -----------------------------------------------------

pub(crate) fn signin_options(
    session_ttl: Duration,
    scope_ttl: Duration,
) -> impl FnOnce(&str) -> AuthOptions {
    move |_| AuthOptions {
        oauth: Some(OAuthApp {
            client_id: CLIENT_ID.into(),
            client_secret: CLIENT_SECRET.into(),
        }),
        session_ttl,
        scope_ttl,
        ..AuthOptions::default()
    }
}

/// A model GitHub whose organization acme (installation 1) has these
/// members, each seeing the repositories named with it.
pub(crate) async fn acme_github(members: &[(&str, &[&str])]) -> FakeGitHub {
    let gh = FakeGitHub::start().await;
    for (login, repos) in members {
        gh.add_user(login, 1, "acme", repos);
    }
    gh
}

/// Asserts `answer` (a status and a body) is `status` and says `why`.
pub(crate) fn assert_says(answer: (u16, String), status: u16, why: &str) {
    let (got, body) = answer;
    assert_eq!(got, status, "{body}");
    assert!(body.contains(why), "{body}");
}

/// In acme, alice sees both repositories, bob acme/docs only.
pub(crate) const ACME_ALICE_AND_BOB: &[(&str, &[&str])] = &[
    ("alice", &["acme/widgets", "acme/docs"]),
    ("bob", &["acme/docs"]),
];

/// Alice sees acme's two repositories; bob sees acme/docs and globex's one.
pub(crate) fn add_alice_and_bob(gh: &FakeGitHub) {
    for (login, repos) in ACME_ALICE_AND_BOB {
        gh.add_user(login, 1, "acme", repos);
    }
    gh.add_user("bob", 2, "globex", &["globex/secret-plans"]);
}

/// A rig with sign-in configured (ten-minute sessions and scopes), seeded.
pub(crate) async fn seeded_rig(dir: &std::path::Path, gh: &FakeGitHub) -> Rig {
    seeded_rig_with(dir, gh, Duration::from_secs(600), Duration::from_secs(600)).await
}

/// A model GitHub with alice and bob (`add_alice_and_bob`) and a
/// `seeded_rig` signing in against it.
pub(crate) async fn alice_and_bob_rig(dir: &std::path::Path) -> (FakeGitHub, Rig) {
    let gh = FakeGitHub::start().await;
    add_alice_and_bob(&gh);
    let rig = seeded_rig(dir, &gh).await;
    (gh, rig)
}

/// `seeded_rig` with the sign-in options `signin_options(session_ttl, scope_ttl)`.
pub(crate) async fn seeded_rig_with(
    dir: &std::path::Path,
    gh: &FakeGitHub,
    session_ttl: Duration,
    scope_ttl: Duration,
) -> Rig {
    let rig = web_rig(dir, gh, signin_options(session_ttl, scope_ttl)).await;
    seed(&rig).await;
    rig
}

/// Three repositories of two organizations, one output each.
pub(crate) async fn seed(rig: &Rig) {
    let client =
        safe_outcomes::ingest::client::Client::new(&rig.url(), None, Some(common::TOKEN.into()));
    for (i, repo) in ["acme/widgets", "acme/docs", "globex/secret-plans"]
        .iter()
        .enumerate()
    {
        crate::common::post_issue_five(&client, repo, 70 + i as u64).await;
    }
    rig.t.app.wait_idle().await;
}

/// Sign in as `login` through the whole web flow; the session cookie value.
pub(crate) async fn sign_in(rig: &Rig, login: &str) -> String {
    let web = browser();
    let start = fetch(
        &web,
        format!("{}/auth/login/github?next=/api/v1/me", rig.url()),
    )
    .await;
    assert_eq!(start.status(), 303);
    let oauth = set_cookie(&start, "so_oauth").unwrap();
    let authorize = location(&start);
    let back = web
        .get(&authorize)
        .header("x-fake-user", login)
        .send()
        .await
        .unwrap();
    assert_eq!(back.status(), 302, "{}", back.text().await.unwrap());
    let callback = location(&back);
    assert!(callback.starts_with(&format!("{}/auth/callback?", rig.url())));
    let done = get_with_cookie(&web, &callback, &format!("so_oauth={oauth}")).await;
    assert_eq!(done.status(), 303, "{}", done.text().await.unwrap());
    assert_eq!(location(&done), "/api/v1/me");
    set_cookie(&done, "so_session").expect("a session cookie")
}

/// Send `request`; its status and body.
pub(crate) async fn answer(request: reqwest::RequestBuilder) -> (u16, String) {
    let r = request.send().await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

pub(crate) async fn read(rig: &Rig, path: &str, session: &str) -> (u16, String) {
    let session = format!("so_session={session}");
    answer(
        browser()
            .get(format!("{}{path}", rig.url()))
            .header(COOKIE, session),
    )
    .await
}

pub(crate) fn repos_of(body: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(body).unwrap();
    let mut repos: Vec<String> = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            let id = o["safe_output_id"].as_str().unwrap();
            id.split(':').next().unwrap().to_string()
        })
        .collect();
    repos.sort();
    repos
}

#[tokio::test]
async fn two_viewers_see_only_the_repositories_their_accounts_can_see() {
    let dir = tempfile::tempdir().unwrap();
    let gh = FakeGitHub::start().await;
    add_alice_and_bob(&gh);
    // One item per page: the lists are read through their `Link` headers.
    gh.set_max_per_page(1);
    let rig = seeded_rig(dir.path(), &gh).await;

    let alice = sign_in(&rig, "alice").await;
    let bob = sign_in(&rig, "bob").await;
    let (status, body) = read(&rig, "/api/v1/outputs", &alice).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(repos_of(&body), ["acme/docs", "acme/widgets"]);
    assert!(
        !body.contains("globex") && !body.contains("secret-plans"),
        "{body}"
    );
    let (status, body) = read(&rig, "/api/v1/outputs", &bob).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(repos_of(&body), ["acme/docs", "globex/secret-plans"]);
    assert!(!body.contains("widgets"), "{body}");
    // Asking for another's repository gives nothing, not its data.
    let (_, body) = read(&rig, "/api/v1/outputs?repo=globex/secret-plans", &alice).await;
    assert_eq!(repos_of(&body), Vec::<String>::new());
    assert!(
        !body.contains("secret-plans") || body.contains("\"items\":[]"),
        "{body}"
    );

    let (_, me) = read(&rig, "/api/v1/me", &alice).await;
    let me: Value = serde_json::from_str(&me).unwrap();
    assert_eq!(me["login"], "alice");
    assert_eq!(
        me["repositories"],
        serde_json::json!(["acme/docs", "acme/widgets"])
    );

    // The scope is cached: a second read asks GitHub nothing.
    let asked = gh.calls(users::USER_INSTALLATIONS);
    read(&rig, "/api/v1/outputs", &alice).await;
    assert_eq!(gh.calls(users::USER_INSTALLATIONS), asked);

    // The API token still sees everything.
    let all = get_with_token(&rig.url(), "/api/v1/outputs").await;
    assert_eq!(
        repos_of(&all),
        ["acme/docs", "acme/widgets", "globex/secret-plans"]
    );
    rig.stop().await;
}

#[tokio::test]
async fn forged_expired_revoked_and_signed_out_sessions_read_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let widgets: &[&str] = &["acme/widgets"];
    let gh = acme_github(&[("alice", widgets), ("carol", widgets), ("dave", widgets)]).await;
    let rig = seeded_rig_with(
        dir.path(),
        &gh,
        Duration::from_secs(2),
        Duration::from_millis(1),
    )
    .await;
    let alice = sign_in(&rig, "alice").await;
    assert_eq!(read(&rig, "/api/v1/outputs", &alice).await.0, 200);

    // Forged: another signature, another payload, garbage, no cookie at all.
    let (payload, sig) = alice.split_once('.').unwrap();
    let flipped = if sig.starts_with('A') {
        sig.replacen('A', "B", 1)
    } else {
        format!("A{}", &sig[1..])
    };
    let other_payload = {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!(
            "someone-else|{}",
            chrono::Utc::now().timestamp() + 3600
        ))
    };
    for forged in [
        format!("{payload}.{flipped}"),
        format!("{other_payload}.{sig}"),
        "garbage".to_string(),
        String::new(),
    ] {
        let (status, body) = read(&rig, "/api/v1/outputs", &forged).await;
        assert_eq!(status, 401, "{forged}: {body}");
        assert!(!body.contains("acme/widgets"), "{body}");
    }

    // Signed out: the form needs the session's CSRF token.
    let carol = sign_in(&rig, "carol").await;
    let no_csrf = browser()
        .post(format!("{}/auth/logout", rig.url()))
        .header(COOKIE, format!("so_session={carol}"))
        .form(&[("csrf", "wrong")])
        .send()
        .await
        .unwrap();
    assert_eq!(no_csrf.status(), 403);
    assert_eq!(read(&rig, "/api/v1/outputs", &carol).await.0, 200);
    let (_, form) = read(&rig, "/auth/logout", &carol).await;
    let csrf = attribute_after(&form, "name=\"csrf\"", "value");
    let out = browser()
        .post(format!("{}/auth/logout", rig.url()))
        .header(COOKIE, format!("so_session={carol}"))
        .form(&[("csrf", csrf.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), 303);
    assert_eq!(read(&rig, "/api/v1/outputs", &carol).await.0, 401);

    // Revoked on GitHub: the next look at the scope ends the session.
    let dave = sign_in(&rig, "dave").await;
    assert_eq!(read(&rig, "/api/v1/outputs", &dave).await.0, 200);
    gh.revoke_user_tokens("dave");
    tokio::time::sleep(Duration::from_millis(5)).await;
    assert_eq!(read(&rig, "/api/v1/outputs", &dave).await.0, 401);

    // Expired: the cookie (and the session) last two seconds here.
    tokio::time::sleep(Duration::from_millis(3100)).await;
    assert_says(read(&rig, "/api/v1/outputs", &alice).await, 401, "expired");
    rig.stop().await;
}

/// The installations, as GitHub's `installation.created` deliveries tell the server.
pub(crate) async fn install(rig: &Rig, id: u64, account: &str, repos: &[&str]) {
    let client =
        safe_outcomes::ingest::client::Client::new(&rig.url(), Some(common::SECRET.into()), None);
    let body = serde_json::json!({
        "action": "created",
        "installation": {"id": id, "account": {"login": account, "id": id + 100}},
        "repositories": repos.iter().map(|r| serde_json::json!({"full_name": r})).collect::<Vec<_>>(),
        "sender": common::user("admin"),
    });
    let a = client
        .deliver(
            "installation",
            &format!("inst-{id}"),
            body.to_string().as_bytes(),
        )
        .await
        .unwrap();
    assert!(a.status < 300, "{}", a.body);
    rig.t.app.wait_idle().await;
}

pub(crate) async fn post_form(
    rig: &Rig,
    path: &str,
    session: &str,
    form: &[(&str, &str)],
) -> (u16, String) {
    let session = format!("so_session={session}");
    answer(
        browser()
            .post(format!("{}{path}", rig.url()))
            .header(COOKIE, session)
            .form(form),
    )
    .await
}

/// Ask for installation `id`'s read token through the tokens page's form
/// (with `csrf`); the answer.
pub(crate) async fn ask_token(rig: &Rig, session: &str, csrf: &str, id: &str) -> (u16, String) {
    let form = [("csrf", csrf), ("installation", id)];
    post_form(rig, "/auth/tokens", session, &form).await
}

/// Revoke the read token of `digest` through the tokens page's form (with
/// `csrf`); the answer.
pub(crate) async fn revoke(rig: &Rig, session: &str, csrf: &str, digest: &str) -> (u16, String) {
    let form = [("csrf", csrf), ("token", digest)];
    post_form(rig, "/auth/tokens/revoke", session, &form).await
}

/// The `soi_` token a page shows.
pub(crate) fn token_in(html: &str) -> String {
    let start = html
        .find("<code>soi_")
        .unwrap_or_else(|| panic!("no token in {html}"))
        + "<code>".len();
    html[start..start + html[start..].find('<').unwrap()].to_string()
}

pub(crate) async fn read_with_bearer(rig: &Rig, token: &str) -> (u16, String) {
    answer(
        reqwest::Client::new()
            .get(format!("{}/api/v1/outputs", rig.url()))
            .bearer_auth(token),
    )
    .await
}

#[tokio::test]
async fn an_installation_token_reads_exactly_its_installation() {
    let dir = tempfile::tempdir().unwrap();
    let (_gh, rig) = alice_and_bob_rig(dir.path()).await;
    install(&rig, 1, "acme", &["acme/widgets", "acme/docs"]).await;
    install(&rig, 2, "globex", &["globex/secret-plans"]).await;

    // Alice sees every repository of installation 1: she may issue its token.
    let alice = sign_in(&rig, "alice").await;
    let (status, html) = read(&rig, "/auth/tokens", &alice).await;
    assert_eq!(status, 200, "{html}");
    let csrf = attribute_after(&html, "name=\"csrf\"", "value");
    assert_eq!(ask_token(&rig, &alice, "x", "1").await.0, 403);
    let (status, html) = ask_token(&rig, &alice, &csrf, "1").await;
    assert_eq!(status, 200, "{html}");
    let token = &token_in(&html);

    let (status, body) = read_with_bearer(&rig, token).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(repos_of(&body), ["acme/docs", "acme/widgets"]);
    assert!(!body.contains("globex"), "{body}");

    // Bob sees only part of installation 1: his token reads only that part.
    let bob = sign_in(&rig, "bob").await;
    let bobs = crate::read_tokens::issue(&rig, &bob, "1").await;
    let (status, body) = read_with_bearer(&rig, &bobs).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(repos_of(&body), ["acme/docs"]);
    // Nor can anyone issue for an installation they see nothing of.
    assert_eq!(ask_token(&rig, &alice, &csrf, "2").await.0, 403);

    // A tampered token, or one whose installation is gone, reads nothing.
    let last = if token.ends_with('x') { "y" } else { "x" };
    let tampered = format!("{}{last}", &token[..token.len() - 1]);
    assert_eq!(read_with_bearer(&rig, &tampered).await.0, 401);
    let client =
        safe_outcomes::ingest::client::Client::new(&rig.url(), Some(common::SECRET.into()), None);
    let deleted = serde_json::json!({"action": "deleted", "installation": {"id": 1, "account": {"login": "acme"}}, "sender": common::user("admin")});
    client
        .deliver(
            "installation",
            "inst-1-deleted",
            deleted.to_string().as_bytes(),
        )
        .await
        .unwrap();
    rig.t.app.wait_idle().await;
    assert_eq!(read_with_bearer(&rig, token).await.0, 401);
    rig.stop().await;
}

#[tokio::test]
async fn serve_without_credentials_offers_the_setup_page() {
    let dir = tempfile::tempdir().unwrap();
    let (mut serve, env_file) =
        ServeChild::start_with_env_file(dir.path(), &[("PUBLIC_URL", "https://outcomes.example")])
            .await;
    // The setup link, printed on stdout with its key (after "listening on").
    let mut link = None;
    for _ in 0..300 {
        link = serve
            .output()
            .lines()
            .find_map(|l| l.strip_prefix("setup: register the GitHub App at "))
            .map(str::to_string);
        if link.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let link = link.unwrap_or_else(|| panic!("no setup link in {}", serve.output()));
    assert!(
        link.starts_with("https://outcomes.example/?setup_key="),
        "{link}"
    );
    let key = link.split("setup_key=").nth(1).unwrap().to_string();
    let without = fetch(&browser(), format!("{}/", serve.url)).await;
    let html = without.text().await.unwrap();
    assert!(!html.contains("Register GitHub App"), "{html}");
    // The page warns that API_TOKEN is unset.
    assert!(html.contains("API_TOKEN is not set"), "{html}");
    let taken = fetch(&browser(), format!("{}/?setup_key={key}", serve.url)).await;
    let key_cookie = set_cookie(&taken, "so_setup_key").expect("the key's cookie");
    let page = browser()
        .get(format!("{}/", serve.url))
        .header(COOKIE, format!("so_setup_key={key_cookie}"))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    assert!(set_cookie(&page, "so_setup").is_some());
    let html = page.text().await.unwrap();
    assert!(html.contains("Register GitHub App"), "{html}");
    let action = attribute_after(&html, "<form", "action");
    assert!(
        action.starts_with("https://github.com/settings/apps/new?state="),
        "{action}"
    );
    let manifest: Value =
        serde_json::from_str(&attribute_after(&html, "name=\"manifest\"", "value")).unwrap();
    assert_eq!(
        manifest["hook_attributes"]["url"],
        "https://outcomes.example/api/github/webhooks"
    );
    assert_eq!(manifest["redirect_url"], "https://outcomes.example/setup");
    serve.terminate().await;
    assert!(!env_file.exists());
}

#[tokio::test]
async fn two_viewers_see_different_numbers_on_the_same_dashboard_pages() {
    let dir = tempfile::tempdir().unwrap();
    let (_gh, rig) = alice_and_bob_rig(dir.path()).await;
    // A second output on acme/widgets: alice sees three, bob two.
    let client =
        safe_outcomes::ingest::client::Client::new(&rig.url(), None, Some(common::TOKEN.into()));
    let line = r#"{"type":"add_comment","url":"https://github.com/acme/widgets/issues/6#issuecomment-1","number":6,"repo":"acme/widgets","timestamp":"2026-10-02T00:00:00Z"}"#;
    let a = client
        .post_manifest("acme/widgets", 80, Some("triage"), line.to_string())
        .await
        .unwrap();
    assert_eq!(a.status, 202, "{}", a.body);
    rig.t.app.wait_idle().await;

    let alice = sign_in(&rig, "alice").await;
    let bob = sign_in(&rig, "bob").await;
    for (path, field) in [
        ("/", "data-field=\"total_safe_outputs\">"),
        ("/workflows", "data-label=\"outputs\" data-value=\""),
        ("/workflows/triage", "data-field=\"total_safe_outputs\">"),
    ] {
        let (status, page) = read(&rig, path, &alice).await;
        assert_eq!(status, 200, "{path}: {page}");
        let shows = |n: u64| {
            page.contains(&format!("{field}{n}<")) || page.contains(&format!("{field}{n}\""))
        };
        assert!(shows(3), "{path}: {page}");
        assert!(
            !page.contains("globex") && !page.contains("secret-plans"),
            "{path}"
        );
        let (status, page) = read(&rig, path, &bob).await;
        assert_eq!(status, 200, "{path}: {page}");
        let shows = |n: u64| {
            page.contains(&format!("{field}{n}<")) || page.contains(&format!("{field}{n}\""))
        };
        assert!(shows(2), "{path}: {page}");
        assert!(!page.contains("widgets"), "{path}: {page}");
    }
    // Another's output or run is absent, not shown.
    let (status, _) = read(&rig, "/outputs/globex/secret-plans:72:0", &alice).await;
    assert_eq!(status, 404);
    let (status, _) = read(&rig, "/runs/acme/widgets/80", &bob).await;
    assert_eq!(status, 404);
    let (status, page) = read(&rig, "/runs/acme/widgets/80", &alice).await;
    assert_eq!(status, 200, "{page}");
    // A forged session gets the sign-in page.
    let (status, page) = read(&rig, "/", "forged.cookie").await;
    assert_eq!(status, 401);
    assert!(page.contains("href=\"/auth/login?next=%2F\""), "{page}");
    rig.stop().await;
}
