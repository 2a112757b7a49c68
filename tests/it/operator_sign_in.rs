//! Issue 23 §4 and issue 20 §3, §5 through the real router and a real
//! store: the operator signs in with the `API_TOKEN` on a CSRF-checked,
//! rate-limited form (a session like any other), "Sign in with GitHub" shows
//! only with an OAuth client, a replayed sign-in state never reaches GitHub,
//! one account's 10,100 sign-ins leave another viewer's session alive, a
//! restart of a sled server signs nobody out and keeps its tokens (but a
//! rotated `API_TOKEN` ends the operator's sessions), `serve`
//! warns of a missing or local `PUBLIC_URL` and a missing `API_TOKEN`, and
//! the demo's dashboard opened without its link is no dead end.

use std::time::Duration;

use reqwest::header::{COOKIE, RETRY_AFTER};
use safe_outcomes::http::auth::AuthOptions;
use serde_json::Value;

use crate::common::{self, serve::ServeChild};
use crate::fake_github::users::{self, TOKEN_EXCHANGE};
use crate::fake_github::FakeGitHub;
use crate::sign_in::{
    alice_and_bob_rig, assert_says, attribute_after, browser, fetch, get_with_cookie, install,
    location, post_form, read, read_with_bearer, repos_of, seed, set_cookie, sign_in,
    signin_options, web_rig, web_rig_with_token,
};

/// The log of `serve` started (as `ServeChild::start_without`) and stopped.
async fn log_of_serve(data_dir: &std::path::Path, env: &[(&str, &str)], remove: &[&str]) -> String {
    let mut serve = ServeChild::start_without(data_dir, env, remove).await;
    serve.terminate().await;
    serve.output()
}

/// The sign-in page's nonce cookie and CSRF field, for `next`.
async fn login_form(url: &str, next: &str) -> (String, String, String) {
    let r = fetch(&browser(), format!("{url}/auth/login?next={next}")).await;
    assert_eq!(r.status(), 200);
    let cookie = format!("so_login={}", set_cookie(&r, "so_login").expect("a nonce"));
    let html = r.text().await.unwrap();
    let csrf = attribute_after(&html, "name=\"csrf\"", "value");
    (cookie, csrf, html)
}

/// Post the token form; the answer.
async fn post_token(url: &str, cookie: Option<&str>, form: &[(&str, &str)]) -> reqwest::Response {
    let mut req = browser().post(format!("{url}/auth/login")).form(form);
    if let Some(c) = cookie {
        req = req.header(COOKIE, c);
    }
    req.send().await.unwrap()
}

/// Sign the operator in with the test API token; the session cookie value.
async fn operator(url: &str) -> String {
    let (cookie, csrf, _) = login_form(url, "/").await;
    let r = post_token(
        url,
        Some(&cookie),
        &[("csrf", &csrf), ("token", common::TOKEN), ("next", "/")],
    )
    .await;
    assert_eq!(r.status(), 303);
    set_cookie(&r, "so_session").expect("a session")
}

