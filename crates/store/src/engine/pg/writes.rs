//! Writes: a batch as a handful of set-based statements (`unnest` of the
//! keys and values, counters added to), the `outcomes` relation kept in the
//! same transaction as the outcome records (`o/` keys) they come from, and
//! the commit of a unit — its writes, the unit epoch's bump and `COMMIT` —
//! sent as one pipeline: one round trip.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;

use super::reads::counter_name;
use super::{block, describe, Client, Pg, PgResult};
use crate::engine::{Batch, Op};
use crate::{codec, keys, Result, StoreError};

/// The SQLSTATE `bump_unit_epoch` raises when another unit committed since
/// the one the caller expected (`migrations/0002_relations.sql`).
const STALE: &str = "SO001";

/// A batch as statements: the last write of each key wins, as in sled.
#[derive(Default)]
pub(super) struct Writes {
    kv: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    /// Counter name → (value set, then added).
    counters: BTreeMap<String, (Option<i64>, i64)>,
    /// Packed counts added to (`Op::AddAll`: the rollups), by key.
    sums: BTreeMap<Vec<u8>, Vec<i64>>,
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
                Op::AddAll(k, delta) => {
                    let sum = w.sums.entry(k).or_default();
                    if sum.len() < delta.len() {
                        sum.resize(delta.len(), 0);
                    }
                    for (s, d) in sum.iter_mut().zip(delta) {
                        *s += d;
                    }
                }
            }
        }
        w
    }
}

/// The statements' parameters, owned.
#[derive(Default)]
struct Params {
    put_k: Vec<Vec<u8>>,
    put_v: Vec<Vec<u8>>,
    /// Schedule keys (empty values): inserted unless present, which never
    /// waits for a row another replica's unit claimed.
    schedule: Vec<Vec<u8>>,
    gone: Vec<Vec<u8>>,
    set_names: Vec<String>,
    set_values: Vec<i64>,
    add_names: Vec<String>,
    add_values: Vec<i64>,
    /// Packed counts added in place (`so_add_packed`), in key order so two
    /// replicas lock the rows in the same order.
    sum_k: Vec<Vec<u8>>,
    sum_v: Vec<Vec<u8>>,
    /// Outcome rows to upsert (`upsert_outcomes`), and output ids whose row goes.
    outcomes: serde_json::Value,
    outcomes_gone: Vec<String>,
}

/// The `outcomes` row input of a stored output written under `key`: its id,
/// and its outcome record as the read API shows it (`None`: not judged yet,
/// no row). A record that does not decode has no row (the read API fails
/// on it too, and says so).
pub(super) fn outcome_row(key: &[u8], value: &[u8]) -> (String, Option<serde_json::Value>) {
    // As `scrub` writes it in the row, for the removals too.
    let id = String::from_utf8_lossy(&key[keys::OUTPUT.len()..]).replace('\0', "\u{FFFD}");
    let row = codec::decode_output(key, value).ok().and_then(|stored| {
        let outcome = stored.outcome?;
        let (executed, evaluated) = (time(outcome.created_at), time(outcome.evaluated_at));
        let record = serde_json::to_value(outcome).ok()?;
        let mut row = serde_json::json!({
            "id": id, "repo": stored.execution.repo, "record": record,
            "executed_at": executed, "evaluated_at": evaluated,
        });
        scrub(&mut row);
        Some(row)
    });
    (id, row)
}

/// Replace NUL characters, which PostgreSQL's `text` and `jsonb` cannot
/// hold, with U+FFFD in every string and key (a hostile workflow name must
/// not fail the commit; `kv` keeps the record's own bytes).
fn scrub(value: &mut serde_json::Value) {
    use serde_json::Value;
    let clean = |s: &str| s.replace('\0', "\u{FFFD}");
    match value {
        Value::String(s) if s.contains('\0') => *s = clean(s),
        Value::Array(items) => items.iter_mut().for_each(scrub),
        Value::Object(map) if map.keys().any(|k| k.contains('\0')) => {
            let entries = std::mem::take(map);
            for (k, mut v) in entries {
                scrub(&mut v);
                map.insert(clean(&k), v);
            }
        }
        Value::Object(map) => map.values_mut().for_each(scrub),
        _ => {}
    }
}

