//! Test harness: a real App on a temporary sled store behind the real router on
//! a loopback port, a manual clock, and a signing client. Tests wait on
//! `wait_idle`/`tick` instead of sleeping.
#![allow(dead_code)]

pub mod guard;
pub mod pg;
pub mod serve;
pub mod tester;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use safe_outcomes::app::{App, AppConfig, GitHubConfig, Running};
use safe_outcomes::http::{router, RouterOptions, RunningServer};
use safe_outcomes::ingest::client::{Client, Step};
use safe_outcomes::model::clock::Clock;
use safe_outcomes::model::OutcomeRecord;
use safe_outcomes::store::ReadStore;

/// `App::launch` in App mode on `dir`, with the GitHub tasks `github` turns on.
pub fn launch(dir: &Path, clock: &Clock, github: GitHubConfig) -> Running {
    App::launch(AppConfig {
        data_dir: dir.to_path_buf(),
        clock: clock.clone(),
        github: Some(github),
        database_url: None,
    })
    .expect("app starts")
}

pub const SECRET: &str = "test-webhook-secret";
pub const TOKEN: &str = "test-api-token";

/// The router options the harness serves with: the test webhook path and
/// secret, and the test API token.
pub fn signed_options() -> RouterOptions {
    RouterOptions::keyed("/api/github/webhooks", SECRET, TOKEN)
}

pub struct TestApp {
    pub app: App,
    pub server: RunningServer,
    pub client: Client,
    pub clock: Clock,
    pub dir: PathBuf,
}

impl TestApp {
    /// `demo` in a temporary folder of its own, removed when the returned
    /// `TempDir` is dropped.
    pub async fn fresh_demo() -> (tempfile::TempDir, TestApp) {
        let dir = tempfile::tempdir().unwrap();
        let t = TestApp::demo(dir.path()).await;
        (dir, t)
    }

    /// A TestApp that has played the whole bundled demo scenario and is idle.
    pub async fn demo(dir: &Path) -> TestApp {
        let steps = safe_outcomes::ingest::client::parse_scenario(
            safe_outcomes::ingest::client::DEMO_SCENARIO,
        )
        .unwrap();
        let t = TestApp::start(dir, steps[0].at()).await;
        t.play(&steps).await;
        t.app.wait_idle().await;
        t
    }

    pub async fn start(dir: &Path, start: DateTime<Utc>) -> TestApp {
        Self::start_with(dir, start, true).await
    }

    /// `run_worker: false` stores deliveries but never processes them.
    pub async fn start_with(dir: &Path, start: DateTime<Utc>, run_worker: bool) -> TestApp {
        Self::start_with_options(dir, start, run_worker, RouterOptions::default()).await
    }

    /// `extra` supplies the router options the harness does not set itself
    /// (webhook path, secret and token are always the test ones).
    pub async fn start_with_options(
        dir: &Path,
        start: DateTime<Utc>,
        run_worker: bool,
        extra: RouterOptions,
    ) -> TestApp {
        let clock = Clock::manual(start);
        let app = if run_worker {
            App::start(dir, clock.clone()).expect("app starts")
        } else {
            App::start_without_worker(dir, clock.clone()).expect("app starts")
        };
        let options = RouterOptions {
            listen_only: true,
            ..extra
        };
        Self::serve(app, clock, dir, options).await
    }

    /// Serve an App the test started itself (e.g. with a check-run publisher).
    /// The webhook path and secret are always the test ones, the API token
    /// the test one unless `options` names another.
    pub async fn serve(app: App, clock: Clock, dir: &Path, options: RouterOptions) -> TestApp {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        Self::serve_on(app, clock, dir, listener, options)
    }

