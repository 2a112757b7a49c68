//! The report (docs/architecture.md, "Report"): totals and per-type rates. Three acceptance rates,
//! never one unlabeled number: strict (strong), human-check (strong + medium)
//! and sticky (weak or exists-only), each over evaluable outputs.
//!
//! The terminal table prints repository, window and type names through
//! `escape::terminal`: a control character (ESC, CR, BEL, C1) or a bidi
//! override in a stored name is shown as `\u{…}`, never obeyed.

pub(crate) mod maturity;
pub mod tally;

use std::collections::BTreeMap;
use std::fmt::Write;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::model::escape::terminal;
use crate::model::{EvidenceStrength, OutcomeRecord, OutcomeStatus, CHECKPOINTS};
use crate::store::rollup::{field, histogram_median, time_bin, Counts, CLASSES};
pub use maturity::{awaiting, mature_window, schedule, schedule_of, Schedule};

/// Totals over all outputs in scope.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Totals {
    pub total_safe_outputs: u64,
    /// All outputs but the skipped ones.
    pub evaluable_outputs: u64,
    pub accepted_strong: u64,
    pub accepted_medium: u64,
    pub accepted_weak: u64,
    pub rejected: u64,
    pub pending: u64,
    pub ignored: u64,
    pub unknown: u64,
    pub skipped: u64,
    pub fallback_exists_only_count: u64,
    pub missing_type_specific_rule_count: u64,
    pub durable_reversal_count: u64,
}

impl Totals {
    /// The names of the fields, in the order the dashboard shows them.
    pub(crate) const FIELDS: [&'static str; 13] = [
        "total_safe_outputs",
        "evaluable_outputs",
        "accepted_strong",
        "accepted_medium",
        "accepted_weak",
        "rejected",
        "pending",
        "ignored",
        "unknown",
        "skipped",
        "fallback_exists_only_count",
        "missing_type_specific_rule_count",
        "durable_reversal_count",
    ];

    /// The count named `field` (one of `FIELDS`).
    pub(crate) fn get(&self, field: &str) -> Option<u64> {
        Some(match field {
            "total_safe_outputs" => self.total_safe_outputs,
            "evaluable_outputs" => self.evaluable_outputs,
            "accepted_strong" => self.accepted_strong,
            "accepted_medium" => self.accepted_medium,
            "accepted_weak" => self.accepted_weak,
            "rejected" => self.rejected,
            "pending" => self.pending,
            "ignored" => self.ignored,
            "unknown" => self.unknown,
            "skipped" => self.skipped,
            "fallback_exists_only_count" => self.fallback_exists_only_count,
            "missing_type_specific_rule_count" => self.missing_type_specific_rule_count,
            "durable_reversal_count" => self.durable_reversal_count,
            _ => return None,
        })
    }
}

/// The workflow name a report groups an output under.
pub(crate) fn workflow_name(record: &OutcomeRecord) -> &str {
    record.workflow.as_deref().unwrap_or("(none)")
}

/// How one output is counted: its verdict as of a window (or the latest),
/// and the facts the totals keep apart.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Counted<'a> {
    pub status: OutcomeStatus,
    pub strength: EvidenceStrength,
    pub signal: &'a str,
    pub dedicated: bool,
    pub reversed: bool,
    /// Hours to acceptance (only for the latest outcome).
    pub time: Option<f64>,
}

