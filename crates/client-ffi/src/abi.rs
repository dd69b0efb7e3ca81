//! The C ABI's calls, generic over the game: [`export!`](crate::export)
//! emits one `extern "C"` function per call that forwards here.
//!
//! Every call runs inside [`guarded`]: a panic is caught and becomes
//! [`HightickStatus::Panic`], an error becomes its status and the calling
//! thread's last error. Pointers are checked for null (and alignment)
//! before use; outputs are written through raw pointers, never through
//! references to memory the caller may not have initialised.

use std::ffi::c_char;
use std::mem::{align_of, size_of};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{SystemTime, UNIX_EPOCH};

use hightick_engine::{EntityId, Game};
use hightick_net::{ClientState, ConnectToken, DisconnectReason, NetError};
use hightick_proto::{InputCommand, InputPayload, PROTOCOL_ID};

use crate::error::FfiError;
use crate::frame_client::FrameClient;
use crate::game::FfiGame;
use crate::last_error;
use crate::prediction::LocalPlayer;
use crate::records::*;
use crate::registry::{HightickClient, Registry};
use crate::status::HightickStatus;

mod prediction;

pub use prediction::*;

/// One open connection behind a handle.
#[derive(Debug)]
pub struct Session<F: FfiGame> {
    client: FrameClient<F::Game>,
    /// `snapshots_applied` at the newest `poll_snapshot`.
    polled_snapshots: u64,
    /// An event taken from the core to see whether one was waiting.
    peeked: Option<<F::Game as Game>::Event>,
    /// The local player's predictor, once `hightick_prediction_start` ran.
    prediction: Option<Box<dyn LocalPlayer<F::Game>>>,
}

impl<F: FfiGame> Session<F> {
    /// The connection's driver.
    pub fn client(&self) -> &FrameClient<F::Game> {
        &self.client
    }
}

/// The registry of one game's sessions (a `static` in the game's library).
pub type Sessions<F> = Registry<Session<F>>;

/// Runs one call: a panic becomes [`HightickStatus::Panic`], an error its
/// status; both are recorded as the thread's last error.
pub fn guarded(call: impl FnOnce() -> Result<HightickStatus, FfiError>) -> HightickStatus {
    let error = match catch_unwind(AssertUnwindSafe(call)) {
        Ok(Ok(status)) => return status,
        Ok(Err(e)) => e,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&'static str>()
                .copied()
                .or_else(|| {
                    payload
                        .downcast_ref::<String>()
                        .map(|_| "panic (see stderr)")
                })
                .unwrap_or("panic");
            FfiError::Panic(what)
        }
    };
    last_error::record(&error);
    error.status()
}

fn check_pointer<T>(ptr: *const T, field: &'static str) -> Result<(), FfiError> {
    if ptr.is_null() {
        return Err(FfiError::NullPointer(field));
    }
    if !(ptr as usize).is_multiple_of(align_of::<T>()) {
        return Err(FfiError::InvalidArgument {
            field,
            reason: "misaligned for its type",
        });
    }
    Ok(())
}

/// Writes `value` to the caller's `out`.
///
/// # Safety
/// `out` is null or valid for a write of one `T`.
unsafe fn write_out<T>(out: *mut T, field: &'static str, value: T) -> Result<(), FfiError> {
    check_pointer(out, field)?;
    // SAFETY: non-null and aligned (checked); valid per the caller's contract.
    unsafe { out.write(value) };
    Ok(())
}

/// Reads the caller's record `input`.
///
/// # Safety
/// `input` is null or valid for a read of one `T`.
unsafe fn read_in<T: Copy>(input: *const T, field: &'static str) -> Result<T, FfiError> {
    check_pointer(input, field)?;
    // SAFETY: non-null and aligned (checked); valid per the caller's contract.
    Ok(unsafe { input.read() })
}

