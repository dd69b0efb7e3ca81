//! Push replication against naive polling on a crowded toy match: 100
//! players who all see each other and all move every tick, plus 50 wandering
//! orbs; every client acknowledges every snapshot a few ticks later.
//!
//! Prints `FIGURE engine_toy100_push_tick_us`, `engine_toy100_poll_tick_us`
//! and `engine_toy100_push_vs_poll_ratio` (how many times faster the push
//! writer's whole tick is). The arena benchmark prints the headline
//! `replication_push_vs_poll_ratio` on the real game.

#[path = "../tests/support/mod.rs"]
mod support;

use hightick_engine::replication::{ChangeDetection, ChangedTicks, PacketFate, ValueComparison};
use hightick_engine::{Match, MatchConfig, PlayerId};
use hightick_telemetry::bench::{figure, measure};
use support::{Toy, stick};

const PLAYERS: u16 = 100;
const ENTITIES: u16 = 160;
const ACK_DELAY: u16 = 4;

struct Crowd<D: ChangeDetection> {
    m: Match<Toy, D>,
    sequence: u16,
}

impl<D: ChangeDetection> Crowd<D> {
    fn new(detection: D) -> Self {
        let config = MatchConfig {
            max_players: PLAYERS,
            max_entities: ENTITIES,
            snapshot_budget_bytes: 1200,
            ..MatchConfig::default()
        };
        let mut toy = Toy::new(usize::from(PLAYERS), usize::from(ENTITIES), 50, 9);
        toy.move_period = 4;
        let mut m = Match::with_detection(config, toy, detection).unwrap();
        for _ in 0..PLAYERS {
            m.join().unwrap();
        }
        let mut crowd = Self { m, sequence: 0 };
        for _ in 0..200 {
            crowd.tick();
        }
        crowd
    }

    fn tick(&mut self) -> usize {
        let next = self.m.tick_number() + 1;
        for p in 0..PLAYERS {
            let command = stick(
                next,
                if (next / 64 + u32::from(p)).is_multiple_of(2) {
                    1
                } else {
                    -1
                },
                0,
            );
            self.m.receive_command(PlayerId(p), &command).unwrap();
        }
        let report = self.m.tick();
        let seq = self.sequence;
        self.sequence = seq.wrapping_add(1);
        for p in 0..PLAYERS {
            self.m.packet_sent(PlayerId(p), seq);
            self.m
                .on_delivery(PlayerId(p), seq.wrapping_sub(ACK_DELAY), PacketFate::Acked);
        }
        report.snapshot_bytes
    }
}

fn main() {
    let mut push = Crowd::new(ChangedTicks);
    let mut poll = Crowd::new(ValueComparison::default());
    let push_stats = measure(|| push.tick(), 20, 15);
    let poll_stats = measure(|| poll.tick(), 20, 15);
    let bytes = push.tick();
    figure("engine_toy100_push_tick_us", push_stats.median_us(), "us");
    figure("engine_toy100_poll_tick_us", poll_stats.median_us(), "us");
    figure(
        "engine_toy100_push_vs_poll_ratio",
        poll_stats.median_ns() / push_stats.median_ns(),
        "x",
    );
    println!();
    println!("| writer | tick median (us) | snapshot bytes per tick (all clients) |");
    println!("|---|---|---|");
    println!("| push | {:.1} | {bytes} |", push_stats.median_us());
    println!("| poll | {:.1} | {} |", poll_stats.median_us(), poll.tick());
}
