//! `safe-outcomes record`: post a gh-aw safe-output-items.jsonl to a server,
//! with an API token or, inside GitHub Actions, an OIDC token. Prints the
//! server's answer (JSON); exit 3 when lines were rejected (the others are
//! stored), and the exit code of the server's refusal otherwise
//! (`cli::exit`).

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use super::exit::{emit_line, fail, Exit};
use super::source::{parse_repo, refused};
use super::ServerArgs;
use crate::ingest::client::Client;
use crate::ingest::oidc::request_actions_token;

#[derive(Args, Debug)]
pub struct RecordArgs {
    /// The manifest: gh-aw's safe-output-items.jsonl.
    #[arg(long, value_name = "FILE")]
    pub manifest: PathBuf,
    /// The repository the run belongs to (lines naming their own repo keep it).
    #[arg(short = 'R', long, env = crate::settings::GITHUB_REPOSITORY.name, value_name = "OWNER/NAME", value_parser = parse_repo)]
    pub repo: String,
    /// The workflow run's id.
    #[arg(long, env = crate::settings::GITHUB_RUN_ID.name)]
    pub run_id: u64,
    /// The workflow's name.
    #[arg(long, value_name = "NAME")]
    pub workflow: Option<String>,
    #[command(flatten)]
    pub server: ServerArgs,
    /// Without a token, inside GitHub Actions: request an OIDC token for this
    /// audience (the server's OIDC_AUDIENCE) and post with it.
    #[arg(long, env = crate::settings::SAFE_OUTCOMES_AUDIENCE.name)]
    pub audience: Option<String>,
}

pub async fn record(args: RecordArgs) -> anyhow::Result<()> {
    let body = std::fs::read_to_string(&args.manifest)
        .with_context(|| format!("reading {}", args.manifest.display()))?;
    let client = Client::new(&args.server.url, None, record_token(&args).await?);
    let answer = client
        .post_manifest(&args.repo, args.run_id, args.workflow.as_deref(), body)
        .await
        .with_context(|| format!("posting to {}", args.server.url))?;
    // The exit code says what the server did, whether or not stdout is read.
    let printed = emit_line(serde_json::to_string_pretty(&answer.body)?);
    if answer.status >= 300 {
        return Err(refused(&args.server.url, answer.status, &answer.body));
    }
    let rejected = answer.body["rejected_total"].as_u64().unwrap_or(0);
    if rejected > 0 {
        let accepted = answer.body["accepted"].as_u64().unwrap_or(0);
        return Err(fail(
            Exit::Rejected,
            format!("{rejected} manifest line(s) rejected ({accepted} recorded); see \"rejected\" above"),
        ));
    }
    printed
}

/// `--token`/API_TOKEN when given; else, inside GitHub Actions, an OIDC
/// token for `--audience` from the Actions runtime.
pub(crate) async fn record_token(args: &RecordArgs) -> anyhow::Result<Option<String>> {
    if let Some(token) = args.server.token.as_ref().filter(|t| !t.is_empty()) {
        return Ok(Some(token.expose_secret().to_string()));
    }
    use crate::settings::{read, ACTIONS_ID_TOKEN_REQUEST_TOKEN, ACTIONS_ID_TOKEN_REQUEST_URL};
    let env = |s| read(s).filter(|v: &String| !v.is_empty());
    let (Some(url), Some(request_token)) = (
        env(&ACTIONS_ID_TOKEN_REQUEST_URL),
        env(&ACTIONS_ID_TOKEN_REQUEST_TOKEN),
    ) else {
        eprintln!("warning: no --token / API_TOKEN and no GitHub Actions OIDC environment (permissions: id-token: write): posting without a token");
        return Ok(None);
    };
    let audience = args.audience.as_deref().context(
        "to use GitHub Actions OIDC, pass --audience (or SAFE_OUTCOMES_AUDIENCE): the server's OIDC_AUDIENCE",
    )?;
    Ok(Some(
        request_actions_token(&url, &request_token, audience).await?,
    ))
}
