//! The game-independent `#[repr(C)]` records of the C ABI: settings,
//! stats, tick sync, connection state, snapshot info.

use hightick_client::GameClientConfig;

use crate::error::FfiError;

/// Settings of a connection; `hightick_config_default` fills the defaults.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HightickConfig {
    /// The server's tick rate, for the server tick estimate (1..=1024;
    /// the match's mode says it: 128 for the arena's `5v5`).
    pub tick_rate_hz: u32,
    /// Entity slots of the client's world: at least the match's entity
    /// count (1..=65536).
    pub max_entities: u32,
    /// Events held until polled, older ones dropped past it (1..=65536).
    pub event_capacity: u32,
}

impl Default for HightickConfig {
    fn default() -> Self {
        let d = GameClientConfig::default();
        Self {
            tick_rate_hz: d.tick_rate_hz,
            max_entities: d.entities as u32,
            event_capacity: d.event_capacity as u32,
        }
    }
}

impl HightickConfig {
    /// The client library's settings, or the field out of range.
    pub fn to_client(self) -> Result<GameClientConfig, FfiError> {
        let check = |v: u32, max: u32, field| {
            if (1..=max).contains(&v) {
                Ok(v)
            } else {
                Err(FfiError::InvalidArgument {
                    field,
                    reason: "out of range (see HightickConfig)",
                })
            }
        };
        Ok(GameClientConfig {
            tick_rate_hz: check(self.tick_rate_hz, 1024, "config.tick_rate_hz")?,
            entities: check(self.max_entities, 65536, "config.max_entities")? as usize,
            event_capacity: check(self.event_capacity, 65536, "config.event_capacity")? as usize,
            ..GameClientConfig::default()
        })
    }
}

/// The connection's measurements and counters.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct HightickStats {
    /// Snapshots applied to the world.
    pub snapshots_applied: u64,
    /// Snapshots dropped whole (waiting for a resync, or too old).
    pub snapshots_dropped: u64,
    /// Full-state resyncs applied.
    pub full_resyncs: u64,
    /// Messages that failed to decode.
    pub decode_errors: u64,
    /// Events received.
    pub events: u64,
    /// Events dropped because they were not polled in time.
    pub events_dropped: u64,
    /// Input batches sent.
    pub inputs_sent: u64,
    /// Datagrams received.
    pub packets_in: u64,
    /// Datagrams sent.
    pub packets_out: u64,
    /// Bytes received.
    pub bytes_in: u64,
    /// Bytes sent.
    pub bytes_out: u64,
    /// Datagrams the socket refused to send.
    pub send_errors: u64,
    /// Smoothed round-trip time, milliseconds.
    pub rtt_ms: f32,
    /// Round-trip time variation, milliseconds.
    pub rtt_variation_ms: f32,
    /// Share of packets lost, 0..1.
    pub packet_loss: f32,
    /// Snapshot jitter: standard deviation of the time between snapshots,
    /// milliseconds.
    pub jitter_ms: f32,
    /// Age of the newest snapshot at the newest update, milliseconds
    /// (negative before the first).
    pub snapshot_age_ms: f32,
}

/// What the client knows of the server's clock, for the caller's own tick
/// sync: the server tick at the caller's time `t_us` is about
/// `(t_us + clock_offset_us) * tick_rate_hz / 1e6`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct HightickTickSync {
    /// The server tick estimated at the newest update (fractional).
    pub server_tick: f64,
    /// Server time minus the caller's clock, microseconds.
    pub clock_offset_us: f64,
    /// The newest snapshot's server tick.
    pub snapshot_tick: u32,
    /// The tick rate the estimate counts with.
    pub tick_rate_hz: u32,
}

/// Connection states (`HightickConnection::state`).
pub const HIGHTICK_STATE_CONNECTING: u8 = 0;
/// Connected: snapshots and inputs flow.
pub const HIGHTICK_STATE_CONNECTED: u8 = 1;
/// Over (see `HightickConnection::reason`).
pub const HIGHTICK_STATE_DISCONNECTED: u8 = 2;

/// Why a connection ended (`HightickConnection::reason`): still up.
pub const HIGHTICK_REASON_NONE: u8 = 0;
/// This side closed it.
pub const HIGHTICK_REASON_CLOSED_LOCALLY: u8 = 1;
/// The server closed it.
pub const HIGHTICK_REASON_CLOSED_BY_SERVER: u8 = 2;
/// Nothing arrived from the server for the token's timeout.
pub const HIGHTICK_REASON_TIMED_OUT: u8 = 3;
/// Every server in the token refused (full).
pub const HIGHTICK_REASON_DENIED: u8 = 4;
/// No server in the token answered the handshake in time.
pub const HIGHTICK_REASON_CONNECT_TIMED_OUT: u8 = 5;
/// The token expired before a server accepted it.
pub const HIGHTICK_REASON_TOKEN_EXPIRED: u8 = 6;

/// The connection's state.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HightickConnection {
    /// `HIGHTICK_STATE_*`.
    pub state: u8,
    /// `HIGHTICK_REASON_*` once disconnected.
    pub reason: u8,
}

/// What `hightick_poll_snapshot` handed over.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HightickSnapshotInfo {
    /// The newest snapshot's server tick.
    pub server_tick: u32,
    /// Entities the world holds (written to the caller's buffer).
    pub entity_count: u32,
    /// Snapshots applied so far.
    pub snapshots_applied: u64,
}

/// The local player as predicted (`hightick_prediction`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct HightickPrediction {
    /// The newest server tick predicted (the newest input's tick).
    pub tick: u32,
    /// The local player's entity id (what `hightick_entity` takes).
    pub entity: u32,
    /// Where to draw the player: the prediction plus what is left of the
    /// newest correction while it is smoothed away. Metres, Y up.
    pub position: [f32; 3],
    /// The prediction itself, without smoothing. Metres, Y up.
    pub predicted: [f32; 3],
}

/// What the local player's predictor counted (`hightick_prediction_stats`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct HightickPredictionStats {
    /// Authoritative states compared with the prediction of their tick.
    pub compared: u64,
    /// Of those, the ones that disagreed: each was corrected.
    pub mispredicted: u64,
    /// Authoritative states taken without comparison: the first, a respawn,
    /// or one older than the inputs kept.
    pub resets: u64,
    /// Ticks replayed after corrections.
    pub replayed: u64,
    /// How far the newest correction moved the player, metres (0 before
    /// any).
    pub last_correction_m: f32,
    /// Mean correction, metres (0 before any).
    pub mean_correction_m: f32,
    /// 99th percentile correction, metres.
    pub p99_correction_m: f32,
    /// Largest correction, metres (corrections past 100 m count as 100 m).
    pub max_correction_m: f32,
}
