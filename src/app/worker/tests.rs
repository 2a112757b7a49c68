use std::sync::atomic::Ordering;

use super::dead_letters::MAX_ATTEMPTS;
use super::*;
use crate::app::App;
use crate::model::clock::Clock;
use crate::store::inbox::Enqueued;

fn delivery(id: &str) -> InboxItem {
    delivery_observing(id, &[])
}

/// A delivery filing one observation (id `obs-<id>`) under each target.
fn delivery_observing(id: &str, targets: &[&str]) -> InboxItem {
    let at = chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap();
    InboxItem::Delivery {
        delivery_id: id.into(),
        event: "issues".into(),
        action: Some("edited".into()),
        received_at: at,
        observations: targets
            .iter()
            .map(|t| Observation {
                id: format!("obs-{id}"),
                at,
                target: t.to_string(),
                actor: None,
                event: ObservationKind::Opened,
                snapshot: None,
            })
            .collect(),
        discoveries: Vec::new(),
        installation_change: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_item_is_dead_lettered_and_the_queue_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let app = App::start(dir.path(), Clock::System).unwrap();
    app.wait_ready().await;
    // The second item stored (sequence 2) panics when processed.
    app.store.set_counter_for_tests("test_panic_at", 2);
    for id in ["d-1", "d-2", "d-3"] {
        let stored = app.writer.enqueue(delivery(id)).await.unwrap();
        assert!(matches!(stored, Enqueued::Stored(_) | Enqueued::Logged));
    }
    app.wait_idle().await;
    assert_eq!(app.shared.worker_death(), None, "the worker lives on");
    assert_eq!(app.shared.dead_letters.load(Ordering::Relaxed), 1);
    assert_eq!(app.shared.processed_total.load(Ordering::Relaxed), 3);
    assert_eq!(app.store.backlog(), 0);
    let letters = app.store.dead_letters().unwrap();
    assert_eq!(letters.len(), 1);
    assert_eq!(letters[0].seq, 2);
    assert_eq!(letters[0].attempts, 1, "a panic is not retried");
    assert!(letters[0].error.contains("injected failure"), "{letters:?}");
    assert_eq!(letters[0].item(), Some(delivery("d-2")));
    assert!(app.shared.last_error().unwrap().contains("dead letters"));
    app.shutdown();
}

/// An item whose processing fails with an error is tried again, on the
/// item as stored, with its writes undone before each try: it passes on a
/// later try with nothing filed twice, or after `MAX_ATTEMPTS` tries it is
/// set aside whole, and the queue goes on either way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_item_is_tried_again_on_the_item_as_stored() {
    for (errors, dead) in [(MAX_ATTEMPTS - 1, false), (MAX_ATTEMPTS + 2, true)] {
        let dir = tempfile::tempdir().unwrap();
        let app = App::start(dir.path(), Clock::System).unwrap();
        app.wait_ready().await;
        app.store.set_counter_for_tests("test_error_at", 2);
        app.store
            .set_counter_for_tests("test_errors_left", errors.into());
        for id in ["d-1", "d-2", "d-3"] {
            let item = delivery_observing(id, &["o/r#1"]);
            assert!(matches!(
                app.writer.enqueue(item).await.unwrap(),
                Enqueued::Stored(_) | Enqueued::Logged
            ));
        }
        app.wait_idle().await;
        assert_eq!(app.shared.processed_total.load(Ordering::Relaxed), 3);
        let filed: Vec<String> = app
            .store
            .observations(&["o/r#1".to_string()])
            .unwrap()
            .into_iter()
            .map(|o| o.id)
            .collect();
        let letters = app.store.dead_letters().unwrap();
        if dead {
            assert_eq!(filed, ["obs-d-1", "obs-d-3"]);
            assert_eq!(letters.len(), 1);
            assert_eq!(letters[0].attempts, MAX_ATTEMPTS);
            assert!(letters[0].error.contains("injected error"), "{letters:?}");
            assert_eq!(
                letters[0].item(),
                Some(delivery_observing("d-2", &["o/r#1"]))
            );
        } else {
            assert_eq!(filed, ["obs-d-1", "obs-d-2", "obs-d-3"]);
            assert!(letters.is_empty(), "{letters:?}");
        }
        app.shutdown();
    }
}

