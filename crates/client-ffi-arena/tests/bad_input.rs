//! Bad input at the C boundary: each case gets a clear status and a last
//! error in words, never a crash and never a write past the caller's
//! buffer. Null pointers, buffers too small, closed and made-up handles,
//! two threads on one handle, tokens that are garbage, expired, for another
//! game or sealed with another key, input fields out of range, and the
//! prediction calls: before prediction started, an unknown or garbled
//! stage, null and misaligned records, smoothing out of range. (The
//! prediction calls take no buffers, only single records: none can be too
//! small.)

mod support;

use std::ptr::{null, null_mut};
use std::time::Duration;

use hightick_arena_client::*;
use hightick_client_ffi::{
    HIGHTICK_REASON_CONNECT_TIMED_OUT, HIGHTICK_STATE_DISCONNECTED, HightickClient, HightickConfig,
    HightickConnection, HightickPrediction, HightickPredictionStats, HightickSnapshotInfo,
    HightickStats, HightickStatus, HightickTickSync,
};
use hightick_net::Key;
use support::player::{FfiPlayer, last_error};
use support::{arena_match, now_us, token};

/// A token for a server nobody runs (connecting needs no answer).
fn offline_token() -> Vec<u8> {
    let key = Key::generate(&mut rand::rng());
    token(&key, 1, "127.0.0.1:9".parse().unwrap(), 5, 0, 60)
}

fn connect(token: &[u8]) -> (HightickStatus, HightickClient) {
    let mut handle = 99;
    // SAFETY: valid pointers and lengths.
    let s = unsafe { hightick_connect(token.as_ptr(), token.len(), null(), now_us(), &mut handle) };
    (s, handle)
}

#[test]
fn null_pointers_are_refused_by_name() {
    let token = offline_token();
    let mut handle = 0;
    // SAFETY (every call below): null is what is being tested; the other
    // pointers are valid.
    unsafe {
        let s = hightick_connect(null(), 2048, null(), 0, &mut handle);
        assert_eq!(s, HightickStatus::NullPointer);
        assert!(last_error().contains("`token`"), "{}", last_error());
        let s = hightick_connect(token.as_ptr(), token.len(), null(), 0, null_mut());
        assert_eq!(s, HightickStatus::NullPointer);
        assert!(last_error().contains("`out`"), "{}", last_error());
        assert_eq!(
            hightick_config_default(null_mut()),
            HightickStatus::NullPointer
        );
        assert_eq!(
            hightick_last_error(null_mut(), 300, null_mut()),
            HightickStatus::NullPointer
        );
    }
    let (s, h) = connect(&token);
    assert_eq!(s, HightickStatus::Ok);
    let mut count = 7usize;
    let mut info = HightickSnapshotInfo::default();
    let mut entity = HightickArenaEntity::default();
    // SAFETY: as above.
    unsafe {
        let cases: [(HightickStatus, &str); 11] = [
            (hightick_send_input(h, 1, 1, null()), "`input`"),
            (
                hightick_poll_snapshot(h, null_mut(), null_mut(), 0, &mut count),
                "`info`",
            ),
            (
                hightick_poll_snapshot(h, &mut info, null_mut(), 0, null_mut()),
                "`out_count`",
            ),
            (
                hightick_poll_snapshot(h, &mut info, null_mut(), 4, &mut count),
                "`entities`",
            ),
            (
                hightick_poll_events(h, null_mut(), 0, null_mut()),
                "`out_count`",
            ),
            (
                hightick_poll_events(h, null_mut(), 8, &mut count),
                "`events`",
            ),
            (hightick_entity(h, 0, -1.0, null_mut()), "`out`"),
            (hightick_stats(h, null_mut()), "`out`"),
            (hightick_tick_sync(h, null_mut()), "`out`"),
            (hightick_connection(h, null_mut()), "`out`"),
            (
                hightick_poll_events(h, null_mut(), 0, &mut count),
                "nothing waits",
            ),
        ];
        for (i, (status, field)) in cases.into_iter().enumerate() {
            if field == "nothing waits" {
                // Null with capacity 0 is a valid empty buffer.
                assert_eq!(status, HightickStatus::Empty, "case {i}");
                continue;
            }
            assert_eq!(status, HightickStatus::NullPointer, "case {i} ({field})");
        }
        // A misaligned record pointer is refused too.
        let mut bytes = [0u8; 64];
        let misaligned = bytes.as_mut_ptr().add(1).cast::<HightickStats>();
        assert_eq!(
            hightick_stats(h, misaligned),
            HightickStatus::InvalidArgument
        );
        assert!(last_error().contains("misaligned"), "{}", last_error());
        assert_eq!(
            hightick_entity(h, 70_000, -1.0, &mut entity),
            HightickStatus::InvalidArgument
        );
        assert!(last_error().contains("`id`"), "{}", last_error());
    }
    // The handle still works.
    assert_eq!(hightick_update(h, now_us()), HightickStatus::Ok);
    assert_eq!(hightick_close(h), HightickStatus::Ok);
}

