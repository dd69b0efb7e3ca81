//! Whole match ticks of the arena scenarios, sans IO, with bots for every
//! player: per tick, the match tick (inputs, movement, poses, shots, rules,
//! fog of war, snapshots) AND, for every client, its packet on the server's
//! one send path (`Match::transmit_tick`: events and snapshot queued on the
//! client's connection in a `hightick_net::Server`, the packet written and
//! sealed). Untimed, each client (a real `hightick_net::Client`, connected
//! in memory by `hightick_net::sim_server`) opens and reads its packet and
//! answers with its acks, which the server takes in; the delivery
//! notifications go back to the replication writer
//! (`Match::absorb_deliveries`), so replication runs in steady state.
//!
//! Figures: `arena_5v5_tick_mean_us`, `arena_5v5_tick_p99_us`,
//! `arena_5v5_bytes_per_client_s`, `arena_plaza100_tick_mean_us`,
//! `arena_plaza100_bytes_per_client_s_128hz`,
//! `arena_plaza100_bytes_per_client_s_30hz`, `replication_push_vs_poll_ratio`
//! (the plaza100 run with the naive polling writer, mean tick time poll /
//! push), `arena_5v5_cold_tick_mean_us` and `arena_5v5_cold_over_hot` (the
//! 5v5 run again with every cache evicted between ticks, as a live server's
//! match finds them after sleeping a period beside other matches and bots),
//! then a per-subsystem table from the telemetry frame recorder.
//! `arena_5v5_animation_us_poses_every_tick` / `..._every4` (the
//! Animation subsystem's mean per tick with the lag-compensation history
//! recorded every tick, as shipped, and every 4th tick; the two whole-tick
//! means are not interleaved, so only the scoped subsystem is compared).
//! `arena_plaza100_records_shared_pct` / `arena_5v5_records_shared_pct`: the
//! share of entity records copied from one encoded for another client in
//! the same tick.
//! `arena_5v5_beside_tick_mean_us` / `_p50_us` and `arena_5v5_beside_over_hot`
//! (the 5v5 run with 15 other 5v5 matches ticking between its ticks, as on a
//! live server's core: the same code stays cached, the match's own data is
//! pushed out by theirs).
//! `MATCH_TICK_ONLY=cold` runs only a short cold 5v5 run, for cachegrind;
//! `MATCH_TICK_ONLY=5v5` runs only the 5v5 warm and cold runs and prints
//! their figures (with the medians `arena_5v5_tick_p50_us` and
//! `arena_5v5_cold_tick_p50_us`), for quick interleaved comparisons of two
//! builds. `MATCH_TICK_ONLY=plaza` runs a short plaza100 run (4 s warm-up,
//! past the buy phase, then 2 s of combat), for callgrind.
//! `MATCH_TICK_ONLY=growth` runs the plaza with 25, 50, 100, 200 and 400
//! players (2 s of combat each) and prints per size the tick mean, bytes
//! per client and the share of records deferred, then
//! `arena_plaza_growth_exponent`: the exponent `k` of `us/tick ~ N^k`
//! fitted from 50 to 400 players (`hightick_lab::growth::exponent`; `hightick lab growth` measures the same live-free figures for any game).

#[path = "../tests/support/sim_carrier.rs"]
mod sim_carrier;

use hightick_arena::freshness::Carrier;
use hightick_arena::scenario::{BotMatch, PLAZA_SIZES, Scenario};
use hightick_engine::PlayerId;
use hightick_engine::replication::{
    ChangeDetection, ChangedTicks, SharedRecordStats, ValueComparison,
};
use hightick_lab::growth::exponent;
use hightick_net::PacketConfig;
use hightick_telemetry::bench::{Stats, figure};
use hightick_telemetry::{BudgetTarget, FrameRecorder, ModeBudget, RecorderConfig, Subsystem};
use sim_carrier::SimCarrier;

/// What one scenario run measured.
struct Run {
    /// Whole-tick times, one sample per measured tick.
    ticks: Stats,
    bytes: u64,
    clients: usize,
    seconds: f64,
    subsystems: Vec<(Subsystem, f64)>,
    ticks_in_combat: usize,
    /// Records copied from one encoded for another client in the tick.
    shared: SharedRecordStats,
    /// Share of the records due that waited for a later tick (the budget
    /// was spent), percent, over the whole run.
    deferred_pct: f64,
}

impl Run {
    /// Share of records copied rather than encoded, percent.
    fn shared_pct(&self) -> f64 {
        let all = self.shared.copied + self.shared.encoded;
        100.0 * self.shared.copied as f64 / all.max(1) as f64
    }

    fn mean_us(&self) -> f64 {
        self.ticks.mean_ns() / 1e3
    }