impl<'a> Counted<'a> {
    /// `record` as counted at `window` (`None`: its latest outcome); `None`
    /// when it has not reached that window yet.
    pub(crate) fn of(record: &'a OutcomeRecord, window: Option<&str>) -> Option<Counted<'a>> {
        let (status, strength, signal, time) = match window {
            Some(w) => {
                let s = record.windows.get(w)?;
                (
                    s.outcome_status,
                    s.evidence_strength,
                    s.human_check_signal.as_str(),
                    None,
                )
            }
            None => (
                record.outcome_status,
                record.evidence_strength,
                record.human_check_signal.as_str(),
                record.time_to_acceptance_hours,
            ),
        };
        Some(Counted {
            status,
            strength,
            signal,
            dedicated: record.dedicated_evaluator,
            reversed: reversed(record),
            time,
        })
    }

    /// Does this output count in the totals' `field`? The same tally as the
    /// report's, so a list of the outputs behind a count has that many rows.
    pub(crate) fn counts_in(&self, field: &str) -> bool {
        let mut one = Tally::default();
        one.add(self);
        one.totals.get(field).is_some_and(|n| n > 0)
    }
}

/// Rates per safe-output type; `None` when nothing is evaluable. The
/// counts are named as in `Totals` (one vocabulary); the names before
/// (`count`, `evaluable`) are still read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TypeStats {
    #[serde(rename = "total_safe_outputs", alias = "count")]
    pub count: u64,
    #[serde(rename = "evaluable_outputs", alias = "evaluable")]
    pub evaluable: u64,
    pub strict_acceptance_rate: Option<f64>,
    pub human_check_acceptance_rate: Option<f64>,
    pub sticky_artifact_rate: Option<f64>,
    pub rejection_rate: Option<f64>,
    pub pending_rate: Option<f64>,
    pub unknown_rate: Option<f64>,
    /// Median hours from execution to the evidence of acceptance, from a
    /// histogram of them (`store::rollup::time_bin`: within 3.2% of the
    /// exact median, the same whether read from rollups or from the outputs).
    pub median_time_to_acceptance: Option<f64>,
}

/// Acceptance as of one checkpoint, over outputs that have reached it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct CheckpointStats {
    /// Outputs whose checkpoint has passed.
    pub reached: u64,
    pub accepted: u64,
    pub accepted_strong: u64,
    pub rejected: u64,
    pub pending: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Report {
    pub generated_at: Option<DateTime<Utc>>,
    pub repo: Option<String>,
    /// The checkpoint the figures are taken at; `None` means the latest outcome.
    pub window: Option<String>,
    /// Outputs left out because they have not reached `window` yet.
    pub not_yet_at_window: u64,
    pub totals: Totals,
    pub by_type: BTreeMap<String, TypeStats>,
    /// The same rates per workflow (`(none)` for outputs of no known workflow).
    #[serde(default)]
    pub by_workflow: BTreeMap<String, TypeStats>,
    /// `accepted_at_1h`, `accepted_at_24h`, `accepted_at_7d`, `accepted_durable_at_30d`.
    pub checkpoints: BTreeMap<String, CheckpointStats>,
    /// Per workflow, the agents' lines that landed and how many are still
    /// there at 7 and 30 days (`read::line_survival`; filled
    /// by whoever has the store, empty otherwise).
    #[serde(default)]
    pub line_survival: BTreeMap<String, crate::read::line_totals::LineTotals>,
}

/// Window names accepted by `--window` and `?window=`.
pub(crate) fn parse_window(value: &str) -> Option<&'static str> {
    CHECKPOINTS
        .iter()
        .map(|(name, _)| *name)
        .find(|name| *name == value)
}

/// Checkpoint keys of the report.
fn checkpoint_label(name: &str) -> String {
    match name {
        "30d" => "accepted_durable_at_30d".to_string(),
        other => format!("accepted_at_{other}"),
    }
}

#[derive(Default)]
struct Tally {
    totals: Totals,
    /// Accepted outputs by `time_bin` of their time to acceptance.
    times: Vec<i64>,
}

impl Report {
    /// A report of nothing yet, headed with what it is about.
    fn empty(repo: Option<&str>, window: Option<&str>, generated_at: DateTime<Utc>) -> Report {
        Report {
            generated_at: Some(generated_at),
            repo: repo.map(str::to_string),
            window: window.map(str::to_string),
            ..Report::default()
        }
    }

