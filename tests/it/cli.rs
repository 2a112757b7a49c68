//! The command line as a user runs it: `demo`, then `report` on the store it
//! left, `compact` on it, and `report` again.

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

    // Compacting rewrites the store; the report reads the same from it.
    // Compaction is of sled's files: nothing to compact on PostgreSQL.
    if std::env::var("SAFE_OUTCOMES_TEST_PG").is_ok() {
        eprintln!("SKIPPED the compaction half: the store is on PostgreSQL");
        return;
    }
    let out = bin()
        .args(["compact", "--data-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && said.starts_with("compacted "),
        "{said}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let again = bin()
        .args(["report", "--format", "json", "--window", "7d", "--data-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    let mut again: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    let mut before = report.clone();
    for r in [&mut again, &mut before] {
        r.as_object_mut().unwrap().remove("generated_at");
    }
    assert!(again == before, "the compacted store reports the same");

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
fn compact_names_a_missing_store_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let out = bin()
        .args(["compact", "--data-dir"])
        .arg(&missing)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no store at"));
    assert!(!missing.exists());
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