/// A time as `upsert_outcomes` reads it into a `timestamptz`: RFC 3339
/// for the years 0 to 9999, `infinity` / `-infinity` past them (chrono
/// writes such years in a form PostgreSQL does not read), so that no time
/// the App accepted fails the commit.
fn time(at: chrono::DateTime<chrono::Utc>) -> String {
    use chrono::Datelike;
    match at.year() {
        y if y > 9999 => "infinity".into(),
        y if y < 0 => "-infinity".into(),
        _ => at.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
    }
}

impl Writes {
    pub(super) fn is_empty(&self) -> bool {
        self.kv.is_empty() && self.counters.is_empty() && self.sums.is_empty()
    }

    fn params(self) -> Params {
        let mut p = Params::default();
        let mut rows = Vec::new();
        for (k, v) in self.kv {
            let output = k.starts_with(keys::OUTPUT);
            match v {
                Some(v) if v.is_empty() && k.starts_with(keys::SCHEDULE) => p.schedule.push(k),
                Some(v) => {
                    if output {
                        match outcome_row(&k, &v) {
                            (_, Some(row)) => rows.push(row),
                            (id, None) => p.outcomes_gone.push(id),
                        }
                    }
                    p.put_k.push(k);
                    p.put_v.push(v);
                }
                None => {
                    if output {
                        p.outcomes_gone.push(outcome_row(&k, &[]).0);
                    }
                    p.gone.push(k);
                }
            }
        }
        for (name, (set, add)) in self.counters {
            if let Some(value) = set {
                p.set_names.push(name.clone());
                p.set_values.push(value);
            }
            if add != 0 {
                p.add_names.push(name);
                p.add_values.push(add);
            }
        }
        for (k, d) in self.sums {
            if d.iter().any(|v| *v != 0) {
                p.sum_k.push(k);
                p.sum_v.push(crate::engine::pack(&d));
            }
        }
        p.outcomes = serde_json::Value::Array(rows);
        p
    }
}

impl Params {
    /// Rows the statements write (`stats`).
    fn rows(&self) -> u64 {
        let outcomes = self.outcomes.as_array().map_or(0, Vec::len);
        (self.put_k.len()
            + self.schedule.len()
            + self.gone.len()
            + self.set_names.len()
            + self.add_names.len()
            + self.sum_k.len()
            + outcomes
            + self.outcomes_gone.len()) as u64
    }

    /// Statements the writes take, without the frame (`stats`).
    fn statements(&self) -> u64 {
        let outcomes = self.outcomes.as_array().is_some_and(|a| !a.is_empty());
        [
            !self.gone.is_empty(),
            !self.put_k.is_empty(),
            !self.schedule.is_empty(),
            !self.set_names.is_empty(),
            !self.add_names.is_empty(),
            !self.sum_k.is_empty(),
            !self.outcomes_gone.is_empty(),
            outcomes,
        ]
        .iter()
        .filter(|b| **b)
        .count() as u64
    }
}

/// How a pipeline of writes begins and ends.
#[derive(Clone, Copy)]
struct Frame {
    /// Send `BEGIN` first (a batch of its own).
    begin: bool,
    /// Bump the unit epoch (`Some`), expecting it at this value (`Some(Some)`).
    bump: Option<Option<i64>>,
    /// Send `COMMIT` last.
    commit: bool,
    /// Commit without waiting for the WAL flush (`SET LOCAL
    /// synchronous_commit TO off`): a worker's unit, whose inbox items
    /// come back with it if a database crash loses it (`Pg::commit_unit`).
    unflushed: bool,
}