#[test]
fn buffers_too_small_are_refused_and_left_untouched() {
    let live = arena_match(&[7]);
    let p = FfiPlayer::connect(&live.token(7, 30));
    let h = p.handle;
    // Connect, without polling, until events wait and the world holds the
    // player and its wallet.
    let mut stats = HightickStats::default();
    let start = std::time::Instant::now();
    while start.elapsed() < Duration::from_secs(30) {
        assert_eq!(hightick_update(h, now_us()), HightickStatus::Ok);
        // SAFETY: valid out pointer.
        assert_eq!(unsafe { hightick_stats(h, &mut stats) }, HightickStatus::Ok);
        if stats.snapshots_applied > 10 && stats.events > 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(4));
    }
    assert!(
        stats.snapshots_applied > 10 && stats.events > 0,
        "{stats:?}"
    );

    const CANARY: u16 = 0xBEEF;
    let canary = HightickArenaEntity {
        id: CANARY,
        ..HightickArenaEntity::default()
    };
    let mut entities = [canary; 8];
    let mut info = HightickSnapshotInfo::default();
    let mut count = 0;
    // SAFETY: the buffer holds 8 records; the call is told it holds 1.
    let s = unsafe { hightick_poll_snapshot(h, &mut info, entities.as_mut_ptr(), 1, &mut count) };
    assert_eq!(s, HightickStatus::BufferTooSmall, "{}", last_error());
    assert!(count >= 2, "the player and its wallet: {count}");
    assert!(entities.iter().all(|e| e.id == CANARY), "nothing written");
    assert!(last_error().contains("`entities`"), "{}", last_error());
    // With room, the same snapshot is handed over.
    // SAFETY: the buffer holds 8 records.
    let s = unsafe { hightick_poll_snapshot(h, &mut info, entities.as_mut_ptr(), 8, &mut count) };
    assert_eq!(s, HightickStatus::Ok);
    assert!(entities[..count].iter().all(|e| e.id != CANARY));
    assert!(
        entities[count..].iter().all(|e| e.id == CANARY),
        "only `count` written"
    );
    assert_eq!(info.entity_count as usize, count);

    // Events: capacity 0 while some wait.
    // SAFETY: null with capacity 0.
    let s = unsafe { hightick_poll_events(h, null_mut(), 0, &mut count) };
    assert_eq!(s, HightickStatus::BufferTooSmall);
    assert_eq!(count, 1);
    let mut events = [HightickArenaEvent {
        reserved: 0xAA,
        ..HightickArenaEvent::default()
    }; 4];
    // SAFETY: the buffer holds 4 records; the call is told it holds 1.
    let s = unsafe { hightick_poll_events(h, events.as_mut_ptr(), 1, &mut count) };
    assert_eq!((s, count), (HightickStatus::Ok, 1));
    assert_eq!(events[0].reserved, 0);
    assert!(
        events[1..].iter().all(|e| e.reserved == 0xAA),
        "one written"
    );

    // The last error into a buffer too small for it.
    // SAFETY: null out pointer is refused before anything.
    let _ = unsafe { hightick_send_input(h, 0, 0, null()) };
    let mut text = [b'#' as std::ffi::c_char; 8];
    let mut len = 0;
    // SAFETY: the buffer holds 8 bytes; the call is told 4.
    let s = unsafe { hightick_last_error(text.as_mut_ptr(), 4, &mut len) };
    assert_eq!(s, HightickStatus::BufferTooSmall);
    assert_eq!(len, "argument `input` is null".len() + 1);
    assert!(text.iter().all(|&c| c == b'#' as std::ffi::c_char));
    assert_eq!(hightick_close(h), HightickStatus::Ok);
    live.stop();
}