/// Checks a caller's buffer of `capacity` elements (null allowed when 0).
fn check_buffer<T>(ptr: *const T, capacity: usize, field: &'static str) -> Result<(), FfiError> {
    if capacity == 0 {
        return Ok(());
    }
    check_pointer(ptr, field)?;
    if capacity.saturating_mul(size_of::<T>().max(1)) > isize::MAX as usize {
        return Err(FfiError::InvalidArgument {
            field,
            reason: "capacity larger than any buffer",
        });
    }
    Ok(())
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `hightick_last_error`.
///
/// # Safety
/// `buf` is null or valid for `capacity` bytes; `out_len` is null or valid
/// for one write.
pub unsafe fn last_error(buf: *mut c_char, capacity: usize, out_len: *mut usize) -> HightickStatus {
    let copied = catch_unwind(AssertUnwindSafe(|| {
        last_error::with(|text| {
            let needed = text.len() + 1;
            if !out_len.is_null() && out_len.is_aligned() {
                // SAFETY: non-null and aligned; valid per the contract.
                unsafe { out_len.write(needed) };
            }
            if capacity < needed {
                return HightickStatus::BufferTooSmall;
            }
            if buf.is_null() {
                return HightickStatus::NullPointer;
            }
            // SAFETY: `buf` holds `capacity >= needed` bytes per the contract.
            unsafe {
                std::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), text.len());
                buf.add(text.len()).write(0);
            }
            HightickStatus::Ok
        })
    }));
    copied.unwrap_or(HightickStatus::Panic)
}

/// `hightick_config_default`.
///
/// # Safety
/// `out` is null or valid for one write.
pub unsafe fn config_default(out: *mut HightickConfig) -> HightickStatus {
    guarded(|| {
        // SAFETY: forwarded contract.
        unsafe { write_out(out, "out", HightickConfig::default()) }?;
        Ok(HightickStatus::Ok)
    })
}

/// `hightick_connect`.
///
/// # Safety
/// `token` is null or valid for `token_len` bytes; `config` is null or
/// valid for one read; `out` is null or valid for one write.
pub unsafe fn connect<F: FfiGame>(
    sessions: &Sessions<F>,
    token: *const u8,
    token_len: usize,
    config: *const HightickConfig,
    now_us: u64,
    out: *mut HightickClient,
) -> HightickStatus {
    guarded(|| {
        // SAFETY: forwarded contract.
        unsafe { write_out(out, "out", 0) }?;
        check_buffer(token, token_len.max(1), "token")?;
        // SAFETY: checked non-null; `token_len` bytes per the contract.
        let bytes = unsafe { std::slice::from_raw_parts(token, token_len) };
        let token = ConnectToken::decode(bytes).map_err(FfiError::InvalidToken)?;
        if token.protocol_id != PROTOCOL_ID {
            return Err(FfiError::InvalidToken(NetError::WrongProtocol {
                expected: PROTOCOL_ID,
                found: token.protocol_id,
            }));
        }
        let now_unix = unix_now();
        if token.expire_unix <= now_unix {
            return Err(FfiError::TokenExpired {
                expire_unix: token.expire_unix,
                now_unix,
            });
        }
        let config = if config.is_null() {
            HightickConfig::default()
        } else {
            // SAFETY: forwarded contract.
            unsafe { read_in(config, "config") }?
        };
        let mut client = FrameClient::<F::Game>::connect(token, config.to_client()?, now_us)?;
        client.core_mut().track_positions(F::position);
        let handle = sessions.open(Session {
            client,
            polled_snapshots: 0,
            peeked: None,
            prediction: None,
        })?;
        // SAFETY: checked above.
        unsafe { out.write(handle) };
        Ok(HightickStatus::Ok)
    })
}

/// `hightick_update`.
pub fn update<F: FfiGame>(
    sessions: &Sessions<F>,
    client: HightickClient,
    now_us: u64,
) -> HightickStatus {
    guarded(|| {
        sessions.with(client, |s| {
            s.client.update(now_us);
            if let Some(p) = s.prediction.as_mut() {
                p.reconcile(s.client.core().world());
            }
            Ok(HightickStatus::Ok)
        })
    })
}

