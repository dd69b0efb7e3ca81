//! The cost of one client frame through the C ABI against the same frame
//! calling the Rust client directly, as a ratio.
//!
//! Two clients play one live match on loopback (an in-process host, real
//! UDP): one through the C functions (`hightick_update`, events and the
//! snapshot polled into caller buffers, tick sync, input, one interpolated
//! entity), one through `FrameClient<Arena>` in Rust doing the same work
//! (update, events, every entity of a new snapshot read, tick estimate,
//! input, one interpolated position). Frames alternate between them, about
//! 4 ms apart, so both see the same traffic; each frame is timed alone.
//!
//! A third client plays through the C functions with prediction on
//! (`hightick_prediction_start`; each input predicted, each update
//! reconciled, the predicted position read every frame), so the cost of
//! prediction is the ratio of its frame to the plain FFI frame.
//!
//! Run with: cargo bench -p hightick-client-ffi-arena --bench ffi_frame
//! Prints `FIGURE ffi_frame_cost_ratio X` (median FFI frame over median
//! Rust frame), `FIGURE ffi_prediction_cost_ratio X` (median predicting
//! FFI frame over median FFI frame) and the medians behind them.

#[allow(unreachable_pub)]
#[path = "../tests/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use hightick_arena::game::Arena;
use hightick_arena::input::ArenaInput;
use hightick_arena_client::{HightickArenaEntity, hightick_prediction, hightick_prediction_start};
use hightick_client::GameClientConfig;
use hightick_client_ffi::{FrameClient, HightickPrediction, HightickStatus};
use hightick_engine::EntityId;
use hightick_net::ConnectToken;
use hightick_proto::InputCommand;
use support::player::FfiPlayer;
use support::{arena_match, now_us};

const WARM_UP: Duration = Duration::from_secs(2);
const FRAMES: usize = 2000;
const FRAME_GAP: Duration = Duration::from_millis(4);

/// The Rust caller: the same frame as `FfiPlayer::frame`, in Rust. Its
/// client lives on the heap, as the library's sessions do (on the stack of
/// this loop it would stay in cache between frames, which a game's client
/// object does not).
struct RustPlayer {
    client: Box<FrameClient<Arena>>,
    polled: u64,
    last_tick: u32,
    entities_read: u64,
}

impl RustPlayer {
    fn frame(&mut self, now_us: u64) -> Option<[f32; 3]> {
        self.client.update(now_us);
        let core = self.client.core_mut();
        while let Some(e) = core.poll_event() {
            std::hint::black_box(e);
        }
        let applied = core.stats().snapshots_applied;
        if applied != self.polled {
            self.polled = applied;
            for e in core.world().iter() {
                std::hint::black_box(e.state);
                self.entities_read += 1;
            }
        }
        let now = self.client.now();
        let estimate = self.client.core().server_tick_estimate(now)?;
        let tick = estimate as u32 + 6;
        if tick > self.last_tick {
            self.last_tick = tick;
            let input = ArenaInput {
                move_y: 127,
                ..ArenaInput::default()
            };
            let _ = self
                .client
                .send_input(InputCommand::new(tick, tick - 6, input));
        }
        self.client.core().interpolated(EntityId(1), estimate - 3.0)
    }
}

fn median(v: &mut [u64]) -> f64 {
    v.sort_unstable();
    v[v.len() / 2] as f64
}

