//! The PostgreSQL engine: the store's ordered key space in one table
//! (`kv (k bytea primary key, v bytea)`), counters in `counters` (added to,
//! never overwritten, so replicas don't lose each other's counts), inbox
//! numbers from the `inbox_seq` sequence, and what several replicas need:
//! unique dedupe keys, row claims (`FOR UPDATE SKIP LOCKED`) and advisory
//! locks. The schema is in `migrations/`, applied at start-up under an
//! advisory lock.
//!
//! The store's API is synchronous and is called from plain threads and from
//! inside tokio tasks, where the `postgres` client (a `block_on` of its
//! own) would panic. So each connection lives on a thread of its own: a
//! caller sends it a job and waits for the answer on a `std::sync::mpsc`
//! channel, which never panics inside a runtime. A small pool hands the
//! connections out; a connection that broke reconnects on its next job
//! (never inside a transaction: a job of a transaction on a reconnected
//! connection fails instead).

use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound;
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use postgres::types::ToSql;
use postgres::{Client, NoTls};

use super::{Batch, Op};
use crate::store::{keys, Result, StoreError};

/// The schema, oldest first: (version, SQL).
const MIGRATIONS: &[(i64, &str)] = &[(1, include_str!("../../../migrations/0001_kv.sql"))];

/// Advisory lock key held while migrations run (any constant of our own).
const MIGRATION_LOCK: i64 = 0x5afe_0001;

/// Keys read per page of a scan: the first page is small (a scan is often
/// asked for its first key only), the next ones up to `PAGE`.
const PAGE: i64 = 256;
const FIRST_PAGE: i64 = 16;

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
}

type Job = Box<dyn FnOnce(&mut ConnState) + Send>;

/// What a connection's thread owns.
struct ConnState {
    config: postgres::Config,
    client: Option<Client>,
    /// Bumped at every (re)connect: a transaction begun on one generation
    /// must not go on on the next.
    generation: u64,
}

impl ConnState {
    fn client(&mut self) -> std::result::Result<&mut Client, postgres::Error> {
        if self.client.as_ref().is_none_or(|c| c.is_closed()) {
            self.client = None;
            self.client = Some(self.config.connect(NoTls)?);
            self.generation += 1;
        }
        Ok(self.client.as_mut().expect("connected above"))
    }
}

/// A connection: a thread that runs jobs on its client, one at a time.
struct Conn {
    tx: mpsc::Sender<Job>,
}

impl Conn {
    fn spawn(config: postgres::Config) -> Result<Conn> {
        let (tx, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("pg-conn".into())
            .spawn(move || {
                let mut state = ConnState {
                    config,
                    client: None,
                    generation: 0,
                };
                for job in rx {
                    job(&mut state);
                }
            })
            .map_err(|e| StoreError::Database(format!("starting a connection thread: {e}")))?;
        Ok(Conn { tx })
    }

    /// Run `f` on the client (connecting first if need be); with `in_tx`,
    /// only on the connection generation a transaction was begun on.
    fn call<T: Send + 'static>(
        &self,
        in_tx: Option<u64>,
        f: impl FnOnce(&mut Client) -> std::result::Result<T, postgres::Error> + Send + 'static,
    ) -> Result<(T, u64)> {
        let (reply, answer) = mpsc::channel();
        let job: Job = Box::new(move |state: &mut ConnState| {
            let lost = in_tx.is_some_and(|g| {
                g != state.generation || state.client.as_ref().is_none_or(|c| c.is_closed())
            });
            let result = if lost {
                Err(StoreError::Database(
                    "database: the connection was lost inside a transaction".into(),
                ))
            } else {
                state
                    .client()
                    .and_then(f)
                    .map(|t| (t, state.generation))
                    .map_err(describe)
            };
            if result.is_err() && state.client.as_ref().is_some_and(|c| c.is_closed()) {
                state.client = None;
            }
            let _ = reply.send(result);
        });
        self.tx
            .send(job)
            .map_err(|_| StoreError::Database("database: connection thread gone".into()))?;
        answer
            .recv()
            .map_err(|_| StoreError::Database("database: connection thread gone".into()))?
    }
}

/// A PostgreSQL error as the store reports it.
fn describe(e: postgres::Error) -> StoreError {
    let message = match e.as_db_error() {
        Some(db) => format!("database: {} ({})", db.message(), db.code().code()),
        None => format!("database: {e}"),
    };
    StoreError::Database(message)
}