/// The packed counts of `Op::AddAll` added in place: what
/// `so_add_packed` (`migrations/0003_packed_counts.sql`) computes, written
/// into the statement, so that it is planned once per connection with it
/// (a SQL function called per row is set up, and its body planned, again
/// for every statement that calls it: 1.6 ms of a unit's commit for ~40
/// cells). A value is a sequence of 32-bit big-endian signed integers; a
/// missing element counts as 0.
const ADD_PACKED: &str = "\
    INSERT INTO kv (k, v) SELECT * FROM unnest($1::bytea[], $2::bytea[]) \
    ON CONFLICT (k) DO UPDATE SET v = (\
      SELECT coalesce(string_agg(int4send(\
          CASE WHEN length(kv.v) >= i * 4 + 4 THEN \
            (get_byte(kv.v, i * 4) << 24) | (get_byte(kv.v, i * 4 + 1) << 16) \
            | (get_byte(kv.v, i * 4 + 2) << 8) | get_byte(kv.v, i * 4 + 3) ELSE 0 END \
        + CASE WHEN length(excluded.v) >= i * 4 + 4 THEN \
            (get_byte(excluded.v, i * 4) << 24) | (get_byte(excluded.v, i * 4 + 1) << 16) \
            | (get_byte(excluded.v, i * 4 + 2) << 8) | get_byte(excluded.v, i * 4 + 3) ELSE 0 END\
        ), ''::bytea ORDER BY i), ''::bytea) \
      FROM generate_series(0, greatest(length(kv.v), length(excluded.v)) / 4 - 1) AS i)";

/// The `outcomes` rows of a commit: the statement of `upsert_outcomes`
/// (`migrations/0002_relations.sql`) sent as it is, prepared once per
/// connection, where calling the SQL function parsed and planned its body
/// again for every commit.
pub(super) const UPSERT_OUTCOMES: &str = "\
    INSERT INTO outcomes AS o ( \
        safe_output_id, repo, workflow, safe_output_type, run_id, \
        outcome_status, evidence_strength, human_check_signal, confidence, \
        target_kind, target_number, target_url, target_resolved, \
        executed_at, created_at, evaluated_at, evaluation_window_hours, \
        time_to_acceptance_hours, record) \
    SELECT e ->> 'id', e ->> 'repo', r ->> 'workflow', r ->> 'safe_output_type', \
           (r ->> 'run_id')::numeric, \
           r ->> 'outcome_status', r ->> 'evidence_strength', r ->> 'human_check_signal', \
           r ->> 'confidence', \
           r -> 'target' ->> 'kind', (r -> 'target' ->> 'number')::numeric, \
           r -> 'target' ->> 'url', (r ->> 'target_resolved')::boolean, \
           (e ->> 'executed_at')::timestamptz, (e ->> 'executed_at')::timestamptz, \
           (e ->> 'evaluated_at')::timestamptz, \
           (r ->> 'evaluation_window_hours')::bigint, \
           (r ->> 'time_to_acceptance_hours')::double precision, r \
    FROM jsonb_array_elements($1::jsonb) AS e \
    CROSS JOIN LATERAL (SELECT e -> 'record') AS x(r) \
    ON CONFLICT (safe_output_id) DO UPDATE SET \
        repo = excluded.repo, workflow = excluded.workflow, \
        safe_output_type = excluded.safe_output_type, run_id = excluded.run_id, \
        outcome_status = excluded.outcome_status, \
        evidence_strength = excluded.evidence_strength, \
        human_check_signal = excluded.human_check_signal, \
        confidence = excluded.confidence, target_kind = excluded.target_kind, \
        target_number = excluded.target_number, target_url = excluded.target_url, \
        target_resolved = excluded.target_resolved, executed_at = excluded.executed_at, \
        created_at = excluded.created_at, evaluated_at = excluded.evaluated_at, \
        evaluation_window_hours = excluded.evaluation_window_hours, \
        time_to_acceptance_hours = excluded.time_to_acceptance_hours, \
        record = excluded.record";

/// A statement's count, as a step of a pipeline that returns only the epoch.
fn none(r: PgResult<u64>) -> PgResult<Option<i64>> {
    r.map(|_| None)
}

