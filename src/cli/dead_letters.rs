//! `safe-outcomes dead-letters list|replay`: on a stopped server's sled
//! store, or on PostgreSQL (`--database-url`), where replicas may be
//! running: a replayed letter gets a new number from the inbox sequence and
//! is claimed by whichever replica's worker comes first.

use std::path::PathBuf;

use anyhow::bail;
use clap::{Args, Subcommand};

use crate::store::Store;

#[derive(Args, Debug)]
pub struct DeadLettersArgs {
    #[command(subcommand)]
    pub action: DeadLetterAction,
    /// The store's folder (the server must be stopped).
    #[arg(long, env = crate::settings::DATA_DIR.name, default_value = "./data", global = true)]
    pub data_dir: PathBuf,
    /// The store on PostgreSQL (instead of sled under --data-dir).
    #[arg(long, env = crate::settings::DATABASE_URL.name, hide_env_values = true, global = true)]
    pub database_url: Option<crate::settings::Secret>,
}

#[derive(Subcommand, Debug)]
pub enum DeadLetterAction {
    /// One line per dead letter: id (inbox sequence), time, attempts, item, error.
    List,
    /// Move dead letters back to the tail of the inbox; the next start processes them.
    Replay {
        /// The dead letter's id (its inbox sequence, from `list`).
        #[arg(long, required_unless_present = "all", conflicts_with = "all")]
        id: Option<u64>,
        /// Every dead letter.
        #[arg(long)]
        all: bool,
    },
}

/// `dead-letters list|replay`: on sled on a stopped server's store only
/// (sled's lock refuses a second opener; the inbox writer keeps its
/// sequence in memory); on PostgreSQL at any time.
pub fn dead_letters(args: &DeadLettersArgs) -> anyhow::Result<()> {
    use crate::store::dead_letters::Replay;
    let path = crate::app::store_path(&args.data_dir);
    let store = match &args.database_url {
        Some(url) => Store::on_pg(crate::store::pg::Pg::connect(url.expose_secret())?, &path),
        None => {
            if !path.join("conf").is_file() {
                bail!(
                    "no store at {} (set --data-dir or DATA_DIR, or --database-url)",
                    path.display()
                );
            }
            Store::open(&path).map_err(|e| {
                anyhow::anyhow!(
                    "{e} — stop the server using {} first",
                    args.data_dir.display()
                )
            })?
        }
    };
    match &args.action {
        DeadLetterAction::List => {
            let letters = store.dead_letters()?;
            for l in &letters {
                super::exit::emit_line(format!(
                    "{}\t{}\t{} attempt(s)\t{}\t{}",
                    l.seq,
                    l.failed_at.to_rfc3339(),
                    l.attempts,
                    l.summary(),
                    l.error
                ))?;
            }
            super::exit::emit_line(format!("{} dead letter(s)", letters.len()))?;
        }
        DeadLetterAction::Replay { id, all } => {
            let which = match (id, all) {
                (Some(id), false) => Replay::One(*id),
                _ => Replay::All,
            };
            let queued = store.replay_dead_letters(which)?;
            super::exit::emit_line(format!(
                "{} dead letter(s) moved back to the inbox; the next start processes them",
                queued.len()
            ))?;
        }
    }
    Ok(())
}
