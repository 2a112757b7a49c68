//! The store's boundary, checked: no source file outside `crates/store/src/`
//! names sled, the raw tree (`.db()`) or the key layout (`keys::`), so
//! everything persistent goes through typed store methods and units of
//! work. (Integration tests under `tests/` still write raw bytes through
//! `Store::put_raw_for_tests` to inject corrupt records; that is their
//! point, so they are not scanned.)

use std::path::{Path, PathBuf};

/// What only `crates/store/src/` may name.
const FORBIDDEN: &[&str] = &["sled::", "redb::", ".db()", "store::keys", "keys::"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("reading src/") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `file:line: text` for each forbidden name in `source`.
fn violations(file: &Path, source: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (n, line) in source.lines().enumerate() {
        let imports_keys = line.contains("store::{")
            && line
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|w| w == "keys");
        if imports_keys || FORBIDDEN.iter().any(|f| line.contains(f)) {
            found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
        }
    }
    found
}

#[test]
fn nothing_outside_the_store_reaches_sled_or_its_keys() {
    // The App's `src/` and the other crates; this crate is the store.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let store = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let src = root.join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    for other in ["crates/model/src", "crates/judge/src"] {
        rust_files(&root.join(other), &mut files);
    }
    assert!(files.len() > 20, "found the sources: {files:?}");
    let found: Vec<String> = files
        .iter()
        .filter(|f| !f.starts_with(&store))
        .flat_map(|f| violations(f, &std::fs::read_to_string(f).expect("reading a source")))
        .collect();
    assert!(
        found.is_empty(),
        "outside crates/store/src/:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_scan_sees_each_forbidden_name() {
    let file = Path::new("x.rs");
    for line in [
        "let b = sled::Batch::default();",
        "store.db().get(k)",
        "use crate::store::keys;",
        "keys::output(id)",
        "use crate::store::{counter, keys, Store};",
    ] {
        assert_eq!(violations(file, line).len(), 1, "{line}");
    }
    assert!(violations(file, "let w = stored.execution.watch_keys();").is_empty());
}