/// Two workers (two replicas' stores on one PostgreSQL database) drain
/// one inbox at once: every item is processed exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_workers_on_one_database_process_every_item_exactly_once() {
    if crate::store::pg::test_pg_from_env().is_none() {
        return eprintln!("SKIPPED: set SAFE_OUTCOMES_TEST_PG to run on PostgreSQL");
    }
    let dir = tempfile::tempdir().unwrap();
    let app = App::start_without_worker(dir.path(), Clock::System).unwrap();
    assert!(app.store.is_pg());
    let n = 300;
    for i in 0..n {
        let target = format!("acme/r#{}", i % 7);
        let item = delivery_observing(&format!("d-{i}"), &[target.as_str()]);
        assert!(matches!(
            app.writer.enqueue(item).await,
            Ok(Enqueued::Stored(_) | Enqueued::Logged)
        ));
    }
    app.writer.settled().await;
    let other = Store::open(&dir.path().join("store")).unwrap();
    let workers = [app.store.clone(), other].map(|store| {
        let shared = app.shared.clone();
        std::thread::spawn(move || {
            let mut worker = Worker::new(store, shared);
            worker.drain_inbox();
            worker.processed
        })
    });
    let counts: Vec<u64> = workers.map(|w| w.join().unwrap()).into();
    let store = &app.store;
    assert_eq!(store.counter(counter::PROCESSED), n, "{counts:?}");
    assert_eq!(store.backlog(), 0);
    assert_eq!(store.oldest_queued_seq(), None);
    assert!(store.dead_letters().unwrap().is_empty());
    let filed: usize = (0..7)
        .map(|t| store.observations(&[format!("acme/r#{t}")]).unwrap().len())
        .sum();
    assert_eq!(filed as u64, n, "every item's observation, once");
    app.shutdown();
}

/// Items stored while no worker runs are drained in one unit of work;
/// the middle one fails after filing its observations: none of its
/// writes are committed, and those of the items around it are.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_item_failing_midway_in_a_unit_leaves_nothing_half_written() {
    let dir = tempfile::tempdir().unwrap();
    let app = App::start_without_worker(dir.path(), Clock::System).unwrap();
    for (id, targets) in [
        ("d-1", &["acme/r#1"][..]),
        ("d-2", &["acme/r#1", "acme/r#2"][..]),
        ("d-3", &["acme/r#3"][..]),
    ] {
        let stored = app.writer.enqueue(delivery_observing(id, targets)).await;
        assert!(matches!(stored, Ok(Enqueued::Stored(_) | Enqueued::Logged)));
    }
    app.store.set_counter_for_tests("test_panic_at", 2);
    let (store, shared) = (app.store.clone(), app.shared.clone());
    let mut worker = Worker::new(store.clone(), shared);
    app.writer.settled().await;
    worker.drain_inbox();
    let ids = |t: &str| -> Vec<String> {
        store
            .observations(&[t.to_string()])
            .unwrap()
            .into_iter()
            .map(|o| o.id)
            .collect()
    };
    assert_eq!(ids("acme/r#1"), ["obs-d-1"], "d-2's copy is not kept");
    assert!(ids("acme/r#2").is_empty(), "d-2 wrote nothing");
    assert_eq!(ids("acme/r#3"), ["obs-d-3"]);
    assert_eq!(store.backlog(), 0);
    assert_eq!(store.counter(counter::PROCESSED), 3);
    let letters = store.dead_letters().unwrap();
    assert_eq!(letters.iter().map(|l| l.seq).collect::<Vec<_>>(), [2]);
    app.shutdown();
}

