//! Racing served by a real host over UDP on loopback and played end to end
//! by real client bots: this package's own binary runs `serve` as a child
//! process (the lab's load run, as `demo` does), bots in this process drive
//! every car of one race, and what both sides saw is checked.

use std::time::Duration;

use hightick_example_racing::Race;
use hightick_lab::{BudgetBook, LoadSpec, run_load};

#[test]
fn a_race_of_twelve_is_served_and_driven_over_udp() {
    let spec = LoadSpec {
        warmup: Duration::from_secs(2),
        duration: Duration::from_secs(3),
        workers: 1,
        ..LoadSpec::new(env!("CARGO_BIN_EXE_hightick-example-racing"), "race12", 1)
    };
    let summary = run_load::<Race>(&spec, &BudgetBook::shipped(), &mut |_| {}).expect("run");
    let bots = &summary.bots;
    assert_eq!((bots.bots, bots.connected), (12, 12), "{bots:?}");
    assert_eq!(bots.decode_errors, 0, "{bots:?}");
    assert_eq!(bots.desyncs, 0, "{bots:?}");
    // 12 clients for 5 s at 120 Hz, less what a debug build on a busy host
    // drops: at least a quarter of it arrived.
    assert!(bots.snapshots > 12 * 5 * 120 / 4, "{bots:?}");
    assert_eq!(
        bots.with_avatar, 12,
        "every driver was told its car: {bots:?}"
    );
    assert_eq!(
        (summary.mode.as_str(), summary.tick_rate_hz),
        ("race12", 120)
    );
    assert!(summary.tick.ticks > 0, "{:?}", summary.tick);
    assert!(
        summary.network.client_bytes_out_per_s > 0.0,
        "{:?}",
        summary.network
    );
}
