//! [`UdpClient`]: a [`GameClient`] over a UDP socket it reads at its own pace.
//!
//! The driver only moves bytes and reads the clock: receive datagrams into
//! the core, run its timers, send what it has to send. What to send (inputs)
//! and what to do with what arrived (events, the world) stays with the
//! caller, between calls to [`UdpClient::run_until`].
//!
//! Like a game client that reads its socket once per frame, the driver
//! drains the socket when it wakes (the deadline it was given, or a timer of
//! the core) and sleeps in between on tokio's timer. The socket is a
//! non-blocking `std` socket never registered with the reactor, so a
//! datagram that arrives wakes no thread: it waits in the kernel's buffer
//! for the next drain. On one machine this matters to the server too: on
//! loopback the sender's `sendmmsg` delivers into the receiver's socket and
//! pays for waking whoever waits on it.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::Instant;

use hightick_engine::Game;
use hightick_net::ConnectToken;
use hightick_net::wire::MAX_PACKET_BYTES;

use crate::core::{GameClient, GameClientConfig};
use crate::error::ClientError;

/// Receive buffer size: any UDP datagram.
const RECV_BYTES: usize = 2048;

/// A game client driving its own UDP socket.
#[derive(Debug)]
pub struct UdpClient<G: Game> {
    core: GameClient<G>,
    socket: UdpSocket,
    recv: Box<[u8]>,
    send: Box<[u8]>,
    send_errors: u64,
    /// A relay every datagram goes through, and the server it stands for.
    relay: Option<Relay>,
}

/// A relay between the client and the server (see [`UdpClient::relay_via`]).
#[derive(Debug, Clone, Copy)]
struct Relay {
    via: SocketAddr,
    server: SocketAddr,
}

impl<G: Game> UdpClient<G> {
    /// Binds a socket to `bind` (e.g. `127.0.0.1:0`) and sets up a client
    /// that will connect with `token`.
    pub async fn bind(
        token: ConnectToken,
        config: GameClientConfig,
        bind: SocketAddr,
    ) -> Result<Self, ClientError> {
        let socket = UdpSocket::bind(bind)?;
        socket.set_nonblocking(true)?;
        let core = GameClient::with_config(token, config, Instant::now())?;
        Ok(Self {
            core,
            socket,
            recv: vec![0; RECV_BYTES].into_boxed_slice(),
            send: vec![0; MAX_PACKET_BYTES.max(RECV_BYTES)].into_boxed_slice(),
            send_errors: 0,
            relay: None,
        })
    }

    /// Sends every datagram to `via` instead of the server, and takes what
    /// comes from `via` as coming from the server the client is talking to:
    /// a relay in the path, as the impairment proxy (`hightick-netem`) is.
    /// The token, the handshake and the encryption are unchanged; the
    /// server sees the relay's address as the client's.
    pub fn relay_via(&mut self, via: SocketAddr) {
        let server = self
            .relay
            .map_or(SocketAddr::from(([0, 0, 0, 0], 0)), |r| r.server);
        self.relay = Some(Relay { via, server });
    }

    /// The sans-IO core.
    pub fn core(&self) -> &GameClient<G> {
        &self.core
    }

    /// The sans-IO core, to send inputs and poll events.
    pub fn core_mut(&mut self) -> &mut GameClient<G> {
        &mut self.core
    }

    /// The socket's local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket.local_addr()
    }

    /// Datagrams the socket refused to send (full buffer, unreachable).
    pub fn send_errors(&self) -> u64 {
        self.send_errors
    }

    /// Sends everything the core has queued.
    pub fn flush(&mut self) {
        let now = Instant::now();
        while let Some(t) = self.core.poll_transmit(now, &mut self.send) {
            let to = match &mut self.relay {
                Some(relay) => {
                    relay.server = t.destination;
                    relay.via
                }
                None => t.destination,
            };
            if self.socket.send_to(&self.send[..t.len], to).is_err() {
                self.send_errors += 1; // UDP: a datagram that cannot go is lost
            }
        }
    }

    /// Receives, runs timers and sends until `deadline`: what a client does
    /// between two of its ticks. It wakes at the core's timers and at
    /// `deadline`, draining the socket each time; it returns right after the
    /// drain at `deadline`, so everything that arrived is in the core.
    pub async fn run_until(&mut self, deadline: Instant) -> Result<(), ClientError> {
        loop {
            let now = self.poll_now();
            if now >= deadline {
                return Ok(());
            }
            let wake = self
                .core
                .poll_timeout()
                .map_or(deadline, |t| t.min(deadline));
            if wake > now {
                tokio::time::sleep_until(wake.into()).await;
            }
        }
    }

    /// Receives what waits in the socket, runs the core's due timers and
    /// sends what it queued, without waiting; returns the time it ran at.
    /// One frame's I/O, for a caller that keeps the schedule itself (a task
    /// stepping many clients at their common tick: one wake-up for all).
    pub fn poll_now(&mut self) -> Instant {
        self.receive_waiting();
        let now = Instant::now();
        if self.core.poll_timeout().is_some_and(|t| t <= now) {
            self.core.handle_timeout(now);
        }
        self.flush();
        now
    }

    /// Hands every datagram waiting in the socket to the core.
    fn receive_waiting(&mut self) {
        loop {
            match self.socket.recv_from(&mut self.recv) {
                Ok((n, from)) => {
                    let from = match self.relay {
                        Some(r) if r.via == from => r.server,
                        _ => from,
                    };
                    self.core
                        .handle_datagram(Instant::now(), from, &mut self.recv[..n]);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                // ICMP port unreachable and the like: keep going, the
                // connection layer times out if the server is really gone.
                Err(_) => {}
            }
        }
    }
}
