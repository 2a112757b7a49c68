//! The rollups answer exactly what a scan of every output answers: the
//! report (latest and at a checkpoint), the weekly series, the workflows
//! table with its trend, the `/metrics` tally and the pages of outputs, for
//! every cut and scope, after outputs are written, re-judged, merged away
//! and left without an outcome. On either engine (`Store::open`).

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, Utc};
use safe_outcomes::bench::synthetic::{mix, output, repo_name, Shape};
use safe_outcomes::http::series;
use safe_outcomes::model::{EvidenceStrength, OutcomeRecord, OutcomeStatus};
use safe_outcomes::read::line_survival::{line_survival, LineTotals};
use safe_outcomes::read::query::{ReadFilter, RepoScope};
use safe_outcomes::read::report::tally::OutputTally;
use safe_outcomes::read::report::{awaiting, Report};
use safe_outcomes::read::rollup;
use safe_outcomes::store::{Store, StoredOutput};

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

fn shape() -> Shape {
    Shape {
        repos: 9,
        workflows: 6,
        repos_per_workflow: 3,
        types_per_workflow: 3,
        outputs_per_run: 3,
        days: 120,
        end: at("2026-11-25T13:17:00Z"),
    }
}

/// Write `n` outputs, then re-judge a third of them, merge some into new
/// ids and leave some without an outcome: every path that moves a count.
fn fill(store: &Store, n: u64) {
    let shape = shape();
    for chunk in (0..n).collect::<Vec<_>>().chunks(250) {
        let mut unit = store.begin();
        for &i in chunk {
            let mut o = output(&shape, i, 1);
            if i % 41 == 0 {
                o.outcome = None;
            }
            unit.put_output(&o).unwrap();
        }
        unit.commit().unwrap();
    }
    attribute(store, n, 1);
    let mut unit = store.begin();
    for i in (0..n).filter(|i| mix(*i, 77).is_multiple_of(3)) {
        let mut again = output(&shape, i, 2);
        let before = output(&shape, i, 1);
        // Re-judged: a new outcome for the same execution.
        again.execution = before.execution.clone();
        if let (Some(o), Some(b)) = (again.outcome.as_mut(), before.outcome.as_ref()) {
            o.safe_output_id = b.safe_output_id.clone();
            o.created_at = b.created_at;
            o.workflow = b.workflow.clone();
            o.safe_output_type = b.safe_output_type.clone();
        }
        unit.put_output_record(&again).unwrap();
    }
    unit.commit().unwrap();
    let mut unit = store.begin();
    for i in (0..n).filter(|i| mix(*i, 78).is_multiple_of(17)) {
        let old = output(&shape, i, 1);
        let Some(current) = unit.output(&old.execution.id).unwrap() else {
            continue;
        };
        let mut merged: StoredOutput = current.clone();
        merged.execution.id = format!("{}-merged", current.execution.id);
        if let Some(o) = merged.outcome.as_mut() {
            o.safe_output_id = merged.execution.id.clone();
        }
        unit.retire_output(&current.execution.id, &merged.execution.id, &[])
            .unwrap();
        unit.put_output(&merged).unwrap();
    }
    unit.commit().unwrap();
    // Survival measured later: attributions replaced.
    attribute(store, n, 2);
}

/// Attribute landed lines to every fifth output (some measured at 7 and 30
/// days, some unknown); `round` 2 replaces some of them.
fn attribute(store: &Store, n: u64, round: u64) {
    let shape = shape();
    for i in (0..n).filter(|i| mix(*i, 90).is_multiple_of(5)) {
        if round == 2 && !mix(i, 91).is_multiple_of(2) {
            continue;
        }
        let o = output(&shape, i, 1);
        let lines = 1 + mix(i, 92 + round) % 40;
        let mut survival = serde_json::Map::new();
        if round == 2 || mix(i, 93).is_multiple_of(2) {
            survival.insert(
                "7d".into(),
                serde_json::json!({"lines_surviving": mix(i, 94 + round) % (lines + 1)}),
            );
        }
        if round == 2 && mix(i, 95).is_multiple_of(3) {
            survival.insert(
                "30d".into(),
                serde_json::json!({"unknown_reason": "renamed"}),
            );
        }
        let a = serde_json::from_value(serde_json::json!({
            "output_id": o.execution.id, "repo": o.execution.repo, "branch": "main",
            "landed_commit": "a".repeat(40), "landed_at": o.execution.executed_at,
            "files": [{"path": "src/lib.rs", "ranges": [{
                "start_line": 10, "end_line": 9 + lines,
                "content_hash": "murmur3:00000000000000000000000000000000", "contributor": "ai",
            }]}],
            "survival": survival,
        }))
        .unwrap();
        safe_outcomes::store::attribution::put(store, &a).unwrap();
    }
}