/// One step of `every_judged_output_keeps_its_next_checkpoint_scheduled`.
#[derive(Debug, Clone)]
enum Step {
    /// A webhook discovers the issue of output `i` (an output of its own
    /// until the manifest line comes: then a merge, and an alias).
    Discover(u64),
    /// The manifest line of output `i`.
    Manifest(u64),
    /// A human labels (or closes) output `i`'s issue, now.
    Observe(u64, bool),
    /// The clock moves on this many minutes; due checkpoints are taken.
    Advance(i64),
    /// The wall clock is stepped back this many minutes (NTP, or by hand).
    Rewind(i64),
}

fn step() -> impl proptest::strategy::Strategy<Value = Step> {
    use proptest::prelude::*;
    prop_oneof![
        (0..4u64).prop_map(Step::Discover),
        (0..4u64).prop_map(Step::Manifest),
        (0..4u64, any::<bool>()).prop_map(|(i, close)| Step::Observe(i, close)),
        prop_oneof![1..120i64, 120..3_000i64, 3_000..20_000i64].prop_map(Step::Advance),
        prop_oneof![1..120i64, 120..3_000i64].prop_map(Step::Rewind),
    ]
}

/// The cases a property of the worker tries: each starts an App.
fn property_config() -> proptest::test_runner::Config {
    proptest::test_runner::Config {
        cases: 24,
        ..proptest::test_runner::Config::default()
    }
}

/// A runtime of its own for each case of a property.
fn case_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

fn checkpoint_t0() -> chrono::DateTime<chrono::Utc> {
    "2026-10-01T10:00:00Z".parse().unwrap()
}

/// Output `i`'s record, from the manifest or from a webhook discovery.
fn issue_record(i: u64, manifest: bool) -> crate::model::ExecutionRecord {
    use crate::model::{ExecutionRecord, Target, TargetKind};
    let (run, index) = if manifest {
        (Some(77), i.to_string())
    } else {
        (None, format!("issue-{i}"))
    };
    let mut target = Target::thread("o/r", TargetKind::Issue, i + 1);
    target.url = Some(format!("https://github.com/o/r/issues/{}", i + 1));
    ExecutionRecord {
        id: ExecutionRecord::output_id("o/r", run, &index),
        output_type: "create_issue".into(),
        repo: "o/r".into(),
        run_id: run,
        index: manifest.then_some(i),
        workflow: Some("triage".into()),
        target: Some(target),
        executed_at: checkpoint_t0() + chrono::Duration::minutes(i as i64),
        actor: Some("github-actions[bot]".into()),
        sources: crate::model::execution::Sources {
            manifest,
            webhook: !manifest,
        },
        ..ExecutionRecord::default()
    }
}

