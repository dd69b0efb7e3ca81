//! The emulator's decisions, driven sans-IO on a virtual clock: they repeat
//! exactly from a seed (for any profile), and over many datagrams the loss
//! and the decided delays are what the profile says (wide bounds; the
//! delays checked are the ones the core decided, never measured time).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use hightick_netem::{
    Decision, Direction, DirectionProfile, DropReason, Emulator, FlowKey, GilbertElliott, Lane,
    Limits, LinkProfile, Outage, RateLimit,
};
use proptest::prelude::*;

/// Feeds `n` datagrams, one every `gap`, of sizes cycling through a few
/// values, through a lane; returns the decisions.
fn run_lane(
    profile: &DirectionProfile,
    seed: u64,
    n: usize,
    gap: Duration,
    t0: Instant,
) -> Vec<Decision> {
    let mut lane = Lane::new(profile.clone(), seed, 3, t0);
    (0..n)
        .map(|i| lane.decide(t0 + gap * i as u32, 60 + (i * 37) % 1100))
        .collect()
}

/// Decisions relative to the start, so two runs with different `t0`s compare.
fn offsets(decisions: &[Decision], t0: Instant) -> Vec<Result<(u128, Option<u128>), DropReason>> {
    decisions
        .iter()
        .map(|d| match d {
            Decision::Deliver { at, duplicate_at } => Ok((
                (*at - t0).as_nanos(),
                duplicate_at.map(|a| (a - t0).as_nanos()),
            )),
            Decision::Drop(r) => Err(*r),
        })
        .collect()
}

#[test]
fn the_same_seed_gives_the_same_decisions_through_the_whole_emulator() {
    let link = LinkProfile::builtin("bad").unwrap();
    let run = |seed: u64| {
        let t0 = Instant::now();
        let mut e = Emulator::new(link.clone(), seed, Limits::default());
        let clients: Vec<SocketAddr> = (1..=4)
            .map(|p| SocketAddr::from(([127, 0, 0, 1], p)))
            .collect();
        let mut fates = Vec::new();
        let mut released = Vec::new();
        let mut buf = [0u8; hightick_netem::MAX_DATAGRAM];
        for i in 0..20_000u32 {
            let now = t0 + Duration::from_micros(u64::from(i) * 1_953);
            let client = clients[i as usize % clients.len()];
            let flow = e.flow(now, FlowKey::new(0, client)).unwrap();
            let direction = if i % 3 == 0 {
                Direction::Up
            } else {
                Direction::Down
            };
            let d = e
                .handle_datagram(now, flow, direction, &i.to_le_bytes())
                .unwrap();
            fates.push(offsets(&[d], t0)[0]);
            while let Some(r) = e.poll_transmit(now, &mut buf) {
                released.push((r.flow.slot(), r.direction, buf[..r.len].to_vec()));
            }
        }
        (fates, released, e.report())
    };
    let (fates, released, report) = run(42);
    let (again, released_again, report_again) = run(42);
    assert_eq!(fates, again);
    assert_eq!(released, released_again);
    assert_eq!(report, report_again);
    let (other, _, _) = run(43);
    assert_ne!(fates, other);
    // The bad link dropped some, in every way it can, and delivered most.
    let dropped = |r: &hightick_netem::DirectionReport, why: &str| {
        r.dropped.iter().find(|(k, _)| k == why).map(|(_, n)| *n)
    };
    assert!(dropped(&report.down, "outage").unwrap() > 0, "{report:?}");
    assert!(dropped(&report.down, "burst").unwrap() > 0, "{report:?}");
    assert!(
        report.down.delivered > report.down.datagrams / 2,
        "{report:?}"
    );
}

fn arb_duration(max_ms: u64) -> impl Strategy<Value = Duration> {
    (0..=max_ms * 1000).prop_map(Duration::from_micros)
}

