//! Reads from the rollups (`store::rollup`): the report, the weekly series,
//! the workflows table, the trend and the `/metrics` tally, for any cut of
//! `ReadFilter` and any reader's scope, at a cost set by the number of cells
//! in the range asked for, never by the number of outputs in it.
//!
//! A read resolves the scope against the directory of repositories first
//! (`RepoScope::Only` of nothing reads nothing), then splits `since..until`
//! into whole weeks, whole days and at most two partial days
//! (`segments`): cells for the first two — the sums cells unless the read
//! cuts on status or strength (`fold_grain`) — the time index for the
//! partial days (each entry holds its output's day cell and counts; the
//! output itself is read only for entries written before they did). A
//! partial day longer than half a day is read as its day's cells less the
//! entries of the rest of the day (`part_of_day`). Every answer equals what a scan of every
//! output would give (`tests/it/rollups.rs` compares them).

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, Utc};

use crate::read::query::{ReadFilter, RepoScope};
use crate::read::report::{Report, Sums};
use crate::store::rollup::{
    cells_of, class, day_of, day_start, first_day_of_week, week_of_day, Cell, Counts, Grain, Level,
    TimeEntry,
};
use crate::store::{Result, Store};

/// A day far outside any output's time, standing for "unbounded".
const FAR: i64 = 1 << 40;

/// A part of `since..until`.
#[derive(Debug, Clone, PartialEq)]
enum Segment {
    /// The cells of `level` with periods in `from..to`.
    Cells(Level, i64, i64),
    /// The outputs that ran in `from..to`, read one by one (part of a day),
    /// added (`1`) or taken away (`-1`: the rest of a day read whole).
    Edge(DateTime<Utc>, DateTime<Utc>, i64),
}