#[tokio::test]
async fn the_api_token_signs_the_operator_in_through_a_checked_form() {
    let dir = tempfile::tempdir().unwrap();
    let gh = FakeGitHub::start().await;
    // No OAuth client: no "Sign in with GitHub", the token's form instead.
    let rig = web_rig(dir.path(), &gh, |_| AuthOptions::default()).await;
    seed(&rig).await;
    let (cookie, csrf, html) = login_form(&rig.url(), "/workflows").await;
    assert!(!html.contains("Sign in with GitHub"), "{html}");
    assert!(html.contains("type=\"password\" name=\"token\""), "{html}");

    // The form is checked: no nonce cookie, or another CSRF value.
    let good = [
        ("csrf", csrf.as_str()),
        ("token", common::TOKEN),
        ("next", "/workflows"),
    ];
    let r = post_token(&rig.url(), None, &good).await;
    assert_eq!(r.status(), 403);
    assert!(set_cookie(&r, "so_session").is_none());
    let (other_cookie, _, _) = login_form(&rig.url(), "/").await;
    let r = post_token(&rig.url(), Some(&other_cookie), &good).await;
    assert_eq!(r.status(), 403);
    // A wrong token: 401, no session.
    let wrong = [("csrf", csrf.as_str()), ("token", "nope"), ("next", "/")];
    let r = post_token(&rig.url(), Some(&cookie), &wrong).await;
    assert_eq!(r.status(), 401);
    assert!(set_cookie(&r, "so_session").is_none());

    // The right one: a session, back to the page asked for, seeing everything.
    let r = post_token(&rig.url(), Some(&cookie), &good).await;
    assert_eq!(r.status(), 303);
    assert_eq!(location(&r), "/workflows");
    let session = set_cookie(&r, "so_session").expect("a session");
    let (status, body) = read(&rig, "/api/v1/outputs", &session).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        repos_of(&body),
        ["acme/docs", "acme/widgets", "globex/secret-plans"]
    );
    let (_, me) = read(&rig, "/api/v1/me", &session).await;
    let me: Value = serde_json::from_str(&me).unwrap();
    assert_eq!(me["session"], "operator");
    assert_eq!(me["scope"], "all");
    let (status, page) = read(&rig, "/workflows", &session).await;
    assert_eq!(status, 200, "{page}");

    // Signed out like any session.
    let (_, form) = read(&rig, "/auth/logout", &session).await;
    let csrf = attribute_after(&form, "name=\"csrf\"", "value");
    let (status, _) = post_form(&rig, "/auth/logout", &session, &[("csrf", &csrf)]).await;
    assert_eq!(status, 303);
    assert_eq!(read(&rig, "/api/v1/outputs", &session).await.0, 401);

    // Rate-limited: after ten wrong tokens, even the right one waits.
    for _ in 0..9 {
        let r = post_token(&rig.url(), Some(&cookie), &wrong).await;
        assert_eq!(r.status(), 401);
    }
    let r = post_token(&rig.url(), Some(&cookie), &good).await;
    assert_eq!(r.status(), 429);
    let wait: u64 = r.headers()[RETRY_AFTER].to_str().unwrap().parse().unwrap();
    assert!((1..=61).contains(&wait), "{wait}");
    assert!(set_cookie(&r, "so_session").is_none());
    rig.stop().await;

    // With an OAuth client, "Sign in with GitHub" comes back to `next`.
    let dir = tempfile::tempdir().unwrap();
    let rig = web_rig(
        dir.path(),
        &gh,
        signin_options(Duration::from_secs(600), Duration::from_secs(600)),
    )
    .await;
    let (_, _, html) = login_form(&rig.url(), "/workflows").await;
    assert!(
        html.contains("href=\"/auth/login/github?next=%2Fworkflows\""),
        "{html}"
    );
    assert!(html.contains("Sign in with GitHub"), "{html}");
    rig.stop().await;
}

#[tokio::test]
async fn a_replayed_sign_in_state_never_reaches_github() {
    let dir = tempfile::tempdir().unwrap();
    let (gh, rig) = alice_and_bob_rig(dir.path()).await;
    let web = browser();
    let start = fetch(
        &web,
        format!("{}/auth/login/github?next=/api/v1/me", rig.url()),
    )
    .await;
    let oauth = format!("so_oauth={}", set_cookie(&start, "so_oauth").unwrap());
    let back = web
        .get(location(&start))
        .header("x-fake-user", "alice")
        .send()
        .await
        .unwrap();
    let callback = location(&back);

    // The state without the browser's cookie: refused, and the flow is
    // left for its browser.
    let r = web.get(&callback).send().await.unwrap();
    assert_eq!(r.status(), 403);
    assert_eq!(gh.calls(TOKEN_EXCHANGE), 0);
    let done = get_with_cookie(&web, &callback, &oauth).await;
    assert_eq!(done.status(), 303);
    assert_eq!(gh.calls(TOKEN_EXCHANGE), 1);

    // Replayed, with its cookie, again and again: refused before GitHub.
    for _ in 0..20 {
        let r = get_with_cookie(&web, &callback, &oauth).await;
        assert_eq!(r.status(), 403);
        assert!(set_cookie(&r, "so_session").is_none());
    }
    // With another code (GitHub's), the same state still finds nothing.
    let other = callback.replace("code=", "code=x");
    let r = get_with_cookie(&web, &other, &oauth).await;
    assert_eq!(r.status(), 403);
    assert_eq!(gh.calls(TOKEN_EXCHANGE), 1);
    assert_eq!(gh.calls(users::USER_INSTALLATIONS), 0);
    rig.stop().await;
}

