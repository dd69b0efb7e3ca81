//! Arbitrary datagrams fed to a connected client from its server's address
//! and elsewhere. Checks: no panic, each datagram counted at most once.
#![no_main]

use std::net::SocketAddr;
use std::time::Instant;

use hightick_fuzz::{connected, datagrams, server_addr};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let now = Instant::now();
    let (_server, mut client) = connected(now);
    let mut work = vec![0u8; 1500];
    for datagram in datagrams(data) {
        let from = if datagram.first().is_some_and(|b| b & 0x80 != 0) {
            SocketAddr::from(([10, 9, 9, 9], 9))
        } else {
            server_addr()
        };
        let before = client.counters().total();
        let d = &mut work[..datagram.len()];
        d.copy_from_slice(datagram);
        client.handle_datagram(now, from, d);
        assert!(client.counters().total() - before <= 1);
    }
});
