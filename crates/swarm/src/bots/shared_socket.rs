//! [`SharedSocket`]: one UDP socket for a group of match bots whose servers
//! are on loopback. Each bot has its own address on it (`127.1.0.1`,
//! `127.1.0.2`... on the socket's port), so a server sees one client per
//! bot exactly as with a socket each; the group reads every bot's datagrams
//! with one `recvmmsg` a tick and sends every bot's with one `sendmmsg`,
//! where a socket per bot costs three system calls per bot tick (a read, a
//! read that finds it empty, a write).

use std::io;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::time::Instant;

use hightick_client::GameClient;
use hightick_engine::Game;
use hightick_udp::{BATCH, ReceiveBatch, SendBatch};

/// Seat 0's address; seat `k` has the `k`th after it.
const FIRST_SEAT: Ipv4Addr = Ipv4Addr::new(127, 1, 0, 1);

/// A group's socket: datagrams routed to seats by the address they were
/// sent to, and sent from each seat's own address. A datagram the kernel
/// refuses, or one for no seat, is lost as UDP loses it: each connection
/// counts it in its own packet loss.
pub(crate) struct SharedSocket {
    socket: UdpSocket,
    receive: ReceiveBatch,
    send: SendBatch,
}

impl std::fmt::Debug for SharedSocket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedSocket")
            .field("socket", &self.socket)
            .finish_non_exhaustive()
    }
}

impl SharedSocket {
    /// A socket on a free port of every loopback address (and of no other
    /// interface).
    pub(crate) fn bind() -> io::Result<Self> {
        Ok(Self {
            socket: hightick_udp::bind_loopback(0)?,
            receive: ReceiveBatch::new(),
            send: SendBatch::new(),
        })
    }

    /// The address seat `seat` sends from and is sent to.
    pub(crate) fn seat_address(seat: usize) -> Ipv4Addr {
        Ipv4Addr::from(u32::from(FIRST_SEAT) + seat as u32)
    }

    fn seat_of(address: Ipv4Addr) -> Option<usize> {
        let seat = u32::from(address).checked_sub(u32::from(FIRST_SEAT))?;
        usize::try_from(seat).ok()
    }

    /// Hands every datagram waiting in the socket to `deliver(seat, from,
    /// bytes)`, by the address it was sent to.
    pub(crate) fn receive(&mut self, mut deliver: impl FnMut(usize, SocketAddr, &mut [u8])) {
        loop {
            // An error (nothing a loopback socket should see) loses only
            // this read: the connections time out if it persists.
            let Ok(n) = self.receive.receive(&self.socket) else {
                return;
            };
            for i in 0..n {
                let seat = self.receive.destination(i).and_then(Self::seat_of);
                if let (Some(seat), Some((from, bytes))) = (seat, self.receive.datagram(i)) {
                    deliver(seat, from, bytes);
                }
            }
            if n < BATCH {
                return;
            }
        }
    }

    /// Queues everything `core` has to send, from `seat`'s address; a full
    /// batch goes out at once.
    pub(crate) fn queue<G: Game>(&mut self, core: &mut GameClient<G>, seat: usize, now: Instant) {
        let source = Self::seat_address(seat);
        loop {
            if self.send.is_full() {
                self.flush();
            }
            let Some(buf) = self.send.buffer() else {
                return;
            };
            let Some(t) = core.poll_transmit(now, buf) else {
                return;
            };
            self.send.commit_from(t.len, t.destination, source);
        }
    }

    /// Sends what is queued.
    pub(crate) fn flush(&mut self) {
        if !self.send.is_empty() {
            self.send.flush(&self.socket);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seats_and_addresses_map_both_ways() {
        assert_eq!(SharedSocket::seat_address(0), Ipv4Addr::new(127, 1, 0, 1));
        assert_eq!(
            SharedSocket::seat_address(300),
            Ipv4Addr::new(127, 1, 1, 45)
        );
        for seat in [0, 1, 31, 300] {
            assert_eq!(
                SharedSocket::seat_of(SharedSocket::seat_address(seat)),
                Some(seat)
            );
        }
        assert_eq!(SharedSocket::seat_of(Ipv4Addr::new(127, 0, 0, 1)), None);
    }
}
