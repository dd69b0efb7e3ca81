//! The batching writer: one task that gathers high-rate writes (match results,
//! progress) for up to `max_batch` items or `max_delay`, commits them in one
//! transaction, and only then acknowledges each. A bounded queue gives back-pressure;
//! shutting down stops intake and commits everything already queued.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::error::StoreError;
use crate::model::{Write, WriteAck};
use crate::store::Store;

/// Batching parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriterConfig {
    /// Most writes per transaction.
    pub max_batch: usize,
    /// Longest a write waits for companions before its batch commits.
    pub max_delay: Duration,
    /// Queue length; submitters wait when it is full.
    pub queue_capacity: usize,
}

impl Default for WriterConfig {
    fn default() -> Self {
        Self {
            max_batch: 256,
            max_delay: Duration::from_millis(5),
            queue_capacity: 4096,
        }
    }
}

type Reply = oneshot::Sender<Result<WriteAck, StoreError>>;

/// Counters of a running writer (monotonic).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriterStats {
    /// Writes taken off the queue.
    pub received: u64,
    /// Writes answered after a successful commit.
    pub committed: u64,
    /// Transactions committed.
    pub batches: u64,
    /// Writes answered with [`StoreError::BatchAborted`].
    pub aborted: u64,
}

#[derive(Debug, Default)]
struct Counters {
    received: AtomicU64,
    committed: AtomicU64,
    batches: AtomicU64,
    aborted: AtomicU64,
}

/// A cloneable way to submit writes to a running [`BatchWriter`].
#[derive(Debug, Clone)]
pub struct WriteSender {
    queue: mpsc::Sender<(Write, Reply)>,
}

impl WriteSender {
    /// Queues `write` (waiting while the queue is full) and returns once the batch
    /// holding it has committed. [`StoreError::BatchAborted`] means the batch's
    /// transaction failed and nothing of it is stored (match results are idempotent,
    /// so retrying them is safe). Dropping the returned future once the write is
    /// queued does not cancel it.
    pub async fn submit(&self, write: Write) -> Result<WriteAck, StoreError> {
        let (reply, ack) = oneshot::channel();
        self.queue
            .send((write, reply))
            .await
            .map_err(|_| StoreError::WriterClosed)?;
        ack.await.map_err(|_| StoreError::WriterClosed)?
    }
}

/// The running batching writer (see the module docs).
#[derive(Debug)]
pub struct BatchWriter {
    sender: WriteSender,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
    counters: Arc<Counters>,
}

impl BatchWriter {
    /// Starts the writer task on the current tokio runtime.
    pub fn spawn(store: Store, config: WriterConfig) -> Self {
        let config = WriterConfig {
            max_batch: config.max_batch.max(1),
            queue_capacity: config.queue_capacity.max(1),
            ..config
        };
        let (queue, rx) = mpsc::channel(config.queue_capacity);
        let (stop, stop_rx) = oneshot::channel();
        let counters = Arc::new(Counters::default());
        let task = tokio::spawn(run(store, config, rx, stop_rx, counters.clone()));
        Self {
            sender: WriteSender { queue },
            stop: Some(stop),
            task,
            counters,
        }
    }

    /// The writer's counters so far.
    pub fn stats(&self) -> WriterStats {
        let c = &self.counters;
        WriterStats {
            received: c.received.load(Ordering::Relaxed),
            committed: c.committed.load(Ordering::Relaxed),
            batches: c.batches.load(Ordering::Relaxed),
            aborted: c.aborted.load(Ordering::Relaxed),
        }
    }

    /// A handle for other tasks to submit through.
    pub fn sender(&self) -> WriteSender {
        self.sender.clone()
    }

    /// See [`WriteSender::submit`].
    pub async fn submit(&self, write: Write) -> Result<WriteAck, StoreError> {
        self.sender.submit(write).await
    }

    /// Stops intake (later submits get [`StoreError::WriterClosed`]), commits every
    /// write already queued, and waits for the task to end.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = (&mut self.task).await;
    }
}

struct Batch {
    counters: Arc<Counters>,
    writes: Vec<Write>,
    replies: Vec<Reply>,
    capacity: usize,
}

impl Batch {
    fn push(&mut self, (write, reply): (Write, Reply)) {
        self.counters.received.fetch_add(1, Ordering::Relaxed);
        self.writes.push(write);
        self.replies.push(reply);
    }

    async fn commit(&mut self, store: &Store) {
        let writes = std::mem::replace(&mut self.writes, Vec::with_capacity(self.capacity));
        let n = writes.len() as u64;
        match store.apply_batch(writes).await {
            Ok(acks) => {
                self.counters.batches.fetch_add(1, Ordering::Relaxed);
                self.counters.committed.fetch_add(n, Ordering::Relaxed);
                for (reply, ack) in self.replies.drain(..).zip(acks) {
                    let _ = reply.send(ack);
                }
            }
            Err(e) => {
                self.counters.aborted.fetch_add(n, Ordering::Relaxed);
                let reason = e.to_string();
                for reply in self.replies.drain(..) {
                    let _ = reply.send(Err(StoreError::BatchAborted {
                        reason: reason.clone(),
                    }));
                }
            }
        }
    }
}

async fn run(
    store: Store,
    config: WriterConfig,
    mut rx: mpsc::Receiver<(Write, Reply)>,
    mut stop: oneshot::Receiver<()>,
    counters: Arc<Counters>,
) {
    let mut batch = Batch {
        counters,
        writes: Vec::with_capacity(config.max_batch),
        replies: Vec::with_capacity(config.max_batch),
        capacity: config.max_batch,
    };
    let mut incoming = Vec::with_capacity(config.max_batch);
    loop {
        let first = tokio::select! {
            biased;
            _ = &mut stop => break,
            first = rx.recv() => match first {
                Some(first) => first,
                None => return, // every sender is gone and the queue is empty
            },
        };
        batch.push(first);
        let deadline = Instant::now() + config.max_delay;
        let mut stopping = false;
        while batch.writes.len() < config.max_batch {
            let room = config.max_batch - batch.writes.len();
            tokio::select! {
                biased;
                _ = &mut stop, if !stopping => stopping = true,
                got = rx.recv_many(&mut incoming, room) => {
                    if got == 0 {
                        break;
                    }
                    incoming.drain(..).for_each(|w| batch.push(w));
                }
                _ = tokio::time::sleep_until(deadline) => break,
            }
            if stopping {
                break;
            }
        }
        batch.commit(&store).await;
        if stopping {
            break;
        }
    }
    // Shutdown: refuse new writes, then commit what is queued.
    rx.close();
    while rx.recv_many(&mut incoming, config.max_batch).await > 0 {
        incoming.drain(..).for_each(|w| batch.push(w));
        batch.commit(&store).await;
    }
}
