//! Attribution's GitHub reads: two compares per landed output (the agent's
//! changes, and what landed), through `GitHubClient` (counted, retried).

use serde_json::Value;

use super::attribute::attribute;
use super::diff::compare_files;
use super::land::Landing;
use super::record::LineAttribution;
use crate::github::client::{Endpoint, GitHubClient};
use crate::github::error::GitHubError;

pub const COMPARE: Endpoint = Endpoint::idempotent("repos.compare");

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
pub async fn attribute_landing(
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
