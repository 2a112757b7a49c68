//! The PostgreSQL engine: the store's ordered key space in one table
//! (`kv (k bytea primary key, v bytea)`), counters in `counters` (added to,
//! never overwritten, so replicas don't lose each other's counts), inbox
//! numbers from the `inbox_seq` sequence, the outcomes as a relation of
//! their own (`outcomes`, kept by `writes` in the same statement pipeline as
//! their records), and what several replicas need: unique dedupe keys, row
//! claims (`FOR UPDATE SKIP LOCKED`), advisory locks and leases. The schema
//! is in `migrations/`, applied at start-up under an advisory lock
//! (`schema`).
//!
//! **Async inside, sync outside.** The engine talks to PostgreSQL the way
//! the ecosystem does: `tokio-postgres` connections in a `deadpool-postgres`
//! pool, prepared statements cached per connection, and the statements of a
//! unit's reads or of a commit sent together (pipelined: one round trip).
//! The store's API stays synchronous (the worker is an OS thread; the
//! handlers call the store as they call sled), so the engine owns one tokio
//! runtime per process (`runtime`, two worker threads) that drives every
//! connection: a plain thread runs a statement with `block_on` on that
//! runtime, a caller inside another runtime (a handler) spawns it there and
//! waits for the answer. No connection has a thread of its own.
//!
//! Here: the handle, the runtime, the pool and the transaction a unit pins;
//! statements in `reads` (gets, scans, claims, locks, a unit's prefetch),
//! `writes` (batches, outcomes rows), `inbox` (the group commit), `schema`
//! (migrations, the outcomes backfill), `leases`, `testing` (test clusters).

mod inbox;
mod leases;
mod reads;
mod schema;
pub mod stats;
mod testing;
mod writes;

pub use inbox::GroupEntry;
pub use reads::{Pages, Prefetch};
#[cfg(test)]
pub(crate) use testing::test_admin_or_skip;
pub use testing::{
    create_database, database_url, drop_created_databases, test_admin_url, test_database,
    test_database_at, test_database_url, test_pg_from_env, TEST_PG_ENV,
};

use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod};
use tokio_postgres::NoTls;

use crate::{Result, StoreError};
use stats::Trip;

/// Connections per store, at most.
const MAX_CONNECTIONS: usize = 8;

/// How long a caller waits for a free connection of the pool.
const POOL_WAIT: Duration = Duration::from_secs(30);

/// Per-connection limits: a statement, a wait for a row lock, a connect.
const STATEMENT_TIMEOUT_MS: u64 = 30_000;
const LOCK_TIMEOUT_MS: u64 = 10_000;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The first key byte of named trees (`Engine::open_tree`): above every key
/// of the main key space, which scans of it never reach.
const TREE_BYTE: u8 = 0xFF;

/// Where a named tree's keys live.
pub fn tree_prefix(name: &str) -> Vec<u8> {
    let mut p = vec![TREE_BYTE];
    p.extend_from_slice(name.as_bytes());
    p.push(0);
    p
}

/// What `/status` says of the database.
#[derive(Debug, Clone, Default)]
pub struct Health {
    pub reachable: bool,
    pub last_error: Option<String>,
    /// When `last_error` happened.
    pub last_error_at: Option<chrono::DateTime<chrono::Utc>>,
    /// When a statement last succeeded: after `last_error_at`, the error
    /// is resolved (the database answers again).
    pub last_ok_at: Option<chrono::DateTime<chrono::Utc>>,
}

impl Health {
    /// True when the database has answered since an error at `at`.
    pub fn answered_since(&self, at: chrono::DateTime<chrono::Utc>) -> bool {
        self.last_ok_at.is_some_and(|ok| ok > at)
    }
}

/// A pooled connection as statements get it (shared by the futures of one
/// pipeline).
pub(crate) type Client = Arc<Object>;

/// What a statement returns before the store's error type.
pub(crate) type PgResult<T> = std::result::Result<T, tokio_postgres::Error>;

/// The engine's runtime: one per process, two worker threads, never
/// dropped (a runtime dropped inside another runtime's task panics).
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("pg-engine")
            .enable_all()
            .build()
            .expect("starting the PostgreSQL engine's runtime")
    })
}

/// Run `fut` on the engine's runtime and wait for its answer, from any
/// thread: a plain thread drives it with `block_on`; a thread inside a
/// runtime (where `block_on` panics) spawns it and waits on a channel.
pub(crate) fn block<T: Send + 'static>(
    fut: impl Future<Output = Result<T>> + Send + 'static,
) -> Result<T> {
    if tokio::runtime::Handle::try_current().is_err() {
        return runtime().block_on(fut);
    }
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    runtime().spawn(async move {
        let _ = tx.send(fut.await);
    });
    rx.recv()
        .map_err(|_| StoreError::Database("database: the engine's task failed".into()))?
}

/// A PostgreSQL error as the store reports it.
pub(crate) fn describe(e: tokio_postgres::Error) -> StoreError {
    let message = match e.as_db_error() {
        Some(db) => format!("database: {} ({})", db.message(), db.code().code()),
        None => format!("database: {e}"),
    };
    StoreError::Database(message)
}

