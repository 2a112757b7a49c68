//! Clean hands: the servers a test starts (a PostgreSQL cluster, `serve`,
//! a browser) do not outlive the test process, however it ends. The test
//! runs this same test binary as a child that starts one of each, prints
//! their process ids and kills itself with SIGKILL (no destructor runs, as
//! after Ctrl-C or a timeout); then every process it started must be gone,
//! and the cluster's files with them. The child's system temp folder
//! (`TMPDIR`) is a folder of the parent's: the server store it makes there
//! cannot be removed by a process that dies on purpose.
//!
//! And the test suite's own clean hands: the tests that spawn children run
//! again in a child of this test with a system temp folder of their own,
//! counted before and after; nothing may be left in it, hidden files
//! included.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::guard::{alive, Reaper, Target};
use crate::common::pg::Pg;
use crate::common::serve::ServeChild;

const ROLE: &str = "SAFE_OUTCOMES_CLEAN_HANDS_CHILD";
/// Where the child's Chromium keeps its temp folders (`TMPDIR`): a folder
/// of the parent's, since the child dies before it could remove one.
const BROWSER_TMP: &str = "SAFE_OUTCOMES_CLEAN_HANDS_BROWSER_TMP";
/// Set in the child test process that runs the tests that spawn children.
const SUITE_ROLE: &str = "SAFE_OUTCOMES_CLEAN_HANDS_SUITE";

/// The child's part: does nothing unless the parent asked for it.
#[tokio::test]
async fn child_role_starts_servers_and_dies() {
    if std::env::var_os(ROLE).is_none() {
        return;
    }
    let mut pids = Vec::new();
    let pg = Pg::own("clean_hands child").expect("PostgreSQL binaries");
    let dir = pg.cluster_dir().unwrap().to_path_buf();
    let data = std::fs::read_to_string(dir.join("datadir"))
        .map(|d| PathBuf::from(d.trim()))
        .unwrap_or_else(|_| dir.join("data"));
    let postmaster = std::fs::read_to_string(data.join("postmaster.pid")).unwrap();
    pids.push(format!("postmaster={}", postmaster.lines().next().unwrap()));
    let store = tempfile::tempdir().unwrap();
    let serve = ServeChild::start(store.path(), &[]).await;
    pids.push(format!("serve={}", serve.child.id().unwrap()));
    if let Some(chromium) = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
    {
        let child = Command::new(chromium)
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--remote-debugging-port=0",
                "about:blank",
            ])
            .env(
                "TMPDIR",
                std::env::var_os(BROWSER_TMP).unwrap_or_else(|| std::env::temp_dir().into()),
            )
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        std::mem::forget(Reaper::new(Target::Group(child.id()), true));
        pids.push(format!("chromium={}", child.id()));
        // Never waited for: the test process dies first, on purpose.
        std::mem::forget(child);
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    println!(
        "PIDS {} CLUSTER {} DATA {}",
        pids.join(" "),
        dir.display(),
        data.display()
    );
    // No destructor runs: as after Ctrl-C of `cargo test`, or a timeout.
    std::mem::forget((pg, serve, store));
    let _ = Command::new("kill")
        .args(["-KILL", &std::process::id().to_string()])
        .status();
    std::thread::sleep(Duration::from_secs(60));
}

