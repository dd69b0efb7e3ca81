//! The shared registry of server hosts: heartbeats, silent hosts forgotten, and
//! allocation tallies taken only by hosts that have not heartbeat since.

use sqlx::Row as _;

use super::{Conn, Pool, Row};
use crate::error::StoreError;
use crate::registry::{HostBeat, HostTally, RegisteredHost, check_beat};

fn registered_host_from(row: &Row) -> Result<RegisteredHost, StoreError> {
    Ok(RegisteredHost {
        beat: HostBeat {
            host_id: row.try_get(0)?,
            admin: row.try_get(1)?,
            capacity: row.try_get(2)?,
            active: row.try_get(3)?,
            draining: row.try_get(4)?,
            region: row.try_get(5)?,
            game: row.try_get(6)?,
        },
        seen_ms: row.try_get(7)?,
        allocated: row.try_get(8)?,
        full_until_ms: row.try_get(9)?,
    })
}

/// Records heartbeat `b` at `seen_ms`: another host id on the same admin
/// address is dropped (the host restarted under a new id), and the host's row
/// is replaced (its allocations since and its full mark go).
pub(crate) async fn host_heartbeat(
    conn: &mut Conn,
    b: &HostBeat,
    seen_ms: i64,
) -> Result<(), StoreError> {
    check_beat(b)?;
    sqlx::query("DELETE FROM registered_hosts WHERE admin = $1 AND host_id <> $2")
        .bind(&b.admin)
        .bind(&b.host_id)
        .execute(&mut *conn)
        .await?;
    sqlx::query(
        "INSERT INTO registered_hosts (host_id, admin, capacity, active, draining, region, game, \
         seen_ms, allocated, full_until_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, NULL) \
         ON CONFLICT (host_id) DO UPDATE SET admin = excluded.admin, \
         capacity = excluded.capacity, active = excluded.active, draining = excluded.draining, \
         region = excluded.region, game = excluded.game, seen_ms = excluded.seen_ms, \
         allocated = 0, full_until_ms = NULL",
    )
    .bind(&b.host_id)
    .bind(&b.admin)
    .bind(b.capacity)
    .bind(b.active)
    .bind(b.draining)
    .bind(&b.region)
    .bind(&b.game)
    .bind(seen_ms)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Deletes the hosts silent since before `before_ms`; returns how many.
pub(crate) async fn hosts_forget(conn: &mut Conn, before_ms: i64) -> Result<u64, StoreError> {
    let done = sqlx::query("DELETE FROM registered_hosts WHERE seen_ms < $1")
        .bind(before_ms)
        .execute(&mut *conn)
        .await?;
    Ok(done.rows_affected())
}

/// Every host heard from at or after `seen_since_ms`, by host id.
pub(crate) async fn hosts_registered(
    pool: &Pool,
    seen_since_ms: i64,
) -> Result<Vec<RegisteredHost>, StoreError> {
    let rows = sqlx::query(
        "SELECT host_id, admin, capacity, active, draining, region, game, seen_ms, allocated, \
         full_until_ms FROM registered_hosts WHERE seen_ms >= $1 ORDER BY host_id",
    )
    .bind(seen_since_ms)
    .fetch_all(pool)
    .await?;
    rows.iter().map(registered_host_from).collect()
}

/// Adds each tally to its host, if the host has not heartbeat since the
/// tally's read; returns how many hosts took theirs.
pub(crate) async fn hosts_tally(conn: &mut Conn, tallies: &[HostTally]) -> Result<u64, StoreError> {
    let mut applied = 0;
    for t in tallies {
        let done = sqlx::query(
            "UPDATE registered_hosts SET allocated = allocated + $3, \
             full_until_ms = COALESCE($4, full_until_ms) WHERE host_id = $1 AND seen_ms = $2",
        )
        .bind(&t.host_id)
        .bind(t.seen_ms)
        .bind(t.allocated)
        .bind(t.full_until_ms)
        .execute(&mut *conn)
        .await?;
        applied += done.rows_affected();
    }
    Ok(applied)
}
