//! `safe-outcomes replay`: recorded deliveries (files, a folder, or a
//! scenario .jsonl) sent, signed, to a running server.

use std::path::{Path, PathBuf};

use anyhow::bail;
use clap::Args;

use crate::ingest::client::{load_delivery, parse_scenario, replay_files, Answer, Client};

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

/// Files between progress lines on stderr (folders of thousands of deliveries).
const PROGRESS_EVERY: usize = 500;

/// What a replay did, for the closing line.
#[derive(Debug, Default)]
struct Tally {
    sent: usize,
    refused: usize,
    /// Files that could not be read, parsed or sent, with why.
    unsent: Vec<String>,
}

pub async fn replay(args: ReplayArgs) -> anyhow::Result<()> {
    let client = Client::new(&args.to, args.secret.clone(), args.token.clone())
        .with_webhook_path(&args.webhook_path);
    if args.secret.is_none() {
        eprintln!("warning: no --secret / WEBHOOK_SECRET: deliveries go unsigned and a server will refuse them");
    }
    let files = replay_files(&args.path)?;
    let mut tally = Tally::default();
    for (i, file) in files.iter().enumerate() {
        match send_file(&client, file).await {
            Ok(answers) => {
                for a in answers {
                    tally.sent += 1;
                    if a.status >= 300 {
                        tally.refused += 1;
                        eprintln!("{}: {} {}", file.display(), a.status, a.body);
                    }
                }
            }
            Err(e) => {
                eprintln!("could not send {}: {e:#}", file.display());
                tally.unsent.push(file.display().to_string());
            }
        }
        if (i + 1) % PROGRESS_EVERY == 0 && i + 1 < files.len() {
            eprintln!("{} of {} files…", i + 1, files.len());
        }
    }
    let Tally {
        sent,
        refused,
        unsent,
    } = tally;
    println!(
        "sent {sent}, refused {refused}, could not send {} file(s)",
        unsent.len()
    );
    if refused > 0 || !unsent.is_empty() {
        bail!(
            "{refused} of {sent} were refused; {} file(s) could not be sent",
            unsent.len()
        );
    }
    Ok(())
}

/// One delivery file, or every step of a scenario `.jsonl`.
async fn send_file(client: &Client, file: &Path) -> anyhow::Result<Vec<Answer>> {
    if file.extension().is_some_and(|e| e == "jsonl") {
        let steps = parse_scenario(&std::fs::read_to_string(file)?)?;
        let mut answers = Vec::new();
        for step in &steps {
            answers.extend(client.send_step(step).await?);
        }
        return Ok(answers);
    }
    let (event, delivery, body) = load_delivery(file)?;
    Ok(vec![client.deliver(&event, &delivery, &body).await?])
}