struct Pool {
    config: postgres::Config,
    /// This store's `application_name` (`safe-outcomes/<pid>-<random>`),
    /// which tells its connections from other replicas'.
    instance: String,
    idle: Mutex<(Vec<Conn>, usize)>,
    freed: Condvar,
    health: Mutex<Health>,
}

impl Pool {
    fn checkout(&self) -> Result<Conn> {
        let deadline = Instant::now() + POOL_WAIT;
        let mut idle = self.idle.lock().expect("pool lock");
        loop {
            if let Some(conn) = idle.0.pop() {
                return Ok(conn);
            }
            if idle.1 < MAX_CONNECTIONS {
                idle.1 += 1;
                drop(idle);
                return Conn::spawn(self.config.clone()).inspect_err(|_| {
                    self.idle.lock().expect("pool lock").1 -= 1;
                });
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(StoreError::Database(
                    "database: no free connection in the pool".into(),
                ));
            }
            idle = self.freed.wait_timeout(idle, left).expect("pool lock").0;
        }
    }

    fn checkin(&self, conn: Conn) {
        self.idle.lock().expect("pool lock").0.push(conn);
        self.freed.notify_one();
    }

    fn noted<T>(&self, result: Result<T>) -> Result<T> {
        let mut health = self.health.lock().expect("health lock");
        match &result {
            Ok(_) => health.reachable = true,
            Err(e) => {
                health.reachable = !e.to_string().contains("connect");
                health.last_error = Some(e.to_string());
            }
        }
        result
    }
}

/// A connection held for a transaction (`Pg::pinned`): begun on first use,
/// committed by `Pg::commit`, rolled back when dropped otherwise.
struct Pinned {
    pool: Arc<Pool>,
    /// The connection and the generation its transaction began on.
    state: Mutex<Option<(Conn, u64)>>,
}

impl Drop for Pinned {
    fn drop(&mut self) {
        if let Some((conn, _)) = self.state.get_mut().expect("pinned lock").take() {
            // Jobs run in order: the rollback precedes the next user's.
            let _ = conn.call(None, |c| c.batch_execute("ROLLBACK"));
            self.pool.checkin(conn);
        }
    }
}

/// The engine's handle (cheap to clone). A pinned one (`pinned`) runs every
/// statement in one transaction on one connection.
#[derive(Clone)]
pub struct Pg {
    pool: Arc<Pool>,
    pinned: Option<Arc<Pinned>>,
}

impl Pg {
    /// Connect to the database `url` names and bring its schema up to date.
    pub fn connect(url: &str) -> Result<Pg> {
        let config: postgres::Config = url
            .parse()
            .map_err(|e| StoreError::Database(format!("DATABASE_URL: {e}")))?;
        Pg::with_config(config)
    }

    fn with_config(mut config: postgres::Config) -> Result<Pg> {
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
            .options(&format!(
                "-c statement_timeout={STATEMENT_TIMEOUT_MS} -c lock_timeout={LOCK_TIMEOUT_MS} \
                 -c idle_in_transaction_session_timeout=300000"
            ));
        let pg = Pg {
            pool: Arc::new(Pool {
                config,
                instance,
                idle: Mutex::new((Vec::new(), 0)),
                freed: Condvar::new(),
                health: Mutex::default(),
            }),
            pinned: None,
        };
        pg.migrate()?;
        Ok(pg)
    }