/// The rule of `reassess::scheduled_already` (the schedule is not read
/// before an output's next checkpoint is written), as a property: whatever
/// the order of discoveries, manifest lines (merges), observations and
/// clock moves (forward, and stepped back), after each step every judged
/// output has its next checkpoint after the time it is judged as of
/// (`judged_as_of`: now, or its record's time while the clock stands
/// earlier) scheduled, under its id or an alias of it, none due is left,
/// the windows on its record are the ones its observations give as of
/// that time, and no checkpoint once passed is lost from them.
#[test]
fn every_judged_output_keeps_its_next_checkpoint_scheduled() {
    use crate::model::target::thread_key;
    use proptest::prelude::*;
    let config = property_config();
    proptest!(config, |(steps in proptest::collection::vec(step(), 1..30))| {
        case_runtime().block_on(async {
            let dir = tempfile::tempdir().unwrap();
            let clock = Clock::manual(checkpoint_t0() + chrono::Duration::minutes(5));
            let app = App::start_without_worker(dir.path(), clock.clone()).unwrap();
            let mut worker = Worker::new(app.store.clone(), app.shared.clone());
            let mut passed: std::collections::HashMap<String, Vec<String>> = Default::default();
            for (n, step) in steps.iter().enumerate() {
                let now = clock.now();
                let item = match step {
                    Step::Discover(i) | Step::Manifest(i) => {
                        let manifest = matches!(step, Step::Manifest(_));
                        let record = issue_record(*i, manifest);
                        if manifest {
                            Some(InboxItem::Manifest {
                                key: format!("m-{n}"),
                                received_at: now,
                                records: vec![record],
                            })
                        } else {
                            Some(InboxItem::Delivery {
                                delivery_id: format!("d-{n}"),
                                event: "issues".into(),
                                action: Some("opened".into()),
                                received_at: now,
                                observations: Vec::new(),
                                discoveries: vec![record],
                                installation_change: None,
                            })
                        }
                    }
                    Step::Observe(i, close) => Some(InboxItem::Delivery {
                        delivery_id: format!("d-{n}"),
                        event: "issues".into(),
                        action: None,
                        received_at: now,
                        observations: vec![Observation {
                            id: format!("obs-{n}"),
                            at: now,
                            target: thread_key("o/r", i + 1),
                            actor: Some(crate::model::Actor::new("maria-lopez", "User")),
                            event: if *close {
                                crate::model::ObservationKind::Closed
                            } else {
                                crate::model::ObservationKind::Labeled { label: "bug".into() }
                            },
                            snapshot: None,
                        }],
                        discoveries: Vec::new(),
                        installation_change: None,
                    }),
                    Step::Advance(minutes) => {
                        clock.advance_to(now + chrono::Duration::minutes(*minutes));
                        None
                    }
                    Step::Rewind(minutes) => {
                        let back = now - chrono::Duration::minutes(*minutes);
                        if let Clock::Manual(ms) = &clock {
                            ms.store(back.timestamp_millis(), Ordering::SeqCst);
                        }
                        None
                    }
                };
                if let Some(item) = item {
                    app.writer.enqueue(item).await.unwrap();
                }
                app.writer.settled().await;
                worker.drain_inbox();
                worker.take_due_checkpoints();
                prop_assert_eq!(app.shared.last_error(), None);
                let now = clock.now();
                let store = &app.store;
                let far = now + chrono::Duration::days(400);
                let schedule = store.due_checkpoints(far, 10_000).unwrap();
                prop_assert!(schedule.iter().all(|(due, _)| *due > now), "left due: {:?}", schedule);
                for stored in store.outputs("", None) {
                    let stored = stored.unwrap();
                    let Some(outcome) = &stored.outcome else { continue };
                    let id = &stored.execution.id;
                    let as_of = judged_as_of(Some(outcome), now);
                    if let Some(due) = next_checkpoint(stored.execution.executed_at, as_of) {
                        let scheduled = schedule.iter().any(|(d, sid)| {
                            *d == due && store.canonical_id(sid).unwrap() == *id
                        });
                        prop_assert!(scheduled, "{id}: {due} not scheduled in {schedule:?}");
                    }
                    let observations = store.observations(&stored.execution.watch_keys()).unwrap();
                    let fresh = assess(&stored.execution, &observations, as_of);
                    prop_assert_eq!(&outcome.windows, &fresh.windows, "{}", id);
                    let names: Vec<String> = outcome.windows.keys().map(str::to_string).collect();
                    let before = passed.insert(id.clone(), names.clone()).unwrap_or_default();
                    prop_assert!(
                        before.iter().all(|b| names.contains(b)),
                        "{id}: checkpoints {before:?} passed, now {names:?} at {now}"
                    );
                }
            }
            app.shutdown();
            Ok(())
        })?;
    });
}

