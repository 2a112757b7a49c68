//! Reads: point gets, scans a page at a time, row claims, advisory locks,
//! and what makes a unit's reads cheap: a pinned transaction remembers what
//! it read (`Memo`: a transaction's own reads, valid while it lasts under
//! its locks; its writes stay in the unit until commit), and `prefetch`
//! reads everything a unit's items will ask for — its locks, its records,
//! its scans — in one pipelined round trip.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::ops::Bound;
use std::sync::Arc;

use tokio_postgres::types::ToSql;

use super::stats::Trip;
use super::{Client, Pg, PgResult, TREE_BYTE};
use crate::engine::{prefix_end, Bytes};
use crate::{keys, Result};

/// Keys read per page of a scan: the first page is small (a scan is often
/// asked for its first key only), the next ones up to `PAGE`.
const PAGE: i64 = 256;
const FIRST_PAGE: i64 = 16;

/// Rows a prefetched scan reads at most; a prefix with more is left to a
/// paged scan when it is asked for.
const PREFETCH_ROWS: i64 = 1024;

/// Rows as read: (key, value).
type Rows = Vec<(Vec<u8>, Vec<u8>)>;

/// Run a statement prepared once per connection (deadpool's cache): one
/// round trip instead of a prepare and an execute.
pub(crate) async fn query(
    c: &Client,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> PgResult<Vec<tokio_postgres::Row>> {
    let statement = c.prepare_cached(sql).await?;
    c.query(&statement, params).await
}

/// `query` for a statement whose rows are not wanted.
pub(crate) async fn execute(
    c: &Client,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> PgResult<u64> {
    let statement = c.prepare_cached(sql).await?;
    c.execute(&statement, params).await
}

fn rows(found: Vec<tokio_postgres::Row>) -> Rows {
    found
        .into_iter()
        .map(|r| (r.get::<_, Vec<u8>>(0), r.get::<_, Vec<u8>>(1)))
        .collect()
}

/// What a pinned transaction has read: answers to gets, complete scans by
/// prefix, and the advisory locks it holds.
#[derive(Default)]
pub(super) struct Memo {
    gets: HashMap<Vec<u8>, Option<Vec<u8>>>,
    scans: BTreeMap<Vec<u8>, Arc<Rows>>,
    locks: HashSet<String>,
}

impl Memo {
    /// The complete scan that covers `prefix` (its own, or a shorter one).
    fn covering(&self, prefix: &[u8]) -> Option<(&[u8], &Arc<Rows>)> {
        self.scans
            .range::<[u8], _>((Bound::Unbounded, Bound::Included(prefix)))
            .rev()
            .find(|(p, _)| prefix.starts_with(p))
            .map(|(p, rows)| (p.as_slice(), rows))
    }

    fn get(&self, key: &[u8]) -> Option<Option<Vec<u8>>> {
        if let Some(v) = self.gets.get(key) {
            return Some(v.clone());
        }
        let (_, rows) = self.covering(key)?;
        Some(
            rows.binary_search_by(|(k, _)| k.as_slice().cmp(key))
                .ok()
                .map(|i| rows[i].1.clone()),
        )
    }

    fn scan(&self, prefix: &[u8]) -> Option<Rows> {
        let (p, rows) = self.covering(prefix)?;
        if p == prefix {
            return Some(rows.as_ref().clone());
        }
        Some(
            rows.iter()
                .filter(|(k, _)| k.starts_with(prefix))
                .cloned()
                .collect(),
        )
    }
}

/// What a unit's items will read, asked for at once (`Pg::prefetch`).
#[derive(Debug, Default, Clone)]
pub struct Prefetch {
    pub gets: Vec<Vec<u8>>,
    /// Prefixes to scan whole.
    pub prefixes: Vec<Vec<u8>>,
    /// Advisory locks to take (transaction-scoped, never waiting).
    pub locks: Vec<String>,
}

impl Prefetch {
    pub fn is_empty(&self) -> bool {
        self.gets.is_empty() && self.prefixes.is_empty() && self.locks.is_empty()
    }
}

/// The name of the counter under an `m/` key.
pub(super) fn counter_name(key: &[u8]) -> Option<String> {
    key.strip_prefix(keys::COUNTER)
        .map(|n| String::from_utf8_lossy(n).into_owned())
}

impl Pg {
    fn memo(&self) -> Option<std::sync::MutexGuard<'_, Memo>> {
        self.pinned
            .as_ref()
            .filter(|p| !p.finished())
            .map(|p| p.memo.lock().expect("memo lock"))
    }

    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        if let Some(name) = counter_name(key) {
            return self.run(move |c| async move {
                let found =
                    query(&c, "SELECT value FROM counters WHERE name = $1", &[&name]).await?;
                Ok(found
                    .first()
                    .map(|r| (r.get::<_, i64>(0).max(0) as u64).to_be_bytes().to_vec()))
            });
        }
        if let Some(known) = self.memo().and_then(|m| m.get(key)) {
            return Ok(known);
        }
        let k = key.to_vec();
        let value = self.run_as(Trip::Get, move |c| async move {
            let found = query(&c, "SELECT v FROM kv WHERE k = $1", &[&k]).await?;
            Ok(found.first().map(|r| r.get::<_, Vec<u8>>(0)))
        })?;
        if let Some(mut memo) = self.memo() {
            memo.gets.insert(key.to_vec(), value.clone());
        }
        Ok(value)
    }

    /// Number of keys of the main key space.
    pub fn len(&self) -> Result<usize> {
        self.run(|c| async move {
            let row = c
                .query_one("SELECT count(*) FROM kv WHERE k < $1", &[&vec![TREE_BYTE]])
                .await?;
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
            error: None,
        }
    }

    /// Every key under `prefix`: paged; in a pinned transaction read whole
    /// once and remembered (a unit reads a prefix whole anyway).
    pub fn scan_prefix(&self, prefix: &[u8]) -> Pages {
        let end = prefix_end(prefix).map_or(Bound::Unbounded, Bound::Excluded);
        let mut pages = self.pages(Bound::Included(prefix.to_vec()), end);
        if !self.is_pinned() {
            return pages;
        }
        if let Some(known) = self.memo().and_then(|m| m.scan(prefix)) {
            pages.buf.extend(known);
            pages.done = true;
            return pages;
        }
        let mut all = Vec::new();
        while !pages.done {
            let page = pages.page;
            pages.page = PAGE;
            if let Err(e) = pages.fetch(page) {
                pages.error = Some(e);
                pages.buf.clear();
                return pages;
            }
            all.extend(pages.buf.drain(..));
        }
        if let Some(mut memo) = self.memo() {
            memo.scans.insert(prefix.to_vec(), Arc::new(all.clone()));
        }
        pages.buf.extend(all);
        pages
    }

    /// Claim up to `limit` keys of `[start, end)` for this transaction (a
    /// pinned handle): rows other transactions hold are skipped.
    pub fn claim(&self, start: Vec<u8>, end: Vec<u8>, limit: usize) -> Result<Rows> {
        let mut pages = Pages {
            claim: true,
            ..self.pages(Bound::Included(start), Bound::Excluded(end))
        };
        pages.fetch(limit as i64)?;
        Ok(pages.buf.into_iter().collect())
    }

    /// Take the transaction-scoped advisory lock on `key` if no other
    /// transaction holds it (never waits); a lock this transaction holds
    /// already is not asked for again.
    pub fn try_xact_lock(&self, key: &str) -> Result<bool> {
        if self.memo().is_some_and(|m| m.locks.contains(key)) {
            return Ok(true);
        }
        let k = key.to_string();
        let taken = self.run_as(Trip::Lock, move |c| async move {
            let found = query(
                &c,
                "SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))",
                &[&k],
            )
            .await?;
            Ok(found.first().is_some_and(|r| r.get::<_, bool>(0)))
        })?;
        if taken {
            if let Some(mut memo) = self.memo() {
                memo.locks.insert(key.to_string());
            }
        }
        Ok(taken)
    }

    /// Read what `want` names in one round trip (three statements
    /// pipelined) into the pinned transaction's memo: the locks it can take
    /// (the others are asked again, and refused, when the item needs
    /// them), the records, the scans (whole, up to `PREFETCH_ROWS` each).
    /// Returns the unit epoch (`unit_epoch`) as it stands.
    pub fn prefetch(&self, mut want: Prefetch) -> Result<u64> {
        if let Some(memo) = self.memo() {
            want.locks.retain(|l| !memo.locks.contains(l));
            want.gets
                .retain(|k| counter_name(k).is_none() && memo.get(k).is_none());
            want.prefixes.retain(|p| memo.scan(p).is_none());
        }
        want.locks.sort();
        want.locks.dedup();
        want.gets.sort();
        want.gets.dedup();
        want.prefixes.sort();
        want.prefixes.dedup();
        let ends: Vec<Vec<u8>> = want
            .prefixes
            .iter()
            .map(|p| prefix_end(p).unwrap_or_else(|| vec![TREE_BYTE]))
            .collect();
        let asked = want.clone();
        let (epoch, locked, got, scanned) = self.run_as(Trip::Prefetch, move |c| async move {
            let lock_params: [&(dyn ToSql + Sync); 1] = [&want.locks];
            let get_params: [&(dyn ToSql + Sync); 1] = [&want.gets];
            let scan_params: [&(dyn ToSql + Sync); 3] = [&want.prefixes, &ends, &PREFETCH_ROWS];
            let (epoch, locked, got, scanned) = tokio::join!(
                query(&c, "SELECT n FROM unit_epoch", &[]),
                query(
                    &c,
                    "SELECT k FROM unnest($1::text[]) AS k \
                     WHERE pg_try_advisory_xact_lock(hashtextextended(k, 0))",
                    &lock_params,
                ),
                query(&c, "SELECT k, v FROM kv WHERE k = ANY($1)", &get_params),
                query(
                    &c,
                    "SELECT p.i, s.k, s.v FROM unnest($1::bytea[], $2::bytea[]) \
                     WITH ORDINALITY AS p(lo, hi, i) CROSS JOIN LATERAL \
                     (SELECT k, v FROM kv WHERE k >= p.lo AND k < p.hi ORDER BY k LIMIT $3) s",
                    &scan_params,
                ),
            );
            Ok((epoch?, locked?, got?, scanned?))
        })?;
        // A read is remembered only under the locks that guard it: when a
        // lock was refused, another transaction may change what was read
        // before this one takes the lock, so nothing of this round is kept
        // (the item asks again, and reads afresh, once it holds the lock).
        let epoch = epoch.first().map_or(0, |r| r.get::<_, i64>(0)) as u64;
        let all_locked = locked.len() == asked.locks.len();
        if let Some(mut memo) = self.memo() {
            memo.locks
                .extend(locked.iter().map(|r| r.get::<_, String>(0)));
            if !all_locked {
                return Ok(epoch);
            }
            for k in asked.gets {
                memo.gets.insert(k, None);
            }
            for (k, v) in rows(got) {
                memo.gets.insert(k, Some(v));
            }
            let mut by_prefix: Vec<Rows> = vec![Vec::new(); asked.prefixes.len()];
            for r in scanned {
                let i = r.get::<_, i64>(0) as usize - 1;
                by_prefix[i].push((r.get(1), r.get(2)));
            }
            for (prefix, found) in asked.prefixes.into_iter().zip(by_prefix) {
                if (found.len() as i64) < PREFETCH_ROWS {
                    memo.scans.insert(prefix, Arc::new(found));
                }
            }
        }
        Ok(epoch)
    }
}

/// A scan read a page at a time: never a whole prefix in memory (except
/// in a pinned transaction, `Pg::scan_prefix`).
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
    /// A failure to yield before anything else (a pinned scan read ahead).
    error: Option<crate::StoreError>,
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
        sql.push_str("TRUE ORDER BY k LIMIT $");
        sql.push_str(&(params.len() + 1).to_string());
        if self.claim {
            sql.push_str(" FOR UPDATE SKIP LOCKED");
        }
        let kind = if self.claim { Trip::Claim } else { Trip::Scan };
        let found = self.pg.run_as(kind, move |c| async move {
            let mut refs: Vec<&(dyn ToSql + Sync)> =
                params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
            refs.push(&limit);
            query(&c, &sql, &refs).await.map(rows)
        })?;
        if (found.len() as i64) < limit {
            self.done = true;
        }
        if let Some((last, _)) = found.last() {
            self.start = Bound::Excluded(last.clone());
        }
        self.buf.extend(found);
        Ok(())
    }
}

impl Iterator for Pages {
    type Item = Result<(Bytes, Bytes)>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(e) = self.error.take() {
            self.done = true;
            return Some(Err(e));
        }
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
            .map(|(k, v)| Ok((Bytes::Owned(k), Bytes::Owned(v))))
    }
}
