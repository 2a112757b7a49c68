//! Every setting is declared once, in `src/settings/table.rs`, and the
//! secrets among them never print:
//!
//! - no `std::env::var`/`var_os`/`vars` in the non-test code of `src/` and
//!   `crates/*/src` outside `src/settings/` (the test harnesses in
//!   `TEST_SUPPORT` read `CI` and `SAFE_OUTCOMES_TEST_PG`, which are rows too);
//! - every clap argument's `env` is a row marked `flag`, with the row's
//!   default where clap has one, and every `flag` row is some argument's;
//! - every variable the tests read is a row (or a test's own marker);
//! - README.md's configuration section and docs/development.md's table of
//!   test variables are the table's rendering
//!   (`SAFE_OUTCOMES_BLESS_README=1 cargo test --test it settings` rewrites them);
//! - `{:?}` of `serve`'s parsed arguments and of the router's options holds
//!   no secret's value.

use std::collections::BTreeSet;
use std::path::Path;

use clap::CommandFactory;
use safe_outcomes::settings::{self, Scope, Secret};

use crate::common;

/// Non-test files that read a test variable: the PostgreSQL test harness
/// (`SAFE_OUTCOMES_TEST_PG`, also `bench --database-url`'s) and the finder
/// of `../shared` data (`CI`), both used by tests of other crates.
const TEST_SUPPORT: &[&str] = &[
    "crates/store/src/engine/pg/testing.rs",
    "crates/model/src/shared_data.rs",
];

/// Names the tests set on their own processes, not settings: the
/// `cli::tests` dotenv check and `clean_hands`' child-process roles.
const OWN_MARKERS: &[&str] = &[
    "SO_TEST_DOTENV_ONLY",
    "SO_TEST_DOTENV_BOTH",
    "SAFE_OUTCOMES_CLEAN_HANDS_CHILD",
    "SAFE_OUTCOMES_CLEAN_HANDS_BROWSER_TMP",
    "SAFE_OUTCOMES_CLEAN_HANDS_SUITE",
    // Cargo's, read by a test to find the built binaries.
    "CARGO_TARGET_DIR",
];

/// `file:line: text` of every environment read in the non-test code of `root`.
fn env_reads(workspace: &Path, root: &Path, found: &mut Vec<String>) {
    for (file, text) in crate::source::production_code(root) {
        let rel = file
            .strip_prefix(workspace)
            .unwrap()
            .to_string_lossy()
            .to_string();
        let name = file.file_name().unwrap().to_string_lossy();
        if name == "tests.rs"
            || name.ends_with("_tests.rs")
            || rel.starts_with("src/settings/")
            || TEST_SUPPORT.contains(&rel.as_str())
        {
            continue;
        }
        for line in text.lines() {
            if ["env::var(", "env::var_os(", "env::vars("]
                .iter()
                .any(|p| line.contains(p))
            {
                found.push(format!("{rel}: {}", line.trim()));
            }
        }
    }
}

#[test]
fn no_setting_is_read_outside_the_table() {
    let root = common::manifest_dir();
    let mut found = Vec::new();
    env_reads(&root, &root.join("src"), &mut found);
    for krate in ["model", "judge", "store"] {
        env_reads(
            &root,
            &root.join("crates").join(krate).join("src"),
            &mut found,
        );
    }
    assert!(
        found.is_empty(),
        "environment reads outside src/settings/ (declare the setting in \
         src/settings/table.rs and read it with settings::read, or make it a \
         clap argument with `env = settings::NAME.name`):\n{}",
        found.join("\n")
    );
    // The scan sees a read when there is one.
    let mut seen = Vec::new();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.rs"),
        "fn f() { std::env::var(\"X\"); }\n#[cfg(test)]\nmod tests { fn g() { std::env::var(\"Y\"); } }\n",
    )
    .unwrap();
    env_reads(dir.path(), dir.path(), &mut seen);
    assert_eq!(seen, ["a.rs: fn f() { std::env::var(\"X\"); }"]);
}

/// Every argument of every (sub)command: `(command path, argument)`.
fn arguments(cmd: &clap::Command, path: &str, out: &mut Vec<(String, clap::Arg)>) {
    for arg in cmd.get_arguments() {
        out.push((path.to_string(), arg.clone()));
    }
    for sub in cmd.get_subcommands() {
        arguments(sub, &format!("{path} {}", sub.get_name()), out);
    }
}

#[test]
fn every_flag_with_a_variable_is_a_row_of_the_table() {
    let mut args = Vec::new();
    arguments(
        &safe_outcomes::cli::Cli::command(),
        "safe-outcomes",
        &mut args,
    );
    let mut declared = BTreeSet::new();
    for (path, arg) in &args {
        let Some(env) = arg.get_env() else { continue };
        let name = env.to_string_lossy().to_string();
        let row = settings::find(&name).unwrap_or_else(|| {
            panic!(
                "{path} --{}: {name} is not in src/settings/table.rs",
                arg.get_id()
            )
        });
        assert!(
            row.flag,
            "{name} is a flag ({path}) but its row says `flag false`"
        );
        assert_ne!(row.scope, Scope::Test, "{name}");
        // The row's default, when it is a literal, is clap's.
        let defaults: Vec<String> = arg
            .get_default_values()
            .iter()
            .map(|d| d.to_string_lossy().to_string())
            .collect();
        if let (Some(default), Some(literal)) = (defaults.first(), row.default.strip_prefix('`')) {
            let literal = literal.split('`').next().unwrap();
            assert_eq!(
                literal, default,
                "{name}: the table's default is not {path}'s"
            );
        }
        declared.insert(name);
    }
    for row in settings::ALL {
        assert_eq!(
            row.flag,
            declared.contains(row.name),
            "{}: `flag` says whether a clap argument reads it",
            row.name
        );
    }
}