/// Several runtime threads: on PostgreSQL each sign-in waits on the
/// database, and the concurrent ones overlap their waits.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_accounts_ten_thousand_sign_ins_leave_another_session_alive() {
    let dir = tempfile::tempdir().unwrap();
    let (_gh, rig) = alice_and_bob_rig(dir.path()).await;
    let alice = sign_in(&rig, "alice").await;
    assert_eq!(read(&rig, "/api/v1/outputs", &alice).await.0, 200);

    // 10,100 sign-ins of one account (the operator): fifty at a time, then
    // the last 25 one after another.
    let (cookie, csrf, _) = login_form(&rig.url(), "/").await;
    let form = [
        ("csrf", csrf.as_str()),
        ("token", common::TOKEN),
        ("next", "/"),
    ];
    let http = browser();
    let sign_in_once = || {
        http.post(format!("{}/auth/login", rig.url()))
            .header(COOKIE, &cookie)
            .form(&form)
            .send()
    };
    let mut sessions = Vec::new();
    for _ in 0..(10_100 - 25) / 25 {
        let mut batch = tokio::task::JoinSet::new();
        for _ in 0..25 {
            batch.spawn(sign_in_once());
        }
        while let Some(r) = batch.join_next().await {
            let r = r.unwrap().unwrap();
            assert_eq!(r.status(), 303);
            sessions.push(set_cookie(&r, "so_session").unwrap());
        }
    }
    for _ in 0..25 {
        let r = sign_in_once().await.unwrap();
        assert_eq!(r.status(), 303);
        sessions.push(set_cookie(&r, "so_session").unwrap());
    }
    assert_eq!(sessions.len(), 10_100);

    // Alice's session lives; the operator keeps only its newest.
    let (status, body) = read(&rig, "/api/v1/outputs", &alice).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(repos_of(&body), ["acme/docs", "acme/widgets"]);
    assert_eq!(read(&rig, "/api/v1/outputs", &sessions[0]).await.0, 401);
    assert_eq!(
        read(&rig, "/api/v1/outputs", &sessions[10_099]).await.0,
        200
    );
    let per_account = safe_outcomes::http::auth::sessions::PER_ACCOUNT;
    let mut live = Vec::new();
    for (i, s) in sessions.iter().enumerate().skip(10_100 - 100) {
        if read(&rig, "/api/v1/me", s).await.0 == 200 {
            live.push(i);
        }
    }
    let newest: Vec<usize> = (10_100 - per_account..10_100).collect();
    assert_eq!(live, newest);
    rig.stop().await;
}

