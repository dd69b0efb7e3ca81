//! The login queue in front of a bounded pool of auth workers.
//!
//! A login runs at once when a worker is free and nobody waits; otherwise it
//! joins a FIFO queue and its caller gets a ticket with a position and an
//! estimate. One dispatcher hands queued logins to workers in order as they
//! free up, so a waiting ticket's position (its sequence number minus the
//! logins already dispatched) only ever decreases. The caller collects the
//! outcome by polling the ticket (optionally long-polling until it is ready).
//! Load never turns into an error: the queue holds up to its capacity, and
//! only past it is a login refused (the API answers 429 with Retry-After).

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hightick_telemetry::prometheus::durations::DurationHistogram;
use parking_lot::Mutex;
use tokio::sync::{Notify, Semaphore, watch};

/// What an auth worker does with one job.
pub trait Work: Send + Sync + 'static {
    /// A queued login.
    type Job: Send + 'static;
    /// Its result, kept on the ticket until collected.
    type Outcome: Clone + Send + Sync + 'static;
    /// Most queued jobs one worker takes at once.
    const BATCH: usize = 1;
    /// Whether `job` may share a batch with its neighbours in the queue.
    fn batchable(&self, job: &Self::Job) -> bool;
    /// Runs one job (at most `workers` jobs or batches run at once).
    fn run(&self, job: Self::Job) -> impl Future<Output = Self::Outcome> + Send;
    /// Runs a batch of batchable jobs together: one outcome per job, in order.
    fn run_batch(&self, jobs: Vec<Self::Job>) -> impl Future<Output = Vec<Self::Outcome>> + Send;
    /// The ticket text for `job`, queued as `issued` says (unique and
    /// unguessable; called under the queue's lock, so cheap).
    fn ticket(&self, job: &Self::Job, issued: Issued) -> String;
}

/// Where a job joined the queue, for its ticket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Issued {
    /// Its sequence number in this queue.
    pub seq: u64,
    /// Its position (1 = next).
    pub position: u64,
    /// Expected wait, milliseconds.
    pub estimate_ms: u64,
}

/// Where a ticket stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TicketStatus<O> {
    /// Waiting in the queue.
    Queued {
        /// 1 = next to be worked on.
        position: u64,
        /// Expected wait, milliseconds.
        estimate_ms: u64,
    },
    /// A worker has it.
    Working,
    /// Finished; the outcome.
    Done(O),
}

/// The answer to a submitted job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Submitted<O> {
    /// A worker was free: the outcome.
    Done(O),
    /// Queued: the ticket to poll and where it stands.
    Queued {
        /// Ticket id (unguessable).
        ticket: String,
        /// Its status.
        status: TicketStatus<O>,
    },
}

/// The queue is at capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("login queue is full")]
pub struct QueueFull {
    /// A fair wait before retrying, milliseconds.
    pub retry_after_ms: u64,
}

struct Ticket<O> {
    seq: u64,
    working: bool,
    outcome: watch::Sender<Option<O>>,
    finished_at: Option<Instant>,
}

struct Queued<J> {
    ticket: String,
    job: J,
    submitted: Instant,
}

struct QueueState<J, O> {
    waiting: VecDeque<Queued<J>>,
    tickets: HashMap<String, Ticket<O>>,
    /// Sequence number of the next queued job.
    enqueued: u64,
    /// Jobs that have left the queue (the head's sequence number).
    dispatched: u64,
}

struct Inner<W: Work> {
    work: W,
    workers: usize,
    permits: Arc<Semaphore>,
    state: Mutex<QueueState<W::Job, W::Outcome>>,
    job_queued: Notify,
    capacity: usize,
    ticket_ttl: Duration,
    /// Moving average of one job's duration, microseconds.
    service_us: AtomicU64,
    latency: DurationHistogram,
    admitted: AtomicU64,
    queued_total: AtomicU64,
    refused_full: AtomicU64,
}

/// Counters of the queue and the pool at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdmissionSnapshot {
    /// Jobs waiting.
    pub queue_depth: usize,
    /// Workers busy.
    pub busy: usize,
    /// Pool size.
    pub workers: usize,
    /// Jobs finished since start.
    pub admitted: u64,
    /// Jobs that had to queue.
    pub queued_total: u64,
    /// Jobs refused because the queue was full.
    pub refused_full: u64,
    /// Tickets held (waiting, working or uncollected).
    pub tickets: usize,
}

/// The login queue and its auth worker pool. Cheap to clone.
pub struct Admission<W: Work> {
    inner: Arc<Inner<W>>,
}

impl<W: Work> Clone for Admission<W> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<W: Work> std::fmt::Debug for Admission<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admission")
            .field("snapshot", &self.snapshot())
            .finish()
    }
}