/// A pool error as the store reports it ("error connecting to server…"
/// when the database is away).
fn pool_error(e: deadpool_postgres::PoolError) -> StoreError {
    match e {
        deadpool_postgres::PoolError::Backend(e) => describe(e),
        other => StoreError::Database(format!("database: {other}")),
    }
}

/// What every handle of one store shares.
struct Shared {
    pool: Pool,
    /// This store's `application_name` (`safe-outcomes/<pid>-<random>`),
    /// which tells its connections from other replicas'.
    instance: String,
    health: Mutex<Health>,
}

impl Shared {
    fn noted<T>(&self, result: Result<T>) -> Result<T> {
        let mut health = self.health.lock().expect("health lock");
        match &result {
            Ok(_) => {
                health.reachable = true;
                health.last_ok_at = Some(chrono::Utc::now());
            }
            Err(e) => {
                health.reachable = !e.to_string().contains("connect");
                health.last_error = Some(e.to_string());
                health.last_error_at = Some(chrono::Utc::now());
            }
        }
        result
    }
}

/// A connection out of the pool (waiting for one up to `POOL_WAIT`).
async fn checkout(pool: Pool) -> Result<Client> {
    Ok(Arc::new(pool.get().await.map_err(pool_error)?))
}

/// A connection of its own, outside the pool (admin statements).
async fn checkout_config(config: &tokio_postgres::Config) -> Result<tokio_postgres::Client> {
    let (client, connection) = config.connect(NoTls).await.map_err(describe)?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}

/// The transaction a pinned handle runs in: a connection taken and `BEGIN`
/// sent on first use, what the transaction read already (`reads::Memo`),
/// committed by `Pg::commit`, rolled back when dropped otherwise. Once
/// committed (`finished`), the handle's statements run on their own, as an
/// unpinned handle's (what a unit does after its commit — its outputs'
/// landed lines moved, `attribution::move_lines` — is not begun in a
/// transaction that its drop would roll back).
struct Pinned {
    client: Mutex<Option<Client>>,
    memo: Mutex<reads::Memo>,
    finished: std::sync::atomic::AtomicBool,
}

impl Pinned {
    fn finished(&self) -> bool {
        self.finished.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn finish(&self) {
        self.finished
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        if let Some(client) = self.client.get_mut().expect("pinned lock").take() {
            // Waited for: a dropped unit has let go of its claims and locks,
            // and its connection is back in the pool.
            let started = std::time::Instant::now();
            let _ = block(async move {
                let _ = client.batch_execute("ROLLBACK").await;
                drop(client);
                Ok(())
            });
            stats::count(Trip::Rollback, started);
        }
    }
}

/// The engine's handle (cheap to clone). A pinned one (`pinned`) runs every
/// statement in one transaction on one connection.
#[derive(Clone)]
pub struct Pg {
    shared: Arc<Shared>,
    pinned: Option<Arc<Pinned>>,
}

impl Pg {
    /// Connect to the database `url` names and bring its schema up to date.
    pub fn connect(url: &str) -> Result<Pg> {
        let config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| StoreError::Database(format!("DATABASE_URL: {e}")))?;
        Pg::with_config(config, i64::MAX)
    }

