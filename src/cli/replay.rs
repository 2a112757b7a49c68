//! `safe-outcomes replay`: recorded deliveries (files, a folder, or a
//! scenario .jsonl) sent, signed, to a running server.

use std::path::PathBuf;

use anyhow::bail;
use clap::Args;

use crate::client::{load_delivery, parse_scenario, replay_files, Client};

#[derive(Args, Debug)]
pub struct ReplayArgs {
    pub path: PathBuf,
    /// Base URL of the server, e.g. http://127.0.0.1:3000
    #[arg(long)]
    pub to: String,
    #[arg(long, env = "WEBHOOK_SECRET", hide_env_values = true)]
    pub secret: Option<String>,
    /// Bearer token, for the manifest steps of a scenario.
    #[arg(long, env = "API_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    #[arg(long, env = "WEBHOOK_PATH", default_value = "/api/github/webhooks")]
    pub webhook_path: String,
}

pub async fn replay(args: ReplayArgs) -> anyhow::Result<()> {
    let client = Client::new(&args.to, args.secret.clone(), args.token.clone())
        .with_webhook_path(&args.webhook_path);
    if args.secret.is_none() {
        eprintln!("warning: no --secret / WEBHOOK_SECRET: deliveries go unsigned and a server will refuse them");
    }
    let (mut sent, mut refused) = (0, 0);
    for file in replay_files(&args.path)? {
        let answers = if file.extension().is_some_and(|e| e == "jsonl") {
            let steps = parse_scenario(&std::fs::read_to_string(&file)?)?;
            let mut answers = Vec::new();
            for step in &steps {
                answers.extend(client.send_step(step).await?);
            }
            answers
        } else {
            let (event, delivery, body) = load_delivery(&file)?;
            vec![client.deliver(&event, &delivery, &body).await?]
        };
        for a in answers {
            sent += 1;
            if a.status >= 300 {
                refused += 1;
                eprintln!("{}: {} {}", file.display(), a.status, a.body);
            }
        }
    }
    println!("sent {sent}, refused {refused}");
    if refused > 0 {
        bail!("{refused} of {sent} were refused");
    }
    Ok(())
}
