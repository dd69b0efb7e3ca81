//! The SQLite write path: one connection, one task, group commits.
//!
//! SQLite admits one writer at a time. Rather than pooled connections taking turns
//! on its lock (each `BEGIN IMMEDIATE ... COMMIT` paying its own fsync, and holding
//! the turn while it waits for a pooled connection behind the readers), every write
//! of a [`Store`](crate::store::Store) is queued to one task that owns the write
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

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use sqlx::{SqliteConnection, SqlitePool};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use crate::backend::WriteFuture;
use crate::error::StoreError;
use crate::savepoint::GROUP_WRITE;

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
    /// Group transactions committed so far (the tests read it to know how writes
    /// were grouped).
    #[cfg_attr(not(test), allow(dead_code))]
    groups: Arc<AtomicU64>,
}

impl SqliteWriter {
    /// Starts the writer task on the current tokio runtime. `connection` is where
    /// the write connection comes from: a pool of one connection of its own for a
    /// file, the store's only connection for an in-memory database. The task ends
    /// when every handle is gone and the queue is empty.
    pub(crate) fn spawn(connection: SqlitePool) -> Self {
        let (queue, rx) = mpsc::channel(QUEUE);
        let groups = Arc::new(AtomicU64::new(0));
        tokio::spawn(run(connection.clone(), rx, groups.clone()));
        Self {
            queue,
            connection,
            groups,
        }
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

async fn run(
    connection: SqlitePool,
    mut queue: mpsc::Receiver<Box<dyn Job>>,
    groups: Arc<AtomicU64>,
) {
    let mut group: Vec<Box<dyn Job>> = Vec::with_capacity(MAX_GROUP);
    while let Some(first) = queue.recv().await {
        group.push(first);
        let committed = match connection.acquire().await {
            Ok(mut conn) => {
                let committed = commit_group(&mut conn, &mut group, &mut queue).await;
                if committed.is_err() {
                    // Leave no transaction open for the next group (an error here
                    // only says none was left open).
                    let _ = sqlx::raw_sql("ROLLBACK").execute(&mut *conn).await;
                }
                committed
            }
            Err(e) => Err(e),
        };
        let aborted = match committed {
            Ok(()) => {
                groups.fetch_add(1, Ordering::Relaxed);
                None
            }
            Err(e) => Some(e.to_string()),
        };
        for job in group.drain(..) {
            job.answer(aborted.as_deref());
        }
    }
}

/// Runs `group` (and the writes that queue up meanwhile, which it appends) in
/// one transaction, each in a savepoint, and commits. On `Err` the transaction
/// may still be open: the caller rolls it back.
async fn commit_group(
    conn: &mut SqliteConnection,
    group: &mut Vec<Box<dyn Job>>,
    queue: &mut mpsc::Receiver<Box<dyn Job>>,
) -> Result<(), sqlx::Error> {
    sqlx::raw_sql("BEGIN IMMEDIATE").execute(&mut *conn).await?;
    let started = Instant::now();
    let mut next = 0;
    loop {
        while let Some(job) = group.get_mut(next) {
            GROUP_WRITE.set(&mut *conn).await?;
            let ok = job.run(conn).await;
            GROUP_WRITE.end(&mut *conn, ok).await?;
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
    sqlx::raw_sql("COMMIT").execute(conn).await.map(drop)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions};
    use sqlx::{Row as _, SqlitePool};

    use super::{QUEUE, SqliteWriter};
    use crate::error::StoreError;

    async fn table(test: &str) -> SqlitePool {
        let dir = std::env::temp_dir().join(format!("hightick-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let options = SqliteConnectOptions::new()
            .filename(dir.join("w.db"))
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal);
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options)
            .await
            .unwrap();
        sqlx::query("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL CHECK (v >= 0))")
            .execute(&pool)
            .await
            .unwrap();
        pool
    }

    /// Inserts `(k, v)` on the writer.
    async fn put(w: &SqliteWriter, k: &str, v: i64) -> Result<u64, StoreError> {
        let k = k.to_owned();
        w.write(move |conn| {
            Box::pin(async move {
                let done = sqlx::query("INSERT INTO t (k, v) VALUES ($1, $2)")
                    .bind(&k)
                    .bind(v)
                    .execute(conn)
                    .await?;
                Ok(done.rows_affected())
            })
        })
        .await
    }

    async fn keys(pool: &SqlitePool) -> Vec<String> {
        sqlx::query("SELECT k FROM t ORDER BY k")
            .fetch_all(pool)
            .await
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect()
    }

    /// Spawns the writes while the test holds the write connection, and lets it
    /// go once every write waits behind the one the writer took: all of them land
    /// in one group.
    async fn in_one_group<T: Send + 'static>(
        pool: &SqlitePool,
        w: &SqliteWriter,
        spawn: impl FnOnce() -> Vec<tokio::task::JoinHandle<T>>,
    ) -> Vec<T> {
        let held = pool.acquire().await.unwrap();
        let writes = spawn();
        let n = writes.len();
        while QUEUE - w.queue.capacity() < n - 1 {
            tokio::task::yield_now().await;
        }
        // n - 1 queued: either the writer holds the n-th (waiting for the
        // held connection) or the n-th has not been queued yet. Give the
        // latter a moment to arrive, so all n land in one group either way.
        let grace = tokio::time::Instant::now() + std::time::Duration::from_millis(500);
        while QUEUE - w.queue.capacity() < n && tokio::time::Instant::now() < grace {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        drop(held);
        let mut out = Vec::with_capacity(n);
        for h in writes {
            out.push(h.await.unwrap());
        }
        out
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failing_write_rolls_back_alone_and_its_group_commits() {
        let pool = table("writer_isolation").await;
        let w = SqliteWriter::spawn(pool.clone());
        let results = in_one_group(&pool, &w, || {
            ["a", "b", "a", "c", "neg", "d"]
                .into_iter()
                .map(|k| {
                    let w = w.clone();
                    let v = if k == "neg" { -1 } else { 1 };
                    tokio::spawn(async move { put(&w, k, v).await })
                })
                .collect()
        })
        .await;
        assert_eq!(w.groups.load(std::sync::atomic::Ordering::Relaxed), 1);
        let failed: Vec<bool> = results.iter().map(Result::is_err).collect();
        // Which "a" comes first depends on the spawn order; one of them fails.
        assert_eq!(failed.iter().filter(|f| **f).count(), 2, "{results:?}");
        assert!(failed[4], "the CHECK violation fails: {results:?}");
        assert!(
            results.iter().flatten().all(|n| *n == 1),
            "the others each inserted their row"
        );
        assert_eq!(keys(&pool).await, ["a", "b", "c", "d"]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_broken_transaction_aborts_its_whole_group_and_the_next_one_works() {
        let pool = table("writer_abort").await;
        let w = SqliteWriter::spawn(pool.clone());
        let results = in_one_group(&pool, &w, || {
            let mut writes = Vec::new();
            for k in ["x", "y"] {
                let w = w.clone();
                writes.push(tokio::spawn(async move { put(&w, k, 1).await }));
            }
            // A write that ends the group's transaction under the writer's feet.
            let breaker = w.clone();
            writes.push(tokio::spawn(async move {
                breaker
                    .write(|conn| {
                        Box::pin(async move {
                            sqlx::raw_sql("ROLLBACK").execute(conn).await?;
                            Ok(0)
                        })
                    })
                    .await
            }));
            writes
        })
        .await;
        for r in &results {
            assert!(
                matches!(r, Err(StoreError::BatchAborted { .. })),
                "{results:?}"
            );
        }
        assert!(
            keys(&pool).await.is_empty(),
            "nothing of the group is stored"
        );
        // The writer carries on.
        assert_eq!(put(&w, "z", 1).await.unwrap(), 1);
        assert_eq!(keys(&pool).await, ["z"]);
        tokio::time::timeout(Duration::from_secs(10), w.close())
            .await
            .unwrap();
    }
}
