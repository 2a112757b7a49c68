//! The fault suite's long offline commands: `compact` and `migrate` killed
//! with SIGKILL at several points of their run, then run again the way
//! their own messages say, lose nothing. (The served half of the suite —
//! SIGKILL under load, a full disk, a database outage, corrupt files — has
//! a file each; `scripts/fault-suite` runs them all and the README's
//! "Durability" section lists each fault with its result.)
//!
//! Each kill lands at a different moment: before the copy starts, during
//! it, around the swap. A kill that lands after the command finished still
//! checks the end state, but the test asserts that some kills landed while
//! the command ran, so it cannot pass by killing nothing.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use safe_outcomes::bench::synthetic::{self, Shape};
use safe_outcomes::store::{self, Store};

use crate::common::{self, pg::Pg};

/// Outputs in the store: enough for each command to run for a while.
const OUTPUTS: u64 = 40_000;

/// Outputs written per unit while seeding.
const SEED_UNIT: u64 = 5_000;

/// When each kill lands, after the command started.
const KILL_AFTER_MS: [u64; 6] = [5, 60, 200, 450, 900, 1_600];

/// A sled store under `data_dir` holding `OUTPUTS` synthetic outputs;
/// returns the ids of a sample of them.
fn seeded(data_dir: &Path) -> Vec<String> {
    let store = Store::open_sled(&store::path_in(data_dir)).unwrap();
    let shape = Shape::large_org(common::t0());
    let mut sample = Vec::new();
    for start in (0..OUTPUTS).step_by(SEED_UNIT as usize) {
        let mut unit = store.begin();
        for i in start..start + SEED_UNIT {
            let output = synthetic::output(&shape, i, 7);
            if i % 997 == 0 {
                sample.push(output.execution.id.clone());
            }
            unit.put_new_output(&output).unwrap();
        }
        unit.commit().unwrap();
    }
    store.flush().unwrap();
    assert_eq!(store.output_count(), OUTPUTS);
    sample
}

/// Start the binary with `args`, its output kept for a failure message.
fn start(args: &[&str]) -> Child {
    common::bin()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts")
}

/// SIGKILL `child` after `ms` (or when it ended before); true when it was
/// still running at the kill.
fn kill_after(mut child: Child, ms: u64) -> bool {
    let deadline = Instant::now() + Duration::from_millis(ms);
    while Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let running = child.try_wait().unwrap().is_none();
    child.kill().unwrap();
    child.wait().unwrap();
    running
}

/// Run the binary to the end; its combined output, and whether it succeeded.
fn run(args: &[&str]) -> (bool, String) {
    common::success_and_text(&common::cli(args))
}

/// Every sampled output is in `store`, and the count is whole.
fn whole(store: &Store, sample: &[String], after: &str) {
    assert_eq!(store.output_count(), OUTPUTS, "{after}: outputs lost");
    for id in sample {
        assert!(
            store.output(id).unwrap().is_some(),
            "{after}: output {id} lost"
        );
    }
}

/// `compact` killed at each point, then run again as its message says
/// (a kill between its two renames leaves `store.compact-old`, and the
/// message says to rename it back): every output is there at the end and
/// nothing of the attempt is left beside the store.
#[test]
fn compact_killed_at_any_point_loses_nothing() {
    let parent = tempfile::tempdir().unwrap();
    let data_dir = parent.path().join("data");
    let sample = seeded(&data_dir);
    let dir = store::path_in(&data_dir);
    let data = data_dir.to_str().unwrap();
    let mut landed = 0;
    for ms in KILL_AFTER_MS {
        landed += kill_after(start(&["compact", "--data-dir", data]), ms) as usize;
        let (ok, text) = run(&["compact", "--data-dir", data]);
        if !ok {
            assert!(
                text.contains("compaction was interrupted") && text.contains("Rename"),
                "after a kill at {ms} ms compact fails without saying what to do: {text}"
            );
            std::fs::rename(store::compact::old_dir(&dir), &dir).unwrap();
            let (ok, text) = run(&["compact", "--data-dir", data]);
            assert!(ok, "compact after the rename it asked for: {text}");
        }
        let store = Store::open_sled(&dir).unwrap();
        whole(&store, &sample, &format!("compact killed at {ms} ms"));
    }
    assert!(landed >= 2, "only {landed} kills landed while compact ran");
}

/// `migrate` killed at each point, then run again: it resumes, and the
/// database holds every output once it says it is done.
#[test]
fn migrate_killed_at_any_point_resumes_and_loses_nothing() {
    let Some(pg) = Pg::get("migrate_killed_at_any_point_resumes_and_loses_nothing") else {
        return;
    };
    let url = pg.fresh_database("faults_migrate");
    let parent = tempfile::tempdir().unwrap();
    let data_dir = parent.path().join("data");
    let sample = seeded(&data_dir);
    let data = data_dir.to_str().unwrap();
    let mut landed = 0;
    for ms in KILL_AFTER_MS {
        landed += kill_after(start(&["migrate", "--from", data, "--to", &url]), ms) as usize;
    }
    let (ok, text) = run(&["migrate", "--from", data, "--to", &url]);
    assert!(ok, "migrate after {} kills: {text}", KILL_AFTER_MS.len());
    assert!(landed >= 2, "only {landed} kills landed while migrate ran");
    let on_pg = Store::open_engine(&store::path_in(&data_dir), Some(&url)).unwrap();
    whole(&on_pg, &sample, "migrate killed and resumed");
    drop(on_pg);
    pg.drop_database("faults_migrate");
}
