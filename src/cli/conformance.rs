//! `safe-outcomes conformance FILE`: gh-aw-format cases through the
//! API-state evaluation path.

use anyhow::{bail, Context};

/// One line per case, then `N passed, N failed`; an error (exit 1) on any failure.
pub fn conformance(file: &std::path::Path) -> anyhow::Result<()> {
    let json =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let results = crate::judge::conformance::run_cases(&json).map_err(anyhow::Error::msg)?;
    let mut text = String::new();
    for r in &results {
        text.push_str(&format!("{}\n", r.line));
    }
    text.push_str(&format!(
        "{}\n",
        crate::judge::conformance::summary(&results)
    ));
    // The exit code says what failed, whether or not stdout is read.
    let printed = super::exit::emit(&text);
    let failed = results.iter().filter(|r| !r.passed).count();
    if failed > 0 {
        bail!("{failed} conformance case(s) failed");
    }
    printed
}