fn main() {
    let live = arena_match(&[7, 8, 9]);
    let mut ffi = FfiPlayer::connect(&live.token(7, 30));
    let mut predicting = FfiPlayer::connect(&live.token(9, 30));
    // SAFETY: null is the default map, the match's.
    let started = unsafe { hightick_prediction_start(predicting.handle, std::ptr::null()) };
    assert_eq!(started, HightickStatus::Ok);
    let mut predicted = HightickPrediction::default();
    let token = ConnectToken::decode(&live.token(8, 30)).expect("a token");
    let mut client = FrameClient::<Arena>::connect(token, GameClientConfig::default(), now_us())
        .expect("connects");
    client
        .core_mut()
        .track_positions(|r| r.transform.map(|t| t.position));
    let mut rust = RustPlayer {
        client: Box::new(client),
        polled: 0,
        last_tick: 0,
        entities_read: 0,
    };
    let mut entity = HightickArenaEntity::default();
    let ffi_frame = |ffi: &mut FfiPlayer, entity: &mut HightickArenaEntity| {
        ffi.frame(now_us()).expect("ffi frame");
        // SAFETY: valid out pointer.
        let _ = unsafe { hightick_arena_client::hightick_entity(ffi.handle, 0, 1.0, entity) };
    };
    let predicting_frame = |p: &mut FfiPlayer,
                            entity: &mut HightickArenaEntity,
                            predicted: &mut HightickPrediction| {
        ffi_frame(p, entity);
        // SAFETY: valid out pointer.
        let _ = unsafe { hightick_prediction(p.handle, predicted) };
    };
    let start = Instant::now();
    while start.elapsed() < WARM_UP {
        ffi_frame(&mut ffi, &mut entity);
        predicting_frame(&mut predicting, &mut entity, &mut predicted);
        rust.frame(now_us());
        std::thread::sleep(FRAME_GAP);
    }
    let mut ffi_ns = Vec::with_capacity(FRAMES);
    let mut rust_ns = Vec::with_capacity(FRAMES);
    let mut predicting_ns = Vec::with_capacity(FRAMES);
    for i in 0..FRAMES {
        // Rotate who goes first, so none always finds the others' traffic
        // in the cache.
        for turn in 0..3 {
            let t = Instant::now();
            match (i + turn) % 3 {
                0 => {
                    ffi_frame(&mut ffi, &mut entity);
                    ffi_ns.push(t.elapsed().as_nanos() as u64);
                }
                1 => {
                    predicting_frame(&mut predicting, &mut entity, &mut predicted);
                    predicting_ns.push(t.elapsed().as_nanos() as u64);
                }
                _ => {
                    std::hint::black_box(rust.frame(now_us()));
                    rust_ns.push(t.elapsed().as_nanos() as u64);
                }
            }
        }
        std::thread::sleep(FRAME_GAP);
    }
    let (ffi_median, rust_median) = (median(&mut ffi_ns), median(&mut rust_ns));
    let predicting_median = median(&mut predicting_ns);
    let mean = |v: &[u64]| v.iter().sum::<u64>() as f64 / v.len() as f64;
    println!(
        "{FRAMES} frames each, {} snapshots (FFI) / {} entity reads (Rust)",
        ffi.snapshots, rust.entities_read
    );
    println!("FIGURE ffi_frame_median_ns {ffi_median:.0} ns");
    println!("FIGURE rust_frame_median_ns {rust_median:.0} ns");
    println!("FIGURE ffi_predicting_frame_median_ns {predicting_median:.0} ns");
    println!("FIGURE ffi_frame_mean_ns {:.0} ns", mean(&ffi_ns));
    println!(
        "FIGURE ffi_predicting_frame_mean_ns {:.0} ns",
        mean(&predicting_ns)
    );
    println!("FIGURE rust_frame_mean_ns {:.0} ns", mean(&rust_ns));
    println!(
        "FIGURE ffi_frame_cost_ratio {:.3} x",
        ffi_median / rust_median
    );
    println!(
        "FIGURE ffi_prediction_cost_ratio {:.3} x",
        predicting_median / ffi_median
    );
    println!(
        "predicted tick {} at ({:.2}, {:.2}, {:.2})",
        predicted.tick, predicted.position[0], predicted.position[1], predicted.position[2]
    );
    hightick_arena_client::hightick_close(ffi.handle);
    hightick_arena_client::hightick_close(predicting.handle);
    live.stop();
}
