//! The dashboard over the demo scenario, through the real router.
//!
//! Without a browser: every page answers HTML with the report's numbers; a
//! request without a reader gets the HTML sign-in page; an unknown parameter
//! is a 400 page. In headless Chromium (driven over the WebDriver protocol
//! by chromedriver, with plain HTTP: no browser crate): every page loads at
//! 1200 px and at 390 px with no console error (a Content-Security-Policy
//! violation is one: the pages hold no inline script or style) and with
//! their stylesheet applied, no horizontal scroll, the
//! numbers in the DOM equal `/api/v1/report`'s and `/api/v1/series`', the
//! chart has one point per rated week in each of its three series, and a
//! screenshot of each page is saved under `target/dashboard-screenshots/`.
//! Without Chromium the browser test fails when `CI` is set, else it skips
//! loudly.

use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine;
use serde_json::{json, Value};

use crate::answers;
use crate::common::guard::{Reaper, Target};
use crate::common::{self, TestApp};
use safe_outcomes::http::dashboard::chart;
use safe_outcomes::ingest::client::parse_scenario;
use safe_outcomes::ingest::client::DEMO_SCENARIO as SCENARIO;

const PAGES: [(&str, &str); 5] = [
    ("overview", "/"),
    ("workflows", "/workflows"),
    ("workflow", "/workflows/ci-coach"),
    ("run", "/runs/acme/widgets/2101"),
    ("output", "/outputs/acme/widgets:2101:0"),
];

async fn demo_app(dir: &Path) -> TestApp {
    let steps = parse_scenario(SCENARIO).unwrap();
    let t = TestApp::start(dir, steps[0].at()).await;
    t.play(&steps).await;
    t
}

async fn page(t: &TestApp, path: &str, token: Option<&str>) -> (u16, String) {
    let req = reqwest::Client::new().get(format!("{}{path}", t.server.url()));
    let r = answers::bearer(req, token).send().await.unwrap();
    let status = r.status().as_u16();
    let ct = r
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string());
    assert_eq!(ct.as_deref(), Some("text/html; charset=utf-8"), "{path}");
    (status, r.text().await.unwrap())
}

#[tokio::test]
async fn every_page_answers_html_and_refusals_are_pages_too() {
    let dir = tempfile::tempdir().unwrap();
    let t = demo_app(dir.path()).await;
    let report = t.client.get("/api/v1/report").await.unwrap().body;
    for (name, path) in PAGES {
        let (status, html) = page(&t, path, Some(common::TOKEN)).await;
        assert_eq!(status, 200, "{name}: {html}");
        assert!(!html.contains("<script"), "{name}: no JavaScript");
        let (status, html) = page(&t, path, None).await;
        assert_eq!(status, 401, "{name}");
        // The sign-in link comes back to this page.
        let back = serde_urlencoded::to_string([("next", path)]).unwrap();
        assert!(
            html.contains(&format!("href=\"/auth/login?{back}\"")),
            "{name}: {html}"
        );
        assert!(html.contains(">Sign in<"), "{name}");
        assert!(
            !html.contains("acme/"),
            "{name}: no repository before sign-in"
        );
        let (status, _) = page(&t, path, Some("wrong")).await;
        assert_eq!(status, 401, "{name}");
    }
    let (_, overview) = page(&t, "/", Some(common::TOKEN)).await;
    let strong = report["totals"]["accepted_strong"].as_u64().unwrap();
    assert!(
        overview.contains(&format!("data-field=\"accepted_strong\">{strong}<")),
        "{overview}"
    );
    for path in ["/?wokflow=x", "/workflows?since=yesterday"] {
        let (status, html) = page(&t, path, Some(common::TOKEN)).await;
        assert_eq!(status, 400, "{path}");
        assert!(html.contains("class=\"error\""), "{html}");
    }
    let (status, _) = page(&t, "/outputs/acme/widgets:9:9", Some(common::TOKEN)).await;
    assert_eq!(status, 404);
    // An empty field of the filter form is no cut.
    let (status, _) = page(&t, "/?repo=&since=&workflow=ci-coach", Some(common::TOKEN)).await;
    assert_eq!(status, 200);
    t.stop().await;
}

/// A chromedriver child and one browser session, spoken to over WebDriver.
struct Browser {
    http: reqwest::Client,
    base: String,
    driver: tokio::process::Child,
    /// chromedriver's process group: the driver and the Chromium it starts.
    group: Option<Reaper>,
}

/// Chromium and chromedriver, when both are here.
fn browser_binaries() -> Option<(PathBuf, PathBuf)> {
    let find = |env: &str, names: &[&str]| -> Option<PathBuf> {
        if let Ok(p) = std::env::var(env) {
            return Some(PathBuf::from(p));
        }
        names
            .iter()
            .map(|n| PathBuf::from("/usr/bin").join(n))
            .find(|p| p.exists())
    };
    Some((
        find(
            "CHROMIUM",
            &["chromium", "chromium-browser", "google-chrome"],
        )?,
        find("CHROMEDRIVER", &["chromedriver"])?,
    ))
}

