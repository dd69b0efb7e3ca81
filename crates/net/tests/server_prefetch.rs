//! `Server::prefetch` is only a cache hint: asking for connected, free and
//! out-of-range slots changes nothing a send or a receive sees.

use std::net::SocketAddr;
use std::time::Instant;

use hightick_net::sim_server::SimServer;
use hightick_net::wire::MAX_PACKET_BYTES;

#[test]
fn prefetching_slots_changes_nothing() {
    let now = Instant::now();
    let mut net = SimServer::connect(2, 11, now).expect("clients connect");
    for slot in [net.slot(0), net.slot(1), net.slot(1) + 1, usize::MAX] {
        net.server.prefetch(slot);
    }
    let mut datagram = [0u8; MAX_PACKET_BYTES];
    let mut message = [0u8; 64];
    for i in 0..2 {
        let slot = net.slot(i);
        let endpoint = net.server.endpoint_mut(slot).expect("connected");
        endpoint.send_unreliable(b"snapshot").expect("queued");
        net.server.prefetch(slot);
        let (t, _) = net
            .server
            .transmit_payload(now, slot, &mut datagram)
            .expect("a packet");
        let client = &mut net.clients[i];
        client.handle_datagram(now, SimServer::address(), &mut datagram[..t.len]);
        let got = client.poll_message(&mut message).expect("the snapshot");
        assert_eq!(&message[..got.len], b"snapshot");
        let from: SocketAddr = net.client_address(i);
        assert_eq!(t.destination, from);
    }
}