    fn quantile_us(&self, q: f64) -> f64 {
        self.ticks.quantile_ns(q) / 1e3
    }

    fn bytes_per_client_s(&self) -> f64 {
        self.bytes as f64 / self.clients as f64 / self.seconds
    }

    /// Mean microseconds per tick in subsystem `s`.
    fn subsystem_us(&self, s: Subsystem) -> f64 {
        self.subsystems
            .iter()
            .find(|(x, _)| *x == s)
            .map_or(0.0, |(_, v)| *v)
    }
}

/// Bytes written between ticks to evict the caches: twice the largest last-level
/// cache of the hosts this runs on.
const EVICT_BYTES: usize = 32 << 20;

/// Other 5v5 matches ticking between two ticks of the measured one in the
/// `beside` run: a live server's share of one core.
const BESIDE_MATCHES: usize = 15;

/// What happens to the caches between ticks.
#[derive(Clone, Copy, PartialEq)]
enum Caches {
    Warm,
    /// A buffer larger than the last-level cache is written: data and code
    /// come from memory.
    Evicted,
    /// Other matches tick: the same code, their own data (the live case).
    Beside(usize),
}

/// One match and its clients, connected in memory (`SimCarrier`).
struct Hosted<D: ChangeDetection> {
    m: BotMatch<D>,
    carrier: SimCarrier,
    /// Client `i` plays `players[i]`.
    players: Vec<PlayerId>,
    /// The size of each client's packet this tick.
    lens: Vec<usize>,
}

impl<D: ChangeDetection> Hosted<D> {
    fn new(scenario: &Scenario, detection: D, seed: u64) -> Self {
        let m: BotMatch<D> = scenario
            .bot_match_with(seed, detection)
            .expect("scenario builds");
        let players: Vec<_> = m.players().collect();
        let carrier = SimCarrier::connect(
            players.len(),
            scenario.match_config.tick_rate_hz,
            PacketConfig::default(),
        )
        .expect("clients connect");
        Self {
            lens: vec![0; players.len()],
            m,
            carrier,
            players,
        }
    }

    /// As a live server does: every client's connection asked for before
    /// the tick, so the sends find it in cache.
    fn prefetch(&self) {
        self.carrier.prefetch();
    }

    /// Every client's packet, queued, written and sealed.
    fn send(&mut self) {
        for (i, &p) in self.players.iter().enumerate() {
            self.lens[i] = self.carrier.send(&mut self.m.game, i, p);
        }
    }

    /// Each client opens, reads and acks; the server takes the acks in and
    /// the match their delivery notifications.
    fn acknowledge(&mut self) {
        for (i, &p) in self.players.iter().enumerate() {
            self.carrier.receive(&mut self.m.game, i, p, &mut |_| {});
        }
    }
}

fn run<D: ChangeDetection>(
    scenario: &Scenario,
    detection: D,
    warmup_s: u32,
    measure_s: u32,
    caches: Caches,
) -> Run {
    let rate = scenario.match_config.tick_rate_hz;
    let mut hosted = Hosted::new(scenario, detection, 42);
    let mut beside: Vec<Hosted<ChangedTicks>> = match caches {
        Caches::Beside(n) => (0..n)
            .map(|k| Hosted::new(scenario, ChangedTicks, 43 + k as u64))
            .collect(),
        _ => Vec::new(),
    };
    let mut evict = vec![
        0u8;
        if caches == Caches::Evicted {
            EVICT_BYTES
        } else {
            0
        }
    ];
    let mut recorder = FrameRecorder::new(
        RecorderConfig {
            tick_rate_hz: f64::from(rate),
            ..RecorderConfig::default()
        },
        ModeBudget::default(),
    )
    .expect("recorder");

    let warmup = warmup_s * rate;
    let total = warmup + measure_s * rate;
    let mut tick_ns = Vec::with_capacity((measure_s * rate) as usize);
    let mut bytes = 0u64;
    let mut ticks_in_combat = 0;
    for t in 0..total {
        if t == warmup {
            recorder.reset();
        }
        // Timed: the match tick and every client's packet, queued, written
        // and sealed.
        let frame = recorder.begin(u64::from(t));
        hosted.prefetch();
        hosted.m.step_in(&frame);
        {
            let _net = frame.scope(Subsystem::Network, "send_seal");
            hosted.send();
        }
        let outcome = frame.end();
        if t >= warmup {
            tick_ns.push(outcome.total_ns as f64);
            bytes += hosted.lens.iter().map(|&l| l as u64).sum::<u64>();
            if hosted.m.game.game().clock().phase == hightick_arena::game::Phase::Combat {
                ticks_in_combat += 1;
            }
        }
        // Untimed: the clients' acks, then the other matches' ticks.
        hosted.acknowledge();
        for other in &mut beside {
            other.prefetch();
            other.m.step();
            other.send();
            other.acknowledge();
        }
        // Untimed: one byte per cache line of a buffer larger than the caches.
        for b in evict.iter_mut().step_by(64) {
            *b = b.wrapping_add(1);
        }
        std::hint::black_box(&evict);
    }
    let stats = recorder.stats();
    let subsystems = Subsystem::ALL
        .iter()
        .map(|&s| (s, stats.mean_ns(BudgetTarget::Subsystem(s)) / 1e3))
        .collect();
    Run {
        clients: hosted.players.len(),
        seconds: f64::from(measure_s),
        bytes,
        ticks: Stats::from_samples(tick_ns),
        subsystems,
        ticks_in_combat,
        shared: hosted.m.game.shared_record_stats(),
        deferred_pct: deferred_pct(&hosted),
    }
}

