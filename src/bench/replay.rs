//! `bench replay`: offline throughput from inbox to stored outcomes. An App
//! without a worker takes N normalized deliveries into its inbox (gh-aw
//! issues and PRs discovered from their markers, then labels, comments,
//! closes and merges on them); then a worker drains it and the drain is
//! timed (decode, correlate, evaluate, write). The baseline is the store
//! ceiling: the same inbox drained by a loop that only decodes each item and
//! files its observations, one batch per item, with no correlation or evaluation.

use std::time::{Duration, Instant};

use anyhow::Context;
use chrono::{DateTime, Duration as ChronoDuration, Utc};
use clap::Args;

use super::payloads::{issue, pull_request, IssueEvent, PrEvent};
use super::{per_sec, Row, Table};
use crate::app::worker::Worker;
use crate::app::App;
use crate::ingest::webhook::{normalize, Normalized};
use crate::model::clock::Clock;
use crate::store::inbox::InboxItem;
use crate::store::pg::{self, stats::Stats, stats::Trip};
use crate::store::{codec, counter, Store};

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// Deliveries (events) in the inbox.
    #[arg(long, default_value_t = 50_000)]
    pub events: usize,
    /// Rounds of (drain, store ceiling), each on fresh stores: the figures
    /// are the medians, and the ratios the median of each round's ratio
    /// (this machine's speed moves by 1.4× between runs of seconds).
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
}

/// Events per gh-aw output: its `opened`, then activity on it.
const EVENTS_PER_OUTPUT: usize = 10;

/// The raw deliveries: (event, body). Odd outputs are PRs (28 KB bodies),
/// even ones issues; activity comes from humans and bots.
pub fn deliveries(n: usize, start: DateTime<Utc>) -> Vec<(&'static str, Vec<u8>)> {
    let repos = ["acme/widgets", "acme/docs", "acme/api", "acme/infra"];
    (0..n)
        .map(|i| {
            let output = i / EVENTS_PER_OUTPUT;
            let step = i % EVENTS_PER_OUTPUT;
            let repo = repos[output % repos.len()];
            let number = 10_000 + output as u64;
            let at = start + ChronoDuration::seconds(i as i64);
            let run = 100_000 + output as u64;
            // The agent opens the thread (step 0); people and bots follow.
            let sender = match step % 3 {
                0 => "github-actions[bot]",
                1 => "maria-lopez",
                _ => "linear[bot]",
            };
            if output % 2 == 1 {
                let (action, label) = match step {
                    0 => ("opened", None),
                    9 => ("closed", None),
                    s if s % 2 == 1 => ("labeled", Some("ci")),
                    _ => ("ready_for_review", None),
                };
                let body = pull_request(&PrEvent {
                    label,
                    merged: output % 4 == 1,
                    ..PrEvent::of_agent_run(repo, number, run, action, at, sender)
                });
                ("pull_request", body.to_string().into_bytes())
            } else {
                let (event, action, label, comment) = match step {
                    0 => ("issues", "opened", None, None),
                    9 => ("issues", "closed", None, None),
                    s if s % 2 == 1 => ("issue_comment", "created", None, Some(i as u64)),
                    _ => ("issues", "labeled", Some("bug"), None),
                };
                let body = issue(&IssueEvent {
                    label,
                    comment_id: comment,
                    ..IssueEvent::of_agent_run(repo, number, run, action, at, sender)
                });
                (event, body.to_string().into_bytes())
            }
        })
        .collect()
}

/// Drain the inbox doing only the store work: decode, file observations, remove.
fn store_ceiling(store: &Store) -> anyhow::Result<usize> {
    let mut n = 0;
    loop {
        match store.bare_drain(256)? {
            0 => return Ok(n),
            taken => n += taken,
        }
    }
}

/// Fill a fresh store's inbox with the normalized deliveries.
async fn fill(dir: &std::path::Path, items: &[InboxItem], clock: Clock) -> anyhow::Result<App> {
    let app = App::start_without_worker(dir, clock)?;
    fill_app(&app, items).await?;
    Ok(app)
}