#[test]
fn closed_and_made_up_handles_are_refused() {
    let (s, h) = connect(&offline_token());
    assert_eq!(s, HightickStatus::Ok);
    assert_ne!(h, 0);
    assert_eq!(hightick_close(h), HightickStatus::Ok);
    let mut stats = HightickStats::default();
    let mut sync = HightickTickSync::default();
    let mut state = HightickConnection::default();
    let mut entity = HightickArenaEntity::default();
    let mut info = HightickSnapshotInfo::default();
    let mut count = 0;
    let input = HightickArenaInput::default();
    let mut predicted = HightickPrediction::default();
    let mut prediction = HightickPredictionStats::default();
    for handle in [h, 0, 12345, u64::MAX] {
        let want = if handle == h {
            HightickStatus::Closed
        } else {
            HightickStatus::InvalidHandle
        };
        // SAFETY: valid pointers; the handle is what is being tested.
        let statuses = unsafe {
            [
                hightick_update(handle, now_us()),
                hightick_send_input(handle, 1, 1, &input),
                hightick_poll_snapshot(handle, &mut info, null_mut(), 0, &mut count),
                hightick_poll_events(handle, null_mut(), 0, &mut count),
                hightick_entity(handle, 0, 0.0, &mut entity),
                hightick_stats(handle, &mut stats),
                hightick_tick_sync(handle, &mut sync),
                hightick_connection(handle, &mut state),
                hightick_prediction_start(handle, null()),
                hightick_prediction(handle, &mut predicted),
                hightick_predicted_entity(handle, &mut entity),
                hightick_prediction_stats(handle, &mut prediction),
                hightick_prediction_smoothing(handle, 0.5),
                hightick_disconnect(handle),
                hightick_close(handle),
            ]
        };
        assert!(
            statuses.iter().all(|&s| s == want),
            "{handle:#x}: {statuses:?}"
        );
    }
    assert!(last_error().contains("never opened"), "{}", last_error());
    // A new connection may reuse the slot; the old handle stays closed.
    let (_, again) = connect(&offline_token());
    assert_ne!(again, h);
    assert_eq!(hightick_update(h, now_us()), HightickStatus::Closed);
    assert_eq!(hightick_update(again, now_us()), HightickStatus::Ok);
    assert_eq!(hightick_close(again), HightickStatus::Ok);
}

#[test]
fn two_threads_on_one_handle_get_busy_never_a_race() {
    let live = arena_match(&[7]);
    let mut p = FfiPlayer::connect(&live.token(7, 30));
    // SAFETY: null is the default stage.
    let s = unsafe { hightick_prediction_start(p.handle, null()) };
    assert_eq!(s, HightickStatus::Ok);
    assert!(p.play_until(Duration::from_secs(30), |p| p.snapshots > 5));
    let h = p.handle;
    let hammer = move || {
        let mut events = [HightickArenaEvent::default(); 16];
        let mut stats = HightickStats::default();
        let mut predicted = HightickPrediction::default();
        let mut seen = [0u32; 3]; // ok/empty, busy, other
        for _ in 0..3000 {
            let mut n = 0;
            // SAFETY: valid pointers and capacities.
            let statuses = unsafe {
                [
                    hightick_update(h, now_us()),
                    hightick_poll_events(h, events.as_mut_ptr(), events.len(), &mut n),
                    hightick_stats(h, &mut stats),
                    hightick_prediction(h, &mut predicted),
                    hightick_prediction_smoothing(h, 0.5),
                ]
            };
            for s in statuses {
                let i = match s {
                    HightickStatus::Ok | HightickStatus::Empty => 0,
                    HightickStatus::Busy => 1,
                    _ => 2,
                };
                seen[i] += 1;
            }
            assert!(n <= events.len());
        }
        seen
    };
    let a = std::thread::spawn(hammer);
    let b = std::thread::spawn(hammer);
    let (a, b) = (a.join().unwrap(), b.join().unwrap());
    eprintln!("ok/empty, busy, other: {a:?} {b:?}");
    assert_eq!(a[2] + b[2], 0, "only OK, EMPTY or BUSY");
    // A call is refused as busy only while another one is inside: some got in.
    assert!(a[0] + b[0] > 0);
    // The handle is whole afterwards.
    assert!(p.play_until(Duration::from_secs(10), |p| p.snapshots > 10));
    assert_eq!(hightick_close(h), HightickStatus::Ok);
    live.stop();
}

