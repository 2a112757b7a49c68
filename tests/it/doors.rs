//! Issue 46's doors, through the real router, a real store and the model of
//! GitHub:
//! - a read token follows its issuer with no session of theirs live: the
//!   App asks GitHub with the installation token (at most every
//!   `issuer_recheck`), and an `organization.member_removed`, a
//!   `membership.removed`, an `installation_repositories.removed` or an
//!   `installation.deleted` delivery ends access at once, for tokens and
//!   sessions;
//! - "sign out everywhere" ends every session of one account, no other;
//! - `/api/v1/me` describes the bearer, never a cookie sent along;
//! - wrong sign-in tokens from one source never keep another source's
//!   right token out;
//! - an ordinary delivery naming another installation never moves a
//!   repository (counted), delivery GUIDs are one whatever their case, and
//!   `/status` shows per-installation call counts only with a token.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use reqwest::header::COOKIE;
use serde_json::{json, Value};

use crate::common;
use crate::fake_github::users::CHECK_COLLABORATOR;
use crate::fake_github::FakeGitHub;
use crate::read_tokens::issue;
use crate::sign_in::{
    acme_github, add_alice_and_bob, assert_says, attribute_after, browser, install, post_form,
    read, read_with_bearer, repos_of, seed, set_cookie, sign_in, signin_options, web_rig,
    web_rig_in_app_mode, Rig, ACME_ALICE_AND_BOB,
};
use safe_outcomes::http::auth::AuthOptions;

/// A signed delivery of `event` with `body`; the answer's status.
async fn deliver(rig: &Rig, event: &str, id: &str, body: Value) -> u16 {
    let client =
        safe_outcomes::ingest::client::Client::new(&rig.url(), Some(common::SECRET.into()), None);
    let a = client
        .deliver(event, id, body.to_string().as_bytes())
        .await
        .unwrap();
    assert!(a.status < 300, "{event}: {}", a.body);
    rig.t.app.wait_idle().await;
    a.status
}

/// A GitHub user as deliveries name them.
fn user(gh: &FakeGitHub, login: &str) -> Value {
    json!({"login": login, "id": gh.user_id(login).unwrap(), "type": "User"})
}

/// An App-mode rig on `gh` with sign-in, seeded, whose token issuers are
/// re-checked at most every `recheck`.
async fn app_rig(dir: &std::path::Path, gh: &FakeGitHub, recheck: Duration) -> Rig {
    let auth = move |url: &str| AuthOptions {
        issuer_recheck: recheck,
        ..signin_options(Duration::from_secs(600), Duration::from_secs(600))(url)
    };
    let rig = web_rig_in_app_mode(dir, gh, auth).await;
    seed(&rig).await;
    rig
}

async fn token_reads(rig: &Rig, token: &str) -> Vec<String> {
    let (status, body) = read_with_bearer(rig, token).await;
    assert_eq!(status, 200, "{body}");
    repos_of(&body)
}

/// Sign `session` out through the page's form (at `path`).
async fn sign_out(rig: &Rig, session: &str, path: &str) -> u16 {
    let (_, form) = read(rig, "/auth/logout", session).await;
    let csrf = attribute_after(&form, "name=\"csrf\"", "value");
    post_form(rig, path, session, &[("csrf", &csrf)]).await.0
}

/// On an App-mode rig whose issuers are re-checked every `recheck`, alice
/// (acme/widgets and acme/docs on GitHub, both installed) issues herself
/// a read token and signs out: the model, the rig, and her token.
async fn token_of_signed_out_alice(
    dir: &std::path::Path,
    recheck: Duration,
) -> (FakeGitHub, Rig, String) {
    let gh = acme_github(&[("alice", &["acme/widgets", "acme/docs"])]).await;
    let rig = app_rig(dir, &gh, recheck).await;
    install(&rig, 1, "acme", &["acme/widgets", "acme/docs"]).await;
    let alice = sign_in(&rig, "alice").await;
    let token = issue(&rig, &alice, "1").await;
    assert_eq!(sign_out(&rig, &alice, "/auth/logout").await, 303);
    (gh, rig, token)
}