async fn fill_app(app: &App, items: &[InboxItem]) -> anyhow::Result<()> {
    let mut tasks = tokio::task::JoinSet::new();
    for chunk in items.chunks(1024) {
        for item in chunk {
            let writer = app.writer.clone();
            let item = item.clone();
            tasks.spawn(async move { writer.enqueue(item).await });
        }
        while let Some(r) = tasks.join_next().await {
            r??;
        }
    }
    // On sled, filed in the journal after the answers: the drain starts
    // on a full inbox.
    app.writer.settled().await;
    Ok(())
}

/// A worker's drain of an App's filled inbox.
struct Drain {
    wall: Duration,
    /// The drain thread's CPU seconds.
    cpu: f64,
    /// The CPU the drain's thread was pinned to.
    on: Option<usize>,
    outputs: u64,
    /// The engine's round trips and commits while it drained (PostgreSQL).
    trips: Stats,
}

/// Drain `app`'s inbox with a worker on a thread of its own, and check
/// that everything was processed.
async fn drain(app: App, n: usize) -> anyhow::Result<Drain> {
    let store = app.store.clone();
    let shared = app.shared.clone();
    let mut worker = Worker::new(store, shared);
    let before = pg::stats::stats();
    let timed = super::timed_on_quiet_cpu("bench-drain", move || worker.drain_inbox())?;
    let trips = pg::stats::stats().since(&before);
    let processed = app.store.counter(counter::PROCESSED);
    let outputs = app.outputs_tracked();
    let backlog = app.store.backlog();
    let last_error = app.shared.last_error();
    tokio::task::spawn_blocking(move || app.shutdown()).await?;
    anyhow::ensure!(
        processed == n as u64 && backlog == 0,
        "processed {processed} of {n} (last error: {last_error:?})"
    );
    Ok(Drain {
        wall: timed.wall,
        cpu: timed.cpu,
        on: timed.on,
        outputs,
        trips,
    })
}

/// A worker's drain of a fresh store's inbox filled with `items`.
async fn timed_drain(items: &[InboxItem], now: DateTime<Utc>, n: usize) -> anyhow::Result<Drain> {
    let dir = crate::app::temp::TempFolder::new("safe-outcomes-bench-")?;
    let app = fill(dir.path(), items, Clock::manual(now)).await?;
    drain(app, n).await
}

/// The store ceiling's drain of a fresh store's inbox filled with `items`.
struct Ceiling {
    wall: Duration,
    /// Its thread's CPU seconds.
    cpu: f64,
    drained: usize,
}

async fn timed_ceiling(items: &[InboxItem], now: DateTime<Utc>) -> anyhow::Result<Ceiling> {
    let dir = crate::app::temp::TempFolder::new("safe-outcomes-bench-")?;
    let app = fill(dir.path(), items, Clock::manual(now)).await?;
    let store = app.store.clone();
    // Pinned like the drain's thread.
    let timed = super::timed_on_quiet_cpu("bench-ceiling", move || store_ceiling(&store))?;
    tokio::task::spawn_blocking(move || app.shutdown()).await?;
    Ok(Ceiling {
        wall: timed.wall,
        cpu: timed.cpu,
        drained: timed.value?,
    })
}

/// The median of `f` over the rounds (the upper one of an even count).
fn median_of<T, V: PartialOrd + Copy>(rounds: &[T], f: impl Fn(&T) -> V) -> V {
    let mut all: Vec<V> = rounds.iter().map(f).collect();
    all.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    all[all.len() / 2]
}

