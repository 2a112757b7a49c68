//! The running App: store, inbox writer and worker threads, the clock, and the
//! counters the status endpoint reads. Also the sync points tests and the demo
//! wait on (`wait_idle`, `tick`) instead of sleeping.
//! The room also holds the worker (`worker`: inbox → observations →
//! outcomes, checkpoints, dead letters), the state handlers, writer and worker
//! share (`state`), and ingest pressure (`pressure`). One wiring,
//! `App::launch`, starts it all for `serve`, `demo`, `bench` and the tests.
//!
//! May import: `model`, `store`, `ingest`, `judge`, `github`, `read`.

pub mod otlp;
pub(crate) mod pressure;
mod running;
pub(crate) mod state;
pub(crate) mod temp;
pub mod worker;

pub use running::{AppConfig, ClientFactory, GitHubConfig, Running};

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use tokio::sync::watch;

pub use crate::app::state::Shared;

use crate::app::pressure::IngestPressure;
use crate::app::worker::{Worker, WorkerMsg};
use crate::github::backfill::{BackfillHost, BackfillRequests, CaughtUp};
use crate::github::calls::ApiCalls;
use crate::github::harvest::HarvestRequests;
use crate::github::publisher::PrChanges;
use crate::github::reconciler::{ReconcileRequests, ReconcileStats};
use crate::ingest::tenancy::TenancyStats;
use crate::model::clock::Clock;
use crate::store::inbox::InboxWriter;
use crate::store::{counter, Store, STORE_LOCK_WAIT};

/// Run the worker's loop and report its death: a panic that escapes it
/// (outside any one inbox item, which the worker catches itself) marks the
/// worker dead on `/status` and `/metrics` instead of leaving a silent queue.
pub fn supervise(shared: &Shared, run: impl FnOnce()) {
    if let Err(panic) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
        shared.worker_died(format!(
            "panicked: {}",
            crate::app::worker::panic_message(&*panic)
        ));
    }
}

/// What `App::start_with` can plug in.
#[derive(Default)]
pub struct AppOptions {
    /// The check-run publisher's channel (`github::publisher::channel`).
    pub pr_changes: Option<PrChanges>,
    /// The reconciler's channel (`github::reconciler::channel`).
    pub reconcile_requests: Option<ReconcileRequests>,
    /// The manifest harvester's channel (`github::harvest::channel`).
    pub harvest_requests: Option<HarvestRequests>,
    /// The backfill's channel (`github::backfill::channel`).
    pub backfill_requests: Option<BackfillRequests>,
    /// PostgreSQL instead of sled (`AppConfig::database_url`).
    pub database_url: Option<crate::settings::Secret>,
}

/// The file under `DATA_DIR` a running App holds locked, with its pid in it.
pub(crate) const OWNER_FILE: &str = "safe-outcomes.pid";