#[test]
fn garbage_expired_foreign_and_forged_tokens_are_refused() {
    let key = Key::generate(&mut rand::rng());
    let server = "127.0.0.1:9".parse().unwrap();
    let garbage: Vec<u8> = (0..2048u32).map(|i| (i * 31 % 251) as u8).collect();
    let (s, h) = connect(&garbage);
    assert_eq!((s, h), (HightickStatus::InvalidToken, 0));
    assert!(
        last_error().starts_with("connect token"),
        "{}",
        last_error()
    );
    let (s, _) = connect(&token(&key, 1, server, 5, 0, 60)[..100]);
    assert_eq!(s, HightickStatus::InvalidToken);
    assert!(last_error().contains("2048"), "{}", last_error());
    let (s, _) = connect(&[]);
    assert_eq!(s, HightickStatus::InvalidToken);
    // Expired a minute ago.
    let (s, h) = connect(&token(&key, 1, server, 5, 120, 60));
    assert_eq!((s, h), (HightickStatus::TokenExpired, 0));
    assert!(last_error().contains("expired"), "{}", last_error());
    // Made for another game's protocol.
    let mut foreign = token(&key, 1, server, 5, 0, 60);
    foreign[13] ^= 0xff; // the protocol id follows the 13-byte version
    let (s, _) = connect(&foreign);
    assert_eq!(s, HightickStatus::InvalidToken);
    assert!(last_error().contains("protocol id"), "{}", last_error());

    // Well formed but sealed with another key: only the server can tell,
    // and it answers nothing; the client gives up after the token's
    // timeout (1 s) and says so.
    let live = arena_match(&[7]);
    let forged = token(&Key::generate(&mut rand::rng()), 7, live.address, 1, 0, 60);
    let mut p = FfiPlayer::connect(&forged);
    let mut state = HightickConnection::default();
    let gave_up = p.play_until(Duration::from_secs(20), |p| {
        // SAFETY: valid out pointer.
        let s = unsafe { hightick_connection(p.handle, &mut state) };
        s == HightickStatus::Ok && state.state == HIGHTICK_STATE_DISCONNECTED
    });
    assert!(gave_up, "{state:?}");
    assert_eq!(state.reason, HIGHTICK_REASON_CONNECT_TIMED_OUT);
    assert_eq!(live.count("connected"), 0);
    assert_eq!(hightick_close(p.handle), HightickStatus::Ok);
    live.stop();
}

#[test]
fn input_fields_out_of_range_are_named_and_do_not_spoil_later_inputs() {
    let live = arena_match(&[7]);
    let mut p = FfiPlayer::connect(&live.token(7, 30));
    assert!(p.play_until(Duration::from_secs(30), |p| p.snapshots > 5));
    let bad = HightickArenaInput {
        move_x: -128,
        ..HightickArenaInput::default()
    };
    // SAFETY: valid record.
    let s = unsafe { hightick_send_input(p.handle, 1_000, 1_000, &bad) };
    assert_eq!(s, HightickStatus::InvalidArgument);
    assert!(last_error().contains("input.move_x"), "{}", last_error());
    // The frames after it send their inputs as before.
    let before = live.count("inputs_accepted");
    assert!(
        p.play_until(Duration::from_secs(30), |_| live.count("inputs_accepted")
            > before + 50)
    );
    let mut config = HightickConfig::default();
    // SAFETY: valid out pointer.
    assert_eq!(
        unsafe { hightick_config_default(&mut config) },
        HightickStatus::Ok
    );
    config.tick_rate_hz = 0;
    let mut h = 0;
    let token = live.token(8, 30);
    // SAFETY: valid pointers.
    let s = unsafe { hightick_connect(token.as_ptr(), token.len(), &config, 0, &mut h) };
    assert_eq!(s, HightickStatus::InvalidArgument);
    assert!(
        last_error().contains("config.tick_rate_hz"),
        "{}",
        last_error()
    );
    assert_eq!(hightick_close(p.handle), HightickStatus::Ok);
    live.stop();
}