    /// `serve` on a listener already bound (the caller knew its URL first).
    pub fn serve_on(
        app: App,
        clock: Clock,
        dir: &Path,
        listener: tokio::net::TcpListener,
        options: RouterOptions,
    ) -> TestApp {
        let limits = options.limits.clone();
        let token: safe_outcomes::settings::Secret =
            options.api_token.clone().unwrap_or_else(|| TOKEN.into());
        let routes = router(
            &app,
            RouterOptions {
                webhook_path: "/api/github/webhooks".into(),
                secrets: vec![SECRET.into()],
                api_token: Some(token.clone()),
                ..options
            },
        );
        let server = RunningServer::serve_on(listener, routes, &limits).expect("server serves");
        let client = Client::new(
            &server.url(),
            Some(SECRET.to_string()),
            Some(token.expose_secret().to_string()),
        );
        TestApp {
            app,
            server,
            client,
            clock,
            dir: dir.to_path_buf(),
        }
    }

    /// GET `path` through the test's client (with the API token); the
    /// answer, whatever its status.
    pub async fn get(&self, path: &str) -> safe_outcomes::ingest::client::Answer {
        self.client.get(path).await.unwrap()
    }

    /// GET `path` with the API token; the response as it came (status,
    /// headers, and the body still to read).
    pub async fn get_raw(&self, path: &str) -> reqwest::Response {
        reqwest::Client::new()
            .get(format!("{}{path}", self.server.url()))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap()
    }

    /// Deliver a signed webhook; the answer, whatever it is.
    pub async fn deliver(
        &self,
        event: &str,
        delivery: &str,
        body: &serde_json::Value,
    ) -> safe_outcomes::ingest::client::Answer {
        self.client
            .deliver(event, delivery, body.to_string().as_bytes())
            .await
            .unwrap()
    }

    /// Deliver a signed webhook and require a 2xx.
    pub async fn deliver_ok(&self, event: &str, delivery: &str, body: &serde_json::Value) {
        let a = self.deliver(event, delivery, body).await;
        assert!(
            a.status < 300,
            "{event} {delivery}: {} {}",
            a.status,
            a.body
        );
    }

    /// Post `lines`, one JSON object a line, as the manifest of run `run_id`
    /// of `workflow` on `repo`; it must be accepted (202).
    pub async fn post_manifest_ok(
        &self,
        repo: &str,
        run_id: u64,
        workflow: &str,
        lines: &[serde_json::Value],
    ) {
        let body = lines
            .iter()
            .map(serde_json::Value::to_string)
            .collect::<Vec<_>>()
            .join("\n");
        let a = self
            .client
            .post_manifest(repo, run_id, Some(workflow), body)
            .await
            .unwrap();
        assert_eq!(a.status, 202, "{}", a.body);
    }

    /// Send scenario steps like the demo does: time moves with the steps.
    pub async fn play(&self, steps: &[Step]) {
        for step in steps {
            if step.at() > self.clock.now() {
                self.app.wait_idle().await;
                self.clock.advance_to(step.at());
                self.app.tick().await;
            }
            let answer = self.client.send_step(step).await.expect("step sent");
            if let Some(a) = answer {
                assert!(
                    a.status < 500,
                    "server error {} on {step:?}: {}",
                    a.status,
                    a.body
                );
            }
        }
        self.settle().await;
    }

    pub async fn settle(&self) {
        self.app.wait_idle().await;
        self.app.tick().await;
    }

    pub async fn advance_to(&self, at: DateTime<Utc>) {
        self.app.wait_idle().await;
        self.clock.advance_to(at);
        self.app.tick().await;
    }

    /// `outcomes`, once the worker is idle and has ticked (`settle`).
    pub async fn settled_outcomes(&self) -> BTreeMap<String, OutcomeRecord> {
        self.settle().await;
        self.outcomes().await
    }

    /// All outcome records, by id, through the export endpoint.
    pub async fn outcomes(&self) -> BTreeMap<String, OutcomeRecord> {
        let answer = self.client.get("/api/v1/export.jsonl").await.unwrap();
        assert_eq!(answer.status, 200);
        // One JSONL line is also a JSON object, which the client parses.
        let text = match &answer.body {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Null => String::new(),
            other => other.to_string(),
        };
        text.lines()
            .map(|l| serde_json::from_str::<OutcomeRecord>(l).unwrap())
            .map(|o| (o.safe_output_id.clone(), o))
            .collect()
    }