    /// Apply the migrations not applied yet, each in its own transaction,
    /// under an advisory lock (replicas starting together take turns).
    fn migrate(&self) -> Result<()> {
        self.run(|c| {
            c.execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])?;
            let result = (|| {
                c.batch_execute(
                    "CREATE TABLE IF NOT EXISTS schema_migrations (
                        version bigint PRIMARY KEY,
                        applied_at timestamptz NOT NULL DEFAULT now())",
                )?;
                for (version, sql) in MIGRATIONS {
                    let mut tx = c.transaction()?;
                    let done = tx
                        .query_opt(
                            "SELECT 1 FROM schema_migrations WHERE version = $1",
                            &[version],
                        )?
                        .is_some();
                    if !done {
                        tx.batch_execute(sql)?;
                        tx.execute(
                            "INSERT INTO schema_migrations (version) VALUES ($1)",
                            &[version],
                        )?;
                    }
                    tx.commit()?;
                }
                Ok(())
            })();
            c.execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK])?;
            result
        })
    }

    /// True when another store (another replica, or another process)
    /// has connections to this database.
    pub fn others_connected(&self) -> Result<bool> {
        let me = self.pool.instance.clone();
        self.run(move |c| {
            let row = c.query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
                 AND application_name LIKE 'safe-outcomes/%' AND application_name <> $1",
                &[&me],
            )?;
            Ok(row.get::<_, i64>(0) > 0)
        })
    }

    /// What `/status` says of the database.
    pub fn health(&self) -> Health {
        self.pool.health.lock().expect("health lock").clone()
    }

    /// Check the database answers (for `/status`), noting the result.
    /// True when a COMMIT reaches the disk before it returns (`fsync` and
    /// `synchronous_commit` on, PostgreSQL's defaults): what is
    /// acknowledged then survives a power loss of the database's machine.
    pub fn commits_are_synced(&self) -> Result<bool> {
        self.run(|c| {
            let row = c.query_one(
                "SELECT current_setting('fsync'), current_setting('synchronous_commit')",
                &[],
            )?;
            let (fsync, sync_commit): (String, String) = (row.get(0), row.get(1));
            Ok(fsync == "on" && !matches!(sync_commit.as_str(), "off" | "local"))
        })
    }

    pub fn ping(&self) -> Result<()> {
        self.run(|c| c.batch_execute("SELECT 1"))
    }

    /// A handle whose statements all run in one transaction on one
    /// connection, begun on first use (`commit`; dropped: rolled back).
    pub fn pinned(&self) -> Pg {
        Pg {
            pool: self.pool.clone(),
            pinned: Some(Arc::new(Pinned {
                pool: self.pool.clone(),
                state: Mutex::new(None),
            })),
        }
    }

    /// True for a pinned handle.
    pub fn is_pinned(&self) -> bool {
        self.pinned.is_some()
    }

    /// Run `f` on a connection: the pinned one, inside its transaction, or
    /// any free one.
    fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Client) -> std::result::Result<T, postgres::Error> + Send + 'static,
    ) -> Result<T> {
        let result = match &self.pinned {
            Some(pinned) => self.run_pinned(pinned, f),
            None => {
                let conn = self.pool.checkout()?;
                let result = conn.call(None, f).map(|(t, _)| t);
                self.pool.checkin(conn);
                result
            }
        };
        self.pool.noted(result)
    }

    fn run_pinned<T: Send + 'static>(
        &self,
        pinned: &Pinned,
        f: impl FnOnce(&mut Client) -> std::result::Result<T, postgres::Error> + Send + 'static,
    ) -> Result<T> {
        let mut state = pinned.state.lock().expect("pinned lock");
        if state.is_none() {
            let conn = self.pool.checkout()?;
            match conn.call(None, |c| c.batch_execute("BEGIN")) {
                Ok(((), generation)) => *state = Some((conn, generation)),
                Err(e) => {
                    self.pool.checkin(conn);
                    return Err(e);
                }
            }
        }
        let (conn, generation) = state.as_ref().expect("begun above");
        conn.call(Some(*generation), f).map(|(t, _)| t)
    }

    /// Commit a pinned handle's transaction (nothing begun: nothing to do).
    pub fn commit(&self) -> Result<()> {
        let Some(pinned) = &self.pinned else {
            return Ok(());
        };
        let taken = pinned.state.lock().expect("pinned lock").take();
        let Some((conn, generation)) = taken else {
            return Ok(());
        };
        let result = conn.call(Some(generation), |c| c.batch_execute("COMMIT"));
        if result.is_err() {
            let _ = conn.call(None, |c| c.batch_execute("ROLLBACK"));
        }
        self.pool.checkin(conn);
        self.pool.noted(result.map(|_| ()))
    }

    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        if let Some(name) = counter_name(key) {
            return self.run(move |c| {
                let row = c.query_opt("SELECT value FROM counters WHERE name = $1", &[&name])?;
                Ok(row.map(|r| (r.get::<_, i64>(0).max(0) as u64).to_be_bytes().to_vec()))
            });
        }
        let key = key.to_vec();
        self.run(move |c| {
            let row = c.query_opt("SELECT v FROM kv WHERE k = $1", &[&key])?;
            Ok(row.map(|r| r.get::<_, Vec<u8>>(0)))
        })
    }

    /// Number of keys of the main key space.
    pub fn len(&self) -> Result<usize> {
        self.run(|c| {
            let row = c.query_one("SELECT count(*) FROM kv WHERE k < $1", &[&vec![TREE_BYTE]])?;
            Ok(row.get::<_, i64>(0) as usize)
        })
    }

    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Scan `[start, end)` page by page.
    pub fn pages(&self, start: Bound<Vec<u8>>, end: Bound<Vec<u8>>) -> Pages {
        Pages {
            pg: self.clone(),
            start,
            end,
            buf: VecDeque::new(),
            done: false,
            claim: false,
            page: FIRST_PAGE,
        }
    }

    /// Claim up to `limit` keys of `[start, end)` for this transaction (a
    /// pinned handle): rows other transactions hold are skipped.
    pub fn claim(
        &self,
        start: Vec<u8>,
        end: Vec<u8>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let mut pages = Pages {
            pg: self.clone(),
            start: Bound::Included(start),
            end: Bound::Excluded(end),
            buf: VecDeque::new(),
            done: false,
            claim: true,
            page: FIRST_PAGE,
        };
        pages.fetch(limit as i64)?;
        Ok(pages.buf.into_iter().collect())
    }

    /// Take the transaction-scoped advisory lock on `key` if no other
    /// transaction holds it (never waits).
    pub fn try_xact_lock(&self, key: &str) -> Result<bool> {
        let key = key.to_string();
        self.run(move |c| {
            let row = c.query_one(
                "SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))",
                &[&key],
            )?;
            Ok(row.get::<_, bool>(0))
        })
    }

    /// Take the session advisory lock on `key` on a connection of its own,
    /// if no one holds it; it is held until the guard drops.
    pub fn try_session_lock(&self, key: &str) -> Result<Option<SessionLock>> {
        let conn = self.pool.checkout()?;
        let k = key.to_string();
        let taken = conn.call(None, move |c| {
            let row = c.query_one(
                "SELECT pg_try_advisory_lock(hashtextextended($1, 1))",
                &[&k],
            )?;
            Ok(row.get::<_, bool>(0))
        });
        match self.pool.noted(taken.map(|(t, _)| t)) {
            Ok(true) => Ok(Some(SessionLock {
                pool: self.pool.clone(),
                conn: Some(conn),
            })),
            other => {
                self.pool.checkin(conn);
                other.map(|_| None)
            }
        }
    }

    /// Apply a batch: in the pinned transaction, or in one of its own.
    pub fn apply(&self, batch: Batch) -> Result<()> {
        let writes = Writes::from(batch);
        if writes.is_empty() {
            return Ok(());
        }
        if self.pinned.is_some() {
            return self.run(move |c| writes.execute(c));
        }
        self.run(move |c| {
            let mut tx = c.transaction()?;
            writes.execute(&mut tx)?;
            tx.commit()
        })
    }

    /// A new upload id (`store::staging`).
    pub fn next_upload_id(&self) -> Result<u64> {
        self.run(|c| {
            let row = c.query_one("SELECT nextval('upload_ids')", &[])?;
            Ok(row.get::<_, i64>(0) as u64)
        })
    }

    /// The highest inbox number handed out (0: none yet).
    pub fn last_inbox_seq(&self) -> Result<u64> {
        self.run(|c| {
            let row = c.query_one(
                "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM inbox_seq",
                &[],
            )?;
            Ok(row.get::<_, i64>(0) as u64)
        })
    }

    /// `n` new inbox numbers, ascending.
    pub fn next_inbox_seqs(&self, n: usize) -> Result<Vec<u64>> {
        let n = n as i64;
        self.run(move |c| next_seqs(c, n))
    }

    /// Move the inbox sequence to at least `seq` (`migrate`).
    pub fn raise_inbox_seq(&self, seq: u64) -> Result<()> {
        let seq = seq as i64;
        self.run(move |c| {
            c.execute(
                "SELECT setval('inbox_seq', GREATEST($1, (SELECT last_value FROM inbox_seq)), \
                 $1 > 0 OR (SELECT is_called FROM inbox_seq))",
                &[&seq],
            )?;
            Ok(())
        })
    }

    /// Where `migrate` stopped copying `source`: (last key, keys copied).
    pub fn migrate_progress(&self, source: &str) -> Result<Option<(Vec<u8>, u64)>> {
        let source = source.to_string();
        self.run(move |c| {
            let row = c.query_opt(
                "SELECT last_key, copied FROM migrate_progress WHERE source = $1",
                &[&source],
            )?;
            Ok(row.map(|r| (r.get::<_, Vec<u8>>(0), r.get::<_, i64>(1) as u64)))
        })
    }

    /// Record how far `migrate` copied `source`.
    pub fn save_migrate_progress(&self, source: &str, last_key: &[u8], copied: u64) -> Result<()> {
        let (source, last_key, copied) = (source.to_string(), last_key.to_vec(), copied as i64);
        self.run(move |c| {
            c.execute(
                "INSERT INTO migrate_progress (source, last_key, copied) VALUES ($1, $2, $3) \
                 ON CONFLICT (source) DO UPDATE SET last_key = excluded.last_key, copied = excluded.copied",
                &[&source, &last_key, &copied],
            )?;
            Ok(())
        })
    }

    /// Move the upload id sequence to at least `id` (`migrate`).
    pub fn raise_upload_ids(&self, id: u64) -> Result<()> {
        let id = id.max(1) as i64;
        self.run(move |c| {
            c.execute(
                "SELECT setval('upload_ids', GREATEST($1, (SELECT last_value FROM upload_ids)))",
                &[&id],
            )?;
            Ok(())
        })
    }

    /// One group commit of the inbox, in one transaction: `prune` removed,
    /// each entry's dedupe key inserted unless present (`ON CONFLICT DO
    /// NOTHING`: a duplicate, `None`), the stored ones numbered from the
    /// sequence, and the counters added to. Returns each entry's number.
    pub fn enqueue_group(
        &self,
        prune: Vec<Vec<u8>>,
        entries: Vec<GroupEntry>,
    ) -> Result<Vec<Option<u64>>> {
        self.run(move |c| {
            let mut tx = c.transaction()?;
            if !prune.is_empty() {
                tx.execute("DELETE FROM kv WHERE k = ANY($1)", &[&prune])?;
            }
            let dedupe: Vec<Vec<u8>> = entries.iter().map(|e| e.dedupe_key.clone()).collect();
            let empty: Vec<Vec<u8>> = vec![Vec::new(); dedupe.len()];
            let inserted: std::collections::HashSet<Vec<u8>> = tx
                .query(
                    "INSERT INTO kv (k, v) SELECT * FROM unnest($1::bytea[], $2::bytea[]) \
                     ON CONFLICT (k) DO NOTHING RETURNING k",
                    &[&dedupe, &empty],
                )?
                .into_iter()
                .map(|r| r.get::<_, Vec<u8>>(0))
                .collect();
            let mut seqs = next_seqs(&mut tx, inserted.len() as i64)?.into_iter();
            let mut batch = Batch::default();
            let mut results = Vec::with_capacity(entries.len());
            let mut duplicates = 0i64;
            for entry in entries {
                if !inserted.contains(&entry.dedupe_key) {
                    duplicates += 1;
                    results.push(None);
                    continue;
                }
                let seq = seqs.next().expect("one number per stored entry");
                entry.write(seq, &mut batch);
                results.push(Some(seq));
            }
            let stored = results.iter().flatten().count() as i64;
            batch.add(keys::counter(crate::store::counter::RECEIVED), stored);
            batch.add(keys::counter(crate::store::counter::DUPLICATES), duplicates);
            Writes::from(batch).execute(&mut tx)?;
            tx.commit()?;
            Ok(results)
        })
    }
}

