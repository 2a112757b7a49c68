//! A real headless Chromium driven by chromedriver over the WebDriver
//! protocol, with plain HTTP (no browser crate), for the dashboard's tests:
//! load a page, run a script, click, read the console, take a screenshot.
//! The bearer token is set as an extra header through Chrome's DevTools
//! protocol. Without Chromium, `binaries` is `None` (the tests fail when
//! `CI` is set, else skip loudly).

use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine;
use serde_json::{json, Value};

use crate::answers;
use crate::common::guard::{Reaper, Target};
use crate::common::{self, TestApp};

/// A chromedriver child and one browser session, spoken to over WebDriver.
pub struct Browser {
    http: reqwest::Client,
    base: String,
    driver: tokio::process::Child,
    /// chromedriver's process group: the driver and the Chromium it starts.
    group: Option<Reaper>,
    /// Their system temp folder (`TMPDIR`): the profile and the scoped
    /// folders they make there go with it, even after a kill. Last, so it
    /// is removed after the processes are gone.
    _tmp: tempfile::TempDir,
}

/// Chromium and chromedriver, when both are here.
pub fn binaries() -> Option<(PathBuf, PathBuf)> {
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
    pub async fn start(chromium: &Path, chromedriver: &Path) -> Browser {
        // chromedriver picks its own port and says which: a port picked here
        // and handed over could be taken meanwhile by another test's
        // outgoing connection (one test opens 1,100 of them).
        let tmp = tempfile::tempdir().expect("a temp folder for the browser");
        let mut driver = tokio::process::Command::new(chromedriver)
            .arg("--port=0")
            .env("TMPDIR", tmp.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .process_group(0)
            .spawn()
            .expect("chromedriver starts");
        let group = Reaper::new(Target::Group(driver.id().expect("chromedriver runs")), true);
        let port = driver_port(driver.stdout.take().expect("piped")).await;
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
            _tmp: tmp,
        }
    }

    pub async fn call(&self, path: &str, body: Value) -> Value {
        let r = answers::json(self.http.post(format!("{}{path}", self.base)).json(&body)).await;
        assert!(r["value"]["error"].is_null(), "{path}: {r}");
        r["value"].clone()
    }

    pub async fn cdp(&self, cmd: &str, params: Value) -> Value {
        self.call("/goog/cdp/execute", json!({"cmd": cmd, "params": params}))
            .await
    }

    pub async fn js(&self, script: &str) -> Value {
        self.call("/execute/sync", json!({"script": script, "args": []}))
            .await
    }

    pub async fn width(&self, width: u32) {
        self.cdp(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600}),
        )
        .await;
    }

    /// Console messages of level SEVERE since the last call.
    pub async fn console_errors(&self) -> Vec<String> {
        let log = self.call("/se/log", json!({"type": "browser"})).await;
        log.as_array()
            .unwrap()
            .iter()
            .filter(|e| e["level"] == "SEVERE")
            .map(|e| e["message"].to_string())
            .collect()
    }

    /// Save what the page shows as `name` among the dashboard's
    /// screenshots (`screenshot_dir`).
    pub async fn screenshot(&self, name: &str) {
        let path = screenshot_dir().join(name);
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

    pub async fn quit(mut self) {
        let _ = self.http.delete(&self.base).send().await;
        // The whole group, Chromium's processes too, before the driver is reaped.
        drop(self.group.take());
        let _ = self.driver.kill().await;
    }
}

/// The port chromedriver says it started on ("ChromeDriver was started
/// successfully on port N."); the rest of its output is read and dropped.
async fn driver_port(stdout: tokio::process::ChildStdout) -> u16 {
    use tokio::io::AsyncBufReadExt;
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let said = tokio::time::timeout(Duration::from_secs(30), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(rest) = line.split("started successfully on port ").nth(1) {
                return rest.trim_end_matches('.').parse::<u16>().ok();
            }
        }
        None
    })
    .await;
    let port = said.ok().flatten().expect("chromedriver says its port");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    port
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