    /// Build the report from outcome records.
    pub fn build<'a>(
        records: impl IntoIterator<Item = &'a OutcomeRecord>,
        repo: Option<&str>,
        window: Option<&str>,
        generated_at: DateTime<Utc>,
    ) -> Report {
        let mut report = Report::empty(repo, window, generated_at);
        let mut all = Tally::default();
        let mut per_type: BTreeMap<String, Tally> = BTreeMap::new();
        for (name, _) in CHECKPOINTS {
            report
                .checkpoints
                .insert(checkpoint_label(name), CheckpointStats::default());
        }
        let mut per_workflow: BTreeMap<String, Tally> = BTreeMap::new();
        for record in records {
            if repo.is_some_and(|r| {
                record.target.as_ref().map(|t| t.repo.as_str()) != Some(r)
                    && !record.safe_output_id.starts_with(&format!("{r}:"))
            }) {
                continue;
            }
            for (name, snap) in &record.windows {
                let c = report
                    .checkpoints
                    .entry(checkpoint_label(name))
                    .or_default();
                c.reached += 1;
                match snap.outcome_status {
                    OutcomeStatus::Accepted => {
                        c.accepted += 1;
                        if snap.evidence_strength == EvidenceStrength::Strong {
                            c.accepted_strong += 1;
                        }
                    }
                    OutcomeStatus::Rejected => c.rejected += 1,
                    OutcomeStatus::Pending => c.pending += 1,
                    _ => {}
                }
            }
            let Some(counted) = Counted::of(record, window) else {
                report.not_yet_at_window += 1;
                continue;
            };
            for tally in [
                &mut all,
                per_type.entry(record.safe_output_type.clone()).or_default(),
                per_workflow
                    .entry(workflow_name(record).to_string())
                    .or_default(),
            ] {
                tally.add(&counted);
            }
        }
        report.totals = all.totals;
        report.by_type = per_type
            .into_iter()
            .map(|(t, tally)| (t, tally.stats()))
            .collect();
        report.by_workflow = per_workflow
            .into_iter()
            .map(|(t, tally)| (t, tally.stats()))
            .collect();
        report
    }

    /// Totals and rates of all `records` together, as of their latest
    /// outcome: one row of the dashboard's workflow table.
    pub fn overall<'a>(
        records: impl IntoIterator<Item = &'a OutcomeRecord>,
    ) -> (Totals, TypeStats) {
        let (totals, stats, _) = Report::at_window(records, None);
        (totals, stats)
    }

    /// Totals and rates of `records` as of `window` (`None`: the latest
    /// outcome), and how many have not reached that window (left out).
    pub(crate) fn at_window<'a>(
        records: impl IntoIterator<Item = &'a OutcomeRecord>,
        window: Option<&str>,
    ) -> (Totals, TypeStats, u64) {
        let mut all = Tally::default();
        let mut not_yet = 0;
        for r in records {
            match Counted::of(r, window) {
                Some(c) => all.add(&c),
                None => not_yet += 1,
            }
        }
        let totals = all.totals.clone();
        (totals, all.stats(), not_yet)
    }

    /// A readable table for terminals.
    pub(crate) fn to_table(&self) -> String {
        let t = &self.totals;
        let mut out = String::new();
        let scope = self
            .repo
            .as_deref()
            .map_or("all repositories".to_string(), terminal);
        let window = self
            .window
            .as_deref()
            .map_or("latest outcome".to_string(), |w| {
                format!("as of T+{}", terminal(w))
            });
        let _ = writeln!(out, "safe-outcomes report — {scope}, {window}");
        let _ = writeln!(
            out,
            "{} safe outputs, {} evaluable ({} skipped){}",
            t.total_safe_outputs,
            t.evaluable_outputs,
            t.skipped,
            if self.not_yet_at_window > 0 {
                format!(", {} not yet at this window", self.not_yet_at_window)
            } else {
                String::new()
            }
        );
        let _ = writeln!(
            out,
            "accepted: {} strong, {} medium, {} weak | rejected {} | pending {} | ignored {} | unknown {}",
            t.accepted_strong, t.accepted_medium, t.accepted_weak, t.rejected, t.pending, t.ignored, t.unknown
        );
        let _ = writeln!(
            out,
            "existence-only (never counted as accepted): {} | types without a dedicated rule: {} | durable reversals: {}",
            t.fallback_exists_only_count, t.missing_type_specific_rule_count, t.durable_reversal_count
        );
        let _ = writeln!(out);
        let names: Vec<String> = self.by_type.keys().map(|k| terminal(k)).collect();
        let w = names
            .iter()
            .map(|n| n.chars().count())
            .max()
            .unwrap_or(4)
            .max(4);
        let _ = writeln!(
            out,
            "{:<w$} {:>5} {:>8} {:>12} {:>8} {:>9} {:>8} {:>8} {:>10}",
            "type",
            "count",
            "strict",
            "human-check",
            "sticky",
            "rejected",
            "pending",
            "unknown",
            "median h"
        );
        for (name, s) in names.iter().zip(self.by_type.values()) {
            let _ = writeln!(
                out,
                "{:<w$} {:>5} {:>8} {:>12} {:>8} {:>9} {:>8} {:>8} {:>10}",
                name,
                s.count,
                pct(s.strict_acceptance_rate),
                pct(s.human_check_acceptance_rate),
                pct(s.sticky_artifact_rate),
                pct(s.rejection_rate),
                pct(s.pending_rate),
                pct(s.unknown_rate),
                s.median_time_to_acceptance
                    .map_or("-".to_string(), |h| format!("{h:.1}")),
            );
        }
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "{:<26} {:>8} {:>9} {:>8} {:>9} {:>8}",
            "checkpoint", "reached", "accepted", "strong", "rejected", "pending"
        );
        for (name, _) in CHECKPOINTS {
            let label = checkpoint_label(name);
            if let Some(c) = self.checkpoints.get(&label) {
                let _ = writeln!(
                    out,
                    "{:<26} {:>8} {:>9} {:>8} {:>9} {:>8}",
                    label, c.reached, c.accepted, c.accepted_strong, c.rejected, c.pending
                );
            }
        }
        let _ = writeln!(
            out,
            "\nstrict = strong / evaluable; human-check = (strong + medium) / evaluable; sticky = (weak or exists-only) / evaluable"
        );
        out
    }
}

