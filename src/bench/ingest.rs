//! `bench ingest`: signed, real-sized `pull_request` deliveries through the real
//! router and sled store (durable before the 2xx), against a bare axum handler
//! in the same process that only checks the HMAC and answers 200. Load comes
//! from this process over loopback: closed-loop at a fixed concurrency for
//! throughput, then open-loop at a fixed rate for latency.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::Router;
use bytes::Bytes;
use chrono::{DateTime, Duration as ChronoDuration, Utc};
use clap::Args;

use super::payloads::{pull_request, PrEvent};
use super::probe::{Probe, ProbeFigures};
use super::{cpu_seconds, ms, per_sec, quantile, Row, Table};
use crate::app::App;
use crate::http::{router, RouterOptions, RunningServer, MAX_BODY};
use crate::ingest::signature;
use crate::model::clock::Clock;

#[derive(Args, Debug)]
pub struct IngestArgs {
    /// Deliveries per measured round and server.
    #[arg(long, default_value_t = 20_000)]
    pub deliveries: usize,
    /// Requests in flight.
    #[arg(long, default_value_t = 64)]
    pub concurrency: usize,
    /// Alternating rounds (bare, ours, bare, ours...); the best of each counts.
    #[arg(long, default_value_t = 2)]
    pub rounds: usize,
    /// Rate of the fixed-rate run, deliveries/s.
    #[arg(long, default_value_t = 1000)]
    pub rate: u64,
    /// Length of the fixed-rate run, seconds.
    #[arg(long, default_value_t = 10)]
    pub rate_seconds: u64,
    /// Distinct pre-signed bodies cycled through.
    #[arg(long, default_value_t = 2048)]
    pub bodies: usize,
    /// Let the worker run flat out while ingest is saturated, instead of
    /// giving way (to measure what giving way is worth).
    #[arg(long)]
    pub worker_flat_out: bool,
    /// Deliveries stored (worker stopped) before the second fixed-rate run,
    /// which starts with the worker draining them; 0 skips that run.
    #[arg(long, default_value_t = 100_000)]
    pub backlog: usize,
    /// Delivery ids already remembered before the rounds (a busy App's
    /// dedupe window: GitHub-shaped ids of the 8 days before the rounds',
    /// received over the last 7), so each round's deliveries are looked up
    /// and filed among them.
    #[arg(long, default_value_t = 0)]
    pub remembered: usize,
}

const SECRET: &str = "bench-webhook-secret";
pub(super) const HOOK: &str = "/api/github/webhooks";

/// A pre-signed delivery body.
pub(super) struct Signed {
    body: Bytes,
    signature: String,
}

/// Real-shaped `pull_request` deliveries: opened (a quarter by gh-aw), labeled,
/// ready_for_review and closed, on distinct PRs.
pub(super) fn bodies(count: usize) -> Vec<Signed> {
    let start: DateTime<Utc> = "2026-10-01T09:00:00Z".parse().expect("time");
    let actions = ["opened", "labeled", "ready_for_review", "closed"];
    (0..count)
        .map(|i| {
            let number = 1000 + (i / actions.len()) as u64;
            let action = actions[i % actions.len()];
            let payload = pull_request(&PrEvent {
                repo: "acme/widgets",
                number,
                action,
                at: start + ChronoDuration::seconds(i as i64),
                author: "github-actions[bot]",
                sender: if action == "opened" {
                    "github-actions[bot]"
                } else {
                    "maria-lopez"
                },
                gh_aw_run: number.is_multiple_of(4).then_some(5000 + number),
                label: (action == "labeled").then_some("ci"),
                merged: number.is_multiple_of(2),
            });
            let body = Bytes::from(payload.to_string());
            Signed {
                signature: signature::sign(SECRET, &body),
                body,
            }
        })
        .collect()
}

/// What one load run saw.
pub(super) struct LoadResult {
    /// Process CPU seconds (servers, worker and load generator) during the run.
    pub cpu: f64,
    pub ok: usize,
    pub failed: usize,
    pub elapsed: Duration,
    /// Sorted ack latencies of the successful requests.
    pub latencies: Vec<Duration>,
}

impl LoadResult {
    fn rate(&self) -> f64 {
        self.ok as f64 / self.elapsed.as_secs_f64()
    }
}

fn http_client(concurrency: usize) -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(concurrency)
        .timeout(Duration::from_secs(30))
        .build()
        .expect("http client")
}