#[test]
fn a_test_process_killed_midway_leaves_no_server_and_no_cluster_behind() {
    if !Pg::available("clean_hands") {
        return;
    }
    let browser_tmp = tempfile::tempdir().unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "clean_hands::child_role_starts_servers_and_dies",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(ROLE, "1")
        .env(BROWSER_TMP, browser_tmp.path())
        // What the child makes in the system temp folder (its server's
        // store and pid file) is in ours, removed when the test ends.
        .env("TMPDIR", browser_tmp.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find_map(|l| l.split_once("PIDS ").map(|(_, rest)| rest))
        .unwrap_or_else(|| {
            panic!(
                "the child printed no PIDS line: {stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    assert!(!out.status.success(), "the child killed itself: {stdout}");
    let (pids, paths) = line.split_once(" CLUSTER ").unwrap();
    let (cluster, data) = paths.split_once(" DATA ").unwrap();
    let pids: Vec<(&str, u32)> = pids
        .split_whitespace()
        .map(|p| {
            let (name, pid) = p.split_once('=').unwrap();
            (name, pid.parse().unwrap())
        })
        .collect();
    assert!(pids.len() >= 2, "{line}");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let living: Vec<_> = pids.iter().filter(|(_, pid)| alive(*pid)).collect();
        let files = [cluster, data]
            .into_iter()
            .filter(|p| std::path::Path::new(p).exists())
            .collect::<Vec<_>>();
        if living.is_empty() && files.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "30 s after the test process died: still alive {living:?}, still on disk {files:?}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// `safe-outcomes demo …` with its own system temp folder (`TMPDIR`), so
/// what it leaves there is its own.
fn demo(tmp: &std::path::Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_safe-outcomes"));
    cmd.arg("demo")
        .args(args)
        .env("TMPDIR", tmp)
        .env_remove("LOG_LEVEL")
        .stdin(Stdio::null());
    cmd
}

fn left_in(tmp: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn the_demo_removes_its_temporary_folder_unless_asked_to_keep_it() {
    let tmp = tempfile::tempdir().unwrap();
    let out = demo(tmp.path(), &[]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("on purpose"),
        "the bundled bad line is explained: {stdout}"
    );
    assert!(stdout.contains("--keep"), "{stdout}");
    assert_eq!(left_in(tmp.path()), Vec::<String>::new());

    let out = demo(tmp.path(), &["--keep"]).output().unwrap();
    assert!(out.status.success());
    let kept = left_in(tmp.path());
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(tmp.path().join(&kept[0]).join("outcomes.jsonl").is_file());
}

#[test]
fn a_demo_on_a_busy_port_names_port_0_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port().to_string();
    let out = demo(tmp.path(), &["--serve", "--port", &port])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("--port 0"), "{stderr}");
    assert_eq!(left_in(tmp.path()), Vec::<String>::new());
}

#[test]
fn ctrl_c_on_a_serving_demo_removes_its_temporary_folder() {
    use std::io::{BufRead, BufReader};
    let tmp = tempfile::tempdir().unwrap();
    let mut child = demo(tmp.path(), &["--serve", "--port", "0"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let serving = lines
        .by_ref()
        .map_while(Result::ok)
        .any(|l| l.starts_with("Dashboard:"));
    assert!(serving, "the demo serves");
    assert_eq!(left_in(tmp.path()).len(), 1, "its folder while it runs");
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let status = child.wait().unwrap();
    assert!(status.code().is_some(), "it exits, not killed: {status:?}");
    assert_eq!(left_in(tmp.path()), Vec::<String>::new());
}

/// Everything in `dir`, hidden entries included, as names.
fn entries(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The tests that spawn children (servers, the demo, a test process killed
/// on purpose) leave nothing in the system temp folder: run them in a child
/// test process whose system temp folder (`TMPDIR`) is a fresh one, count
/// its entries before and after, hidden ones included.
#[test]
fn the_tests_that_spawn_children_leave_nothing_in_the_system_temp_folder() {
    if std::env::var_os(ROLE).is_some() || std::env::var_os(SUITE_ROLE).is_some() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let before = entries(tmp.path());
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "clean_hands::",
            "demo_serve::",
            "--skip",
            "the_tests_that_spawn_children",
            "--test-threads",
            "2",
        ])
        .env(SUITE_ROLE, "1")
        .env("TMPDIR", tmp.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ran = stdout
        .lines()
        .find_map(|l| l.strip_prefix("test result: ok. "))
        .and_then(|l| l.split(' ').next())
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(0);
    assert!(ran >= 5, "the tests that spawn children ran: {stdout}");
    let after = entries(tmp.path());
    assert_eq!(
        (before.len(), after.len()),
        (0, 0),
        "left in the system temp folder: {after:?}"
    );
}
