//! Test clusters: with `SAFE_OUTCOMES_TEST_PG` set to an admin URL every
//! store opened by path is a database of that cluster (`test_database`),
//! so the suites run on PostgreSQL; `test_admin_url` starts a cluster of
//! the process's own when the variable is not set.

use super::{block, checkout_config, describe, Pg};
use crate::{Result, StoreError};

/// Env var holding an admin URL of a PostgreSQL cluster: when set (and no
/// `DATABASE_URL` is given) every store opened by path is a database of
/// that cluster (`test_database`), so the suites run on PostgreSQL.
pub const TEST_PG_ENV: &str = "SAFE_OUTCOMES_TEST_PG";

/// The test cluster's admin URL: `SAFE_OUTCOMES_TEST_PG`, if set.
#[doc(hidden)]
pub fn test_pg_from_env() -> Option<String> {
    std::env::var(TEST_PG_ENV).ok().filter(|u| !u.is_empty())
}

/// An admin URL of a test cluster: `SAFE_OUTCOMES_TEST_PG`, or else one
/// cluster per process started with `scripts/pg-cluster` under
/// `target/test-pg` (for tests that need PostgreSQL whatever the engine).
#[doc(hidden)]
pub fn test_admin_url() -> std::result::Result<String, String> {
    static STARTED: std::sync::OnceLock<std::result::Result<String, String>> =
        std::sync::OnceLock::new();
    if let Some(url) = test_pg_from_env() {
        return Ok(url);
    }
    STARTED
        .get_or_init(|| {
            let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
            // Held by this process: the cluster is destroyed once every
            // process holding it has exited (however it ended).
            let out = std::process::Command::new(root.join("scripts/pg-cluster"))
                .arg("start")
                .arg(root.join("target/test-pg"))
                .args(["--holder", &std::process::id().to_string()])
                .output()
                .map_err(|e| format!("scripts/pg-cluster: {e}"))?;
            let stdout = String::from_utf8_lossy(&out.stdout);
            match stdout.lines().rev().find(|l| l.starts_with("postgres://")) {
                Some(url) if out.status.success() => Ok(url.trim().to_string()),
                _ => Err(format!(
                    "scripts/pg-cluster start failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                )),
            }
        })
        .clone()
}

/// `test_admin_url` for a test that needs PostgreSQL: `None` (said loudly)
/// when there is none, a failure under CI.
#[cfg(test)]
pub(crate) fn test_admin_or_skip() -> Option<String> {
    match test_admin_url() {
        Ok(url) => Some(url),
        Err(e) if std::env::var("CI").is_ok() => panic!("no PostgreSQL in CI: {e}"),
        Err(e) => {
            eprintln!("SKIPPED: {e}");
            None
        }
    }
}

/// The database of the test cluster `admin_url` that stands for the store
/// at `path`: `so_` + 16 hex digits of a hash of the canonical path,
/// created if missing. Reopening the same path reaches the same database.
#[doc(hidden)]
pub fn test_database(admin_url: &str, path: &std::path::Path) -> Result<Pg> {
    test_database_at(admin_url, path, i64::MAX)
}

/// `test_database` with its schema brought up to `version` only (a store
/// an older version left, to upgrade).
#[doc(hidden)]
pub fn test_database_at(admin_url: &str, path: &std::path::Path, version: i64) -> Result<Pg> {
    let name = test_database_name(path);
    create_database(admin_url, &name)?;
    let mut config: tokio_postgres::Config = admin_url
        .parse()
        .map_err(|e| StoreError::Database(format!("{TEST_PG_ENV}: {e}")))?;
    config.dbname(&name);
    Pg::with_config(config, version)
}

/// The name of the test database standing for the store at `path`.
fn test_database_name(path: &std::path::Path) -> String {
    use sha2::{Digest, Sha256};
    let _ = std::fs::create_dir_all(path);
    let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let digest = Sha256::digest(canonical.to_string_lossy().as_bytes());
    format!("so_{}", hex::encode(&digest[..8]))
}

/// The URL of the test database standing for the store at `path` on the
/// cluster of `admin_url` (for a command given `--database-url`).
#[doc(hidden)]
pub fn test_database_url(admin_url: &str, path: &std::path::Path) -> String {
    database_url(admin_url, &test_database_name(path))
}

/// The URL of database `name` on the cluster of `admin_url`.
#[doc(hidden)]
pub fn database_url(admin_url: &str, name: &str) -> String {
    let base = admin_url.split('?').next().unwrap_or(admin_url);
    let root = base.rsplit_once('/').map_or(base, |(root, _)| root);
    format!("{root}/{name}")
}

/// Create database `name` on the cluster of `admin_url` unless it exists.
#[doc(hidden)]
pub fn create_database(admin_url: &str, name: &str) -> Result<()> {
    let config = admin_config(admin_url)?;
    let name = name.to_string();
    block(async move {
        let client = checkout_config(&config).await?;
        if !database_exists(&client, &name).await? {
            // Two processes may create it at once: the loser's "already
            // exists" is fine.
            match client
                .batch_execute(&format!("CREATE DATABASE \"{name}\""))
                .await
            {
                Ok(()) => created().lock().expect("created lock").push(name),
                Err(e) => {
                    let code = e.code();
                    if code != Some(&tokio_postgres::error::SqlState::DUPLICATE_DATABASE)
                        && code != Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION)
                    {
                        return Err(describe(e));
                    }
                }
            }
        }
        Ok(())
    })
}

/// The connection settings of an admin URL.
fn admin_config(admin_url: &str) -> Result<tokio_postgres::Config> {
    admin_url
        .parse()
        .map_err(|e| StoreError::Database(format!("admin URL: {e}")))
}

/// Whether the cluster `client` is connected to has database `name`.
async fn database_exists(client: &tokio_postgres::Client, name: &str) -> Result<bool> {
    let row = client
        .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&name])
        .await
        .map_err(describe)?;
    Ok(row.is_some())
}

