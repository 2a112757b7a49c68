//! The command line as a user runs it: `demo`, then `report` on the store it left.

use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_safe-outcomes"))
}

#[test]
fn demo_then_report_from_its_store() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .args(["demo", "--data-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("safe-outcomes report"), "{stdout}");
    assert!(stdout.contains("strict = strong / evaluable"), "{stdout}");
    let jsonl = dir.path().join("outcomes.jsonl");
    assert!(
        stdout.contains(&jsonl.display().to_string()),
        "the JSONL path is printed"
    );
    let records = std::fs::read_to_string(&jsonl).unwrap();

    let out = bin()
        .args(["report", "--format", "json", "--window", "7d", "--data-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["window"], "7d");
    assert_eq!(
        report["totals"]["total_safe_outputs"].as_u64().unwrap() as usize,
        records.lines().count()
    );

    let out = bin()
        .args([
            "report",
            "--format",
            "jsonl",
            "--repo",
            "acme/docs",
            "--data-dir",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    let lines = String::from_utf8_lossy(&out.stdout);
    assert!(lines.lines().count() > 0);
    assert!(lines.lines().all(|l| l.contains("\"acme/docs:")), "{lines}");

    let out = bin()
        .args(["report", "--window", "2w", "--data-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--window"));
}

#[test]
fn report_names_a_missing_store() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .args(["report", "--data-dir"])
        .arg(dir.path().join("nope"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no store at"));
}