async fn send(
    http: &reqwest::Client,
    url: &str,
    signed: &Signed,
    delivery: String,
) -> Result<(), String> {
    let resp = http
        .post(url)
        .header("content-type", "application/json")
        .header("user-agent", "GitHub-Hookshot/bench")
        .header("x-github-event", "pull_request")
        .header("x-github-delivery", delivery)
        .header("x-hub-signature-256", &signed.signature)
        .body(signed.body.clone())
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let status = resp.status();
    let _ = resp.bytes().await;
    if status.is_success() {
        Ok(())
    } else {
        Err(status.to_string())
    }
}

/// Closed loop: `concurrency` workers send `n` deliveries as fast as answered.
pub(super) async fn closed_loop(
    url: &str,
    bodies: Arc<Vec<Signed>>,
    n: usize,
    concurrency: usize,
    id_prefix: &str,
) -> LoadResult {
    let http = http_client(concurrency);
    let next = Arc::new(AtomicUsize::new(0));
    let cpu = cpu_seconds();
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..concurrency {
        let (http, next, bodies) = (http.clone(), next.clone(), bodies.clone());
        let (url, prefix) = (url.to_string(), id_prefix.to_string());
        tasks.spawn(async move {
            let mut lat = Vec::new();
            let mut failed = 0;
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let t = Instant::now();
                match send(
                    &http,
                    &url,
                    &bodies[i % bodies.len()],
                    super::payloads::delivery_id(&prefix, i),
                )
                .await
                {
                    Ok(()) => lat.push(t.elapsed()),
                    Err(_) => failed += 1,
                }
            }
            (lat, failed)
        });
    }
    let mut latencies = Vec::with_capacity(n);
    let mut failed = 0;
    while let Some(r) = tasks.join_next().await {
        let (lat, f) = r.expect("load task");
        latencies.extend(lat);
        failed += f;
    }
    let elapsed = started.elapsed();
    latencies.sort();
    LoadResult {
        cpu: cpu_seconds() - cpu,
        ok: latencies.len(),
        failed,
        elapsed,
        latencies,
    }
}

/// Open loop: one delivery every `1/rate` s for `seconds`; latency is counted
/// from the scheduled send time, so a stall is not hidden by waiting for it.
pub(super) async fn fixed_rate(
    url: &str,
    bodies: Arc<Vec<Signed>>,
    rate: u64,
    seconds: u64,
    id_prefix: &str,
) -> LoadResult {
    let http = http_client(256);
    let n = (rate * seconds) as usize;
    let cpu = cpu_seconds();
    let started = tokio::time::Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..n {
        let due = started + Duration::from_secs_f64(i as f64 / rate as f64);
        tokio::time::sleep_until(due).await;
        let (http, bodies) = (http.clone(), bodies.clone());
        let (url, delivery) = (url.to_string(), super::payloads::delivery_id(id_prefix, i));
        tasks.spawn(async move {
            send(&http, &url, &bodies[i % bodies.len()], delivery)
                .await
                .map(|_| due.elapsed())
        });
    }
    let mut latencies = Vec::with_capacity(n);
    let mut failed = 0;
    while let Some(r) = tasks.join_next().await {
        match r.expect("load task") {
            Ok(l) => latencies.push(l),
            Err(_) => failed += 1,
        }
    }
    latencies.sort();
    LoadResult {
        cpu: cpu_seconds() - cpu,
        ok: latencies.len(),
        failed,
        elapsed: started.elapsed(),
        latencies,
    }
}

/// The ceiling: read the body (same cap), check the HMAC, answer 200.
async fn bare_handler(
    State(secrets): State<Arc<Vec<crate::settings::Secret>>>,
    headers: HeaderMap,
    body: Body,
) -> StatusCode {
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY).await else {
        return StatusCode::BAD_REQUEST;
    };
    let sig = headers
        .get("x-hub-signature-256")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if signature::verify(&secrets, sig, &bytes) {
        StatusCode::OK
    } else {
        StatusCode::UNAUTHORIZED
    }
}

/// Our server (the real router) on a loopback port.
pub(super) async fn serve(app: &App) -> anyhow::Result<RunningServer> {
    Ok(RunningServer::start(
        router(
            app,
            RouterOptions {
                listen_only: true,
                ..RouterOptions::keyed(HOOK, SECRET, "bench-token")
            },
        ),
        "127.0.0.1:0".parse()?,
    )
    .await?)
}

/// What the fixed-rate run over a backlog saw.
struct BacklogRun {
    load: LoadResult,
    /// What a group commit waited on meanwhile.
    probe: ProbeFigures,
    /// Items stored before the run.
    stored: u64,
    /// Items still unprocessed when the run ended.
    left: u64,
}

