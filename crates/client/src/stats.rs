//! [`ClientStats`]: what a [`GameClient`](crate::GameClient) counted.

use std::time::Duration;

/// Counters of one client, since it was created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClientStats {
    /// Snapshots applied to the world.
    pub snapshots_applied: u64,
    /// Snapshots dropped whole (waiting for a full resync, or too old).
    pub snapshots_dropped: u64,
    /// Full-resync snapshots applied.
    pub full_resyncs: u64,
    /// Messages (snapshots or events) that failed to decode.
    pub decode_errors: u64,
    /// Times the client found its world inconsistent with the server's.
    pub desyncs: u64,
    /// Resync requests sent.
    pub resyncs_requested: u64,
    /// Events received and decoded.
    pub events: u64,
    /// Events dropped because the caller did not poll them in time.
    pub events_dropped: u64,
    /// Input batches queued for sending.
    pub inputs_sent: u64,
    /// Datagram bytes received.
    pub bytes_in: u64,
    /// Datagram bytes sent.
    pub bytes_out: u64,
    /// Datagrams received.
    pub packets_in: u64,
    /// Datagrams sent.
    pub packets_out: u64,
    /// Time between the last two snapshots that arrived.
    pub last_snapshot_interval: Option<Duration>,
}
