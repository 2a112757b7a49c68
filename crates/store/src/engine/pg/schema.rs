//! The schema: `migrations/*.sql`, applied at start-up in order, each in a
//! transaction of its own, under an advisory lock (replicas starting
//! together take turns), and recorded in `schema_migrations`. A migration
//! may have a step in Rust run in the same transaction: version 2 fills the
//! new `outcomes` relation from the outcome records a version-1 store holds
//! (their bytes are the store's own encoding, which SQL cannot read).

use super::reads::query;
use super::writes::outcome_row;
use super::{Client, Pg, PgResult};
use crate::{keys, Result};

/// The schema, oldest first: (version, SQL).
pub(super) const MIGRATIONS: &[(i64, &str)] = &[
    (1, include_str!("../../../migrations/0001_kv.sql")),
    (2, include_str!("../../../migrations/0002_relations.sql")),
    (
        3,
        include_str!("../../../migrations/0003_packed_counts.sql"),
    ),
];

/// Advisory lock key held while migrations run (any constant of our own).
const MIGRATION_LOCK: i64 = 0x5afe_0001;

/// Outcome records read per statement while filling `outcomes`.
const FILL_PAGE: i64 = 500;

impl Pg {
    /// Apply the migrations up to `version` (tests: a store left at an
    /// older version, to upgrade).
    #[doc(hidden)]
    pub fn migrate_to(&self, version: i64) -> Result<()> {
        self.run(move |c| async move {
            c.execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])
                .await?;
            let result = apply(&c, version).await;
            c.execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK])
                .await?;
            result
        })
    }

    /// Every row of `outcomes`: (id, record) in id order (tests).
    #[doc(hidden)]
    pub fn outcome_rows(&self) -> Result<Vec<(String, serde_json::Value)>> {
        self.run(|c| async move {
            let rows = c
                .query(
                    "SELECT safe_output_id, record FROM outcomes ORDER BY 1",
                    &[],
                )
                .await?;
            Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
        })
    }

    /// Run SQL as it is (tests: a store as an older version left it).
    #[cfg(any(test, feature = "test-hooks"))]
    #[doc(hidden)]
    pub fn execute_for_tests(&self, sql: &str) -> Result<()> {
        let sql = sql.to_string();
        self.run(move |c| async move { c.batch_execute(&sql).await })
    }

    /// The newest schema version this build knows (`open_checks` refuses
    /// a database at a higher one).
    pub fn known_schema_version() -> i64 {
        MIGRATIONS.last().map_or(0, |(version, _)| *version)
    }

    /// The schema version the database is at.
    pub fn schema_version(&self) -> Result<i64> {
        let sql = "SELECT coalesce(max(version), 0) FROM schema_migrations";
        self.one_row(sql, |row| row.get(0))
    }
}

impl Pg {
    /// Where `migrate` stopped copying `source`: (last key, keys copied).
    pub fn migrate_progress(&self, source: &str) -> Result<Option<(Vec<u8>, u64)>> {
        let source = source.to_string();
        self.run(move |c| async move {
            let row = c
                .query_opt(
                    "SELECT last_key, copied FROM migrate_progress WHERE source = $1",
                    &[&source],
                )
                .await?;
            Ok(row.map(|r| (r.get::<_, Vec<u8>>(0), r.get::<_, i64>(1) as u64)))
        })
    }

    /// Record how far `migrate` copied `source`.
    pub fn save_migrate_progress(&self, source: &str, last_key: &[u8], copied: u64) -> Result<()> {
        let (source, last_key, copied) = (source.to_string(), last_key.to_vec(), copied as i64);
        self.run(move |c| async move {
            c.execute(
                "INSERT INTO migrate_progress (source, last_key, copied) VALUES ($1, $2, $3) \
                 ON CONFLICT (source) DO UPDATE SET last_key = excluded.last_key, \
                 copied = excluded.copied",
                &[&source, &last_key, &copied],
            )
            .await
            .map(|_| ())
        })
    }
}

async fn apply(c: &Client, up_to: i64) -> PgResult<()> {
    c.batch_execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
            version bigint PRIMARY KEY,
            applied_at timestamptz NOT NULL DEFAULT now())",
    )
    .await?;
    for (version, sql) in MIGRATIONS.iter().filter(|(v, _)| *v <= up_to) {
        let done = c
            .query_opt(
                "SELECT 1 FROM schema_migrations WHERE version = $1",
                &[version],
            )
            .await?
            .is_some();
        if done {
            continue;
        }
        c.batch_execute("BEGIN").await?;
        let step = async {
            c.batch_execute(sql).await?;
            if *version == 2 {
                fill_outcomes(c).await?;
            }
            c.execute(
                "INSERT INTO schema_migrations (version) VALUES ($1)",
                &[version],
            )
            .await?;
            c.batch_execute("COMMIT").await
        };
        if let Err(e) = step.await {
            let _ = c.batch_execute("ROLLBACK").await;
            return Err(e);
        }
    }
    Ok(())
}

/// Fill `outcomes` from every outcome record under `o/`, a page at a time.
async fn fill_outcomes(c: &Client) -> PgResult<()> {
    let end = crate::engine::prefix_end(keys::OUTPUT).expect("o/ has an end");
    let mut from = keys::OUTPUT.to_vec();
    let mut first = true;
    loop {
        let op = if first { ">=" } else { ">" };
        let sql = format!("SELECT k, v FROM kv WHERE k {op} $1 AND k < $2 ORDER BY k LIMIT $3");
        let found = query(c, &sql, &[&from, &end, &FILL_PAGE]).await?;
        first = false;
        let rows: Vec<serde_json::Value> = found
            .iter()
            .filter_map(|r| outcome_row(r.get(0), r.get(1)).1)
            .collect();
        if !rows.is_empty() {
            c.execute(
                "SELECT upsert_outcomes($1::jsonb)",
                &[&serde_json::Value::Array(rows)],
            )
            .await?;
        }
        match found.last() {
            Some(last) if found.len() as i64 == FILL_PAGE => from = last.get(0),
            _ => return Ok(()),
        }
    }
}