impl<W: Work> Admission<W> {
    /// A pool of `workers` running `work`, with room for `capacity` waiting
    /// jobs; finished tickets are kept `ticket_ttl` for their callers. Starts
    /// the dispatcher and the ticket sweeper on the current tokio runtime.
    pub fn start(work: W, workers: usize, capacity: usize, ticket_ttl: Duration) -> Self {
        let workers = workers.max(1);
        let inner = Arc::new(Inner {
            work,
            workers,
            permits: Arc::new(Semaphore::new(workers)),
            state: Mutex::new(QueueState {
                waiting: VecDeque::new(),
                tickets: HashMap::new(),
                enqueued: 0,
                dispatched: 0,
            }),
            job_queued: Notify::new(),
            capacity,
            ticket_ttl,
            service_us: AtomicU64::new(1_000),
            latency: DurationHistogram::default(),
            admitted: AtomicU64::new(0),
            queued_total: AtomicU64::new(0),
            refused_full: AtomicU64::new(0),
        });
        tokio::spawn(dispatch(Arc::downgrade(&inner)));
        tokio::spawn(sweep(Arc::downgrade(&inner)));
        Self { inner }
    }

    /// Runs `job` now if a worker is free and nobody waits, else queues it.
    pub async fn submit(&self, job: W::Job) -> Result<Submitted<W::Outcome>, QueueFull> {
        let submitted = Instant::now();
        let inner = &self.inner;
        let fast = {
            let state = inner.state.lock();
            if state.waiting.is_empty() {
                Arc::clone(&inner.permits).try_acquire_owned().ok()
            } else {
                None
            }
        };
        if let Some(permit) = fast {
            let outcome = inner.work.run(job).await;
            drop(permit);
            inner.finished(submitted);
            return Ok(Submitted::Done(outcome));
        }
        let mut state = inner.state.lock();
        if state.waiting.len() >= inner.capacity {
            inner.refused_full.fetch_add(1, Ordering::Relaxed);
            return Err(QueueFull {
                retry_after_ms: inner.estimate_ms(state.waiting.len() as u64).max(1_000),
            });
        }
        let seq = state.enqueued;
        state.enqueued += 1;
        let position = seq - state.dispatched + 1;
        let estimate_ms = inner.estimate_ms(position);
        let ticket = inner.work.ticket(
            &job,
            Issued {
                seq,
                position,
                estimate_ms,
            },
        );
        let (outcome, _) = watch::channel(None);
        state.tickets.insert(
            ticket.clone(),
            Ticket {
                seq,
                working: false,
                outcome,
                finished_at: None,
            },
        );
        state.waiting.push_back(Queued {
            ticket: ticket.clone(),
            job,
            submitted,
        });
        drop(state);
        inner.queued_total.fetch_add(1, Ordering::Relaxed);
        inner.job_queued.notify_one();
        Ok(Submitted::Queued {
            ticket,
            status: TicketStatus::Queued {
                position,
                estimate_ms,
            },
        })
    }

    /// Where `ticket` stands now, or `None` for an unknown (or expired) ticket.
    pub fn status(&self, ticket: &str) -> Option<TicketStatus<W::Outcome>> {
        let state = self.inner.state.lock();
        let t = state.tickets.get(ticket)?;
        Some(self.inner.status_of(t, state.dispatched))
    }

    /// Like [`Self::status`], but while the ticket is not done waits up to
    /// `wait` for it to finish.
    pub async fn wait(&self, ticket: &str, wait: Duration) -> Option<TicketStatus<W::Outcome>> {
        let mut outcome = {
            let state = self.inner.state.lock();
            let t = state.tickets.get(ticket)?;
            if t.finished_at.is_some() || wait.is_zero() {
                return Some(self.inner.status_of(t, state.dispatched));
            }
            t.outcome.subscribe()
        };
        let _ = tokio::time::timeout(wait, outcome.wait_for(Option::is_some)).await;
        self.status(ticket)
    }

    /// Counters now.
    pub fn snapshot(&self) -> AdmissionSnapshot {
        let inner = &self.inner;
        let (queue_depth, tickets) = {
            let state = inner.state.lock();
            (state.waiting.len(), state.tickets.len())
        };
        AdmissionSnapshot {
            queue_depth,
            busy: inner.workers - inner.permits.available_permits().min(inner.workers),
            workers: inner.workers,
            admitted: inner.admitted.load(Ordering::Relaxed),
            queued_total: inner.queued_total.load(Ordering::Relaxed),
            refused_full: inner.refused_full.load(Ordering::Relaxed),
            tickets,
        }
    }