#[tokio::test]
async fn a_token_follows_its_issuer_with_no_session_of_theirs() {
    let dir = tempfile::tempdir().unwrap();
    let (gh, rig, token) = token_of_signed_out_alice(dir.path(), Duration::from_secs(600)).await;

    // No session of hers: GitHub is asked with the installation token,
    // once per repository, and the answer stands for `issuer_recheck`.
    assert_eq!(
        token_reads(&rig, &token).await,
        ["acme/docs", "acme/widgets"]
    );
    assert_eq!(gh.calls(CHECK_COLLABORATOR), 2);
    assert_eq!(token_reads(&rig, &token).await.len(), 2);
    assert_eq!(gh.calls(CHECK_COLLABORATOR), 2, "kept, not asked again");

    // She loses acme/docs on GitHub (a team left): the `membership`
    // delivery makes the next read ask again.
    gh.add_user("alice", 1, "acme", &["acme/widgets"]);
    let removed = json!({"action": "removed", "scope": "team", "member": user(&gh, "alice"),
        "team": {"id": 3, "name": "docs", "slug": "docs"},
        "organization": {"login": "acme", "id": 101}, "installation": {"id": 1},
        "sender": common::user("admin")});
    deliver(&rig, "membership", "m-1", removed).await;
    assert_eq!(token_reads(&rig, &token).await, ["acme/widgets"]);
    assert_eq!(gh.calls(CHECK_COLLABORATOR), 4);

    // She leaves the organization.
    gh.add_user("alice", 1, "acme", &[]);
    let left = json!({"action": "member_removed",
        "membership": {"state": "active", "role": "member", "user": user(&gh, "alice")},
        "organization": {"login": "acme", "id": 101}, "installation": {"id": 1},
        "sender": common::user("admin")});
    deliver(&rig, "organization", "o-1", left).await;
    assert!(token_reads(&rig, &token).await.is_empty());
    rig.stop().await;
}

#[tokio::test]
async fn without_a_delivery_the_issuer_is_asked_again_after_the_recheck() {
    let dir = tempfile::tempdir().unwrap();
    let (gh, rig, token) = token_of_signed_out_alice(dir.path(), Duration::from_millis(200)).await;
    assert_eq!(token_reads(&rig, &token).await.len(), 2);

    gh.add_user("alice", 1, "acme", &["acme/widgets"]);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(token_reads(&rig, &token).await, ["acme/widgets"]);

    // GitHub cannot answer: the token reads nothing (503), never what was
    // last seen.
    tokio::time::sleep(Duration::from_millis(300)).await;
    gh.fail_next(
        CHECK_COLLABORATOR,
        10,
        crate::fake_github::Failure::status(500),
    );
    let (status, body) = read_with_bearer(&rig, &token).await;
    assert_eq!(status, 503, "{body}");
    rig.stop().await;
}

#[tokio::test]
async fn a_listen_only_server_never_reads_on_what_was_last_seen() {
    let dir = tempfile::tempdir().unwrap();
    let gh = acme_github(&[("alice", &["acme/widgets"])]).await;
    let scope_ttl = Duration::from_millis(1);
    let options = signin_options(Duration::from_secs(600), scope_ttl);
    let rig = web_rig(dir.path(), &gh, options).await;
    seed(&rig).await;
    install(&rig, 1, "acme", &["acme/widgets"]).await;
    let alice = sign_in(&rig, "alice").await;
    let token = issue(&rig, &alice, "1").await;
    assert_eq!(token_reads(&rig, &token).await, ["acme/widgets"]);
    assert_eq!(sign_out(&rig, &alice, "/auth/logout").await, 303);
    tokio::time::sleep(Duration::from_millis(20)).await;
    // No session and no App credentials to ask GitHub with.
    assert_says(read_with_bearer(&rig, &token).await, 503, "re-checked");
    rig.stop().await;
}

#[tokio::test]
async fn offboarding_deliveries_end_sessions_access_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let gh = FakeGitHub::start().await;
    add_alice_and_bob(&gh);
    let rig = app_rig(dir.path(), &gh, Duration::from_secs(600)).await;
    install(&rig, 1, "acme", &["acme/widgets", "acme/docs"]).await;
    install(&rig, 2, "globex", &["globex/secret-plans"]).await;
    let (alice, bob) = (sign_in(&rig, "alice").await, sign_in(&rig, "bob").await);
    let bob_token = issue(&rig, &bob, "2").await;
    let mine = |body: &str| repos_of(body);
    assert_eq!(
        mine(&read(&rig, "/api/v1/outputs", &bob).await.1),
        ["acme/docs", "globex/secret-plans"]
    );

    // acme/docs leaves the App: bob's cached view (ten minutes) is stale
    // at once, and GitHub no longer lists it.
    gh.add_user("bob", 1, "acme", &[]);
    gh.add_user("alice", 1, "acme", &["acme/widgets"]);
    let removed = json!({"action": "removed",
        "installation": {"id": 1, "account": {"login": "acme", "id": 101}},
        "repository_selection": "selected", "repositories_added": [],
        "repositories_removed": [{"full_name": "acme/docs"}],
        "sender": common::user("admin")});
    deliver(&rig, "installation_repositories", "r-1", removed).await;
    assert_eq!(
        mine(&read(&rig, "/api/v1/outputs", &bob).await.1),
        ["globex/secret-plans"]
    );
    assert_eq!(
        mine(&read(&rig, "/api/v1/outputs", &alice).await.1),
        ["acme/widgets"]
    );

    // Alice leaves the organization: her session ends.
    let left = json!({"action": "member_removed",
        "membership": {"state": "active", "role": "member", "user": user(&gh, "alice")},
        "organization": {"login": "acme", "id": 101}, "installation": {"id": 1},
        "sender": common::user("admin")});
    deliver(&rig, "organization", "o-2", left).await;
    assert_eq!(read(&rig, "/api/v1/outputs", &alice).await.0, 401);
    assert_eq!(read(&rig, "/api/v1/outputs", &bob).await.0, 200);

    // globex uninstalls the App: bob's token is refused, his session no
    // longer shows it.
    gh.add_user("bob", 2, "globex", &[]);
    let deleted = json!({"action": "deleted",
        "installation": {"id": 2, "account": {"login": "globex", "id": 102}},
        "repositories": [{"full_name": "globex/secret-plans"}],
        "sender": common::user("admin")});
    deliver(&rig, "installation", "i-2", deleted).await;
    assert_eq!(read_with_bearer(&rig, &bob_token).await.0, 401);
    assert!(mine(&read(&rig, "/api/v1/outputs", &bob).await.1).is_empty());
    rig.stop().await;
}