impl Browser {
    async fn start(chromium: &Path, chromedriver: &Path) -> Browser {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let driver = tokio::process::Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .process_group(0)
            .spawn()
            .expect("chromedriver starts");
        let group = Reaper::new(Target::Group(driver.id().expect("chromedriver runs")), true);
        let http = reqwest::Client::new();
        let root = format!("http://127.0.0.1:{port}");
        for _ in 0..100 {
            if http.get(format!("{root}/status")).send().await.is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--window-size=1200,900"]
            },
            "goog:loggingPrefs": {"browser": "ALL"}
        }}});
        let r = answers::json(http.post(format!("{root}/session")).json(&caps)).await;
        let id = r["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no WebDriver session: {r}"));
        Browser {
            http,
            base: format!("{root}/session/{id}"),
            driver,
            group: Some(group),
        }
    }

    async fn call(&self, path: &str, body: Value) -> Value {
        let r = answers::json(self.http.post(format!("{}{path}", self.base)).json(&body)).await;
        assert!(r["value"]["error"].is_null(), "{path}: {r}");
        r["value"].clone()
    }

    async fn cdp(&self, cmd: &str, params: Value) -> Value {
        self.call("/goog/cdp/execute", json!({"cmd": cmd, "params": params}))
            .await
    }

    async fn js(&self, script: &str) -> Value {
        self.call("/execute/sync", json!({"script": script, "args": []}))
            .await
    }

    async fn width(&self, width: u32) {
        self.cdp(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600}),
        )
        .await;
    }

    /// Console messages of level SEVERE since the last call.
    async fn console_errors(&self) -> Vec<String> {
        let log = self.call("/se/log", json!({"type": "browser"})).await;
        log.as_array()
            .unwrap()
            .iter()
            .filter(|e| e["level"] == "SEVERE")
            .map(|e| e["message"].to_string())
            .collect()
    }

    async fn screenshot(&self, path: &Path) {
        let shot = self
            .cdp(
                "Page.captureScreenshot",
                json!({"format": "png", "captureBeyondViewport": true}),
            )
            .await;
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap())
            .unwrap();
        std::fs::write(path, png).unwrap();
    }

    async fn quit(mut self) {
        let _ = self.http.delete(&self.base).send().await;
        // The whole group, Chromium's processes too, before the driver is reaped.
        drop(self.group.take());
        let _ = self.driver.kill().await;
    }
}