/// `n` numbers of `inbox_seq`, ascending.
fn next_seqs(
    c: &mut impl postgres::GenericClient,
    n: i64,
) -> std::result::Result<Vec<u64>, postgres::Error> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let mut seqs: Vec<u64> = c
        .query(
            "SELECT nextval('inbox_seq') FROM generate_series(1, $1::bigint)",
            &[&n],
        )?
        .into_iter()
        .map(|r| r.get::<_, i64>(0) as u64)
        .collect();
    seqs.sort_unstable();
    Ok(seqs)
}

/// One item of an inbox group commit.
pub struct GroupEntry {
    pub dedupe_key: Vec<u8>,
    /// The item, encoded.
    pub item: Vec<u8>,
    /// The dedupe key's expiry entry and when it was stored (deliveries).
    pub expiry: Option<(Vec<u8>, i64)>,
    /// The upload's committed marker (`ManifestChunks`).
    pub marker: Option<Vec<u8>>,
}

impl GroupEntry {
    fn write(self, seq: u64, batch: &mut Batch) {
        batch.insert(keys::inbox_queue(seq), &self.item);
        let mut dedupe_value = seq.to_be_bytes().to_vec();
        if let Some((expiry_key, millis)) = self.expiry {
            dedupe_value.extend_from_slice(&millis.to_be_bytes());
            batch.insert(expiry_key, []);
        }
        batch.insert(&self.dedupe_key, dedupe_value);
        if let Some(marker) = self.marker {
            batch.insert(marker, []);
        }
    }
}

