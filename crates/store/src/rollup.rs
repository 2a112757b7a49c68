//! Rollups: what every dashboard page, the report, the series and
//! `/metrics` read instead of scanning outputs. The worker keeps them in the
//! same unit of work as the outcomes they count (`Unit::put_output*` adds the
//! difference between an output's old and new contribution), so they are
//! never ahead of or behind the outputs, whichever engine holds them.
//!
//! A **cell** counts the outputs with one (repository, period, workflow,
//! type, latest status, latest strength); its value is a vector of counts
//! (`Counts`, layout in `field`) added to element-wise (`Batch::add_all`: on
//! PostgreSQL an `ON CONFLICT` addition, so replicas never lose counts).
//! Every output is in three cells: its day, its ISO week and all time
//! (`Level`), so a read of any range of days costs the cells of that range,
//! never the outputs in it. Only the parts of `since`/`until` that are not
//! whole days are read from the **time index** (`y/`: repository, execution
//! time, output id), one entry at a time: an entry holds its output's day
//! cell and counts (`time_value`).
//!
//! Beside each cell, at every level, a **sums cell** counts the same outputs
//! without splitting them by latest status and strength: one per
//! (repository, period, workflow, type), its value the outputs by the class
//! of their latest status (`CLASSES` counts) followed by the cell's counts
//! (`Counts::sums_of`). A week has about 24 cells per sums cell (6 statuses
//! × 4 strengths), so every read that does not cut on status or strength —
//! the series, the sparklines, the report, the trend — reads those
//! (`read::rollup::fold`). The worker writes both in the same unit;
//! `Store::ensure_rollups` derives the sums cells of an older store from
//! its cells once.
//!
//! `g/r` is the repositories' directory (lowercase name, exact name → the
//! count of outputs): a reader's scope is resolved against it, so a scope
//! that sees nothing reads nothing.

use chrono::{DateTime, Utc};

use super::engine::Batch;
use super::{codec, keys, Result, Store, StoredOutput};
use safe_outcomes_model::{EvidenceStrength, OutcomeRecord, OutcomeStatus, CHECKPOINTS};

/// Positions in a cell's `Counts`.
pub mod field {
    /// Outputs in the cell (their latest status and strength are the cell's).
    pub const COUNT: usize = 0;
    /// Of them, resting only on the target existing (`target_exists_only`).
    pub const EXISTS_ONLY: usize = 1;
    /// Judged without a dedicated rule.
    pub const NOT_DEDICATED: usize = 2;
    /// Accepted, then reverted (`details.accepted_then_reverted`).
    pub const REVERSED: usize = 3;
    /// Where the checkpoints' blocks start (one block per `CHECKPOINTS` entry).
    pub const WINDOWS: usize = 4;
    /// A checkpoint's block: the outputs that reached it, by their status
    /// there (`CLASSES`), then exists-only there, and not dedicated and
    /// reversed (both as of the latest outcome, as the report counts them).
    pub const WINDOW_FIELDS: usize = 11;
    /// Within a block: exists-only at the checkpoint.
    pub const W_EXISTS_ONLY: usize = 8;
    pub const W_NOT_DEDICATED: usize = 9;
    pub const W_REVERSED: usize = 10;
    /// Where the histogram of time to acceptance starts (`time_bin`).
    pub(crate) const HISTOGRAM: usize = WINDOWS + super::CHECKPOINTS.len() * WINDOW_FIELDS;
}

/// The status classes of a checkpoint's block, in order.
pub const CLASSES: usize = 8;

/// The class of a (status, strength) pair in a checkpoint's block:
/// accepted strong, medium, weak (or none), rejected, pending, ignored,
/// unknown, skipped.
pub fn class(status: OutcomeStatus, strength: EvidenceStrength) -> usize {
    match (status, strength) {
        (OutcomeStatus::Accepted, EvidenceStrength::Strong) => 0,
        (OutcomeStatus::Accepted, EvidenceStrength::Medium) => 1,
        (OutcomeStatus::Accepted, _) => 2,
        (OutcomeStatus::Rejected, _) => 3,
        (OutcomeStatus::Pending, _) => 4,
        (OutcomeStatus::Ignored, _) => 5,
        (OutcomeStatus::Unknown, _) => 6,
        (OutcomeStatus::Skipped, _) => 7,
    }
}

/// Histogram bins of time to acceptance: hundredths of an hour (the
/// precision `assess` rounds to) exactly below 16, then 16 bins per
/// doubling (each at most 1/16 of its lower bound wide). The median read
/// from them is within 3.2% of the exact one, whatever the number of
/// outputs, and a rollup can hold it.
pub fn time_bin(hours: f64) -> usize {
    let v = (hours.max(0.0) * 100.0).round() as u64;
    if v < 16 {
        return v as usize;
    }
    let e = (63 - v.leading_zeros()).min(40) as usize;
    let m = ((v >> (e - 4)) & 15) as usize;
    16 + (e - 4) * 16 + m
}

/// The hours a bin stands for: its value below 16 hundredths, else the
/// middle of its range, to the hundredth.
pub(crate) fn bin_hours(bin: usize) -> f64 {
    if bin < 16 {
        return bin as f64 / 100.0;
    }
    let e = (bin - 16) / 16 + 4;
    let m = ((bin - 16) % 16) as u64;
    let lo = (16 + m) << (e - 4);
    let hi = (17 + m) << (e - 4);
    ((lo + hi - 1) as f64 / 2.0).round() / 100.0
}