/// What a scan of every output admits.
fn scanned(store: &Store, filter: &ReadFilter, scope: &RepoScope) -> Vec<OutcomeRecord> {
    filter
        .scan(store, scope, "", None)
        .map(|s| s.unwrap().outcome.unwrap())
        .collect()
}

fn filters() -> Vec<ReadFilter> {
    let f = ReadFilter::default;
    let between = |since: &str, until: &str| ReadFilter {
        since: Some(at(since)),
        until: Some(at(until)),
        ..f()
    };
    let mut out = vec![
        f(),
        ReadFilter {
            repo: Some(repo_name(3)),
            ..f()
        },
        ReadFilter {
            repo: Some(repo_name(3).to_ascii_lowercase()),
            ..f()
        },
        ReadFilter {
            workflow: Some("workflow-02".into()),
            ..f()
        },
        ReadFilter {
            output_type: Some("add_comment".into()),
            status: Some(OutcomeStatus::Accepted),
            ..f()
        },
        ReadFilter {
            strength: Some(EvidenceStrength::Medium),
            ..f()
        },
        between("2026-09-07T00:00:00Z", "2026-11-02T00:00:00Z"),
        ReadFilter {
            workflow: Some("workflow-01".into()),
            ..between("2026-09-03T07:45:12Z", "2026-10-29T18:00:01Z")
        },
        between("2026-10-14T03:00:00Z", "2026-10-14T21:30:00Z"),
        ReadFilter {
            until: Some(at("2026-09-20T12:00:00Z")),
            ..f()
        },
        ReadFilter {
            since: Some(at("2026-11-10T00:00:00Z")),
            ..f()
        },
    ];
    out.push(ReadFilter {
        status: Some(OutcomeStatus::Pending),
        ..out[7].clone()
    });
    out
}

fn scopes() -> Vec<RepoScope> {
    vec![
        RepoScope::All,
        RepoScope::only([repo_name(3), repo_name(0), "acme/nothing-here".into()]),
        RepoScope::only(Vec::<String>::new()),
    ]
}

