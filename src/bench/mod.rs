//! `safe-outcomes bench`: the performance figures of docs/architecture.md ("Performance targets"), each measured
//! against a baseline in the same run (the machine is shared and noisy, so
//! ratios within one run are what count). One file per scenario.
//! Also `pipeline`: the whole pipeline on hostile input, for the fuzz target
//! and the property tests.
//!
//! May import: every room below it (`model` … `http`).

pub mod api;
pub mod backfill;
pub mod github_model;
mod ingest;
pub mod payloads;
pub mod pipeline;
mod probe;
mod reads;
mod replay;
mod scale;
pub mod synthetic;
pub(crate) mod table;

use std::time::Duration;

use clap::{Args, Subcommand};

pub(crate) use table::{Row, Table};

#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub scenario: Scenario,
    /// Run the stores on PostgreSQL: an admin URL of a cluster
    /// (postgres://…/postgres); each store the bench makes gets a fresh
    /// database of it (as under `SAFE_OUTCOMES_TEST_PG`), dropped when the
    /// run ends.
    #[arg(long, global = true)]
    pub database_url: Option<String>,
}

#[derive(Subcommand, Debug)]
pub enum Scenario {
    /// Webhook ingest through the real server and store vs a bare HMAC-checking handler.
    Ingest(ingest::IngestArgs),
    /// Inbox to stored outcomes, offline.
    Replay(replay::ReplayArgs),
    /// Per-event cost, memory and store size as tracked outputs grow.
    Scale(scale::ScaleArgs),
    /// GitHub API calls per output per window, webhook-fed vs reconciled (a built-in fake GitHub).
    Api,
    /// Every dashboard page and API read at 1M outputs (p50/p99, RSS), and
    /// ack p99 at 1,000/s beside 16 dashboard readers vs none.
    Reads(reads::ReadsArgs),
    /// GitHub API calls per output of a day-one backfill of a generated 30-day org (the model of GitHub).
    Backfill(backfill::BackfillArgs),
}

pub(crate) async fn run(args: BenchArgs) -> anyhow::Result<()> {
    if let Some(url) = &args.database_url {
        // Read by `Store::open` for every store opened by path from now on.
        std::env::set_var(crate::store::pg::TEST_PG_ENV, url);
    }
    let table = run_scenario(args.scenario).await;
    if let Some(url) = &args.database_url {
        // Every database the run made goes with it, however it ended.
        match crate::store::pg::drop_created_databases(url) {
            Ok(n) => eprintln!("bench: dropped the {n} databases this run created"),
            Err(e) => eprintln!("bench: {e}"),
        }
    }
    let Some(table) = table? else {
        return Ok(());
    };
    // An error, not a panic, when stdout's reader went away (`| head`).
    std::io::Write::write_all(&mut std::io::stdout().lock(), table.render().as_bytes())?;
    Ok(())
}

/// The scenario's table (`None`: it printed what it had to say itself).
async fn run_scenario(scenario: Scenario) -> anyhow::Result<Option<Table>> {
    Ok(match scenario {
        Scenario::Ingest(a) => Some(ingest::run(a).await?),
        Scenario::Replay(a) => Some(replay::run(a).await?),
        Scenario::Scale(a) => scale::run(a).await?,
        Scenario::Api => Some(api::run().await?),
        Scenario::Reads(a) => reads::run(a).await?,
        Scenario::Backfill(a) => Some(backfill::run(a).await?),
    })
}

/// True when `--database-url` put the bench's stores on PostgreSQL.
pub(crate) fn on_pg() -> bool {
    crate::store::pg::test_pg_from_env().is_some()
}

/// Run `open` with stores opened on sled whatever `--database-url` says
/// (the sled figures measured beside PostgreSQL's in the same run).
pub(crate) fn on_sled<T>(open: impl FnOnce() -> T) -> T {
    let pg = crate::store::pg::test_pg_from_env();
    std::env::remove_var(crate::store::pg::TEST_PG_ENV);
    let result = open();
    if let Some(url) = pg {
        std::env::set_var(crate::store::pg::TEST_PG_ENV, url);
    }
    result
}

/// The App on a sled store in `dir`, on `clock`, talking to GitHub as
/// `github` says (the benches that run the App against the model of GitHub).
pub(crate) fn launch_app(
    dir: &std::path::Path,
    clock: &crate::model::clock::Clock,
    github: crate::app::GitHubConfig,
) -> anyhow::Result<crate::app::Running> {
    crate::app::App::launch(crate::app::AppConfig::app_mode(dir, clock.clone(), github))
}

/// Resident memory of this process (`VmRSS`), in bytes; 0 where unknown.
pub fn rss_bytes() -> u64 {
    rss_of("self")
}

/// Resident memory (`VmRSS`) of process `pid` ("self": this one), in
/// bytes; 0 where unknown (or gone).
pub(crate) fn rss_of(pid: &str) -> u64 {
    proc_number(&format!("/proc/{pid}/status"), "VmRSS:").map_or(0, |kb| kb * 1024)
}

/// Bytes this process has caused to be fetched from storage (`read_bytes`
/// of `/proc/self/io`: page cache misses, readahead included); 0 where
/// unknown.
pub(crate) fn disk_read_bytes() -> u64 {
    proc_number("/proc/self/io", "read_bytes:").unwrap_or(0)
}

/// True when this process is kept out of transparent huge pages
/// (`PR_SET_THP_DISABLE`, set by the binary's `main`: `cli::allocator`); the
/// RSS figures depend on it.
pub(crate) fn huge_pages_off() -> bool {
    // SAFETY: reads one flag of this process.
    unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) == 1 }
}