/// The median of a histogram of `time_bin`s (`None` when empty): the bin
/// holding the middle rank, or the mean of the two middle bins.
pub fn histogram_median(bins: &[i64]) -> Option<f64> {
    let n: i64 = bins.iter().sum();
    if n <= 0 {
        return None;
    }
    let at = |rank: i64| {
        let mut seen = 0;
        for (bin, c) in bins.iter().enumerate() {
            seen += c;
            if seen > rank {
                return bin_hours(bin);
            }
        }
        bin_hours(bins.len().saturating_sub(1))
    };
    Some(if n % 2 == 1 {
        at(n / 2)
    } else {
        ((at(n / 2 - 1) + at(n / 2)) / 2.0 * 100.0).round() / 100.0
    })
}

/// A vector of counts, added to element-wise; missing elements are 0.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts(pub Vec<i64>);

impl Counts {
    pub fn get(&self, i: usize) -> i64 {
        self.0.get(i).copied().unwrap_or(0)
    }

    fn bump(&mut self, i: usize, by: i64) {
        if self.0.len() <= i {
            self.0.resize(i + 1, 0);
        }
        self.0[i] += by;
    }

    pub fn add(&mut self, other: &Counts) {
        for (i, v) in other.0.iter().enumerate() {
            self.bump(i, *v);
        }
    }

    /// `add` of counts as stored (`engine::pack`), without unpacking them
    /// into a vector first (the folds of every dashboard read).
    pub fn add_packed(&mut self, packed: &[u8]) {
        let n = packed.len() / 4;
        if self.0.len() < n {
            self.0.resize(n, 0);
        }
        for (s, c) in self.0.iter_mut().zip(super::engine::packed_counts(packed)) {
            *s += c;
        }
    }

    /// Counts as stored, one by one.
    pub fn packed_values(packed: &[u8]) -> impl Iterator<Item = i64> + '_ {
        super::engine::packed_counts(packed)
    }

    /// The first count (`field::COUNT`) of counts as stored.
    pub fn packed_count(packed: &[u8]) -> i64 {
        super::engine::packed_counts(packed).next().unwrap_or(0)
    }

    pub fn sub(&mut self, other: &Counts) {
        for (i, v) in other.0.iter().enumerate() {
            self.bump(i, -*v);
        }
    }

    pub fn is_zero(&self) -> bool {
        self.0.iter().all(|v| *v == 0)
    }

    /// The histogram of time to acceptance.
    pub fn histogram(&self) -> &[i64] {
        self.0.get(field::HISTOGRAM..).unwrap_or(&[])
    }

    /// A sums cell's value for outputs of `class` counting `counts`: the
    /// `CLASSES` counts of outputs by latest class, then `counts`.
    pub fn sums_of(class: usize, counts: &Counts) -> Counts {
        let mut v = vec![0; CLASSES + counts.0.len()];
        v[class] = counts.get(field::COUNT);
        v[CLASSES..].copy_from_slice(&counts.0);
        Counts(v)
    }

    /// One output's contribution (`None`: no outcome, counted nowhere).
    pub fn of(o: &OutcomeRecord) -> Counts {
        let mut c = Counts(vec![0; field::HISTOGRAM]);
        let reversed = o
            .details
            .get("accepted_then_reverted")
            .and_then(|v| v.as_bool())
            .unwrap_or(false);
        c.bump(field::COUNT, 1);
        c.bump(field::EXISTS_ONLY, i64::from(o.is_exists_only()));
        c.bump(field::NOT_DEDICATED, i64::from(!o.dedicated_evaluator));
        c.bump(field::REVERSED, i64::from(reversed));
        for (w, (name, _)) in CHECKPOINTS.iter().enumerate() {
            let Some(snap) = o.windows.get(name) else {
                continue;
            };
            let base = field::WINDOWS + w * field::WINDOW_FIELDS;
            c.bump(base + class(snap.outcome_status, snap.evidence_strength), 1);
            let exists_only =
                snap.human_check_signal == safe_outcomes_model::Signal::TargetExistsOnly.as_str();
            c.bump(base + field::W_EXISTS_ONLY, i64::from(exists_only));
            c.bump(
                base + field::W_NOT_DEDICATED,
                i64::from(!o.dedicated_evaluator),
            );
            c.bump(base + field::W_REVERSED, i64::from(reversed));
        }
        if let (OutcomeStatus::Accepted, Some(h)) = (o.outcome_status, o.time_to_acceptance_hours) {
            c.bump(field::HISTOGRAM + time_bin(h), 1);
        }
        c
    }
}

/// Pinned storage codes of the latest status and strength in a cell's key
/// (never the model's order).
const STATUS_CODES: [(OutcomeStatus, u8); 6] = [
    (OutcomeStatus::Accepted, 1),
    (OutcomeStatus::Rejected, 2),
    (OutcomeStatus::Pending, 3),
    (OutcomeStatus::Ignored, 4),
    (OutcomeStatus::Skipped, 5),
    (OutcomeStatus::Unknown, 6),
];
const STRENGTH_CODES: [(EvidenceStrength, u8); 4] = [
    (EvidenceStrength::Strong, 1),
    (EvidenceStrength::Medium, 2),
    (EvidenceStrength::Weak, 3),
    (EvidenceStrength::None, 4),
];

fn code<T: PartialEq + Copy>(table: &[(T, u8)], v: T) -> u8 {
    table.iter().find(|(t, _)| *t == v).map_or(0, |(_, c)| *c)
}

fn uncode<T: Copy>(table: &[(T, u8)], c: u8) -> Option<T> {
    table.iter().find(|(_, k)| *k == c).map(|(t, _)| *t)
}

