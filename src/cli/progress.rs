//! Progress bars on long work (`replay`, `backfill --watch`), drawn on
//! stderr with `indicatif` only when stderr is a terminal: piped or in CI,
//! nothing is drawn and the commands print their plain lines instead.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A bar of `len` steps named `what`, on stderr when it is a terminal.
pub(crate) fn bar(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template(
        "{prefix:>12} [{bar:32}] {pos}/{len} {msg} ({elapsed}, {eta} left)",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ");
    bar.set_style(style);
    bar.set_prefix(what.to_string());
    bar
}

/// A line for the person at the terminal, printed above the bar (or plainly
/// when no bar is drawn).
pub fn note(bar: &ProgressBar, line: &str) {
    if bar.is_hidden() {
        eprintln!("{line}");
    } else {
        bar.println(line);
    }
}
