//! [`UdpClient`]: a [`GameClient`] over a tokio UDP socket.
//!
//! The driver only moves bytes and reads the clock: receive datagrams into
//! the core, run its timers, send what it has to send. What to send (inputs)
//! and what to do with what arrived (events, the world) stays with the
//! caller, between calls to [`UdpClient::run_until`].

use std::io;
use std::net::SocketAddr;
use std::time::Instant;

use hightick_engine::replication::Replica;
use hightick_net::ConnectToken;
use hightick_net::wire::MAX_PACKET_BYTES;
use tokio::net::UdpSocket;

use crate::core::{GameClient, GameClientConfig};
use crate::error::ClientError;

/// Receive buffer size: any UDP datagram.
const RECV_BYTES: usize = 2048;

/// A game client driving its own UDP socket.
#[derive(Debug)]
pub struct UdpClient<R: Replica> {
    core: GameClient<R>,
    socket: UdpSocket,
    recv: Box<[u8]>,
    send: Box<[u8]>,
    send_errors: u64,
}

impl<R: Replica> UdpClient<R> {
    /// Binds a socket to `bind` (e.g. `127.0.0.1:0`) and sets up a client
    /// that will connect with `token`.
    pub async fn bind(
        token: ConnectToken,
        config: GameClientConfig,
        bind: SocketAddr,
    ) -> Result<Self, ClientError> {
        let socket = UdpSocket::bind(bind).await?;
        let core = GameClient::with_config(token, config, Instant::now())?;
        Ok(Self {
            core,
            socket,
            recv: vec![0; RECV_BYTES].into_boxed_slice(),
            send: vec![0; MAX_PACKET_BYTES.max(RECV_BYTES)].into_boxed_slice(),
            send_errors: 0,
        })
    }

    /// The sans-IO core.
    pub fn core(&self) -> &GameClient<R> {
        &self.core
    }

    /// The sans-IO core, to send inputs and poll events.
    pub fn core_mut(&mut self) -> &mut GameClient<R> {
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
            if self
                .socket
                .try_send_to(&self.send[..t.len], t.destination)
                .is_err()
            {
                self.send_errors += 1; // UDP: a datagram that cannot go is lost
            }
        }
    }

    /// Receives, runs timers and sends until `deadline`: what a client does
    /// between two of its ticks.
    pub async fn run_until(&mut self, deadline: Instant) -> Result<(), ClientError> {
        loop {
            self.flush();
            let now = Instant::now();
            if now >= deadline {
                return Ok(());
            }
            let wake = self
                .core
                .poll_timeout()
                .map_or(deadline, |t| t.min(deadline));
            if wake <= now {
                self.core.handle_timeout(now);
                continue;
            }
            let received =
                tokio::time::timeout_at(wake.into(), self.socket.recv_from(&mut self.recv)).await;
            let now = Instant::now();
            match received {
                Ok(Ok((n, from))) => {
                    self.core.handle_datagram(now, from, &mut self.recv[..n]);
                    // Drain whatever else is already queued without waiting.
                    while let Ok((n, from)) = self.socket.try_recv_from(&mut self.recv) {
                        self.core
                            .handle_datagram(Instant::now(), from, &mut self.recv[..n]);
                    }
                }
                // ICMP port unreachable and the like: keep going, the
                // connection layer times out if the server is really gone.
                Ok(Err(_)) => {}
                Err(_elapsed) => {}
            }
            if self.core.poll_timeout().is_some_and(|t| t <= now) {
                self.core.handle_timeout(now);
            }
        }
    }
}
