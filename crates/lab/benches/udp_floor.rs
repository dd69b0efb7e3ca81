//! The kernel's floor for one 5v5 match's UDP traffic on loopback: what the
//! server's thread spends in `recvmmsg` / `sendmmsg` per match tick when it
//! does nothing else, on the server's real I/O path. The measurement itself
//! is `hightick_lab::breakdown::floor` (its docs say what is timed and how), shared
//! with `hightick lab breakdown`; this bench runs it for one 5v5 match tick
//! (10 clients, 52 B in, 60 B out; 200 samples of 100 ticks) and prints:
//!
//! - `udp_floor_send_us_per_datagram`: the plain variant (nobody waits on
//!   the client sockets). This is the floor.
//! - `udp_floor_send_woken_us_per_datagram`: the woken variant (a thread in
//!   `epoll_wait` on the client sockets, woken by every tick).
//! - `udp_floor_match_tick_us` is the plain variant's receive + send per
//!   match tick and `udp_floor_gpc_ceiling` = 0.9 / (match_tick_us * 128 /
//!   1e6): the games per core if the server did nothing but these system
//!   calls. Nothing here asserts a timing; the measurement fails if a
//!   datagram goes missing.
//!
//! `cargo bench -p hightick-lab --bench udp_floor`

use std::io;

use hightick_lab::breakdown::floor::{self, FloorPlan, Series};
use hightick_telemetry::bench::figure;

const TICK_HZ: f64 = 128.0;
/// The GPC definition: matches x 0.9 / cores.
const GPC_FACTOR: f64 = 0.9;
/// The target, in games per core.
const TARGET_GPC: f64 = 100.0;

/// Games per core if a match tick cost the server `tick_us` and nothing else.
fn gpc_ceiling(tick_us: f64) -> f64 {
    GPC_FACTOR / (tick_us * TICK_HZ / 1e6)
}

fn main() -> io::Result<()> {
    let plan = FloorPlan::FIVE_V_FIVE;
    let floor = floor::measure(plan)?;
    let (a, b) = (&floor.plain, &floor.woken);
    let clients = plan.clients as f64;
    let per_datagram = |s: &Series| s.cpu.median_us() / clients;
    let tick_us = a.tick.cpu.median_us();
    figure(
        "udp_floor_recv_us_per_datagram",
        per_datagram(&a.receive),
        "us",
    );
    figure(
        "udp_floor_send_us_per_datagram",
        per_datagram(&a.send),
        "us",
    );
    figure(
        "udp_floor_send_woken_us_per_datagram",
        per_datagram(&b.send),
        "us",
    );
    figure("udp_floor_match_tick_us", tick_us, "us");
    figure("udp_floor_gpc_ceiling", gpc_ceiling(tick_us), "games/core");

    println!();
    println!(
        "per match tick ({} x {} B in, {} x {} B out), medians of {} samples x {} ticks, \
         clock overhead taken off",
        plan.clients,
        plan.client_bytes,
        plan.clients,
        plan.server_bytes,
        plan.samples,
        plan.ticks_per_sample
    );
    println!(
        "{:<34} {:>9} {:>9} {:>9} {:>10}",
        "", "cpu p10", "cpu us", "cpu p90", "wall us"
    );
    for (name, series) in [
        ("a unwatched: receive", &a.receive),
        ("a unwatched: send", &a.send),
        ("a unwatched: tick", &a.tick),
        ("b epoll + sleeper: receive", &b.receive),
        ("b epoll + sleeper: send", &b.send),
        ("b epoll + sleeper: tick", &b.tick),
    ] {
        println!(
            "{:<34} {:>9.2} {:>9.2} {:>9.2} {:>10.2}",
            name,
            series.cpu.quantile_ns(0.1) / 1e3,
            series.cpu.median_us(),
            series.cpu.quantile_ns(0.9) / 1e3,
            series.wall.median_us()
        );
    }
    let b_tick_us = b.tick.cpu.median_us();
    println!(
        "games/core ceiling: a {:.0}, b {:.0} (0.9 / (tick us x {TICK_HZ} / 1e6))",
        gpc_ceiling(tick_us),
        gpc_ceiling(b_tick_us),
    );
    let budget_us = GPC_FACTOR * 1e6 / (TARGET_GPC * TICK_HZ);
    println!(
        "share of the {budget_us:.1} us per-tick budget of {TARGET_GPC:.0} GPC: a {:.0}%, b {:.0}%",
        tick_us / budget_us * 100.0,
        b_tick_us / budget_us * 100.0
    );
    println!(
        "clock overhead per interval: {:.2} us cpu, {:.2} us wall; extra receive calls: a {}, b {}",
        floor.overhead.cpu_ns / 1e3,
        floor.overhead.wall_ns / 1e3,
        a.extra_receives,
        b.extra_receives
    );
    let ticks = plan.ticks() as f64;
    for (name, costs) in [("a", a), ("b", b)] {
        let s = costs.scheduling;
        println!(
            "server thread over {name} (timed and untimed parts): {:.1} voluntary + {:.1} \
             involuntary switches per 1000 ticks, {:.2} us per tick runnable but off its cpu",
            s.voluntary as f64 * 1e3 / ticks,
            s.involuntary as f64 * 1e3 / ticks,
            s.wait_ns as f64 / 1e3 / ticks
        );
    }
    let cpu = |c: Option<usize>| c.map_or("any".to_string(), |c| c.to_string());
    println!(
        "server thread on cpu {}, epoll reader on cpu {}",
        cpu(floor.server_cpu),
        cpu(floor.reader_cpu)
    );
    Ok(())
}