/// A session advisory lock (`Pg::try_session_lock`), released when dropped.
pub struct SessionLock {
    pool: Arc<Pool>,
    conn: Option<Conn>,
}

impl Drop for SessionLock {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            let _ = conn.call(None, |c| c.batch_execute("SELECT pg_advisory_unlock_all()"));
            self.pool.checkin(conn);
        }
    }
}

/// The name of the counter under an `m/` key.
fn counter_name(key: &[u8]) -> Option<String> {
    key.strip_prefix(keys::COUNTER)
        .map(|n| String::from_utf8_lossy(n).into_owned())
}

/// A batch as statements: the last write of each key wins, as in sled.
#[derive(Default)]
struct Writes {
    kv: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    /// Counter name → (value set, then added).
    counters: BTreeMap<String, (Option<i64>, i64)>,
}

impl From<Batch> for Writes {
    fn from(batch: Batch) -> Writes {
        let mut w = Writes::default();
        for op in batch.ops {
            match op {
                Op::Insert(k, v) => match counter_name(&k) {
                    Some(name) => {
                        let value = v.try_into().map(u64::from_be_bytes).unwrap_or(0) as i64;
                        w.counters.insert(name, (Some(value), 0));
                    }
                    None => {
                        w.kv.insert(k, Some(v));
                    }
                },
                Op::Remove(k) => match counter_name(&k) {
                    Some(name) => {
                        w.counters.insert(name, (Some(0), 0));
                    }
                    None => {
                        w.kv.insert(k, None);
                    }
                },
                Op::Add(k, delta) => {
                    let name =
                        counter_name(&k).unwrap_or_else(|| String::from_utf8_lossy(&k).into());
                    w.counters.entry(name).or_default().1 += delta;
                }
            }
        }
        w
    }
}