/// Every `NAME` in `var("NAME")` / `var_os("NAME")` / `.env("NAME"` under `dir`.
fn names_read(dir: &Path, found: &mut BTreeSet<String>) {
    for file in crate::source::rust_files(dir) {
        let text = std::fs::read_to_string(&file).unwrap();
        for opener in [
            "var(\"",
            "var_os(\"",
            "_PG: &str = \"",
            "const ROLE: &str = \"",
        ] {
            for (at, _) in text.match_indices(opener) {
                let rest = &text[at + opener.len()..];
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                    .collect();
                if name.len() >= 2 && rest[name.len()..].starts_with('"') {
                    found.insert(name);
                }
            }
        }
    }
}

#[test]
fn every_variable_the_tests_read_is_a_row_or_their_own_marker() {
    let root = common::manifest_dir();
    let mut names = BTreeSet::new();
    names_read(&root.join("tests"), &mut names);
    names_read(&root.join("src"), &mut names);
    for krate in ["model", "judge", "store"] {
        names_read(&root.join("crates").join(krate).join("src"), &mut names);
    }
    assert!(
        names.contains("SAFE_OUTCOMES_DIFFERENTIAL_SEED"),
        "the scan works"
    );
    let missing: Vec<&String> = names
        .iter()
        // `NAME`: this file's own docs.
        .filter(|n| *n != "NAME" && !OWN_MARKERS.contains(&n.as_str()))
        .filter(|n| settings::find(n).is_none())
        .collect();
    assert!(
        missing.is_empty(),
        "variables read that src/settings/table.rs does not declare: {missing:?}"
    );
}

/// The text between `<!-- NAME -->` and `<!-- /NAME -->` in `doc`, and its range.
fn between(doc: &str, name: &str) -> (String, std::ops::Range<usize>) {
    let open = format!("<!-- {name} -->\n");
    let close = format!("<!-- /{name} -->");
    let start = doc
        .find(&open)
        .unwrap_or_else(|| panic!("no `{open}` marker"))
        + open.len();
    let end = doc
        .find(&close)
        .unwrap_or_else(|| panic!("no `{close}` marker"));
    (doc[start..end].to_string(), start..end)
}

fn check_rendered(path: &Path, marker: &str, rendered: &str) {
    let doc = std::fs::read_to_string(path).unwrap();
    let (now, range) = between(&doc, marker);
    if std::env::var_os("SAFE_OUTCOMES_BLESS_README").is_some() {
        let mut blessed = doc.clone();
        blessed.replace_range(range, rendered);
        std::fs::write(path, blessed).unwrap();
        return;
    }
    assert!(
        now == rendered,
        "{} ({marker}) is not the rendering of src/settings/table.rs \
         (SAFE_OUTCOMES_BLESS_README=1 cargo test --test it settings rewrites it):\n{rendered}",
        path.display()
    );
}

#[test]
fn the_docs_configuration_tables_are_the_rendering_of_the_table() {
    let root = common::manifest_dir();
    check_rendered(
        &root.join("README.md"),
        "settings",
        &settings::readme_markdown(),
    );
    check_rendered(
        &root.join("docs/development.md"),
        "test-settings",
        &settings::development_markdown(),
    );
}

#[test]
fn no_secret_prints_in_the_parsed_settings_or_the_router_options() {
    let values = [
        "app-key-PEM-0001",
        "whsec-0002",
        "api-token-0003",
        "pg-password-0004",
        "metrics-token-0005",
        "client-secret-0006",
        "session-secret-0007",
    ];
    let secrets = format!("{},old-{}", values[1], values[1]);
    let url = format!("postgres://so:{}@db/so", values[3]);
    let cli = <safe_outcomes::cli::Cli as clap::Parser>::try_parse_from([
        "safe-outcomes",
        "serve",
        "--private-key",
        values[0],
        "--webhook-secret",
        secrets.as_str(),
        "--api-token",
        values[2],
        "--database-url",
        url.as_str(),
        "--metrics-token",
        values[4],
        "--github-client-id",
        "Iv1.abc",
        "--github-client-secret",
        values[5],
        "--session-secret",
        values[6],
    ])
    .expect("the arguments parse");
    let printed = format!("{cli:?}");
    assert!(printed.contains("Iv1.abc"), "the rest prints: {printed}");
    let mut auth = safe_outcomes::http::auth::AuthOptions {
        session_secret: Some(values[6].into()),
        local_key: Some("local-key-0008".into()),
        ..Default::default()
    };
    auth.oauth = Some(safe_outcomes::http::auth::OAuthApp {
        client_id: "Iv1.abc".into(),
        client_secret: values[5].into(),
    });
    let options = safe_outcomes::http::RouterOptions {
        secrets: vec![Secret::from(values[1]), Secret::from("old-whsec")],
        api_token: Some(values[2].into()),
        metrics: safe_outcomes::http::MetricsOptions {
            token: Some(values[4].into()),
            ..Default::default()
        },
        auth,
        ..safe_outcomes::http::RouterOptions::default()
    };
    let routed = format!("{options:?}");
    assert!(routed.contains(settings::REDACTED), "{routed}");
    for value in values.iter().chain(&["local-key-0008", "old-whsec"]) {
        assert!(!printed.contains(value), "`{value}` printed in {printed}");
        assert!(!routed.contains(value), "`{value}` printed in {routed}");
    }
}
