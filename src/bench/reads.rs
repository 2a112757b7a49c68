//! `bench reads`: what a read costs, and what reads cost ingest.
//!
//! 1. **Pages at N outputs** (default 1M, `bench::synthetic`'s large org
//!    over a year, written straight into the store through units of work,
//!    rollups and all): every dashboard page and API read through the real
//!    router, the first request (cold) then `--requests` more (warm), p50
//!    and p99, and the process's RSS peak above what it was before each
//!    read. Beside them, in the same run: the report read the old way (a
//!    scan of every output), and whether its numbers equal the rollups'.
//! 2. **Acks beside readers** over `--ack-outputs` (default 100k): webhook
//!    deliveries at `--rate`/s for `--seconds` through the real server with
//!    its worker, first alone, then with `--readers` concurrent readers
//!    looping over the dashboard's pages; ack p99, the server's RSS peak
//!    of each run, and how many reads were answered or refused (503). Three
//!    processes, so that each figure is the server's own: the server (this
//!    binary, `--serve-dir`), the load (this process), and the readers
//!    (`--read-from`, at `--reader-nice`: they stand for browsers on other
//!    machines, whose own CPU is not the server's).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use clap::Args;

use super::ingest::{bodies, closed_loop, fixed_rate, serve, HOOK};
use super::synthetic::{output, Shape};
use super::{mib, ms, quantile, rss_bytes, rss_of, Row, Table};
use crate::app::App;
use crate::model::clock::Clock;
use crate::read::query::{ReadFilter, RepoScope};
use crate::read::report::Report;
use crate::store::Store;

#[derive(Args, Debug)]
pub struct ReadsArgs {
    /// Outputs in the store the pages are read from.
    #[arg(long, default_value_t = 1_000_000)]
    pub outputs: u64,
    /// Warm requests per page (after the cold one).
    #[arg(long, default_value_t = 20)]
    pub requests: usize,
    /// Outputs in the store of the acks-beside-readers runs (0: skip them).
    #[arg(long, default_value_t = 100_000)]
    pub ack_outputs: u64,
    /// Concurrent dashboard readers in the second run.
    #[arg(long, default_value_t = 16)]
    pub readers: usize,
    /// Webhook deliveries per second.
    #[arg(long, default_value_t = 1_000)]
    pub rate: u64,
    /// Seconds of each fixed-rate run.
    #[arg(long, default_value_t = 10)]
    pub seconds: u64,
    /// Skip the pages part (only the acks beside readers).
    #[arg(long)]
    pub skip_pages: bool,
    /// Nice value of the readers' process in the acks runs: the readers
    /// stand for browsers on other machines, so their own CPU (parsing
    /// the pages they get) is kept from competing with the server's.
    #[arg(long, default_value_t = 19)]
    pub reader_nice: i32,
    /// Child role: serve the store at this directory until stdin closes
    /// (`idle` on stdin: answer `idle` once the worker has caught up).
    #[arg(long, hide = true)]
    pub serve_dir: Option<std::path::PathBuf>,
    /// Child role: `--readers` readers loop over the dashboard's pages at
    /// this base URL until stdin closes, then print what they got.
    #[arg(long, hide = true)]
    pub read_from: Option<String>,
}

const TOKEN: &str = "bench-token";

/// The reads measured, as a dashboard and an API client make them.
const PAGES: [&str; 10] = [
    "/",
    "/workflows",
    "/workflows/workflow-01",
    "/?since=2026-09-01&until=2026-10-15",
    "/api/v1/report",
    "/api/v1/report?window=7d&repo=acme/service-021",
    "/api/v1/series",
    "/api/v1/outputs?limit=100&status=rejected",
    "/metrics",
    "/api/v1/report?since=2026-10-03T10:30:00Z&until=2026-11-20T16:00:00Z",
];

