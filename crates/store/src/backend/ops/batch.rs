//! The batching writer's batches: every write of a batch straight through in one
//! savepoint, else each write in its own so that one bad write fails alone.

use super::{Conn, apply_matches, apply_progress};
use crate::clock::now_ms;
use crate::error::StoreError;
use crate::model::{MatchRecorded, MatchResult, Write, WriteAck};
use crate::savepoint::{BATCH, BATCH_WRITE};

async fn apply_write(conn: &mut Conn, w: &Write, now: i64) -> Result<WriteAck, StoreError> {
    match w {
        Write::MatchResult(m) => {
            let mut out = Vec::with_capacity(1);
            apply_matches(conn, &[m], now, &mut out).await?;
            Ok(WriteAck::Match(
                out.first()
                    .copied()
                    .unwrap_or(MatchRecorded::AlreadyRecorded),
            ))
        }
        Write::Progress { account_id, xp } => apply_progress(conn, *account_id, *xp, now)
            .await
            .map(|xp| WriteAck::Progress { xp }),
    }
}

/// The fast path of [`apply_batch`]: every match result of the batch in grouped
/// multi-row statements, then each progress write.
async fn apply_batch_whole(
    conn: &mut Conn,
    writes: &[Write],
    now: i64,
    acks: &mut Vec<Result<WriteAck, StoreError>>,
) -> Result<(), StoreError> {
    let matches: Vec<&MatchResult> = writes
        .iter()
        .filter_map(|w| match w {
            Write::MatchResult(m) => Some(m),
            Write::Progress { .. } => None,
        })
        .collect();
    let mut recorded = Vec::with_capacity(matches.len());
    apply_matches(conn, &matches, now, &mut recorded).await?;
    let mut recorded = recorded.into_iter();
    for w in writes {
        let ack = match w {
            Write::MatchResult(_) => {
                WriteAck::Match(recorded.next().unwrap_or(MatchRecorded::AlreadyRecorded))
            }
            Write::Progress { account_id, xp } => WriteAck::Progress {
                xp: apply_progress(conn, *account_id, *xp, now).await?,
            },
        };
        acks.push(Ok(ack));
    }
    Ok(())
}

/// Applies a batch of the batching writer, returning one result per write, in
/// order. The fast path applies every write straight through, inside a savepoint;
/// if any fails, that savepoint is rolled back and the batch is applied again with
/// a savepoint per write, so one bad write fails alone. `Err` only when the
/// savepoints themselves fail (the transaction is then unusable).
pub(crate) async fn apply_batch(
    conn: &mut Conn,
    writes: &[Write],
) -> Result<Vec<Result<WriteAck, StoreError>>, StoreError> {
    let now = now_ms();
    let mut acks = Vec::with_capacity(writes.len());
    BATCH.set(&mut *conn).await?;
    let clean = apply_batch_whole(conn, writes, now, &mut acks)
        .await
        .is_ok();
    BATCH.end(&mut *conn, clean).await?;
    if clean {
        return Ok(acks);
    }
    acks.clear();
    for w in writes {
        BATCH_WRITE.set(&mut *conn).await?;
        let res = apply_write(conn, w, now).await;
        BATCH_WRITE.end(&mut *conn, res.is_ok()).await?;
        acks.push(res);
    }
    Ok(acks)
}
