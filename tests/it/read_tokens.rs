//! Issue 20 §2 through the real router, the fake GitHub and a real store:
//! a `soi_` read token sees only what its issuer could see when it was issued
//! and can still see (a repository added to the installation later stays
//! invisible, one the issuer loses goes dark — at the issuer's next page
//! load, or at the token's next read, asked of GitHub with the issuer's live
//! session), a token revoked while a
//! machine is reading with it reads nothing from the revoke's answer on, and
//! nothing about tokens or sessions can be made from `GITHUB_CLIENT_SECRET`.

use std::time::Duration;

use base64::Engine;
use reqwest::header::COOKIE;
use safe_outcomes::http::auth::signed::Key;

use crate::common;
use crate::fake_github::users::{self, CLIENT_SECRET};
use crate::sign_in::{
    acme_github, ask_token, attribute_after, browser, install, read, read_with_bearer, repos_of,
    revoke, seeded_rig, seeded_rig_with, sign_in, token_in, Rig, ACME_ALICE_AND_BOB,
};

/// A manifest line on `repo`, posted with the API token.
async fn output_on(rig: &Rig, repo: &str, run: u64) {
    let client =
        safe_outcomes::ingest::client::Client::new(&rig.url(), None, Some(common::TOKEN.into()));
    crate::common::post_issue_five(&client, repo, run).await;
    rig.t.app.wait_idle().await;
}

/// GitHub's `installation_repositories` delivery adding `repos`.
async fn add_repos(rig: &Rig, id: u64, repos: &[&str]) {
    let client =
        safe_outcomes::ingest::client::Client::new(&rig.url(), Some(common::SECRET.into()), None);
    let body = serde_json::json!({
        "action": "added",
        "installation": {"id": id, "account": {"login": "acme", "id": id + 100}},
        "repository_selection": "selected",
        "repositories_added": repos.iter().map(|r| serde_json::json!({"full_name": r})).collect::<Vec<_>>(),
        "repositories_removed": [],
        "sender": common::user("admin"),
    });
    let a = client
        .deliver(
            "installation_repositories",
            &format!("grow-{id}-{}", repos.len()),
            body.to_string().as_bytes(),
        )
        .await
        .unwrap();
    assert!(a.status < 300, "{}", a.body);
    rig.t.app.wait_idle().await;
}

/// Issue a read token for installation `id` as the session `session`.
pub(crate) async fn issue(rig: &Rig, session: &str, id: &str) -> String {
    let (status, html) = read(rig, "/auth/tokens", session).await;
    assert_eq!(status, 200, "{html}");
    let csrf = attribute_after(&html, "name=\"csrf\"", "value");
    let (status, html) = ask_token(rig, session, &csrf, id).await;
    assert_eq!(status, 200, "{html}");
    token_in(&html)
}

async fn token_reads(rig: &Rig, token: &str) -> Vec<String> {
    let (status, body) = read_with_bearer(rig, token).await;
    assert_eq!(status, 200, "{body}");
    repos_of(&body)
}

/// How long what a viewer sees is cached in `a_token_never_outgrows_…`:
/// a page or a token's read after it asks GitHub again.
const SCOPE_TTL: Duration = Duration::from_millis(1);

/// Let what was last seen of a viewer grow older than `SCOPE_TTL`, so the
/// next page or token read asks GitHub. Without the wait a read that came
/// within 1 ms of the last look used it, and the test failed (once, in CI,
/// under the full suite).
async fn past_scope_ttl() {
    tokio::time::sleep(SCOPE_TTL * 5).await;
}

