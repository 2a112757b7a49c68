//! `safe-outcomes migrate --from DATA_DIR --to DATABASE_URL`: move a stopped
//! sled store's state into PostgreSQL (`store::migrate`): idempotent and
//! resumable, so a run that stopped can simply be run again.

use std::path::Path;

use anyhow::Context;

use crate::store::{self, pg, Store};

/// Copy the store under `data_dir` into the database at `url` and say what moved.
pub fn migrate(data_dir: &Path, url: &str) -> anyhow::Result<()> {
    let path = store::path_in(data_dir);
    if !path.join("conf").is_file() {
        anyhow::bail!("no sled store at {} (set --from)", path.display());
    }
    let source = Store::open_sled_waiting(&path, store::STORE_LOCK_WAIT)
        .with_context(|| format!("opening {} (is a server running on it?)", path.display()))?;
    let target = Store::on_pg(pg::Pg::connect(url).context("connecting to --to")?, &path);
    let name = path
        .canonicalize()
        .unwrap_or(path.clone())
        .display()
        .to_string();
    let done = store::migrate::migrate(&source, &target, &name).context("migrating")?;
    super::exit::emit_line(format!(
        "migrated {}: {} keys copied{} ({} counters), {} attribution records; inbox sequence at {}",
        path.display(),
        done.copied,
        if done.resumed_after > 0 {
            format!(" after {} copied by an earlier run", done.resumed_after)
        } else {
            String::new()
        },
        done.counters,
        done.attribution,
        done.inbox_seq
    ))?;
    Ok(())
}
