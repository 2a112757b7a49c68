//! What a user meets in the first hour, through the real binary: `demo | head`
//! exits quietly, `LOG_LEVEL` typos are refused, start-up errors name the
//! port or the `DATA_DIR` holder, `serve` reads `.env` (the environment wins),
//! logs carry no colours off a terminal, a refused webhook's log line names
//! its delivery and event, `replay` reports the files it could not send, and
//! a manifest without a `run_id` is a 400 that stores nothing, and the
//! operator signed in with the `API_TOKEN` of a listen-only server sees the
//! overview, with the setup page at its own link.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};

use crate::common::serve::ServeChild;
use crate::common::{self, TestApp, SECRET, TOKEN};
use safe_outcomes::ingest::client::Client;

fn bin() -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_safe-outcomes"));
    cmd.env_remove("APP_ID")
        .env_remove("LOG_LEVEL")
        .stdin(Stdio::null())
        .kill_on_drop(true);
    cmd
}

/// Run to the end (at most a minute) and return (success, stdout, stderr).
async fn run(cmd: &mut tokio::process::Command) -> (bool, String, String) {
    let out = tokio::time::timeout(Duration::from_secs(60), cmd.output())
        .await
        .expect("the command ended within a minute")
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[tokio::test]
async fn demo_into_a_closed_pipe_exits_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = bin()
        .args(["demo", "--data-dir"])
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // `| head` that has read enough: the reading end is gone.
    drop(child.stdout.take());
    let out = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[tokio::test]
async fn a_log_level_typo_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, _, stderr) = run(bin()
        .arg("serve")
        .env("LOG_LEVEL", "inof")
        .env("DATA_DIR", dir.path())
        .env("PORT", "0"))
    .await;
    assert!(!ok);
    assert!(stderr.contains("LOG_LEVEL \"inof\""), "{stderr}");
    assert!(
        !dir.path().join("store").exists(),
        "nothing started: {stderr}"
    );
}

#[tokio::test]
async fn a_port_in_use_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let (ok, _, stderr) = run(bin()
        .arg("serve")
        .env("DATA_DIR", dir.path())
        .env("HOST", "127.0.0.1")
        .env("PORT", port.to_string()))
    .await;
    assert!(!ok);
    assert!(
        stderr.contains(&format!("PORT {port}: cannot listen on 127.0.0.1:{port}")),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_second_serve_on_the_same_data_dir_names_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let mut first = ServeChild::start(dir.path(), &[]).await;
    let pid = first.child.id().unwrap();
    let expected = format!(
        "another safe-outcomes is running on DATA_DIR {} (pid {pid})",
        dir.path().display()
    );
    let mut second = bin()
        .arg("serve")
        .env("DATA_DIR", dir.path())
        .env("PORT", "0")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(second.stderr.take().unwrap()).lines();
    // Said at once, not after the wait for the holder to let go.
    let said = tokio::time::timeout(Duration::from_secs(3), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.contains(&expected) {
                return line;
            }
        }
        panic!("stderr closed without naming the holder")
    })
    .await
    .expect("the holder is named within 3 s");
    assert!(said.contains("waiting"), "{said}");
    let mut rest = String::new();
    while let Some(line) = lines.next_line().await.unwrap() {
        rest.push_str(&line);
        rest.push('\n');
    }
    let status = second.wait().await.unwrap();
    assert!(!status.success());
    assert!(rest.contains("error: opening store in"), "{rest}");
    assert!(rest.contains(&expected), "{rest}");
    first.terminate().await;
}

#[tokio::test]
async fn serve_reads_dotenv_the_environment_wins_and_logs_plainly() {
    let cwd = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::write(
        cwd.path().join(".env"),
        "WEBHOOK_SECRET=from-dotenv\nAPI_TOKEN=token-from-dotenv\n",
    )
    .unwrap();
    let mut serve = ServeChild::start_in(
        Some(cwd.path()),
        data.path(),
        &[("API_TOKEN", "token-from-env")],
    )
    .await;
    let signed = Client::new(&serve.url, Some("from-dotenv".into()), None);
    let body = br#"{"zen":"Keep it logically awesome.","hook_id":1}"#;
    let a = signed.deliver("ping", "dotenv-1", body).await.unwrap();
    assert!(a.status < 300, "the secret came from .env: {a:?}");
    let read = |token: &str| Client::new(&serve.url, None, Some(token.to_string()));
    let env_token = read("token-from-env").get("/api/v1/report").await.unwrap();
    assert_eq!(env_token.status, 200, "the environment wins");
    let file_token = read("token-from-dotenv")
        .get("/api/v1/report")
        .await
        .unwrap();
    assert_eq!(file_token.status, 401);

    // A refused delivery: its log line names the delivery and the event.
    let forged = Client::new(&serve.url, Some("not-the-secret".into()), None);
    let a = forged
        .deliver("issues", "refused-4242", body)
        .await
        .unwrap();
    assert_eq!(a.status, 401);
    serve.terminate().await;
    let output = serve.output();
    let line = output
        .lines()
        .find(|l| l.contains("webhook refused"))
        .unwrap_or_else(|| panic!("no refusal logged:\n{output}"));
    assert!(line.contains("refused-4242"), "{line}");
    assert!(line.contains("issues"), "{line}");
    assert!(
        !output.contains('\u{1b}'),
        "no ANSI colours off a terminal:\n{output:?}"
    );
}

