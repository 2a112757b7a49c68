//! Every setting the App reads from its environment, declared once (`table`),
//! and the secrets among them as a type that never prints (`Secret`).
//!
//! A command's setting is a clap argument whose `env` names the row here
//! (`#[arg(long, env = settings::PORT.name)]`); a setting read from the
//! environment only is read through `read`/`read_os`/`is_set` with its row.
//! Nothing else in `src/` or `crates/` calls `std::env::var` outside tests
//! (`tests/it/settings.rs` fails on one). The store reads no variable: the
//! App passes `DURABILITY`, `DEDUP_WINDOW_HOURS` and `SAFE_OUTCOMES_PAGE_IN`
//! down as `store::Settings` (`store_settings`). README.md's configuration
//! section and docs/development.md's table of test variables are the
//! rendering of the table (`markdown`), which the same test holds.
//!
//! May import: `store` (the settings it passes down).

mod secret;
mod table;

use std::ffi::OsString;

pub use secret::{exposed, Secret, REDACTED};
pub use table::*;

/// One setting: its variable, who reads it, its default and meaning as the
/// docs say them (Markdown).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    pub name: &'static str,
    pub scope: Scope,
    /// Also a command-line flag (a clap argument with this `env`).
    pub flag: bool,
    /// As the docs show it; `—` for none.
    pub default: &'static str,
    pub meaning: &'static str,
}

/// Who reads a setting, which decides where the docs list it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `serve` (README.md's first table).
    Serve,
    /// `serve` and other commands (the first table, and named as shared).
    Shared,
    /// Other commands only: the ones named (README.md's second table).
    Commands(&'static str),
    /// The tests and benchmarks only (docs/development.md).
    Test,
}

/// The variable's value, when set and Unicode (`std::env::var(..).ok()`).
pub(crate) fn read(setting: &Setting) -> Option<String> {
    std::env::var(setting.name).ok()
}

/// The variable's value as the OS holds it (`std::env::var_os`).
pub(crate) fn read_os(setting: &Setting) -> Option<OsString> {
    std::env::var_os(setting.name)
}

/// Whether the variable is set at all (even empty).
pub fn is_set(setting: &Setting) -> bool {
    std::env::var_os(setting.name).is_some()
}

/// The row of `name`, if it is a setting.
pub fn find(name: &str) -> Option<&'static Setting> {
    ALL.iter().copied().find(|s| s.name == name)
}

/// The store's settings from the environment, for every command:
/// `DURABILITY` (anything but `power-loss` is `process-crash`),
/// `DEDUP_WINDOW_HOURS` (a whole number ≥ 1, else the store's default), and
/// `SAFE_OUTCOMES_PAGE_IN` (`0`: off). `serve` overrides the first two with
/// its parsed flags (`ServeArgs::store_settings`).
pub(crate) fn store_settings() -> crate::store::Settings {
    crate::store::Settings {
        durability: Some(match read(&DURABILITY).as_deref() {
            Some("power-loss") => crate::store::Durability::PowerLoss,
            _ => crate::store::Durability::ProcessCrash,
        }),
        dedup_window_hours: read(&DEDUP_WINDOW_HOURS)
            .and_then(|h| h.parse::<i64>().ok())
            .filter(|h| *h > 0),
        page_in: read(&SAFE_OUTCOMES_PAGE_IN).as_deref() != Some("0"),
    }
}

/// A Markdown cell: `|` escaped.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

fn names(rows: &[&Setting]) -> String {
    rows.iter()
        .map(|s| format!("`{}`", s.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// README.md's configuration section between its markers: the `serve`
/// table, the other commands' table, and the test variables named.
pub fn readme_markdown() -> String {
    let serve: Vec<&Setting> = ALL
        .iter()
        .copied()
        .filter(|s| matches!(s.scope, Scope::Serve | Scope::Shared))
        .collect();
    let env_only: Vec<&Setting> = serve.iter().copied().filter(|s| !s.flag).collect();
    let shared: Vec<&Setting> = serve
        .iter()
        .copied()
        .filter(|s| s.scope == Scope::Shared)
        .collect();
    let tests: Vec<&Setting> = ALL
        .iter()
        .copied()
        .filter(|s| s.scope == Scope::Test)
        .collect();
    let mut out = String::new();
    out.push_str(
        "`safe-outcomes serve` reads these environment variables, and a `.env` file in the working\n\
         directory (a variable set in the environment wins). Most are also a flag (`serve --help` lists\n\
         them: `WEBHOOK_SECRET` is `--webhook-secret`, `OTEL_EXPORTER_OTLP_ENDPOINT` is `--otlp-endpoint`);\n",
    );
    out.push_str(&format!(
        "these are read from the environment only: {}.\n\n",
        names(&env_only)
    ));
    out.push_str("| variable | default | meaning |\n|---|---|---|\n");
    for s in &serve {
        out.push_str(&format!(
            "| `{}` | {} | {} |\n",
            s.name,
            cell(s.default),
            cell(s.meaning)
        ));
    }
    out.push_str(&format!(
        "\nThe other commands read the variables that apply to them ({}), and these of their own:\n\n",
        names(&shared)
    ));
    out.push_str("| variable | read by | default | meaning |\n|---|---|---|---|\n");
    for s in ALL.iter().copied() {
        if let Scope::Commands(by) = s.scope {
            out.push_str(&format!(
                "| `{}` | {} | {} | {} |\n",
                s.name,
                cell(by),
                cell(s.default),
                cell(s.meaning)
            ));
        }
    }
    out.push_str(&format!(
        "\nVariables for the tests and benchmarks only ({}) are in \
         [docs/development.md](docs/development.md#variables-for-tests-and-benchmarks).\n",
        names(&tests)
    ));
    out
}

/// docs/development.md's table of the variables for tests and benchmarks.
pub fn development_markdown() -> String {
    let mut out = String::from("| variable | what it does |\n|---|---|\n");
    for s in ALL.iter().filter(|s| s.scope == Scope::Test) {
        out.push_str(&format!("| `{}` | {} |\n", s.name, cell(s.meaning)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setting_is_declared_once_with_a_meaning() {
        let mut seen = std::collections::BTreeSet::new();
        for s in ALL {
            assert!(seen.insert(s.name), "{} is declared twice", s.name);
            assert!(!s.meaning.is_empty() && !s.default.is_empty(), "{}", s.name);
            assert!(
                s.name
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'),
                "{}",
                s.name
            );
        }
        assert_eq!(find("PORT"), Some(&PORT));
        assert_eq!(find("NOT_A_SETTING"), None);
    }

    #[test]
    fn the_docs_name_every_row_in_its_place() {
        let readme = readme_markdown();
        let dev = development_markdown();
        for s in ALL {
            let quoted = format!("`{}`", s.name);
            match s.scope {
                Scope::Test => assert!(dev.contains(&quoted) && readme.contains(&quoted)),
                _ => assert!(readme.contains(&format!("| {quoted} |")), "{}", s.name),
            }
        }
    }
}
