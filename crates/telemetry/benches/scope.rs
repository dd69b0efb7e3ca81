//! Cost of telemetry on the tick path: one scope open+close inside an open
//! frame (the headline figure), the raw clock read it is built on, and the
//! cost of opening and closing a whole frame.
//!
//! Run: `cargo bench -p hightick-telemetry --bench scope`

use std::hint::black_box;

use hightick_telemetry::bench::{figure, measure};
use hightick_telemetry::{Budgets, FrameRecorder, RecorderConfig, Subsystem, TscClock};

// Short batches, many of them: on a shared, oversubscribed machine a batch
// that is preempted counts the time another process ran; the median of many
// short batches is the cost when this one has the core.
const ITERS: u32 = 20_000;
const SAMPLES: u32 = 301;

fn main() {
    let budgets = Budgets::load(concat!(env!("CARGO_MANIFEST_DIR"), "/budgets.toml"))
        .expect("shipped budgets load");
    let budget = budgets.mode("5v5").expect("5v5 budget").clone();
    let mut recorder =
        FrameRecorder::new(RecorderConfig::default(), budget).expect("default config is valid");

    let clock = TscClock::new();
    let clock_read = measure(|| clock.raw(), ITERS, SAMPLES);
    // A scope reads the clock twice (open, close): this is its floor.
    let clock_pair = measure(|| black_box(clock.raw()) ^ clock.raw(), ITERS, SAMPLES);
    let std_now = measure(std::time::Instant::now, ITERS, SAMPLES);

    let (scope, unnamed, nested) = {
        let frame = recorder.begin(0);
        let scope = measure(
            || {
                let _s = frame.scope(black_box(Subsystem::Movement), "collide");
            },
            ITERS,
            SAMPLES,
        );
        let unnamed = measure(
            || {
                let _s = frame.enter(black_box(Subsystem::Fow));
            },
            ITERS,
            SAMPLES,
        );
        // A child inside an open parent: the parent's time is charged at the
        // child's open, so this is what one more nesting level costs.
        let parent = frame.scope(Subsystem::Movement, "step");
        let nested = measure(
            || {
                let _s = frame.scope(black_box(Subsystem::Physics), "sweep");
            },
            ITERS,
            SAMPLES,
        );
        drop(parent);
        frame.end();
        (scope, unnamed, nested)
    };

    let mut tick = 1;
    let frame_cost = measure(
        || {
            let frame = recorder.begin(tick);
            tick += 1;
            frame.end()
        },
        1_000,
        SAMPLES,
    );

    figure("telemetry_scope_ns", scope.median_ns(), "ns");
    figure("telemetry_clock_read_ns", clock_read.median_ns(), "ns");
    println!();
    println!(
        "{:<44} {:>10} {:>10} {:>10}",
        "operation", "p10 ns", "median ns", "p90 ns"
    );
    for (name, stats) in [
        ("scope open+close, named (frame.scope)", &scope),
        ("scope open+close, unnamed (frame.enter)", &unnamed),
        ("scope open+close, nested in a parent", &nested),
        ("raw TSC clock read (TscClock::raw)", &clock_read),
        ("two raw clock reads (a scope's floor)", &clock_pair),
        ("std::time::Instant::now", &std_now),
        ("empty frame begin+end (histograms, budgets)", &frame_cost),
    ] {
        println!(
            "{:<44} {:>10.2} {:>10.2} {:>10.2}",
            name,
            stats.quantile_ns(0.1),
            stats.median_ns(),
            stats.quantile_ns(0.9)
        );
    }
    println!("target: telemetry_scope_ns <= 30 ns");
}
