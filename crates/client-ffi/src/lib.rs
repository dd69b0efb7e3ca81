//! hightick-client-ffi: the hightick client behind a stable C ABI, one
//! library per game.
//!
//! What it is for: a C ABI cannot be generic over Rust types, so a game
//! produces its own client library: it describes how its input, events and
//! entities cross the boundary as `#[repr(C)]` records ([`FfiGame`]) and
//! calls [`export!`] once, in a crate built as a `cdylib` and a
//! `staticlib`. cbindgen writes the header. The calls (all named
//! `hightick_*`):
//!
//! - `abi_version`, `status_text`, `last_error`, `config_default`;
//! - `connect` with a connect token, giving an opaque handle;
//! - `update(handle, now_us)`, once per frame on the caller's thread with
//!   the caller's clock: it reads every datagram waiting in the socket, runs
//!   the connection's timers and sends what is due. There are no background
//!   threads: between calls nothing runs;
//! - `send_input` (the frame's input, sent at once), `poll_snapshot` and
//!   `poll_events` into buffers the caller owns, `entity` (one entity's
//!   interpolated state by id), `avatar` (the id of the entity the player
//!   steers, as the server says);
//! - `stats` (RTT, loss, jitter, snapshot age), `tick_sync` (server tick
//!   and clock offset), `connection` (state), `disconnect`, `close`.
//!
//! Every call returns a [`HightickStatus`]; a panic is caught and never
//! crosses the boundary; after an error `hightick_last_error` gives the
//! cause in words (per thread, like `errno`). Handles are numbers checked
//! against a table ([`Registry`]): a closed or made-up handle is refused,
//! and a second thread inside a call on the same handle gets
//! [`HightickStatus::Busy`]. After `connect`, no call allocates.
//!
//! A game that predicts its local player (its [`Game`](hightick_engine::Game)
//! is [`Predict`](hightick_engine::prediction::Predict)) also implements
//! [`FfiPredict`] and exports with `predict`: `prediction_start` (on the
//! match's map) makes the session run `hightick_client::Predictor` on every
//! input sent and every update, and `prediction`, `predicted_entity`,
//! `prediction_stats` and `prediction_smoothing` read and tune it.
//!
//! What it is not: no game's vocabulary lives here (the arena's library is
//! `hightick-client-ffi-arena`), and the protocol is `hightick-client`'s,
//! as is the prediction (the game's own movement code runs it).
//!
//! A game's library, here a cut-down one for the arena whose entities are
//! only positions and whose events only their kind (the arena's real one is
//! `hightick-client-ffi-arena`):
//!
//! ```
//! use hightick_arena::event::ArenaEvent;
//! use hightick_arena::game::Arena;
//! use hightick_arena::input::ArenaInput;
//! use hightick_client_ffi::{FfiGame, HightickStatus, ReplicaOf};
//! use hightick_engine::events::ReliableEvent;
//! use hightick_engine::replication::ClientEntity;
//! use hightick_proto::ProtoError;
//!
//! /// The input a C caller fills.
//! #[repr(C)]
//! #[derive(Clone, Copy)]
//! pub struct MoveInput { pub move_x: i8, pub move_y: i8 }
//!
//! /// An event as a C caller reads it.
//! #[repr(C)]
//! #[derive(Clone, Copy)]
//! pub struct KindEvent { pub kind: u8 }
//!
//! /// An entity as a C caller reads it.
//! #[repr(C)]
//! #[derive(Clone, Copy)]
//! pub struct Body { pub id: u16, pub position: [f32; 3] }
//!
//! pub struct MiniArena;
//!
//! impl FfiGame for MiniArena {
//!     type Game = Arena;
//!     type Input = MoveInput;
//!     type Event = KindEvent;
//!     type Entity = Body;
//!     fn position(replica: &ReplicaOf<Self>) -> Option<[f32; 3]> {
//!         replica.transform.map(|t| t.position)
//!     }
//!     fn input(i: &MoveInput) -> Result<ArenaInput, ProtoError> {
//!         Ok(ArenaInput { move_x: i.move_x, move_y: i.move_y, ..ArenaInput::default() })
//!     }
//!     fn event(event: &ArenaEvent) -> KindEvent {
//!         KindEvent { kind: event.kind() as u8 }
//!     }
//!     fn entity(e: ClientEntity<'_, ReplicaOf<Self>>, at: Option<[f32; 3]>) -> Body {
//!         let position = at.or(Self::position(e.state)).unwrap_or_default();
//!         Body { id: e.entity.0, position }
//!     }
//! }
//!
//! hightick_client_ffi::export!(MiniArena => input: MoveInput, event: KindEvent, entity: Body);
//!
//! // The C functions, called from Rust here:
//! assert_eq!(hightick_abi_version(), hightick_client_ffi::HIGHTICK_ABI_VERSION);
//! let mut handle = 0;
//! let garbage = [7u8; 2048];
//! let status = unsafe {
//!     hightick_connect(garbage.as_ptr(), garbage.len(), std::ptr::null(), 0, &mut handle)
//! };
//! assert_eq!(status, HightickStatus::InvalidToken);
//! assert_eq!(handle, 0);
//! ```