/// Samples a process's RSS every millisecond while running.
struct RssPeak {
    peak: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl RssPeak {
    /// Sample this process.
    fn start() -> RssPeak {
        RssPeak::of("self".into())
    }

    /// Sample process `pid` ("self": this one).
    fn of(pid: String) -> RssPeak {
        let peak = Arc::new(AtomicU64::new(rss_of(&pid)));
        let stop = Arc::new(AtomicBool::new(false));
        let (p, s) = (peak.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                p.fetch_max(rss_of(&pid), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        RssPeak {
            peak,
            stop,
            thread: Some(thread),
        }
    }

    /// The highest RSS seen, and stop sampling.
    fn finish(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.peak.load(Ordering::Relaxed)
    }
}

/// Write `n` synthetic outputs into the store, rollups and all.
fn fill(store: &Store, shape: &Shape, n: u64) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut i = 0;
    while i < n {
        let mut unit = store.begin();
        for j in i..(i + 2_000).min(n) {
            unit.put_output(&output(shape, j, 1))?;
        }
        unit.commit()?;
        i = (i + 2_000).min(n);
        if i % 100_000 == 0 {
            eprintln!("fill: {i} outputs in {:.0?}", started.elapsed());
        }
    }
    store.flush()?;
    Ok(())
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .pool_max_idle_per_host(64)
        .build()
        .expect("http client")
}

/// One read; its status and time.
async fn read(http: &reqwest::Client, base: &str, path: &str) -> (u16, Duration) {
    let started = Instant::now();
    let status = match http
        .get(format!("{base}{path}"))
        .bearer_auth(TOKEN)
        .send()
        .await
    {
        Ok(resp) => {
            let status = resp.status().as_u16();
            let _ = resp.bytes().await;
            status
        }
        Err(_) => 0,
    };
    (status, started.elapsed())
}

/// Part 1: each page, cold then warm, with its RSS above the baseline.
async fn pages(args: &ReadsArgs, t: &mut Table) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let now = Utc::now();
    let shape = Shape::large_org(now);
    {
        let app = App::start_without_worker(dir.path(), Clock::System)?;
        let store = app.store.clone();
        let n = args.outputs;
        tokio::task::spawn_blocking(move || fill(&store, &shape, n)).await??;
        tokio::task::spawn_blocking(move || app.shutdown()).await?;
    }
    let app = App::start(dir.path(), Clock::System)?;
    let server = serve(&app).await?;
    let base = server.url();
    let http = client();
    let mut worst_p99 = Duration::ZERO;
    let mut worst_rss = 0u64;
    for path in PAGES {
        let before = rss_bytes();
        let sampler = RssPeak::start();
        let (status, cold) = read(&http, &base, path).await;
        let mut warm = Vec::new();
        for _ in 0..args.requests {
            warm.push(read(&http, &base, path).await.1);
        }
        let extra = sampler.finish().saturating_sub(before);
        warm.sort();
        let p99 = quantile(&warm, 0.99);
        worst_p99 = worst_p99.max(p99).max(cold);
        worst_rss = worst_rss.max(extra);
        t.push(
            Row::new(
                format!("GET {path} ({status})"),
                format!(
                    "cold {}, warm p50 {} p99 {}, +{}",
                    ms(cold),
                    ms(quantile(&warm, 0.5)),
                    ms(p99),
                    mib(extra)
                ),
            )
            .target(
                "p99 ≤ 100 ms, ≤ 64 MiB",
                status == 200 && p99.max(cold) <= Duration::from_millis(100) && extra <= 64 << 20,
            ),
        );
    }
    // The old way, in the same run: the report from a scan of every output.
    let store = app.store.clone();
    let (scan, identical) = tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let filter = ReadFilter::default();
        let records: Vec<_> = filter
            .scan(&store, &RepoScope::All, "", None)
            .filter_map(|s| s.ok()?.outcome)
            .collect();
        let from_scan = Report::build(&records, None, None, now);
        let scan = started.elapsed();
        let from_rollups = crate::read::rollup::report(&store, &filter, &RepoScope::All, None, now);
        (scan, from_rollups.ok() == Some(from_scan))
    })
    .await?;
    t.push(
        Row::new(
            format!("the report at {} outputs, every page's worst", args.outputs),
            format!("p99 {}, +{}", ms(worst_p99), mib(worst_rss)),
        )
        .baseline(
            format!("a scan of every output: {}", ms(scan)),
            Some(worst_p99.as_secs_f64() / scan.as_secs_f64()),
        ),
    );
    t.push(
        Row::new(
            "rollups' report = the scan's report",
            if identical { "identical" } else { "DIFFERENT" },
        )
        .target("identical", identical),
    );
    server.stop().await;
    tokio::task::spawn_blocking(move || app.shutdown()).await?;
    Ok(())
}

/// What one fixed-rate run beside readers saw.
struct AckRun {
    p99: Duration,
    p50: Duration,
    failed: usize,
    /// The server process's RSS peak during the fixed-rate run.
    rss_peak: u64,
    reads: usize,
    refused: usize,
}

