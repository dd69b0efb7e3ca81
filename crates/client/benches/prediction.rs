//! Prediction of the local player under a simulated link: misprediction
//! rate and correction distance at 50, 100 and 150 ms of round trip with 1%
//! loss each way, arena players running into walls on the shipped 5v5 map
//! against a real `Server` and `Match<Arena>` in process (virtual clock).
//!
//! Two more rows show what the same costs when the link is worse: jitter
//! each way, and the uplink cut for 0.5 s once (the server repeats the last
//! input meanwhile, so the prediction goes wrong and is corrected).
//!
//! `cargo bench -p hightick-client --bench prediction` prints FIGURE lines.

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::Duration;

use support::prediction_run::{PredictionRun, run};

fn main() {
    // (rtt, jitter each way, uplink outage once half-way), milliseconds.
    let links = [
        (50u64, 0u64, 0u64),
        (100, 0, 0),
        (150, 0, 0),
        (50, 10, 0),
        (100, 20, 0),
        (150, 30, 0),
        (100, 0, 500),
    ];
    for (rtt_ms, jitter_ms, outage_ms) in links {
        let out = run(PredictionRun {
            rtt: Duration::from_millis(rtt_ms),
            jitter: Duration::from_millis(jitter_ms),
            loss: 0.01,
            players: 4,
            seconds: 60,
            seed: 11,
            stall_ticks: (outage_ms * 128 / 1000) as u32,
        });
        let rate = if out.compared == 0 {
            0.0
        } else {
            out.mispredicted as f64 / out.compared as f64
        };
        let c = &out.correction_um;
        let (mean_mm, p99_mm) = if c.is_empty() {
            (0.0, 0.0)
        } else {
            (c.mean() / 1000.0, c.value_at_quantile(0.99) as f64 / 1000.0)
        };
        println!(
            "rtt {rtt_ms} ms, jitter 0..{jitter_ms} ms each way, loss 1%, uplink outage {outage_ms} ms: {} states compared, {} mispredicted, {} resets (spawns), {:.0} m run, {:.0} B/s per client, corrections mean {mean_mm:.3} mm p99 {p99_mm:.3} mm",
            out.compared, out.mispredicted, out.resets, out.travelled_m, out.bytes_in_per_s
        );
        let name = match outage_ms {
            0 => format!("rtt{rtt_ms}_jitter{jitter_ms}"),
            _ => format!("rtt{rtt_ms}_outage{outage_ms}"),
        };
        println!("FIGURE prediction_misprediction_rate_{name} {rate:.5}");
        println!("FIGURE prediction_correction_mean_mm_{name} {mean_mm:.3}");
        println!("FIGURE prediction_correction_p99_mm_{name} {p99_mm:.3}");
    }
}
