//! Where tests find the data that stays in `../shared` (it is never copied
//! into the repository). Under CI (env `CI` set) missing data fails the test;
//! elsewhere the test says loudly that it skipped.

use std::path::{Path, PathBuf};

/// `../shared/{rel}`, if it exists. Panics under CI when it does not.
pub fn shared_path(rel: &str) -> Option<PathBuf> {
    // This crate sits at `crates/model`; `../shared` is beside the workspace.
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared")
        .join(rel);
    check(path, std::env::var_os("CI").is_some())
}

fn check(path: PathBuf, ci: bool) -> Option<PathBuf> {
    if path.exists() {
        return Some(path);
    }
    assert!(
        !ci,
        "CI: {} is required (data from ../shared) and missing",
        path.display()
    );
    eprintln!(
        "\n*** SKIPPED: {} is absent (data from ../shared; under CI this fails) ***\n",
        path.display()
    );
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_data_fails_under_ci_and_skips_elsewhere() {
        let missing = PathBuf::from("/nonexistent/shared/fixtures");
        assert_eq!(check(missing.clone(), false), None);
        let under_ci = std::panic::catch_unwind(|| check(missing, true));
        assert!(under_ci.is_err(), "CI must fail on missing ../shared data");
        let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        assert_eq!(check(here.clone(), true), Some(here));
    }
}
