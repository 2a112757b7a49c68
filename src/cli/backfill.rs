//! `safe-outcomes backfill`: ask a running server to backfill gh-aw runs.

use anyhow::bail;
use clap::Args;

use super::ServerArgs;
use crate::ingest::client::Client;

#[derive(Args, Debug)]
pub struct BackfillArgs {
    /// Days of history.
    #[arg(long, default_value_t = 30)]
    pub days: u32,
    /// Only this repository (owner/name); default: every repository of the
    /// active installations.
    #[arg(long)]
    pub repo: Option<String>,
    #[command(flatten)]
    pub server: ServerArgs,
}

/// Ask the running server to backfill: the server holds the store (and the
/// App's credentials, token cache and rate-limit budget), so the command
/// does not open the store itself.
pub async fn request_backfill(args: BackfillArgs) -> anyhow::Result<()> {
    let client = Client::new(&args.server.to, None, args.server.token.clone());
    let mut body = serde_json::json!({ "days": args.days });
    if let Some(repo) = &args.repo {
        body["repo"] = serde_json::json!(repo);
    }
    let answer = client.post_json("/api/v1/backfill", &body).await?;
    println!("{}", serde_json::to_string_pretty(&answer.body)?);
    if answer.status >= 300 {
        bail!("the server answered {}", answer.status);
    }
    Ok(())
}
