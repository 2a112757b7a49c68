//! Reading the workspace's own Rust sources, for the tests that check them
//! (`layers`: imports between rooms, crates and modules; `settings`: no
//! environment read outside the settings table).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Every `.rs` file under `path`, sorted.
pub fn rust_files(path: &Path) -> Vec<PathBuf> {
    fn walk(path: &Path, out: &mut Vec<PathBuf>) {
        if path.is_dir() {
            for entry in std::fs::read_dir(path).unwrap() {
                walk(&entry.unwrap().path(), out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path.to_path_buf());
        }
    }
    let mut out = Vec::new();
    walk(path, &mut out);
    out.sort();
    out
}

/// The file's code without its tests and comment lines: an inline
/// `#[cfg(test)] mod … {` cuts the rest of the file (test modules sit at the
/// end), and the files of `#[cfg(test)] mod name;` are added to
/// `test_files`.
fn code_of(text: &str, dir: &Path, test_files: &mut BTreeSet<PathBuf>) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim();
        if t == "#[cfg(test)]" {
            let next = lines.peek().map(|l| l.trim()).unwrap_or("");
            let decl = next
                .trim_start_matches("pub ")
                .trim_start_matches("pub(crate) ");
            if let Some(name) = decl.strip_prefix("mod ").and_then(|n| n.strip_suffix(';')) {
                test_files.insert(dir.join(format!("{name}.rs")));
                test_files.insert(dir.join(name).join("mod.rs"));
                lines.next();
                continue;
            }
            if decl.starts_with("mod ") {
                break;
            }
        }
        if !t.starts_with("//") {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Every file under `root` that is not a test module, with its code
/// outside tests (`code_of`), in path order.
pub fn production_code(root: &Path) -> Vec<(PathBuf, String)> {
    let mut test_files = BTreeSet::new();
    let mut code = Vec::new();
    for file in rust_files(root) {
        let text = std::fs::read_to_string(&file).unwrap();
        let dir = match file.file_stem().unwrap().to_str().unwrap() {
            "mod" | "lib" | "main" => file.parent().unwrap().to_path_buf(),
            stem => file.parent().unwrap().join(stem),
        };
        let kept = code_of(&text, &dir, &mut test_files);
        code.push((file, kept));
    }
    code.retain(|(file, _)| !test_files.contains(file));
    code
}