/// Rollup counts summed over cells (`read::rollup`): the cells' counts and
/// their outputs by the class of their latest status (`rollup::class`),
/// which a cell holds in its key.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sums {
    pub latest: [i64; CLASSES],
    pub counts: Counts,
}

impl Sums {
    /// Add one cell's counts, its outputs being of `class` now.
    pub fn add(&mut self, class: usize, counts: &Counts) {
        self.latest[class] += counts.get(field::COUNT);
        self.counts.add(counts);
    }

    /// Add a sums cell's value as stored (`Counts::sums_of`, packed): the
    /// outputs by latest class, then the counts.
    pub(crate) fn add_packed_sums(&mut self, packed: &[u8]) {
        let split = packed.len().min(CLASSES * 4);
        let (latest, counts) = packed.split_at(split);
        for (a, b) in self.latest.iter_mut().zip(Counts::packed_values(latest)) {
            *a += b;
        }
        self.counts.add_packed(counts);
    }

    pub(crate) fn merge(&mut self, other: &Sums) {
        for (a, b) in self.latest.iter_mut().zip(other.latest) {
            *a += b;
        }
        self.counts.add(&other.counts);
    }

    /// The tally of these outputs as of their latest outcome, or as of the
    /// checkpoint at `window` (index into `CHECKPOINTS`).
    fn tally(&self, window: Option<usize>) -> Tally {
        let c = &self.counts;
        let n = |v: i64| v.max(0) as u64;
        let (classes, exists, not_dedicated, reversed, times) = match window {
            None => (
                self.latest,
                c.get(field::EXISTS_ONLY),
                c.get(field::NOT_DEDICATED),
                c.get(field::REVERSED),
                c.histogram().to_vec(),
            ),
            Some(w) => {
                let base = field::WINDOWS + w * field::WINDOW_FIELDS;
                let mut classes = [0; CLASSES];
                for (i, v) in classes.iter_mut().enumerate() {
                    *v = c.get(base + i);
                }
                (
                    classes,
                    c.get(base + field::W_EXISTS_ONLY),
                    c.get(base + field::W_NOT_DEDICATED),
                    c.get(base + field::W_REVERSED),
                    Vec::new(),
                )
            }
        };
        let total: i64 = classes.iter().sum();
        Tally {
            totals: Totals {
                total_safe_outputs: n(total),
                evaluable_outputs: n(total - classes[7]),
                accepted_strong: n(classes[0]),
                accepted_medium: n(classes[1]),
                accepted_weak: n(classes[2]),
                rejected: n(classes[3]),
                pending: n(classes[4]),
                ignored: n(classes[5]),
                unknown: n(classes[6]),
                skipped: n(classes[7]),
                fallback_exists_only_count: n(exists),
                missing_type_specific_rule_count: n(not_dedicated),
                durable_reversal_count: n(reversed),
            },
            times,
        }
    }

