//! Freshness of plaza100's crowd, measured briefly through real clients
//! connected in memory (`hightick_net::sim_server`): with room for
//! everything every pair is fresh within a tick; with a short budget
//! records wait and views go stale, for a smaller byte rate; over a link of
//! 8 ticks' round trip every delta still finds its base.

#[path = "support/sim_carrier.rs"]
mod sim_carrier;

use hightick_arena::freshness::{FreshnessReport, Schedule, measure};
use hightick_arena::scenario::Scenario;
use hightick_net::PacketConfig;
use sim_carrier::{SimCarrier, everything};

const WARMUP: u32 = 48;
const TICKS: u32 = 32;

/// plaza100 at 128 Hz with a short buy phase, measured for [`TICKS`] ticks
/// of combat after [`WARMUP`], with `budget` snapshot bytes per client (the
/// shipped one if `None`) over `packet`, each packet `delay` ticks on its way.
fn plaza(budget: Option<u16>, packet: PacketConfig, delay: u32) -> FreshnessReport {
    let mut scenario = Scenario::plaza100(128);
    scenario.arena.buy_ticks = 8;
    if let Some(b) = budget {
        scenario.match_config.snapshot_budget_bytes = b;
    }
    let mut m = scenario.bot_match(5).expect("scenario builds");
    let clients = usize::from(scenario.players);
    let mut carrier = SimCarrier::connect(clients, 128, packet)
        .expect("clients connect")
        .with_delay(delay);
    let schedule = Schedule {
        warmup_ticks: WARMUP,
        measure_ticks: TICKS,
        max_ticks: 8 + WARMUP + TICKS + 64 + delay,
    };
    let report = measure(&mut m, &mut carrier, &schedule);
    assert_eq!(report.ticks, TICKS, "{report:?}");
    assert_eq!(report.apply_errors, 0, "{report:?}");
    assert_eq!(
        report.pairs,
        u64::from(TICKS) * 100 * 99,
        "every client holds every other body in the plaza: {report:?}"
    );
    assert_eq!(report.missing, 0);
    assert!(report.in_view_pairs > 0 && report.in_view_pairs < report.pairs);
    report
}

#[test]
fn with_room_for_everything_views_are_fresh_and_a_short_budget_makes_them_stale() {
    let (packet, budget) = everything();
    let all = plaza(Some(budget), packet, 0);
    assert_eq!(all.deferred_records, 0, "nothing waits: {all:?}");
    assert!(all.staleness_p99_ticks <= 1, "{all:?}");
    assert!(all.staleness_in_view_p99_ticks <= 1, "{all:?}");
    assert!(
        all.position_error_p99_cm < 2.0,
        "within the wire's quantization: {all:?}"
    );

    // A third of what 99 moving players need, so records must wait.
    let shipped = plaza(Some(320), PacketConfig::default(), 0);
    assert!(shipped.deferred_records > 0, "{shipped:?}");
    assert!(shipped.fresh_pairs < shipped.pairs, "{shipped:?}");
    assert!(
        shipped.staleness_p50_ticks <= shipped.staleness_p99_ticks
            && shipped.staleness_p99_ticks <= shipped.staleness_max_ticks
    );
    assert!(
        shipped.staleness_p99_ticks > all.staleness_p99_ticks,
        "{shipped:?}"
    );
    assert!(
        shipped.position_error_p99_cm > all.position_error_p99_cm,
        "{shipped:?}"
    );
    assert!(
        shipped.bytes_per_client_s < all.bytes_per_client_s,
        "the budget saves bytes: {shipped:?} vs {all:?}"
    );
}

#[test]
fn over_a_round_trip_of_8_ticks_deltas_apply_and_views_stay_close() {
    let shipped = plaza(None, PacketConfig::default(), 8);
    // `plaza` asserted every snapshot applied: no delta missed its base.
    assert!(shipped.staleness_p99_ticks <= 8, "{shipped:?}");
    assert!(shipped.fresh_pairs > shipped.pairs / 2, "{shipped:?}");
}