/// A delivery discovering output `discover` (if any) and filing one
/// observation (id `<obs_id>`) on issue `#on` of `o/r`.
fn observing_issue(id: &str, discover: Option<u64>, on: u64, obs_id: &str) -> InboxItem {
    let at = checkpoint_t0() + chrono::Duration::minutes(30);
    InboxItem::Delivery {
        delivery_id: id.into(),
        event: "issues".into(),
        action: Some("labeled".into()),
        received_at: at,
        observations: vec![Observation {
            id: obs_id.into(),
            at,
            target: crate::model::target::thread_key("o/r", on),
            actor: Some(crate::model::Actor::new("maria-lopez", "User")),
            event: ObservationKind::Labeled {
                label: "bug".into(),
            },
            snapshot: None,
        }],
        discoveries: discover
            .map(|i| issue_record(i, false))
            .into_iter()
            .collect(),
        installation_change: None,
    }
}

/// Judging an output panics only once the whole unit's items are filed
/// (`Worker::judge_unit`): the unit is done again item by item, and
/// only the item whose observation makes the judging fail is set aside;
/// the items before and after it, on the same output and on another, are
/// kept and their outputs judged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_judging_a_units_outputs_sets_aside_only_the_item_behind_it() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Clock::manual(checkpoint_t0() + chrono::Duration::hours(2));
    let app = App::start_without_worker(dir.path(), clock).unwrap();
    for item in [
        observing_issue("d-1", Some(0), 1, "obs-1"),
        observing_issue("d-2", None, 1, "obs-panic-when-judged"),
        observing_issue("d-3", Some(1), 2, "obs-3"),
        observing_issue("d-4", None, 1, "obs-4"),
    ] {
        let stored = app.writer.enqueue(item).await;
        assert!(matches!(stored, Ok(Enqueued::Stored(_) | Enqueued::Logged)));
    }
    let (store, shared) = (app.store.clone(), app.shared.clone());
    let mut worker = Worker::new(store.clone(), shared);
    app.writer.settled().await;
    worker.drain_inbox();
    assert_eq!(store.backlog(), 0);
    assert_eq!(store.counter(counter::PROCESSED), 4);
    let letters = store.dead_letters().unwrap();
    assert_eq!(letters.iter().map(|l| l.seq).collect::<Vec<_>>(), [2]);
    assert!(letters[0].error.contains("injected failure judging o/r#1"));
    assert_eq!(letters[0].attempts, 1, "a panic is not retried");
    let ids = |on: u64| -> Vec<String> {
        let key = crate::model::target::thread_key("o/r", on);
        let filed = store.observations(&[key]).unwrap();
        filed.into_iter().map(|o| o.id).collect()
    };
    assert_eq!(ids(1), ["obs-1", "obs-4"]);
    assert_eq!(ids(2), ["obs-3"]);
    for i in [0, 1] {
        let id = issue_record(i, false).id;
        let stored = store.output(&id).unwrap().expect("registered");
        assert!(stored.outcome.is_some(), "{id} judged");
    }
    // The failed unit's items were done again one by one, and the units
    // after them judge once again.
    assert_eq!(worker.judge_each_through, 4);
    assert!(worker.judges_once(&store.begin(), 5));
    let item = observing_issue("d-5", None, 2, "obs-5");
    app.writer.enqueue(item).await.unwrap();
    app.writer.settled().await;
    worker.drain_inbox();
    assert_eq!(ids(2), ["obs-3", "obs-5"]);
    app.shutdown();
}

/// One item of `judging_once_per_unit_gives_what_judging_each_item_gives`:
/// (what, on which of four outputs, closing or not).
fn unit_step() -> impl proptest::strategy::Strategy<Value = (u8, u64, bool)> {
    use proptest::prelude::*;
    (0..5u8, 0..4u64, any::<bool>())
}