/// Lock `DATA_DIR` for this process. When another holds it, say at once
/// which (its pid), wait up to `STORE_LOCK_WAIT` for it to let go (a
/// restart while the previous instance shuts down), then fail naming it.
fn lock_data_dir(data_dir: &Path) -> anyhow::Result<std::fs::File> {
    use std::io::{Seek, Write};
    let path = data_dir.join(OWNER_FILE);
    let named = |e: std::io::Error| anyhow::anyhow!("DATA_DIR {}: {e}", path.display());
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(named)?;
    let started = Instant::now();
    let mut said = false;
    loop {
        match file.try_lock() {
            Ok(()) => break,
            Err(std::fs::TryLockError::WouldBlock) => {
                let holder = holder(&mut file, data_dir);
                if started.elapsed() >= STORE_LOCK_WAIT {
                    anyhow::bail!(
                        "opening store in {}: {holder}, holding its lock",
                        data_dir.display()
                    );
                }
                if !said {
                    // Said at once; a previous instance still shutting down
                    // gets STORE_LOCK_WAIT to let go.
                    tracing::warn!("{holder}; waiting up to {STORE_LOCK_WAIT:?} for it to stop");
                    said = true;
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(named(e)),
        }
    }
    file.set_len(0).map_err(named)?;
    file.rewind().map_err(named)?;
    write!(file, "{}", std::process::id()).map_err(named)?;
    Ok(file)
}

/// "another safe-outcomes is running on DATA_DIR … (pid …)", from the pid
/// the holder wrote into the owner file.
fn holder(file: &mut std::fs::File, data_dir: &Path) -> String {
    use std::io::{Read, Seek};
    let mut pid = String::new();
    let _ = file.rewind().and_then(|_| file.read_to_string(&mut pid));
    let pid = pid.trim();
    format!(
        "another safe-outcomes is running on DATA_DIR {} (pid {})",
        data_dir.display(),
        if pid.is_empty() { "unknown" } else { pid }
    )
}

/// Lower the calling thread's scheduling priority (Linux: nice is per
/// thread) to the setting `setting` (a whole number from 0 to 19), else to
/// `default`: the worker and the read threads, so the threads that
/// acknowledge webhooks are scheduled first.
pub(crate) fn lower_priority(setting: &crate::settings::Setting, default: i32) {
    let name = setting.name;
    let nice = crate::settings::read(setting)
        .and_then(|v| v.trim().parse::<i32>().ok())
        .filter(|n| (0..=19).contains(n))
        .unwrap_or(default);
    // SAFETY: setpriority only reads its arguments; `0` is the calling thread.
    if unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) } != 0 {
        tracing::debug!("could not lower a thread's priority to nice {nice} ({name})");
    }
}

/// Put the calling thread in Linux's `SCHED_IDLE` class unless the
/// setting `setting` says `normal`: it then runs only on CPU no
/// thread of the ordinary class wants, and any such thread that wakes takes
/// its core at once (a nice value only shares the CPU out by weight, and
/// lets the running thread finish its slice first). The read threads: an
/// ack never waits behind a read for a core. Returns whether it took.
pub(crate) fn run_when_idle(setting: &crate::settings::Setting) -> bool {
    let name = setting.name;
    if crate::settings::read(setting).is_some_and(|v| v.trim().eq_ignore_ascii_case("normal")) {
        return false;
    }
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: sched_setscheduler only reads its arguments; `0` is the
    // calling thread.
    let took = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) } == 0;
    if !took {
        tracing::debug!("could not move a thread to SCHED_IDLE ({name}): its nice value stays");
    }
    took
}

/// Where the sled store lives under `DATA_DIR`.
pub fn store_path(data_dir: &Path) -> std::path::PathBuf {
    crate::store::path_in(data_dir)
}

pub struct App {
    pub store: Store,
    pub shared: Arc<Shared>,
    pub writer: InboxWriter,
    worker_tx: std::sync::mpsc::Sender<WorkerMsg>,
    threads: Vec<JoinHandle<()>>,
    /// `DATA_DIR`'s owner lock, held while the App runs (`lock_data_dir`).
    _owner: std::fs::File,
}

impl App {
    /// Open the store under `data_dir` and start the writer and worker.
    /// Items stored before a crash are processed first.
    pub fn start(data_dir: &Path, clock: Clock) -> anyhow::Result<App> {
        Self::open(data_dir, clock, true, AppOptions::default())
    }

    /// `start`, with the App-mode hooks.
    pub fn start_with(data_dir: &Path, clock: Clock, options: AppOptions) -> anyhow::Result<App> {
        Self::open(data_dir, clock, true, options)
    }

    /// Store deliveries but never process them: stands for a process that
    /// dies after acknowledging and before its worker ran (crash tests).
    pub fn start_without_worker(data_dir: &Path, clock: Clock) -> anyhow::Result<App> {
        Self::open(data_dir, clock, false, AppOptions::default())
    }

