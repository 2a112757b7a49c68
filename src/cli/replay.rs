//! `safe-outcomes replay`: recorded deliveries (files, a folder, or a
//! scenario .jsonl) sent, signed, to a running server (`--server URL`, also
//! spelled `--to`), with a progress bar on a terminal. Exit 3 when any was
//! refused or could not be sent (`cli::exit`).

use std::path::{Path, PathBuf};

use clap::Args;
use indicatif::ProgressBar;

use super::exit::{emit_line, fail, Exit};
use super::progress::{bar, note};
use super::ServerArgs;
use crate::ingest::client::{load_delivery, parse_scenario, replay_files, Answer, Client};

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// A delivery file, a folder of them, or a scenario .jsonl.
    pub path: PathBuf,
    #[command(flatten)]
    pub server: ServerArgs,
    /// The webhook secret to sign the deliveries with.
    #[arg(long, env = crate::settings::WEBHOOK_SECRET.name, hide_env_values = true)]
    pub secret: Option<crate::settings::Secret>,
    /// The server's webhook route.
    #[arg(long, env = crate::settings::WEBHOOK_PATH.name, default_value = "/api/github/webhooks")]
    pub webhook_path: String,
}

/// Files between plain progress lines when no bar is drawn.
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
    let client = Client::new(
        &args.server.url,
        args.secret.as_ref().map(|s| s.expose_secret().to_string()),
        args.server.token_value(),
    )
    .with_webhook_path(&args.webhook_path);
    if args.secret.is_none() {
        eprintln!("warning: no --secret / WEBHOOK_SECRET: deliveries go unsigned and a server will refuse them");
    }
    let files = replay_files(&args.path)?;
    let progress = bar(files.len() as u64, "replaying");
    let mut tally = Tally::default();
    for (i, file) in files.iter().enumerate() {
        match send_file(&client, file, &progress).await {
            Ok(answers) => {
                for a in answers {
                    tally.sent += 1;
                    if a.status >= 300 {
                        tally.refused += 1;
                        note(
                            &progress,
                            &format!("{}: {} {}", file.display(), a.status, a.body),
                        );
                    }
                }
            }
            Err(e) => {
                note(
                    &progress,
                    &format!("could not send {}: {e:#}", file.display()),
                );
                tally.unsent.push(file.display().to_string());
            }
        }
        progress.inc(1);
        if progress.is_hidden() && (i + 1) % PROGRESS_EVERY == 0 && i + 1 < files.len() {
            eprintln!("{} of {} files…", i + 1, files.len());
        }
    }
    progress.finish_and_clear();
    let Tally {
        sent,
        refused,
        unsent,
    } = tally;
    // The exit code says what was refused, whether or not stdout is read.
    let printed = emit_line(format!(
        "sent {sent}, refused {refused}, could not send {} file(s)",
        unsent.len()
    ));
    if refused > 0 || !unsent.is_empty() {
        return Err(fail(
            Exit::Rejected,
            format!(
                "{refused} of {sent} were refused; {} file(s) could not be sent",
                unsent.len()
            ),
        ));
    }
    printed
}

/// One delivery file, or every step of a scenario `.jsonl` (the bar grows
/// by its steps).
async fn send_file(
    client: &Client,
    file: &Path,
    progress: &ProgressBar,
) -> anyhow::Result<Vec<Answer>> {
    if file.extension().is_some_and(|e| e == "jsonl") {
        let steps = parse_scenario(&std::fs::read_to_string(file)?)?;
        progress.inc_length(steps.len().saturating_sub(1) as u64);
        let mut answers = Vec::new();
        for step in &steps {
            answers.extend(client.send_step(step).await?);
            progress.inc(1);
        }
        progress.set_position(progress.position().saturating_sub(1));
        return Ok(answers);
    }
    let (event, delivery, body) = load_delivery(file)?;
    Ok(vec![client.deliver(&event, &delivery, &body).await?])
}
