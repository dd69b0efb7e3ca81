//! Arbitrary datagrams fed to a server with one connected client, from the
//! client's address or from strangers. Checks: no panic, every datagram is
//! counted or accepted, and nothing a stranger sends is answered with more
//! bytes than it sent.
#![no_main]

use std::net::SocketAddr;
use std::time::Instant;

use hightick_fuzz::{client_addr, connected, datagrams};
use hightick_net::wire::MAX_PACKET_BYTES;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let now = Instant::now();
    let (mut server, _client) = connected(now);
    let mut buf = vec![0u8; MAX_PACKET_BYTES];
    let mut work = vec![0u8; 1500];
    while server.poll_transmit(now, &mut buf).is_some() {}
    for (i, datagram) in datagrams(data).enumerate() {
        let from = if datagram.first().is_some_and(|b| b & 0x80 != 0) {
            client_addr()
        } else {
            SocketAddr::from(([10, 9, (i >> 8) as u8, i as u8], 1000))
        };
        let stranger = !(from == client_addr() && server.is_connected(0));
        let before = server.counters().total();
        let d = &mut work[..datagram.len()];
        d.copy_from_slice(datagram);
        server.handle_datagram(now, from, d);
        let counted = server.counters().total() - before;
        assert!(counted <= 1, "one datagram counted {counted} times");
        let mut answered = 0;
        while let Some(t) = server.poll_transmit(now, &mut buf) {
            if t.destination == from {
                answered += t.len;
            }
        }
        if stranger {
            assert!(
                answered <= datagram.len(),
                "amplification: {answered} for {}",
                datagram.len()
            );
        }
    }
});