/// The three periods an output is counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Days since 1970-01-01 (UTC).
    Day,
    /// ISO weeks (Monday 00:00 UTC), numbered from the week of 1970-01-01.
    Week,
    /// Every output, whenever it ran (period 0).
    All,
}

impl Level {
    fn byte(self) -> u8 {
        match self {
            Level::Day => b'd',
            Level::Week => b'w',
            Level::All => b'a',
        }
    }

    fn from_byte(b: u8) -> Option<Level> {
        match b {
            b'd' => Some(Level::Day),
            b'w' => Some(Level::Week),
            b'a' => Some(Level::All),
            _ => None,
        }
    }

    /// The level's byte in a sums cell's key: its cells' byte, uppercase.
    fn sums_byte(self) -> u8 {
        self.byte().to_ascii_uppercase()
    }

    fn from_sums_byte(b: u8) -> Option<Level> {
        b.is_ascii_uppercase()
            .then(|| Level::from_byte(b.to_ascii_lowercase()))
            .flatten()
    }
}

/// Which cells a read folds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grain {
    /// The cells, by latest status and strength (`Cell::key`).
    Status,
    /// The sums cells, every status together (`Cell::sums_key`).
    Sums,
}

/// The day number of an instant.
pub fn day_of(t: DateTime<Utc>) -> i64 {
    t.timestamp().div_euclid(86_400)
}

/// The week number of a day (1970-01-01 was a Thursday: day -3 a Monday).
pub fn week_of_day(day: i64) -> i64 {
    (day + 3).div_euclid(7)
}

/// The first day of a week.
pub fn first_day_of_week(week: i64) -> i64 {
    week * 7 - 3
}

/// Midnight (UTC) starting a day.
pub fn day_start(day: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(day * 86_400, 0).expect("days stay in chrono's range")
}

/// What a cell counts: outputs with these coordinates.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cell {
    pub level: Level,
    /// Day or week number (0 for `Level::All`).
    pub period: i64,
    /// The execution's repository, as written.
    pub repo: String,
    /// The outcome's workflow.
    pub workflow: Option<String>,
    /// The outcome's safe-output type.
    pub output_type: String,
    /// The latest outcome's status and strength.
    pub status: OutcomeStatus,
    pub strength: EvidenceStrength,
}

/// The coordinates of a stored output with an outcome, at every level, and
/// what it adds there.
pub fn cells_of(stored: &StoredOutput) -> Option<([Cell; 3], Counts)> {
    let o = stored.outcome.as_ref()?;
    let day = day_of(o.created_at);
    let cell = |level, period| Cell {
        level,
        period,
        repo: stored.execution.repo.clone(),
        workflow: o.workflow.clone(),
        output_type: o.safe_output_type.clone(),
        status: o.outcome_status,
        strength: o.evidence_strength,
    };
    Some((
        [
            cell(Level::Day, day),
            cell(Level::Week, week_of_day(day)),
            cell(Level::All, 0),
        ],
        Counts::of(o),
    ))
}

/// Order-preserving bytes of a (possibly negative) period.
fn period_bytes(period: i64) -> [u8; 8] {
    keys::ms_bytes(period)
}

/// `g/<level><repo lowercase>\0`: every cell of a repository at a level
/// (of `grain`: the sums cells' level byte is uppercase).
fn cells_of_repo(level: Level, grain: Grain, repo_lc: &str) -> Vec<u8> {
    let mut k = keys::ROLLUP.to_vec();
    k.push(match grain {
        Grain::Status => level.byte(),
        Grain::Sums => level.sums_byte(),
    });
    k.extend_from_slice(repo_lc.as_bytes());
    k.push(0);
    k
}

/// One row of the tally (`Cell::tally_key`): every repository's outputs,
/// over all time, with a latest status and strength, a workflow and a type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TallyRow {
    pub status: OutcomeStatus,
    pub strength: EvidenceStrength,
    pub workflow: Option<String>,
    pub output_type: String,
}

impl TallyRow {
    /// A tally key back into its row.
    pub fn parse(key: &[u8]) -> Option<TallyRow> {
        let rest = key.strip_prefix(keys::ROLLUP_TALLY)?;
        let (codes, rest) = rest.split_at_checked(2)?;
        let (workflow, output_type) = workflow_and_type(rest)?;
        Some(TallyRow {
            status: uncode(&STATUS_CODES, codes[0])?,
            strength: uncode(&STRENGTH_CODES, codes[1])?,
            workflow,
            output_type,
        })
    }
}

/// A cell key's `<workflow tag+name>\0<type>` (`Cell::push_workflow_and_type`)
/// read back: the type is after the last NUL.
fn workflow_and_type(rest: &[u8]) -> Option<(Option<String>, String)> {
    let type_start = rest.iter().rposition(|b| *b == 0)?;
    let output_type = std::str::from_utf8(&rest[type_start + 1..]).ok()?;
    let workflow = match rest[..type_start].split_first()? {
        (0, _) => None,
        (_, name) => Some(std::str::from_utf8(name).ok()?.to_string()),
    };
    Some((workflow, output_type.to_string()))
}

impl Cell {
    /// `g/<level><repo lc>\0<period><repo>\0<workflow tag+name>\0<type>\0<status><strength>`
    pub fn key(&self) -> Vec<u8> {
        let mut k = self.place_key(Grain::Status);
        k.push(0);
        k.push(code(&STATUS_CODES, self.status));
        k.push(code(&STRENGTH_CODES, self.strength));
        k
    }

    /// The key of the sums cell holding this cell's outputs:
    /// `g/<LEVEL><repo lc>\0<period><repo>\0<workflow tag+name>\0<type>`.
    pub(crate) fn sums_key(&self) -> Vec<u8> {
        self.place_key(Grain::Sums)
    }

