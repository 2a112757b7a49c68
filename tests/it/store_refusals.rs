//! Stores the server must not serve, run through the real binary: a
//! PostgreSQL database `migrate` left half-filled (exit 6, until `migrate`
//! is run again), a store a newer version wrote (exit 7), and corrupted
//! copies of each file of a sled store (exit 8 with the file named, or a
//! clean start; never a panic).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use safe_outcomes::store::{self, keys, open_checks, pg, Store};

/// The binary, with no engine chosen by the environment.
fn bin(cwd: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_safe-outcomes"));
    cmd.current_dir(cwd)
        .env_remove("DATABASE_URL")
        .env_remove(pg::TEST_PG_ENV)
        .env("LOG_LEVEL", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    cmd
}

/// Run `cmd` for up to `limit`: its exit code and stderr, or `None` (and
/// the process killed) when it was still running.
fn finish(cmd: &mut Command, limit: Duration) -> Option<(i32, String)> {
    let err_file = tempfile::NamedTempFile::new().unwrap();
    cmd.stderr(err_file.reopen().unwrap());
    let mut child = cmd.spawn().unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr = std::fs::read_to_string(err_file.path()).unwrap();
    status.map(|s| (s.code().unwrap_or(-1), stderr))
}

/// `serve` on `data`, on a port nobody listens on.
fn serve(cwd: &Path, data: &Path, database_url: Option<&str>) -> Command {
    let mut cmd = bin(cwd);
    cmd.args(["serve", "--port", "0", "--data-dir"]).arg(data);
    if let Some(url) = database_url {
        cmd.args(["--database-url", url]);
    }
    cmd
}

#[test]
fn serve_refuses_a_store_a_newer_version_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    {
        let store = Store::open_sled(&store::path_in(&data)).unwrap();
        open_checks::mark_format_for_tests(&store, open_checks::FORMAT + 1).unwrap();
        store.flush().unwrap();
    }
    let (code, stderr) =
        finish(&mut serve(dir.path(), &data, None), Duration::from_secs(60)).expect("refused");
    assert_eq!(code, 7, "{stderr}");
    assert!(stderr.contains("newer version"), "{stderr}");
    assert!(!stderr.contains("panicked at"), "{stderr}");
}

/// A sled store of `n` keys: outputs' worth of bytes, and some inbox items
/// (the journal's).
fn sled_store(path: &Path, n: u32) {
    let store = Store::open_sled(path).unwrap();
    for i in 0..n {
        let value = format!("{i:0>300}");
        store
            .put_raw_for_tests(format!("z/filler/{i:08}").as_bytes(), value.as_bytes())
            .unwrap();
    }
    for seq in 1..=20 {
        store
            .put_raw_for_tests(&keys::inbox_queue(seq), b"{\"webhook\":{}}")
            .unwrap();
    }
    store.flush().unwrap();
}

/// `migrate`, stopped by SIGKILL once it has recorded progress: the
/// database holds part of the store.
fn half_migrate(cwd: &Path, data: &Path, url: &str, progress: &pg::Pg) {
    let name = store::path_in(data).canonicalize().unwrap();
    let name = name.display().to_string();
    let mut child = bin(cwd)
        .args(["migrate", "--from"])
        .arg(data)
        .args(["--to", url])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    while progress.migrate_progress(&name).unwrap().is_none() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "migrate ended before it could be stopped"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn serve_refuses_a_half_migrated_database_until_migrate_is_run_again() {
    let admin = match pg::test_admin_url() {
        Ok(url) => url,
        Err(e) if std::env::var("CI").is_ok() => panic!("no PostgreSQL in CI: {e}"),
        Err(e) => return eprintln!("SKIPPED: {e}"),
    };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    sled_store(&store::path_in(&data), 30_000);
    let target = dir.path().join("target-db");
    let progress = pg::test_database(&admin, &target).unwrap();
    let url = pg::test_database_url(&admin, &target);
    half_migrate(dir.path(), &data, &url, &progress);
    let serving = dir.path().join("serving");
    let limit = Duration::from_secs(60);
    let (code, stderr) =
        finish(&mut serve(dir.path(), &serving, Some(url.as_str())), limit).unwrap();
    assert_eq!(code, 6, "{stderr}");
    assert!(stderr.contains("half-migrated"), "{stderr}");
    assert!(stderr.contains("safe-outcomes migrate"), "{stderr}");
    let (code, stderr) = finish(
        bin(dir.path())
            .args(["migrate", "--from"])
            .arg(&data)
            .args(["--to", url.as_str()]),
        Duration::from_secs(120),
    )
    .unwrap();
    assert_eq!(code, 0, "{stderr}");
    // Finished: the server starts and keeps running.
    let ran = finish(
        &mut serve(dir.path(), &serving, Some(url.as_str())),
        limit / 6,
    );
    assert!(ran.is_none(), "serve ended: {ran:?}");
}

/// Every file of the store in `dir`, by name.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut all: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    all.sort();
    all
}

/// A copy of the store directory `from` at `to`.
fn copy_store(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for file in files(from) {
        std::fs::copy(&file, to.join(file.file_name().unwrap())).unwrap();
    }
}

/// Flip every bit of 16 bytes of `file` from `at`.
fn flip(file: &Path, at: u64) {
    let mut bytes = std::fs::read(file).unwrap();
    let at = (at as usize).min(bytes.len().saturating_sub(16));
    let end = (at + 16).min(bytes.len());
    for b in &mut bytes[at..end] {
        *b = !*b;
    }
    std::fs::write(file, bytes).unwrap();
}

/// Offsets to corrupt in a file of `len` bytes: its header, and places
/// through its body.
fn offsets(len: u64) -> Vec<u64> {
    let mut at = vec![0, 8, 24];
    at.extend([len / 5, len / 2, len * 4 / 5, len.saturating_sub(40)]);
    at.sort();
    at.dedup();
    at
}

#[test]
fn a_corrupt_store_file_is_named_with_what_to_do_and_never_panics() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good");
    sled_store(&good, 5_000);
    // A snapshot file too: sled writes one as it opens a store.
    drop(Store::open_sled(&good).unwrap());
    let names: Vec<_> = files(&good)
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().any(|n| n.starts_with("snap.")), "{names:?}");
    let (mut refused, mut tries) = (0, 0);
    for name in &names {
        let len = std::fs::metadata(good.join(name)).unwrap().len();
        for at in offsets(len) {
            tries += 1;
            let data = dir.path().join(format!("try-{tries}"));
            let copy = store::path_in(&data);
            copy_store(&good, &copy);
            flip(&copy.join(name), at);
            let mut report = bin(dir.path());
            report.args(["report", "--data-dir"]).arg(&data);
            let (code, stderr) = finish(&mut report, Duration::from_secs(60))
                .unwrap_or_else(|| panic!("{name} at {at}: report hung"));
            let what = format!("{name} flipped at {at}: exit {code}\n{stderr}");
            assert!(!stderr.contains("panicked at"), "{what}");
            assert!(code == 0 || code == 8, "{what}");
            if code == 8 {
                refused += 1;
                assert!(stderr.contains(&copy.display().to_string()), "{what}");
                assert!(stderr.contains("corrupt"), "{what}");
                assert!(stderr.contains("backup"), "{what}");
            }
            std::fs::remove_dir_all(&data).unwrap();
        }
    }
    assert!(refused > 0, "no corruption of {tries} was noticed");
}