/// Two replicas on one database (two Apps, two pools, two workers on
/// threads of their own) drain one inbox together: the wall time until
/// both are done, and their drain threads' CPU seconds.
async fn two_replicas(items: &[InboxItem], now: DateTime<Utc>, n: usize) -> anyhow::Result<Drain> {
    let admin = pg::test_pg_from_env().context("two replicas need --database-url")?;
    let mut nonce = [0u8; 6];
    let _ = getrandom::getrandom(&mut nonce);
    let name = format!("so_bench_{}", hex::encode(nonce));
    pg::create_database(&admin, &name)?;
    let options = || crate::app::AppOptions {
        database_url: Some(pg::database_url(&admin, &name).into()),
        ..Default::default()
    };
    let (dir_a, dir_b) = (tempfile::tempdir()?, tempfile::tempdir()?);
    let a = App::start_without_worker_with(dir_a.path(), Clock::manual(now), options())?;
    fill_app(&a, items).await?;
    let b = App::start_without_worker_with(dir_b.path(), Clock::manual(now), options())?;
    let started = Instant::now();
    let drains: Vec<_> = [&a, &b]
        .iter()
        .map(|app| {
            let (store, shared) = (app.store.clone(), app.shared.clone());
            std::thread::Builder::new()
                .name("bench-drain".into())
                .spawn(move || {
                    let cpu = super::thread_cpu_seconds();
                    Worker::new(store, shared).drain_inbox();
                    super::thread_cpu_seconds() - cpu
                })
        })
        .collect::<std::io::Result<_>>()?;
    let mut cpu = 0.0;
    for drain in drains {
        cpu += drain
            .join()
            .map_err(|_| anyhow::anyhow!("a drain panicked"))?;
    }
    let wall = started.elapsed();
    let processed = a.store.counter(counter::PROCESSED);
    let outputs = a.store.output_count();
    let last_errors = (a.shared.last_error(), b.shared.last_error());
    tokio::task::spawn_blocking(move || {
        a.shutdown();
        b.shutdown();
    })
    .await?;
    anyhow::ensure!(
        processed == n as u64,
        "two replicas processed {processed} of {n} (last errors: {last_errors:?})"
    );
    // Not pinned: the two replicas' threads run side by side.
    Ok(Drain {
        wall,
        cpu,
        on: None,
        outputs,
        trips: Stats::default(),
    })
}