    /// The key up to the type (every coordinate but status and strength).
    fn place_key(&self, grain: Grain) -> Vec<u8> {
        let mut k = cells_of_repo(self.level, grain, &self.repo.to_ascii_lowercase());
        k.extend_from_slice(&period_bytes(self.period));
        k.extend_from_slice(self.repo.as_bytes());
        k.push(0);
        self.push_workflow_and_type(&mut k);
        k
    }

    /// `<workflow tag+name>\0<type>`, the end of every key of a cell's
    /// (`workflow_and_type` reads it back).
    fn push_workflow_and_type(&self, k: &mut Vec<u8>) {
        match &self.workflow {
            Some(w) => {
                k.push(1);
                k.extend_from_slice(w.as_bytes());
            }
            None => k.push(0),
        }
        k.push(0);
        k.extend_from_slice(self.output_type.as_bytes());
    }

    /// A cell key without its status and strength codes (the cells of one
    /// repository, period, workflow and type share it and are adjacent),
    /// and those two.
    pub fn split_codes(key: &[u8]) -> Option<(&[u8], OutcomeStatus, EvidenceStrength)> {
        let (head, codes) = key.split_at_checked(key.len().checked_sub(2)?)?;
        Some((
            head,
            uncode(&STATUS_CODES, codes[0])?,
            uncode(&STRENGTH_CODES, codes[1])?,
        ))
    }

    pub fn parse(key: &[u8]) -> Option<Cell> {
        let (place, codes) = key.split_at_checked(key.len().checked_sub(3)?)?;
        let (status, strength) = (codes.get(1)?, codes.get(2)?);
        Cell::parse_place(
            place,
            Level::from_byte,
            uncode(&STATUS_CODES, *status)?,
            uncode(&STRENGTH_CODES, *strength)?,
        )
    }

    /// The key of the tally row an all-time cell counts in:
    /// `g/t<status><strength><workflow tag+name>\0<type>` (every
    /// repository's outputs with these coordinates, for `/metrics`).
    pub fn tally_key(&self) -> Vec<u8> {
        let mut k = keys::ROLLUP_TALLY.to_vec();
        k.push(code(&STATUS_CODES, self.status));
        k.push(code(&STRENGTH_CODES, self.strength));
        self.push_workflow_and_type(&mut k);
        k
    }

    /// A sums cell's key (`sums_key`) as a cell. It holds every status and
    /// strength: its `status` and `strength` stand for none (`Unknown`,
    /// `None`), and nothing that reads a sums cell may look at them.
    pub fn parse_sums(key: &[u8]) -> Option<Cell> {
        Cell::parse_place(
            key,
            Level::from_sums_byte,
            OutcomeStatus::Unknown,
            EvidenceStrength::None,
        )
    }

    fn parse_place(
        key: &[u8],
        level_of: fn(u8) -> Option<Level>,
        status: OutcomeStatus,
        strength: EvidenceStrength,
    ) -> Option<Cell> {
        let rest = key.strip_prefix(keys::ROLLUP)?;
        let (&level, rest) = rest.split_first()?;
        let level = level_of(level)?;
        let lc_end = rest.iter().position(|b| *b == 0)?;
        let rest = &rest[lc_end + 1..];
        let (period, rest) = keys::split_ms(rest)?;
        let repo_end = rest.iter().position(|b| *b == 0)?;
        let repo = std::str::from_utf8(&rest[..repo_end]).ok()?.to_string();
        let (workflow, output_type) = workflow_and_type(&rest[repo_end + 1..])?;
        Some(Cell {
            level,
            period,
            repo,
            workflow,
            output_type,
            status,
            strength,
        })
    }
}

/// The keys of a repository's (lowercase) cells of `grain` at `level` with
/// periods in `from..to`: (start, end).
pub(crate) fn cell_range(
    level: Level,
    grain: Grain,
    repo_lc: &str,
    from: i64,
    to: i64,
) -> (Vec<u8>, Vec<u8>) {
    let prefix = cells_of_repo(level, grain, repo_lc);
    (
        [prefix.as_slice(), &period_bytes(from)].concat(),
        [prefix.as_slice(), &period_bytes(to)].concat(),
    )
}

/// `g/r<repo lowercase>\0<repo>`: the directory of repositories.
fn directory_key(repo: &str) -> Vec<u8> {
    let mut k = keys::ROLLUP_REPOS.to_vec();
    k.extend_from_slice(repo.to_ascii_lowercase().as_bytes());
    k.push(0);
    k.extend_from_slice(repo.as_bytes());
    k
}

/// One entry of the time index: an output with an outcome, by when it ran,
/// with its outcome's workflow, and — in entries written since the index
/// holds them — its day cell and what it adds there (`cells_of`), so a
/// read of part of a day need not read the output.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeEntry {
    pub created_at: DateTime<Utc>,
    pub output_id: String,
    pub workflow: Option<String>,
    pub day: Option<(Cell, Counts)>,
}