#[tokio::test]
async fn replay_reports_the_files_it_could_not_send() {
    let dir = tempfile::tempdir().unwrap();
    let t = TestApp::start(dir.path(), common::t0()).await;
    let folder = tempfile::tempdir().unwrap();
    let ping = folder.path().join("ping");
    std::fs::create_dir(&ping).unwrap();
    std::fs::write(ping.join("a.json"), br#"{"zen":"z","hook_id":1}"#).unwrap();
    std::fs::write(ping.join("b.json"), b"{ not json").unwrap();
    std::fs::write(ping.join("c.json"), br#"{"zen":"y","hook_id":2}"#).unwrap();
    let (ok, stdout, stderr) = run(bin().arg("replay").arg(folder.path()).args([
        "--to",
        &t.server.url(),
        "--secret",
        SECRET,
    ]))
    .await;
    assert!(!ok, "a file was not sent: {stdout}");
    assert!(
        stdout.contains("sent 2, refused 0, could not send 1 file(s)"),
        "{stdout}\n{stderr}"
    );
    let bad = ping.join("b.json");
    assert!(
        stderr.contains(&format!("could not send {}", bad.display())),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_manifest_without_run_id_is_refused_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let t = TestApp::start(dir.path(), common::t0()).await;
    let line =
        r#"{"type":"create_issue","url":"https://github.com/acme/widgets/issues/7","number":7}"#;
    let post = |query: &'static str| {
        reqwest::Client::new()
            .post(format!("{}/api/v1/manifests{query}", t.server.url()))
            .bearer_auth(TOKEN)
            .header("content-type", "application/x-ndjson")
            .body(line)
            .send()
    };
    let refused = post("?repo=acme/widgets").await.unwrap();
    assert_eq!(refused.status(), 400);
    let body: serde_json::Value = refused.json().await.unwrap();
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains("run_id is required"),
        "{body}"
    );
    t.app.wait_idle().await;
    let outputs = t.get("/api/v1/outputs").await;
    assert_eq!(outputs.status, 200);
    assert_eq!(
        outputs.body["items"].as_array().map(Vec::len),
        Some(0),
        "{}",
        outputs.body
    );
    let accepted = post("?repo=acme/widgets&run_id=5").await.unwrap();
    assert_eq!(accepted.status(), 202);
}

/// Issue 49 item 1: `serve` in listen-only mode (a webhook secret and an
/// API token, no App): to anyone not signed in `/` is the setup page; the
/// operator signed in with the `API_TOKEN` at `/auth/login` gets the
/// overview at `/` (and the workflows and lists), with a link to the setup
/// page, which stays at its own address.
#[tokio::test]
async fn the_operator_signed_in_with_the_api_token_sees_the_overview_before_any_app() {
    use crate::sign_in::{attribute_after, browser, fetch, get_with_cookie, location, set_cookie};
    let dir = tempfile::tempdir().unwrap();
    let (mut serve, _) = ServeChild::start_with_env_file(
        dir.path(),
        &[("API_TOKEN", TOKEN), ("WEBHOOK_SECRET", SECRET)],
    )
    .await;
    let url = serve.url.clone();
    let web = browser();
    let setup_form = "name=\"setup_key\"";
    let anonymous = fetch(&web, format!("{url}/")).await;
    assert_eq!(anonymous.status(), 200);
    assert!(anonymous.text().await.unwrap().contains(setup_form));

    // Sign in with the API token, on the checked form.
    let r = fetch(&web, format!("{url}/auth/login?next=/")).await;
    let nonce = format!("so_login={}", set_cookie(&r, "so_login").expect("a nonce"));
    let csrf = attribute_after(&r.text().await.unwrap(), "name=\"csrf\"", "value");
    let r = web
        .post(format!("{url}/auth/login"))
        .header(reqwest::header::COOKIE, &nonce)
        .form(&[("csrf", csrf.as_str()), ("token", TOKEN), ("next", "/")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    assert_eq!(location(&r), "/");
    let session = format!(
        "so_session={}",
        set_cookie(&r, "so_session").expect("a session")
    );

    let page = |path: &str| {
        let (web, url, session) = (web.clone(), url.clone(), session.clone());
        let path = path.to_string();
        async move {
            let r = get_with_cookie(&web, format!("{url}{path}"), &session).await;
            (r.status().as_u16(), r.text().await.unwrap())
        }
    };
    let (status, overview) = page("/").await;
    assert_eq!(status, 200, "{overview}");
    assert!(
        overview.contains("What became of the agents"),
        "the overview, not the setup page: {overview}"
    );
    assert!(!overview.contains(setup_form), "{overview}");
    assert!(
        overview.contains("href=\"/setup/app\""),
        "a link to the setup page: {overview}"
    );
    // The overview's filters are the overview's too.
    let (status, filtered) = page("/?status=rejected").await;
    assert_eq!(status, 200);
    assert!(filtered.contains("What became of the agents"), "{filtered}");
    for path in ["/workflows", "/outputs"] {
        let (status, body) = page(path).await;
        assert_eq!(status, 200, "{path}: {body}");
        assert!(!body.contains(setup_form), "{path}");
    }
    // The setup page at its own link, and its form's answer at `/`.
    let (status, setup) = page("/setup/app").await;
    assert_eq!(status, 200);
    assert!(setup.contains(setup_form), "{setup}");
    let (status, wrong_key) = page("/?setup_key=nope").await;
    assert_eq!(status, 403, "{wrong_key}");
    assert!(wrong_key.contains("not the setup key"), "{wrong_key}");
    serve.terminate().await;
}
