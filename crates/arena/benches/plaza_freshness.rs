//! How fresh each client's view of the crowd stays in plaza100: 100 bots
//! who all see each other, each with a real `hightick_net::Client`
//! connected in memory (`hightick_net::sim_server`) whose snapshots a
//! `ClientWorld` applies (`hightick_arena::freshness`). After every server
//! tick each pair (client, other player) is held against the server's exact
//! state: staleness in ticks (0: the client holds what the server would
//! send now), position error in cm, and the staleness of the pairs in the
//! viewer's view cone (45 degrees either side of its yaw).
//!
//! Three runs, each 1 s of combat to warm up and then the measured combat:
//! plaza100 at 128 Hz as shipped (640-byte snapshot budget), at 30 Hz (896
//! bytes, suffix `_30hz`), and "send everything" at 128 Hz (suffix
//! `_everything`): nothing waits, as the reference. A snapshot of all 99
//! others moving is 999 bytes, more than the 896 the default packet layer
//! lets one unreliable message carry, so that run's packet layer has
//! 64-byte reliable fragments and a 1115-byte snapshot budget, which fills a
//! 1200-byte packet.
//!
//! The same three again with every packet reaching its client about 60 ms
//! after it was sent (suffix `_rtt60`: 8 ticks at 128 Hz, 2 at 30 Hz; acks
//! return at once): deltas then start from older acknowledged states.
//! Staleness is measured against the server's state of the newest tick the
//! client applied, so the delay itself is not counted.
//!
//! Figures per run: `plaza100{suffix}_staleness_p50_ticks`,
//! `..._staleness_p99_ticks`, `..._staleness_in_view_p99_ticks`,
//! `..._position_error_p99_cm`, `..._bytes_per_client_s` (sealed datagrams)
//! and `..._tick_mean_us` (the match tick and every client's packet,
//! written and sealed), then a table.
//!
//! `PLAZA_FRESHNESS_SECONDS` sets the measured seconds per run: 15 by
//! default (the bots kill each other, and after about 20 s a fifth of the
//! crowd lies still), 1 for a smoke run.

#[path = "../tests/support/sim_carrier.rs"]
mod sim_carrier;

use hightick_arena::freshness::{FreshnessReport, Schedule, measure};
use hightick_arena::scenario::Scenario;
use hightick_net::PacketConfig;
use hightick_telemetry::bench::figure;
use sim_carrier::{SimCarrier, everything};

/// Measured seconds per run.
const SECONDS_ENV: &str = "PLAZA_FRESHNESS_SECONDS";

/// A round trip of about 60 ms, in ticks at `rate`.
fn rtt60_ticks(rate: u32) -> u32 {
    (rate * 60).div_ceil(1000)
}

fn run(scenario: &Scenario, packet: PacketConfig, seconds: u32, delay: u32) -> FreshnessReport {
    let rate = scenario.match_config.tick_rate_hz;
    let mut m = scenario.bot_match(42).expect("scenario builds");
    let clients = usize::from(scenario.players);
    let mut carrier = SimCarrier::connect(clients, rate, packet)
        .expect("clients connect")
        .with_delay(delay);
    let schedule = Schedule {
        warmup_ticks: rate,
        measure_ticks: seconds * rate,
        // Room for a round decided early: its end, the next buy phase.
        max_ticks: scenario.arena.buy_ticks + (seconds + 16) * rate,
    };
    measure(&mut m, &mut carrier, &schedule)
}

fn figures(prefix: &str, r: &FreshnessReport) {
    let f = |name: &str, value: f64, unit: &str| figure(&format!("{prefix}_{name}"), value, unit);
    f(
        "staleness_p50_ticks",
        f64::from(r.staleness_p50_ticks),
        "ticks",
    );
    f(
        "staleness_p99_ticks",
        f64::from(r.staleness_p99_ticks),
        "ticks",
    );
    f(
        "staleness_in_view_p99_ticks",
        f64::from(r.staleness_in_view_p99_ticks),
        "ticks",
    );
    f("position_error_p99_cm", r.position_error_p99_cm, "cm");
    f("bytes_per_client_s", r.bytes_per_client_s, "B/s");
    f("tick_mean_us", r.tick_mean_us, "us");
}

fn main() {
    let seconds = std::env::var(SECONDS_ENV)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(15u32)
        .max(1);
    let (packet, budget) = everything();
    let mut all = Scenario::plaza100(128);
    all.match_config.snapshot_budget_bytes = budget;
    let plain = PacketConfig::default();
    let runs = [
        (
            "plaza100",
            run(&Scenario::plaza100(128), plain.clone(), seconds, 0),
        ),
        (
            "plaza100_30hz",
            run(&Scenario::plaza100(30), plain.clone(), seconds, 0),
        ),
        ("plaza100_everything", run(&all, packet.clone(), seconds, 0)),
        (
            "plaza100_rtt60",
            run(
                &Scenario::plaza100(128),
                plain.clone(),
                seconds,
                rtt60_ticks(128),
            ),
        ),
        (
            "plaza100_30hz_rtt60",
            run(&Scenario::plaza100(30), plain, seconds, rtt60_ticks(30)),
        ),
        (
            "plaza100_everything_rtt60",
            run(&all, packet, seconds, rtt60_ticks(128)),
        ),
    ];
    for (prefix, r) in &runs {
        figures(prefix, r);
    }

    println!();
    println!(
        "{:<22}{:>7}{:>10}{:>7}{:>8}{:>6}{:>6}{:>7}{:>8}{:>8}{:>8}{:>8}{:>10}{:>12}{:>8}",
        "run",
        "ticks",
        "pairs",
        "alive",
        "fresh",
        "p50",
        "p99",
        "max",
        "mean",
        "view99",
        "v.mean",
        "v.fresh",
        "err99 cm",
        "deferred/s",
        "shared"
    );
    for (prefix, r) in &runs {
        println!(
            "{:<22}{:>7}{:>10}{:>6.0}%{:>7.1}%{:>6}{:>6}{:>7}{:>8.3}{:>8}{:>8.3}{:>7.1}%{:>10.1}{:>12.0}{:>7.1}%",
            prefix,
            r.ticks,
            r.pairs,
            100.0 * r.live_pairs as f64 / r.pairs.max(1) as f64,
            100.0 * r.fresh_pairs as f64 / r.pairs.max(1) as f64,
            r.staleness_p50_ticks,
            r.staleness_p99_ticks,
            r.staleness_max_ticks,
            r.staleness_mean_ticks,
            r.staleness_in_view_p99_ticks,
            r.staleness_in_view_mean_ticks,
            100.0 * r.in_view_fresh_pairs as f64 / r.in_view_pairs.max(1) as f64,
            r.position_error_p99_cm,
            r.deferred_records as f64 / f64::from(seconds),
            r.records_shared_pct,
        );
    }
}