type Step<'a> = Pin<Box<dyn Future<Output = PgResult<Option<i64>>> + Send + 'a>>;

/// Send the statements of `p`, framed, as one pipeline; every statement is
/// prepared first (cached per connection), so they go out in order and the
/// answers come back together. Returns the bumped epoch, if bumped.
async fn pipeline(c: &Client, p: &Params, frame: Frame) -> PgResult<Option<i64>> {
    let (del, schedule, put, set, add, sum, out_del, out_put, bump) = tokio::try_join!(
        c.prepare_cached("DELETE FROM kv WHERE k = ANY($1)"),
        c.prepare_cached(
            "INSERT INTO kv (k, v) SELECT k, '' FROM unnest($1::bytea[]) AS k \
             ON CONFLICT (k) DO NOTHING"
        ),
        c.prepare_cached(
            "INSERT INTO kv (k, v) SELECT * FROM unnest($1::bytea[], $2::bytea[]) \
             ON CONFLICT (k) DO UPDATE SET v = excluded.v"
        ),
        c.prepare_cached(
            "INSERT INTO counters (name, value) SELECT * FROM unnest($1::text[], $2::bigint[]) \
             ON CONFLICT (name) DO UPDATE SET value = excluded.value"
        ),
        c.prepare_cached(
            "INSERT INTO counters (name, value) SELECT * FROM unnest($1::text[], $2::bigint[]) \
             ON CONFLICT (name) DO UPDATE SET value = counters.value + excluded.value"
        ),
        c.prepare_cached(ADD_PACKED),
        c.prepare_cached("DELETE FROM outcomes WHERE safe_output_id = ANY($1)"),
        c.prepare_cached(UPSERT_OUTCOMES),
        c.prepare_cached("SELECT bump_unit_epoch($1)"),
    )?;
    let mut steps: Vec<Step> = Vec::new();
    if frame.begin {
        steps.push(Box::pin(async {
            c.batch_execute("BEGIN").await.map(|_| None)
        }));
    }
    if frame.unflushed {
        steps.push(Box::pin(async {
            c.batch_execute("SET LOCAL synchronous_commit TO off")
                .await
                .map(|_| None)
        }));
    }
    if !p.gone.is_empty() {
        steps.push(Box::pin(async { none(c.execute(&del, &[&p.gone]).await) }));
    }
    if !p.put_k.is_empty() {
        steps.push(Box::pin(async {
            none(c.execute(&put, &[&p.put_k, &p.put_v]).await)
        }));
    }
    if !p.schedule.is_empty() {
        steps.push(Box::pin(async {
            none(c.execute(&schedule, &[&p.schedule]).await)
        }));
    }
    if !p.set_names.is_empty() {
        steps.push(Box::pin(async {
            none(c.execute(&set, &[&p.set_names, &p.set_values]).await)
        }));
    }
    if !p.add_names.is_empty() {
        steps.push(Box::pin(async {
            none(c.execute(&add, &[&p.add_names, &p.add_values]).await)
        }));
    }
    if !p.sum_k.is_empty() {
        steps.push(Box::pin(async {
            none(c.execute(&sum, &[&p.sum_k, &p.sum_v]).await)
        }));
    }
    if !p.outcomes_gone.is_empty() {
        steps.push(Box::pin(async {
            none(c.execute(&out_del, &[&p.outcomes_gone]).await)
        }));
    }
    if p.outcomes.as_array().is_some_and(|a| !a.is_empty()) {
        steps.push(Box::pin(async {
            none(c.execute(&out_put, &[&p.outcomes]).await)
        }));
    }
    if let Some(expected) = frame.bump {
        steps.push(Box::pin(async move {
            let row = c.query_one(&bump, &[&expected]).await?;
            Ok(Some(row.get::<_, i64>(0)))
        }));
    }
    if frame.commit {
        steps.push(Box::pin(async {
            c.batch_execute("COMMIT").await.map(|_| None)
        }));
    }
    let mut bumped = None;
    for result in futures_util::future::join_all(steps).await {
        // The first failure: after it the transaction was aborted, and the
        // pipelined COMMIT rolled it back.
        if let Some(epoch) = result? {
            bumped = Some(epoch);
        }
    }
    Ok(bumped)
}

