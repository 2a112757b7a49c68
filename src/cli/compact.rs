//! `safe-outcomes compact`: rewrite a stopped server's store. It never
//! grows the store: a copy that came out larger is dropped, and the line
//! printed says so and why.

use anyhow::Context;

/// Rewrite the live records into a fresh store and say how much it saved.
pub fn compact(data_dir: &std::path::Path) -> anyhow::Result<()> {
    let done = crate::store::compact::compact(&crate::app::store_path(data_dir))
        .with_context(|| format!("compacting the store in {}", data_dir.display()))?;
    super::exit::emit_line(said(&data_dir.display().to_string(), &done))?;
    Ok(())
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / 1048576.0
}

/// The line `compact` prints for what it did.
fn said(dir: &str, done: &crate::store::compact::Compacted) -> String {
    let (before, after) = (mib(done.bytes_before), mib(done.bytes_after));
    if done.swapped {
        format!(
            "compacted {dir}: {} records, {before:.1} MiB → {after:.1} MiB",
            done.records
        )
    } else {
        format!(
            "left {dir} as it was: {} records take {before:.1} MiB, a fresh copy took \
             {after:.1} MiB (the store is already compact; sled's fresh log is larger)",
            done.records
        )
    }
}