/// The part `from..to` of one day: read entry by entry when it is at most
/// half the day, else as the day's cells less the rest of the day (at
/// most half a day of entries either way).
fn part_of_day(from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<Segment> {
    let day = day_of(from);
    let (start, end) = (day_start(day), day_start(day + 1));
    if to - from <= Duration::hours(12) {
        return vec![Segment::Edge(from, to, 1)];
    }
    let mut out = vec![Segment::Cells(Level::Day, day, day + 1)];
    out.extend((start < from).then_some(Segment::Edge(start, from, -1)));
    out.extend((to < end).then_some(Segment::Edge(to, end, -1)));
    out
}

/// `since..until` as whole weeks, whole days and partial days
/// (`part_of_day`).
fn segments(since: Option<DateTime<Utc>>, until: Option<DateTime<Utc>>) -> Vec<Segment> {
    if since.is_none() && until.is_none() {
        return vec![Segment::Cells(Level::All, 0, 1)];
    }
    let midnight = |t: DateTime<Utc>| t == day_start(day_of(t));
    let mut out = Vec::new();
    let first = match since {
        None => -FAR,
        Some(t) if midnight(t) => day_of(t),
        Some(t) => day_of(t) + 1,
    };
    let end = match until {
        None => FAR,
        Some(t) => day_of(t),
    };
    if let (Some(s), Some(u)) = (since, until) {
        if first > end {
            // Both inside one day.
            return part_of_day(s, u);
        }
    }
    if let Some(t) = since.filter(|t| !midnight(*t)) {
        out.extend(part_of_day(t, day_start(first)));
    }
    // Whole weeks inside first..end.
    let w0 = match week_of_day(first) {
        w if first_day_of_week(w) == first => w,
        w => w + 1,
    };
    let w1 = week_of_day(end);
    if w0 < w1 {
        out.push(Segment::Cells(Level::Day, first, first_day_of_week(w0)));
        out.push(Segment::Cells(Level::Week, w0, w1));
        out.push(Segment::Cells(Level::Day, first_day_of_week(w1), end));
    } else {
        out.push(Segment::Cells(Level::Day, first, end));
    }
    if let Some(t) = until.filter(|t| !midnight(*t)) {
        out.extend(part_of_day(day_start(end), t));
    }
    out.retain(|s| !matches!(s, Segment::Cells(_, a, b) if a >= b));
    coalesce(out)
}

/// Join cell segments of one level that touch (a partial day read as its
/// day's cells, beside the whole days after it): one range read instead of
/// two, in every repository a read covers. A cold read pays for each range
/// it opens (BENCHMARKS.md, the partial-days report at 1M outputs).
fn coalesce(parts: Vec<Segment>) -> Vec<Segment> {
    let mut cells: Vec<Segment> = Vec::new();
    let mut edges = Vec::new();
    for part in parts {
        match part {
            Segment::Cells(level, from, to) => {
                let touching = cells.iter_mut().find_map(|c| match c {
                    Segment::Cells(l, a, b) if *l == level && (*b == from || to == *a) => {
                        Some((a, b))
                    }
                    _ => None,
                });
                match touching {
                    Some((a, b)) => (*a, *b) = ((*a).min(from), (*b).max(to)),
                    None => cells.push(Segment::Cells(level, from, to)),
                }
            }
            edge => edges.push(edge),
        }
    }
    cells.extend(edges);
    cells
}

/// The repositories a read covers: (lowercase, the names as written under
/// it) that the scope allows and the `repo` cut names. Nothing is read for
/// a scope of no repository.
pub(crate) fn repositories(
    store: &Store,
    filter: &ReadFilter,
    scope: &RepoScope,
) -> Result<Vec<(String, Vec<String>)>> {
    let named = match scope {
        RepoScope::Only(repos) if repos.is_empty() => return Ok(Vec::new()),
        RepoScope::Only(repos) => {
            let mut all = Vec::new();
            for lc in repos {
                all.extend(store.rollup_repos(Some(lc))?);
            }
            all
        }
        RepoScope::All => match &filter.repo {
            Some(r) => store.rollup_repos(Some(&r.to_ascii_lowercase()))?,
            None => store.rollup_repos(None)?,
        },
    };
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (lc, exact) in named {
        if scope.allows(&exact) && filter.repo.as_deref().is_none_or(|r| r == exact) {
            out.entry(lc).or_default().push(exact);
        }
    }
    Ok(out.into_iter().collect())
}

/// Does a cell pass the cuts that name its coordinates?
fn admits(filter: &ReadFilter, repos: &[String], cell: &Cell) -> bool {
    admits_coordinates(filter, repos, cell)
        && filter.status.is_none_or(|s| s == cell.status)
        && filter.strength.is_none_or(|s| s == cell.strength)
}

/// `admits`, but for the status and strength cuts.
fn admits_coordinates(filter: &ReadFilter, repos: &[String], cell: &Cell) -> bool {
    repos.contains(&cell.repo) && filter.admits_kind(cell.workflow.as_deref(), &cell.output_type)
}

/// The week a cell's outputs ran in (`None` for all time).
pub fn week_of(cell: &Cell) -> Option<i64> {
    match cell.level {
        Level::Day => Some(week_of_day(cell.period)),
        Level::Week => Some(cell.period),
        Level::All => None,
    }
}

/// Sum the outputs `filter` and `scope` admit into groups (`group` names a
/// cell's group, `None` leaves it out). A group may not depend on a cell's
/// status or strength. Without a status or strength cut the sums cells are
/// read (`Grain::Sums`: every status of a repository, period, workflow and
/// type in one cell), else the cells (`fold_grain`). Partial days are read
/// from the time index as day cells of one output each.
pub(crate) fn fold<G: Ord>(
    store: &Store,
    filter: &ReadFilter,
    scope: &RepoScope,
    group: impl FnMut(&Cell) -> Option<G>,
) -> Result<BTreeMap<G, Sums>> {
    fold_grain(store, filter, scope, Grain::Sums, group)
}

/// `fold` from the cells of `grain`, where exact: the sums cells hold no
/// status or strength, so a cut on either reads the cells whatever
/// `grain` says. The cells that differ only in status and strength are
/// adjacent in the store: they are parsed, admitted and grouped once as a
/// run, their counts added as stored (`Counts::add_packed`). Both grains
/// give the same sums (`tests/it/rollups.rs`).
pub fn fold_grain<G: Ord>(
    store: &Store,
    filter: &ReadFilter,
    scope: &RepoScope,
    grain: Grain,
    mut group: impl FnMut(&Cell) -> Option<G>,
) -> Result<BTreeMap<G, Sums>> {
    let grain = match filter.status.is_some() || filter.strength.is_some() {
        true => Grain::Status,
        false => grain,
    };
    let mut out: BTreeMap<G, Sums> = BTreeMap::new();
    let parts = segments(filter.since, filter.until);
    for (lc, repos) in repositories(store, filter, scope)? {
        for part in &parts {
            match (part, grain) {
                (Segment::Cells(level, from, to), Grain::Sums) => {
                    for item in store.rollup_cells_packed(*level, grain, &lc, *from, *to) {
                        let (key, counts) = item?;
                        let Some(cell) = Cell::parse_sums(&key) else {
                            continue;
                        };
                        if !admits_coordinates(filter, &repos, &cell) {
                            continue;
                        }
                        if let Some(g) = group(&cell) {
                            out.entry(g).or_default().add_packed_sums(&counts);
                        }
                    }
                }
                (Segment::Cells(level, from, to), Grain::Status) => {
                    let mut run = Run::default();
                    for item in store.rollup_cells_packed(*level, grain, &lc, *from, *to) {
                        let (key, counts) = item?;
                        let Some((head, status, strength)) = Cell::split_codes(&key) else {
                            continue;
                        };
                        if run.head != head {
                            run.flush(&mut out);
                            run = Run::start(head, &key, filter, &repos, &mut group);
                        }
                        let Some(sums) = run.sums.as_mut() else {
                            continue;
                        };
                        if filter.status.is_none_or(|s| s == status)
                            && filter.strength.is_none_or(|s| s == strength)
                        {
                            let class = class(status, strength);
                            sums.latest[class] += Counts::packed_count(&counts);
                            sums.counts.add_packed(&counts);
                        }
                    }
                    run.flush(&mut out);
                }
                (Segment::Edge(from, to, sign), _) => {
                    for entry in store.outputs_by_time(&lc, *from, *to) {
                        let Some((day, counts)) = day_cell(store, entry?)? else {
                            continue;
                        };
                        let counts = signed(counts, *sign);
                        if admits(filter, &repos, &day) {
                            if let Some(g) = group(&day) {
                                out.entry(g)
                                    .or_default()
                                    .add(class(day.status, day.strength), &counts);
                            }
                        }
                    }
                }
            }
        }
    }
    // Cells whose outputs all moved elsewhere count nothing.
    out.retain(|_, s| s.counts.get(crate::store::rollup::field::COUNT) != 0);
    Ok(out)
}

/// `counts`, taken away when `sign` is negative.
fn signed(counts: Counts, sign: i64) -> Counts {
    match sign < 0 {
        true => Counts(counts.0.iter().map(|c| -c).collect()),
        false => counts,
    }
}

/// The day cell of a time index entry's output and what it adds there:
/// from the entry when it holds them, else from the output.
fn day_cell(store: &Store, entry: TimeEntry) -> Result<Option<(Cell, Counts)>> {
    if entry.day.is_some() {
        return Ok(entry.day);
    }
    let Some(stored) = store.output(&entry.output_id)? else {
        return Ok(None);
    };
    Ok(cells_of(&stored).map(|([day, ..], counts)| (day, counts)))
}

/// Adjacent cells of one repository, period, workflow and type (`fold`):
/// their key without the codes, their group, and their sums so far
/// (`None`: not admitted, or in no group).
struct Run<G> {
    head: Vec<u8>,
    group: Option<G>,
    sums: Option<Sums>,
}

impl<G> Default for Run<G> {
    fn default() -> Run<G> {
        Run {
            head: Vec::new(),
            group: None,
            sums: None,
        }
    }
}

impl<G: Ord> Run<G> {
    /// The run a cell key starts: parsed, admitted on its coordinates (the
    /// status and strength cuts are the caller's, cell by cell), grouped.
    fn start(
        head: &[u8],
        key: &[u8],
        filter: &ReadFilter,
        repos: &[String],
        group: &mut impl FnMut(&Cell) -> Option<G>,
    ) -> Run<G> {
        let grouped = Cell::parse(key)
            .filter(|cell| admits_coordinates(filter, repos, cell))
            .and_then(|cell| group(&cell));
        Run {
            head: head.to_vec(),
            sums: grouped.as_ref().map(|_| Sums::default()),
            group: grouped,
        }
    }

    fn flush(&mut self, out: &mut BTreeMap<G, Sums>) {
        if let (Some(g), Some(sums)) = (self.group.take(), self.sums.take()) {
            out.entry(g).or_default().merge(&sums);
        }
    }
}

/// Line-survival counts per workflow (`store::attribution::line_field`)
/// of the outputs `filter` and `scope` admit, from the line-survival cells;
/// `None` when `filter` cuts on status or strength (which the cells do not
/// hold: the caller counts from the attributions).
pub(crate) fn lines_by_workflow(
    store: &Store,
    filter: &ReadFilter,
    scope: &RepoScope,
) -> Result<Option<BTreeMap<String, Counts>>> {
    use crate::store::attribution;
    if filter.status.is_some() || filter.strength.is_some() {
        return Ok(None);
    }
    let mut out: BTreeMap<String, Counts> = BTreeMap::new();
    let mut add = |cell: &Cell, counts: &Counts| {
        let name = cell.workflow.clone().unwrap_or_else(|| "(none)".into());
        out.entry(name).or_default().add(counts);
    };
    let parts = segments(filter.since, filter.until);
    for (lc, repos) in repositories(store, filter, scope)? {
        for part in &parts {
            match part {
                Segment::Cells(level, from, to) => {
                    for (cell, counts) in attribution::cells(store, *level, &lc, *from, *to)? {
                        if admits(filter, &repos, &cell) {
                            add(&cell, &counts);
                        }
                    }
                }
                Segment::Edge(from, to, sign) => {
                    for entry in store.outputs_by_time(&lc, *from, *to) {
                        let entry = entry?;
                        let Some(stored) = store.output(&entry.output_id)? else {
                            continue;
                        };
                        let (Some([day, ..]), Some(a)) = (
                            attribution::line_cells(&stored),
                            attribution::get(store, &entry.output_id)?,
                        ) else {
                            continue;
                        };
                        if admits(filter, &repos, &day) {
                            add(&day, &signed(attribution::survival_counts(&a), *sign));
                        }
                    }
                }
            }
        }
    }
    out.retain(|_, c| c.get(attribution::line_field::OUTPUTS_ATTRIBUTED) != 0);
    Ok(Some(out))
}

/// What a dashboard page shows over a cut, from one fold of the cells: the
/// report, the sums of all its outputs (their windows tell which window
/// each awaits), and the repositories, workflows and types present (the
/// filter form's choices).
#[derive(Debug, Clone)]
pub struct Summary {
    pub report: Report,
    pub all: Sums,
    /// Per workflow (`(none)` when unnamed).
    pub by_workflow: BTreeMap<String, Sums>,
    pub repos: BTreeSet<String>,
    pub workflows: BTreeSet<String>,
    pub types: BTreeSet<String>,
}

/// The `Summary` of what `filter` and `scope` admit; the report at
/// `window` (`Report::from_sums`).
pub fn summary(
    store: &Store,
    filter: &ReadFilter,
    scope: &RepoScope,
    window: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Summary> {
    let cells = fold(store, filter, scope, |c| {
        Some((c.repo.clone(), c.workflow.clone(), c.output_type.clone()))
    })?;
    let mut by_type: BTreeMap<String, Sums> = BTreeMap::new();
    let mut by_workflow: BTreeMap<String, Sums> = BTreeMap::new();
    let (mut all, mut repos, mut workflows) = (Sums::default(), BTreeSet::new(), BTreeSet::new());
    for ((repo, workflow, output_type), sums) in &cells {
        by_type.entry(output_type.clone()).or_default().merge(sums);
        let name = workflow.clone().unwrap_or_else(|| "(none)".into());
        by_workflow.entry(name).or_default().merge(sums);
        all.merge(sums);
        repos.insert(repo.clone());
        workflows.extend(workflow.clone());
    }
    Ok(Summary {
        report: Report::from_sums(&by_type, &by_workflow, filter.repo.as_deref(), window, now),
        all,
        by_workflow,
        repos,
        workflows,
        types: by_type.into_keys().collect(),
    })
}

/// The report of what `filter` and `scope` admit (`summary`).
pub fn report(
    store: &Store,
    filter: &ReadFilter,
    scope: &RepoScope,
    window: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Report> {
    Ok(summary(store, filter, scope, window, now)?.report)
}

/// Sums per week (numbered as `store::rollup::week_of_day`) over `weeks`
/// weeks from `first` (a Monday), within `filter`'s own range.
pub fn weekly(
    store: &Store,
    filter: &ReadFilter,
    scope: &RepoScope,
    first: DateTime<Utc>,
    weeks: i64,
) -> Result<BTreeMap<i64, Sums>> {
    in_weeks(store, filter, scope, first, weeks, week_of)
}

/// `weekly` per workflow (`(none)` when unnamed): the workflows table's
/// sparklines.
pub fn weekly_by_workflow(
    store: &Store,
    filter: &ReadFilter,
    scope: &RepoScope,
    first: DateTime<Utc>,
    weeks: i64,
) -> Result<BTreeMap<String, BTreeMap<i64, Sums>>> {
    let cells = in_weeks(store, filter, scope, first, weeks, |c| {
        let name = c.workflow.clone().unwrap_or_else(|| "(none)".into());
        Some((name, week_of(c)?))
    })?;
    let mut out: BTreeMap<String, BTreeMap<i64, Sums>> = BTreeMap::new();
    for ((name, week), sums) in cells {
        out.entry(name).or_default().insert(week, sums);
    }
    Ok(out)
}

/// `fold` over the `weeks` weeks from `first` (a Monday), within
/// `filter`'s own range.
fn in_weeks<G: Ord>(
    store: &Store,
    filter: &ReadFilter,
    scope: &RepoScope,
    first: DateTime<Utc>,
    weeks: i64,
    group: impl FnMut(&Cell) -> Option<G>,
) -> Result<BTreeMap<G, Sums>> {
    let end = first + Duration::weeks(weeks);
    let ranged = ReadFilter {
        since: Some(filter.since.map_or(first, |s| s.max(first))),
        until: Some(filter.until.map_or(end, |u| u.min(end))),
        ..filter.clone()
    };
    if ranged.since >= ranged.until {
        return Ok(BTreeMap::new());
    }
    fold(store, &ranged, scope, group)
}

/// Sums per workflow (`(none)` when unnamed), as the workflows table shows.
pub fn by_workflow(
    store: &Store,
    filter: &ReadFilter,
    scope: &RepoScope,
) -> Result<BTreeMap<String, Sums>> {
    fold(store, filter, scope, |c| {
        Some(c.workflow.clone().unwrap_or_else(|| "(none)".into()))
    })
}

/// The trend's two halves: the four weeks ending with the week of `until`
/// (or now), and the four weeks before.
pub fn trend_weeks(filter: &ReadFilter, now: DateTime<Utc>) -> (i64, i64, i64) {
    let anchor = filter.until.map_or(now, |u| u - Duration::nanoseconds(1));
    let last = week_of_day(day_of(anchor));
    (last - 7, last - 3, last + 1)
}

/// Whether the strict rate got better, worse or stayed (within 5 points)
/// from the four weeks before to the last four (`trend_weeks`).
pub fn trend_of(before: Option<f64>, after: Option<f64>) -> &'static str {
    match (before, after) {
        (Some(before), Some(after)) if after > before + 0.05 => "▲ better",
        (Some(before), Some(after)) if after + 0.05 < before => "▼ worse",
        (Some(_), Some(_)) => "→ steady",
        _ => "–",
    }
}

/// The trend per workflow (`trend_of` the two halves of `trend_weeks`).
pub fn trends(
    store: &Store,
    filter: &ReadFilter,
    scope: &RepoScope,
    now: DateTime<Utc>,
) -> Result<BTreeMap<String, &'static str>> {
    let (w0, mid, w1) = trend_weeks(filter, now);
    let start = day_start(first_day_of_week(w0));
    let end = day_start(first_day_of_week(w1));
    let ranged = ReadFilter {
        since: Some(filter.since.map_or(start, |s| s.max(start))),
        until: Some(filter.until.map_or(end, |u| u.min(end))),
        ..filter.clone()
    };
    let mut out = BTreeMap::new();
    if ranged.since >= ranged.until {
        return Ok(out);
    }
    let sums = fold(store, &ranged, scope, |c| {
        let week = week_of(c)?;
        let name = c.workflow.clone().unwrap_or_else(|| "(none)".into());
        Some((name, week >= mid))
    })?;
    let mut names: Vec<&String> = sums.keys().map(|(n, _)| n).collect();
    names.dedup();
    for name in names {
        let rate = |after: bool| {
            sums.get(&(name.clone(), after))
                .and_then(|s| s.overall().1.strict_acceptance_rate)
        };
        out.insert(name.clone(), trend_of(rate(false), rate(true)));
    }
    Ok(out)
}

/// Outputs counted by (status, strength, type, workflow) over everything,
/// for the `/metrics` tally: the tally rows the worker keeps beside the
/// all-time cells (`Cell::tally_key`), a few thousand small keys where the
/// cells they sum are every repository's (14,400 cells, 6.1 MB, at
/// `bench reads`' million outputs).
pub fn metric_rows(store: &Store) -> Result<BTreeMap<(String, String, String, String), u64>> {
    // Rows may meet here: outputs without a workflow are labelled "none",
    // as are those of a workflow named so.
    let mut out: BTreeMap<(String, String, String, String), i64> = BTreeMap::new();
    for item in store.rollup_tally() {
        let (row, n) = item?;
        let key = (
            row.status.as_str().to_string(),
            row.strength.as_str().to_string(),
            row.output_type,
            row.workflow.unwrap_or_else(|| "none".into()),
        );
        *out.entry(key).or_default() += n;
    }
    Ok(out
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| (k, n as u64))
        .collect())
}

