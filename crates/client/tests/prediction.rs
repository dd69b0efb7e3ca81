//! Prediction of the local player against a real `Server` and
//! `Match<Arena>` in process: players predicting their own moves (running
//! into walls, jumping, crouching) agree with the server tick for tick on a
//! clean link; when their inputs are held back the server repeats the last
//! one, the predictions go wrong, are corrected, and agree again.

mod support;

use std::time::Duration;

use support::prediction_run::{PredictionRun, run};

fn runs(stall_ticks: u32) -> PredictionRun {
    PredictionRun {
        rtt: Duration::from_millis(40),
        loss: 0.0,
        jitter: Duration::ZERO,
        players: 2,
        seconds: 12,
        seed: 3,
        stall_ticks,
    }
}

#[test]
fn on_a_clean_link_every_prediction_is_the_servers_state() {
    let out = run(runs(0));
    // A motion a second per player at least (the keyframes).
    assert!(out.compared >= 20, "{out:?}");
    // They ran: 2 players for 12 s at up to 6 m/s, less buy-phase fences.
    assert!(out.travelled_m > 40.0, "{out:?}");
    assert_eq!(out.mispredicted, 0, "{out:?}");
    assert!(out.agree_at_end.iter().all(|&a| a), "{out:?}");
}

#[test]
fn inputs_held_back_are_mispredicted_then_corrected() {
    let out = run(runs(24));
    assert!(out.mispredicted > 0, "{out:?}");
    assert!(out.correction_um.max() > 0, "{out:?}");
    assert!(out.agree_at_end.iter().all(|&a| a), "{out:?}");
}