/// `hightick_send_input`.
///
/// # Safety
/// `input` is null or valid for one read.
pub unsafe fn send_input<F: FfiGame>(
    sessions: &Sessions<F>,
    client: HightickClient,
    tick: u32,
    aim_tick: u32,
    input: *const F::Input,
) -> HightickStatus {
    guarded(|| {
        // SAFETY: forwarded contract.
        let input = unsafe { read_in(input, "input") }?;
        let payload = F::input(&input).map_err(FfiError::Input)?;
        // The client keeps the command for redundancy before encoding it:
        // one that cannot be encoded must not get in.
        payload.quantized().map_err(FfiError::Input)?;
        sessions.with(client, |s| {
            let command = InputCommand::new(tick, aim_tick, payload);
            if let Some(p) = s.prediction.as_mut() {
                p.predict(&command);
            }
            s.client.send_input(command)?;
            Ok(HightickStatus::Ok)
        })
    })
}

/// `hightick_poll_snapshot`.
///
/// # Safety
/// `info` and `out_count` are null or valid for one write; `entities` is
/// null or valid for `capacity` writes.
pub unsafe fn poll_snapshot<F: FfiGame>(
    sessions: &Sessions<F>,
    client: HightickClient,
    info: *mut HightickSnapshotInfo,
    entities: *mut F::Entity,
    capacity: usize,
    out_count: *mut usize,
) -> HightickStatus {
    guarded(|| {
        check_pointer(info, "info")?;
        // SAFETY: forwarded contract.
        unsafe { write_out(out_count, "out_count", 0) }?;
        check_buffer(entities, capacity, "entities")?;
        sessions.with(client, |s| {
            let core = s.client.core();
            let applied = core.stats().snapshots_applied;
            if applied == s.polled_snapshots {
                return Ok(HightickStatus::Empty);
            }
            let world = core.world();
            let count = world.len();
            // SAFETY: checked above.
            unsafe { out_count.write(count) };
            if count > capacity {
                return Err(FfiError::BufferTooSmall {
                    field: "entities",
                    capacity,
                    needed: count,
                });
            }
            for (i, e) in world.iter().take(capacity).enumerate() {
                // SAFETY: i < count <= capacity; the buffer holds `capacity`.
                unsafe { entities.add(i).write(F::entity(e, None)) };
            }
            let snapshot = HightickSnapshotInfo {
                server_tick: world.server_tick(),
                entity_count: count as u32,
                snapshots_applied: applied,
            };
            // SAFETY: checked above.
            unsafe { info.write(snapshot) };
            s.polled_snapshots = applied;
            Ok(HightickStatus::Ok)
        })
    })
}

/// `hightick_poll_events`.
///
/// # Safety
/// `out_count` is null or valid for one write; `events` is null or valid
/// for `capacity` writes.
pub unsafe fn poll_events<F: FfiGame>(
    sessions: &Sessions<F>,
    client: HightickClient,
    events: *mut F::Event,
    capacity: usize,
    out_count: *mut usize,
) -> HightickStatus {
    guarded(|| {
        // SAFETY: forwarded contract.
        unsafe { write_out(out_count, "out_count", 0) }?;
        check_buffer(events, capacity, "events")?;
        sessions.with(client, |s| {
            if s.peeked.is_none() {
                s.peeked = s.client.core_mut().poll_event();
            }
            if s.peeked.is_none() {
                return Ok(HightickStatus::Empty);
            }
            if capacity == 0 {
                // SAFETY: checked above.
                unsafe { out_count.write(1) };
                return Err(FfiError::BufferTooSmall {
                    field: "events",
                    capacity,
                    needed: 1,
                });
            }
            let mut n = 0;
            while n < capacity {
                let Some(event) = s.peeked.take().or_else(|| s.client.core_mut().poll_event())
                else {
                    break;
                };
                // SAFETY: n < capacity; the buffer holds `capacity`.
                unsafe { events.add(n).write(F::event(&event)) };
                n += 1;
            }
            // SAFETY: checked above.
            unsafe { out_count.write(n) };
            Ok(HightickStatus::Ok)
        })
    })
}