/// The id prefixes (`owner/name:`) of the outputs of each repository a
/// read covers (`repositories`), in id order.
pub(crate) fn output_prefixes(
    store: &Store,
    filter: &ReadFilter,
    scope: &RepoScope,
) -> Result<Vec<String>> {
    let mut prefixes: Vec<String> = repositories(store, filter, scope)?
        .into_iter()
        .flat_map(|(_, exact)| exact)
        .map(|r| format!("{r}:"))
        .collect();
    prefixes.sort();
    Ok(prefixes)
}

/// One page of the outputs `filter` and `scope` admit, in id order after
/// `cursor`: at most `limit` outcomes, looking at no more than `scan`
/// outputs (then the page is shorter). Returns the outcomes and the cursor
/// of the next page (`None`: nothing after). Only the repositories the
/// scope sees are read.
pub fn page_of_outputs(
    store: &Store,
    filter: &ReadFilter,
    scope: &RepoScope,
    cursor: Option<&str>,
    limit: usize,
    scan: usize,
) -> Result<(Vec<crate::model::OutcomeRecord>, Option<String>)> {
    let prefixes = output_prefixes(store, filter, scope)?;
    let mut items = Vec::new();
    let mut looked = 0;
    let mut last: Option<String> = None;
    for prefix in prefixes {
        let after = cursor.filter(|c| c.starts_with(&prefix));
        if cursor.is_some_and(|c| after.is_none() && prefix.as_str() < c) {
            continue;
        }
        for stored in store.outputs(&prefix, after) {
            let stored = stored?;
            if items.len() == limit || looked == scan {
                return Ok((items, last));
            }
            looked += 1;
            last = Some(stored.execution.id.clone());
            if filter.admits(&stored, scope) {
                items.extend(stored.outcome);
            }
        }
    }
    Ok((items, None))
}