/// Item `n` of `judging_once_per_unit_gives_what_judging_each_item_gives`:
/// 0 a webhook discovers output `i` (on issue `#i+1`) with an observation;
/// 1 its manifest line (a merge, when discovered too); 2 a person labels
/// (or closes) `#i+1`; 3 `#i+1` shows as a PR of branch `b<i>` (its
/// branch is linked to the thread, and what was filed under the branch
/// is copied to it); 4 an observation on branch `b<i>` (copied to the
/// thread once linked).
fn unit_item(
    n: usize,
    (kind, i, close): (u8, u64, bool),
    now: chrono::DateTime<chrono::Utc>,
) -> InboxItem {
    use crate::model::target::ref_key;
    let (id, on) = (format!("d-{n}"), i + 1);
    let mut item = match kind {
        0 => observing_issue(&id, Some(i), on, &format!("o-{n}")),
        1 => {
            return InboxItem::Manifest {
                key: format!("m-{n}"),
                received_at: now,
                records: vec![issue_record(i, true)],
            }
        }
        _ => observing_issue(&id, None, on, &format!("o-{n}")),
    };
    let InboxItem::Delivery { observations, .. } = &mut item else {
        unreachable!("a delivery")
    };
    let obs = &mut observations[0];
    if close {
        obs.event = ObservationKind::Closed;
    }
    match kind {
        3 => {
            obs.snapshot = Some(crate::model::ItemSnapshot {
                kind: Some(TargetKind::PullRequest),
                state: "open".into(),
                head_ref: Some(format!("b{i}")),
                ..Default::default()
            })
        }
        4 => obs.target = ref_key("o/r", &format!("b{i}")),
        _ => {}
    }
    item
}

/// The rule of `Worker::judge_unit` as a property: whatever the items
/// (discoveries, manifest lines and their merges, observations, refs
/// linked to threads and observations copied through them), a store whose
/// worker judges each output once per unit ends with the records,
/// outcomes, schedule and observations of one whose worker judges after
/// each item.
#[test]
fn judging_once_per_unit_gives_what_judging_each_item_gives() {
    use crate::model::target::thread_key;
    use proptest::prelude::*;
    let config = property_config();
    proptest!(config, |(steps in proptest::collection::vec(unit_step(), 1..40))| {
        case_runtime().block_on(async {
            let now = checkpoint_t0() + chrono::Duration::hours(3);
            let mut ends = Vec::new();
            for each_item in [false, true] {
                let dir = tempfile::tempdir().unwrap();
                let clock = Clock::manual(now);
                let app = App::start_without_worker(dir.path(), clock).unwrap();
                for (n, step) in steps.iter().enumerate() {
                    app.writer.enqueue(unit_item(n, *step, now)).await.unwrap();
                }
                let mut worker = Worker::new(app.store.clone(), app.shared.clone());
                if each_item {
                    worker.judge_each_through = u64::MAX;
                }
                app.writer.settled().await;
                worker.drain_inbox();
                prop_assert_eq!(app.shared.last_error(), None);
                prop_assert!(app.store.dead_letters().unwrap().is_empty());
                let store = &app.store;
                // Everything but the trace id, which is drawn at random.
                let records: Vec<_> = store
                    .outputs("", None)
                    .map(|s| {
                        let s = s.unwrap();
                        (s.execution, s.outcome)
                    })
                    .collect();
                let far = now + chrono::Duration::days(400);
                let schedule: Vec<(chrono::DateTime<chrono::Utc>, String)> = store
                    .due_checkpoints(far, 10_000)
                    .unwrap()
                    .into_iter()
                    .map(|(due, id)| (due, store.canonical_id(&id).unwrap()))
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect();
                let observed: Vec<Vec<Observation>> = (1..=4)
                    .map(|t| store.observations(&[thread_key("o/r", t)]).unwrap())
                    .collect();
                ends.push((records, schedule, observed));
                app.shutdown();
            }
            prop_assert_eq!(&ends[0], &ends[1]);
            Ok(())
        })?;
    });
}

/// A delivery as the webhook handler stores it (`normalize`, then the item).
fn normalized(event: &str, id: &str, body: serde_json::Value) -> InboxItem {
    use crate::ingest::webhook::{normalize, Normalized};
    let Normalized::Relevant(d) = normalize(event, id, body.to_string().as_bytes()).unwrap() else {
        panic!("{event} {id} ignored")
    };
    InboxItem::Delivery {
        delivery_id: id.into(),
        event: d.event,
        action: d.action,
        received_at: checkpoint_t0(),
        observations: d.observations,
        discoveries: d.discoveries,
        installation_change: d.installation_change,
    }
}

