//! Line attribution records (`attribution::record`), in their own sled tree
//! `attribution` so they stay apart from the main tree's layout: key `l/`
//! + output id, value `LineAttribution` (ranges and survival results).
//!
//! Beside them, under `g/`, the line-survival rollups: per (repository,
//! day/week/all, workflow, type) of the output, the counts of
//! `survival_counts` (keys as `rollup::Cell::key`, the status and strength
//! left at a fixed value: they change after an output's code landed, so a
//! read that cuts on them counts from the attributions themselves). `put`
//! writes an attribution and the difference it makes to its cells in one
//! batch of the tree.

use super::engine::Batch;
use super::rollup::{cells_of, Cell, Counts};
use super::{decode, encode, Result, Store, StoredOutput};
use safe_outcomes_model::attribution::LineAttribution;
use safe_outcomes_model::{EvidenceStrength, OutcomeStatus};

const TREE: &str = "attribution";

fn key(output_id: &str) -> Vec<u8> {
    let mut k = b"l/".to_vec();
    k.extend_from_slice(output_id.as_bytes());
    k
}

/// Positions in a line-survival cell's counts (`LineTotals`' fields).
pub mod line_field {
    pub const OUTPUTS_ATTRIBUTED: usize = 0;
    pub const LINES_ATTRIBUTED: usize = 1;
    pub const OUTPUTS_MEASURED_7D: usize = 2;
    pub const LINES_ATTRIBUTED_MEASURED_7D: usize = 3;
    pub const LINES_SURVIVING_7D: usize = 4;
    pub const OUTPUTS_MEASURED_30D: usize = 5;
    pub const LINES_ATTRIBUTED_MEASURED_30D: usize = 6;
    pub const LINES_SURVIVING_30D: usize = 7;
    pub const SURVIVAL_UNKNOWN: usize = 8;
}

/// What one output's attribution adds to its workflow's line survival.
pub fn survival_counts(a: &LineAttribution) -> Counts {
    use line_field::*;
    let mut c = vec![0i64; 9];
    let lines = a.lines_attributed() as i64;
    c[OUTPUTS_ATTRIBUTED] = 1;
    c[LINES_ATTRIBUTED] = lines;
    let mut unknown = a.unknown_reason.is_some();
    for (name, survival) in &a.survival {
        unknown |= survival.unknown_reason.is_some();
        let Some(n) = survival.lines_surviving else {
            continue;
        };
        let (outputs, measured, surviving) = match name.as_str() {
            "7d" => (
                OUTPUTS_MEASURED_7D,
                LINES_ATTRIBUTED_MEASURED_7D,
                LINES_SURVIVING_7D,
            ),
            "30d" => (
                OUTPUTS_MEASURED_30D,
                LINES_ATTRIBUTED_MEASURED_30D,
                LINES_SURVIVING_30D,
            ),
            _ => continue,
        };
        c[outputs] += 1;
        c[measured] += lines;
        c[surviving] += n as i64;
    }
    c[SURVIVAL_UNKNOWN] = i64::from(unknown);
    Counts(c)
}

/// The line-survival cells of an output (its rollup cells, status and
/// strength fixed).
pub fn line_cells(stored: &StoredOutput) -> Option<[Cell; 3]> {
    let (cells, _) = cells_of(stored)?;
    Some(cells.map(|mut c| {
        c.status = OutcomeStatus::Accepted;
        c.strength = EvidenceStrength::None;
        c
    }))
}

/// The attribution of an output, if its code landed.
/// The line-survival cells of `stored` and the counts its attribution adds
/// to each (none when it has no attribution or lands in no cell).
pub(crate) fn line_counts(store: &Store, stored: &StoredOutput) -> Result<Vec<(Vec<u8>, Counts)>> {
    let (Some(cells), Some(a)) = (line_cells(stored), get(store, &stored.execution.id)?) else {
        return Ok(Vec::new());
    };
    let counts = survival_counts(&a);
    Ok(cells.map(|cell| (cell.key(), counts.clone())).to_vec())
}

pub fn get(store: &Store, output_id: &str) -> Result<Option<LineAttribution>> {
    let k = key(output_id);
    match store.db().open_tree(TREE)?.get(&k)? {
        Some(v) => Ok(Some(decode(&k, &v)?)),
        None => Ok(None),
    }
}