#[tokio::test]
async fn sign_out_everywhere_ends_every_session_of_one_account_only() {
    let dir = tempfile::tempdir().unwrap();
    let gh = acme_github(&[("alice", &["acme/widgets"]), ("bob", &["acme/widgets"])]).await;
    let options = signin_options(Duration::from_secs(600), Duration::from_secs(600));
    let rig = web_rig(dir.path(), &gh, options).await;
    let (laptop, phone) = (sign_in(&rig, "alice").await, sign_in(&rig, "alice").await);
    let bob = sign_in(&rig, "bob").await;

    let (_, page) = read(&rig, "/auth/logout", &laptop).await;
    assert!(
        page.contains("action=\"/auth/logout/everywhere\""),
        "{page}"
    );
    // Not without the session's CSRF token.
    let (status, _) = post_form(&rig, "/auth/logout/everywhere", &laptop, &[("csrf", "x")]).await;
    assert_eq!(status, 403);
    assert_eq!(read(&rig, "/api/v1/me", &phone).await.0, 200);

    assert_eq!(
        sign_out(&rig, &laptop, "/auth/logout/everywhere").await,
        303
    );
    for gone in [&laptop, &phone] {
        assert_eq!(read(&rig, "/api/v1/me", gone).await.0, 401);
    }
    assert_eq!(read(&rig, "/api/v1/me", &bob).await.0, 200);
    rig.stop().await;
}

#[tokio::test]
async fn me_describes_the_bearer_never_a_cookie_sent_along() {
    let dir = tempfile::tempdir().unwrap();
    let gh = acme_github(ACME_ALICE_AND_BOB).await;
    let options = signin_options(Duration::from_secs(600), Duration::from_secs(600));
    let rig = web_rig(dir.path(), &gh, options).await;
    install(&rig, 1, "acme", &["acme/widgets", "acme/docs"]).await;
    let (alice, bob) = (sign_in(&rig, "alice").await, sign_in(&rig, "bob").await);
    let bobs = issue(&rig, &bob, "1").await;

    let me = |bearer: &str| {
        reqwest::Client::new()
            .get(format!("{}/api/v1/me", rig.url()))
            .header(COOKIE, format!("so_session={alice}"))
            .bearer_auth(bearer.to_string())
            .send()
    };
    let body: Value = me(&bobs).await.unwrap().json().await.unwrap();
    assert_eq!(body["login"], "bob", "{body}");
    assert_eq!(body["bearer"], "read_token");
    assert_eq!(body["installation"], 1);
    assert_eq!(body["repositories"], json!(["acme/docs"]));
    let body: Value = me(common::TOKEN).await.unwrap().json().await.unwrap();
    assert_eq!(body["login"], Value::Null, "{body}");
    assert_eq!(body["bearer"], "api_token");
    assert_eq!(body["scope"], "all");
    assert_eq!(me("soi_madeup").await.unwrap().status(), 401);
    // The cookie alone: alice.
    let (_, body) = read(&rig, "/api/v1/me", &alice).await;
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["login"], "alice");
    assert_eq!(body["session"], "github");
    rig.stop().await;
}

/// A browser whose connections come from `ip` (a loopback address).
fn browser_from(ip: Ipv4Addr) -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .local_address(IpAddr::V4(ip))
        .build()
        .unwrap()
}

