//! Tag served by a real host over UDP on loopback and played end to end by
//! real client bots: this package's own binary runs `serve` as a child
//! process (the lab's load run, as `demo` does), bots in this process play
//! every seat of two matches, and what both sides saw is checked.

use std::time::Duration;

use hightick_example_tag::Tag;
use hightick_lab::{BudgetBook, LoadSpec, run_load};

#[test]
fn two_matches_of_tag_are_served_and_played_over_udp() {
    let spec = LoadSpec {
        warmup: Duration::from_secs(2),
        duration: Duration::from_secs(3),
        workers: 1,
        ..LoadSpec::new(env!("CARGO_BIN_EXE_hightick-example-tag"), "tag", 2)
    };
    let summary = run_load::<Tag>(&spec, &BudgetBook::shipped(), &mut |_| {}).expect("run");
    let bots = &summary.bots;
    assert_eq!((bots.bots, bots.connected), (12, 12), "{bots:?}");
    assert_eq!(bots.decode_errors, 0, "{bots:?}");
    assert_eq!(bots.desyncs, 0, "{bots:?}");
    // 12 clients for 5 s at 128 Hz, less what a debug build on a busy host
    // drops: at least a quarter of it arrived.
    assert!(bots.snapshots > 12 * 5 * 128 / 4, "{bots:?}");
    // The engine told every client which entity is its own.
    assert_eq!(bots.with_avatar, 12, "{bots:?}");
    // The server ticked both matches and sent every client its packets.
    assert_eq!(summary.mode, "tag");
    assert_eq!(summary.matches, 2);
    assert!(summary.tick.ticks > 0, "{:?}", summary.tick);
    assert!(
        summary.network.client_bytes_out_per_s > 0.0,
        "{:?}",
        summary.network
    );
}
