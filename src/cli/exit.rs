//! Exit codes that mean something, and a quiet end on a closed pipe.
//!
//! | code | meaning |
//! |---|---|
//! | 0 | done (also when the reader of stdout went away: `report … \| head`) |
//! | 1 | an error (the message says which) |
//! | 2 | a usage error: a bad flag or value (clap's own code) |
//! | 3 | input refused: manifest lines rejected, deliveries refused or unsent |
//! | 4 | not found: an unknown repository, output or run |
//! | 5 | not allowed: the server refused the token (401/403) |
//! | 6 | store refused: a PostgreSQL migration is unfinished (run `migrate` again) |
//! | 7 | store refused: written by a newer version (its format or schema) |
//! | 8 | store refused: a store file is corrupt (restore it; the message names it) |
//!
//! Codes 6 to 8 come from `store::open_checks::Refusal` anywhere in the
//! error's chain: a service manager can stop restarting on them
//! (systemd: `RestartPreventExitStatus=6 7 8`).
//! A command returns `fail(Exit::…, message)` for the codes above 1; any
//! other error is 1. Output goes through `emit`/`Out`, whose write errors are
//! returned, so a closed stdout ends the command early and quietly
//! (`is_broken_pipe`), never in a panic; `quiet_on_closed_pipe` also catches
//! a `print!` anywhere else (the benches) that meets one.

use std::fmt;
use std::io::Write;

use crate::store::open_checks::Refusal;

/// What an exit code says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Failure = 1,
    Usage = 2,
    Rejected = 3,
    NotFound = 4,
    Unauthorized = 5,
    UnfinishedMigration = 6,
    NewerStore = 7,
    CorruptStore = 8,
}

/// An error that ends the command with its own exit code.
#[derive(Debug)]
pub(crate) struct CliError {
    pub code: Exit,
    pub message: String,
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {}

/// An error ending the command with `code`.
pub fn fail(code: Exit, message: impl Into<String>) -> anyhow::Error {
    CliError {
        code,
        message: message.into(),
    }
    .into()
}

/// The exit code for `e`: its `CliError`'s, else its store refusal's, else 1.
pub fn exit_code(e: &anyhow::Error) -> i32 {
    let code = e.chain().find_map(|c| {
        c.downcast_ref::<CliError>()
            .map(|c| c.code)
            .or_else(|| refusal(c).map(for_refusal))
    });
    code.unwrap_or(Exit::Failure) as i32
}

/// The store's refusal in one link of an error chain (on its own or
/// inside a `StoreError`).
fn refusal<'a>(link: &'a (dyn std::error::Error + 'static)) -> Option<&'a Refusal> {
    link.downcast_ref::<Refusal>().or_else(|| {
        match link.downcast_ref::<crate::store::StoreError>() {
            Some(crate::store::StoreError::Refused(r)) => Some(r),
            _ => None,
        }
    })
}

/// The exit code a store's refusal at open means.
pub(crate) fn for_refusal(refusal: &Refusal) -> Exit {
    match refusal {
        Refusal::UnfinishedMigration { .. } => Exit::UnfinishedMigration,
        Refusal::NewerFormat { .. } | Refusal::NewerSchema { .. } => Exit::NewerStore,
        Refusal::Corrupt { .. } => Exit::CorruptStore,
    }
}

/// The exit code a server's refusal means.
pub(crate) fn for_status(status: u16) -> Exit {
    match status {
        401 | 403 => Exit::Unauthorized,
        404 => Exit::NotFound,
        400 | 413 | 415 | 422 => Exit::Rejected,
        _ => Exit::Failure,
    }
}

/// True when `e` is stdout's reader having gone away.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Print to stdout; a reader that went away (`| head`) is a quiet
/// `BrokenPipe` error the caller returns and `main` exits on without noise.
pub fn emit(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// `emit` with a newline.
pub(crate) fn emit_line(text: impl fmt::Display) -> anyhow::Result<()> {
    emit(&format!("{text}\n"))
}

/// A `print!` that meets a closed stdout panics with "failed printing to
/// stdout: Broken pipe": end the process quietly (code 0) instead, as a
/// program killed by SIGPIPE would, without a panic message.
pub fn quiet_on_closed_pipe() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.contains("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(0);
        }
        previous(info)
    }));
}

/// Whether stdout is a terminal (`SAFE_OUTCOMES_FORCE_TTY` set: as if it
/// were, like `gh`'s `GH_FORCE_TTY`).
pub(crate) fn for_terminal() -> bool {
    use std::io::IsTerminal;
    crate::settings::read_os(&crate::settings::SAFE_OUTCOMES_FORCE_TTY)
        .is_some_and(|v| !v.is_empty())
        || std::io::stdout().is_terminal()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_come_through_context() {
        let e = fail(Exit::NotFound, "no outputs for acme/nope").context("reading the report");
        assert_eq!(exit_code(&e), 4);
        assert_eq!(exit_code(&anyhow::anyhow!("other")), 1);
        assert_eq!(for_status(401), Exit::Unauthorized);
        assert_eq!(for_status(404), Exit::NotFound);
        assert_eq!(for_status(500), Exit::Failure);
    }

    #[test]
    fn a_broken_pipe_is_recognized_through_context() {
        let io = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        let e = anyhow::Error::from(io).context("printing the report");
        assert!(is_broken_pipe(&e));
        assert!(!is_broken_pipe(&anyhow::anyhow!("other")));
    }
}