#[test]
fn rollups_answer_exactly_what_a_scan_of_every_output_answers() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    fill(&store, 2_400);
    let now = shape().end;
    for scope in scopes() {
        for filter in filters() {
            let case = format!("{filter:?} {scope:?}");
            let records = scanned(&store, &filter, &scope);
            for window in [None, Some("24h"), Some("30d")] {
                let from_rollups = rollup::report(&store, &filter, &scope, window, now).unwrap();
                let from_scan = Report::build(&records, filter.repo.as_deref(), window, now);
                assert_eq!(from_rollups, from_scan, "report at {window:?}: {case}");
            }

            // The dashboard's summary: who awaits which window, the form's choices.
            let summary = rollup::summary(&store, &filter, &scope, None, now).unwrap();
            assert_eq!(
                summary.all.awaiting(),
                awaiting(&records),
                "awaiting: {case}"
            );
            let set = |f: &dyn Fn(&OutcomeRecord) -> Option<String>| {
                records.iter().filter_map(f).collect::<BTreeSet<String>>()
            };
            assert_eq!(
                summary.repos,
                set(&|r| r.safe_output_id.split(':').next().map(str::to_string)),
                "repos: {case}"
            );
            assert_eq!(summary.workflows, set(&|r| r.workflow.clone()), "{case}");
            assert_eq!(
                summary.types,
                set(&|r| Some(r.safe_output_type.clone())),
                "{case}"
            );

            let (first, weeks) = series::weeks_of(&filter, now).unwrap();
            let sums = rollup::weekly(&store, &filter, &scope, first, weeks).unwrap();
            assert_eq!(
                series::weekly_from_sums(&sums, first, weeks),
                series::weekly(&records, first, weeks),
                "series: {case}"
            );
            let per_workflow =
                rollup::weekly_by_workflow(&store, &filter, &scope, first, weeks).unwrap();
            let mut weekly_groups: BTreeMap<String, Vec<OutcomeRecord>> = BTreeMap::new();
            for r in &records {
                let name = r.workflow.clone().unwrap_or_else(|| "(none)".into());
                weekly_groups.entry(name).or_default().push(r.clone());
            }
            for (name, rs) in &weekly_groups {
                let of = per_workflow.get(name).cloned().unwrap_or_default();
                assert_eq!(
                    series::weekly_from_sums(&of, first, weeks),
                    series::weekly(rs, first, weeks),
                    "weekly of {name}: {case}"
                );
            }

            let mut groups: BTreeMap<String, Vec<&OutcomeRecord>> = BTreeMap::new();
            for r in &records {
                let name = r.workflow.clone().unwrap_or_else(|| "(none)".into());
                groups.entry(name).or_default().push(r);
            }
            let rows = rollup::by_workflow(&store, &filter, &scope).unwrap();
            assert_eq!(
                rows.iter()
                    .map(|(n, s)| (n.clone(), s.overall()))
                    .collect::<Vec<_>>(),
                groups
                    .iter()
                    .map(|(n, rs)| (n.clone(), Report::overall(rs.iter().copied())))
                    .collect::<Vec<_>>(),
                "workflows: {case}"
            );
            assert_eq!(
                rollup::trends(&store, &filter, &scope, now).unwrap(),
                trends_by_scan(&records, &filter, now),
                "trend: {case}"
            );

            assert_eq!(
                line_survival(&store, &filter, &scope).unwrap(),
                lines_by_scan(&store, &records),
                "line survival: {case}"
            );

            // A workflow page's runs: the newest first, each with the totals
            // of its outputs under the cuts; the walk always ends.
            let (runs, _) = rollup::recent_runs(&store, &filter, &scope, now, 5, 50_000).unwrap();
            let mut by_run: BTreeMap<(String, u64), Vec<&OutcomeRecord>> = BTreeMap::new();
            for r in &records {
                let repo = r.safe_output_id.split(':').next().unwrap().to_string();
                by_run
                    .entry((repo, r.run_id.unwrap_or(0)))
                    .or_default()
                    .push(r);
            }
            assert_eq!(runs.len(), by_run.len().min(5), "runs: {case}");
            for run in &runs {
                let rs = &by_run[&(run.repo.clone(), run.run_id)];
                assert_eq!(run.totals, Report::overall(rs.iter().copied()).0, "{case}");
                let newest = rs.iter().map(|r| r.created_at).max().unwrap();
                assert_eq!(run.latest, newest, "{case}");
            }

            let mut ids = Vec::new();
            let mut cursor: Option<String> = None;
            loop {
                let (items, next) =
                    rollup::page_of_outputs(&store, &filter, &scope, cursor.as_deref(), 7, 50)
                        .unwrap();
                ids.extend(items.into_iter().map(|o| o.safe_output_id));
                match next {
                    Some(c) => cursor = Some(c),
                    None => break,
                }
            }
            let scanned_ids: Vec<String> =
                records.iter().map(|o| o.safe_output_id.clone()).collect();
            assert_eq!(ids, scanned_ids, "pages: {case}");
        }
    }
    let everything = scanned(&store, &ReadFilter::default(), &RepoScope::All);
    assert!(everything.len() > 2_000, "{}", everything.len());
    let waiting = awaiting(&everything);
    assert!(
        waiting.iter().filter(|(_, n)| *n > 0).count() >= 2,
        "the outputs stand at several windows: {waiting:?}"
    );
    let (a, b) = (
        OutputTally::from_rows(rollup::metric_rows(&store).unwrap(), true).rows,
        OutputTally::count(everything.iter(), true).rows,
    );
    let differ: Vec<_> = a
        .keys()
        .chain(b.keys())
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| (k, a.get(k), b.get(k)))
        .collect();
    assert!(differ.is_empty(), "metrics: {differ:?}");
}

