//! A match's own tick rate through the admin API: `tick_rate_hz` in
//! `POST /v1/matches` is checked, answered and listed, and the match ticks
//! at it (slower than a default-rate match on the same worker).

mod support;

use std::time::{Duration, Instant};

use hightick_net::Key;
use support::{create_match, list_matches, post, start_host};

#[test]
fn a_match_runs_at_the_rate_it_was_asked_for() {
    let key = Key::generate(&mut rand::rng());
    let host = start_host(1, &key, |_| {});
    let admin = host.admin_address();

    let slow = create_match(admin, r#"{"mode":"5v5","roster":[1,2],"tick_rate_hz":64}"#);
    assert_eq!((slow.mode.as_str(), slow.tick_rate_hz), ("5v5", 64));

    let fast = create_match(admin, r#"{"mode":"5v5","roster":[3,4]}"#);
    assert_eq!(fast.tick_rate_hz, 128);
    assert_eq!(slow.worker, fast.worker, "one worker hosts both");

    // The list shows each match's own rate.
    let rates: Vec<(String, u32)> = list_matches(admin)
        .iter()
        .map(|m| (m.id.clone(), m.tick_rate_hz))
        .collect();
    assert_eq!(
        rates,
        vec![(slow.id.clone(), 64), (fast.id.clone(), 128)],
        "{rates:?}"
    );

    // Once the 64 Hz match has run a while, the 128 Hz one (created after
    // it, on the same worker) has run more ticks.
    let give_up = Instant::now() + Duration::from_secs(30);
    let (slow_tick, fast_tick) = loop {
        let now = list_matches(admin);
        let tick = |id: &str| now.iter().find(|m| m.id == id).unwrap().tick;
        let (s, f) = (tick(&slow.id), tick(&fast.id));
        if s >= 64 || Instant::now() > give_up {
            break (s, f);
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(slow_tick >= 64, "the 64 Hz match ticks ({slow_tick})");
    assert!(
        fast_tick > slow_tick,
        "128 Hz ran {fast_tick} ticks, 64 Hz {slow_tick}"
    );

    host.drain(Duration::ZERO);
    host.wait();
}

#[test]
fn a_bad_rate_is_refused_naming_the_field() {
    let key = Key::generate(&mut rand::rng());
    let host = start_host(1, &key, |_| {});
    let admin = host.admin_address();
    for rate in ["0", "257", "100000", "-5", "1.5", r#""fast""#] {
        let (status, body) = post(
            admin,
            "/v1/matches",
            &format!(r#"{{"mode":"5v5","roster":[1],"tick_rate_hz":{rate}}}"#),
        );
        assert_eq!(status, 400, "{rate}: {body}");
        assert!(body.contains("tick_rate_hz"), "{rate}: {body}");
        let json: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert!(json["error"].is_string(), "{body}");
    }
    assert!(list_matches(admin).is_empty(), "nothing was created");
    // The edges are fine.
    for (rate, roster) in [(1, 1), (256, 2)] {
        let info = create_match(
            admin,
            &format!(r#"{{"mode":"5v5","roster":[{roster}],"tick_rate_hz":{rate}}}"#),
        );
        assert_eq!(info.tick_rate_hz, rate);
    }
    // A plaza match at a rate between the presets keeps its mode's name
    // (and so its budgets).
    let roster: Vec<u64> = (100..200).collect();
    let plaza = create_match(
        admin,
        &format!(r#"{{"mode":"plaza100","roster":{roster:?},"tick_rate_hz":48}}"#),
    );
    assert_eq!((plaza.mode.as_str(), plaza.tick_rate_hz), ("plaza100", 48));

    host.drain(Duration::ZERO);
    host.wait();
}