/// The pages the readers loop over, as a dashboard user clicks through.
const READER_PAGES: [&str; 4] = [
    "/",
    "/workflows",
    "/workflows/workflow-03",
    "/api/v1/report",
];

/// A child process of this bench (`bench reads --serve-dir` or
/// `--read-from`): its stdin is its stop signal, its stdout its answers.
struct Child {
    process: tokio::process::Child,
    stdin: Option<tokio::process::ChildStdin>,
    stdout: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
}

impl Child {
    fn spawn(args: &[String], nice: i32) -> anyhow::Result<Child> {
        use tokio::io::AsyncBufReadExt;
        let mut command = tokio::process::Command::new(std::env::current_exe()?);
        command
            .args(["bench", "reads"])
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .kill_on_drop(true);
        if nice != 0 {
            // SAFETY: setpriority is async-signal-safe; it sets the nice
            // value the child and every thread it starts inherit.
            unsafe {
                command.pre_exec(move || {
                    libc::setpriority(libc::PRIO_PROCESS, 0, nice);
                    Ok(())
                });
            }
        }
        let mut process = command.spawn()?;
        let stdin = process.stdin.take();
        let stdout = process.stdout.take().expect("piped stdout");
        Ok(Child {
            process,
            stdin,
            stdout: tokio::io::BufReader::new(stdout).lines(),
        })
    }

    fn pid(&self) -> String {
        self.process.id().map_or("0".into(), |p| p.to_string())
    }

    async fn say(&mut self, line: &str) -> anyhow::Result<()> {
        use tokio::io::AsyncWriteExt;
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(format!("{line}\n").as_bytes()).await?;
        Ok(stdin.flush().await?)
    }

    async fn hear(&mut self) -> anyhow::Result<String> {
        self.stdout
            .next_line()
            .await?
            .ok_or_else(|| anyhow::anyhow!("the child process ended early"))
    }

    /// Close its stdin (stop), and read its last line.
    async fn finish(mut self) -> anyhow::Result<String> {
        self.stdin = None;
        let mut last = String::new();
        while let Some(line) = self.stdout.next_line().await? {
            last = line;
        }
        let status = self.process.wait().await?;
        anyhow::ensure!(status.success(), "a bench reads child failed: {status}");
        Ok(last)
    }
}

/// Child role: serve the store at `dir` with its worker until stdin
/// closes; `idle` on stdin is answered `idle` once the worker is idle.
async fn serve_child(dir: &std::path::Path) -> anyhow::Result<()> {
    use tokio::io::AsyncBufReadExt;
    let app = App::start(dir, Clock::System)?;
    let server = serve(&app).await?;
    println!("{}", server.url());
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    while let Some(line) = lines.next_line().await? {
        if line == "idle" {
            app.wait_idle().await;
            println!("idle");
        }
    }
    server.stop().await;
    tokio::task::spawn_blocking(move || app.shutdown()).await?;
    Ok(())
}

/// Child role: `readers` readers loop over `READER_PAGES` at `base` until
/// stdin closes, then print `<answered> <refused>`.
async fn readers_child(base: &str, readers: usize) -> anyhow::Result<()> {
    use tokio::io::AsyncBufReadExt;
    let stop = Arc::new(AtomicBool::new(false));
    let (reads, refused) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut tasks = tokio::task::JoinSet::new();
    for r in 0..readers {
        let (stop, reads, refused) = (stop.clone(), reads.clone(), refused.clone());
        let base = base.to_string();
        tasks.spawn(async move {
            let http = client();
            let mut k = r;
            while !stop.load(Ordering::Relaxed) {
                let path = READER_PAGES[k % READER_PAGES.len()];
                k += 1;
                match read(&http, &base, path).await.0 {
                    200 => reads.fetch_add(1, Ordering::Relaxed),
                    _ => refused.fetch_add(1, Ordering::Relaxed),
                };
            }
        });
    }
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    while lines.next_line().await?.is_some() {}
    stop.store(true, Ordering::Relaxed);
    while tasks.join_next().await.is_some() {}
    println!(
        "{} {}",
        reads.load(Ordering::Relaxed),
        refused.load(Ordering::Relaxed)
    );
    Ok(())
}