    /// Totals and rates as of the latest outcome: `Report::overall` of
    /// the same outputs.
    pub fn overall(&self) -> (Totals, TypeStats) {
        let tally = self.tally(None);
        (tally.totals.clone(), tally.stats())
    }

    /// Totals and rates as of `window` (`None`: the latest outcome), and
    /// how many have not reached that window (left out):
    /// `Report::at_window` of the same outputs.
    pub(crate) fn at_window(&self, window: Option<&str>) -> (Totals, TypeStats, u64) {
        let Some(w) = window.and_then(|w| CHECKPOINTS.iter().position(|(n, _)| *n == w)) else {
            let (totals, stats) = self.overall();
            return (totals, stats, 0);
        };
        let tally = self.tally(Some(w));
        let not_yet = (self.counts.get(field::COUNT).max(0) as u64)
            .saturating_sub(tally.totals.total_safe_outputs);
        (tally.totals.clone(), tally.stats(), not_yet)
    }

    /// The latest window every one of these outputs has reached:
    /// `maturity::mature_window` of the same outputs.
    pub(crate) fn mature_window(&self) -> &'static str {
        let count = self.counts.get(field::COUNT);
        let reached = (0..CHECKPOINTS.len())
            .take_while(|w| self.reached(*w) >= count)
            .count();
        CHECKPOINTS[reached.max(1) - 1].0
    }

    /// How many of these outputs have their verdict at checkpoint `w`.
    fn reached(&self, w: usize) -> i64 {
        let base = field::WINDOWS + w * field::WINDOW_FIELDS;
        (0..CLASSES).map(|i| self.counts.get(base + i)).sum()
    }

    /// Outputs by the window they await next, and under `"final"` those
    /// past the last: `maturity::awaiting` of the same outputs. Windows are
    /// reached in order, so the outputs awaiting one are those that reached
    /// the window before it (all of them, for the first) and not it.
    pub fn awaiting(&self) -> Vec<(&'static str, u64)> {
        let mut before = self.counts.get(field::COUNT).max(0);
        let mut out = Vec::with_capacity(CHECKPOINTS.len() + 1);
        for (w, (name, _)) in CHECKPOINTS.iter().enumerate() {
            let reached = self.reached(w).clamp(0, before);
            out.push((*name, (before - reached) as u64));
            before = reached;
        }
        out.push(("final", before as u64));
        out
    }
}

impl Report {
    /// The report from rollup sums per type and per workflow (the same
    /// outputs grouped twice): the numbers `Report::build` gives over the
    /// same outputs. `window` is a checkpoint name, `mature` (the latest
    /// every output has reached: `Sums::mature_window`) or `None` (latest).
    pub(crate) fn from_sums(
        by_type: &BTreeMap<String, Sums>,
        by_workflow: &BTreeMap<String, Sums>,
        repo: Option<&str>,
        window: Option<&str>,
        generated_at: DateTime<Utc>,
    ) -> Report {
        // `mature`: the latest window every output counted has reached.
        let mature = window.filter(|w| *w == "mature").map(|_| {
            let mut all = Sums::default();
            for s in by_type.values() {
                all.merge(s);
            }
            all.mature_window()
        });
        let window = mature.or(window);
        let at = window.and_then(|w| CHECKPOINTS.iter().position(|(n, _)| *n == w));
        let mut report = Report::empty(repo, window, generated_at);
        let mut all = Sums::default();
        for s in by_type.values() {
            all.merge(s);
        }
        for (w, (name, _)) in CHECKPOINTS.iter().enumerate() {
            let t = all.tally(Some(w)).totals;
            report.checkpoints.insert(
                checkpoint_label(name),
                CheckpointStats {
                    reached: t.total_safe_outputs,
                    accepted: t.accepted_strong + t.accepted_medium + t.accepted_weak,
                    accepted_strong: t.accepted_strong,
                    rejected: t.rejected,
                    pending: t.pending,
                },
            );
        }
        if let Some(w) = at {
            let reached = all.tally(Some(w)).totals.total_safe_outputs;
            report.not_yet_at_window = (all.counts.get(field::COUNT).max(0) as u64) - reached;
        }
        report.totals = all.tally(at).totals;
        report.by_type = by_type
            .iter()
            .filter(|(_, s)| s.tally(at).totals.total_safe_outputs > 0)
            .map(|(t, s)| (t.clone(), s.tally(at).stats()))
            .collect();
        report.by_workflow = by_workflow
            .iter()
            .filter(|(_, s)| s.tally(at).totals.total_safe_outputs > 0)
            .map(|(t, s)| (t.clone(), s.tally(at).stats()))
            .collect();
        report
    }
}