/// Writes what `read` finds in the session of `client` to the caller's
/// `out`: OK, or EMPTY (nothing written) when it finds nothing.
///
/// # Safety
/// `out` is null or valid for one write.
unsafe fn read_out<F: FfiGame, T>(
    sessions: &Sessions<F>,
    client: HightickClient,
    out: *mut T,
    read: impl FnOnce(&Session<F>) -> Result<Option<T>, FfiError>,
) -> HightickStatus {
    guarded(|| {
        check_pointer(out, "out")?;
        sessions.with(client, |s| match read(s)? {
            Some(value) => {
                // SAFETY: checked above; valid per the caller's contract.
                unsafe { out.write(value) };
                Ok(HightickStatus::Ok)
            }
            None => Ok(HightickStatus::Empty),
        })
    })
}

/// `hightick_entity`.
///
/// # Safety
/// `out` is null or valid for one write.
pub unsafe fn entity<F: FfiGame>(
    sessions: &Sessions<F>,
    client: HightickClient,
    id: u32,
    render_tick: f64,
    out: *mut F::Entity,
) -> HightickStatus {
    let Ok(id) = u16::try_from(id) else {
        return guarded(|| {
            Err(FfiError::InvalidArgument {
                field: "id",
                reason: "entity ids are below 65536",
            })
        });
    };
    // SAFETY: forwarded contract.
    unsafe {
        read_out(sessions, client, out, |s| {
            let core = s.client.core();
            Ok(core.world().get(EntityId(id)).map(|e| {
                let position = (render_tick.is_finite() && render_tick >= 0.0)
                    .then(|| core.interpolated(EntityId(id), render_tick as f32))
                    .flatten();
                F::entity(e, position)
            }))
        })
    }
}

/// `hightick_stats`.
///
/// # Safety
/// `out` is null or valid for one write.
pub unsafe fn stats<F: FfiGame>(
    sessions: &Sessions<F>,
    client: HightickClient,
    out: *mut HightickStats,
) -> HightickStatus {
    // SAFETY: forwarded contract.
    unsafe { read_out(sessions, client, out, |s| Ok(Some(stats_of(&s.client)))) }
}

fn stats_of<G: Game>(client: &FrameClient<G>) -> HightickStats {
    let core = client.core();
    let c = core.stats();
    let endpoint = core.net().endpoint();
    let interarrival = core.snapshot_interarrival();
    HightickStats {
        snapshots_applied: c.snapshots_applied,
        snapshots_dropped: c.snapshots_dropped,
        full_resyncs: c.full_resyncs,
        decode_errors: c.decode_errors,
        events: c.events,
        events_dropped: c.events_dropped,
        inputs_sent: c.inputs_sent,
        packets_in: c.packets_in,
        packets_out: c.packets_out,
        bytes_in: c.bytes_in,
        bytes_out: c.bytes_out,
        send_errors: client.send_errors(),
        rtt_ms: endpoint.rtt().as_secs_f32() * 1e3,
        rtt_variation_ms: endpoint.rtt_variation().as_secs_f32() * 1e3,
        packet_loss: endpoint.packet_loss(),
        jitter_ms: if interarrival.is_empty() {
            0.0
        } else {
            (interarrival.stdev() / 1e3) as f32
        },
        snapshot_age_ms: client
            .snapshot_age()
            .map_or(-1.0, |a| a.as_secs_f32() * 1e3),
    }
}

/// `hightick_avatar`.
///
/// # Safety
/// `out` is null or valid for one write.
pub unsafe fn avatar<F: FfiGame>(
    sessions: &Sessions<F>,
    client: HightickClient,
    out: *mut u32,
) -> HightickStatus {
    // SAFETY: forwarded contract.
    unsafe {
        read_out(sessions, client, out, |s| {
            Ok(s.client.core().world().avatar().map(|e| u32::from(e.0)))
        })
    }
}

