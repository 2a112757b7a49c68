//! The inbox's group commit on PostgreSQL, and the sequences: one
//! transaction per group in two round trips — the dedupe keys inserted
//! (`ON CONFLICT DO NOTHING RETURNING`, so a delivery id sent to two
//! replicas is stored once) and numbered from `inbox_seq` in one statement,
//! then the items, dedupe values, expiry entries and counters with the
//! `COMMIT`, pipelined.

use std::collections::HashMap;

use super::reads::query;
use super::writes::Writes;
use super::{Pg, PgResult};
use crate::engine::Batch;
use crate::{counter, keys, Result};

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

/// `n` numbers of `inbox_seq`, ascending.
async fn next_seqs(c: &super::Client, n: i64) -> PgResult<Vec<u64>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let mut seqs: Vec<u64> = query(
        c,
        "SELECT nextval('inbox_seq') FROM generate_series(1, $1::bigint)",
        &[&n],
    )
    .await?
    .into_iter()
    .map(|r| r.get::<_, i64>(0) as u64)
    .collect();
    seqs.sort_unstable();
    Ok(seqs)
}

impl Pg {
    /// The highest inbox number handed out (0: none yet).
    pub fn last_inbox_seq(&self) -> Result<u64> {
        let sql = "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM inbox_seq";
        self.one_row(sql, |row| row.get::<_, i64>(0) as u64)
    }

    /// `n` new inbox numbers, ascending.
    pub fn next_inbox_seqs(&self, n: usize) -> Result<Vec<u64>> {
        let n = n as i64;
        self.run(move |c| async move { next_seqs(&c, n).await })
    }

    /// Move the inbox sequence to at least `seq` (`migrate`).
    pub fn raise_inbox_seq(&self, seq: u64) -> Result<()> {
        let seq = seq as i64;
        self.run(move |c| async move {
            c.execute(
                "SELECT setval('inbox_seq', GREATEST($1, (SELECT last_value FROM inbox_seq)), \
                 $1 > 0 OR (SELECT is_called FROM inbox_seq))",
                &[&seq],
            )
            .await
            .map(|_| ())
        })
    }

    /// A new upload id (`store::staging`).
    pub fn next_upload_id(&self) -> Result<u64> {
        self.run(|c| async move {
            let found = query(&c, "SELECT nextval('upload_ids')", &[]).await?;
            Ok(found[0].get::<_, i64>(0) as u64)
        })
    }

    /// Move the upload id sequence to at least `id` (`migrate`).
    pub fn raise_upload_ids(&self, id: u64) -> Result<()> {
        let id = id.max(1) as i64;
        self.run(move |c| async move {
            c.execute(
                "SELECT setval('upload_ids', GREATEST($1, (SELECT last_value FROM upload_ids)))",
                &[&id],
            )
            .await
            .map(|_| ())
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
        self.run(move |c| async move {
            let result = enqueue(&c, prune, entries).await;
            if result.is_err() {
                let _ = c.batch_execute("ROLLBACK").await;
            }
            result
        })
    }
}

/// `Pg::enqueue_group` on one connection.
async fn enqueue(
    c: &super::Client,
    prune: Vec<Vec<u8>>,
    entries: Vec<GroupEntry>,
) -> PgResult<Vec<Option<u64>>> {
    let dedupe: Vec<Vec<u8>> = entries.iter().map(|e| e.dedupe_key.clone()).collect();
    let empty: Vec<Vec<u8>> = vec![Vec::new(); dedupe.len()];
    let insert = c
        .prepare_cached(
            "WITH stored AS (INSERT INTO kv (k, v) SELECT * FROM unnest($1::bytea[], $2::bytea[]) \
             ON CONFLICT (k) DO NOTHING RETURNING k) \
             SELECT k, nextval('inbox_seq') FROM stored",
        )
        .await?;
    let prune_statement = c.prepare_cached("DELETE FROM kv WHERE k = ANY($1)").await?;
    let insert_params: [&(dyn tokio_postgres::types::ToSql + Sync); 2] = [&dedupe, &empty];
    let (begun, pruned, stored) = tokio::join!(
        c.batch_execute("BEGIN"),
        async {
            match prune.is_empty() {
                true => Ok(0),
                false => c.execute(&prune_statement, &[&prune]).await,
            }
        },
        c.query(&insert, &insert_params),
    );
    begun?;
    pruned?;
    let stored = stored?;
    // Numbers in the group's order, as sled gives them.
    let mut seqs: Vec<u64> = stored.iter().map(|r| r.get::<_, i64>(1) as u64).collect();
    seqs.sort_unstable();
    let inserted: HashMap<Vec<u8>, ()> = stored
        .into_iter()
        .map(|r| (r.get::<_, Vec<u8>>(0), ()))
        .collect();
    let mut seqs = seqs.into_iter();
    let mut batch = Batch::default();
    let mut results = Vec::with_capacity(entries.len());
    let mut duplicates = 0i64;
    for entry in entries {
        if !inserted.contains_key(&entry.dedupe_key) {
            duplicates += 1;
            results.push(None);
            continue;
        }
        let seq = seqs.next().expect("one number per stored entry");
        entry.write(seq, &mut batch);
        results.push(Some(seq));
    }
    let stored = results.iter().flatten().count() as i64;
    batch.add(keys::counter(counter::RECEIVED), stored);
    batch.add(keys::counter(counter::DUPLICATES), duplicates);
    Writes::from(batch).commit_pipelined(c).await?;
    Ok(results)
}