/// Post the sign-in form with `token` from `web`; the status.
async fn try_token(rig: &Rig, web: &reqwest::Client, token: &str) -> u16 {
    let r = web
        .get(format!("{}/auth/login", rig.url()))
        .send()
        .await
        .unwrap();
    let nonce = set_cookie(&r, "so_login").expect("a nonce");
    let csrf = attribute_after(&r.text().await.unwrap(), "name=\"csrf\"", "value");
    let form = [("csrf", csrf.as_str()), ("token", token), ("next", "/")];
    web.post(format!("{}/auth/login", rig.url()))
        .header(COOKIE, format!("so_login={nonce}"))
        .form(&form)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn wrong_tokens_from_one_source_never_keep_another_sources_right_one_out() {
    let dir = tempfile::tempdir().unwrap();
    let gh = FakeGitHub::start().await;
    let rig = web_rig(dir.path(), &gh, |_| AuthOptions::default()).await;
    let attacker = browser_from(Ipv4Addr::new(127, 0, 0, 2));
    let operator = browser_from(Ipv4Addr::new(127, 0, 0, 1));
    let mut answers = Vec::new();
    for _ in 0..30 {
        answers.push(try_token(&rig, &attacker, "guess").await);
    }
    assert!(answers[..10].iter().all(|s| *s == 401), "{answers:?}");
    assert!(answers[10..].iter().all(|s| *s == 429), "{answers:?}");
    // The operator's right token, from elsewhere, gets in every time.
    for _ in 0..3 {
        assert_eq!(try_token(&rig, &operator, common::TOKEN).await, 303);
    }
    // The attacker's own door stays shut, even to the right token.
    assert_eq!(try_token(&rig, &attacker, common::TOKEN).await, 429);
    // The operator's own wrong tries count for the operator alone.
    assert_eq!(try_token(&rig, &operator, "typo").await, 401);
    let _ = browser();
    rig.stop().await;
}

#[tokio::test]
async fn an_ordinary_delivery_never_moves_a_repository_and_guids_ignore_case() {
    let dir = tempfile::tempdir().unwrap();
    let gh = acme_github(&[("alice", &["acme/widgets"])]).await;
    let rig = app_rig(dir.path(), &gh, Duration::from_secs(600)).await;
    install(&rig, 1, "acme", &["acme/widgets"]).await;
    install(&rig, 2, "globex", &["globex/secret-plans"]).await;
    let alice = sign_in(&rig, "alice").await;
    let token = issue(&rig, &alice, "1").await;

    // A signed `issues` delivery for acme/widgets naming installation 2.
    let path = common::manifest_dir().join("fixtures/webhooks/issues/opened.gh-aw.json");
    let mut issue_body: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    assert_eq!(issue_body["repository"]["full_name"], "acme/widgets");
    issue_body["installation"] = json!({"id": 2});
    deliver(&rig, "issues", "AAAA-1111", issue_body).await;
    // Still installation 1's: its token reads acme/widgets (the seeded
    // output and the issue's), as it would not if the repository had moved.
    let mut read = token_reads(&rig, &token).await;
    read.dedup();
    assert_eq!(read, ["acme/widgets"]);
    let status = common_status(&rig, true).await;
    assert_eq!(
        status["tenancy"]["refused"]["webhook"]["installation_disagrees"], 1,
        "{status}"
    );

    // One GUID, whatever its case: the second is a duplicate.
    let again = json!({"action": "created",
        "installation": {"id": 1, "account": {"login": "acme", "id": 101}},
        "repositories": [{"full_name": "acme/widgets"}], "sender": common::user("admin")});
    let client =
        safe_outcomes::ingest::client::Client::new(&rig.url(), Some(common::SECRET.into()), None);
    let body = again.to_string();
    let first = client
        .deliver(
            "installation",
            "0b989ba4-242f-11e5-81e1-c7b6966d2516",
            body.as_bytes(),
        )
        .await
        .unwrap();
    let second = client
        .deliver(
            "installation",
            "0B989BA4-242F-11E5-81E1-C7B6966D2516",
            body.as_bytes(),
        )
        .await
        .unwrap();
    assert_eq!(first.status, 202, "{}", first.body);
    assert_eq!(second.status, 200, "{}", second.body);
    assert_eq!(second.body["status"], "duplicate");

    // Per-installation call counts only with a token.
    let open = common_status(&rig, false).await;
    assert!(
        open["github"]["api_calls_by_installation"].is_null(),
        "{open}"
    );
    let with = common_status(&rig, true).await;
    assert!(
        with["github"]["api_calls_by_installation"].is_object(),
        "{with}"
    );
    rig.stop().await;
}

/// `/status`, with the API token or without any.
async fn common_status(rig: &Rig, token: bool) -> Value {
    let mut req = reqwest::Client::new().get(format!("{}/status", rig.url()));
    if token {
        req = req.bearer_auth(common::TOKEN);
    }
    req.send().await.unwrap().json().await.unwrap()
}
