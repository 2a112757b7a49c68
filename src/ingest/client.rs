//! The client side: signed webhook deliveries and manifest posts over HTTP, and
//! the scenario format the demo and `replay` send.

use std::path::{Path, PathBuf};

/// The bundled scenario the demo replays (and the tests and `bench api` reuse).
pub const DEMO_SCENARIO: &str = include_str!("../../fixtures/demo/scenario.jsonl");

use anyhow::{bail, Context};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::Value;
use sha2::Digest;

use crate::ingest::signature;

/// One step of a recorded scenario (`fixtures/demo/scenario.jsonl`).
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Step {
    /// A webhook delivery, sent signed.
    Webhook {
        at: DateTime<Utc>,
        event: String,
        delivery: String,
        payload: Value,
    },
    /// A gh-aw manifest post.
    Manifest {
        at: DateTime<Utc>,
        repo: String,
        run_id: u64,
        workflow: Option<String>,
        #[serde(default)]
        lines: Vec<Value>,
        /// Raw text lines appended as they are (e.g. a malformed one).
        #[serde(default)]
        raw_lines: Vec<String>,
    },
    /// Move the clock.
    Advance { at: DateTime<Utc> },
}

impl Step {
    pub fn at(&self) -> DateTime<Utc> {
        match self {
            Step::Webhook { at, .. } | Step::Manifest { at, .. } | Step::Advance { at } => *at,
        }
    }
}

/// Parse a scenario: one JSON step per line.
pub fn parse_scenario(text: &str) -> anyhow::Result<Vec<Step>> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).with_context(|| format!("scenario line {}", i + 1)))
        .collect()
}

/// The JSONL body of a manifest step.
pub(crate) fn manifest_body(lines: &[Value], raw_lines: &[String]) -> String {
    let mut body = String::new();
    for line in lines {
        body.push_str(&line.to_string());
        body.push('\n');
    }
    for raw in raw_lines {
        body.push_str(raw);
        body.push('\n');
    }
    body
}

/// Sends to a safe-outcomes server.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    base: String,
    webhook_path: String,
    /// The webhook secret deliveries are signed with.
    secret: Option<crate::settings::Secret>,
    /// The bearer token of the read API and manifest posts.
    token: Option<crate::settings::Secret>,
}

/// A response: status and JSON body (or text wrapped as a string).
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub body: Value,
}

impl Client {
    pub fn new(base: &str, secret: Option<String>, token: Option<String>) -> Client {
        Client {
            http: reqwest::Client::new(),
            base: base.trim_end_matches('/').to_string(),
            webhook_path: "/api/github/webhooks".to_string(),
            secret: secret.map(Into::into),
            token: token.map(Into::into),
        }
    }

    pub(crate) fn with_webhook_path(mut self, path: &str) -> Client {
        self.webhook_path = path.to_string();
        self
    }

    async fn answer(resp: reqwest::Response) -> anyhow::Result<Answer> {
        let status = resp.status().as_u16();
        let is_json = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        let text = resp.text().await?;
        // Anything but a JSON answer (JSONL, text) stays a string.
        let body = match is_json {
            true => serde_json::from_str(&text).unwrap_or(Value::String(text)),
            false => Value::String(text),
        };
        Ok(Answer { status, body })
    }

    /// Send one delivery, signed like GitHub does.
    pub async fn deliver(
        &self,
        event: &str,
        delivery: &str,
        body: &[u8],
    ) -> anyhow::Result<Answer> {
        let mut req = self
            .http
            .post(format!("{}{}", self.base, self.webhook_path))
            .header("content-type", "application/json")
            .header("user-agent", "GitHub-Hookshot/safe-outcomes-replay")
            .header("x-github-event", event)
            .header("x-github-delivery", delivery)
            .body(body.to_vec());
        if let Some(secret) = &self.secret {
            req = req.header(
                "x-hub-signature-256",
                signature::sign(secret.expose_secret(), body),
            );
        }
        Self::answer(req.send().await?).await
    }

    /// Post a manifest body for one run.
    pub async fn post_manifest(
        &self,
        repo: &str,
        run_id: u64,
        workflow: Option<&str>,
        body: String,
    ) -> anyhow::Result<Answer> {
        let mut query = vec![("repo", repo.to_string()), ("run_id", run_id.to_string())];
        if let Some(w) = workflow {
            query.push(("workflow", w.to_string()));
        }
        let mut req = self
            .http
            .post(format!("{}/api/v1/manifests", self.base))
            .query(&query)
            .header("content-type", "application/x-ndjson")
            .body(body);
        if let Some(token) = &self.token {
            req = req.bearer_auth(token.expose_secret());
        }
        Self::answer(req.send().await?).await
    }

    /// GET a read-API path with the bearer token.
    pub async fn get(&self, path_and_query: &str) -> anyhow::Result<Answer> {
        let mut req = self.http.get(format!("{}{}", self.base, path_and_query));
        if let Some(token) = &self.token {
            req = req.bearer_auth(token.expose_secret());
        }
        Self::answer(req.send().await?).await
    }

    /// POST a JSON body to an API path with the bearer token.
    pub async fn post_json(&self, path: &str, body: &Value) -> anyhow::Result<Answer> {
        let mut req = self.http.post(format!("{}{}", self.base, path)).json(body);
        if let Some(token) = &self.token {
            req = req.bearer_auth(token.expose_secret());
        }
        Self::answer(req.send().await?).await
    }

    /// Send a scenario step (advance steps send nothing).
    pub async fn send_step(&self, step: &Step) -> anyhow::Result<Option<Answer>> {
        Ok(match step {
            Step::Webhook {
                event,
                delivery,
                payload,
                ..
            } => Some(
                self.deliver(event, delivery, payload.to_string().as_bytes())
                    .await?,
            ),
            Step::Manifest {
                repo,
                run_id,
                workflow,
                lines,
                raw_lines,
                ..
            } => Some(
                self.post_manifest(
                    repo,
                    *run_id,
                    workflow.as_deref(),
                    manifest_body(lines, raw_lines),
                )
                .await?,
            ),
            Step::Advance { .. } => None,
        })
    }
}

/// A recorded delivery file: `{event, delivery?, payload}`, or a bare payload
/// whose event is the name of its folder (`issues/opened.json`).
pub(crate) fn load_delivery(path: &Path) -> anyhow::Result<(String, String, Vec<u8>)> {
    let text = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let value: Value =
        serde_json::from_slice(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    // A delivery id must be GUID-like (`model::ident`): one derived from the
    // path, so replaying the same file again is a duplicate.
    let path_hash = sha2::Sha256::digest(path.display().to_string().as_bytes());
    let fallback_id = format!("replay-{}", &hex::encode(path_hash)[..32]);
    if let (Some(event), Some(payload)) = (
        value.get("event").and_then(Value::as_str),
        value.get("payload"),
    ) {
        let delivery = value
            .get("delivery")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or(fallback_id);
        return Ok((
            event.to_string(),
            delivery,
            payload.to_string().into_bytes(),
        ));
    }
    let event = path
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .context("cannot tell the event: put the file in a folder named after it")?;
    Ok((event.to_string(), fallback_id, text))
}

/// The files a replay path stands for: a file, or every `.json`/`.jsonl` below a folder.
pub fn replay_files(path: &Path) -> anyhow::Result<Vec<PathBuf>> {
    if path.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    if !path.is_dir() {
        bail!("{} is neither a file nor a folder", path.display());
    }
    let mut files = Vec::new();
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let p = entry?.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "json" || e == "jsonl") {
                files.push(p);
            }
        }
    }
    files.sort();
    Ok(files)
}
