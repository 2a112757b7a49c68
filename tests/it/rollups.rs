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
    // A store written with cells but before the sums cells: those are
    // built from the cells at open, once.
    store.forget_rollup_sums_for_tests().unwrap();
    assert_eq!(report(&store).totals.total_safe_outputs, 0);
    drop(store);
    let store = Store::open_waiting(dir.path(), wait).unwrap();
    assert_eq!(report(&store), kept);
    drop(store);
    let store = Store::open_waiting(dir.path(), wait).unwrap();
    assert_eq!(report(&store), kept);
    let _ = Duration::zero();
}

mod grains {
    //! The sums cells (`Grain::Sums`) fold to exactly what the cells
    //! (`Grain::Status`) and a scan of every output fold to, for random
    //! orgs, random re-judgings that move outputs between periods,
    //! workflows, types and statuses, outcomes dropped, outputs merged
    //! away, and random cuts and scopes; also after the sums cells are
    //! built again from the cells (`Store::ensure_rollups`).

    use std::collections::BTreeMap;

    use chrono::{DateTime, Duration, Utc};
    use proptest::prelude::*;
    use safe_outcomes::bench::synthetic::{output, repo_name, Shape};
    use safe_outcomes::model::{EvidenceStrength, OutcomeStatus};
    use safe_outcomes::read::query::{ReadFilter, RepoScope};
    use safe_outcomes::read::report::tally::OutputTally;
    use safe_outcomes::read::report::Sums;
    use safe_outcomes::read::rollup::{self, fold_grain};
    use safe_outcomes::store::rollup::{cells_of, class, day_of, week_of_day, Counts, Grain};
    use safe_outcomes::store::{Store, StoredOutput};