    /// Time from submission to outcome, every job.
    pub fn latency(&self) -> &DurationHistogram {
        &self.inner.latency
    }

    /// The work the pool runs.
    pub fn work(&self) -> &W {
        &self.inner.work
    }
}

impl<W: Work> Inner<W> {
    fn estimate_ms(&self, position: u64) -> u64 {
        let per_job_us = self.service_us.load(Ordering::Relaxed);
        position.saturating_mul(per_job_us) / (self.workers as u64 * 1000)
    }

    fn status_of(&self, t: &Ticket<W::Outcome>, dispatched: u64) -> TicketStatus<W::Outcome> {
        if let Some(outcome) = t.outcome.borrow().clone() {
            return TicketStatus::Done(outcome);
        }
        if t.working {
            return TicketStatus::Working;
        }
        let position = t.seq.saturating_sub(dispatched) + 1;
        TicketStatus::Queued {
            position,
            estimate_ms: self.estimate_ms(position),
        }
    }

    /// Takes the head of the queue, with the batchable jobs right behind it
    /// when it is batchable, and marks their tickets working.
    fn take_batch(&self) -> Vec<Queued<W::Job>> {
        let mut state = self.state.lock();
        let mut batch = Vec::new();
        while let Some(front) = state.waiting.front() {
            let joins =
                batch.is_empty() || (batch.len() < W::BATCH && self.work.batchable(&front.job));
            if !joins {
                break;
            }
            let Some(q) = state.waiting.pop_front() else {
                break;
            };
            let alone = !self.work.batchable(&q.job);
            batch.push(q);
            if alone {
                break;
            }
        }
        state.dispatched += batch.len() as u64;
        for q in &batch {
            if let Some(t) = state.tickets.get_mut(&q.ticket) {
                t.working = true;
            }
        }
        batch
    }

    fn finished(&self, submitted: Instant) {
        self.latency.record(submitted.elapsed());
        self.admitted.fetch_add(1, Ordering::Relaxed);
    }

    fn record_service(&self, took: Duration) {
        let us = u64::try_from(took.as_micros()).unwrap_or(u64::MAX).max(1);
        let old = self.service_us.load(Ordering::Relaxed);
        self.service_us
            .store(old - old / 16 + us / 16, Ordering::Relaxed);
    }
}

/// Hands queued jobs to free workers, in order, until the admission is dropped.
async fn dispatch<W: Work>(weak: std::sync::Weak<Inner<W>>) {
    loop {
        let Some(inner) = weak.upgrade() else { return };
        let has_job = !inner.state.lock().waiting.is_empty();
        if !has_job {
            // Wake up now and then to notice a dropped admission.
            let queued = inner.job_queued.notified();
            let _ = tokio::time::timeout(Duration::from_secs(1), queued).await;
            continue;
        }
        let permits = Arc::clone(&inner.permits);
        drop(inner);
        let Ok(permit) = permits.acquire_owned().await else {
            return;
        };
        let Some(inner) = weak.upgrade() else { return };
        let batch = inner.take_batch();
        if batch.is_empty() {
            continue;
        }
        tokio::spawn(async move {
            let started = Instant::now();
            let mut tickets = Vec::with_capacity(batch.len());
            let mut jobs = Vec::with_capacity(batch.len());
            for q in batch {
                tickets.push((q.ticket, q.submitted));
                jobs.push(q.job);
            }
            let outcomes = if jobs.len() == 1 {
                let job = jobs.pop().expect("one job");
                vec![inner.work.run(job).await]
            } else {
                inner.work.run_batch(jobs).await
            };
            inner.record_service(started.elapsed() / tickets.len() as u32);
            drop(permit);
            for (_, submitted) in &tickets {
                inner.finished(*submitted);
            }
            let now = Instant::now();
            let mut state = inner.state.lock();
            for ((ticket, _), outcome) in tickets.iter().zip(outcomes) {
                if let Some(t) = state.tickets.get_mut(ticket) {
                    t.finished_at = Some(now);
                    t.outcome.send_replace(Some(outcome));
                }
            }
        });
    }
}