/// `hightick_tick_sync`.
///
/// # Safety
/// `out` is null or valid for one write.
pub unsafe fn tick_sync<F: FfiGame>(
    sessions: &Sessions<F>,
    client: HightickClient,
    out: *mut HightickTickSync,
) -> HightickStatus {
    // SAFETY: forwarded contract.
    unsafe { read_out(sessions, client, out, |s| Ok(tick_sync_of(&s.client))) }
}

fn tick_sync_of<G: Game>(c: &FrameClient<G>) -> Option<HightickTickSync> {
    let now = c.now();
    let estimate = f64::from(c.core().server_tick_estimate(now)?);
    let rate = f64::from(c.tick_rate_hz());
    Some(HightickTickSync {
        server_tick: estimate,
        clock_offset_us: estimate / rate * 1e6 - c.clock().reading(now),
        snapshot_tick: c.core().world().server_tick(),
        tick_rate_hz: c.tick_rate_hz(),
    })
}

/// `hightick_connection`.
///
/// # Safety
/// `out` is null or valid for one write.
pub unsafe fn connection<F: FfiGame>(
    sessions: &Sessions<F>,
    client: HightickClient,
    out: *mut HightickConnection,
) -> HightickStatus {
    // SAFETY: forwarded contract.
    unsafe {
        read_out(sessions, client, out, |s| {
            Ok(Some(connection_of(s.client.core().state())))
        })
    }
}

fn connection_of(state: ClientState) -> HightickConnection {
    match state {
        ClientState::Connecting { .. } => HightickConnection {
            state: HIGHTICK_STATE_CONNECTING,
            reason: HIGHTICK_REASON_NONE,
        },
        ClientState::Connected => HightickConnection {
            state: HIGHTICK_STATE_CONNECTED,
            reason: HIGHTICK_REASON_NONE,
        },
        ClientState::Disconnected(reason) => HightickConnection {
            state: HIGHTICK_STATE_DISCONNECTED,
            reason: match reason {
                DisconnectReason::ClosedLocally => HIGHTICK_REASON_CLOSED_LOCALLY,
                DisconnectReason::ClosedByPeer | DisconnectReason::Replaced => {
                    HIGHTICK_REASON_CLOSED_BY_SERVER
                }
                DisconnectReason::TimedOut => HIGHTICK_REASON_TIMED_OUT,
                DisconnectReason::Denied => HIGHTICK_REASON_DENIED,
                DisconnectReason::ConnectTimedOut => HIGHTICK_REASON_CONNECT_TIMED_OUT,
                DisconnectReason::TokenExpired => HIGHTICK_REASON_TOKEN_EXPIRED,
            },
        },
    }
}

/// `hightick_disconnect`.
pub fn disconnect<F: FfiGame>(sessions: &Sessions<F>, client: HightickClient) -> HightickStatus {
    guarded(|| {
        sessions.with(client, |s| {
            s.client.disconnect();
            Ok(HightickStatus::Ok)
        })
    })
}

/// `hightick_close`.
pub fn close<F: FfiGame>(sessions: &Sessions<F>, client: HightickClient) -> HightickStatus {
    guarded(|| {
        sessions.close(client, |s| s.client.disconnect())?;
        Ok(HightickStatus::Ok)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_a_status_and_the_last_error_never_an_unwind() {
        let s = guarded(|| panic!("boom in the library"));
        assert_eq!(s, HightickStatus::Panic);
        last_error::with(|t| assert_eq!(t, "internal error: boom in the library"));
        let s = guarded(|| Err(FfiError::NullPointer("out")));
        assert_eq!(s, HightickStatus::NullPointer);
        last_error::with(|t| assert_eq!(t, "argument `out` is null"));
        assert_eq!(guarded(|| Ok(HightickStatus::Empty)), HightickStatus::Empty);
    }
}