impl Writes {
    fn is_empty(&self) -> bool {
        self.kv.is_empty() && self.counters.is_empty()
    }

    fn execute(
        self,
        c: &mut impl postgres::GenericClient,
    ) -> std::result::Result<(), postgres::Error> {
        let (mut put_k, mut put_v, mut gone) = (Vec::new(), Vec::new(), Vec::new());
        for (k, v) in self.kv {
            match v {
                Some(v) => {
                    put_k.push(k);
                    put_v.push(v);
                }
                None => gone.push(k),
            }
        }
        if !gone.is_empty() {
            c.execute("DELETE FROM kv WHERE k = ANY($1)", &[&gone])?;
        }
        if !put_k.is_empty() {
            c.execute(
                "INSERT INTO kv (k, v) SELECT * FROM unnest($1::bytea[], $2::bytea[]) \
                 ON CONFLICT (k) DO UPDATE SET v = excluded.v",
                &[&put_k, &put_v],
            )?;
        }
        for (name, (set, add)) in self.counters {
            if let Some(value) = set {
                c.execute(
                    "INSERT INTO counters (name, value) VALUES ($1, $2) \
                     ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                    &[&name, &value],
                )?;
            }
            if add != 0 {
                c.execute(
                    "INSERT INTO counters (name, value) VALUES ($1, $2) \
                     ON CONFLICT (name) DO UPDATE SET value = counters.value + excluded.value",
                    &[&name, &add],
                )?;
            }
        }
        Ok(())
    }
}