#[tokio::test]
async fn a_restart_signs_nobody_out_and_keeps_the_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let (gh, rig) = alice_and_bob_rig(dir.path()).await;
    install(&rig, 1, "acme", &["acme/widgets", "acme/docs"]).await;
    let alice = sign_in(&rig, "alice").await;
    let op = operator(&rig.url()).await;
    let token = crate::read_tokens::issue(&rig, &alice, "1").await;
    let (_, form) = read(&rig, "/auth/logout", &alice).await;
    let csrf = attribute_after(&form, "name=\"csrf\"", "value");
    rig.stop().await;

    // The same store, a new process's worth of state: nobody signed out.
    let rig = web_rig(
        dir.path(),
        &gh,
        signin_options(Duration::from_secs(600), Duration::from_secs(600)),
    )
    .await;
    let (status, body) = read(&rig, "/api/v1/outputs", &alice).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(repos_of(&body), ["acme/docs", "acme/widgets"]);
    assert_eq!(read(&rig, "/api/v1/outputs", &op).await.0, 200);
    let (status, body) = read_with_bearer(&rig, &token).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(repos_of(&body), ["acme/docs", "acme/widgets"]);
    // The CSRF token of a session also holds across the restart.
    let (_, form) = read(&rig, "/auth/logout", &alice).await;
    let after = attribute_after(&form, "name=\"csrf\"", "value");
    assert_eq!(after, csrf);
    let (status, _) = post_form(&rig, "/auth/logout", &alice, &[("csrf", &after)]).await;
    assert_eq!(status, 303);
    assert_eq!(read(&rig, "/api/v1/outputs", &alice).await.0, 401);
    rig.stop().await;

    // With the API token rotated, the operator's session ends with it.
    let rig = web_rig_with_token(
        dir.path(),
        &gh,
        signin_options(Duration::from_secs(600), Duration::from_secs(600)),
        "a-new-token",
    )
    .await;
    let answer = read(&rig, "/api/v1/outputs", &op).await;
    assert_says(answer, 401, "no longer the server's");
    rig.stop().await;
}

#[tokio::test]
async fn serve_warns_of_a_missing_public_url_and_api_token() {
    let dir = tempfile::tempdir().unwrap();
    let log = log_of_serve(
        &dir.path().join("a"),
        &[("ENV_FILE", dir.path().join("a.env").to_str().unwrap())],
        &["API_TOKEN", "PUBLIC_URL"],
    )
    .await;
    assert!(log.contains("PUBLIC_URL is not set"), "{log}");
    assert!(log.contains("API_TOKEN is not set"), "{log}");

    // Both set, PUBLIC_URL on this machine and then a public one.
    let with_public_url = |name: &'static str, public_url: &'static str| {
        let data_dir = dir.path().join(name);
        let env_file = dir.path().join(format!("{name}.env"));
        async move {
            let env_file = env_file.to_str().unwrap();
            let env = [
                ("PUBLIC_URL", public_url),
                ("API_TOKEN", "t0ken"),
                ("ENV_FILE", env_file),
            ];
            log_of_serve(&data_dir, &env, &[]).await
        }
    };
    let log = with_public_url("b", "http://localhost:3000").await;
    assert!(log.contains("is a local address"), "{log}");
    assert!(!log.contains("API_TOKEN is not set"), "{log}");

    let log = with_public_url("c", "https://outcomes.example").await;
    assert!(!log.contains("PUBLIC_URL"), "{log}");
    assert!(!log.contains("API_TOKEN is not set"), "{log}");
}

#[tokio::test]
async fn the_demo_dashboard_without_its_link_is_no_dead_end() {
    let dir = tempfile::tempdir().unwrap();
    let options = safe_outcomes::cli::demo::run::DemoOptions {
        data_dir: dir.path().to_path_buf(),
        scenario: None,
    };
    let (_, live) = safe_outcomes::cli::demo::run::run_and_serve(options, 0)
        .await
        .unwrap();
    let link = live.sign_in_url().unwrap();
    let (base, key) = link.split_once("/auth/local?key=").unwrap();
    // The overview refuses, and its sign-in link says where the way in is.
    let r = browser().get(format!("{base}/")).send().await.unwrap();
    assert_eq!(r.status(), 401);
    let html = r.text().await.unwrap();
    assert!(html.contains("href=\"/auth/login?next=%2F\""), "{html}");
    let (cookie, csrf, html) = login_form(base, "%2F").await;
    assert!(html.contains("Dashboard"), "{html}");
    assert!(!html.contains("Sign in with GitHub"), "{html}");
    // The key from the printed link works in the form too.
    let r = post_token(
        base,
        Some(&cookie),
        &[("csrf", &csrf), ("token", key), ("next", "/")],
    )
    .await;
    assert_eq!(r.status(), 303);
    let session = set_cookie(&r, "so_session").unwrap();
    let page = browser()
        .get(format!("{base}/"))
        .header(COOKIE, format!("so_session={session}"))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    live.stop().await.unwrap();
}

