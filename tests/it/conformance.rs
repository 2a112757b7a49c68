//! Conformance cases through the API-state evaluation path: gh-aw's shared
//! file, our own cases, and the `conformance` command's output and exit code.

use std::path::PathBuf;
use std::process::Command;

use safe_outcomes::judge::conformance::{parse_cases, run_case, summary};

fn own_file() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/conformance/cases.json")
}

fn shared_file() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/gh-aw/outcome_conformance.json")
}

#[test]
fn own_cases_all_pass() {
    let cases = parse_cases(&std::fs::read_to_string(own_file()).unwrap()).unwrap();
    assert!(cases.len() >= 20);
    let results: Vec<_> = cases.iter().map(run_case).collect();
    let failed: Vec<&str> = results
        .iter()
        .filter(|r| !r.passed)
        .map(|r| r.line.as_str())
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
    assert_eq!(
        summary(&results),
        format!("{} passed, 0 failed", cases.len())
    );
}

/// gh-aw's shared file, read from `../shared`. Under CI the data must be
/// there (a missing file fails the run); elsewhere its absence is said
/// loudly and the test is skipped.
fn shared_cases() -> Option<String> {
    let path = shared_file();
    match std::fs::read_to_string(&path) {
        Ok(json) => Some(json),
        Err(e) if std::env::var_os("CI").is_some() => {
            panic!("CI: {} is required: {e}", path.display())
        }
        Err(e) => {
            eprintln!(
                "\n*** SKIPPED: gh-aw's shared conformance cases are not at {} ({e}) ***\n",
                path.display()
            );
            None
        }
    }
}

/// Every shared case passes: exactly, or through one of the general
/// mappings of docs/evaluation.md.
#[test]
fn shared_gh_aw_cases_all_pass() {
    let Some(json) = shared_cases() else { return };
    let cases = parse_cases(&json).unwrap();
    assert!(cases.len() >= 42);
    let failed: Vec<String> = cases
        .iter()
        .map(run_case)
        .filter(|r| !r.passed)
        .map(|r| r.line)
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
}

/// The spec's example rows pass through the command-line path too.
#[test]
fn spec_rows_all_pass() {
    let cases = parse_cases(safe_outcomes::judge::spec::SPEC_CASES).unwrap();
    assert!(cases.len() >= 70);
    for case in &cases {
        let r = run_case(case);
        assert!(r.passed, "{}", r.line);
    }
}

#[test]
fn the_command_prints_a_line_per_case_and_a_summary() {
    let out = Command::new(env!("CARGO_BIN_EXE_safe-outcomes"))
        .arg("conformance")
        .arg(own_file())
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[..lines.len() - 1]
        .iter()
        .all(|l| l.starts_with("PASS ")));
    assert_eq!(
        *lines.last().unwrap(),
        format!("{} passed, 0 failed", lines.len() - 1)
    );
}

#[test]
fn a_failing_case_fails_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cases.json");
    let case = r#"[{"name": "wrong on purpose",
        "item": {"type": "create_issue", "number": 1, "timestamp": "2026-01-01T00:00:00Z"},
        "responses": {"issues/1": {"state": "closed", "state_reason": "completed"}},
        "expected": {"outcome_status": "rejected", "evidence_strength": "strong", "signal": "closed_not_planned"}}]"#;
    std::fs::write(&file, case).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_safe-outcomes"))
        .arg("conformance")
        .arg(&file)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout,
        "FAIL wrong on purpose: expected rejected/strong/closed_not_planned got accepted/strong/completed\n0 passed, 1 failed\n"
    );
}
