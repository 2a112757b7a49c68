//! `safe-outcomes demo --serve`, through the real binary: after the scenario
//! it keeps its server up and prints a local sign-in link; following the link
//! signs a browser in (signed, HttpOnly, SameSite=Lax session cookie) as a
//! viewer who sees everything, and the dashboard's overview shows the demo's
//! numbers. A wrong key is a 401 that sets no cookie; `serve` has no
//! `/auth/local` at all; Ctrl-C (SIGINT) stops the demo cleanly.

use std::process::Stdio;
use std::time::Duration;

use reqwest::header::{LOCATION, SET_COOKIE};
use reqwest::redirect::Policy;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::common::serve::ServeChild;
use crate::sign_in::{fetch, get_with_cookie};

/// A browser that follows no redirect by itself (we look at each answer).
fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(Policy::none())
        .build()
        .unwrap()
}

/// `demo --serve --port 0` running, with everything it printed up to the link.
struct DemoChild {
    child: tokio::process::Child,
    printed: String,
    link: String,
    _dir: tempfile::TempDir,
}

async fn start_demo() -> DemoChild {
    let dir = tempfile::tempdir().unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_safe-outcomes"))
        .args(["demo", "--serve", "--port", "0", "--data-dir"])
        .arg(dir.path())
        .env_remove("APP_ID")
        .env_remove("LOG_LEVEL")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut printed = String::new();
    let link = tokio::time::timeout(Duration::from_secs(180), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            printed.push_str(&line);
            printed.push('\n');
            if let Some(link) = line.strip_prefix("Dashboard: ") {
                return link.trim().to_string();
            }
        }
        panic!("the demo ended without a Dashboard link:\n{printed}")
    })
    .await
    .expect("the demo printed its Dashboard link within 3 minutes");
    DemoChild {
        child,
        printed,
        link,
        _dir: dir,
    }
}

/// The number before `label` in the printed report (`12 safe outputs`).
fn printed_number(printed: &str, label: &str) -> u64 {
    let at = printed
        .find(label)
        .unwrap_or_else(|| panic!("{label}: {printed}"));
    printed[..at]
        .split(|c: char| !c.is_ascii_digit())
        .rfind(|w| !w.is_empty())
        .unwrap()
        .parse()
        .unwrap()
}

fn field(html: &str, name: &str) -> u64 {
    let marker = format!("data-field=\"{name}\">");
    let at = html
        .find(&marker)
        .unwrap_or_else(|| panic!("{name} in page"));
    let rest = &html[at + marker.len()..];
    rest[..rest.find('<').unwrap()].trim().parse().unwrap()
}

#[tokio::test]
async fn the_printed_link_signs_a_browser_in_to_the_dashboard() {
    let mut demo = start_demo().await;
    let (base, key) = demo.link.split_once("/auth/local?key=").unwrap();
    assert!(base.starts_with("http://127.0.0.1:"), "{}", demo.link);
    assert_eq!(key.len(), 64, "32 random bytes, hex: {key}");
    assert!(key.chars().all(|c| c.is_ascii_hexdigit()));
    let web = browser();

    // Without the link, the dashboard is closed.
    let closed = web.get(format!("{base}/")).send().await.unwrap();
    assert_eq!(closed.status(), 401);

    // A wrong or missing key: 401, no cookie.
    let mut wrong_key = key.to_string();
    wrong_key.replace_range(0..1, if key.starts_with('0') { "1" } else { "0" });
    for query in [format!("?key={wrong_key}"), "?key=".into(), String::new()] {
        let r = fetch(&web, format!("{base}/auth/local{query}")).await;
        assert_eq!(r.status(), 401, "{query}");
        assert!(r.headers().get(SET_COOKIE).is_none(), "{query}");
    }

    // The printed link: a session cookie and off to the overview.
    let signed_in = web.get(&demo.link).send().await.unwrap();
    assert_eq!(signed_in.status(), 303);
    assert_eq!(signed_in.headers()[LOCATION], "/");
    let set = signed_in.headers()[SET_COOKIE]
        .to_str()
        .unwrap()
        .to_string();
    assert!(set.starts_with("so_session="), "{set}");
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Lax"),
        "{set}"
    );
    let cookie = set.split(';').next().unwrap().to_string();

    let overview = get_with_cookie(&web, format!("{base}/"), &cookie).await;
    assert_eq!(overview.status(), 200);
    let html = overview.text().await.unwrap();
    let total = printed_number(&demo.printed, " safe outputs, ");
    let strong = printed_number(&demo.printed, " strong, ");
    assert!(total > 0 && strong > 0, "{}", demo.printed);
    assert_eq!(field(&html, "total_safe_outputs"), total, "{html}");
    assert_eq!(field(&html, "accepted_strong"), strong);

    // The local viewer sees everything, as the API says too.
    let me = get_with_cookie(&web, format!("{base}/api/v1/me"), &cookie).await;
    assert_eq!(me.status(), 200);
    let me: serde_json::Value = me.json().await.unwrap();
    assert_eq!(me["scope"], "all", "{me}");

    // Ctrl-C stops it cleanly.
    let pid = demo.child.id().unwrap();
    let sent = std::process::Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = tokio::time::timeout(Duration::from_secs(30), demo.child.wait())
        .await
        .expect("the demo stopped within 30 s of Ctrl-C")
        .unwrap();
    assert!(status.success(), "{status:?}");
    assert!(
        web.get(format!("{base}/")).send().await.is_err(),
        "the port is closed"
    );
}

#[tokio::test]
async fn serve_has_no_local_sign_in() {
    let dir = tempfile::tempdir().unwrap();
    let serve = ServeChild::start(dir.path(), &[("API_TOKEN", "t")]).await;
    let web = browser();
    let local = fetch(&web, format!("{}/auth/local?key=anything", serve.url)).await;
    assert_eq!(local.status(), 404);
    assert!(local.headers().get(SET_COOKIE).is_none());
    let unknown = fetch(&web, format!("{}/auth/no-such-page", serve.url)).await;
    assert_eq!(unknown.status(), 404, "the same answer as an unknown path");
    // The same answer but for the path it names.
    let local = local.text().await.unwrap();
    let unknown = unknown.text().await.unwrap();
    assert_eq!(local.replace("/auth/local", "/auth/no-such-page"), unknown);
}