impl Browser {
    /// The demo (`TestApp::fresh_demo`) and a browser reading it as the API
    /// token's holder; `None` where there is no browser to start.
    pub async fn on_demo() -> Option<(Browser, tempfile::TempDir, TestApp)> {
        let browser = Browser::with_token(common::TOKEN).await?;
        let (dir, t) = TestApp::fresh_demo().await;
        Some((browser, dir, t))
    }

    /// Start a browser that reads as the API token's holder.
    pub async fn with_token(token: &str) -> Option<Browser> {
        let Some((chromium, chromedriver)) = binaries() else {
            crate::common::skip_without(
                "chromium or chromedriver (.ci/run installs them)",
                "the dashboard was not tested in a browser",
            );
            return None;
        };
        let browser = Browser::start(&chromium, &chromedriver).await;
        browser.cdp("Network.enable", json!({})).await;
        browser
            .cdp(
                "Network.setExtraHTTPHeaders",
                json!({"headers": {"Authorization": format!("Bearer {token}")}}),
            )
            .await;
        Some(browser)
    }

    /// Open `url`.
    pub async fn open(&self, url: &str) {
        self.call("/url", json!({"url": url})).await;
    }

    /// Press one key as a person would, once the page has loaded and holds
    /// the keyboard focus (a key sent before then goes nowhere: seen under
    /// load, where the first Tab after a navigation left the focus on the
    /// body).
    pub async fn press(&self, key: &str) {
        let ready =
            "window.focus(); return document.readyState === 'complete' && document.hasFocus()";
        self.until_true(ready, 100, true).await;
        let action = json!({"actions": [{"type": "key", "id": "kb", "actions": [
            {"type": "keyDown", "value": key}, {"type": "keyUp", "value": key}]}]});
        self.call("/actions", action).await;
    }

    /// The page's current URL.
    pub async fn url(&self) -> String {
        let r = answers::json(self.http.get(format!("{}/url", self.base))).await;
        r["value"].as_str().unwrap_or_default().to_string()
    }

    /// Click the first element matching `css`, as a person would; a link
    /// or a submit button is followed to the end: this returns once the
    /// next page has loaded (WebDriver's click may return before the
    /// navigation it starts).
    pub async fn click(&self, css: &str) {
        let selector = serde_json::to_string(css).unwrap();
        let navigates = self
            .js(&format!(
                "const e = document.querySelector({selector}); window.__so_before_click = true;
                 return !!e && ((e.tagName == 'A' && !(e.getAttribute('href') || '').startsWith('#')) || e.type == 'submit')"
            ))
            .await
            == Value::Bool(true);
        self.click_only(css).await;
        let loaded =
            "return window.__so_before_click === undefined && document.readyState === 'complete'";
        if navigates && !self.until_true(loaded, 300, false).await {
            panic!("clicking {css} opened no new page within 15 s");
        }
    }

    /// Runs `script` every 50 ms until it returns true, at most `tries`
    /// times, bringing the page to the front between tries when asked;
    /// whether it did.
    async fn until_true(&self, script: &str, tries: u32, bring_to_front: bool) -> bool {
        for _ in 0..tries {
            if self.js(script).await == Value::Bool(true) {
                return true;
            }
            if bring_to_front {
                self.cdp("Page.bringToFront", json!({})).await;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        false
    }

    async fn click_only(&self, css: &str) {
        let found = self
            .call("/element", json!({"using": "css selector", "value": css}))
            .await;
        let id = found
            .as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("no element {css}: {found}"))
            .to_string();
        self.call(&format!("/element/{id}/click"), json!({})).await;
    }

    /// The page scrolls sideways at this width: the widest elements, else `None`.
    pub async fn too_wide(&self) -> Option<Value> {
        let widths = self
            .js("return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
            .await;
        let scrolled = self
            .js("return [...document.querySelectorAll('.scroll')].filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.firstElementChild && e.firstElementChild.id)")
            .await;
        if widths[0].as_u64() > widths[1].as_u64() || !scrolled.as_array().unwrap().is_empty() {
            let wide = self
                .js("return [...document.querySelectorAll('body *')]
                       .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth)
                       .slice(0, 5).map(e => e.tagName + ' ' + e.outerHTML.slice(0, 120))")
                .await;
            return Some(
                json!({"widths": widths, "tables that scroll": scrolled, "too wide": wide}),
            );
        }
        None
    }
}