#[test]
fn prediction_calls_refuse_bad_input_by_name() {
    let (s, h) = connect(&offline_token());
    assert_eq!(s, HightickStatus::Ok);
    let mut predicted = HightickPrediction::default();
    let mut prediction = HightickPredictionStats::default();
    let mut entity = HightickArenaEntity::default();
    // SAFETY (every call below): the pointers are valid or null, as tested.
    unsafe {
        // Before prediction started.
        let statuses = [
            hightick_prediction(h, &mut predicted),
            hightick_predicted_entity(h, &mut entity),
            hightick_prediction_stats(h, &mut prediction),
            hightick_prediction_smoothing(h, 0.5),
        ];
        assert!(
            statuses.iter().all(|&s| s == HightickStatus::NotPredicting),
            "{statuses:?}"
        );
        assert!(
            last_error().contains("hightick_prediction_start"),
            "{}",
            last_error()
        );

        // A stage the arena does not have, and one that is not text.
        let s = hightick_prediction_start(h, c"atlantis".as_ptr());
        assert_eq!(s, HightickStatus::InvalidArgument);
        let said = last_error();
        assert!(
            said.contains("`stage`") && said.contains("atlantis"),
            "{said}"
        );
        assert!(said.contains("dust_corners"), "the maps there are: {said}");
        let garbled = [0xffu8, 0xfe, 0];
        let s = hightick_prediction_start(h, garbled.as_ptr().cast());
        assert_eq!(s, HightickStatus::InvalidArgument);
        assert!(last_error().contains("UTF-8"), "{}", last_error());
        assert_eq!(
            hightick_prediction(h, &mut predicted),
            HightickStatus::NotPredicting,
            "a refused start starts nothing"
        );

        // Started (on the default map): nothing predicted before the
        // server's first state of the player.
        assert_eq!(hightick_prediction_start(h, null()), HightickStatus::Ok);
        assert_eq!(
            hightick_prediction(h, &mut predicted),
            HightickStatus::Empty
        );
        assert_eq!(
            hightick_predicted_entity(h, &mut entity),
            HightickStatus::Empty
        );
        assert_eq!(
            hightick_prediction_stats(h, &mut prediction),
            HightickStatus::Ok
        );
        assert_eq!(prediction, HightickPredictionStats::default());
        let input = HightickArenaInput {
            move_y: 127,
            ..HightickArenaInput::default()
        };
        assert_eq!(
            hightick_send_input(h, 10, 10, &input),
            HightickStatus::NotConnected
        );

        // Null and misaligned records.
        let cases = [
            hightick_prediction(h, null_mut()),
            hightick_predicted_entity(h, null_mut()),
            hightick_prediction_stats(h, null_mut()),
        ];
        assert!(
            cases.iter().all(|&s| s == HightickStatus::NullPointer),
            "{cases:?}"
        );
        assert!(last_error().contains("`out`"), "{}", last_error());
        let mut bytes = [0u8; 128];
        let misaligned = bytes.as_mut_ptr().add(1);
        assert_eq!(
            hightick_prediction_stats(h, misaligned.cast()),
            HightickStatus::InvalidArgument
        );
        assert_eq!(
            hightick_prediction(h, misaligned.cast()),
            HightickStatus::InvalidArgument
        );
        assert!(last_error().contains("misaligned"), "{}", last_error());
        assert!(bytes.iter().all(|&b| b == 0), "nothing written");

        // Smoothing: 0 (off) up to below 1.
        for bad in [-0.1, 1.0, 7.0, f32::NAN, f32::INFINITY] {
            assert_eq!(
                hightick_prediction_smoothing(h, bad),
                HightickStatus::InvalidArgument,
                "{bad}"
            );
            assert!(last_error().contains("`smoothing`"), "{}", last_error());
        }
        for good in [0.0, 0.5, 0.95] {
            assert_eq!(hightick_prediction_smoothing(h, good), HightickStatus::Ok);
        }
    }
    // The handle still works.
    assert_eq!(hightick_update(h, now_us()), HightickStatus::Ok);
    assert_eq!(hightick_close(h), HightickStatus::Ok);
}