    /// `start_without_worker` with options (a bench's replicas on one database).
    pub(crate) fn start_without_worker_with(
        data_dir: &Path,
        clock: Clock,
        options: AppOptions,
    ) -> anyhow::Result<App> {
        Self::open(data_dir, clock, false, options)
    }

    fn open(
        data_dir: &Path,
        clock: Clock,
        run_worker: bool,
        options: AppOptions,
    ) -> anyhow::Result<App> {
        std::fs::create_dir_all(data_dir)
            .map_err(|e| anyhow::anyhow!("DATA_DIR {}: {e}", data_dir.display()))?;
        let owner = lock_data_dir(data_dir)?;
        let store = Store::open_engine(
            &store_path(data_dir),
            crate::settings::exposed(&options.database_url),
        )
        .map_err(|e| {
            anyhow::Error::new(e).context(format!("opening store in {}", data_dir.display()))
        })?;
        let received = store.counter(counter::RECEIVED);
        // The highest inbox number given (sled: the count received).
        let last_seq = store
            .last_inbox_seq()
            .map_err(|e| anyhow::anyhow!("reading the inbox sequence: {e}"))?;
        let processed = store.counter(counter::PROCESSED);
        // The highest processed sequence: everything below the oldest queued item.
        let oldest_queued = store.oldest_queued_seq();
        let processed_seq = oldest_queued.map_or(last_seq, |s| s - 1);
        let outputs = store.output_count();
        let dead_letters = store.dead_letter_count();
        tracing::debug!(received, processed, outputs, "store opened");
        let shared = Arc::new(Shared {
            clock,
            started: Instant::now(),
            outputs_tracked: AtomicU64::new(outputs),
            ignored: AtomicU64::new(0),
            rejected: AtomicU64::new(0),
            github_calls: Arc::new(ApiCalls::default()),
            reconcile_stats: Arc::default(),
            tenancy: Arc::default(),
            pr_changes: options.pr_changes,
            reconcile_requests: options.reconcile_requests,
            harvest_requests: options.harvest_requests,
            backfill_requests: options.backfill_requests,
            signal_requests: std::sync::OnceLock::new(),
            github: std::sync::OnceLock::new(),
            outcome_spans: std::sync::OnceLock::new(),
            pressure: IngestPressure::default(),
            received: AtomicU64::new(received),
            processed_total: AtomicU64::new(processed),
            duplicates: AtomicU64::new(store.counter(counter::DUPLICATES)),
            dead_letters: AtomicU64::new(dead_letters),
            worker_death: Mutex::new(None),
            last_error: Mutex::new(None),
            stored: watch::channel(last_seq).0,
            processed: watch::channel(processed_seq).0,
            ready: watch::channel(false).0,
            output_tally: Arc::default(),
        });
        let (worker_tx, worker_rx) = std::sync::mpsc::channel();
        let mut threads = Vec::new();
        if run_worker {
            let worker = Worker::new(store.clone(), shared.clone());
            let watched = shared.clone();
            threads.push(
                std::thread::Builder::new()
                    .name("worker".into())
                    .spawn(move || supervise(&watched, move || worker.run(worker_rx)))?,
            );
        }
        let wake_tx = worker_tx.clone();
        let wake_shared = shared.clone();
        let (writer, writer_thread) = InboxWriter::start(
            store.clone(),
            Arc::new(move |seq, items, duplicates| {
                // A count, not the highest number: on PostgreSQL numbers
                // taken by a transaction that never committed (a replica
                // killed mid-commit) leave gaps in the sequence.
                wake_shared.received.fetch_add(items, Ordering::Relaxed);
                wake_shared.duplicates.store(duplicates, Ordering::Relaxed);
                wake_shared.pressure.committed(items);
                wake_shared.stored.send_replace(seq);
                let _ = wake_tx.send(WorkerMsg::Wake);
            }),
        );
        threads.push(writer_thread);
        Ok(App {
            store,
            shared,
            writer,
            worker_tx,
            threads,
            _owner: owner,
        })
    }