/// A manifest post of `issue_record(0)` named under `repo`.
fn manifest_under(repo: &str, key: &str) -> InboxItem {
    let mut record = issue_record(0, true);
    record.rename_repo("o/r", repo);
    InboxItem::Manifest {
        key: key.into(),
        received_at: checkpoint_t0(),
        records: vec![record],
    }
}

/// Renamed repositories (`renamed`): after `repository.renamed`, the
/// deliveries under the new name (same `repository.id`) are filed under the
/// name the outputs are keyed by, a manifest under the new name adds to the
/// output it names (no second output), and another repository's delivery
/// (another id) under a name the renamed one left is not taken for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renamed_repositorys_later_deliveries_and_manifests_reach_its_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let app = App::start(dir.path(), Clock::System).unwrap();
    app.wait_ready().await;
    let repo = |name: &str, id: u64| serde_json::json!({"id": id, "full_name": name});
    let installation = serde_json::json!({"id": 4242});
    let at = checkpoint_t0() + chrono::Duration::hours(2);
    let labeled = |name: &str, id: u64| {
        serde_json::json!({"action": "labeled", "issue": {"number": 1, "state": "open",
            "created_at": checkpoint_t0(), "updated_at": at, "user": {"login": "github-actions[bot]"}},
            "label": {"name": "bug"}, "repository": repo(name, id),
            "installation": installation, "sender": {"login": "alice", "type": "User"}})
    };
    // `repository.renamed` from the name `from` (its last segment) to `to`.
    let renamed = |delivery: &str, from: &str, to: &str| {
        let body = serde_json::json!({"action": "renamed",
            "changes": {"repository": {"name": {"from": from}}},
            "repository": repo(to, 99), "installation": installation,
            "sender": {"login": "alice"}});
        normalized("repository", delivery, body)
    };
    let items = vec![
        normalized(
            "installation",
            "i-1",
            serde_json::json!({"action": "created",
            "installation": {"id": 4242, "account": {"login": "o", "id": 1}},
            "repositories": [{"full_name": "o/r"}]}),
        ),
        manifest_under("o/r", "m-1"),
        renamed("r-1", "r", "o/r2"),
        normalized("issues", "l-1", labeled("o/r2", 99)),
        manifest_under("o/r2", "m-2"),
        renamed("r-2", "r2", "o/r3"),
        normalized("issues", "l-2", labeled("o/r3", 99)),
        // Another repository (id 100) takes the name o/r2.
        normalized("issues", "l-3", labeled("o/r2", 100)),
    ];
    for item in items {
        assert!(matches!(
            app.writer.enqueue(item).await.unwrap(),
            Enqueued::Stored(_) | Enqueued::Logged
        ));
    }
    app.wait_idle().await;
    assert_eq!(app.shared.dead_letters.load(Ordering::Relaxed), 0);
    assert_eq!(app.store.output_count(), 1, "no output under a later name");
    let output = app.store.output("o/r:77:0").unwrap().expect("the output");
    assert_eq!(output.execution.repo, "o/r");
    let ids = |key: &str| -> Vec<String> {
        let obs = app.store.observations(&[key.to_string()]).unwrap();
        let mut ids: Vec<String> = obs.into_iter().map(|o| o.id).collect();
        ids.sort();
        ids
    };
    assert_eq!(
        ids("o/r#1"),
        vec!["l-1/0", "l-2/0"],
        "filed under the first name"
    );
    assert!(ids("o/r3#1").is_empty());
    assert_eq!(
        ids("o/r2#1"),
        vec!["l-3/0"],
        "the name's new holder is itself"
    );
    app.shutdown();
}