#[tokio::test]
async fn a_token_never_outgrows_what_its_issuer_could_see() {
    let dir = tempfile::tempdir().unwrap();
    // The installation covers three repositories; alice sees two of them.
    let gh = acme_github(&[("alice", &["acme/widgets", "acme/docs"])]).await;
    let rig = seeded_rig_with(dir.path(), &gh, Duration::from_secs(600), SCOPE_TTL).await;
    install(&rig, 1, "acme", &["acme/widgets", "acme/docs", "acme/ops"]).await;
    output_on(&rig, "acme/ops", 90).await;
    let alice = sign_in(&rig, "alice").await;
    let token = issue(&rig, &alice, "1").await;
    assert_eq!(
        token_reads(&rig, &token).await,
        ["acme/docs", "acme/widgets"]
    );

    // The installation grows, and alice can see the new repository: the
    // token, issued before, still cannot.
    add_repos(&rig, 1, &["acme/new"]).await;
    output_on(&rig, "acme/new", 91).await;
    gh.add_user(
        "alice",
        1,
        "acme",
        &["acme/widgets", "acme/docs", "acme/new"],
    );
    past_scope_ttl().await;
    assert_eq!(read(&rig, "/api/v1/me", &alice).await.0, 200);
    let (_, mine) = read(&rig, "/api/v1/outputs", &alice).await;
    assert!(repos_of(&mine).contains(&"acme/new".to_string()), "{mine}");
    assert_eq!(
        token_reads(&rig, &token).await,
        ["acme/docs", "acme/widgets"]
    );

    // Alice loses acme/docs on GitHub: once the server sees her again, her
    // token loses it too.
    gh.add_user("alice", 1, "acme", &["acme/widgets", "acme/new"]);
    past_scope_ttl().await;
    assert_eq!(read(&rig, "/api/v1/me", &alice).await.0, 200);
    assert_eq!(token_reads(&rig, &token).await, ["acme/widgets"]);
    // Alice loses acme/widgets too and loads no page: the token's next read
    // asks GitHub again, with her live session.
    gh.add_user("alice", 1, "acme", &["acme/new"]);
    let asked = gh.calls(users::USER_INSTALLATIONS);
    past_scope_ttl().await;
    assert!(token_reads(&rig, &token).await.is_empty());
    assert_eq!(gh.calls(users::USER_INSTALLATIONS), asked + 1);
    for path in ["/api/v1/outputs", "/api/v1/export.jsonl", "/api/v1/report"] {
        let r = reqwest::Client::new()
            .get(format!("{}{path}", rig.url()))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{path}");
        let body = r.text().await.unwrap();
        for hidden in [
            "acme/ops",
            "acme/new",
            "acme/docs",
            "acme/widgets",
            "globex",
        ] {
            assert!(!body.contains(hidden), "{path} shows {hidden}: {body}");
        }
    }
    rig.stop().await;
}