/// A run as the workflow page lists it: its outputs `filter` admits.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub repo: String,
    pub run_id: u64,
    pub latest: DateTime<Utc>,
    pub totals: crate::read::report::Totals,
}

/// The most recent runs (at most `limit`) with outputs `filter` and `scope`
/// admit, newest first, found through the time index a week at a time from
/// the week of `until` (or now) back to `since`, looking at no more than
/// `scan` index entries; each run's totals are then read from its own
/// outputs. Returns the runs and whether older ones may exist unshown.
pub fn recent_runs(
    store: &Store,
    filter: &ReadFilter,
    scope: &RepoScope,
    now: DateTime<Utc>,
    limit: usize,
    scan: usize,
) -> Result<(Vec<RunRow>, bool)> {
    let repos = repositories(store, filter, scope)?;
    let admitted: i64 = fold(store, filter, scope, |_| Some(()))?
        .values()
        .map(|s| s.counts.get(crate::store::rollup::field::COUNT))
        .sum();
    // A little past now: clocks of the runners differ from ours.
    let top = filter
        .until
        .unwrap_or(now + Duration::days(1))
        .max(filter.since.unwrap_or(now));
    // The walk back ends at the oldest output of the time index, whatever
    // the counts say: counts holding an output the index does not must not
    // make it endless.
    let mut earliest: Option<DateTime<Utc>> = None;
    for (lc, _) in &repos {
        if let Some(first) = store
            .outputs_by_time(lc, DateTime::<Utc>::MIN_UTC, top)
            .next()
        {
            let at = first?.created_at;
            earliest = Some(earliest.map_or(at, |e| e.min(at)));
        }
    }
    let Some(earliest) = earliest else {
        return Ok((Vec::new(), admitted > 0));
    };
    let mut week = week_of_day(day_of(top - Duration::nanoseconds(1)));
    let (mut seen, mut looked) = (0i64, 0usize);
    let mut runs: BTreeMap<(String, u64), DateTime<Utc>> = BTreeMap::new();
    while seen < admitted && runs.len() < limit && looked < scan {
        let from = day_start(first_day_of_week(week));
        let to = day_start(first_day_of_week(week + 1));
        if filter.since.is_some_and(|s| to <= s) || to <= earliest {
            break;
        }
        let mut found: Vec<(DateTime<Utc>, (String, u64))> = Vec::new();
        for (lc, exact) in &repos {
            for entry in store.outputs_by_time(lc, from, to) {
                let entry = entry?;
                looked += 1;
                if filter
                    .workflow
                    .as_deref()
                    .is_some_and(|w| entry.workflow.as_deref() != Some(w))
                {
                    continue;
                }
                let Some(stored) = store.output(&entry.output_id)? else {
                    continue;
                };
                if !exact.contains(&stored.execution.repo) || !filter.admits(&stored, scope) {
                    continue;
                }
                seen += 1;
                let run = (
                    stored.execution.repo.clone(),
                    stored.execution.run_id.unwrap_or(0),
                );
                found.push((entry.created_at, run));
            }
        }
        found.sort_by(|a, b| b.cmp(a));
        for (at, run) in found {
            if runs.len() == limit && !runs.contains_key(&run) {
                break;
            }
            let latest = runs.entry(run).or_insert(at);
            *latest = (*latest).max(at);
        }
        week -= 1;
    }
    let mut rows = Vec::new();
    for ((repo, run_id), latest) in runs {
        let prefix = format!("{repo}:{run_id}:");
        let mut records = Vec::new();
        for stored in filter.scan(store, scope, &prefix, None) {
            records.extend(stored?.outcome);
        }
        let (totals, _) = Report::overall(&records);
        rows.push(RunRow {
            repo,
            run_id,
            latest,
            totals,
        });
    }
    rows.sort_by(|a, b| (b.latest, &b.repo, b.run_id).cmp(&(a.latest, &a.repo, a.run_id)));
    Ok((rows, seen < admitted))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::at;

    /// Every instant of a range is counted once (in one segment, or in a
    /// day's cells and not in the part taken away from them), and nothing
    /// outside it is counted.
    #[test]
    fn segments_cover_the_range_once() {
        let cases = [
            (Some("2026-11-03T10:00:00Z"), Some("2026-12-20T05:00:00Z")),
            (Some("2026-11-16T00:00:00Z"), Some("2026-11-30T00:00:00Z")),
            (Some("2026-11-17T00:00:00Z"), Some("2026-11-19T00:00:00Z")),
            (Some("2026-11-17T03:00:00Z"), Some("2026-11-17T09:00:00Z")),
            (Some("2026-11-17T01:00:00Z"), Some("2026-11-17T23:00:00Z")),
            (Some("2026-11-17T00:00:00Z"), Some("2026-11-17T13:00:00Z")),
            (Some("2026-11-03T23:00:00Z"), Some("2026-11-20T20:00:00Z")),
            (None, Some("2026-11-17T09:00:00Z")),
            (Some("2026-11-17T09:00:00Z"), None),
        ];
        let probe_start = at("2026-10-01T00:00:00Z");
        for (since, until) in cases {
            let (since, until) = (since.map(at), until.map(at));
            let parts = segments(since, until);
            let mut t = probe_start;
            while t < at("2027-01-15T00:00:00Z") {
                let inside = since.is_none_or(|s| t >= s) && until.is_none_or(|u| t < u);
                let day = day_of(t);
                let hits = parts
                    .iter()
                    .filter(|p| match p {
                        Segment::Cells(Level::Day, a, b) => (*a..*b).contains(&day),
                        Segment::Cells(Level::Week, a, b) => (*a..*b).contains(&week_of_day(day)),
                        Segment::Cells(Level::All, ..) => true,
                        Segment::Edge(a, b, _) => t >= *a && t < *b,
                    })
                    .map(|p| match p {
                        Segment::Edge(_, _, sign) => *sign,
                        _ => 1,
                    })
                    .sum::<i64>();
                assert_eq!(
                    hits,
                    i64::from(inside),
                    "{since:?}..{until:?} at {t}: {parts:?}"
                );
                t += Duration::minutes(37);
            }
            // One range read per level's run of periods: no two cell
            // segments of a level touch or overlap.
            for (i, p) in parts.iter().enumerate() {
                for q in &parts[i + 1..] {
                    if let (Segment::Cells(l, a, b), Segment::Cells(m, c, d)) = (p, q) {
                        assert!(l != m || b < c || d < a, "{since:?}..{until:?}: {parts:?}");
                    }
                }
            }
        }
    }
}
