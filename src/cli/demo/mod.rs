//! `safe-outcomes demo`: the bundled scenario through an in-process server,
//! then the report on the terminal. With `--serve`, the server stays up on
//! 127.0.0.1 for the dashboard, and a local sign-in link is printed.
//!
//! The commands it suggests work as printed (`suggestions`): on a store that
//! outlives the demo (`--keep`, `--data-dir`) they read the store; with
//! `--serve` (the store is the server's while it runs) they ask the server,
//! with the API token printed beside them; on a temporary folder about to
//! be removed, the suggestion is the demo with `--keep`.

pub mod run;

use std::path::PathBuf;

use std::fmt::Write;

use anyhow::Context;
use clap::Args;

use crate::app::temp::TempFolder;
use run::DemoOptions;

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Where to keep the demo's store and JSONL (default: a new temporary
    /// folder, removed when the demo ends — on errors and Ctrl-C too).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Keep the temporary folder (store and JSONL) after the demo ends.
    #[arg(long, conflicts_with = "data_dir")]
    pub keep: bool,
    /// Replay another scenario file instead of the bundled one.
    #[arg(long)]
    pub scenario: Option<PathBuf>,
    /// Keep the server running afterwards and print a sign-in link to the
    /// dashboard (Ctrl-C stops it).
    #[arg(long)]
    pub serve: bool,
    /// The port of `--serve` on 127.0.0.1 (0: any free one).
    #[arg(long, default_value_t = 3000, requires = "serve")]
    pub port: u16,
}

pub(crate) async fn run_demo(args: DemoArgs) -> anyhow::Result<()> {
    // A temporary folder unless the user named one: removed on every exit
    // path (`app::temp`), unless `--keep`.
    let temp = match &args.data_dir {
        Some(_) => None,
        None => Some(TempFolder::new("safe-outcomes-demo-").context("a temporary folder")?),
    };
    let data_dir = match (&args.data_dir, &temp) {
        (Some(d), _) => d.clone(),
        (None, Some(t)) => t.path().to_path_buf(),
        (None, None) => unreachable!("a temporary folder is made when none is named"),
    };
    let scenario = match &args.scenario {
        Some(p) => {
            Some(std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?)
        }
        None => None,
    };
    let started = std::time::Instant::now();
    let options = DemoOptions { data_dir, scenario };
    let (result, live) = match args.serve {
        true => {
            let (result, live) = run::run_and_serve(options, args.port).await?;
            (result, Some(live))
        }
        false => (run::run(options).await?, None),
    };
    let mut out = String::new();
    writeln!(
        out,
        "Replayed {} steps (signed webhook deliveries and gh-aw manifests) through the real HTTP path in {:.1}s.\n",
        result.steps,
        started.elapsed().as_secs_f64()
    )?;
    for answer in &result.manifest_answers {
        if let Some(rejected) = answer
            .get("rejected")
            .and_then(|r| r.as_array())
            .filter(|r| !r.is_empty())
        {
            for r in rejected {
                writeln!(
                    out,
                    "manifest line {} skipped{}: {}",
                    r["line"],
                    match args.scenario {
                        None => " (the bundled scenario carries this bad line on purpose, to show a rejection)",
                        Some(_) => "",
                    },
                    r["error"].as_str().unwrap_or("")
                )?;
            }
        }
    }
    for r in &result.refusals {
        writeln!(out, "step {} refused with {}: {}", r.step, r.status, r.body)?;
    }
    writeln!(out, "\n{}", result.report.to_table())?;
    writeln!(out, "{}", run::outcome_table(&result.outcomes))?;
    writeln!(
        out,
        "Outcome records (JSONL): {}",
        result.jsonl_path.display()
    )?;
    writeln!(
        out,
        "opentraces records: {}",
        result.opentraces_path.display()
    )?;
    let kept = args.data_dir.is_some() || args.keep;
    writeln!(out, "Store: {}", result.data_dir.display())?;
    let server = live.as_ref().map(|l| (l.url(), l.api_token().to_string()));
    out.push_str(&suggestions(
        &result.data_dir.display().to_string(),
        kept,
        server.as_ref().map(|(u, t)| (u.as_str(), t.as_str())),
    ));
    let temp = match (temp, args.keep) {
        (Some(t), true) => {
            t.keep();
            None
        }
        (t, _) => t,
    };
    if temp.is_some() {
        writeln!(
            out,
            "(a temporary folder, removed when the demo ends: --keep or --data-dir DIR keeps it)"
        )?;
    }
    super::emit(&out)?;
    if let Some(live) = live {
        serve_until_stopped(live).await?;
    }
    drop(temp);
    Ok(())
}

/// The commands to try next, each runnable as printed: on the server while
/// it runs (`server`: its URL and API token), else on the store when it
/// is kept, else the demo again with `--keep`.
pub(crate) fn suggestions(data_dir: &str, kept: bool, server: Option<(&str, &str)>) -> String {
    let quoted = shell_word(data_dir);
    match server {
        Some((url, token)) => {
            let mut s = format!(
                "API token (good while the demo runs): {token}\n\
                 try: safe-outcomes outputs --server {url} --token {token}\n\
                 try: safe-outcomes report --server {url} --token {token} --window 7d\n"
            );
            if kept {
                s.push_str(&format!(
                    "(after Ctrl-C: safe-outcomes report --data-dir {quoted} --window 7d)\n"
                ));
            }
            s
        }
        None if kept => format!(
            "try: safe-outcomes outputs --data-dir {quoted}\n\
             try: safe-outcomes report --data-dir {quoted} --window 7d\n"
        ),
        None => "try: safe-outcomes demo --keep   (keeps the store, then suggests the commands that read it)\n"
            .to_string(),
    }
}

/// `word` as one shell word: quoted when it holds anything but safe characters.
fn shell_word(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:=@%,".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Print the dashboard's sign-in link, serve until Ctrl-C (or SIGTERM), stop.
async fn serve_until_stopped(live: run::LiveDemo) -> anyhow::Result<()> {
    let stop = crate::cli::stop::StopSignals::install();
    let url = live.sign_in_url().unwrap_or_default();
    super::emit(&format!(
        "\nDashboard: {url}\n(the link signs this browser in while the demo runs; Ctrl-C stops it)\n"
    ))?;
    stop.wait().await;
    live.stop().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_fit_what_is_left_when_they_are_read() {
        let gone = suggestions("/tmp/x", false, None);
        assert!(!gone.contains("/tmp/x"), "{gone}");
        assert!(gone.contains("safe-outcomes demo --keep"), "{gone}");
        let kept = suggestions("/tmp/my demo", true, None);
        assert!(
            kept.contains("safe-outcomes report --data-dir '/tmp/my demo' --window 7d"),
            "{kept}"
        );
        let live = suggestions("/tmp/x", false, Some(("http://127.0.0.1:9", "tok")));
        assert!(
            live.contains("API token (good while the demo runs): tok"),
            "{live}"
        );
        assert!(
            live.contains("safe-outcomes outputs --server http://127.0.0.1:9 --token tok"),
            "{live}"
        );
        assert!(
            !live.contains("--data-dir") && !live.contains("--from"),
            "{live}"
        );
    }
}
