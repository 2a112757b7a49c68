//! The scaffold the GitHub background tasks share (the check-run publisher,
//! the reconciler, the manifest harvester, the backfill): a request channel whose sending
//! side is cheap to clone, one loop that wakes at the queue's next due item
//! or on a request, a flush on demand (the tests' and shutdown's sync point:
//! requests sent before it are taken first), and a handle to flush and stop.
//! Each task brings its queue (`Queue`): what a request adds, when the next
//! item is due, and what running the due items does (with its own retries
//! and backoff).

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Instant;

use tokio::sync::{mpsc, oneshot};

/// A message to a task: work for its queue, or a flush.
pub(crate) enum Msg<W> {
    Work(W),
    /// Run the queue now; reply when done. `retry`: also what waits out a
    /// failure (the harvester's distinction; the others run everything).
    Flush {
        reply: oneshot::Sender<()>,
        retry: bool,
    },
}

/// Why the queue is run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Run {
    /// Its next item came due.
    Timer,
    /// A flush asked for it.
    Flush { retry: bool },
}

/// A task's queue of work.
pub(crate) trait Queue: Send {
    type Work: Send;
    /// Take one request.
    fn take(&mut self, work: Self::Work);
    /// When the next item is due (`None`: nothing queued).
    fn next_due(&self) -> Option<Instant>;
    /// Run the due items (on a flush: as the task defines).
    fn run(&mut self, why: Run) -> impl Future<Output = ()> + Send;
}

/// The requesting side. Cheap to clone.
pub struct Sender<W>(mpsc::UnboundedSender<Msg<W>>);

impl<W> Clone for Sender<W> {
    fn clone(&self) -> Sender<W> {
        Sender(self.0.clone())
    }
}

impl<W> std::fmt::Debug for Sender<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("task::Sender")
    }
}

impl<W> Sender<W> {
    /// Queue work; false when the task has stopped.
    pub fn send(&self, work: W) -> bool {
        self.0.send(Msg::Work(work)).is_ok()
    }
}

/// The task's receiving side.
pub struct Inbox<W>(mpsc::UnboundedReceiver<Msg<W>>);

pub fn channel<W>() -> (Sender<W>, Inbox<W>) {
    let (tx, rx) = mpsc::unbounded_channel();
    (Sender(tx), Inbox(rx))
}

/// Take the items due at `now` out of a task's queue (all of them with
/// `all`), in key order; `due` tells an item's time.
pub(crate) fn take_due<K: Ord + Clone, P>(
    queue: &mut BTreeMap<K, P>,
    now: Instant,
    all: bool,
    due: impl Fn(&P) -> Instant,
) -> Vec<(K, P)> {
    let keys: Vec<K> = queue
        .iter()
        .filter(|(_, p)| all || due(p) <= now)
        .map(|(k, _)| k.clone())
        .collect();
    keys.into_iter()
        .filter_map(|k| queue.remove(&k).map(|p| (k, p)))
        .collect()
}

/// A channel whose requesting side is a task's own type around the
/// `Sender` (`PrChanges`, `HarvestRequests`, …): what it may ask, named.
pub fn channel_of<W, R>(requests: impl FnOnce(Sender<W>) -> R) -> (R, Inbox<W>) {
    let (tx, rx) = channel();
    (requests(tx), rx)
}

/// A running task.
pub(crate) struct Handle<W> {
    tx: mpsc::UnboundedSender<Msg<W>>,
    task: tokio::task::JoinHandle<()>,
}

impl<W: Send + 'static> Handle<W> {
    /// Build the queue (`start`, e.g. a start-up scan) and drive it on a
    /// tokio task. `sender` must be the one paired with `inbox`.
    pub fn spawn<Q>(
        sender: &Sender<W>,
        inbox: Inbox<W>,
        start: impl Future<Output = Q> + Send + 'static,
    ) -> Handle<W>
    where
        Q: Queue<Work = W> + 'static,
    {
        let task = tokio::spawn(async move { drive(start.await, inbox.0).await });
        Handle {
            tx: sender.0.clone(),
            task,
        }
    }

    /// Run the queue now and wait until done.
    pub async fn flush(&self, retry: bool) {
        let (reply, done) = oneshot::channel();
        if self.tx.send(Msg::Flush { reply, retry }).is_ok() {
            let _ = done.await;
        }
    }

    /// Stop without running what is queued.
    pub async fn stop(self) {
        self.task.abort();
        let _ = self.task.await;
    }
}

async fn drive<Q: Queue>(mut queue: Q, mut rx: mpsc::UnboundedReceiver<Msg<Q::Work>>) {
    loop {
        let next = queue.next_due();
        let wake = async {
            match next {
                Some(at) => tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            msg = rx.recv() => match msg {
                None => break,
                Some(Msg::Work(work)) => queue.take(work),
                Some(Msg::Flush { reply, mut retry }) => {
                    // Requests sent before the flush are in the channel ahead of it.
                    let mut replies = vec![reply];
                    while let Ok(m) = rx.try_recv() {
                        match m {
                            Msg::Work(work) => queue.take(work),
                            Msg::Flush { reply, retry: r } => {
                                replies.push(reply);
                                retry |= r;
                            }
                        }
                    }
                    queue.run(Run::Flush { retry }).await;
                    for r in replies {
                        let _ = r.send(());
                    }
                }
            },
            _ = wake => queue.run(Run::Timer).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// Records what it was given and run with.
    struct Log(Arc<Mutex<Vec<String>>>, Vec<u32>);

    impl Queue for Log {
        type Work = u32;
        fn take(&mut self, work: u32) {
            self.1.push(work);
        }
        fn next_due(&self) -> Option<Instant> {
            None
        }
        async fn run(&mut self, why: Run) {
            let taken = std::mem::take(&mut self.1);
            self.0.lock().unwrap().push(format!("{why:?} {taken:?}"));
        }
    }

    #[tokio::test]
    async fn a_flush_takes_the_requests_sent_before_it_then_replies() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, inbox) = channel();
        let started = log.clone();
        let handle = Handle::spawn(&tx, inbox, async move { Log(started, vec![]) });
        assert!(tx.send(1) && tx.send(2));
        handle.flush(false).await;
        tx.send(3);
        handle.flush(true).await;
        assert_eq!(
            *log.lock().unwrap(),
            ["Flush { retry: false } [1, 2]", "Flush { retry: true } [3]"]
        );
        handle.stop().await;
        assert!(!tx.send(4), "a stopped task takes no more work");
    }
}