    /// Wait until every stored inbox item has been processed.
    pub async fn wait_idle(&self) {
        // On sled, what was answered is filed in the journal after the
        // answer: wait for that first, then for the worker.
        self.writer.settled().await;
        let mut processed = self.shared.processed.subscribe();
        loop {
            let stored = *self.shared.stored.borrow();
            if *processed.borrow_and_update() >= stored || self.shared.worker_death().is_some() {
                return;
            }
            if processed.changed().await.is_err() {
                return;
            }
        }
    }

    /// Wait until the worker has finished its start-up pass.
    pub async fn wait_ready(&self) {
        let mut ready = self.shared.ready.subscribe();
        let _ = ready.wait_for(|r| *r).await;
    }

    /// Take the checkpoints due at the clock's current time; returns when done.
    pub async fn tick(&self) {
        let (tx, rx) = std::sync::mpsc::channel();
        if self.worker_tx.send(WorkerMsg::Tick(Some(tx))).is_ok() {
            let _ = tokio::task::spawn_blocking(move || rx.recv()).await;
        }
    }

    pub(crate) fn outputs_tracked(&self) -> u64 {
        self.shared.outputs_tracked.load(Ordering::Relaxed)
    }

    /// Stop the threads and flush. The store can be reopened afterwards.
    pub fn shutdown(self) {
        let App {
            store,
            writer,
            worker_tx,
            threads,
            ..
        } = self;
        drop(writer);
        drop(worker_tx);
        for t in threads {
            let _ = t.join();
        }
        let _ = store.flush();
    }
}

impl BackfillHost for App {
    fn store(&self) -> Store {
        self.store.clone()
    }

    fn writer(&self) -> InboxWriter {
        self.writer.clone()
    }

    fn reconcile_stats(&self) -> Arc<ReconcileStats> {
        self.shared.reconcile_stats.clone()
    }

    fn tenancy_stats(&self) -> Arc<TenancyStats> {
        self.shared.tenancy.clone()
    }

    fn caught_up(&self) -> Arc<dyn CaughtUp> {
        self.shared.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_outside_an_item_marks_the_worker_dead() {
        let dir = tempfile::tempdir().unwrap();
        let app = App::start(dir.path(), Clock::System).unwrap();
        assert_eq!(app.shared.worker_death(), None);
        supervise(&app.shared, || panic!("schedule exploded"));
        let death = app.shared.worker_death().expect("reported");
        assert!(death.contains("schedule exploded"), "{death}");
        assert!(app
            .shared
            .last_error()
            .unwrap()
            .contains("worker thread died"));
        // A stopped worker (the channel closed) is not a death.
        let other = tempfile::tempdir().unwrap();
        let app2 = App::start(other.path(), Clock::System).unwrap();
        supervise(&app2.shared, || {});
        assert_eq!(app2.shared.worker_death(), None);
        app.shutdown();
        app2.shutdown();
    }

    #[test]
    fn a_held_data_dir_is_named_with_its_pid() {
        let dir = tempfile::tempdir().unwrap();
        let first = App::start(dir.path(), Clock::System).unwrap();
        let e = App::start(dir.path(), Clock::System)
            .err()
            .unwrap()
            .to_string();
        let expected = format!(
            "opening store in {0}: another safe-outcomes is running on DATA_DIR {0} (pid {1}), holding its lock",
            dir.path().display(),
            std::process::id()
        );
        assert_eq!(e, expected);
        first.shutdown();
        // Let go: the next start takes the directory.
        App::start(dir.path(), Clock::System).unwrap().shutdown();
    }

    #[test]
    fn a_data_dir_that_cannot_be_made_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a-file");
        std::fs::write(&file, "").unwrap();
        let data_dir = file.join("data");
        let e = App::start(&data_dir, Clock::System)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.starts_with(&format!("DATA_DIR {}: ", data_dir.display())),
            "{e}"
        );
    }
}