/// Of every record due to `hosted`'s clients, the share that waited.
fn deferred_pct<D: ChangeDetection>(hosted: &Hosted<D>) -> f64 {
    let (mut written, mut deferred) = (0u64, 0u64);
    for &p in &hosted.players {
        if let Some(s) = hosted.m.game.replication_stats(p) {
            written += s.records;
            deferred += s.deferred;
        }
    }
    100.0 * deferred as f64 / (written + deferred).max(1) as f64
}

/// Set to `cold` to run only a short cold 5v5 run (2 s warm-up, 2 s
/// measured): small enough for `valgrind --tool=cachegrind` to count the
/// cache misses of a cold tick. Set to `5v5` to run only the 5v5 warm and
/// cold runs, to `plaza` for a short plaza100 run (for callgrind).
const ONLY_ENV: &str = "MATCH_TICK_ONLY";

/// Seconds of a short plaza run before measuring: past the 3 s buy phase,
/// so the measured ticks are combat (everyone running).
const PLAZA_WARMUP_S: u32 = 4;

/// The plaza at every crowd size of [`PLAZA_SIZES`], in combat: CPU per
/// tick and bytes per client against players, and the exponent of the
/// cost's growth from 50 to 400 players (`arena_plaza_growth_exponent`).
fn print_growth() {
    println!(
        "{:>8} {:>12} {:>14} {:>16} {:>10}",
        "players", "us/tick", "us/tick/player", "B/s per client", "deferred %"
    );
    let mut points = Vec::new();
    for &(players, name) in &PLAZA_SIZES {
        let scenario = Scenario::plaza(players, 128).expect("a plaza size");
        let r = run(&scenario, ChangedTicks, PLAZA_WARMUP_S, 2, Caches::Warm);
        println!(
            "{players:>8} {:>12.1} {:>14.2} {:>16.0} {:>10.1}",
            r.mean_us(),
            r.mean_us() / f64::from(players),
            r.bytes_per_client_s(),
            r.deferred_pct
        );
        figure(&format!("arena_{name}_tick_mean_us"), r.mean_us(), "us");
        figure(
            &format!("arena_{name}_bytes_per_client_s"),
            r.bytes_per_client_s(),
            "B/s",
        );
        if players >= 50 {
            points.push((f64::from(players), r.mean_us()));
        }
    }
    if let Some(k) = exponent(&points) {
        figure("arena_plaza_growth_exponent", k, "");
    }
}

/// Prints the 5v5 figures: warm, cold, beside other matches, and the ratios.
fn print_5v5(five: &Run, five_cold: &Run, five_beside: &Run) {
    figure("arena_5v5_tick_mean_us", five.mean_us(), "us");
    figure("arena_5v5_tick_p99_us", five.quantile_us(0.99), "us");
    figure(
        "arena_5v5_bytes_per_client_s",
        five.bytes_per_client_s(),
        "B/s",
    );
    figure("arena_5v5_cold_tick_mean_us", five_cold.mean_us(), "us");
    figure(
        "arena_5v5_cold_over_hot",
        five_cold.mean_us() / five.mean_us(),
        "x",
    );
    // Medians: on a shared machine a few preempted ticks move the means.
    figure("arena_5v5_tick_p50_us", five.quantile_us(0.5), "us");
    figure(
        "arena_5v5_cold_tick_p50_us",
        five_cold.quantile_us(0.5),
        "us",
    );
    figure("arena_5v5_beside_tick_mean_us", five_beside.mean_us(), "us");
    figure(
        "arena_5v5_beside_tick_p50_us",
        five_beside.quantile_us(0.5),
        "us",
    );
    figure(
        "arena_5v5_beside_over_hot",
        five_beside.mean_us() / five.mean_us(),
        "x",
    );
}