    fn end() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-11-25T13:17:00Z")
            .unwrap()
            .with_timezone(&Utc)
    }

    /// A random org and its history: (shape, outputs, seed, moves).
    #[derive(Debug, Clone)]
    struct Org {
        shape: (u64, u64, u64, i64),
        outputs: u64,
        seed: u64,
        /// (output, what happens to it: 0 re-judged, 1 outcome dropped,
        /// 2 merged into a new id, 3 re-judged and moved in time).
        moves: Vec<(u64, u8)>,
    }

    fn org() -> impl Strategy<Value = Org> {
        (
            (1u64..6, 1u64..5, 1u64..4, 1i64..80),
            20u64..300,
            any::<u64>(),
            proptest::collection::vec((0u64..300, 0u8..4), 0..60),
        )
            .prop_map(|(shape, outputs, seed, moves)| Org {
                shape,
                outputs,
                seed,
                moves,
            })
    }

    fn shape_of(org: &Org) -> Shape {
        let (repos, workflows, types, days) = org.shape;
        Shape {
            repos,
            workflows,
            repos_per_workflow: repos.min(2),
            types_per_workflow: types,
            outputs_per_run: 2,
            days,
            end: end(),
        }
    }

    /// Write the org's outputs, then its moves, each move in a unit.
    fn write(store: &Store, org: &Org) {
        let shape = shape_of(org);
        let mut unit = store.begin();
        for i in 0..org.outputs {
            unit.put_output(&output(&shape, i, org.seed)).unwrap();
        }
        unit.commit().unwrap();
        for (n, (i, what)) in org.moves.iter().enumerate() {
            let i = i % org.outputs;
            let id = output(&shape, i, org.seed).execution.id;
            let mut unit = store.begin();
            let Some(current) = unit.output(&id).unwrap() else {
                continue;
            };
            let mut next: StoredOutput = current.clone();
            let other = output(&shape, i + n as u64 * 7919, org.seed ^ 0xA5);
            match what {
                0 | 3 => {
                    let mut o = other.outcome.clone().unwrap();
                    o.safe_output_id = id.clone();
                    if *what == 0 {
                        if let Some(c) = current.outcome.as_ref() {
                            o.created_at = c.created_at;
                        }
                    }
                    next.outcome = Some(o);
                    unit.put_output_record(&next).unwrap();
                }
                1 => {
                    next.outcome = None;
                    unit.put_output_record(&next).unwrap();
                }
                _ => {
                    next.execution.id = format!("{id}-m{n}");
                    if let Some(o) = next.outcome.as_mut() {
                        o.safe_output_id = next.execution.id.clone();
                    }
                    unit.retire_output(&id, &next.execution.id, &[]).unwrap();
                    unit.put_output(&next).unwrap();
                }
            }
            unit.commit().unwrap();
        }
    }

    /// A random cut: (repo, workflow, type, status, strength, since, until)
    /// as indices, and a scope.
    fn cut() -> impl Strategy<Value = (ReadFilter, RepoScope)> {
        let instant = prop_oneof![
            Just(None),
            // Midnights, Mondays among them, and instants inside a day.
            (0i64..100).prop_map(|d| Some(end() - Duration::days(d) - Duration::hours(13))),
            (0i64..2400).prop_map(|h| Some(end() - Duration::hours(h))),
            (0i64..144_000).prop_map(|m| Some(end() - Duration::minutes(m))),
        ];
        (
            proptest::option::weighted(0.3, 0u64..6),
            proptest::option::weighted(0.3, 0u64..5),
            proptest::option::weighted(0.2, 0usize..3),
            proptest::option::weighted(0.15, 0usize..6),
            proptest::option::weighted(0.15, 0usize..4),
            instant.clone(),
            instant,
            0u8..4,
        )
            .prop_map(
                |(repo, workflow, ty, status, strength, since, until, scope)| {
                    let filter = ReadFilter {
                        repo: repo.map(repo_name),
                        workflow: workflow.map(|w| format!("workflow-{w:02}")),
                        output_type: ty
                            .map(|t| ["create_issue", "add_comment", "add_labels"][t].into()),
                        status: status.map(|s| OutcomeStatus::ALL[s]),
                        strength: strength.map(|s| {
                            [
                                EvidenceStrength::Strong,
                                EvidenceStrength::Medium,
                                EvidenceStrength::Weak,
                                EvidenceStrength::None,
                            ][s]
                        }),
                        since,
                        until,
                    };
                    let scope = match scope {
                        0 | 1 => RepoScope::All,
                        2 => RepoScope::only([repo_name(0), repo_name(3), "acme/other".into()]),
                        _ => RepoScope::only(Vec::<String>::new()),
                    };
                    (filter, scope)
                },
            )
    }

    /// Sums with their counts' trailing zeros dropped (a sum of cells may
    /// hold them, a sum of outputs not).
    fn trimmed<G: Ord>(sums: BTreeMap<G, Sums>) -> BTreeMap<G, ([i64; 8], Vec<i64>)> {
        sums.into_iter()
            .map(|(g, s)| {
                let mut v = s.counts.0;
                while v.last() == Some(&0) {
                    v.pop();
                }
                (g, (s.latest, v))
            })
            .collect()
    }

    type Place = (String, Option<String>, String);

    /// The `/metrics` tally's rows, with the names as stored
    /// (`read::rollup::metric_rows`).
    fn tally(store: &Store) -> BTreeMap<(String, String, String, String), u64> {
        rollup::metric_rows(store).unwrap()
    }

    /// The same rows counted from a scan of every output.
    fn tally_by_scan(store: &Store) -> BTreeMap<(String, String, String, String), u64> {
        let records: Vec<_> = ReadFilter::default()
            .scan(store, &RepoScope::All, "", None)
            .filter_map(|stored| stored.unwrap().outcome)
            .collect();
        OutputTally::rows_of(records.iter())
    }

    /// Folded by both grains and from a scan, grouped by repository,
    /// workflow and type, and by workflow and week within the 12 weeks
    /// before `end`: `Err` names the first difference.
    fn compare(store: &Store, filter: &ReadFilter, scope: &RepoScope) -> Result<(), String> {
        let place = |repo: &str, wf: &Option<String>, ty: &str| -> Place {
            (repo.to_string(), wf.clone(), ty.to_string())
        };
        let mut scan_places: BTreeMap<Place, Sums> = BTreeMap::new();
        let mut scan_weeks: BTreeMap<(Option<String>, i64), Sums> = BTreeMap::new();
        let first_week = week_of_day(day_of(end())) - 11;
        for stored in filter.scan(store, scope, "", None) {
            let stored = stored.unwrap();
            let o = stored.outcome.as_ref().unwrap();
            let (c, counts) = (class(o.outcome_status, o.evidence_strength), Counts::of(o));
            scan_places
                .entry(place(
                    &stored.execution.repo,
                    &o.workflow,
                    &o.safe_output_type,
                ))
                .or_default()
                .add(c, &counts);
            let week = week_of_day(day_of(o.created_at));
            if (first_week..first_week + 12).contains(&week) {
                scan_weeks
                    .entry((o.workflow.clone(), week))
                    .or_default()
                    .add(c, &counts);
            }
        }
        let first = DateTime::from_timestamp((first_week * 7 - 3) * 86_400, 0).unwrap();
        let weekly = ReadFilter {
            since: Some(filter.since.map_or(first, |s| s.max(first))),
            until: Some(filter.until.map_or(first + Duration::weeks(12), |u| {
                u.min(first + Duration::weeks(12))
            })),
            ..filter.clone()
        };
        let scan_places = trimmed(scan_places);
        let scan_weeks = trimmed(scan_weeks);
        for grain in [Grain::Sums, Grain::Status] {
            let places = fold_grain(store, filter, scope, grain, |c| {
                Some(place(&c.repo, &c.workflow, &c.output_type))
            })
            .unwrap();
            if trimmed(places) != scan_places {
                return Err(format!("{grain:?} by place"));
            }
            if weekly.since < weekly.until {
                let weeks = fold_grain(store, &weekly, scope, grain, |c| {
                    Some((c.workflow.clone(), rollup::week_of(c)?))
                })
                .unwrap();
                if trimmed(weeks) != scan_weeks {
                    return Err(format!("{grain:?} by week"));
                }
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 10,
            max_shrink_iters: 20,
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        #[test]
        fn sums_cells_fold_to_what_the_cells_and_a_scan_fold_to(
            org in org(),
            cuts in proptest::collection::vec(cut(), 12),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let store = Store::open(dir.path()).unwrap();
            write(&store, &org);
            let mut cuts = cuts;
            cuts.push((ReadFilter::default(), RepoScope::All));
            for (filter, scope) in &cuts {
                let found = compare(&store, filter, scope);
                prop_assert!(found.is_ok(), "{:?} under {filter:?} {scope:?}", found);
            }
            prop_assert_eq!(tally(&store), tally_by_scan(&store));
            // A store written before the tally: built from the cells.
            store.forget_rollup_tally_for_tests().unwrap();
            prop_assert!(tally(&store).is_empty());
            store.ensure_rollups().unwrap();
            prop_assert_eq!(tally(&store), tally_by_scan(&store));
            // A store written before the sums cells: built from the cells.
            store.forget_rollup_sums_for_tests().unwrap();
            store.ensure_rollups().unwrap();
            prop_assert_eq!(tally(&store), tally_by_scan(&store));
            for (filter, scope) in &cuts {
                let found = compare(&store, filter, scope);
                prop_assert!(found.is_ok(), "rebuilt: {:?} under {filter:?} {scope:?}", found);
            }
            // Each time index entry holds its output's day cell and counts.
            let (from, to) = (DateTime::<Utc>::MIN_UTC, DateTime::<Utc>::MAX_UTC);
            for (lc, _) in store.rollup_repos(None).unwrap() {
                for entry in store.outputs_by_time(&lc, from, to) {
                    let entry = entry.unwrap();
                    let stored = store.output(&entry.output_id).unwrap().unwrap();
                    let ([day, ..], counts) = cells_of(&stored).unwrap();
                    prop_assert_eq!(entry.day, Some((day, counts)));
                }
            }
            // Entries written before they did: the partial days read the outputs.
            store.time_index_as_before_for_tests().unwrap();
            for (filter, scope) in &cuts {
                let found = compare(&store, filter, scope);
                prop_assert!(found.is_ok(), "old index: {:?} under {filter:?} {scope:?}", found);
            }
        }
    }
}
