//! Test-owned processes never outlive the test process. A `Reaper` names a
//! process (or a whole process group: chromedriver and the Chromium it
//! starts) and starts a small watcher in a session of its own, which kills
//! it once the test process is gone — however it ended: a panic, Ctrl-C of
//! `cargo test`, SIGKILL. Dropping the reaper (the test ended normally, or
//! unwound from a panic) kills the group at once when asked to, and retires
//! the watcher. PostgreSQL clusters are held the same way by
//! `scripts/pg-cluster start DIR --holder PID` (`common::pg`).
//!
//! The watcher's token lives under the target directory, like everything a
//! test leaves while it runs.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

/// What the reaper kills: a process, or every process of a group.
#[derive(Debug, Clone, Copy)]
pub enum Target {
    Process(u32),
    Group(u32),
}

impl Target {
    /// The argument `kill` takes: the pid, or minus the group id.
    fn kill_arg(self) -> String {
        match self {
            Target::Process(pid) => pid.to_string(),
            Target::Group(pgid) => format!("-{pgid}"),
        }
    }
}

pub struct Reaper {
    target: Target,
    token: PathBuf,
    /// Kill the target when the reaper drops (not for a child whose own
    /// handle kills and reaps it: its pid may be reused afterwards).
    kill_on_drop: bool,
}

impl Reaper {
    /// Watch `target` on behalf of this test process.
    pub fn new(target: Target, kill_on_drop: bool) -> Reaper {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = target_dir().join("test-guards");
        std::fs::create_dir_all(&dir).expect("target/test-guards");
        let token = dir.join(format!(
            "{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::write(&token, target.kill_arg()).expect("reaper token");
        // While the test process lives and the token is there, wait; then,
        // if the token is still there (the process died without dropping
        // us), kill the target and remove the token.
        let script = format!(
            "while kill -0 {parent} 2>/dev/null && [ -e '{token}' ]; do sleep 0.5; done; \
             if [ -e '{token}' ]; then kill -KILL -- {target} 2>/dev/null; rm -f '{token}'; fi",
            parent = std::process::id(),
            token = token.display(),
            target = target.kill_arg(),
        );
        // `setsid -f`: the watcher forks into a session of its own (no
        // Ctrl-C reaches it, and it is nobody's zombie); setsid itself
        // returns at once.
        let started = Command::new("setsid")
            .args(["-f", "bash", "-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("setsid -f bash: the reaper's watcher");
        assert!(started.success(), "setsid -f bash: {started}");
        Reaper {
            target,
            token,
            kill_on_drop,
        }
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        if self.kill_on_drop {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &self.target.kill_arg()])
                .stderr(Stdio::null())
                .status();
        }
        let _ = std::fs::remove_file(&self.token);
    }
}

/// The target directory: the test binary is target/<profile>/deps/it-….
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors()
        .nth(3)
        .map(Path::to_path_buf)
        .unwrap_or_else(std::env::temp_dir)
}

/// True while process `pid` exists (signal 0 reaches it).
pub fn alive(pid: u32) -> bool {
    Command::new("kill")
        .args(["-0", &pid.to_string()])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