fn reversed(record: &OutcomeRecord) -> bool {
    record
        .details
        .get("accepted_then_reverted")
        .and_then(|v| v.as_bool())
        .unwrap_or(false)
}

fn pct(rate: Option<f64>) -> String {
    rate.map_or("-".to_string(), |r| format!("{:.0}%", r * 100.0))
}

impl Tally {
    fn add(&mut self, c: &Counted) {
        let t = &mut self.totals;
        t.total_safe_outputs += 1;
        if c.status != OutcomeStatus::Skipped {
            t.evaluable_outputs += 1;
        }
        match (c.status, c.strength) {
            (OutcomeStatus::Accepted, EvidenceStrength::Strong) => t.accepted_strong += 1,
            (OutcomeStatus::Accepted, EvidenceStrength::Medium) => t.accepted_medium += 1,
            (OutcomeStatus::Accepted, _) => t.accepted_weak += 1,
            (OutcomeStatus::Rejected, _) => t.rejected += 1,
            (OutcomeStatus::Pending, _) => t.pending += 1,
            (OutcomeStatus::Ignored, _) => t.ignored += 1,
            (OutcomeStatus::Unknown, _) => t.unknown += 1,
            (OutcomeStatus::Skipped, _) => t.skipped += 1,
        }
        if c.signal == crate::model::Signal::TargetExistsOnly.as_str() {
            t.fallback_exists_only_count += 1;
        }
        if !c.dedicated {
            t.missing_type_specific_rule_count += 1;
        }
        if c.reversed {
            t.durable_reversal_count += 1;
        }
        if let (OutcomeStatus::Accepted, Some(h)) = (c.status, c.time) {
            let bin = time_bin(h);
            if self.times.len() <= bin {
                self.times.resize(bin + 1, 0);
            }
            self.times[bin] += 1;
        }
    }

    fn stats(self) -> TypeStats {
        let t = &self.totals;
        let evaluable = t.evaluable_outputs;
        let rate = |n: u64| (evaluable > 0).then(|| n as f64 / evaluable as f64);
        let median = histogram_median(&self.times);
        TypeStats {
            count: t.total_safe_outputs,
            evaluable,
            strict_acceptance_rate: rate(t.accepted_strong),
            human_check_acceptance_rate: rate(t.accepted_strong + t.accepted_medium),
            sticky_artifact_rate: rate(t.accepted_weak + t.fallback_exists_only_count),
            rejection_rate: rate(t.rejected),
            pending_rate: rate(t.pending),
            unknown_rate: rate(t.unknown),
            median_time_to_acceptance: median,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_shows_controls_in_names_instead_of_obeying_them() {
        let mut report = Report {
            repo: Some("o/r\u{1b}]8;;https://evil\u{7}".into()),
            window: Some("7d\r".into()),
            ..Report::default()
        };
        for name in ["red\u{1b}[31m", "cba\u{202E}abc", "c1\u{9b}2J", "ok_type"] {
            report.by_type.insert(name.into(), TypeStats::default());
        }
        let table = report.to_table();
        let hidden = |c: char| c != '\n' && crate::model::ident::is_hidden_control(c);
        assert!(!table.chars().any(hidden), "{table:?}");
        assert!(
            table.contains("o/r\\u{1b}]8;;https://evil\\u{7}"),
            "{table}"
        );
        assert!(table.contains("red\\u{1b}[31m"), "{table}");
        assert!(table.contains("cba\\u{202e}abc"), "{table}");
        // Names are padded to one width, measured after escaping.
        let row = |n: &str| table.lines().find(|l| l.starts_with(n)).unwrap().len();
        assert_eq!(row("ok_type"), row("red"));
    }
}