/// Drops answered tickets nobody collected within the TTL.
async fn sweep<W: Work>(weak: std::sync::Weak<Inner<W>>) {
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let Some(inner) = weak.upgrade() else { return };
        let ttl = inner.ticket_ttl;
        inner
            .state
            .lock()
            .tickets
            .retain(|_, t| t.finished_at.is_none_or(|at| at.elapsed() < ttl));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sleeps a little and echoes its job.
    struct Echo;

    impl Work for Echo {
        type Job = u32;
        type Outcome = u32;
        const BATCH: usize = 4;
        /// Even jobs batch, odd ones run alone.
        fn batchable(&self, job: &u32) -> bool {
            job.is_multiple_of(2)
        }
        async fn run(&self, job: u32) -> u32 {
            tokio::time::sleep(Duration::from_millis(2)).await;
            job
        }
        async fn run_batch(&self, jobs: Vec<u32>) -> Vec<u32> {
            assert!(
                jobs.len() <= 4 && jobs.iter().all(|j| j % 2 == 0),
                "{jobs:?}"
            );
            tokio::time::sleep(Duration::from_millis(2)).await;
            jobs.into_iter().map(|j| j + 1000).collect()
        }
        fn ticket(&self, job: &u32, issued: Issued) -> String {
            format!("{job}-{}", issued.seq)
        }
    }

    #[tokio::test]
    async fn batchable_neighbours_share_a_batch_in_order() {
        let a = Admission::start(Echo, 1, 100, Duration::from_secs(5));
        let hold = Arc::clone(&a.inner.permits).acquire_owned().await.unwrap();
        let mut tickets = Vec::new();
        for job in [2, 4, 6, 8, 10, 3, 12] {
            let Ok(Submitted::Queued { ticket, .. }) = a.submit(job).await else {
                panic!("queued")
            };
            tickets.push(ticket);
        }
        drop(hold);
        let mut outcomes = Vec::new();
        for t in &tickets {
            match a.wait(t, Duration::from_secs(5)).await {
                Some(TicketStatus::Done(o)) => outcomes.push(o),
                other => panic!("{other:?}"),
            }
        }
        // Batches: [2,4,6,8], [10] (3 may not join), [3] alone, [12] alone at the end.
        assert_eq!(outcomes, vec![1002, 1004, 1006, 1008, 10, 3, 12]);
    }

    #[tokio::test]
    async fn an_idle_pool_answers_at_once() {
        let a = Admission::start(Echo, 2, 10, Duration::from_secs(5));
        assert_eq!(a.submit(7).await, Ok(Submitted::Done(7)));
        assert_eq!(a.snapshot().admitted, 1);
        assert_eq!(a.snapshot().queued_total, 0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_saturated_pool_queues_in_order_and_positions_only_fall() {
        let a = Admission::start(Echo, 1, 1_000, Duration::from_secs(5));
        let mut tickets = Vec::new();
        let mut submitted = Vec::new();
        for job in 0..50u32 {
            let a = a.clone();
            submitted.push(tokio::spawn(async move { a.submit(job).await }));
        }
        for s in submitted {
            match s.await.unwrap().unwrap() {
                Submitted::Done(_) => {}
                Submitted::Queued { ticket, status } => {
                    let TicketStatus::Queued { position, .. } = status else {
                        panic!("a new ticket is queued: {status:?}")
                    };
                    tickets.push((ticket, position));
                }
            }
        }
        assert!(!tickets.is_empty(), "one worker and 50 jobs must queue");
        for (ticket, mut last) in tickets {
            loop {
                match a.wait(&ticket, Duration::from_millis(3)).await.unwrap() {
                    TicketStatus::Queued { position, .. } => {
                        assert!(position <= last, "{position} after {last}");
                        last = position;
                    }
                    TicketStatus::Working => last = 0,
                    TicketStatus::Done(_) => break,
                }
            }
        }
        let s = a.snapshot();
        assert_eq!(s.admitted, 50);
        assert_eq!(s.queue_depth, 0);
        assert_eq!(s.busy, 0);
        assert!(a.status("no-such-ticket").is_none());
    }

    #[tokio::test]
    async fn a_full_queue_refuses_with_a_retry_hint() {
        let a = Admission::start(Echo, 1, 2, Duration::from_secs(5));
        let _hold = Arc::clone(&a.inner.permits).acquire_owned().await.unwrap();
        assert!(matches!(a.submit(1).await, Ok(Submitted::Queued { .. })));
        assert!(matches!(a.submit(2).await, Ok(Submitted::Queued { .. })));
        let err = a.submit(3).await.unwrap_err();
        assert!(err.retry_after_ms >= 1_000);
        assert_eq!(a.snapshot().refused_full, 1);
    }

    #[tokio::test]
    async fn collected_outcomes_stay_until_the_ttl() {
        let a = Admission::start(Echo, 1, 10, Duration::from_millis(1));
        let hold = Arc::clone(&a.inner.permits).acquire_owned().await.unwrap();
        let Ok(Submitted::Queued { ticket, .. }) = a.submit(9).await else {
            panic!("queued")
        };
        drop(hold);
        assert_eq!(
            a.wait(&ticket, Duration::from_secs(5)).await,
            Some(TicketStatus::Done(9))
        );
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        assert_eq!(a.status(&ticket), None);
    }
}