/// A time index entry's value. Tag 2: the workflow (tag 0 or 1, name),
/// NUL, the repository as written, NUL, the type, NUL, the status and
/// strength codes, then the positions of the ones of the output's
/// `Counts` (u16 BE each: an output's own counts are all 0 or 1). Tags 0
/// (no workflow) and 1 (then the name) are the entries written before: the
/// workflow only. An output whose counts are not all 0 or 1 gets one of
/// those, and is read whole.
fn time_value(stored: &StoredOutput) -> Option<Vec<u8>> {
    let o = stored.outcome.as_ref()?;
    let workflow = o.workflow.as_deref();
    let counts = Counts::of(o);
    if counts.0.iter().any(|c| !(0..=1).contains(c)) {
        return Some(tagged_workflow(workflow));
    }
    let mut v = vec![2];
    v.extend(tagged_workflow(workflow));
    v.push(0);
    v.extend_from_slice(stored.execution.repo.as_bytes());
    v.push(0);
    v.extend_from_slice(o.safe_output_type.as_bytes());
    v.push(0);
    v.push(code(&STATUS_CODES, o.outcome_status));
    v.push(code(&STRENGTH_CODES, o.evidence_strength));
    for (i, _) in counts.0.iter().enumerate().filter(|(_, c)| **c == 1) {
        v.extend_from_slice(&(i as u16).to_be_bytes());
    }
    Some(v)
}

/// A workflow, tagged: 0 (none), or 1 then the name.
fn tagged_workflow(workflow: Option<&str>) -> Vec<u8> {
    match workflow {
        Some(w) => [&[1u8][..], w.as_bytes()].concat(),
        None => vec![0],
    }
}

/// The workflow of a time index value, and the day cell and counts when
/// it holds them (`time_value`).
#[allow(clippy::type_complexity)]
fn parse_time_value(
    value: &[u8],
    created_at: DateTime<Utc>,
) -> (Option<String>, Option<(Cell, Counts)>) {
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    match value.split_first() {
        Some((1, name)) => (Some(text(name)), None),
        Some((2, rest)) => {
            let mut parts = rest.splitn(4, |b| *b == 0);
            let (Some(workflow), Some(repo), Some(output_type), Some(tail)) =
                (parts.next(), parts.next(), parts.next(), parts.next())
            else {
                return (None, None);
            };
            let workflow = match workflow.split_first() {
                Some((1, name)) => Some(text(name)),
                _ => None,
            };
            let day = (|| {
                let (codes, ones) = tail.split_at_checked(2)?;
                let mut counts = Counts(vec![0; field::HISTOGRAM]);
                for i in ones.chunks_exact(2) {
                    counts.bump(u16::from_be_bytes([i[0], i[1]]) as usize, 1);
                }
                Some((
                    Cell {
                        level: Level::Day,
                        period: day_of(created_at),
                        repo: text(repo),
                        workflow: workflow.clone(),
                        output_type: text(output_type),
                        status: uncode(&STATUS_CODES, codes[0])?,
                        strength: uncode(&STRENGTH_CODES, codes[1])?,
                    },
                    counts,
                ))
            })();
            (workflow, day)
        }
        _ => (None, None),
    }
}

/// `y/<repo lowercase>\0`
fn times_of_repo(repo_lc: &str) -> Vec<u8> {
    let mut k = keys::TIME_INDEX.to_vec();
    k.extend_from_slice(repo_lc.as_bytes());
    k.push(0);
    k
}

fn time_key(repo: &str, at: DateTime<Utc>, id: &str) -> Vec<u8> {
    let mut k = times_of_repo(&repo.to_ascii_lowercase());
    k.extend_from_slice(&keys::ms_bytes(at.timestamp_millis()));
    k.extend_from_slice(id.as_bytes());
    k
}

fn parse_time_entry(prefix_len: usize, key: &[u8], value: &[u8]) -> Option<TimeEntry> {
    let rest = key.get(prefix_len..)?;
    let (ms, id) = keys::split_ms(rest)?;
    let created_at = DateTime::from_timestamp_millis(ms)?;
    let (workflow, day) = parse_time_value(value, created_at);
    Some(TimeEntry {
        created_at,
        output_id: String::from_utf8(id.to_vec()).ok()?,
        workflow,
        day,
    })
}

/// The rollup writes of one output going from `old` to `new` (either absent
/// or without an outcome): cell additions, and the time index entry moved.
#[derive(Default)]
pub(super) struct Change {
    pub adds: Vec<(Vec<u8>, Counts)>,
    pub index_removed: Option<Vec<u8>>,
    pub index_added: Option<(Vec<u8>, Vec<u8>)>,
}

/// An output's time index entry (key, value), when it has an outcome.
fn time_entry(stored: &StoredOutput) -> Option<(Vec<u8>, Vec<u8>)> {
    let o = stored.outcome.as_ref()?;
    Some((
        time_key(&stored.execution.repo, o.created_at, &stored.execution.id),
        time_value(stored)?,
    ))
}

pub(super) fn change(old: Option<&StoredOutput>, new: Option<&StoredOutput>) -> Change {
    let mut out = Change::default();
    let before = old.and_then(cells_of);
    let after = new.and_then(cells_of);
    if let (Some((a, ca)), Some((b, cb))) = (&before, &after) {
        if a == b && ca == cb {
            return out;
        }
    }
    if let Some((cells, counts)) = before {
        let mut minus = Counts::default();
        minus.sub(&counts);
        out.adds.extend(additions(cells, &minus));
        let stored = old.expect("cells of old");
        out.adds
            .push((directory_key(&stored.execution.repo), Counts(vec![-1])));
        out.index_removed = time_entry(stored).map(|(k, _)| k);
    }
    if let Some((cells, counts)) = after {
        out.adds.extend(additions(cells, &counts));
        let stored = new.expect("cells of new");
        out.adds
            .push((directory_key(&stored.execution.repo), Counts(vec![1])));
        out.index_added = time_entry(stored);
    }
    let same = old.and_then(time_entry) == new.and_then(time_entry);
    if same {
        out.index_added = None;
        out.index_removed = None;
    } else if out.index_added.as_ref().map(|(k, _)| k) == out.index_removed.as_ref() {
        out.index_removed = None;
    }
    out
}