/// The number after `key` (`VmRSS:`, `write_bytes:`, …) on its line of the
/// `/proc` file `path`; `None` where the file, the line or the number is
/// missing.
pub fn proc_number(path: &str, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

/// CPU time this process used so far (all threads, user + system), in seconds.
pub(crate) fn cpu_seconds() -> f64 {
    // Fields 14 and 15 of /proc/self/stat, in clock ticks (100 per second on Linux).
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            let rest = s.rsplit_once(')')?.1;
            let f: Vec<&str> = rest.split_whitespace().collect();
            let ticks = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
            Some(ticks as f64 / 100.0)
        })
        .unwrap_or(0.0)
}

/// Pin the calling thread to the CPU, of those the process may run on,
/// that had taken the fewest device interrupts (`/proc/interrupts`' rows
/// numbered by IRQ) when a thread of the process first asked, and return
/// it; `None` when either cannot be read. The CPU is chosen once, so the
/// threads whose CPU per event a bench compares all run on the same one:
/// on this VM every interrupt of the disk lands on one CPU (virtio's
/// `req.0` queue), and a thread running there spent 5.1 µs of an event's
/// 21.1 µs in them against 0.5 µs of 15.3 µs on the other (`perf` of the
/// store ceiling, BENCHMARKS.md 2026-11-27 day): which CPU the scheduler
/// chose moved a figure by 1.4× from run to run.
pub(crate) fn pin_to_quiet_cpu() -> Option<usize> {
    static QUIET: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    let quiet = (*QUIET.get_or_init(quiet_cpu))?;
    let size = std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET writes
    // within it (`quiet_cpu` returns a CPU below CPU_SETSIZE), and
    // sched_setaffinity reads at most its size.
    let mut one: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    unsafe { libc::CPU_SET(quiet, &mut one) };
    (unsafe { libc::sched_setaffinity(0, size, &one) } == 0).then_some(quiet)
}

/// What `timed_on_quiet_cpu` measured of its work.
pub(crate) struct Timed<R> {
    pub value: R,
    pub wall: std::time::Duration,
    /// The thread's CPU seconds.
    pub cpu: f64,
    /// The CPU it was pinned to (`None`: not pinned).
    pub on: Option<usize>,
}

/// Run `work` on a thread of its own named `name` (so a profiler can tell
/// it apart), pinned to the quiet CPU (`pin_to_quiet_cpu`), and time it by
/// wall clock and by the thread's CPU seconds.
pub(crate) fn timed_on_quiet_cpu<R: Send + 'static>(
    name: &str,
    work: impl FnOnce() -> R + Send + 'static,
) -> anyhow::Result<Timed<R>> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let on = pin_to_quiet_cpu();
            let (t, cpu) = (std::time::Instant::now(), thread_cpu_seconds());
            let value = work();
            Timed {
                wall: t.elapsed(),
                cpu: thread_cpu_seconds() - cpu,
                value,
                on,
            }
        })?
        .join()
        .map_err(|_| anyhow::anyhow!("the bench's thread `{name}` panicked"))
}

/// The CPU of those the process may run on that took the fewest device
/// interrupts so far (`pin_to_quiet_cpu`).
fn quiet_cpu() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/interrupts").ok()?;
    // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity
    // writes at most its size.
    let mut allowed: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::cpu_set_t>();
    if unsafe { libc::sched_getaffinity(0, size, &mut allowed) } != 0 {
        return None;
    }
    let mut lines = text.lines();
    let cpus: Vec<usize> = lines
        .next()?
        .split_whitespace()
        .filter_map(|c| c.strip_prefix("CPU")?.parse().ok())
        .collect();
    let mut taken = vec![0u64; cpus.len()];
    for line in lines {
        let mut fields = line.split_whitespace();
        let numbered = fields
            .next()
            .and_then(|f| f.strip_suffix(':'))
            .is_some_and(|f| f.parse::<u32>().is_ok());
        if numbered {
            for (n, count) in fields.take(cpus.len()).enumerate() {
                taken[n] += count.parse::<u64>().unwrap_or(0);
            }
        }
    }
    // SAFETY: CPU_ISSET reads the set within its bounds (cpu < CPU_SETSIZE).
    cpus.iter()
        .zip(&taken)
        .filter(|(&cpu, _)| {
            cpu < libc::CPU_SETSIZE as usize && unsafe { libc::CPU_ISSET(cpu, &allowed) }
        })
        .min_by_key(|(_, &count)| count)
        .map(|(&cpu, _)| cpu)
}

/// CPU seconds used by the calling thread (immune to other processes'
/// load on a shared machine, unlike wall time).
pub(crate) fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// The `q` quantile (0..=1) of sorted durations.
pub(crate) fn quantile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((sorted.len() as f64) * q).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

pub(crate) fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

pub(crate) fn per_sec(n: f64) -> String {
    if n >= 10_000.0 {
        format!("{:.0}/s", n)
    } else {
        format!("{:.1}/s", n)
    }
}

pub(crate) fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// A small deterministic generator (no RNG dependency), for "random" picks.
pub(crate) struct Lcg(pub u64);

impl Lcg {
    pub(crate) fn next_below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_pick_the_rank_at_or_above() {
        let d: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(quantile(&d, 0.5), Duration::from_millis(50));
        assert_eq!(quantile(&d, 0.99), Duration::from_millis(99));
        assert_eq!(quantile(&d, 0.999), Duration::from_millis(100));
        assert_eq!(quantile(&[], 0.5), Duration::ZERO);
    }

    #[test]
    fn rss_and_cpu_are_readable_here() {
        assert!(rss_bytes() > 0);
        let before = cpu_seconds();
        let mut x = 0u64;
        for i in 0..50_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        assert!(cpu_seconds() >= before);
    }
}
