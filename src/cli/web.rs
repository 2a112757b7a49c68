//! `--web`, as `gh … --web` has it: the reading commands open the page of
//! the dashboard that shows what they would print — `outputs` the list
//! under the same cuts (`/outputs?status=rejected&…`), `outputs view ID`
//! the output's page, `report` the overview (`report --weekly`: the
//! workflows page, each workflow's weeks) — on the server named by
//! `--server URL`, whose dashboard it is (a store has no web page: without
//! `--server` it is a usage error).
//!
//! On a terminal with a browser it opens the page and says so on stderr;
//! else it prints the address on stdout, so `… --web | xargs firefox` and
//! scripts get it. The browser is `$BROWSER` (a command; `%s` in it stands
//! for the address, else the address is its last argument), or else the
//! desktop's opener (`xdg-open`, `open` on macOS) when one is on `PATH`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::exit::{emit, fail, Exit};
use super::source::SourceArgs;
use crate::settings;

/// The dashboard address of `path` (with `query`) on `--server`; a usage
/// error without one.
pub(crate) fn page_url(
    source: &SourceArgs,
    path: &str,
    query: &[(&str, String)],
) -> anyhow::Result<String> {
    let Some(server) = &source.server else {
        return Err(fail(
            Exit::Usage,
            "--web opens the dashboard of a running server: name it with --server URL \
             (or SAFE_OUTCOMES_URL); a store (--data-dir) has no web page",
        ));
    };
    let mut url = format!("{}{path}", server.trim_end_matches('/'));
    if !query.is_empty() {
        url.push('?');
        url.push_str(&serde_urlencoded::to_string(query)?);
    }
    Ok(url)
}

/// Open `url` in the browser when stdout is a terminal and there is one;
/// else print it.
pub fn open(url: &str) -> anyhow::Result<()> {
    let browser = match super::exit::for_terminal() {
        true => browser(),
        false => None,
    };
    let Some(command) = browser else {
        return emit(&format!("{url}\n"));
    };
    eprintln!("Opening {url} in your browser.");
    launch(&command, url)
}

/// The browser command: `$BROWSER` split into words, or the desktop's
/// opener found on `PATH`; `None` when there is none.
fn browser() -> Option<Vec<String>> {
    if let Some(b) = settings::read_os(&settings::BROWSER).filter(|b| !b.is_empty()) {
        let words: Vec<String> = b
            .to_string_lossy()
            .split_whitespace()
            .map(str::to_string)
            .collect();
        return (!words.is_empty()).then_some(words);
    }
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    on_path(opener).map(|p| vec![p.display().to_string()])
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&settings::read_os(&settings::PATH)?)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// Run the browser on `url`. A launcher (xdg-open, a script) exits soon and
/// its failure is reported; a browser that stays up is left running.
fn launch(command: &[String], url: &str) -> anyhow::Result<()> {
    let mut args: Vec<String> = command[1..].to_vec();
    if args.iter().any(|a| a.contains("%s")) {
        args = args.iter().map(|a| a.replace("%s", url)).collect();
    } else {
        args.push(url.to_string());
    }
    let mut child = std::process::Command::new(&command[0])
        .args(&args)
        .stdin(std::process::Stdio::null())
        .spawn()
        .map_err(|e| {
            fail(
                Exit::Failure,
                format!(
                    "cannot start the browser {:?} ({e}); the page: {url}",
                    command[0]
                ),
            )
        })?;
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(5) {
        if let Some(status) = child.try_wait()? {
            if !status.success() {
                return Err(fail(
                    Exit::Failure,
                    format!(
                        "the browser {:?} failed ({status}); the page: {url}",
                        command[0]
                    ),
                ));
            }
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}
