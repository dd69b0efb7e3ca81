//! Real sockets on loopback: batches out and back, truncation, and a shared
//! socket's per-datagram sources and destinations.

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use crate::{RECEIVE_BYTES, ReceiveBatch, SendBatch, bind, bind_loopback};

/// Everything that arrives on `socket` within a second, up to `expected`
/// datagrams: (sender, destination, bytes).
fn receive_all(
    socket: &UdpSocket,
    expected: usize,
) -> Vec<(SocketAddr, Option<Ipv4Addr>, Vec<u8>)> {
    let mut batch = ReceiveBatch::new();
    let mut received = Vec::new();
    let give_up = Instant::now() + Duration::from_secs(1);
    while received.len() < expected && Instant::now() < give_up {
        let n = batch.receive(socket).unwrap();
        for i in 0..n {
            let to = batch.destination(i);
            let (from, bytes) = batch.datagram(i).unwrap();
            received.push((from, to, bytes.to_vec()));
        }
        if n == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    received
}

#[test]
fn a_batch_goes_out_and_comes_back_with_senders() {
    let a = bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let b = bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let (a_addr, b_addr) = (a.local_addr().unwrap(), b.local_addr().unwrap());
    let mut out = SendBatch::new();
    for i in 0..10u8 {
        let buf = out.buffer().unwrap();
        buf[..3].copy_from_slice(&[i, i, i]);
        out.commit(3, b_addr);
    }
    let flushed = out.flush(&a);
    assert_eq!(flushed.sent, 10);
    assert_eq!(flushed.bytes, 30);
    let mut received = receive_all(&b, 10);
    assert!(
        received
            .iter()
            .all(|(from, to, _)| *from == a_addr && to.is_none())
    );
    received.sort();
    let bytes: Vec<Vec<u8>> = received.into_iter().map(|(_, _, b)| b).collect();
    let expected: Vec<Vec<u8>> = (0..10u8).map(|i| vec![i, i, i]).collect();
    assert_eq!(bytes, expected);
    assert_eq!(
        ReceiveBatch::new().receive(&b).unwrap(),
        0,
        "nothing more waits"
    );
}

#[test]
fn oversized_datagrams_arrive_empty() {
    let a = UdpSocket::bind("127.0.0.1:0").unwrap();
    let b = bind("127.0.0.1:0".parse().unwrap()).unwrap();
    a.send_to(&[7u8; RECEIVE_BYTES + 100], b.local_addr().unwrap())
        .unwrap();
    let received = receive_all(&b, 1);
    assert_eq!(received.len(), 1);
    assert!(received[0].2.is_empty());
}

#[test]
fn clients_sharing_a_socket_send_from_and_receive_at_their_own_addresses() {
    let shared = bind_loopback(0).unwrap();
    let port = shared.local_addr().unwrap().port();
    let server = bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let server_addr = server.local_addr().unwrap();
    let client = |k: u8| Ipv4Addr::new(127, 1, 0, k);
    let mut out = SendBatch::new();
    for k in 1..=3u8 {
        out.buffer().unwrap()[0] = k;
        out.commit_from(1, server_addr, client(k));
    }
    assert_eq!(out.flush(&shared).sent, 3);
    // The server sees three clients, each at its own address on the
    // shared port, and answers each.
    let mut seen = receive_all(&server, 3);
    seen.sort();
    let senders: Vec<SocketAddr> = seen.iter().map(|(from, _, _)| *from).collect();
    let expected: Vec<SocketAddr> = (1..=3u8)
        .map(|k| SocketAddr::from((client(k), port)))
        .collect();
    assert_eq!(senders, expected);
    let mut answers = SendBatch::new();
    for (from, _, bytes) in &seen {
        answers.buffer().unwrap()[0] = bytes[0] + 100;
        answers.commit(1, *from);
    }
    assert_eq!(answers.flush(&server).sent, 3);
    // Each answer names the client it was sent to.
    let mut back = receive_all(&shared, 3);
    back.sort_by_key(|(_, _, bytes)| bytes[0]);
    let routed: Vec<(SocketAddr, Option<Ipv4Addr>, u8)> = back
        .iter()
        .map(|(from, to, b)| (*from, *to, b[0]))
        .collect();
    let expected: Vec<(SocketAddr, Option<Ipv4Addr>, u8)> = (1..=3u8)
        .map(|k| (server_addr, Some(client(k)), k + 100))
        .collect();
    assert_eq!(routed, expected);
}
