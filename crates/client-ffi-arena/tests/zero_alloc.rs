//! After connecting, a frame through the C ABI allocates nothing: update
//! (socket drain, timers, sends), events and snapshot polled into the
//! caller's buffers, the tick sync, the frame's input, an interpolated
//! entity and the stats, against a live host on loopback.

mod support;

use std::time::Duration;

use hightick_arena_client::{HightickArenaEntity, hightick_entity, hightick_stats};
use hightick_client_ffi::{HightickStats, HightickStatus};
use hightick_telemetry::alloc::{CountingAllocator, count_allocations};
use support::player::FfiPlayer;
use support::{LiveMatch, now_us};

#[global_allocator]
static A: CountingAllocator = CountingAllocator;

#[test]
fn a_steady_state_frame_through_the_c_abi_allocates_nothing() {
    let live = LiveMatch::start(&[7]);
    let mut p = FfiPlayer::connect(&live.token(7, 30));
    assert!(p.play_until(Duration::from_secs(30), |p| p.snapshots > 50
        && p.me.is_some()));
    let me = u32::from(p.me.unwrap_or_default());
    let mut entity = HightickArenaEntity::default();
    let mut stats = HightickStats::default();
    let mut total = 0;
    let before = p.snapshots;
    for _ in 0..300 {
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
            }
        });
        std::thread::sleep(Duration::from_millis(4));
    }
    assert!(
        p.snapshots > before + 100,
        "snapshots kept coming: {stats:?}"
    );
    assert!(stats.inputs_sent > 200, "{stats:?}");
    assert_eq!(total, 0, "allocations in 300 steady-state frames");
    assert_eq!(
        hightick_arena_client::hightick_close(p.handle),
        HightickStatus::Ok
    );
    live.stop();
}