/// Store `args.backlog` deliveries with no worker running, then start the
/// App again (its worker drains them from the first moment) and measure
/// acks at the fixed rate while it does.
async fn backlog_run(args: &IngestArgs, bodies: Arc<Vec<Signed>>) -> anyhow::Result<BacklogRun> {
    let dir = crate::app::temp::TempFolder::new("safe-outcomes-bench-")?;
    let filler = App::start_without_worker(dir.path(), Clock::System)?;
    let server = serve(&filler).await?;
    let url = format!("{}{HOOK}", server.url());
    let fill = closed_loop(
        &url,
        bodies.clone(),
        args.backlog,
        args.concurrency,
        "backlog",
    )
    .await;
    eprintln!(
        "backlog: {} stored at {:.0}/s ({} failed)",
        fill.ok,
        fill.rate(),
        fill.failed
    );
    server.stop().await;
    tokio::task::spawn_blocking(move || filler.shutdown()).await?;

    let app = App::start(dir.path(), Clock::System)?;
    app.shared.pressure.set_enabled(!args.worker_flat_out);
    let stored = app.store.backlog();
    let server = serve(&app).await?;
    let url = format!("{}{HOOK}", server.url());
    // Warm up as the idle run's server was (connections, sled's cache of the
    // reopened store): 500 more items on the backlog.
    closed_loop(&url, bodies.clone(), 500, args.concurrency, "warm-backlog").await;
    let probe = Probe::start(app.store.clone());
    let load = fixed_rate(&url, bodies, args.rate, args.rate_seconds, "rate-backlog").await;
    let probe = probe.stop().await;
    let left = app.store.backlog();
    eprintln!("backlog: {stored} at the start of the rate run, {left} left at its end");
    server.stop().await;
    tokio::task::spawn_blocking(move || app.shutdown()).await?;
    Ok(BacklogRun {
        load,
        probe,
        stored,
        left,
    })
}

