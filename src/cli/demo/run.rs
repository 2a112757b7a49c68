//! `safe-outcomes demo`: the bundled scenario (signed deliveries and gh-aw
//! manifests spanning weeks) replayed through the real HTTP path into a fresh
//! sled store, with a manual clock advanced through the evaluation windows.
//! `run_and_serve` then keeps the server up for the dashboard, reached through
//! a local sign-in link (`http::auth::local`).

use std::path::PathBuf;

use anyhow::Context;
use sha2::{Digest, Sha256};

use crate::app::{App, AppConfig, Running};
use crate::http::{router, RouterOptions, RunningServer};
use crate::ingest::client::{parse_scenario, Client, Step};
use crate::model::clock::Clock;
use crate::model::OutcomeRecord;
use crate::read::report::Report;

pub struct DemoOptions {
    pub data_dir: PathBuf,
    /// Scenario text; `None` runs the bundled one.
    pub scenario: Option<String>,
}

/// A step the server refused (the demo includes some on purpose).
#[derive(Debug, Clone)]
pub struct Refusal {
    pub step: usize,
    pub status: u16,
    pub body: serde_json::Value,
}

pub struct DemoResult {
    pub steps: usize,
    pub outcomes: Vec<OutcomeRecord>,
    /// The latest report, then one per checkpoint.
    pub report: Report,
    pub window_reports: Vec<Report>,
    /// Manifest posts' answers (accepted counts and rejected lines).
    pub manifest_answers: Vec<serde_json::Value>,
    pub refusals: Vec<Refusal>,
    pub jsonl_path: PathBuf,
    /// The same outputs as opentraces records (schema 0.9.0).
    pub opentraces_path: PathBuf,
    pub data_dir: PathBuf,
}

/// A fresh random-enough secret for the in-process server.
fn ephemeral_secret(label: &str) -> String {
    let mut h = Sha256::new();
    h.update(label.as_bytes());
    h.update(std::process::id().to_be_bytes());
    h.update(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos()
            .to_be_bytes(),
    );
    hex::encode(h.finalize())
}

/// Play the scenario, stop the server, return what came of it.
pub async fn run(options: DemoOptions) -> anyhow::Result<DemoResult> {
    let (result, live) = play(options, "127.0.0.1:0".parse()?, None).await?;
    live.stop().await?;
    Ok(result)
}

/// The demo's server, kept running after the scenario (`demo --serve`).
pub struct LiveDemo {
    server: RunningServer,
    running: Running,
    local_key: Option<String>,
    /// The read API's bearer token, good while the server runs.
    token: String,
}

impl LiveDemo {
    /// The server's address (`http://127.0.0.1:PORT`).
    pub(crate) fn url(&self) -> String {
        self.server.url()
    }

    /// The API token the CLI's `--server URL --token TOKEN` needs.
    pub(crate) fn api_token(&self) -> &str {
        &self.token
    }

    /// The one-time-printed local sign-in link (valid while the server runs).
    pub fn sign_in_url(&self) -> Option<String> {
        let key = self.local_key.as_ref()?;
        Some(format!("{}/auth/local?key={key}", self.server.url()))
    }

    /// Stop the server, then the App.
    pub async fn stop(self) -> anyhow::Result<()> {
        self.server.stop().await;
        self.running.stop().await
    }
}

/// Play the scenario on a server bound to 127.0.0.1:`port` (0: any) with a
/// fresh local sign-in key, and keep it running.
pub async fn run_and_serve(
    options: DemoOptions,
    port: u16,
) -> anyhow::Result<(DemoResult, LiveDemo)> {
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    play(options, addr, Some(crate::http::auth::local::new_key())).await
}

