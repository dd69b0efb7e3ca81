//! Once warm, the per-player bookkeeping allocates nothing: the timer
//! wheel, interval recording, template rendering into a reused buffer,
//! and the pacing controller.

use std::time::{Duration, Instant};

use hightick_swarm::interval::{ErrorKind, Interval};
use hightick_swarm::pacing::{Pacer, PacingConfig};
use hightick_swarm::scenario::template::{Builtin, Escape, Template, Values, Var};
use hightick_swarm::wheel::TimerWheel;
use hightick_telemetry::alloc::count_allocations;

#[global_allocator]
static A: hightick_telemetry::alloc::CountingAllocator =
    hightick_telemetry::alloc::CountingAllocator;

#[test]
fn the_wheel_allocates_nothing_once_warm() {
    let t0 = Instant::now();
    let mut wheel = TimerWheel::new(t0, Duration::from_millis(1), 1024);
    let mut due = Vec::with_capacity(10_240);
    // Each round spreads 10,240 wake-ups over one turn of the wheel.
    let cycle = |wheel: &mut TimerWheel, due: &mut Vec<u32>, round: u64| {
        let base = t0 + Duration::from_millis(round * 1024);
        for k in 0..10_240u32 {
            wheel.schedule(base + Duration::from_micros(u64::from(k) * 100), k);
        }
        due.clear();
        for step in 1..=32 {
            wheel.advance(base + Duration::from_millis(step * 32), due);
        }
        assert_eq!(due.len(), 10_240);
    };
    cycle(&mut wheel, &mut due, 0); // warm-up: slot vectors grow
    cycle(&mut wheel, &mut due, 1);
    let n = count_allocations(|| {
        for round in 2..6 {
            cycle(&mut wheel, &mut due, round);
        }
    });
    assert_eq!(n, 0);
}

#[test]
fn recording_an_interval_allocates_nothing() {
    let mut interval = Interval::new(4);
    let mut other = Interval::new(4);
    let n = count_allocations(|| {
        for k in 0..10_000u64 {
            interval.record_ok((k % 4) as u16, 100 + k);
            interval.record_step_time((k % 4) as u16, 200 + k);
            interval.record_error(1, ErrorKind::Timeout, 10_000);
            interval.record_retry(1);
        }
        other.add(&interval);
        interval.reset();
    });
    assert_eq!(n, 0);
    assert_eq!(other.requests(), 20_000);
}

struct Player {
    token: String,
}

impl Values for Player {
    fn builtin(&mut self, _: Builtin) -> u64 {
        42
    }
    fn capture(&self, _: u16) -> Option<&str> {
        Some(&self.token)
    }
}

#[test]
fn rendering_a_template_into_a_reused_buffer_allocates_nothing() {
    let resolve = |name: &str| {
        Builtin::named(name)
            .map(Var::Builtin)
            .or((name == "token").then_some(Var::Capture(0)))
    };
    let url = Template::compile("/v1/players/{{user}}/items?token={{token}}", resolve).unwrap();
    let body = Template::compile(r#"{"key":"{{token}}-{{iteration}}"}"#, resolve).unwrap();
    let mut player = Player {
        token: "abc\"def".to_owned(),
    };
    let mut buf = String::with_capacity(256);
    let n = count_allocations(|| {
        for _ in 0..1_000 {
            buf.clear();
            url.render(&mut buf, &mut player, Escape::None).unwrap();
            buf.clear();
            body.render(&mut buf, &mut player, Escape::Json).unwrap();
        }
    });
    assert_eq!(n, 0);
    assert_eq!(buf, r#"{"key":"abc\"def-42"}"#);
}

#[test]
fn the_pacer_allocates_nothing() {
    let mut pacer = Pacer::new(PacingConfig::new(Duration::from_millis(50), 100.0));
    let n = count_allocations(|| {
        for k in 0..1_000 {
            pacer.update(Some(f64::from(k % 90) * 1_000.0));
        }
    });
    assert_eq!(n, 0);
}