    /// Every key and value in the store, to show a request changed nothing.
    pub fn dump(&self) -> Vec<(String, String)> {
        self.app
            .store
            .scan_raw(b"")
            .unwrap()
            .into_iter()
            .map(|(k, v)| {
                (
                    String::from_utf8_lossy(&k).into_owned(),
                    String::from_utf8_lossy(&v).into_owned(),
                )
            })
            .collect()
    }

    /// The store without its counters: the state deliveries produced.
    pub fn dump_state(&self) -> Vec<(String, String)> {
        self.dump()
            .into_iter()
            .filter(|(k, _)| !k.starts_with("m/"))
            .collect()
    }

    /// Asserts that once the worker is idle, the stored state is still `before` (a
    /// `dump_state` taken earlier): `why` says what stored nothing.
    pub async fn unchanged(&self, before: &[(String, String)], why: &str) {
        self.app.wait_idle().await;
        assert_eq!(self.dump_state(), before, "{why}");
    }

    pub async fn stop(self) {
        self.server.stop().await;
        self.app.shutdown();
    }
}

/// Outcome records without the fields that record *when* we looked.
pub fn comparable(mut o: OutcomeRecord) -> OutcomeRecord {
    o.evaluated_at = DateTime::<Utc>::MIN_UTC;
    o
}

