//! Steady-state frames allocate nothing: opening and closing frames, nested
//! scopes with sub-scope names, histograms, budget windows and sampling.

use hightick_telemetry::alloc::{CountingAllocator, count_allocations};
use hightick_telemetry::{
    Budget, BudgetTarget, FrameRecorder, MAX_SCOPE_DEPTH, ModeBudget, RecorderConfig, Subsystem,
};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

fn one_tick(recorder: &mut FrameRecorder, tick: u64) {
    let frame = recorder.begin(tick);
    {
        let _net = frame.scope(Subsystem::Network, "receive");
    }
    for _player in 0..10 {
        let _movement = frame.scope(Subsystem::Movement, "apply_input");
        let _physics = frame.scope(Subsystem::Physics, "collide");
        std::hint::black_box(tick);
    }
    {
        let _fow = frame.enter(Subsystem::Fow);
        let _rep = frame.scope(Subsystem::Replication, "build_packets");
    }
    // Deeper than the stack: counted, not grown.
    let deep: [_; MAX_SCOPE_DEPTH + 1] =
        std::array::from_fn(|_| frame.scope(Subsystem::Other, "deep"));
    drop(deep);
    frame.end();
}

#[test]
fn steady_state_frames_do_not_allocate() {
    let mut budget = ModeBudget::unlimited();
    budget.window_ticks = 16; // several windows are judged below
    budget.set(BudgetTarget::Tick, Budget::from_us(0.001, 0.001)); // always over
    budget.set(
        BudgetTarget::Subsystem(Subsystem::Movement),
        Budget::from_us(1.0, 2.0),
    );
    let config = RecorderConfig {
        sample_every: 3,
        sample_capacity: 8, // overflows below: the ring overwrites in place
        ..RecorderConfig::default()
    };
    let mut recorder = FrameRecorder::new(config, budget).unwrap();

    // Warm-up: the first frames register sub-scope names (within reserved room).
    for tick in 0..4 {
        one_tick(&mut recorder, tick);
    }

    let allocations = count_allocations(|| {
        for tick in 4..1_000 {
            one_tick(&mut recorder, tick);
        }
    });
    assert_eq!(allocations, 0, "steady-state frames allocated");

    // The work above really ran: frames, windows, samples, overflow.
    let stats = recorder.stats();
    assert_eq!(stats.frames(), 1_000);
    assert!(stats.violations(BudgetTarget::Tick, hightick_telemetry::BudgetStat::Mean) > 0);
    assert_eq!(stats.frames_over_p99(BudgetTarget::Tick), 1_000);
    assert!(recorder.samples_dropped() > 0);
    assert_eq!(recorder.depth_overflow(), 1_000);
    assert_eq!(recorder.sub_scopes().count(), 5);
}

#[test]
fn the_counting_allocator_sees_allocations_here() {
    // Guards the test above against a silently missing global allocator.
    assert_eq!(count_allocations(|| Vec::<u8>::with_capacity(8)), 1);
}