/// What adding `counts` (of outputs in `cells`) writes: each cell, and
/// its sums cell (`Counts::sums_of`).
fn additions(cells: [Cell; 3], counts: &Counts) -> impl Iterator<Item = (Vec<u8>, Counts)> + '_ {
    cells.into_iter().flat_map(move |cell| {
        let sums = Counts::sums_of(class(cell.status, cell.strength), counts);
        let tally = (cell.level == Level::All).then(|| tally_addition(&cell, counts));
        [(cell.key(), counts.clone()), (cell.sums_key(), sums)]
            .into_iter()
            .chain(tally)
    })
}

/// What an all-time cell's `counts` add to its tally row: their count.
fn tally_addition(cell: &Cell, counts: &Counts) -> (Vec<u8>, Counts) {
    (cell.tally_key(), Counts(vec![counts.get(field::COUNT)]))
}

/// Is this the key of a status cell or of the directory: what the cells'
/// build writes (the sums cells and the tally come from the cells)?
fn built_from_outputs(key: &[u8]) -> bool {
    !is_sums_key(key) && !key.starts_with(keys::ROLLUP_TALLY)
}

/// Is this the key of a sums cell (`Cell::sums_key`)?
fn is_sums_key(key: &[u8]) -> bool {
    key.strip_prefix(keys::ROLLUP)
        .and_then(|rest| rest.first())
        .is_some_and(|b| Level::from_sums_byte(*b).is_some())
}

/// Fold the rollup additions into a batch (one addition per key).
/// An output's line-survival cells and their counts.
pub(crate) type LineCounts<'a> =
    &'a dyn Fn(&Store, &StoredOutput) -> Result<Vec<(Vec<u8>, Counts)>>;

pub(super) fn add_to_batch(batch: &mut Batch, adds: Vec<(Vec<u8>, Counts)>) {
    let mut folded: std::collections::BTreeMap<Vec<u8>, Counts> = Default::default();
    for (k, c) in adds {
        folded.entry(k).or_default().add(&c);
    }
    for (k, c) in folded {
        if !c.is_zero() {
            batch.add_all(k, c.0);
        }
    }
}

/// How far the rollups of a store cover its outputs (`Store::ensure_rollups`):
/// 0 not built, `CELLS_BUILT` the cells, `SUMS_BUILT` the cells and the
/// sums cells, `TALLY_BUILT` those and the tally (a binary before the sums
/// cells takes any value above 0 as built).
const BUILT: &str = "rollups_built_v1";
const CELLS_BUILT: u64 = 1;
const SUMS_BUILT: u64 = 2;
const TALLY_BUILT: u64 = 3;

impl Store {
    /// The repositories with outputs counted: (lowercase, as written), all
    /// of them or those under one lowercase name.
    pub fn rollup_repos(&self, lowercase: Option<&str>) -> Result<Vec<(String, String)>> {
        let mut prefix = keys::ROLLUP_REPOS.to_vec();
        if let Some(lc) = lowercase {
            prefix.extend_from_slice(lc.as_bytes());
            prefix.push(0);
        }
        let mut out = Vec::new();
        for item in self.db.scan_prefix(prefix) {
            let (k, v) = item?;
            if super::engine::unpack(&v).first().copied().unwrap_or(0) <= 0 {
                continue;
            }
            let rest = &k[keys::ROLLUP_REPOS.len()..];
            let Some(cut) = rest.iter().position(|b| *b == 0) else {
                continue;
            };
            let lc = String::from_utf8_lossy(&rest[..cut]).into_owned();
            let exact = String::from_utf8_lossy(&rest[cut + 1..]).into_owned();
            out.push((lc, exact));
        }
        Ok(out)
    }

