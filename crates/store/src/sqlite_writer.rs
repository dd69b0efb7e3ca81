//! The SQLite write path: one connection, one task, group commits.
//!
//! SQLite admits one writer at a time. Rather than pooled connections taking turns
//! on its lock (each `BEGIN IMMEDIATE ... COMMIT` paying its own fsync, and holding
//! the turn while it waits for a pooled connection behind the readers), every write
//! of a [`Store`](crate::Store) is queued to one task that owns the write
//! connection. The task takes a write, opens `BEGIN IMMEDIATE`, and runs that write
//! and every write that queues up meanwhile (at most [`MAX_GROUP`] writes or
//! [`MAX_GROUP_SPAN`]) each in its own savepoint; then it commits once (one fsync:
//! `synchronous=FULL`) and only then answers each caller.
//!
//! - A write that fails is rolled back to its savepoint and answered with its own
//!   error; the rest of its group commits.
//! - If the transaction itself fails (`BEGIN`, a savepoint, `COMMIT`), nothing of
//!   the group is stored and each write that had succeeded is answered with
//!   [`StoreError::BatchAborted`].
//! - Writes run one after another on one connection, in queue order, so each sees
//!   every write before it (an idempotency key claimed earlier in the same group
//!   is found, a balance spent earlier is gone).
//! - A write that was queued runs even if its caller stops waiting (a retry with
//!   the same idempotency key then finds it).
//!
//! Readers use the store's pool of other connections; in WAL mode they read the
//! last commit without waiting for the writer.

use std::time::Duration;

use sqlx::{Connection as _, SqliteConnection, SqlitePool};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use crate::StoreError;
use crate::backend::WriteFuture;

/// Most writes one group transaction carries.
pub(crate) const MAX_GROUP: usize = 512;
/// Longest a group keeps taking new writes before it commits.
pub(crate) const MAX_GROUP_SPAN: Duration = Duration::from_millis(20);
/// Writes that may wait for the writer; submitters wait when it is full.
const QUEUE: usize = 16 * 1024;

/// A queued write, its type erased so one queue carries every operation.
trait Job: Send {
    /// Runs the write on `conn` (inside its savepoint); true if it succeeded.
    fn run<'c>(
        &'c mut self,
        conn: &'c mut SqliteConnection,
    ) -> std::pin::Pin<Box<dyn Future<Output = bool> + Send + 'c>>;

    /// Answers the caller once the group's transaction has ended: with its own
    /// result if the group committed, else with `aborted` (unless it had failed
    /// on its own).
    fn answer(self: Box<Self>, aborted: Option<&str>);
}

/// One write and its caller.
struct Pending<T, F> {
    write: Option<F>,
    result: Option<Result<T, StoreError>>,
    reply: oneshot::Sender<Result<T, StoreError>>,
}

impl<T, F> Job for Pending<T, F>
where
    T: Send + 'static,
    F: for<'c> FnOnce(&'c mut SqliteConnection) -> WriteFuture<'c, T> + Send + 'static,
{
    fn run<'c>(
        &'c mut self,
        conn: &'c mut SqliteConnection,
    ) -> std::pin::Pin<Box<dyn Future<Output = bool> + Send + 'c>> {
        Box::pin(async move {
            let Some(write) = self.write.take() else {
                return false;
            };
            let result = write(conn).await;
            let ok = result.is_ok();
            self.result = Some(result);
            ok
        })
    }

    fn answer(self: Box<Self>, aborted: Option<&str>) {
        let answer = match (self.result, aborted) {
            (Some(Err(own)), _) => Err(own),
            (Some(Ok(done)), None) => Ok(done),
            (_, reason) => Err(StoreError::BatchAborted {
                reason: reason.unwrap_or("the writer stopped").to_owned(),
            }),
        };
        let _ = self.reply.send(answer);
    }
}

/// The handle every clone of a SQLite store writes through.
#[derive(Debug, Clone)]
pub(crate) struct SqliteWriter {
    queue: mpsc::Sender<Box<dyn Job>>,
    connection: SqlitePool,
}

impl SqliteWriter {
    /// Starts the writer task on the current tokio runtime. `connection` is where
    /// the write connection comes from: a pool of one connection of its own for a
    /// file, the store's only connection for an in-memory database. The task ends
    /// when every handle is gone and the queue is empty.
    pub(crate) fn spawn(connection: SqlitePool) -> Self {
        let (queue, rx) = mpsc::channel(QUEUE);
        tokio::spawn(run(connection.clone(), rx));
        Self { queue, connection }
    }

    /// Queues `write` and returns its result once its group has committed (or
    /// its own error, or [`StoreError::BatchAborted`] if the group's transaction
    /// failed).
    pub(crate) async fn write<T, F>(&self, write: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut SqliteConnection) -> WriteFuture<'c, T> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let job = Box::new(Pending {
            write: Some(write),
            result: None,
            reply,
        });
        self.queue
            .send(job)
            .await
            .map_err(|_| StoreError::WriterClosed)?;
        answer.await.map_err(|_| StoreError::WriterClosed)?
    }

    /// The pool the write connection comes from (migrations run on it).
    pub(crate) fn connection(&self) -> &SqlitePool {
        &self.connection
    }

    /// Closes the write connection once the group in flight has committed; later
    /// writes fail.
    pub(crate) async fn close(&self) {
        self.connection.close().await;
    }
}

async fn run(connection: SqlitePool, mut queue: mpsc::Receiver<Box<dyn Job>>) {
    let mut group: Vec<Box<dyn Job>> = Vec::with_capacity(MAX_GROUP);
    while let Some(first) = queue.recv().await {
        group.push(first);
        let aborted = commit_group(&connection, &mut group, &mut queue)
            .await
            .err()
            .map(|e| e.to_string());
        for job in group.drain(..) {
            job.answer(aborted.as_deref());
        }
    }
}

/// Runs `group` (and the writes that queue up meanwhile, which it appends) in
/// one transaction, each in a savepoint, and commits.
async fn commit_group(
    connection: &SqlitePool,
    group: &mut Vec<Box<dyn Job>>,
    queue: &mut mpsc::Receiver<Box<dyn Job>>,
) -> Result<(), sqlx::Error> {
    let mut conn = connection.acquire().await?;
    let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
    let started = Instant::now();
    let mut next = 0;
    loop {
        while let Some(job) = group.get_mut(next) {
            let mut savepoint = tx.begin().await?;
            if job.run(&mut savepoint).await {
                savepoint.commit().await?;
            } else {
                savepoint.rollback().await?;
            }
            next += 1;
        }
        if group.len() >= MAX_GROUP || started.elapsed() >= MAX_GROUP_SPAN {
            break;
        }
        match queue.try_recv() {
            Ok(job) => group.push(job),
            Err(_) => break,
        }
    }
    tx.commit().await
}
