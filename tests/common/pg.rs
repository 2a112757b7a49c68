//! A real PostgreSQL for the tests that need one (replicas, database down):
//! the server `SAFE_OUTCOMES_TEST_PG` names (an admin URL, as CI sets it),
//! else a throwaway cluster of the test's own, started with
//! `scripts/pg-cluster` under the target directory and destroyed on drop.
//! Without either, the test fails when env `CI` is set and otherwise says
//! loudly that it skipped.
//!
//! Databases are made and dropped with `psql` (from the cluster's binaries),
//! so the tests depend on no database crate.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The env var that points the suite at a PostgreSQL server (admin URL).
pub const TEST_PG: &str = "SAFE_OUTCOMES_TEST_PG";

/// A PostgreSQL server to make databases on.
pub struct Pg {
    /// `postgres://user@host:port/postgres`.
    pub admin: String,
    /// Our own cluster, when we started one.
    cluster: Option<Cluster>,
}

/// A throwaway cluster in a directory under target/: `scripts/pg-cluster`.
pub struct Cluster {
    dir: PathBuf,
    _keep: tempfile::TempDir,
}

impl Pg {
    /// `SAFE_OUTCOMES_TEST_PG` if set, else a cluster of our own if the
    /// binaries are there; None (after a loud skip notice) if neither.
    /// Panics under CI when there is no PostgreSQL.
    pub fn get(test: &str) -> Option<Pg> {
        if let Some(admin) = std::env::var(TEST_PG).ok().filter(|u| !u.is_empty()) {
            return Some(Pg {
                admin,
                cluster: None,
            });
        }
        Self::own(test)
    }

    /// Can this test start a cluster of its own? False after a loud skip
    /// notice (a failure under CI) when the binaries are missing.
    pub fn available(test: &str) -> bool {
        if binaries_present() {
            return true;
        }
        skip_or_fail(test);
        false
    }

    /// Always a cluster of our own (a test that stops and starts it).
    pub fn own(test: &str) -> Option<Pg> {
        if !binaries_present() {
            skip_or_fail(test);
            return None;
        }
        let cluster = Cluster::start();
        let admin = cluster.url();
        Some(Pg {
            admin,
            cluster: Some(cluster),
        })
    }

    /// The cluster we started (None when the server came from the env).
    pub fn cluster(&self) -> Option<&Cluster> {
        self.cluster.as_ref()
    }

    /// The cluster's directory (None when the server came from the env).
    pub fn cluster_dir(&self) -> Option<&Path> {
        self.cluster.as_ref().map(|c| c.dir.as_path())
    }

    /// A fresh, empty database (dropped first if a previous run left it);
    /// returns its URL.
    pub fn fresh_database(&self, name: &str) -> String {
        assert!(
            name.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
            "database name {name:?}"
        );
        self.psql(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
        self.psql(&format!("CREATE DATABASE {name}"));
        self.url_of(name)
    }

    /// Drop a database (best effort: the test is over).
    pub fn drop_database(&self, name: &str) {
        let _ = self.try_psql(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
    }

    /// The URL of database `name` on this server.
    pub fn url_of(&self, name: &str) -> String {
        let base = self.admin.split('?').next().unwrap_or(&self.admin);
        let root = base.rsplit_once('/').map(|(r, _)| r).unwrap_or(base);
        format!("{root}/{name}")
    }

    fn psql(&self, sql: &str) {
        if let Err(e) = self.try_psql(sql) {
            panic!("psql {sql:?} on {}: {e}", self.admin);
        }
    }

    fn try_psql(&self, sql: &str) -> Result<(), String> {
        let out = Command::new(psql())
            .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", &self.admin, "-c", sql])
            .output()
            .map_err(|e| format!("cannot run psql: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    }
}

impl Cluster {
    fn start() -> Cluster {
        let parent = target_dir().join("pg-tests");
        std::fs::create_dir_all(&parent).unwrap();
        let keep = tempfile::tempdir_in(&parent).unwrap();
        let dir = keep.path().join("cluster");
        let cluster = Cluster { dir, _keep: keep };
        cluster.run("start");
        cluster
    }

    /// The admin URL (the same port across stop and start).
    pub fn url(&self) -> String {
        self.run("url")
    }

    /// `pg_ctl stop -m fast`: every connection is cut.
    pub fn stop(&self) {
        self.run("stop");
    }

    /// Start it again, on the same port.
    pub fn start_again(&self) -> String {
        self.run("start")
    }

    fn run(&self, cmd: &str) -> String {
        let mut command = Command::new(script());
        command.args([cmd, self.dir.to_str().unwrap()]);
        if cmd == "start" {
            // Held by this process: destroyed by a watcher if the process
            // ends without dropping the cluster (Ctrl-C, SIGKILL).
            command.args(["--holder", &std::process::id().to_string()]);
        }
        let out = command.output().expect("run scripts/pg-cluster");
        assert!(
            out.status.success(),
            "scripts/pg-cluster {cmd}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(script())
            .args(["destroy", self.dir.to_str().unwrap()])
            .output();
    }
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/pg-cluster")
}

use super::guard::target_dir;

/// The directory of the PostgreSQL binaries, newest version first
/// (Debian's layout), or None to use PATH.
fn bin_dir() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("bin"))
        .filter(|d| d.join("initdb").is_file())
        .collect();
    dirs.sort_by_key(|d| {
        d.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0)
    });
    dirs.pop()
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
        .unwrap_or(false)
}

fn binaries_present() -> bool {
    bin_dir().is_some() || on_path("initdb")
}

fn psql() -> PathBuf {
    bin_dir()
        .map(|d| d.join("psql"))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("psql"))
}

fn skip_or_fail(test: &str) {
    if std::env::var_os("CI").is_some() {
        panic!(
            "{test}: needs PostgreSQL: set {TEST_PG} to an admin URL or install the \
             binaries (Debian's `postgresql` package); CI must run it"
        );
    }
    eprintln!(
        "\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\
         !!! SKIPPED {test}: no PostgreSQL ({TEST_PG} unset, no initdb under\n\
         !!! /usr/lib/postgresql/*/bin or on PATH)\n\
         !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n"
    );
}

/// A database name for this test run: `prefix_<pid>`.
pub fn database_name(prefix: &str) -> String {
    format!("{prefix}_{}", std::process::id())
}