fn arb_profile() -> impl Strategy<Value = DirectionProfile> {
    (
        (arb_duration(300), arb_duration(100), 0.0..=1.0f64),
        proptest::option::of((0.0..=1.0f64, 0.01..=1.0f64, 0.0..=1.0f64)),
        (0.0..=1.0f64, arb_duration(50), 0.0..=1.0f64),
        proptest::option::of((1_000..=10_000_000u64, 1_500..=1_000_000u64)),
        proptest::option::of((1..=60u64, 0..=59u64, 0..=60u64)),
    )
        .prop_map(
            |(
                (latency, jitter, loss),
                bursts,
                (reorder, reorder_delay, duplicate),
                rate,
                outage,
            )| {
                DirectionProfile {
                    latency,
                    jitter,
                    loss,
                    bursts: bursts.map(|(enter, leave, loss_bad)| GilbertElliott {
                        enter,
                        leave,
                        loss_bad,
                        loss_good: 0.0,
                    }),
                    reorder,
                    reorder_delay,
                    duplicate,
                    rate: rate.map(|(bytes_per_s, queue_bytes)| RateLimit {
                        bytes_per_s,
                        queue_bytes,
                    }),
                    outage: outage.map(|(every, length, first)| Outage {
                        every: Duration::from_millis(every * 100),
                        length: Duration::from_millis(length.min(every - 1) * 100),
                        first_after: Duration::from_millis(first * 100),
                    }),
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_profile_repeats_its_decisions_from_a_seed(
        profile in arb_profile(),
        seed in any::<u64>(),
        gap_us in 1..20_000u64,
    ) {
        prop_assert!(profile.validate("up").is_ok());
        let gap = Duration::from_micros(gap_us);
        // Two lanes made at different instants: only offsets matter.
        let t0 = Instant::now();
        let a = run_lane(&profile, seed, 2_000, gap, t0);
        let t1 = t0 + Duration::from_secs(1000);
        let b = run_lane(&profile, seed, 2_000, gap, t1);
        prop_assert_eq!(offsets(&a, t0), offsets(&b, t1));
        // Nothing arrives before it was sent.
        for (i, d) in a.iter().enumerate() {
            if let Decision::Deliver { at, duplicate_at } = d {
                prop_assert!(*at >= t0 + gap * i as u32);
                prop_assert!(duplicate_at.is_none_or(|t| t >= *at));
            }
        }
    }
}

#[test]
fn loss_over_many_datagrams_is_near_the_profiles() {
    let mobile = LinkProfile::builtin("mobile").unwrap().down;
    // No cap here: only loss is looked at.
    let profile = DirectionProfile {
        rate: None,
        ..mobile
    };
    let n = 200_000;
    let decisions = run_lane(&profile, 9, n, Duration::from_millis(1), Instant::now());
    let lost = decisions
        .iter()
        .filter(|d| matches!(d, Decision::Drop(_)))
        .count() as f64
        / n as f64;
    assert!((0.02..0.04).contains(&lost), "{lost}");
    let wifi = LinkProfile::builtin("wifi").unwrap().up;
    let decisions = run_lane(&wifi, 9, n, Duration::from_millis(1), Instant::now());
    let lost = decisions
        .iter()
        .filter(|d| **d == Decision::Drop(DropReason::Loss))
        .count() as f64
        / n as f64;
    assert!((0.007..0.013).contains(&lost), "{lost}");
}

#[test]
fn decided_delays_sit_in_the_profiles_band() {
    let wifi = LinkProfile::builtin("wifi").unwrap().down;
    let t0 = Instant::now();
    let mut lane = Lane::new(wifi.clone(), 5, 0, t0);
    let gap = Duration::from_millis(8);
    let mut delays = Vec::new();
    for i in 0..50_000u32 {
        let now = t0 + gap * i;
        if let Decision::Deliver { at, .. } = lane.decide(now, 200) {
            delays.push((at - now).as_secs_f64() * 1000.0);
        }
    }
    let mean = delays.iter().sum::<f64>() / delays.len() as f64;
    let min = delays.iter().copied().fold(f64::INFINITY, f64::min);
    let max = delays.iter().copied().fold(0.0, f64::max);
    // 15 ms ± 5, uniform; keeping order pushes a few up, never down.
    assert!(min >= 10.0 - 1e-6, "{min}");
    assert!(max <= 20.0 + 1e-6, "{max}");
    assert!((14.0..17.0).contains(&mean), "{mean}");
}

#[test]
fn a_capped_lane_never_delivers_faster_than_its_rate() {
    let profile = DirectionProfile {
        rate: Some(RateLimit {
            bytes_per_s: 250_000,
            queue_bytes: 64 * 1024,
        }),
        ..DirectionProfile::PERFECT
    };
    let t0 = Instant::now();
    let mut lane = Lane::new(profile, 1, 0, t0);
    // 1 MB/s offered for a second: a quarter goes, the rest is tail-dropped.
    let mut delivered = 0u64;
    let mut last = t0;
    for i in 0..1000u32 {
        if let Decision::Deliver { at, .. } =
            lane.decide(t0 + Duration::from_millis(u64::from(i)), 1000)
        {
            delivered += 1000;
            last = last.max(at);
        }
    }
    let seconds = (last - t0).as_secs_f64();
    let rate = delivered as f64 / seconds;
    assert!(rate <= 250_000.0 * 1.0001, "{rate}");
    assert!(rate >= 200_000.0, "{rate}");
}