fn main() {
    let only = std::env::var(ONLY_ENV).unwrap_or_default();
    if only == "cold" {
        let cold = run(
            &Scenario::five_v_five(),
            hightick_engine::replication::ChangedTicks,
            2,
            2,
            Caches::Evicted,
        );
        figure("arena_5v5_cold_tick_mean_us", cold.mean_us(), "us");
        return;
    }
    if only == "growth" {
        print_growth();
        return;
    }
    if only == "plaza" {
        let plaza = run(
            &Scenario::plaza100(128),
            hightick_engine::replication::ChangedTicks,
            PLAZA_WARMUP_S,
            2,
            Caches::Warm,
        );
        figure("arena_plaza100_tick_mean_us", plaza.mean_us(), "us");
        figure("arena_plaza100_records_shared_pct", plaza.shared_pct(), "%");
        return;
    }
    let five = run(
        &Scenario::five_v_five(),
        hightick_engine::replication::ChangedTicks,
        5,
        40,
        Caches::Warm,
    );
    let five_cold = run(
        &Scenario::five_v_five(),
        hightick_engine::replication::ChangedTicks,
        5,
        20,
        Caches::Evicted,
    );
    let five_beside = run(
        &Scenario::five_v_five(),
        ChangedTicks,
        5,
        20,
        Caches::Beside(BESIDE_MATCHES),
    );
    if only == "5v5" {
        print_5v5(&five, &five_cold, &five_beside);
        print_table(
            &[&five, &five_cold, &five_beside],
            &["5v5", "5v5_cold", "5v5_beside"],
        );
        return;
    }
    // The lag-compensation history recorded every 4th tick instead of the
    // shipped every tick: what recording every tick costs.
    let mut sparse_poses = Scenario::five_v_five();
    sparse_poses.match_config.pose_interval_ticks = 4;
    let five_every4 = run(
        &sparse_poses,
        hightick_engine::replication::ChangedTicks,
        5,
        40,
        Caches::Warm,
    );
    let plaza = run(
        &Scenario::plaza100(128),
        hightick_engine::replication::ChangedTicks,
        4,
        10,
        Caches::Warm,
    );
    let plaza30 = run(
        &Scenario::plaza100(30),
        hightick_engine::replication::ChangedTicks,
        4,
        10,
        Caches::Warm,
    );
    let poll = run(
        &Scenario::plaza100(128),
        ValueComparison::default(),
        4,
        10,
        Caches::Warm,
    );

    print_5v5(&five, &five_cold, &five_beside);
    figure(
        "arena_5v5_animation_us_poses_every_tick",
        five.subsystem_us(Subsystem::Animation),
        "us",
    );
    figure(
        "arena_5v5_animation_us_poses_every4",
        five_every4.subsystem_us(Subsystem::Animation),
        "us",
    );
    figure("arena_plaza100_tick_mean_us", plaza.mean_us(), "us");
    figure("arena_plaza100_records_shared_pct", plaza.shared_pct(), "%");
    figure("arena_5v5_records_shared_pct", five.shared_pct(), "%");
    figure(
        "arena_plaza100_bytes_per_client_s_128hz",
        plaza.bytes_per_client_s(),
        "B/s",
    );
    figure(
        "arena_plaza100_bytes_per_client_s_30hz",
        plaza30.bytes_per_client_s(),
        "B/s",
    );
    figure(
        "replication_push_vs_poll_ratio",
        poll.mean_us() / plaza.mean_us(),
        "x",
    );

    print_table(
        &[&five, &five_cold, &five_beside, &plaza, &plaza30, &poll],
        &[
            "5v5",
            "5v5_cold",
            "5v5_beside",
            "plaza100",
            "plaza100_30hz",
            "plaza100_poll",
        ],
    );
}

/// The per-subsystem table: mean microseconds per tick of each run.
fn print_table(runs: &[&Run], labels: &[&str]) {
    println!();
    print!("{:<14}", "mean us/tick");
    for l in labels {
        print!("{l:>15}");
    }
    println!();
    for s in [
        Subsystem::Movement,
        Subsystem::Animation,
        Subsystem::Equippable,
        Subsystem::Gameplay,
        Subsystem::Fow,
        Subsystem::Replication,
        Subsystem::Network,
    ] {
        print!("{:<14}", s.as_str());
        for r in runs.iter() {
            print!("{:>15.2}", r.subsystem_us(s));
        }
        println!();
    }
    print!("{:<14}", "whole tick");
    for r in runs.iter() {
        print!("{:>15.2}", r.mean_us());
    }
    println!();
    print!("{:<14}", "p99 tick");
    for r in runs.iter() {
        print!("{:>15.2}", r.quantile_us(0.99));
    }
    println!();
    print!("{:<14}", "combat ticks");
    for r in runs.iter() {
        print!(
            "{:>15}",
            format!("{}/{}", r.ticks_in_combat, r.ticks.samples_ns.len())
        );
    }
    println!();
}