async fn play(
    options: DemoOptions,
    addr: std::net::SocketAddr,
    local_key: Option<String>,
) -> anyhow::Result<(DemoResult, LiveDemo)> {
    let text = options
        .scenario
        .as_deref()
        .unwrap_or(crate::ingest::client::DEMO_SCENARIO);
    let steps = parse_scenario(text)?;
    let start = steps
        .first()
        .map(Step::at)
        .context("the scenario is empty")?;
    let clock = Clock::manual(start);
    let running = App::launch(AppConfig::listen_only(&options.data_dir, clock.clone()))?;
    let app = &running.app;
    let secret = ephemeral_secret("webhook");
    let token = ephemeral_secret("api");
    let routes = router(
        app,
        RouterOptions {
            listen_only: true,
            auth: crate::http::auth::AuthOptions {
                local_key: local_key.clone().map(Into::into),
                ..Default::default()
            },
            ..RouterOptions::keyed("/api/github/webhooks", &secret, &token)
        },
    );
    let server = RunningServer::start(routes, addr)
        .await
        .with_context(|| match addr.port() {
            0 => format!("cannot listen on {addr}"),
            port => format!(
                "cannot listen on {addr}: is port {port} taken (another demo or server)? `--port 0` picks a free one"
            ),
        })?;
    let client = Client::new(&server.url(), Some(secret), Some(token.clone()));

    let mut refusals = Vec::new();
    let mut manifest_answers = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        if step.at() > clock.now() {
            // Let the worker catch up at the old time, then move time on.
            app.wait_idle().await;
            clock.advance_to(step.at());
            app.tick().await;
        }
        if let Some(answer) = client.send_step(step).await? {
            if matches!(step, Step::Manifest { .. }) {
                manifest_answers.push(answer.body.clone());
            }
            if answer.status >= 300 {
                refusals.push(Refusal {
                    step: i + 1,
                    status: answer.status,
                    body: answer.body,
                });
            }
        }
    }
    app.wait_idle().await;
    app.tick().await;

    let export = client.get("/api/v1/export.jsonl").await?;
    let jsonl = export.body.as_str().map(str::to_string).unwrap_or_default();
    let outcomes: Vec<OutcomeRecord> = jsonl
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()
        .context("decoding the export")?;
    let jsonl_path = options.data_dir.join("outcomes.jsonl");
    std::fs::write(&jsonl_path, &jsonl)?;
    let traces = client.get("/api/v1/export?format=opentraces").await?;
    anyhow::ensure!(traces.status == 200, "opentraces export: {}", traces.body);
    let opentraces_path = options.data_dir.join("opentraces.jsonl");
    std::fs::write(&opentraces_path, traces.body.as_str().unwrap_or_default())?;
    let report: Report = serde_json::from_value(client.get("/api/v1/report").await?.body)?;
    let mut window_reports = Vec::new();
    for (name, _) in crate::model::CHECKPOINTS {
        let r = client.get(&format!("/api/v1/report?window={name}")).await?;
        window_reports.push(serde_json::from_value(r.body)?);
    }
    let result = DemoResult {
        steps: steps.len(),
        outcomes,
        report,
        window_reports,
        manifest_answers,
        refusals,
        jsonl_path,
        opentraces_path,
        data_dir: options.data_dir,
    };
    let live = LiveDemo {
        server,
        running,
        local_key,
        token,
    };
    Ok((result, live))
}

/// One line per output, for the terminal.
pub(crate) fn outcome_table(outcomes: &[OutcomeRecord]) -> String {
    let width = |f: fn(&OutcomeRecord) -> usize, min: usize| {
        outcomes.iter().map(f).max().unwrap_or(min).max(min)
    };
    let (wi, wt, ws) = (
        width(|o| o.safe_output_id.len(), 6),
        width(|o| o.safe_output_type.len(), 4),
        width(|o| o.human_check_signal.len(), 6),
    );
    let mut out = format!(
        "{:<wi$} {:<wt$} {:<9} {:<8} {:<ws$} {}\n",
        "output", "type", "status", "strength", "signal", "24h → 7d → 30d"
    );
    for o in outcomes {
        let windows: Vec<String> = ["24h", "7d", "30d"]
            .iter()
            .map(|w| {
                o.windows
                    .get(w)
                    .map_or("-".to_string(), |s| s.outcome_status.as_str().to_string())
            })
            .collect();
        out.push_str(&format!(
            "{:<wi$} {:<wt$} {:<9} {:<8} {:<ws$} {}\n",
            o.safe_output_id,
            o.safe_output_type,
            o.outcome_status.as_str(),
            o.evidence_strength.as_str(),
            o.human_check_signal,
            windows.join(" → ")
        ));
    }
    out
}