/// Line survival per workflow from the attributions of `records`.
fn lines_by_scan(store: &Store, records: &[OutcomeRecord]) -> BTreeMap<String, LineTotals> {
    let mut out: BTreeMap<String, LineTotals> = BTreeMap::new();
    for r in records {
        let Some(a) = safe_outcomes::store::attribution::get(store, &r.safe_output_id).unwrap()
        else {
            continue;
        };
        let t = out
            .entry(r.workflow.clone().unwrap_or_else(|| "(none)".into()))
            .or_default();
        let lines = a.lines_attributed();
        t.outputs_attributed += 1;
        t.lines_attributed += lines;
        let mut unknown = a.unknown_reason.is_some();
        for (name, s) in &a.survival {
            unknown |= s.unknown_reason.is_some();
            let Some(k) = s.lines_surviving else { continue };
            if name == "7d" {
                t.outputs_measured_7d += 1;
                t.lines_attributed_measured_7d += lines;
                t.lines_surviving_7d += k;
            } else if name == "30d" {
                t.outputs_measured_30d += 1;
                t.lines_attributed_measured_30d += lines;
                t.lines_surviving_30d += k;
            }
        }
        t.survival_unknown += u64::from(unknown);
    }
    for t in out.values_mut() {
        t.survival_rate_7d = t.rate_7d();
        t.survival_rate_30d = t.rate_30d();
    }
    out
}

/// The trend per workflow from the outputs themselves.
fn trends_by_scan(
    records: &[OutcomeRecord],
    filter: &ReadFilter,
    now: DateTime<Utc>,
) -> BTreeMap<String, &'static str> {
    let (w0, mid, w1) = rollup::trend_weeks(filter, now);
    let monday = |w: i64| DateTime::from_timestamp((w * 7 - 3) * 86_400, 0).unwrap();
    let mut halves: BTreeMap<String, (Vec<&OutcomeRecord>, Vec<&OutcomeRecord>)> = BTreeMap::new();
    for r in records {
        if r.created_at < monday(w0) || r.created_at >= monday(w1) {
            continue;
        }
        let name = r.workflow.clone().unwrap_or_else(|| "(none)".into());
        let h = halves.entry(name).or_default();
        if r.created_at >= monday(mid) {
            h.1.push(r);
        } else {
            h.0.push(r);
        }
    }
    let rate = |rs: &Vec<&OutcomeRecord>| {
        (!rs.is_empty())
            .then(|| Report::overall(rs.iter().copied()).1.strict_acceptance_rate)
            .flatten()
    };
    halves
        .iter()
        .map(|(n, (before, after))| (n.clone(), rollup::trend_of(rate(before), rate(after))))
        .collect()
}

#[test]
fn a_store_written_before_rollups_gets_them_counted_once_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    fill(&store, 600);
    let report = |store: &Store| {
        rollup::report(
            store,
            &ReadFilter::default(),
            &RepoScope::All,
            Some("7d"),
            shape().end,
        )
        .unwrap()
    };
    let kept = report(&store);
    store.forget_rollups_for_tests().unwrap();
    assert_eq!(report(&store).totals.total_safe_outputs, 0);
    drop(store);
    // Opened again: counted from the outputs, once. (sled lets go of its
    // file lock when its flusher thread ends, a moment after the drop.)
    let wait = safe_outcomes::store::STORE_LOCK_WAIT;
    let store = Store::open_waiting(dir.path(), wait).unwrap();
    assert_eq!(report(&store), kept);
    drop(store);
    let store = Store::open_waiting(dir.path(), wait).unwrap();
    assert_eq!(report(&store), kept);
    let records = scanned(&store, &ReadFilter::default(), &RepoScope::All);
    assert_eq!(kept, Report::build(&records, None, Some("7d"), shape().end));
    let _ = Duration::zero();
}
