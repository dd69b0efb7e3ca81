//! What authenticating the agent protocol's frames costs (HMAC-SHA256 over
//! each frame and a sequence check; crates/swarm/src/distributed/frame.rs),
//! next to encoding the message at all:
//!
//! - `swarm_interval_frame_bytes`: a one-second interval of a 3-step
//!   scenario with 3,000 latencies recorded per step, as an agent sends it;
//! - `swarm_interval_encode_us`: encoding that message alone (no MAC);
//! - `swarm_interval_seal_us`: encoding it as a frame with its sequence
//!   number and MAC (what an agent pays per interval);
//! - `swarm_interval_open_us`: checking that frame's MAC and sequence
//!   (what the coordinator pays per agent per interval, before decoding);
//! - `swarm_rate_seal_us` / `swarm_rate_open_us`: the same for the
//!   coordinator's smallest frame, a paced rate.
//!
//! Run with `cargo bench -p hightick-swarm --bench frames`.

use hightick_swarm::distributed::frame::{LEN_BYTES, Opener, Sealer};
use hightick_swarm::distributed::wire::{Message, encode};
use hightick_swarm::interval::Interval;
use hightick_telemetry::bench::{figure, measure};

const ITERS: u32 = 200;
const SAMPLES: u32 = 50;

fn interval() -> Message {
    let mut i = Interval::new(3);
    for step in 0..3u16 {
        for k in 0..3_000u64 {
            // 0.2 ms .. 60 ms, spread over many buckets.
            let us = 200 + (k * 7_919) % 60_000;
            i.record_ok(step, us);
            i.record_step_time(step, us + 50);
        }
    }
    i.users = 10_000;
    Message::Interval {
        seq: 7,
        drain: false,
        interval: Box::new(i),
    }
}

/// Median microseconds to seal `msg`, and to open the frame it makes.
fn seal_and_open(msg: &Message) -> (f64, f64, usize) {
    let key = [0x42; 32];
    let mut sealer = Sealer::new(&key);
    let mut out = Vec::new();
    let seal = measure(|| sealer.seal(msg, &mut out), ITERS, SAMPLES);

    let mut frame = Vec::new();
    Sealer::new(&key).seal(msg, &mut frame);
    let mut len = [0; LEN_BYTES];
    len.copy_from_slice(&frame[..LEN_BYTES]);
    let fresh = Opener::new(&key);
    let open = measure(
        || {
            // Frame 0 each time: a fresh opener (a copy of its keyed state).
            let mut opener = fresh.clone();
            opener.open(len, &frame[LEN_BYTES..]).map(<[u8]>::len)
        },
        ITERS,
        SAMPLES,
    );
    assert!(fresh.clone().open(len, &frame[LEN_BYTES..]).is_ok());
    (seal.median_us(), open.median_us(), frame.len())
}

fn main() {
    let msg = interval();
    let mut body = Vec::new();
    let encode_only = measure(
        || {
            body.clear();
            encode(&msg, &mut body);
        },
        ITERS,
        SAMPLES,
    );
    let (seal, open, bytes) = seal_and_open(&msg);
    let (rate_seal, rate_open, _) = seal_and_open(&Message::Rate(1234.5));
    figure("swarm_interval_frame_bytes", bytes as f64, "bytes");
    figure("swarm_interval_encode_us", encode_only.median_us(), "us");
    figure("swarm_interval_seal_us", seal, "us");
    figure("swarm_interval_open_us", open, "us");
    figure("swarm_rate_seal_us", rate_seal, "us");
    figure("swarm_rate_open_us", rate_open, "us");
}