fn screenshot_dir() -> PathBuf {
    let target = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("target")
            .display()
            .to_string()
    });
    let dir = Path::new(&target).join("dashboard-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test]
async fn every_page_in_headless_chromium_shows_the_apis_numbers_at_1200_and_390_px() {
    let Some((chromium, chromedriver)) = browser_binaries() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set and chromium/chromedriver are missing (.ci/run installs them)"
        );
        eprintln!("\n!!! SKIPPED: chromium or chromedriver not found; the dashboard was not tested in a browser !!!\n");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let t = demo_app(dir.path()).await;
    let browser = Browser::start(&chromium, &chromedriver).await;
    browser.cdp("Network.enable", json!({})).await;
    browser
        .cdp(
            "Network.setExtraHTTPHeaders",
            json!({"headers": {"Authorization": format!("Bearer {}", common::TOKEN)}}),
        )
        .await;
    let shots = screenshot_dir();
    for width in [1200u32, 390] {
        browser.width(width).await;
        for (name, path) in PAGES {
            browser
                .call("/url", json!({"url": format!("{}{path}", t.server.url())}))
                .await;
            let title = browser.js("return document.title").await;
            assert!(
                !title.as_str().unwrap().starts_with("Sign in"),
                "{name}: {title}"
            );
            assert_eq!(
                browser.console_errors().await,
                Vec::<String>::new(),
                "{name}: no console error (a CSP violation is one)"
            );
            // The stylesheet is a file the page's CSP allows: it applied.
            let styled = browser
                .js("return getComputedStyle(document.querySelector('nav')).display")
                .await;
            assert_eq!(styled, "flex", "{name}: the dashboard's stylesheet applied");
            let widths = browser
                .js("return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
                .await;
            if widths[0].as_u64() > widths[1].as_u64() {
                let wide = browser
                    .js("return [...document.querySelectorAll('body *')]
                           .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth)
                           .slice(0, 5).map(e => e.tagName + ' ' + e.outerHTML.slice(0, 120))")
                    .await;
                panic!("{name} at {width} px scrolls sideways: {widths}; too wide: {wide}");
            }
            browser
                .screenshot(&shots.join(format!("{name}-{width}.png")))
                .await;
        }
    }
    check_overview_numbers(&t, &browser).await;
    browser.quit().await;
    t.stop().await;
}

/// The overview's counts, rates and chart against the API's answers.
async fn check_overview_numbers(t: &TestApp, browser: &Browser) {
    browser
        .call("/url", json!({"url": format!("{}/", t.server.url())}))
        .await;
    let report = t.client.get("/api/v1/report").await.unwrap().body;
    let dom = browser
        .js(
            "const o = {}; document.querySelectorAll('#totals [data-field], #apart [data-field]')
               .forEach(e => o[e.dataset.field] = Number(e.textContent)); return o;",
        )
        .await;
    let fields = dom.as_object().unwrap();
    assert!(fields.len() >= 13, "{dom}");
    for (field, value) in fields {
        assert_eq!(value, &report["totals"][field], "{field}");
    }
    let types = browser
        .js(
            "const o = {}; document.querySelectorAll('#by-type tr[data-type]').forEach(r => {
               const row = {}; r.querySelectorAll('[data-field]').forEach(c =>
                 row[c.dataset.field] = c.dataset.value === undefined ? Number(c.textContent)
                   : (c.dataset.value === '' ? null : Number(c.dataset.value)));
               o[r.dataset.type] = row; }); return o;",
        )
        .await;
    let by_type = report["by_type"].as_object().unwrap();
    assert_eq!(types.as_object().unwrap().len(), by_type.len(), "{types}");
    for (name, stats) in by_type {
        for field in [
            "total_safe_outputs",
            "strict_acceptance_rate",
            "human_check_acceptance_rate",
            "sticky_artifact_rate",
            "rejection_rate",
        ] {
            let (dom, api) = (&types[name][field], &stats[field]);
            match (dom.as_f64(), api.as_f64()) {
                (Some(d), Some(a)) => assert!((d - a).abs() < 1e-9, "{name} {field}"),
                _ => assert_eq!(dom, api, "{name} {field}"),
            }
        }
    }
    let series = t.client.get("/api/v1/series?by=week").await.unwrap().body;
    let periods = series["periods"].as_array().unwrap();
    assert_eq!(periods.len(), 12);
    let weeks = browser
        .js("return document.querySelectorAll('#weekly-chart svg').length + ':' + document.querySelectorAll('#weekly tr[data-week]').length")
        .await;
    assert_eq!(weeks, "1:12");
    for (series_name, field) in [
        ("strict", "strict_acceptance_rate"),
        ("human_check", "human_check_acceptance_rate"),
        ("sticky", "sticky_artifact_rate"),
    ] {
        let rated = periods.iter().filter(|p| !p[field].is_null()).count();
        assert!(rated > 0, "the demo has rated weeks");
        let fill = chart::colour_hex(series_name);
        let points = browser
            .js(&format!(
                "return document.querySelectorAll('#weekly-chart svg circle[fill=\"{fill}\"]').length"
            ))
            .await;
        assert_eq!(points, rated, "{series_name}: one point per rated week");
    }
}

/// Strings in the store meant to plant markup or a script link on a page.
const HOSTILE: [&str; 3] = [
    "<img src=x onerror=alert(1)>",
    "\"><script>alert(1)</script>",
    "x' onmouseover='alert(1)",
];

#[tokio::test]
async fn hostile_strings_in_the_store_render_inert_on_every_page() {
    use crate::injection;

    let dir = tempfile::tempdir().unwrap();
    let t = TestApp::start(dir.path(), common::t0()).await;
    let line = json!({"type": "create_issue", "number": 7, "url": "javascript:alert(1)"});
    let mut records = injection::records_named(&line, &HOSTILE);
    for r in &mut records {
        r.target.as_mut().unwrap().url = Some("javascript:alert(1)".into());
    }
    injection::file_directly(&t, records).await;
    t.settle().await;
    let mut paths = vec![
        "/".to_string(),
        "/workflows".into(),
        "/runs/acme/widgets/9".into(),
    ];
    for (n, h) in HOSTILE.iter().enumerate() {
        let id = format!("acme/widgets:9:{n}{h}");
        paths.push(safe_outcomes::http::dashboard::output_path(&id));
        paths.push(format!(
            "/workflows/{}",
            safe_outcomes::model::escape::url_path(h).replace('/', "%2F")
        ));
    }
    for path in paths {
        let (status, html) = page(&t, &path, Some(common::TOKEN)).await;
        assert_eq!(status, 200, "{path}: {html}");
        for planted in ["<img", "<script", "href=\"javascript:"] {
            assert!(!html.contains(planted), "{planted} on {path}:\n{html}");
        }
    }
    t.stop().await;
}