pub async fn run(args: ReplayArgs) -> anyhow::Result<Table> {
    let n = args.events.max(EVENTS_PER_OUTPUT);
    let start: DateTime<Utc> = "2026-09-01T09:00:00Z".parse()?;
    let raw = deliveries(n, start);
    let raw_bytes: usize = raw.iter().map(|(_, b)| b.len()).sum();

    // Parse: raw body → normalized delivery (the webhook handler's work).
    let t = Instant::now();
    let mut items = Vec::with_capacity(n);
    for (i, (event, body)) in raw.iter().enumerate() {
        let delivery = super::payloads::delivery_id("replay", i);
        if let Normalized::Relevant(d) = normalize(event, &delivery, body)? {
            items.push(InboxItem::Delivery {
                delivery_id: delivery,
                event: d.event,
                action: d.action,
                received_at: start,
                observations: d.observations,
                discoveries: d.discoveries,
                installation_change: d.installation_change,
            });
        }
    }
    let parse = t.elapsed();
    let split = parse_split(&raw);
    drop(raw);
    anyhow::ensure!(
        items.len() == n,
        "{} of {n} deliveries normalized",
        items.len()
    );

    // As of well after the last event, so every output is evaluated mid-life.
    let now = start + ChronoDuration::seconds(n as i64) + ChronoDuration::hours(2);

    // With --database-url, sled's drain of the same inbox first (the
    // PostgreSQL target is relative to it).
    let sled = match super::on_pg() {
        true => {
            let dir = tempfile::tempdir()?;
            let app = super::on_sled(|| App::start_without_worker(dir.path(), Clock::manual(now)))?;
            fill_app(&app, &items).await?;
            Some(drain(app, n).await?)
        }
        false => None,
    };

    // Rounds of ours (a worker drains the inbox) and the baseline (the
    // store ceiling on an identical inbox), back to back.
    let rate = |d: Duration, count: usize| count as f64 / d.as_secs_f64();
    let mut rounds = Vec::new();
    for _ in 0..args.rounds.max(1) {
        let ours = timed_drain(&items, now, n).await?;
        let base = timed_ceiling(&items, now).await?;
        rounds.push((ours, base));
    }
    let outputs = rounds[0].0.outputs;
    let (drain, drain_cpu) = (
        median_of(&rounds, |r| r.0.wall),
        median_of(&rounds, |r| r.0.cpu),
    );
    let (ceiling, drained) = (median_of(&rounds, |r| r.1.wall), rounds[0].1.drained);
    let ceiling_cpu = median_of(&rounds, |r| r.1.cpu);
    let ours = rate(drain, n);
    let base = rate(ceiling, drained);
    let rate_ratio = median_of(&rounds, |r| {
        rate(r.0.wall, n) / rate(r.1.wall, r.1.drained.max(1))
    });
    let cpu_ratio = median_of(&rounds, |r| {
        (r.0.cpu / n as f64) / (r.1.cpu / r.1.drained.max(1) as f64).max(1e-12)
    });
    let per_round = rounds
        .iter()
        .map(|(o, b)| {
            format!(
                "{:.1} / {:.1}",
                o.cpu * 1e6 / n as f64,
                b.cpu * 1e6 / b.drained.max(1) as f64
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    let engine = if super::on_pg() { "PostgreSQL" } else { "sled" };
    let pair = match super::on_pg() {
        true => Some(two_replicas(&items, now, n).await?),
        false => None,
    };
    let mut t = Table::new(format!(
        "bench replay — {n} events ({} gh-aw outputs, {} events each; half PRs with {:.1} KB bodies)",
        outputs,
        EVENTS_PER_OUTPUT,
        raw_bytes as f64 / n as f64 / 1024.0
    ));
    t.push(
        Row::new(
            format!("inbox → stored outcomes ({engine}), events/s"),
            per_sec(ours),
        )
        .baseline(
            format!("{} (store ceiling)", per_sec(base)),
            Some(rate_ratio),
        )
        .target("≥ 50,000/s", ours >= 50_000.0),
    );
    if let Some(sled) = &sled {
        let on_sled = rate(sled.wall, n);
        t.push(
            Row::new(
                "PostgreSQL beside sled (same inbox, same run), events/s",
                per_sec(ours),
            )
            .baseline(format!("{} (sled)", per_sec(on_sled)), Some(ours / on_sled))
            .target("within 2× of sled (≥ 0.5×)", ours >= on_sled / 2.0),
        );
        if let Some(pair) = &pair {
            let both = rate(pair.wall, n);
            t.push(
                Row::new(
                    "two replicas on one database (2 workers, 2 pools), events/s",
                    per_sec(both),
                )
                .baseline(
                    format!("{} (one replica)", per_sec(ours)),
                    Some(both / ours),
                ),
            );
            t.push(Row::new(
                "two replicas: drain CPU per event (both threads), outputs",
                format!("{:.1} µs, {}", pair.cpu * 1e6 / n as f64, pair.outputs),
            ));
        }
        push_trips(&mut t, &rounds[0].0, n);
        t.push(Row::new(
            "drain thread CPU per event: PostgreSQL / sled",
            format!(
                "{:.1} µs / {:.1} µs",
                drain_cpu * 1e6 / n as f64,
                sled.cpu * 1e6 / n as f64
            ),
        ));
    }
    let end_to_end = n as f64 / (parse + drain).as_secs_f64();
    t.push(Row::new(
        "raw body → normalized (parse), events/s",
        per_sec(rate(parse, n)),
    ));
    t.push(Row::new(
        "raw body → stored outcomes (parse + drain), events/s",
        per_sec(end_to_end),
    ));
    t.push(Row::new(
        "per event: parse / drain",
        format!(
            "{:.1} µs / {:.1} µs",
            parse.as_secs_f64() * 1e6 / n as f64,
            drain.as_secs_f64() * 1e6 / n as f64
        ),
    ));
    let drained_n = drained.max(1) as f64;
    t.push(
        Row::new(
            "drain thread CPU per event (not wall time)",
            format!("{:.1} µs", drain_cpu * 1e6 / n as f64),
        )
        .baseline(
            format!("{:.1} µs (store ceiling)", ceiling_cpu * 1e6 / drained_n),
            Some(cpu_ratio),
        ),
    );
    let pinned = match rounds[0].0.on {
        Some(cpu) => format!("both on CPU {cpu}, the one with the fewest device interrupts"),
        None => "not pinned".to_string(),
    };
    t.push(Row::new(
        format!(
            "each round's drain / ceiling CPU per event, µs (figures above: medians of {} rounds; {pinned})",
            rounds.len()
        ),
        per_round,
    ));
    t.push(Row::new(
        "inbox item decode per event: the JSON form (LZ4 + dictionary v1; items stored before v3) / v3 (`store::codec`, as the writer stores it), and bytes",
        item_forms(&items),
    ));
    t.push(Row::new(
        "28 KB PR body: normalize / JSON → Value / JSON scan only",
        format!(
            "{:.1} µs / {:.1} µs / {:.1} µs",
            split.normalize_us, split.value_us, split.scan_us
        ),
    ));
    Ok(t)
}

/// Where a PostgreSQL drain's time went (the first round): round trips
/// per unit and per event, by kind, and the time the worker waited on each.
fn push_trips(t: &mut Table, drain: &Drain, n: usize) {
    let s = &drain.trips;
    let units = s.trips_of(Trip::Commit).max(1) as f64;
    let n = n as f64;
    t.push(Row::new(
        "PostgreSQL drain: units, round trips per unit / per event",
        format!(
            "{units}, {:.1} / {:.2}",
            s.total_trips() as f64 / units,
            s.total_trips() as f64 / n
        ),
    ));
    let kinds = Trip::ALL
        .iter()
        .filter(|k| s.trips_of(**k) > 0)
        .map(|k| {
            format!(
                "{} {:.2} ({:.1} µs)",
                k.name(),
                s.trips_of(*k) as f64 / units,
                s.seconds_of(*k) * 1e6 / n
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    t.push(Row::new(
        "PostgreSQL drain: round trips per unit by kind (waited per event)",
        kinds,
    ));
    t.push(Row::new(
        "PostgreSQL drain per event: wall / waiting on the database / commit's params built",
        format!(
            "{:.1} µs / {:.1} µs / {:.1} µs",
            drain.wall.as_secs_f64() * 1e6 / n,
            s.total_seconds() * 1e6 / n,
            s.prep_nanos as f64 / 1e3 / n
        ),
    ));
    t.push(Row::new(
        "PostgreSQL commit: statements per unit, rows written per event",
        format!(
            "{:.1}, {:.2}",
            s.commit_statements as f64 / units,
            s.commit_rows as f64 / n
        ),
    ));
}

/// Decoding the inbox items in the JSON form the worker still reads (items
/// stored before v3) and in the v3 form the writer stores: µs per item and
/// bytes per item.
fn item_forms(items: &[InboxItem]) -> String {
    let v2: Vec<Vec<u8>> = items.iter().map(crate::store::encode).collect();
    let v3: Vec<Vec<u8>> = items.iter().map(codec::encode_item).collect();
    let time = |all: &[Vec<u8>]| {
        let t = Instant::now();
        for bytes in all {
            std::hint::black_box(codec::decode_item(b"bench", bytes).ok());
        }
        t.elapsed().as_secs_f64() * 1e6 / all.len().max(1) as f64
    };
    let size = |all: &[Vec<u8>]| all.iter().map(Vec::len).sum::<usize>() / all.len().max(1);
    format!(
        "{:.1} µs / {:.1} µs; {} B / {} B",
        time(&v2),
        time(&v3),
        size(&v2),
        size(&v3)
    )
}

/// Where normalizing a large body goes: the whole of `normalize`, building a
/// `serde_json::Value` of the body (its first step), and only scanning the
/// JSON (the floor for any parser that reads typed fields straight from bytes).
struct ParseSplit {
    normalize_us: f64,
    value_us: f64,
    scan_us: f64,
}

fn parse_split(raw: &[(&'static str, Vec<u8>)]) -> ParseSplit {
    let prs: Vec<&Vec<u8>> = raw
        .iter()
        .filter(|(e, _)| *e == "pull_request")
        .map(|(_, b)| b)
        .take(2000)
        .collect();
    let n = prs.len().max(1) as f64;
    let time = |f: &dyn Fn(&[u8])| {
        let t = Instant::now();
        for b in &prs {
            f(b);
        }
        t.elapsed().as_secs_f64() * 1e6 / n
    };
    ParseSplit {
        normalize_us: time(&|b| {
            std::hint::black_box(normalize("pull_request", "split", b).ok());
        }),
        value_us: time(&|b| {
            std::hint::black_box(serde_json::from_slice::<serde_json::Value>(b).ok());
        }),
        scan_us: time(&|b| {
            std::hint::black_box(serde_json::from_slice::<serde::de::IgnoredAny>(b).ok());
        }),
    }
}