    /// A handle on the database `config` names, its schema brought up to
    /// `version` (every migration: `i64::MAX`).
    fn with_config(mut config: tokio_postgres::Config, version: i64) -> Result<Pg> {
        let mut nonce = [0u8; 4];
        let _ = getrandom::getrandom(&mut nonce);
        let instance = format!(
            "safe-outcomes/{}-{}",
            std::process::id(),
            hex::encode(nonce)
        );
        config
            .application_name(&instance)
            .connect_timeout(CONNECT_TIMEOUT)
            .keepalives(true)
            .keepalives_idle(Duration::from_secs(30))
            .options(format!(
                "-c statement_timeout={STATEMENT_TIMEOUT_MS} -c lock_timeout={LOCK_TIMEOUT_MS} \
                 -c idle_in_transaction_session_timeout=300000"
            ));
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(MAX_CONNECTIONS)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(POOL_WAIT))
            .create_timeout(Some(CONNECT_TIMEOUT))
            .recycle_timeout(Some(CONNECT_TIMEOUT))
            .build()
            .map_err(|e| StoreError::Database(format!("database pool: {e}")))?;
        let pg = Pg {
            shared: Arc::new(Shared {
                pool,
                instance,
                health: Mutex::default(),
            }),
            pinned: None,
        };
        pg.migrate_to(version)?;
        Ok(pg)
    }

    /// This store's `application_name`: who holds a lease.
    pub fn instance(&self) -> &str {
        &self.shared.instance
    }

    /// What `/status` says of the database.
    pub fn health(&self) -> Health {
        self.shared.health.lock().expect("health lock").clone()
    }

    /// True when a COMMIT reaches the disk before it returns (`fsync` and
    /// `synchronous_commit` on, PostgreSQL's defaults): what is
    /// acknowledged then survives a power loss of the database's machine.
    pub fn commits_are_synced(&self) -> Result<bool> {
        let sql = "SELECT current_setting('fsync'), current_setting('synchronous_commit')";
        self.one_row(sql, |row| {
            let (fsync, sync_commit): (String, String) = (row.get(0), row.get(1));
            fsync == "on" && !matches!(sync_commit.as_str(), "off" | "local")
        })
    }

    /// Check the database answers (for `/status`), noting the result.
    pub fn ping(&self) -> Result<()> {
        self.run(|c| async move { c.batch_execute("SELECT 1").await })
    }

    /// A handle whose statements all run in one transaction on one
    /// connection, begun on first use (`commit`; dropped: rolled back).
    pub fn pinned(&self) -> Pg {
        Pg {
            shared: self.shared.clone(),
            pinned: Some(Arc::new(Pinned {
                client: Mutex::new(None),
                memo: Mutex::default(),
                finished: Default::default(),
            })),
        }
    }

    /// True for a pinned handle whose transaction is not committed yet.
    pub fn is_pinned(&self) -> bool {
        self.pinned.as_ref().is_some_and(|p| !p.finished())
    }

    /// Run the statements `f` makes on a connection: the pinned one, inside
    /// its transaction, or one out of the pool.
    pub(crate) fn run<T, F, Fut>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(Client) -> Fut + Send + 'static,
        Fut: Future<Output = PgResult<T>> + Send + 'static,
    {
        self.run_as(Trip::Other, f)
    }

    /// `run`, counted as a round trip of `kind` (`stats`).
    pub(crate) fn run_as<T, F, Fut>(&self, kind: Trip, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(Client) -> Fut + Send + 'static,
        Fut: Future<Output = PgResult<T>> + Send + 'static,
    {
        let started = std::time::Instant::now();
        let result = match self.pinned.as_ref().filter(|p| !p.finished()) {
            Some(pinned) => self.pinned_client(pinned).and_then(|(c, begin)| {
                block(async move {
                    if !begin {
                        return f(c).await.map_err(describe);
                    }
                    // `BEGIN` goes out first, the statement right behind it.
                    let (begun, result) = tokio::join!(c.batch_execute("BEGIN"), f(c.clone()));
                    begun.map_err(describe)?;
                    result.map_err(describe)
                })
            }),
            None => {
                let pool = self.shared.pool.clone();
                block(async move { f(checkout(pool).await?).await.map_err(describe) })
            }
        };
        stats::count(kind, started);
        self.shared.noted(result)
    }

    /// The one row `sql` (without parameters) answers, as `read` reads it.
    pub(crate) fn one_row<T: Send + 'static>(
        &self,
        sql: &'static str,
        read: impl FnOnce(tokio_postgres::Row) -> T + Send + 'static,
    ) -> Result<T> {
        self.run(move |c| async move { Ok(read(c.query_one(sql, &[]).await?)) })
    }

    /// The pinned transaction's connection, and whether its `BEGIN` is
    /// still to be sent (true once: on a connection just taken from the
    /// pool, which the caller sends `BEGIN` on first, in the same round
    /// trip as its own statements).
    fn pinned_client(&self, pinned: &Pinned) -> Result<(Client, bool)> {
        let mut held = pinned.client.lock().expect("pinned lock");
        if let Some(client) = held.as_ref() {
            return Ok((client.clone(), false));
        }
        let pool = self.shared.pool.clone();
        let client = block(async move { checkout(pool).await })?;
        *held = Some(client.clone());
        Ok((client, true))
    }

    /// Commit a pinned handle's transaction (nothing begun: nothing to do).
    pub fn commit(&self) -> Result<()> {
        let Some(pinned) = &self.pinned else {
            return Ok(());
        };
        pinned.finish();
        let Some(client) = pinned.client.lock().expect("pinned lock").take() else {
            return Ok(());
        };
        let result = block(async move {
            let result = client.batch_execute("COMMIT").await.map_err(describe);
            if result.is_err() {
                let _ = client.batch_execute("ROLLBACK").await;
            }
            result
        });
        self.shared.noted(result)
    }
}

/// A session advisory lock (`Pg::try_session_lock`), released when dropped.
pub struct SessionLock {
    client: Option<Client>,
}

impl Drop for SessionLock {
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            let _ = block(async move {
                let _ = client
                    .batch_execute("SELECT pg_advisory_unlock_all()")
                    .await;
                drop(client);
                Ok(())
            });
        }
    }
}

impl Pg {
    /// Take the session advisory lock on `key` on a connection of its own,
    /// if no one holds it; it is held until the guard drops.
    pub fn try_session_lock(&self, key: &str) -> Result<Option<SessionLock>> {
        let pool = self.shared.pool.clone();
        let key = key.to_string();
        let taken = block(async move {
            let client = checkout(pool).await?;
            let row = client
                .query_one(
                    "SELECT pg_try_advisory_lock(hashtextextended($1, 1))",
                    &[&key],
                )
                .await
                .map_err(describe)?;
            Ok(row.get::<_, bool>(0).then_some(client))
        });
        Ok(self.shared.noted(taken)?.map(|client| SessionLock {
            client: Some(client),
        }))
    }
}