/// A pipeline's failure as the store reports it: a stale unit epoch is
/// `StoreError::Stale`.
fn failed(e: tokio_postgres::Error) -> StoreError {
    if e.code().is_some_and(|c| c.code() == STALE) {
        return StoreError::Stale;
    }
    describe(e)
}

impl Writes {
    /// Write these and `COMMIT`, pipelined, on a connection inside a
    /// transaction (the inbox's group commit).
    pub(super) async fn commit_pipelined(self, c: &Client) -> PgResult<()> {
        let frame = Frame {
            begin: false,
            bump: None,
            commit: true,
            unflushed: false,
        };
        pipeline(c, &self.params(), frame).await.map(|_| ())
    }
}

impl Pg {
    /// Apply a batch: in the pinned transaction, or in one of its own
    /// (`BEGIN`, the statements and `COMMIT` pipelined).
    pub fn apply(&self, batch: Batch) -> Result<()> {
        let writes = Writes::from(batch);
        if writes.is_empty() {
            return Ok(());
        }
        let params = writes.params();
        let pinned = self.is_pinned();
        let frame = Frame {
            begin: !pinned,
            bump: None,
            commit: !pinned,
            unflushed: false,
        };
        self.run(move |c| async move {
            let result = pipeline(&c, &params, frame).await;
            if result.is_err() && !pinned {
                let _ = c.batch_execute("ROLLBACK").await;
            }
            result.map(|_| ())
        })
    }

    /// Commit a pinned handle's transaction with `batch` written first and
    /// the unit epoch bumped, in one round trip. With `expect`, the bump
    /// fails (`StoreError::Stale`, everything rolled back) unless the epoch
    /// stood at `expect`: no other unit committed since the caller's last.
    /// Returns the new epoch (`None`: nothing was begun or written).
    ///
    /// The commit does not wait for its WAL flush (`synchronous_commit`
    /// off for this transaction only): a unit is work the worker can do
    /// again. It removes the inbox items it processed in the same
    /// transaction, so a database crash that loses it (PostgreSQL loses at
    /// most the last `3 × wal_writer_delay` of such commits, never a part
    /// of one) brings its items back to be processed again, as a crash
    /// before sled's flush does on sled (docs/durability.md). What is
    /// acknowledged (the inbox's group commit, `commit_pipelined`) and
    /// every other write still waits for its flush.
    pub fn commit_unit(&self, batch: Batch, expect: Option<u64>) -> Result<Option<u64>> {
        let Some(pinned) = self.pinned.as_ref().filter(|p| !p.finished()) else {
            self.apply(batch)?;
            return Ok(None);
        };
        let prep = std::time::Instant::now();
        let writes = Writes::from(batch);
        let begun = pinned.client.lock().expect("pinned lock").is_some();
        if !begun && writes.is_empty() {
            pinned.finish();
            return Ok(None);
        }
        let (client, begin) = self.pinned_client(pinned)?;
        pinned.finish();
        pinned.client.lock().expect("pinned lock").take();
        let params = writes.params();
        let frame = Frame {
            begin,
            bump: Some(expect.map(|e| e as i64)),
            commit: true,
            unflushed: true,
        };
        super::stats::count_commit(params.rows(), params.statements() + 3, prep);
        let started = std::time::Instant::now();
        let result = block(async move {
            let result = pipeline(&client, &params, frame).await.map_err(failed);
            if result.is_err() {
                let _ = client.batch_execute("ROLLBACK").await;
            }
            result
        });
        super::stats::count(super::stats::Trip::Commit, started);
        let result = match result {
            Err(StoreError::Stale) => return Err(StoreError::Stale),
            other => self.shared.noted(other),
        };
        Ok(result?.map(|e| e as u64))
    }
}