/// One fixed-rate run over a store of `--ack-outputs`: the server (with
/// its worker) in a child process of its own, so its RSS is its own; the
/// load from this process; `readers` readers in a third process.
async fn ack_run(args: &ReadsArgs, readers: usize) -> anyhow::Result<AckRun> {
    let dir = tempfile::tempdir()?;
    {
        let app = App::start_without_worker(dir.path(), Clock::System)?;
        let store = app.store.clone();
        let shape = Shape::large_org(Utc::now());
        let n = args.ack_outputs;
        tokio::task::spawn_blocking(move || fill(&store, &shape, n)).await??;
        tokio::task::spawn_blocking(move || app.shutdown()).await?;
    }
    let mut server = Child::spawn(&["--serve-dir".into(), dir.path().display().to_string()], 0)?;
    let base = server.hear().await?;
    let url = format!("{base}{HOOK}");
    let signed = Arc::new(bodies(2_000));
    closed_loop(&url, signed.clone(), 500, 16, &format!("warm-{readers}")).await;
    server.say("idle").await?;
    server.hear().await?;
    let reader = match readers {
        0 => None,
        n => Some(Child::spawn(
            &[
                "--read-from".into(),
                base.clone(),
                "--readers".into(),
                n.to_string(),
            ],
            args.reader_nice,
        )?),
    };
    let sampler = RssPeak::of(server.pid());
    let load = fixed_rate(
        &url,
        signed,
        args.rate,
        args.seconds,
        &format!("rate-{readers}"),
    )
    .await;
    let rss_peak = sampler.finish();
    let (reads, refused) = match reader {
        None => (0, 0),
        Some(r) => {
            let last = r.finish().await?;
            let mut counts = last.split(' ').map(|n| n.parse::<usize>().unwrap_or(0));
            (counts.next().unwrap_or(0), counts.next().unwrap_or(0))
        }
    };
    server.finish().await?;
    Ok(AckRun {
        p99: quantile(&load.latencies, 0.99),
        p50: quantile(&load.latencies, 0.5),
        failed: load.failed,
        rss_peak,
        reads,
        refused,
    })
}

/// Part 2: acks at the fixed rate alone, then beside the readers.
async fn acks(args: &ReadsArgs, t: &mut Table) -> anyhow::Result<()> {
    let alone = ack_run(args, 0).await?;
    let beside = ack_run(args, args.readers).await?;
    let ratio = beside.p99.as_secs_f64() / alone.p99.as_secs_f64().max(1e-9);
    t.push(
        Row::new(
            format!(
                "ack p99 at {}/s, {} readers, {} outputs",
                args.rate, args.readers, args.ack_outputs
            ),
            format!(
                "{} (p50 {}, {} failed; {} reads answered, {} refused)",
                ms(beside.p99),
                ms(beside.p50),
                beside.failed,
                beside.reads,
                beside.refused
            ),
        )
        .baseline(
            format!("no readers: {} (p50 {})", ms(alone.p99), ms(alone.p50)),
            Some(ratio),
        )
        .target("≤ 2×", ratio <= 2.0),
    );
    t.push(
        Row::new(
            format!("server RSS peak, {} readers", args.readers),
            mib(beside.rss_peak),
        )
        .baseline(format!("no readers: {}", mib(alone.rss_peak)), None)
        .target("≤ 300 MiB", beside.rss_peak <= 300 << 20),
    );
    Ok(())
}

pub async fn run(args: ReadsArgs) -> anyhow::Result<Option<Table>> {
    if let Some(dir) = &args.serve_dir {
        serve_child(dir).await?;
        return Ok(None);
    }
    if let Some(base) = &args.read_from {
        readers_child(base, args.readers).await?;
        return Ok(None);
    }
    let mut t = Table::new(format!(
        "reads: pages at {} outputs; acks beside {} readers at {} outputs",
        args.outputs, args.readers, args.ack_outputs
    ));
    if !args.skip_pages {
        pages(&args, &mut t).await?;
    }
    if args.ack_outputs > 0 {
        acks(&args, &mut t).await?;
    }
    t.notes.push(format!(
        "read budget: READ_CONCURRENCY={} (default {}), wait {:?} then 503 + Retry-After",
        crate::settings::read(&crate::settings::READ_CONCURRENCY).unwrap_or_default(),
        crate::http::budget::default_concurrency(),
        crate::http::budget::DEFAULT_WAIT
    ));
    t.notes.push(format!(
        "acks runs: the server in a child process (its RSS is the figure), the load from this \
         process, the readers in a third at nice {} (browsers stand elsewhere)",
        args.reader_nice
    ));
    Ok(Some(t))
}