/// Store (or replace) an output's attribution, and count the difference in
/// the line-survival cells of its output (when it has an outcome).
pub fn put(store: &Store, a: &LineAttribution) -> Result<()> {
    let old = get(store, &a.output_id)?;
    let mut batch = Batch::default();
    // Under its own id only (an alias's attribution counts nowhere, as a
    // read by output finds none for it).
    let stored = super::ReadStore::output_by_canonical(store, &a.output_id)?;
    if let Some(cells) = stored.as_ref().and_then(line_cells) {
        let mut delta = survival_counts(a);
        if let Some(old) = &old {
            delta.sub(&survival_counts(old));
        }
        if !delta.is_zero() {
            for cell in cells {
                batch.add_all(cell.key(), delta.0.clone());
            }
        }
    }
    batch.insert(key(&a.output_id), encode(a));
    store.db().open_tree(TREE)?.apply_batch(batch)
}

/// An output's line-survival cells changed (it got its first outcome, or
/// was merged away: `Unit::put_output*`, `retire_output`): its attribution,
/// if any, leaves the old cells and joins the new. Written after the unit's
/// commit, in the tree of its own (sled; on PostgreSQL in the unit's own
/// commit, `move_lines_into`).
pub(super) fn move_lines(
    store: &Store,
    old: Option<&StoredOutput>,
    new: Option<&StoredOutput>,
) -> Result<()> {
    let mut batch = Batch::default();
    for (cell, counts) in line_moves(store, old, new)? {
        batch.add_all(cell, counts);
    }
    store.db().open_tree(TREE)?.apply_batch(batch)
}

/// The additions to the tree's cells that `move_lines` writes.
fn line_moves(
    store: &Store,
    old: Option<&StoredOutput>,
    new: Option<&StoredOutput>,
) -> Result<Vec<(Vec<u8>, Vec<i64>)>> {
    let Some(id) = old.or(new).map(|o| o.execution.id.clone()) else {
        return Ok(Vec::new());
    };
    let Some(a) = get(store, &id)? else {
        return Ok(Vec::new());
    };
    let counts = survival_counts(&a);
    let mut minus = Counts::default();
    minus.sub(&counts);
    let mut moves = Vec::new();
    for cell in old.and_then(line_cells).into_iter().flatten() {
        moves.push((cell.key(), minus.0.clone()));
    }
    for cell in new.and_then(line_cells).into_iter().flatten() {
        moves.push((cell.key(), counts.0.clone()));
    }
    Ok(moves)
}

/// `move_lines` of a unit's outputs on PostgreSQL, inside the unit (`store`
/// is its transaction): their attributions read in one round trip, and the
/// moves added to the unit's commit `batch` (one statement with its other
/// packed counts, rows locked in key order), not a round trip each after it.
pub(super) fn move_lines_into(
    store: &Store,
    moves: &[(Option<StoredOutput>, Option<StoredOutput>)],
    batch: &mut Batch,
) -> Result<()> {
    let Some(pg) = store.db().pg().filter(|_| !moves.is_empty()) else {
        return Ok(());
    };
    let tree = super::pg::tree_prefix(TREE);
    let gets = moves
        .iter()
        .filter_map(|(old, new)| old.as_ref().or(new.as_ref()))
        .map(|o| [tree.as_slice(), &key(&o.execution.id)].concat())
        .collect();
    pg.prefetch(super::pg::Prefetch {
        gets,
        ..Default::default()
    })?;
    for (old, new) in moves {
        for (cell, counts) in line_moves(store, old.as_ref(), new.as_ref())? {
            batch.add_all([tree.as_slice(), &cell].concat(), counts);
        }
    }
    Ok(())
}

/// The line-survival cells of one repository (lowercase) at a level with
/// periods in `from..to`.
pub fn cells(
    store: &Store,
    level: super::rollup::Level,
    repo_lc: &str,
    from: i64,
    to: i64,
) -> Result<Vec<(Cell, Counts)>> {
    let tree = store.db().open_tree(TREE)?;
    let (start, end) =
        super::rollup::cell_range(level, super::rollup::Grain::Status, repo_lc, from, to);
    let mut out = Vec::new();
    for item in tree.range(start, end) {
        let (k, v) = item?;
        if let Some(cell) = Cell::parse(tree.strip(&k)) {
            out.push((cell, Counts(super::engine::unpack(&v))));
        }
    }
    Ok(out)
}

/// The attributions of the outputs of one repository (as written), in
/// output id order.
pub fn of_repo(store: &Store, repo: &str) -> Result<impl Iterator<Item = Result<LineAttribution>>> {
    let tree = store.db().open_tree(TREE)?;
    Ok(tree.scan_prefix(key(&format!("{repo}:"))).map(|item| {
        let (k, v) = item?;
        decode(&k, &v)
    }))
}