    /// The tally (`Cell::tally_key`): each row and its count, in key order.
    pub fn rollup_tally(&self) -> impl Iterator<Item = Result<(TallyRow, i64)>> + '_ {
        self.db
            .scan_prefix(keys::ROLLUP_TALLY)
            .filter_map(|item| match item {
                Err(e) => Some(Err(e)),
                Ok((k, v)) => TallyRow::parse(&k).map(|row| Ok((row, Counts::packed_count(&v)))),
            })
    }

    /// The cells of `grain` of one repository (lowercase) at `level` with
    /// periods in `from..to`, as stored: each cell's key and packed counts.
    pub fn rollup_cells_packed(
        &self,
        level: Level,
        grain: Grain,
        repo_lc: &str,
        from: i64,
        to: i64,
    ) -> impl Iterator<Item = Result<(super::engine::Bytes, super::engine::Bytes)>> + '_ {
        let (start, end) = cell_range(level, grain, repo_lc, from, to);
        self.db.range(start..end)
    }

    /// The outputs of one repository (lowercase) that ran in `from..to`, in
    /// time order.
    pub fn outputs_by_time(
        &self,
        repo_lc: &str,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> impl Iterator<Item = Result<TimeEntry>> + '_ {
        let prefix = times_of_repo(repo_lc);
        let at =
            |t: DateTime<Utc>| [prefix.as_slice(), &keys::ms_bytes(t.timestamp_millis())].concat();
        let n = prefix.len();
        self.db
            .range(at(from)..at(to))
            .filter_map(move |item| match item {
                Err(e) => Some(Err(e)),
                Ok((k, v)) => parse_time_entry(n, &k, &v).map(Ok),
            })
    }

    /// Count every stored output into the rollups once, for a store written
    /// before they existed (`build_cells`), then its cells into the sums
    /// cells, for a store written before those (`build_sums`). Both run at
    /// open, before the worker: on PostgreSQL run them with one replica
    /// (outputs another replica's worker writes meanwhile may be counted
    /// twice).
    ///
    /// `line_counts` gives an output's line-survival cells and counts (the
    /// attributions', `attribution::line_counts`, wired in by the crate's
    /// root so that the rollups need not know attributions).
    pub(crate) fn build_rollups(&self, line_counts: LineCounts) -> Result<()> {
        if self.counter(BUILT) < CELLS_BUILT {
            self.build_cells(line_counts)?;
        }
        if self.counter(BUILT) < SUMS_BUILT {
            self.build_sums()?;
        }
        if self.counter(BUILT) < TALLY_BUILT {
            self.build_tally()?;
        }
        Ok(())
    }

    /// The cells from the outputs: a chunk of outputs per batch, each batch
    /// also recording the last output counted, so an interrupted build
    /// resumes where it stopped. No sums cell: those come from the cells
    /// (`build_sums`), whichever binary wrote the chunks before.
    fn build_cells(&self, line_counts: LineCounts) -> Result<()> {
        let mut from = self.resume_from(keys::ROLLUP_PROGRESS, keys::OUTPUT)?;
        let end = super::engine::prefix_end(keys::OUTPUT).expect("prefix end");
        loop {
            let mut batch = Batch::default();
            let mut adds = Vec::new();
            let mut last = None;
            let mut lines = Vec::new();
            for item in self.db.range(from.clone()..end.clone()).take(BUILD_CHUNK) {
                let (k, v) = item?;
                let stored = codec::decode_output(&k, &v)?;
                lines.extend(line_counts(self, &stored)?);
                let c = change(None, Some(&stored));
                adds.extend(c.adds.into_iter().filter(|(k, _)| built_from_outputs(k)));
                if let Some((key, value)) = c.index_added {
                    batch.insert(key, value);
                }
                last = Some(k.to_vec());
            }
            add_to_batch(&mut batch, adds);
            if !lines.is_empty() {
                // The attributions' tree first: a crash before the progress
                // is written counts this chunk's lines again (rare, small).
                let mut tree = Batch::default();
                add_to_batch(&mut tree, lines);
                self.db.open_tree("attribution")?.apply_batch(tree)?;
            }
            match self.end_chunk(batch, last, keys::ROLLUP_PROGRESS, CELLS_BUILT)? {
                Some(next) => from = next,
                None => return Ok(()),
            }
        }
    }

    /// The sums cells from the cells (exact: a sums cell is the sum of the
    /// cells that differ from it only in status and strength).
    fn build_sums(&self) -> Result<()> {
        // The directory, the progress keys, the tally and the sums cells
        // themselves parse as no cell.
        let (progress, stage) = (keys::ROLLUP_SUMS_PROGRESS, SUMS_BUILT);
        self.build_from_cells(keys::ROLLUP, progress, stage, |cell, counts| {
            let sums = Counts::sums_of(class(cell.status, cell.strength), &counts);
            Some((cell.sums_key(), sums))
        })
    }

    /// The tally from the all-time cells (exact: a tally row is the sum of
    /// the counts of the all-time cells that differ from it only in their
    /// repository).
    fn build_tally(&self) -> Result<()> {
        let all = [keys::ROLLUP, &[Level::All.byte()]].concat();
        let (progress, stage) = (keys::ROLLUP_TALLY_PROGRESS, TALLY_BUILT);
        self.build_from_cells(&all, progress, stage, |cell, counts| {
            (cell.level == Level::All).then(|| tally_addition(cell, &counts))
        })
    }

    /// A build stage from the cells under `prefix`: what `derive` adds for
    /// each, a chunk of cells per batch, each batch also recording the last
    /// cell counted (`progress`), so an interrupted build resumes there.
    fn build_from_cells(
        &self,
        prefix: &[u8],
        progress: &[u8],
        stage: u64,
        derive: impl Fn(&Cell, Counts) -> Option<(Vec<u8>, Counts)>,
    ) -> Result<()> {
        let mut from = self.resume_from(progress, prefix)?;
        let end = super::engine::prefix_end(prefix).expect("prefix end");
        loop {
            let mut batch = Batch::default();
            let mut adds = Vec::new();
            let mut last = None;
            for item in self.db.range(from.clone()..end.clone()).take(BUILD_CHUNK) {
                let (k, v) = item?;
                let counts = || Counts(super::engine::unpack(&v));
                adds.extend(Cell::parse(&k).and_then(|cell| derive(&cell, counts())));
                last = Some(k.to_vec());
            }
            add_to_batch(&mut batch, adds);
            match self.end_chunk(batch, last, progress, stage)? {
                Some(next) => from = next,
                None => return Ok(()),
            }
        }
    }

    /// Where a build stage starts: past the last key its `progress` key
    /// records, or at `first`.
    fn resume_from(&self, progress: &[u8], first: &[u8]) -> Result<Vec<u8>> {
        Ok(match self.db.get(progress)? {
            Some(last) => [last.as_ref(), &[0]].concat(),
            None => first.to_vec(),
        })
    }

    /// Apply a build chunk's `batch` with its progress (`last`: the last key
    /// counted) and return where the next chunk starts; or, after an empty
    /// chunk, record the `stage` built and return `None`.
    fn end_chunk(
        &self,
        mut batch: Batch,
        last: Option<Vec<u8>>,
        progress: &[u8],
        stage: u64,
    ) -> Result<Option<Vec<u8>>> {
        match last {
            Some(last) => {
                batch.insert(progress, &last);
                self.db.apply_batch(batch)?;
                Ok(Some([last.as_slice(), &[0]].concat()))
            }
            None => {
                batch.insert(keys::counter(BUILT), stage.to_be_bytes());
                batch.remove(progress);
                self.db.apply_batch(batch)?;
                Ok(None)
            }
        }
    }
}