#![warn(missing_docs)]

pub mod abi;
mod clock;
mod error;
mod frame_client;
mod game;
mod last_error;
mod prediction;
mod record_value;
mod records;
mod registry;
mod status;

pub use clock::CallerClock;
pub use error::FfiError;
pub use frame_client::FrameClient;
pub use game::{FfiGame, ReplicaOf};
pub use last_error::HIGHTICK_LAST_ERROR_BYTES;
pub use prediction::{FfiPredict, LocalPlayer, StageOf, local_player};
pub use record_value::RecordValue;
pub use records::*;
pub use registry::{HIGHTICK_MAX_OPEN_HANDLES, HightickClient, Registry};
pub use status::{HightickStatus, status_text};

/// The version of the C ABI: a library and a header with different versions
/// do not fit together. Bumped whenever a call or a record changes.
/// Version 2 added the prediction calls (`hightick_prediction_*`), their
/// records and the status `NOT_PREDICTING`; version 3 `hightick_avatar`.
pub const HIGHTICK_ABI_VERSION: u32 = 3;

/// Emits a game's C ABI: `export!(Marker => input: I, event: E, entity: N)`
/// where `Marker: FfiGame<Input = I, Event = E, Entity = N>` (the record
/// types are named again so that the emitted signatures, which cbindgen
/// reads, name them). Use it once per library; it defines a `static` named
/// `HIGHTICK_SESSIONS` and the `extern "C"` functions `hightick_*`.
///
/// `export!(Marker => input: I, event: E, entity: N, predict)`, for a
/// `Marker: FfiPredict` (a game that predicts its local player), adds the
/// prediction calls: `hightick_prediction_start`, `hightick_prediction`,
/// `hightick_predicted_entity`, `hightick_prediction_stats` and
/// `hightick_prediction_smoothing`.
#[macro_export]
macro_rules! export {
    ($game:ty => input: $input:ty, event: $event:ty, entity: $entity:ty, predict $(,)?) => {
        $crate::export!($game => input: $input, event: $event, entity: $entity);

        /// Starts predicting the local player: from now on every
        /// `hightick_send_input` moves it at once, with the game's own
        /// movement code, and every `hightick_update` compares the server's
        /// state of it with the prediction and corrects (smoothed over a few
        /// ticks: `hightick_prediction_smoothing`). `stage` names what the
        /// movement runs on, the match's map (NULL: the game's default).
        /// Call it right after `hightick_connect`; again to start over.
        /// INVALID_ARGUMENT for a stage the game does not know (the last
        /// error lists those it does).
        ///
        /// # Safety
        /// `stage` is NULL or a NUL-terminated string.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn hightick_prediction_start(
            client: $crate::HightickClient,
            stage: *const ::std::ffi::c_char,
        ) -> $crate::HightickStatus {
            // SAFETY: forwarded contract.
            unsafe { $crate::abi::prediction_start::<$game>(&HIGHTICK_SESSIONS, client, stage) }
        }

        /// Writes the local player's predicted position (where to draw it,
        /// and the prediction without smoothing), its tick and the player's
        /// entity id to `*out`. EMPTY until the server's first state of the
        /// player arrived; NOT_PREDICTING before `hightick_prediction_start`.
        ///
        /// # Safety
        /// `out` points to a `HightickPrediction`.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn hightick_prediction(
            client: $crate::HightickClient,
            out: *mut $crate::HightickPrediction,
        ) -> $crate::HightickStatus {
            // SAFETY: forwarded contract.
            unsafe { $crate::abi::prediction::<$game>(&HIGHTICK_SESSIONS, client, out) }
        }

        /// Writes the local player's entity record to `*out` as the newest
        /// snapshot has it, at its predicted (drawn) position. EMPTY until
        /// the server's first state of the player arrived, or while the
        /// client does not hold the entity; NOT_PREDICTING before
        /// `hightick_prediction_start`.
        ///
        /// # Safety
        /// `out` points to the game's entity record.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn hightick_predicted_entity(
            client: $crate::HightickClient,
            out: *mut $entity,
        ) -> $crate::HightickStatus {
            // SAFETY: forwarded contract.
            unsafe { $crate::abi::predicted_entity::<$game>(&HIGHTICK_SESSIONS, client, out) }
        }

        /// Writes what the local player's predictor counted (comparisons,
        /// mispredictions, corrections) to `*out`; NOT_PREDICTING before
        /// `hightick_prediction_start`.
        ///
        /// # Safety
        /// `out` points to a `HightickPredictionStats`.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn hightick_prediction_stats(
            client: $crate::HightickClient,
            out: *mut $crate::HightickPredictionStats,
        ) -> $crate::HightickStatus {
            // SAFETY: forwarded contract.
            unsafe { $crate::abi::prediction_stats::<$game>(&HIGHTICK_SESSIONS, client, out) }
        }

        /// Sets how a correction is drawn: the share of it still drawn
        /// after each predicted tick (default 0.8: 11% left after 10
        /// ticks). 0 turns smoothing off: corrections are drawn at once.
        /// INVALID_ARGUMENT outside 0 to below 1; NOT_PREDICTING before
        /// `hightick_prediction_start`.
        #[unsafe(no_mangle)]
        pub extern "C" fn hightick_prediction_smoothing(
            client: $crate::HightickClient,
            smoothing: f32,
        ) -> $crate::HightickStatus {
            $crate::abi::prediction_smoothing::<$game>(&HIGHTICK_SESSIONS, client, smoothing)
        }
    };
    ($game:ty => input: $input:ty, event: $event:ty, entity: $entity:ty $(,)?) => {
        static HIGHTICK_SESSIONS: $crate::abi::Sessions<$game> = $crate::Registry::new();

        /// The ABI version of this library. Compare it with
        /// `HIGHTICK_ABI_VERSION` from the header you compiled against.
        #[unsafe(no_mangle)]
        pub extern "C" fn hightick_abi_version() -> u32 {
            $crate::HIGHTICK_ABI_VERSION
        }

        /// The short name of a status, as a static NUL-terminated string.
        #[unsafe(no_mangle)]
        pub extern "C" fn hightick_status_text(status: i32) -> *const ::std::ffi::c_char {
            $crate::status_text(status)
        }

        /// Copies the calling thread's last error (set by the newest call
        /// that failed on this thread) into `buf` as a NUL-terminated
        /// string. `*out_len` (if `out_len` is not NULL) gets the length
        /// needed, NUL included. BUFFER_TOO_SMALL if `capacity` is less.
        ///
        /// # Safety
        /// `buf` is NULL or holds `capacity` bytes; `out_len` is NULL or
        /// points to a `size_t`.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn hightick_last_error(
            buf: *mut ::std::ffi::c_char,
            capacity: usize,
            out_len: *mut usize,
        ) -> $crate::HightickStatus {
            // SAFETY: forwarded contract.
            unsafe { $crate::abi::last_error(buf, capacity, out_len) }
        }

        /// Fills `out` with the default settings.
        ///
        /// # Safety
        /// `out` is NULL or points to a `HightickConfig`.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn hightick_config_default(
            out: *mut $crate::HightickConfig,
        ) -> $crate::HightickStatus {
            // SAFETY: forwarded contract.
            unsafe { $crate::abi::config_default(out) }
        }

        /// Opens a connection with a connect token (the 2048 bytes the
        /// gateway hands out) and writes its handle to `*out` (0 on
        /// failure). `config` may be NULL for the defaults. `now_us` is the
        /// caller's clock in microseconds (any origin; the same clock every
        /// `hightick_update` reads). INVALID_TOKEN for bytes that are not a
        /// token of this game, TOKEN_EXPIRED for one past its expiry by this
        /// machine's clock. The first handshake packet is sent at once.
        ///
        /// # Safety
        /// `token` holds `token_len` bytes; `config` is NULL or points to a
        /// `HightickConfig`; `out` points to a `HightickClient`.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn hightick_connect(
            token: *const u8,
            token_len: usize,
            config: *const $crate::HightickConfig,
            now_us: u64,
            out: *mut $crate::HightickClient,
        ) -> $crate::HightickStatus {
            // SAFETY: forwarded contract.
            unsafe {
                $crate::abi::connect::<$game>(
                    &HIGHTICK_SESSIONS,
                    token,
                    token_len,
                    config,
                    now_us,
                    out,
                )
            }
        }

        /// One frame of network work at the caller's time `now_us`: reads
        /// every datagram waiting, runs the connection's timers, sends what
        /// is due. Call it once per frame, before polling.
        #[unsafe(no_mangle)]
        pub extern "C" fn hightick_update(
            client: $crate::HightickClient,
            now_us: u64,
        ) -> $crate::HightickStatus {
            $crate::abi::update::<$game>(&HIGHTICK_SESSIONS, client, now_us)
        }

        /// Sends the frame's input for server tick `tick`, made while the
        /// player viewed tick `aim_tick` (for lag compensation), with the
        /// three inputs before it for redundancy. Sent at once.
        /// NOT_CONNECTED until the connection is up (the input is still kept
        /// for redundancy); INVALID_ARGUMENT names a field out of range.
        ///
        /// # Safety
        /// `input` points to the game's input record.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn hightick_send_input(
            client: $crate::HightickClient,
            tick: u32,
            aim_tick: u32,
            input: *const $input,
        ) -> $crate::HightickStatus {
            // SAFETY: forwarded contract.
            unsafe {
                $crate::abi::send_input::<$game>(&HIGHTICK_SESSIONS, client, tick, aim_tick, input)
            }
        }

        /// If a snapshot was applied since the last call: writes every
        /// entity the client holds to `entities` (up to `capacity`), their
        /// count to `*out_count` and the snapshot's tick to `*info`; OK.
        /// EMPTY if none arrived since. BUFFER_TOO_SMALL (nothing written,
        /// `*out_count` = entities held, the snapshot stays unpolled) if
        /// `capacity` is less than that.
        ///
        /// # Safety
        /// `info` and `out_count` point to their types; `entities` is NULL
        /// (with `capacity` 0) or holds `capacity` records.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn hightick_poll_snapshot(
            client: $crate::HightickClient,
            info: *mut $crate::HightickSnapshotInfo,
            entities: *mut $entity,
            capacity: usize,
            out_count: *mut usize,
        ) -> $crate::HightickStatus {
            // SAFETY: forwarded contract.
            unsafe {
                $crate::abi::poll_snapshot::<$game>(
                    &HIGHTICK_SESSIONS,
                    client,
                    info,
                    entities,
                    capacity,
                    out_count,
                )
            }
        }

        /// Moves up to `capacity` received events, oldest first, into
        /// `events` and their count into `*out_count`: OK (if the count is
        /// `capacity`, more may wait: call again), EMPTY if none waited.
        /// BUFFER_TOO_SMALL if `capacity` is 0 and an event waits.
        ///
        /// # Safety
        /// `out_count` points to a `size_t`; `events` is NULL (with
        /// `capacity` 0) or holds `capacity` records.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn hightick_poll_events(
            client: $crate::HightickClient,
            events: *mut $event,
            capacity: usize,
            out_count: *mut usize,
        ) -> $crate::HightickStatus {
            // SAFETY: forwarded contract.
            unsafe {
                $crate::abi::poll_events::<$game>(
                    &HIGHTICK_SESSIONS,
                    client,
                    events,
                    capacity,
                    out_count,
                )
            }
        }

        /// Writes entity `id`'s state to `*out`, its position interpolated
        /// at server tick `render_tick` (fractional; a negative value gives
        /// the newest snapshot's position). EMPTY if the client does not
        /// hold that entity.
        ///
        /// # Safety
        /// `out` points to the game's entity record.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn hightick_entity(
            client: $crate::HightickClient,
            id: u32,
            render_tick: f64,
            out: *mut $entity,
        ) -> $crate::HightickStatus {
            // SAFETY: forwarded contract.
            unsafe {
                $crate::abi::entity::<$game>(&HIGHTICK_SESSIONS, client, id, render_tick, out)
            }
        }

        /// Writes the id of the entity this client's player steers (its
        /// avatar, as the server last said) to `*out`; EMPTY while it has
        /// none.
        ///
        /// # Safety
        /// `out` points to a `uint32_t`.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn hightick_avatar(
            client: $crate::HightickClient,
            out: *mut u32,
        ) -> $crate::HightickStatus {
            // SAFETY: forwarded contract.
            unsafe { $crate::abi::avatar::<$game>(&HIGHTICK_SESSIONS, client, out) }
        }

        /// Writes the connection's measurements and counters to `*out`.
        ///
        /// # Safety
        /// `out` points to a `HightickStats`.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn hightick_stats(
            client: $crate::HightickClient,
            out: *mut $crate::HightickStats,
        ) -> $crate::HightickStatus {
            // SAFETY: forwarded contract.
            unsafe { $crate::abi::stats::<$game>(&HIGHTICK_SESSIONS, client, out) }
        }

        /// Writes the server tick estimated at the newest update and the
        /// clock offset to `*out`; EMPTY before the first snapshot.
        ///
        /// # Safety
        /// `out` points to a `HightickTickSync`.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn hightick_tick_sync(
            client: $crate::HightickClient,
            out: *mut $crate::HightickTickSync,
        ) -> $crate::HightickStatus {
            // SAFETY: forwarded contract.
            unsafe { $crate::abi::tick_sync::<$game>(&HIGHTICK_SESSIONS, client, out) }
        }

        /// Writes the connection's state (connecting, connected, or
        /// disconnected and why) to `*out`.
        ///
        /// # Safety
        /// `out` points to a `HightickConnection`.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn hightick_connection(
            client: $crate::HightickClient,
            out: *mut $crate::HightickConnection,
        ) -> $crate::HightickStatus {
            // SAFETY: forwarded contract.
            unsafe { $crate::abi::connection::<$game>(&HIGHTICK_SESSIONS, client, out) }
        }

        /// Closes the connection: the server is told at once. The handle
        /// stays open (stats, state) until `hightick_close`.
        #[unsafe(no_mangle)]
        pub extern "C" fn hightick_disconnect(
            client: $crate::HightickClient,
        ) -> $crate::HightickStatus {
            $crate::abi::disconnect::<$game>(&HIGHTICK_SESSIONS, client)
        }

        /// Disconnects (if connected) and frees the handle: every later call
        /// with it returns CLOSED. BUSY (and nothing done) if another thread
        /// is inside a call on it.
        #[unsafe(no_mangle)]
        pub extern "C" fn hightick_close(client: $crate::HightickClient) -> $crate::HightickStatus {
            $crate::abi::close::<$game>(&HIGHTICK_SESSIONS, client)
        }
    };
}
