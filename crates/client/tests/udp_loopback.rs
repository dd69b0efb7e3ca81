//! The UDP driver against a real server over loopback: a real socket on
//! each side, the wall clock, a 5v5 arena match behind the server.

mod support;

use std::net::UdpSocket;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hightick_arena::event::ArenaEvent;
use hightick_arena::game::Arena;
use hightick_arena::input::ArenaInput;
use hightick_client::{GameClientConfig, UdpClient};
use hightick_proto::InputCommand;
use support::Host;

#[tokio::test(flavor = "current_thread")]
async fn a_client_plays_over_loopback_udp() {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let address = socket.local_addr().unwrap();
    let host = Host::at(address, 2, Instant::now());
    let token = host.token(1);
    let stop = Arc::new(AtomicBool::new(false));
    let server = support::serve_udp(host, socket, stop.clone());

    let mut client = UdpClient::<Arena>::bind(
        token,
        GameClientConfig::default(),
        "127.0.0.1:0".parse().unwrap(),
    )
    .await
    .unwrap();
    let period = Duration::from_nanos(1_000_000_000 / 128);
    let end = Instant::now() + Duration::from_secs(2);
    let mut next = Instant::now();
    let mut welcome = None;
    while Instant::now() < end {
        next += period;
        client.run_until(next).await.unwrap();
        let core = client.core_mut();
        if let Some(estimate) = core.server_tick_estimate(Instant::now()) {
            let _ = core.send_input(InputCommand::new(
                estimate as u32 + 8,
                estimate as u32 + 8,
                ArenaInput {
                    move_y: 127,
                    ..ArenaInput::default()
                },
            ));
        }
        while let Some(e) = core.poll_event() {
            if let ArenaEvent::Welcome { player, .. } = e {
                welcome = Some(player);
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let host = server.join().unwrap();
    let core = client.core();
    let s = core.stats();
    assert!(core.is_connected(), "{:?}", core.state());
    assert_eq!(core.refusal(), None, "the same game's schema");
    assert!(s.snapshots_applied > 50, "{s:?}");
    assert_eq!((s.decode_errors, s.desyncs), (0, 0), "{s:?}");
    assert!(s.inputs_sent > 50, "{s:?}");
    let me = welcome.expect("a Welcome");
    assert!(core.world().contains(me));
    let inputs = host.game.input_stats(hightick_engine::PlayerId(1)).unwrap();
    assert!(inputs.accepted > 20, "{inputs:?}");
}
