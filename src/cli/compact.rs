//! `safe-outcomes compact`: rewrite a stopped server's store.

use anyhow::Context;

/// Rewrite the live records into a fresh store and say how much it saved.
pub fn compact(data_dir: &std::path::Path) -> anyhow::Result<()> {
    let done = crate::store::compact::compact(&crate::app::store_path(data_dir))
        .with_context(|| format!("compacting the store in {}", data_dir.display()))?;
    super::exit::emit_line(format!(
        "compacted {}: {} records, {:.1} MiB → {:.1} MiB",
        data_dir.display(),
        done.records,
        done.bytes_before as f64 / 1048576.0,
        done.bytes_after as f64 / 1048576.0
    ))?;
    Ok(())
}