/// A person at 1200 and 390 px, in headless Chromium: the overview refuses,
/// its "Sign in" link leads to the sign-in page, a wrong token is said so,
/// the API token typed into the form opens the dashboard with the API's
/// numbers, and "Sign in with GitHub" is nowhere (no OAuth client here).
/// Screenshots of the sign-in page are kept with the dashboard's.
#[tokio::test]
async fn a_person_signs_in_with_the_api_token_in_headless_chromium() {
    use crate::browser::{binaries, Browser};
    use serde_json::json;
    let Some((chromium, chromedriver)) = binaries() else {
        common::skip_without(
            "chromium or chromedriver (.ci/run installs them)",
            "sign-in was not tested in a browser",
        );
        return;
    };
    let (_dir, t) = common::TestApp::fresh_demo().await;
    let total = t.get("/api/v1/report").await.body["totals"]["total_safe_outputs"].clone();
    let base = t.server.url();
    for width in [1200u32, 390] {
        let browser = Browser::start(&chromium, &chromedriver).await;
        browser.width(width).await;
        browser
            .call("/url", json!({"url": format!("{base}/workflows")}))
            .await;
        let title = browser.js("return document.title").await;
        assert!(title.as_str().unwrap().starts_with("Sign in"), "{title}");
        browser
            .js("document.querySelector('a[href^=\"/auth/login\"]').click()")
            .await;
        wait_for(&browser, "return location.pathname === '/auth/login' && document.querySelector('input[name=token]') !== null").await;
        let text = browser.js("return document.body.innerText").await;
        assert!(
            !text.as_str().unwrap().contains("Sign in with GitHub"),
            "{text}"
        );
        browser.screenshot(&format!("sign-in-{width}.png")).await;
        let type_and_send = |token: &str| {
            format!(
                "document.querySelector('input[name=token]').value = {token:?}; \
                 document.querySelector('form[action=\"/auth/login\"]').submit();"
            )
        };
        // A wrong token first: the page says so and stays.
        browser.js(&type_and_send("not-it")).await;
        wait_for(&browser, "return document.querySelector('.error') !== null").await;
        browser.js(&type_and_send(common::TOKEN)).await;
        wait_for(&browser, "return location.pathname === '/workflows'").await;
        let title = browser.js("return document.title").await;
        assert!(!title.as_str().unwrap().starts_with("Sign in"), "{title}");
        browser
            .call("/url", json!({"url": format!("{base}/")}))
            .await;
        let shown = browser
            .js("return Number(document.querySelector('#totals [data-field=total_safe_outputs]').textContent)")
            .await;
        assert_eq!(shown, total);
        let errors: Vec<String> = browser
            .console_errors()
            .await
            .into_iter()
            .filter(|e| !e.contains("favicon.ico"))
            // The refusals before signing in (the page, the wrong token).
            .filter(|e| !e.contains("status of 401") && !e.contains("status of 403"))
            .collect();
        assert_eq!(errors, Vec::<String>::new());
        browser.quit().await;
    }
    t.stop().await;
}

/// Poll `script` in the browser until it returns true (10 s at most).
async fn wait_for(browser: &crate::browser::Browser, script: &str) {
    for _ in 0..100 {
        if browser.js(script).await == serde_json::Value::Bool(true) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let at = browser
        .js("return location.href + ' ' + document.title")
        .await;
    panic!("never true: {script} (at {at})");
}