/// The databases this process created (`create_database`), not dropped yet.
fn created() -> &'static std::sync::Mutex<Vec<String>> {
    static CREATED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    &CREATED
}

/// Drop every database this process created on the cluster of
/// `admin_url` (`bench --database-url` when it ends: a run leaves
/// nothing behind on the operator's cluster). Connections still open to
/// one are ended (`WITH (FORCE)`). Returns how many were dropped; a
/// failure to drop one is an error naming it, and the rest are still
/// dropped.
#[doc(hidden)]
pub fn drop_created_databases(admin_url: &str) -> Result<usize> {
    let names = std::mem::take(&mut *created().lock().expect("created lock"));
    drop_databases(admin_url, names)
}

/// Drop databases `names` of the cluster of `admin_url`.
fn drop_databases(admin_url: &str, names: Vec<String>) -> Result<usize> {
    let config = admin_config(admin_url)?;
    block(async move {
        let client = checkout_config(&config).await?;
        let mut failed = Vec::new();
        for name in &names {
            let sql = format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)");
            if let Err(e) = client.batch_execute(&sql).await {
                failed.push(format!("{name}: {}", describe(e)));
            }
        }
        if failed.is_empty() {
            Ok(names.len())
        } else {
            Err(StoreError::Database(format!(
                "could not drop {}",
                failed.join("; ")
            )))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether database `name` exists on the cluster of `admin_url`.
    fn exists(admin_url: &str, name: &str) -> bool {
        let config = admin_config(admin_url).unwrap();
        let name = name.to_string();
        block(async move { database_exists(&checkout_config(&config).await?, &name).await })
            .unwrap()
    }

    #[test]
    fn a_database_this_process_created_is_remembered_and_dropped_even_while_connected() {
        let Some(admin) = test_admin_or_skip() else {
            return;
        };
        let name = format!("so_dropped_{}", std::process::id());
        create_database(&admin, &name).unwrap();
        assert!(exists(&admin, &name));
        assert!(created().lock().unwrap().contains(&name), "remembered");
        // Other tests of this process create databases too: take only ours.
        created().lock().unwrap().retain(|n| *n != name);
        let mut config = admin_config(&admin).unwrap();
        config.dbname(&name);
        let open = Pg::with_config(config, i64::MAX).unwrap();
        assert_eq!(drop_databases(&admin, vec![name.clone()]).unwrap(), 1);
        assert!(
            !exists(&admin, &name),
            "dropped with a connection open to it"
        );
        drop(open);
    }
}
