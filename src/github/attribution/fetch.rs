//! Attribution's GitHub reads: two compares per landed output (the agent's
//! changes, and what landed), through `GitHubClient` (counted, retried).

use serde_json::Value;

use super::attribute::attribute;
use super::diff::compare_files;
use super::land::Landing;
use super::record::LineAttribution;
use crate::github::client::{Endpoint, GitHubClient};
use crate::github::error::GitHubError;

pub(crate) const COMPARE: Endpoint = Endpoint::idempotent("repos.compare");

/// `GET /repos/{repo}/compare/{base}...{head}`.
pub async fn compare(
    client: &GitHubClient,
    installation: u64,
    repo: &str,
    base: &str,
    head: &str,
) -> Result<Value, GitHubError> {
    let route = format!("/repos/{repo}/compare/{base}...{head}");
    client
        .call(installation, COMPARE, |crab| {
            let route = route.clone();
            async move { crab.get::<Value, _, _>(route, None::<&()>).await }
        })
        .await
}

/// Attribute one landed output: two API calls.
pub(crate) async fn attribute_landing(
    client: &GitHubClient,
    installation: u64,
    landing: &Landing,
    max_files: usize,
) -> Result<LineAttribution, GitHubError> {
    let repo = &landing.repo;
    let agent = compare(
        client,
        installation,
        repo,
        &landing.agent_base,
        &landing.agent_head,
    )
    .await?;
    let landed = compare(client, installation, repo, &landing.before, &landing.after).await?;
    let (agent_files, agent_cut) = compare_files(&agent);
    let (landed_files, landed_cut) = compare_files(&landed);
    let m = attribute(
        &agent_files,
        &landed_files,
        max_files,
        agent_cut || landed_cut,
    );
    Ok(LineAttribution {
        output_id: landing.output_id.clone(),
        repo: repo.clone(),
        branch: landing.branch.clone(),
        landed_commit: landing.after.clone(),
        landed_at: landing.landed_at,
        files: m.files,
        unattributed_files: m.unattributed,
        unknown_reason: m.unknown_reason,
        survival: Default::default(),
    })
}

pub(crate) const CONTENTS: Endpoint = Endpoint::idempotent("repos.contents");

/// A path with everything but unreserved characters and `/` escaped.
fn escape_path(path: &str) -> String {
    let mut out = String::new();
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// A file's text at `sha`: `Ok(None)` when it is not there (404), `Err` with
/// a reason when it cannot be read as text (over 1 MB, binary).
pub(crate) async fn file_at(
    client: &GitHubClient,
    installation: u64,
    repo: &str,
    path: &str,
    sha: &str,
) -> Result<Result<Option<String>, String>, GitHubError> {
    use base64::Engine;
    let route = format!("/repos/{repo}/contents/{}?ref={sha}", escape_path(path));
    let answer = client
        .call(installation, CONTENTS, |crab| {
            let route = route.clone();
            async move { crab.get::<Value, _, _>(route, None::<&()>).await }
        })
        .await;
    let value = match answer {
        Ok(v) => v,
        Err(GitHubError::NotFound { .. }) => return Ok(Ok(None)),
        Err(e) => return Err(e),
    };
    if value["encoding"] != "base64" {
        return Ok(Err(format!(
            "{path} is not readable as text (over 1 MB or not a file)"
        )));
    }
    let packed: String = value["content"]
        .as_str()
        .unwrap_or_default()
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(packed)
        .map_err(|e| GitHubError::Decode {
            endpoint: CONTENTS.label,
            message: format!("contents of {path}: bad base64: {e}"),
        });
    Ok(String::from_utf8(bytes?)
        .map(Some)
        .map_err(|_| format!("{path} is not UTF-8 text")))
}