/// A finished process: whether it succeeded, and its stdout then its stderr as text.
pub fn success_and_text(out: &std::process::Output) -> (bool, String) {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// The stdout of a finished process that must have succeeded (its stdout
/// and stderr in the failure message otherwise).
pub fn ok(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// The test cannot run here: `missing` (a tool, with where it comes from)
/// is not installed. On CI, which installs every tool, that fails the test;
/// elsewhere the skip is said loudly, with what went `untested`.
pub fn skip_without(missing: &str, untested: &str) {
    assert!(
        std::env::var_os("CI").is_none(),
        "CI is set and {missing} is missing"
    );
    eprintln!("\n!!! SKIPPED: {missing} not found; {untested} !!!\n");
}

/// Where GitHub's published descriptions are installed (npm packages under
/// `target/github-descriptions/node_modules`, or `GITHUB_DESCRIPTIONS`),
/// when every package `needed` is there; else the test is skipped.
pub fn github_descriptions(needed: &[&str]) -> Option<PathBuf> {
    let dir = std::env::var_os("GITHUB_DESCRIPTIONS")
        .map(PathBuf::from)
        .unwrap_or_else(|| guard::target_dir().join("github-descriptions"))
        .join("node_modules");
    if needed.iter().all(|p| dir.join(p).is_dir()) {
        return Some(dir);
    }
    skip_without(
        &format!("GitHub's descriptions ({needed:?} under {})", dir.display()),
        "run scripts/github-descriptions",
    );
    None
}

/// The built-in demo scenario, run into `dir`.
pub async fn run_demo(dir: &Path) -> safe_outcomes::cli::demo::run::DemoResult {
    safe_outcomes::cli::demo::run::run(safe_outcomes::cli::demo::run::DemoOptions {
        data_dir: dir.to_path_buf(),
        scenario: None,
    })
    .await
    .unwrap()
}

/// A deterministic shuffle (no RNG dependency): a seeded LCG Fisher–Yates.
pub fn shuffle<T>(items: &mut [T], mut seed: u64) {
    for i in (1..items.len()).rev() {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let j = (seed >> 33) as usize % (i + 1);
        items.swap(i, j);
    }
}

pub fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The start of the tests' GitHub timelines.
/// Post, through `client`, the manifest of run `run` of `triage` on `repo`:
/// the `create_issue` output that opened issue 5; it must be accepted (202).
pub async fn post_issue_five(client: &Client, repo: &str, run: u64) {
    let line = format!(
        r#"{{"type":"create_issue","url":"https://github.com/{repo}/issues/5","number":5,"repo":"{repo}","timestamp":"2026-10-01T00:00:00Z"}}"#
    );
    let a = client
        .post_manifest(repo, run, Some("triage"), line)
        .await
        .unwrap();
    assert_eq!(a.status, 202, "{}", a.body);
}

/// The `issues` delivery of maria-lopez labelling issue `number` of
/// acme/widgets `bug` at `at`.
pub fn bug_labeled(number: u64, at: DateTime<Utc>) -> serde_json::Value {
    safe_outcomes::bench::payloads::issue(&safe_outcomes::bench::payloads::IssueEvent {
        repo: "acme/widgets",
        number,
        action: "labeled",
        at,
        sender: "maria-lopez",
        gh_aw_run: None,
        label: Some("bug"),
        comment_id: None,
    })
}

/// The model GitHub's App private key, written to `dir/key.pem`; its path.
pub fn write_app_key(dir: &Path) -> PathBuf {
    let key = dir.join("key.pem");
    std::fs::write(&key, safe_outcomes::bench::github_model::PRIVATE_KEY).unwrap();
    key
}

/// POST `body` as NDJSON to the manifest endpoint `{base}/api/v1/manifests{query}`
/// with `bearer`; the status and the JSON answer (null when it is not JSON).
pub async fn post_ndjson(
    base: &str,
    query: &str,
    bearer: &str,
    body: String,
) -> (u16, serde_json::Value) {
    let resp = reqwest::Client::new()
        .post(format!("{base}/api/v1/manifests{query}"))
        .header("content-type", "application/x-ndjson")
        .bearer_auth(bearer)
        .body(body)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    (
        status,
        resp.json::<serde_json::Value>()
            .await
            .unwrap_or(serde_json::Value::Null),
    )
}

/// The path of a page of `/api/v1/outputs` of `limit` outputs: the first,
/// or the one `cursor` points at.
pub fn outputs_page(limit: usize, cursor: Option<&str>) -> String {
    match cursor {
        Some(c) => format!("/api/v1/outputs?limit={limit}&cursor={c}"),
        None => format!("/api/v1/outputs?limit={limit}"),
    }
}

pub fn t0() -> DateTime<Utc> {
    "2026-10-01T00:00:00Z".parse().unwrap()
}

/// `minutes` after [`t0`], as GitHub writes times.
pub fn at(minutes: i64) -> String {
    (t0() + chrono::Duration::minutes(minutes)).to_rfc3339()
}

/// A webhook/API user object; `[bot]` logins are bots.
/// The sum of one count over JSON `items`, `count` picking it from each.
pub fn total<'a>(
    items: impl IntoIterator<Item = &'a serde_json::Value>,
    count: impl Fn(&'a serde_json::Value) -> &'a serde_json::Value,
) -> u64 {
    items.into_iter().map(|i| count(i).as_u64().unwrap()).sum()
}

pub fn user(login: &str) -> serde_json::Value {
    let kind = if login.ends_with("[bot]") {
        "Bot"
    } else {
        "User"
    };
    serde_json::json!({"login": login, "type": kind})
}

/// The `safe-outcomes` binary, without the environment that would point it
/// at another server, token or store than the test's.
pub fn bin() -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_safe-outcomes"));
    for var in [
        "SAFE_OUTCOMES_URL",
        "API_TOKEN",
        "DATA_DIR",
        "WEBHOOK_SECRET",
        "LOG_LEVEL",
    ] {
        c.env_remove(var);
    }
    c
}

/// Run the binary with `args` to the end, its output captured.
pub fn cli(args: &[&str]) -> std::process::Output {
    bin().args(args).output().expect("the binary runs")
}
