//! The quality probe against a real `Server` and `Match<Arena>` in process on
//! a virtual clock: a client whose snapshots arrive at once sees them young
//! and draws where the server had its entities; one whose snapshots stall
//! for 16 ticks every second and then arrive together sees them old, and
//! draws walking players where they no longer are. A host that skips ahead
//! after a stall shifts the schedule the ages are measured against: that
//! reads high for a moment, then no more.

mod support;

use std::time::Instant;

use hightick_arena::game::Arena;
use hightick_arena::input::ArenaInput;
use hightick_client::{GameClient, Quality, QualityProbe};
use hightick_proto::InputCommand;
use support::{Host, PERIOD, SERVER, client_address, uplink};

const STALL_EVERY: u32 = 128;
const STALL_FOR: u32 = 16;

#[test]
fn stalled_snapshots_are_old_and_draw_players_where_they_no_longer_are() {
    let start = Instant::now();
    let mut host = Host::new(2, start);
    let mut clients: Vec<GameClient<Arena>> = (0..2).map(|i| host.client(i)).collect();
    let mut probes: Vec<QualityProbe> =
        (0..2).map(|_| QualityProbe::new(128, 2.0, start)).collect();
    let mut held: Vec<Vec<u8>> = Vec::new();
    let server = SERVER.parse().unwrap();
    for step in 0..1500u32 {
        for (i, c) in clients.iter_mut().enumerate() {
            if let Some(estimate) = c.server_tick_estimate(host.now) {
                let tick = estimate as u32 + 8;
                let walk = ArenaInput {
                    move_y: 127,
                    yaw: (step / 200) as f32,
                    ..ArenaInput::default()
                };
                let _ = c.send_input(InputCommand::new(tick, tick, walk));
            }
            uplink(&mut host, i, c);
        }
        host.tick();
        // Client 0: everything at once. Client 1: held back during stalls
        // (after the first two seconds), then all together.
        let stalled = step > 256 && step % STALL_EVERY < STALL_FOR;
        held.extend(host.take_outbox(client_address(1)));
        for (i, c) in clients.iter_mut().enumerate() {
            let arriving = if i == 0 {
                host.take_outbox(client_address(0))
            } else if stalled {
                Vec::new()
            } else {
                std::mem::take(&mut held)
            };
            for mut d in arriving {
                c.handle_datagram(host.now, server, &mut d);
            }
            if c.poll_timeout().is_some_and(|t| t <= host.now) {
                c.handle_timeout(host.now);
            }
            while c.poll_event().is_some() {}
            probes[i].frame(host.now, c);
        }
        host.now += PERIOD;
        if step == 700 {
            // The host stalls 10 periods and skips the ticks it missed.
            host.now += PERIOD * 10;
        }
    }
    let tick_us = PERIOD.as_micros() as u64;
    let (fresh, stale) = (probes[0].quality(), probes[1].quality());
    // Straight through: every frame holds the snapshot of its tick, but for
    // the moment after the skip.
    assert!(fresh.snapshot_age_us.len() > 1000, "{}", summary(fresh));
    assert!(
        fresh.snapshot_age_us.value_at_quantile(0.95) < tick_us,
        "{}",
        summary(fresh)
    );
    let skipped = fresh.snapshot_age_us.max();
    assert!(
        (10 * tick_us..12 * tick_us).contains(&skipped),
        "{skipped} us"
    );
    assert!(
        fresh.snapshot_age_us.count_between(tick_us, 12 * tick_us) <= 64,
        "{}",
        summary(fresh)
    );
    assert!(fresh.position_error_mm.len() > 1000, "{}", summary(fresh));
    assert!(
        fresh.position_error_mm.value_at_quantile(0.99) <= 1,
        "{}",
        summary(fresh)
    );
    // Stalled: the oldest snapshot is a stall old, and what was drawn past
    // the newest sample during the stall was off by the walk since.
    let oldest = stale.snapshot_age_us.max();
    assert!(
        (u64::from(STALL_FOR - 1) * tick_us..=u64::from(STALL_FOR + 1) * tick_us).contains(&oldest),
        "{oldest} us"
    );
    assert!(
        stale.snapshot_age_us.value_at_quantile(0.5) < tick_us,
        "{}",
        summary(stale)
    );
    assert!(stale.position_error_mm.len() > 1000, "{}", summary(stale));
    // Walking at about 5 m/s, 14 ticks behind: tens of centimetres.
    let worst = stale.position_error_mm.max();
    assert!(worst > 100, "{worst} mm");
    assert_eq!(stale.positions_unchecked, 0, "nothing was lost, only late");
}

/// Quantiles of a probe's histograms, for assertion messages.
fn summary(q: &Quality) -> String {
    let h = |h: &hdrhistogram::Histogram<u64>| {
        format!(
            "n {} p50 {} p95 {} p99 {} max {}",
            h.len(),
            h.value_at_quantile(0.5),
            h.value_at_quantile(0.95),
            h.value_at_quantile(0.99),
            h.max()
        )
    };
    format!(
        "age us: {}; error mm: {}; unchecked {}",
        h(&q.snapshot_age_us),
        h(&q.position_error_mm),
        q.positions_unchecked
    )
}