impl Store {
    /// Remove every rollup, the time index and the marker, as in a store
    /// written before them (tests of `ensure_rollups`).
    #[cfg(any(test, feature = "test-hooks"))]
    #[doc(hidden)]
    pub fn forget_rollups_for_tests(&self) -> Result<()> {
        let mut batch = Batch::default();
        for prefix in [keys::ROLLUP, keys::TIME_INDEX] {
            for item in self.db.scan_prefix(prefix) {
                batch.remove(item?.0);
            }
        }
        batch.remove(keys::counter(BUILT));
        self.db.apply_batch(batch)?;
        let tree = self.db.open_tree("attribution")?;
        let mut lines = Batch::default();
        for item in tree.scan_prefix(keys::ROLLUP) {
            lines.remove(tree.strip(&item?.0));
        }
        tree.apply_batch(lines)
    }
}

impl Store {
    /// Rewrite every time index entry as written before entries held their
    /// output's day cell (the workflow only), as in an older store (tests
    /// of the reads that fall back to the output).
    #[cfg(any(test, feature = "test-hooks"))]
    #[doc(hidden)]
    pub fn time_index_as_before_for_tests(&self) -> Result<()> {
        let mut batch = Batch::default();
        for item in self.db.scan_prefix(keys::TIME_INDEX) {
            let (k, v) = item?;
            let workflow = parse_time_value(&v, DateTime::<Utc>::MIN_UTC).0;
            batch.insert(k, tagged_workflow(workflow.as_deref()));
        }
        self.db.apply_batch(batch)
    }

    /// Remove the tally, the marker saying the cells and the sums cells
    /// are built, as in a store written before it (tests of
    /// `ensure_rollups`).
    #[cfg(any(test, feature = "test-hooks"))]
    #[doc(hidden)]
    pub fn forget_rollup_tally_for_tests(&self) -> Result<()> {
        self.forget_rollups(keys::ROLLUP_TALLY, |_| true, SUMS_BUILT)
    }

    /// Remove the sums cells and the tally, the marker saying only the
    /// cells are built, as in a store written before them (tests of
    /// `ensure_rollups`).
    #[cfg(any(test, feature = "test-hooks"))]
    #[doc(hidden)]
    pub fn forget_rollup_sums_for_tests(&self) -> Result<()> {
        self.forget_rollups(keys::ROLLUP, |key| !built_from_outputs(key), CELLS_BUILT)
    }

    /// Remove the keys under `prefix` that `forget` picks, and say the
    /// rollups are built as far as `built` (`CELLS_BUILT`, `SUMS_BUILT`).
    #[cfg(any(test, feature = "test-hooks"))]
    fn forget_rollups(
        &self,
        prefix: &[u8],
        forget: impl Fn(&[u8]) -> bool,
        built: u64,
    ) -> Result<()> {
        let mut batch = Batch::default();
        for item in self.db.scan_prefix(prefix) {
            let key = item?.0;
            if forget(&key) {
                batch.remove(key);
            }
        }
        batch.insert(keys::counter(BUILT), built.to_be_bytes());
        self.db.apply_batch(batch)
    }
}

/// Outputs (or cells) counted per batch by `ensure_rollups`.
const BUILD_CHUNK: usize = 5_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_bins_are_monotone_and_their_hours_fall_inside() {
        let mut last = 0;
        for v in 0..200_000u64 {
            let h = v as f64 / 100.0;
            let b = time_bin(h);
            assert!(b >= last, "{v}");
            last = b;
            let mid = bin_hours(b);
            assert!((mid - h).abs() <= h * 0.033 + 1e-9, "{v}: {mid}");
        }
        assert_eq!(bin_hours(time_bin(0.07)), 0.07);
    }

    #[test]
    fn the_histogram_median_takes_the_middle_ranks() {
        let mut bins = vec![0i64; 40];
        for h in [0.01, 0.02, 0.03] {
            bins[time_bin(h)] += 1;
        }
        assert_eq!(histogram_median(&bins), Some(0.02));
        bins[time_bin(0.04)] += 1;
        assert_eq!(histogram_median(&bins), Some(0.03));
        assert_eq!(histogram_median(&[]), None);
    }

    #[test]
    fn cell_keys_round_trip_and_sort_by_period_within_a_repository() {
        let cell = |period, workflow: Option<&str>| Cell {
            level: Level::Week,
            period,
            repo: "Acme/Widgets".into(),
            workflow: workflow.map(str::to_string),
            output_type: "add_comment".into(),
            status: OutcomeStatus::Rejected,
            strength: EvidenceStrength::Medium,
        };
        for c in [
            cell(-3, Some("triage")),
            cell(2900, None),
            cell(0, Some("")),
        ] {
            assert_eq!(Cell::parse(&c.key()), Some(c.clone()));
        }
        assert!(cell(-3, Some("z")).key() < cell(2, Some("a")).key());
    }

    #[test]
    fn weeks_start_on_mondays() {
        // 2026-11-16 is a Monday.
        let monday = DateTime::parse_from_rfc3339("2026-11-16T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let week = week_of_day(day_of(monday));
        assert_eq!(day_start(first_day_of_week(week)), monday);
        assert_eq!(week_of_day(day_of(monday) - 1), week - 1);
        assert_eq!(week_of_day(day_of(monday) + 6), week);
    }
}
