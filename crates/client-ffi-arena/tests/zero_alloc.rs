//! After connecting, a frame through the C ABI allocates nothing: update
//! (socket drain, timers, sends, the prediction reconciled), events and
//! snapshot polled into the caller's buffers, the tick sync, the frame's
//! input (predicted), an interpolated entity, the stats, and the predicted
//! player and its stats, against a live host on loopback. A third of the
//! frames send inputs the client did not predict with (`scramble`), so
//! that predictions go wrong and are corrected (and smoothed) inside the
//! frames counted.

mod support;

use std::time::Duration;

use hightick_arena_client::{
    HightickArenaEntity, hightick_entity, hightick_predicted_entity, hightick_prediction,
    hightick_prediction_start, hightick_prediction_stats, hightick_stats,
};
use hightick_client_ffi::{
    HightickPrediction, HightickPredictionStats, HightickStats, HightickStatus,
};
use hightick_telemetry::alloc::{CountingAllocator, count_allocations};
use support::player::FfiPlayer;
use support::{arena_match, now_us};

#[global_allocator]
static A: CountingAllocator = CountingAllocator;

#[test]
fn a_steady_state_frame_through_the_c_abi_allocates_nothing() {
    let live = arena_match(&[7]);
    let mut p = FfiPlayer::connect(&live.token(7, 30));
    // SAFETY: a NUL-terminated name.
    let s = unsafe { hightick_prediction_start(p.handle, c"dust_corners".as_ptr()) };
    assert_eq!(s, HightickStatus::Ok);
    assert!(p.play_until(Duration::from_secs(30), |p| p.snapshots > 50
        && p.me.is_some()));
    let me = u32::from(p.me.unwrap_or_default());
    let mut entity = HightickArenaEntity::default();
    let mut stats = HightickStats::default();
    let mut predicted = HightickPrediction::default();
    let mut prediction = HightickPredictionStats::default();
    let mut total = 0;
    let before = p.snapshots;
    for frame in 0..300 {
        // Inputs the server takes where the client predicted none: the
        // predictions go wrong and are corrected.
        p.scramble = (100..200).contains(&frame);
        let now = now_us();
        total += count_allocations(|| {
            p.frame(now).expect("a frame's calls succeed");
            // SAFETY: valid out pointers.
            unsafe {
                assert_eq!(
                    hightick_entity(p.handle, me, 1.0, &mut entity),
                    HightickStatus::Ok
                );
                assert_eq!(hightick_stats(p.handle, &mut stats), HightickStatus::Ok);
                assert_eq!(
                    hightick_prediction(p.handle, &mut predicted),
                    HightickStatus::Ok
                );
                assert_eq!(
                    hightick_predicted_entity(p.handle, &mut entity),
                    HightickStatus::Ok
                );
                assert_eq!(
                    hightick_prediction_stats(p.handle, &mut prediction),
                    HightickStatus::Ok
                );
            }
        });
        std::thread::sleep(Duration::from_millis(4));
    }
    assert!(
        p.snapshots > before + 100,
        "snapshots kept coming: {stats:?}"
    );
    // 300 frames 4 ms apart send about one input a tick; a loaded machine
    // stretches the frames, so only "inputs kept going" is asserted.
    assert!(stats.inputs_sent > 100, "{stats:?}");
    eprintln!("{prediction:?}");
    assert!(
        prediction.mispredicted > 0 && prediction.max_correction_m > 0.0,
        "late inputs were mispredicted and corrected: {prediction:?}"
    );
    assert_eq!(total, 0, "allocations in 300 steady-state frames");
    assert_eq!(
        hightick_arena_client::hightick_close(p.handle),
        HightickStatus::Ok
    );
    live.stop();
}