#[tokio::test]
async fn a_token_revoked_while_in_use_reads_nothing_from_the_revoke_on() {
    let dir = tempfile::tempdir().unwrap();
    let gh = acme_github(ACME_ALICE_AND_BOB).await;
    let rig = seeded_rig(dir.path(), &gh).await;
    install(&rig, 1, "acme", &["acme/widgets", "acme/docs"]).await;
    let alice = sign_in(&rig, "alice").await;
    let kept = issue(&rig, &alice, "1").await;
    let token = issue(&rig, &alice, "1").await;

    // A machine reads with it, over and over, while alice revokes it.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let url = rig.url().clone();
    let machine = {
        let (stop, token) = (stop.clone(), token.clone());
        tokio::spawn(async move {
            let http = reqwest::Client::new();
            let mut answers = Vec::new();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let sent = std::time::Instant::now();
                let r = http
                    .get(format!("{url}/api/v1/outputs"))
                    .bearer_auth(&token)
                    .send()
                    .await
                    .unwrap();
                answers.push((sent, r.status().as_u16()));
            }
            answers
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;

    // Bob cannot revoke alice's token (nor see it); alice can, from the list.
    let (_, page) = read(&rig, "/auth/tokens", &alice).await;
    let digest = safe_outcomes::http::auth::signed::digest(&token);
    assert!(page.contains(&digest), "the list names the token: {page}");
    assert!(
        !page.contains(&token),
        "the list never shows a token itself"
    );
    let csrf = attribute_after(&page, "name=\"csrf\"", "value");
    let bob = sign_in(&rig, "bob").await;
    let (_, bob_page) = read(&rig, "/auth/tokens", &bob).await;
    assert!(!bob_page.contains(&digest), "{bob_page}");
    let bob_csrf = attribute_after(&bob_page, "name=\"csrf\"", "value");
    assert_eq!(revoke(&rig, &bob, &bob_csrf, &digest).await.0, 404);
    assert_eq!(revoke(&rig, &alice, "wrong", &digest).await.0, 403);
    let (status, html) = revoke(&rig, &alice, &csrf, &digest).await;
    assert_eq!(status, 200, "{html}");
    let revoked_at = std::time::Instant::now();
    tokio::time::sleep(Duration::from_millis(200)).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let answers = machine.await.unwrap();
    assert!(answers.iter().any(|(_, s)| *s == 200), "read before");
    let after: Vec<u16> = answers
        .iter()
        .filter(|(sent, _)| *sent > revoked_at)
        .map(|(_, s)| *s)
        .collect();
    assert!(!after.is_empty());
    assert!(after.iter().all(|s| *s == 401), "{after:?}");
    assert_eq!(read_with_bearer(&rig, &token).await.0, 401);
    // One by one: the other token still reads.
    assert_eq!(
        token_reads(&rig, &kept).await,
        ["acme/docs", "acme/widgets"]
    );

    // Recorded: issued twice, revoked once, by alice.
    let (_, page) = read(&rig, "/auth/tokens", &alice).await;
    assert!(!page.contains(&digest), "{page}");
    let short = &digest[..12];
    assert!(
        page.contains(&format!("token <code>{short}</code>")),
        "{page}"
    );
    assert!(page.contains("revoked by alice"), "{page}");
    assert_eq!(page.matches("issued by alice").count(), 2, "{page}");
    rig.stop().await;
}

#[tokio::test]
async fn knowing_the_oauth_client_secret_mints_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let gh = acme_github(&[("alice", &["acme/widgets", "acme/docs"])]).await;
    // No SESSION_SECRET: the key is the store's own.
    let rig = seeded_rig(dir.path(), &gh).await;
    install(&rig, 1, "acme", &["acme/widgets", "acme/docs"]).await;
    let alice = sign_in(&rig, "alice").await;
    let real = issue(&rig, &alice, "1").await;
    assert_eq!(read_with_bearer(&rig, &real).await.0, 200);

    // What used to work: a key derived from GITHUB_CLIENT_SECRET.
    let derived = Key::derive(CLIENT_SECRET);
    let in_an_hour = chrono::Utc::now().timestamp() + 3600;
    for value in ["1:alice", "1:admin", "2:mallory"] {
        let forged = format!(
            "soi_{}",
            derived.seal("installation-token", value, in_an_hour)
        );
        let (status, body) = read_with_bearer(&rig, &forged).await;
        assert_eq!(status, 401, "{value}: {body}");
    }
    // A real session id, sealed again with that key, is refused: the
    // cookie's key is not the client secret's.
    let payload = alice.split_once('.').unwrap().0;
    let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .unwrap();
    let sid = String::from_utf8(payload).unwrap();
    let sid = sid.rsplit_once('|').unwrap().0;
    let forged = derived.seal("session", sid, in_an_hour);
    let (status, _) = read(&rig, "/api/v1/outputs", &forged).await;
    assert_eq!(status, 401);
    // A token made up in the right shape is unknown to the store.
    let made_up = format!("soi_{}", "A".repeat(43));
    assert_eq!(read_with_bearer(&rig, &made_up).await.0, 401);
    // The genuine ones still work.
    assert_eq!(read(&rig, "/api/v1/outputs", &alice).await.0, 200);
    let r = browser()
        .get(format!("{}/api/v1/outputs", rig.url()))
        .header(COOKIE, format!("so_session={alice}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    rig.stop().await;
}
