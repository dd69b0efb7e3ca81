//! A client that vanishes is timed out and its seat freed; when it comes
//! back (a new connection, same client id) within the match it gets a full
//! state again. A valid token for a client on no roster gets no seat.

mod support;

use std::time::Duration;

use hightick_net::Key;
use hightick_server::{HostStats, MatchInfo};
use support::{BareClient, create_match, get, list_matches, play, start_host};

fn match_info(admin: std::net::SocketAddr) -> MatchInfo {
    list_matches(admin).remove(0)
}

#[test]
fn a_vanished_client_is_timed_out_and_a_returning_one_gets_full_state() {
    let key = Key::generate(&mut rand::rng());
    let host = start_host(1, &key, |_| {});
    let admin = host.admin_address();
    create_match(admin, r#"{"mode":"5v5","roster":[1,2,3,4,5,6,7,8,9,10]}"#);
    let server = host.game_addresses()[0];

    let mut first = vec![BareClient::new(&key, 1, server)];
    assert!(play(&mut first, Duration::from_secs(20), |c| c[0]
        .snapshots
        > 20));
    assert!(
        first[0].full_resyncs >= 1,
        "the first snapshots carry full state"
    );
    assert_eq!(match_info(admin).connected, 1);

    // It vanishes without a word: the token's 2 s timeout frees the seat.
    drop(first);
    let mut waited = 0;
    while match_info(admin).connected != 0 {
        waited += 1;
        assert!(waited < 200, "the vanished client was never timed out");
        std::thread::sleep(Duration::from_millis(50));
    }

    // It comes back on a new socket with a new token.
    let mut again = vec![BareClient::new(&key, 1, server)];
    assert!(play(&mut again, Duration::from_secs(20), |c| c[0]
        .snapshots
        > 20));
    assert!(
        again[0].full_resyncs >= 1,
        "a returning client gets full state"
    );
    assert_eq!(match_info(admin).connected, 1);

    // A valid token for someone on no roster: connected by the net layer,
    // then turned away and counted.
    again.push(BareClient::new(&key, 999, server));
    play(&mut again, Duration::from_secs(3), |c| c[1].snapshots > 0);
    assert_eq!(again[1].snapshots, 0, "a stranger gets no snapshot");
    assert!(!again[1].net.is_connected());
    let (_, body) = get(admin, "/v1/stats");
    let stats: HostStats = serde_json::from_str(&body).unwrap();
    assert_eq!(stats.network.unknown_clients, 1, "{:?}", stats.network);
    assert_eq!(match_info(admin).connected, 1);
    host.drain(Duration::ZERO);
    host.wait();
}