/// Fill the dedupe window with `n` GitHub-shaped ids (`--remembered`).
fn remember(app: &App, n: usize) -> anyhow::Result<()> {
    if n == 0 {
        return Ok(());
    }
    let started = Instant::now();
    let span = 8 * 24 * 3600 * 10_000_000u64;
    let first = super::payloads::FIRST_DELIVERY_TICKS - span;
    let now = Utc::now();
    let ids = (0..n).map(|k| {
        let ticks = first + span / n as u64 * k as u64;
        let id = crate::model::ident::time_based_delivery_id(
            ticks,
            (k % 0x4000) as u16,
            super::payloads::node_of("remembered"),
        );
        let at = now - ChronoDuration::days(7)
            + ChronoDuration::milliseconds(7 * 86_400_000 * k as i64 / n as i64);
        (id, at)
    });
    crate::store::inbox::remember_deliveries(&app.store, ids)?;
    eprintln!(
        "remembered {n} delivery ids in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

pub async fn run(args: IngestArgs) -> anyhow::Result<Table> {
    let bodies = Arc::new(bodies(args.bodies.max(1)));
    let avg_kb =
        bodies.iter().map(|b| b.body.len()).sum::<usize>() as f64 / bodies.len() as f64 / 1024.0;

    let dir = crate::app::temp::TempFolder::new("safe-outcomes-bench-")?;
    let app = App::start(dir.path(), Clock::System)?;
    app.shared.pressure.set_enabled(!args.worker_flat_out);
    remember(&app, args.remembered)?;
    let ours = serve(&app).await?;
    let bare = RunningServer::start(
        Router::new()
            .route(HOOK, post(bare_handler))
            .with_state(Arc::new(vec![crate::settings::Secret::from(SECRET)])),
        "127.0.0.1:0".parse()?,
    )
    .await?;
    let ours_url = format!("{}{HOOK}", ours.url());
    let bare_url = format!("{}{HOOK}", bare.url());
    // With --database-url, a sled App beside it in the same rounds.
    let sled_dir = tempfile::tempdir()?;
    let sled = match super::on_pg() {
        true => {
            let app = super::on_sled(|| App::start(sled_dir.path(), Clock::System))?;
            app.shared.pressure.set_enabled(!args.worker_flat_out);
            let server = serve(&app).await?;
            let url = format!("{}{HOOK}", server.url());
            closed_loop(&url, bodies.clone(), 500, args.concurrency, "warm-sled").await;
            app.wait_idle().await;
            Some((app, server, url))
        }
        false => None,
    };
    let mut best_sled: Option<LoadResult> = None;

    // Warm both up (connections, allocator, sled's first segments).
    closed_loop(
        &bare_url,
        bodies.clone(),
        500,
        args.concurrency,
        "warm-bare",
    )
    .await;
    closed_loop(
        &ours_url,
        bodies.clone(),
        500,
        args.concurrency,
        "warm-ours",
    )
    .await;
    app.wait_idle().await;

    let mut best_bare: Option<LoadResult> = None;
    let mut best_ours: Option<LoadResult> = None;
    let mut worker_catch_up = Duration::ZERO;
    for round in 0..args.rounds.max(1) {
        let b = closed_loop(
            &bare_url,
            bodies.clone(),
            args.deliveries,
            args.concurrency,
            &format!("bare-{round}"),
        )
        .await;
        eprintln!(
            "round {round}: bare {:.0}/s ({} failed)",
            b.rate(),
            b.failed
        );
        if best_bare.as_ref().is_none_or(|x| b.rate() > x.rate()) {
            best_bare = Some(b);
        }
        let o = closed_loop(
            &ours_url,
            bodies.clone(),
            args.deliveries,
            args.concurrency,
            &format!("ours-{round}"),
        )
        .await;
        eprintln!(
            "round {round}: ours {:.0}/s ({} failed)",
            o.rate(),
            o.failed
        );
        // Let the worker drain before the next round, so rounds stay comparable.
        let t = Instant::now();
        let _ = tokio::time::timeout(Duration::from_secs(300), app.wait_idle()).await;
        worker_catch_up = worker_catch_up.max(t.elapsed());
        if best_ours.as_ref().is_none_or(|x| o.rate() > x.rate()) {
            best_ours = Some(o);
        }
        if let Some((app, _, url)) = &sled {
            let s = closed_loop(
                url,
                bodies.clone(),
                args.deliveries,
                args.concurrency,
                &format!("sled-{round}"),
            )
            .await;
            eprintln!(
                "round {round}: sled {:.0}/s ({} failed)",
                s.rate(),
                s.failed
            );
            let _ = tokio::time::timeout(Duration::from_secs(300), app.wait_idle()).await;
            if best_sled.as_ref().is_none_or(|x| s.rate() > x.rate()) {
                best_sled = Some(s);
            }
        }
    }
    if let Some((app, server, _)) = sled {
        server.stop().await;
        tokio::task::spawn_blocking(move || app.shutdown()).await?;
    }
    let (b, o) = (best_bare.expect("a round"), best_ours.expect("a round"));

    let fixed_bare = fixed_rate(
        &bare_url,
        bodies.clone(),
        args.rate,
        args.rate_seconds,
        "rate-bare",
    )
    .await;
    let probe = Probe::start(app.store.clone());
    let fixed_ours = fixed_rate(
        &ours_url,
        bodies.clone(),
        args.rate,
        args.rate_seconds,
        "rate-ours",
    )
    .await;
    let idle_probe = probe.stop().await;
    let _ = tokio::time::timeout(Duration::from_secs(300), app.wait_idle()).await;
    let store_bytes = app.store.size_on_disk();
    let gave_way = app.shared.pressure.gave_way();
    let received = app.store.counter(crate::store::counter::RECEIVED);
    ours.stop().await;
    bare.stop().await;
    tokio::task::spawn_blocking(move || app.shutdown()).await?;
    let backlog = match args.backlog {
        0 => None,
        _ => Some(backlog_run(&args, bodies.clone()).await?),
    };

    let mut t = Table::new(format!(
        "bench ingest — {} deliveries × {} rounds, concurrency {}, {:.1} KB pull_request bodies",
        args.deliveries, args.rounds, args.concurrency, avg_kb
    ));
    let ratio = o.rate() / b.rate();
    let (engine, goal) = if super::on_pg() {
        ("PostgreSQL", 0.25)
    } else {
        ("sled", 0.6)
    };
    t.push(
        Row::new(
            format!("sustained deliveries/s ({engine})"),
            per_sec(o.rate()),
        )
        .baseline(per_sec(b.rate()), Some(ratio))
        .target(format!("≥ {goal}× bare"), ratio >= goal),
    );
    if let Some(s) = &best_sled {
        t.push(
            Row::new(
                "sustained deliveries/s (sled, same rounds)",
                per_sec(s.rate()),
            )
            .baseline(per_sec(b.rate()), Some(s.rate() / b.rate())),
        );
    }
    for (name, q) in [("p50", 0.5), ("p99", 0.99), ("p99.9", 0.999)] {
        let (ol, bl) = (quantile(&o.latencies, q), quantile(&b.latencies, q));
        t.push(
            Row::new(format!("ack latency {name} (saturated)"), ms(ol))
                .baseline(ms(bl), Some(ol.as_secs_f64() / bl.as_secs_f64().max(1e-9))),
        );
    }
    let (ocpu, bcpu) = (
        o.cpu * 1e6 / o.ok.max(1) as f64,
        b.cpu * 1e6 / b.ok.max(1) as f64,
    );
    t.push(
        Row::new(
            "process CPU per delivery (saturated, incl. load generator)",
            format!("{ocpu:.0} µs"),
        )
        .baseline(format!("{bcpu:.0} µs"), Some(ocpu / bcpu.max(1e-9))),
    );
    t.push(
        Row::new("failed requests (saturated)", format!("{}", o.failed))
            .baseline(format!("{}", b.failed), None),
    );
    for (name, q) in [("p50", 0.5), ("p99", 0.99), ("p99.9", 0.999)] {
        let (ol, bl) = (
            quantile(&fixed_ours.latencies, q),
            quantile(&fixed_bare.latencies, q),
        );
        let mut row = Row::new(format!("ack latency {name} at {}/s", args.rate), ms(ol))
            .baseline(ms(bl), Some(ol.as_secs_f64() / bl.as_secs_f64().max(1e-9)));
        if name == "p99" {
            row = row.target("≤ 5 ms", ol <= Duration::from_millis(5));
        }
        t.push(row);
    }
    t.push(
        Row::new(
            format!("achieved rate at {}/s (failed)", args.rate),
            format!("{:.0}/s ({})", fixed_ours.rate(), fixed_ours.failed),
        )
        .baseline(
            format!("{:.0}/s ({})", fixed_bare.rate(), fixed_bare.failed),
            None,
        ),
    );
    t.push(Row::new(
        format!("what a group commit waits on at {}/s (probe)", args.rate),
        idle_probe.summary(),
    ));
    if let Some(run) = &backlog {
        push_backlog_rows(&mut t, &args, run, &fixed_bare);
    }
    t.push(Row::new(
        "worker caught up after a saturated round",
        format!("{:.1} s", worker_catch_up.as_secs_f64()),
    ));
    t.push(Row::new(
        "worker pauses to give way to saturated ingest",
        if args.worker_flat_out {
            "off (--worker-flat-out)".to_string()
        } else {
            format!("{}", gave_way)
        },
    ));
    t.push(Row::new(
        "store bytes per stored delivery",
        format!("{:.0} B", store_bytes as f64 / received.max(1) as f64),
    ));
    t.notes.push(
        "Both servers run in this process on loopback, sharing the machine's cores with the load generator; the worker processes deliveries in the background while ours is loaded, and gives way (2 ms of work, then 8 ms asleep) while ingest is saturated unless `--worker-flat-out`. Latency is measured at the client (fixed-rate: from the scheduled send time)."
            .to_string(),
    );
    Ok(t)
}

/// Ack latency at the fixed rate while the worker drains the backlog.
fn push_backlog_rows(t: &mut Table, args: &IngestArgs, run: &BacklogRun, bare: &LoadResult) {
    for (name, q) in [("p50", 0.5), ("p99", 0.99), ("p99.9", 0.999)] {
        let (ol, bl) = (
            quantile(&run.load.latencies, q),
            quantile(&bare.latencies, q),
        );
        let mut row = Row::new(
            format!(
                "ack latency {name} at {}/s, worker draining a {}k backlog",
                args.rate,
                args.backlog / 1000
            ),
            ms(ol),
        )
        .baseline(ms(bl), Some(ol.as_secs_f64() / bl.as_secs_f64().max(1e-9)));
        if name == "p99" {
            row = row.target("≤ 5 ms", ol <= Duration::from_millis(5));
        }
        t.push(row);
    }
    t.push(Row::new(
        format!("achieved rate at {}/s over the backlog (failed)", args.rate),
        format!("{:.0}/s ({})", run.load.rate(), run.load.failed),
    ));
    t.push(Row::new(
        "backlog at the start / end of that run",
        format!("{} / {}", run.stored, run.left),
    ));
    t.push(Row::new(
        format!(
            "what a group commit waits on at {}/s over the backlog (probe)",
            args.rate
        ),
        run.probe.summary(),
    ));
}
