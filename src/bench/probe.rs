//! What an ack waits on, measured from beside the inbox writer: a thread at
//! the writer's priority that does what one group commit does (a one-key
//! unit committed, then a flush) every few milliseconds, timing how late it
//! woke (waiting for a core), how long the commit took (sled's write lock,
//! which the worker's commits also take) and how long the flush took; and the
//! CPU each named thread of the process used meanwhile.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::store::Store;

/// How often the probe commits.
const EVERY: Duration = Duration::from_millis(10);

/// The counter the probe writes (nothing reads it).
const PROBE_COUNTER: &str = "bench_probe";

/// A running probe; `stop` returns what it measured.
pub struct Probe {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<Samples>,
    /// The same lateness measured by a task on the server's tokio runtime.
    runtime: tokio::task::JoinHandle<Vec<Duration>>,
    threads: BTreeMap<String, f64>,
    started: Instant,
    written: u64,
}

#[derive(Default)]
struct Samples {
    wake: Vec<Duration>,
    commit: Vec<Duration>,
    flush: Vec<Duration>,
}

/// p50 / p99 / max of each probe step, and CPU seconds per thread name.
pub(crate) struct ProbeFigures {
    pub wake: (Duration, Duration, Duration),
    /// How late a 10 ms timer fired on the runtime the handlers run on.
    pub runtime: (Duration, Duration, Duration),
    pub commit: (Duration, Duration, Duration),
    pub flush: (Duration, Duration, Duration),
    pub samples: usize,
    pub seconds: f64,
    /// Thread name → CPU seconds used while the probe ran.
    pub threads: BTreeMap<String, f64>,
    /// Bytes this process sent to storage while the probe ran.
    pub written: u64,
}

impl Probe {
    pub fn start(store: Store) -> Probe {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("bench-probe".into())
            .spawn(move || run(&store, &flag))
            .expect("probe thread");
        let runtime = tokio::spawn(runtime_lateness(stop.clone()));
        Probe {
            stop,
            handle,
            runtime,
            threads: thread_cpu(),
            started: Instant::now(),
            written: written_bytes(),
        }
    }

    pub async fn stop(self) -> ProbeFigures {
        self.stop.store(true, Ordering::Relaxed);
        let mut runtime = self.runtime.await.unwrap_or_default();
        let mut s = self.handle.join().unwrap_or_default();
        let mut threads = thread_cpu();
        for (name, cpu) in threads.iter_mut() {
            *cpu -= self.threads.get(name).copied().unwrap_or(0.0);
        }
        ProbeFigures {
            wake: quantiles(&mut s.wake),
            runtime: quantiles(&mut runtime),
            commit: quantiles(&mut s.commit),
            flush: quantiles(&mut s.flush),
            samples: s.commit.len(),
            seconds: self.started.elapsed().as_secs_f64(),
            threads,
            written: written_bytes().saturating_sub(self.written),
        }
    }
}

/// A timer every `EVERY` on the tokio runtime, and how late each fired: the
/// handlers' own wait for a core (or for a blocked runtime thread).
async fn runtime_lateness(stop: Arc<AtomicBool>) -> Vec<Duration> {
    let mut late = Vec::new();
    let mut due = tokio::time::Instant::now() + EVERY;
    while !stop.load(Ordering::Relaxed) {
        tokio::time::sleep_until(due).await;
        late.push(due.elapsed());
        due += EVERY;
    }
    late
}

fn run(store: &Store, stop: &AtomicBool) -> Samples {
    let mut s = Samples::default();
    let mut due = Instant::now() + EVERY;
    let mut n = 0u64;
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
        let woke = Instant::now();
        s.wake.push(woke.saturating_duration_since(due));
        let mut unit = store.begin();
        n += 1;
        unit.set_counter(PROBE_COUNTER, n);
        if unit.commit().is_err() {
            break;
        }
        let committed = Instant::now();
        if store.flush().is_err() {
            break;
        }
        s.commit.push(committed - woke);
        s.flush.push(committed.elapsed());
        due += EVERY;
        if due < Instant::now() {
            due = Instant::now() + EVERY;
        }
    }
    s
}

/// p50, p99 and the longest: one stall of the whole process shows as a
/// single long sample, which a p99 of a thousand samples hides.
fn quantiles(v: &mut [Duration]) -> (Duration, Duration, Duration) {
    v.sort();
    let at = |q: f64| {
        v.get(((v.len() as f64 * q) as usize).min(v.len().saturating_sub(1)))
            .copied()
            .unwrap_or_default()
    };
    (at(0.50), at(0.99), v.last().copied().unwrap_or_default())
}

/// Bytes this process has caused to be sent to storage (`write_bytes` of
/// `/proc/self/io`): sled's log writes, the flushes' payload.
fn written_bytes() -> u64 {
    super::proc_number("/proc/self/io", "write_bytes:").unwrap_or(0)
}

/// CPU seconds of each thread of this process, summed by thread name
/// (`/proc/self/task/*/stat`; tokio's workers share one name).
fn thread_cpu() -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return out;
    };
    for task in tasks.flatten() {
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
            continue;
        };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let name = stat[open + 1..close].to_string();
        let f: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        let ticks = |i: usize| f.get(i).and_then(|t| t.parse::<u64>().ok()).unwrap_or(0);
        *out.entry(name).or_insert(0.0) += (ticks(11) + ticks(12)) as f64 / 100.0;
    }
    out
}

impl ProbeFigures {
    /// One line: the steps' p50/p99 and the busiest threads' share of a core.
    pub fn summary(&self) -> String {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let mut busy: Vec<(&String, &f64)> =
            self.threads.iter().filter(|(_, c)| **c > 0.0).collect();
        busy.sort_by(|a, b| b.1.total_cmp(a.1));
        let cores: Vec<String> = busy
            .iter()
            .take(5)
            .map(|(n, c)| format!("{n} {:.2}", *c / self.seconds))
            .collect();
        let q = |(p50, p99, max): (Duration, Duration, Duration)| {
            format!("{:.2}/{:.2}/{:.0}", ms(p50), ms(p99), ms(max))
        };
        format!(
            "runtime timer late {} ms, thread wake late {} ms, commit {} ms, flush {} ms (p50/p99/max, {} probes); written {:.1} MB/s; cores used: {}",
            q(self.runtime),
            q(self.wake),
            q(self.commit),
            q(self.flush),
            self.samples,
            self.written as f64 / 1e6 / self.seconds.max(1e-9),
            cores.join(", ")
        )
    }
}