/// A scan read a page at a time: never a whole prefix in memory.
pub struct Pages {
    pg: Pg,
    start: Bound<Vec<u8>>,
    end: Bound<Vec<u8>>,
    buf: VecDeque<(Vec<u8>, Vec<u8>)>,
    done: bool,
    /// Claim the rows (`FOR UPDATE SKIP LOCKED`).
    claim: bool,
    /// Keys to read with the next page.
    page: i64,
}

impl Pages {
    fn fetch(&mut self, limit: i64) -> Result<()> {
        let mut sql = String::from("SELECT k, v FROM kv WHERE ");
        let mut params: Vec<Vec<u8>> = Vec::new();
        let mut cond = |op: &str, key: Vec<u8>, sql: &mut String| {
            params.push(key);
            sql.push_str(&format!("k {op} ${} AND ", params.len()));
        };
        match &self.start {
            Bound::Included(k) => cond(">=", k.clone(), &mut sql),
            Bound::Excluded(k) => cond(">", k.clone(), &mut sql),
            Bound::Unbounded => {}
        }
        match &self.end {
            Bound::Included(k) => cond("<=", k.clone(), &mut sql),
            Bound::Excluded(k) => cond("<", k.clone(), &mut sql),
            // The main key space ends below the named trees.
            Bound::Unbounded => cond("<", vec![TREE_BYTE], &mut sql),
        }
        sql.push_str(&format!("TRUE ORDER BY k LIMIT {limit}"));
        if self.claim {
            sql.push_str(" FOR UPDATE SKIP LOCKED");
        }
        let rows = self.pg.run(move |c| {
            let refs: Vec<&(dyn ToSql + Sync)> =
                params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
            Ok(c.query(sql.as_str(), &refs)?
                .into_iter()
                .map(|r| (r.get::<_, Vec<u8>>(0), r.get::<_, Vec<u8>>(1)))
                .collect::<Vec<_>>())
        })?;
        if (rows.len() as i64) < limit {
            self.done = true;
        }
        if let Some((last, _)) = rows.last() {
            self.start = Bound::Excluded(last.clone());
        }
        self.buf.extend(rows);
        Ok(())
    }
}

impl Iterator for Pages {
    type Item = Result<(super::Bytes, super::Bytes)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.buf.is_empty() && !self.done {
            let page = self.page;
            self.page = (page * 4).min(PAGE);
            if let Err(e) = self.fetch(page) {
                self.done = true;
                return Some(Err(e));
            }
        }
        self.buf
            .pop_front()
            .map(|(k, v)| Ok((super::Bytes::Owned(k), super::Bytes::Owned(v))))
    }
}

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
            let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
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

/// The database of the test cluster `admin_url` that stands for the store
/// at `path`: `so_` + 16 hex digits of a hash of the canonical path,
/// created if missing. Reopening the same path reaches the same database.
#[doc(hidden)]
pub fn test_database(admin_url: &str, path: &std::path::Path) -> Result<Pg> {
    use sha2::{Digest, Sha256};
    let _ = std::fs::create_dir_all(path);
    let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let digest = Sha256::digest(canonical.to_string_lossy().as_bytes());
    let name = format!("so_{}", hex::encode(&digest[..8]));
    create_database(admin_url, &name)?;
    let mut config: postgres::Config = admin_url
        .parse()
        .map_err(|e| StoreError::Database(format!("{TEST_PG_ENV}: {e}")))?;
    config.dbname(&name);
    Pg::with_config(config)
}

/// Create database `name` on the cluster of `admin_url` unless it exists.
#[doc(hidden)]
pub fn create_database(admin_url: &str, name: &str) -> Result<()> {
    let config: postgres::Config = admin_url
        .parse()
        .map_err(|e| StoreError::Database(format!("admin URL: {e}")))?;
    let conn = Conn::spawn(config.clone())?;
    let name = name.to_string();
    conn.call(None, move |c| {
        let exists = c
            .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&name])?
            .is_some();
        if !exists {
            // Two processes may create it at once: the loser's "already
            // exists" is fine.
            if let Err(e) = c.batch_execute(&format!("CREATE DATABASE \"{name}\"")) {
                if e.code() != Some(&postgres::error::SqlState::DUPLICATE_DATABASE)
                    && e.code() != Some(&postgres::error::SqlState::UNIQUE_VIOLATION)
                {
                    return Err(e);
                }
            }
        }
        Ok(())
    })
    .map(|_| ())
}
