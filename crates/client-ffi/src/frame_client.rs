//! [`FrameClient`]: a [`GameClient`] over a non-blocking UDP socket, pumped
//! once per frame by the caller on its own thread with its own clock. No
//! threads, no runtime, no timers of its own: between two calls nothing
//! runs, and arriving datagrams wait in the kernel's buffer.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use hightick_client::{GameClient, GameClientConfig};
use hightick_engine::Game;
use hightick_net::ConnectToken;
use hightick_net::wire::MAX_PACKET_BYTES;
use hightick_proto::InputCommand;

use crate::clock::CallerClock;
use crate::error::FfiError;

/// Receive buffer: any UDP datagram.
const RECV_BYTES: usize = 2048;
/// Socket errors one update reads past before leaving the rest for the
/// next frame.
const MAX_RECV_ERRORS: u32 = 16;

/// A game client driven by `update(now)` calls. See the [module docs](self).
#[derive(Debug)]
pub struct FrameClient<G: Game> {
    core: GameClient<G>,
    socket: UdpSocket,
    clock: CallerClock,
    tick_rate_hz: u32,
    /// The instant of the newest `update`.
    now: Instant,
    recv: Box<[u8]>,
    send: Box<[u8]>,
    send_errors: u64,
    /// Snapshots applied as of the newest update, and when the count last
    /// grew.
    snapshots_applied: u64,
    last_snapshot_at: Option<Instant>,
}

impl<G: Game> FrameClient<G> {
    /// Binds a socket on any local address of the server's family and sets
    /// up a client that connects with `token` from the caller's time `now_us`.
    pub fn connect(
        token: ConnectToken,
        config: GameClientConfig,
        now_us: u64,
    ) -> Result<Self, FfiError> {
        let server = token.server_addresses.as_slice().first().copied().ok_or(
            FfiError::InvalidArgument {
                field: "token",
                reason: "lists no server address",
            },
        )?;
        let bind: SocketAddr = match server {
            SocketAddr::V4(_) => ([0, 0, 0, 0], 0).into(),
            SocketAddr::V6(_) => (std::net::Ipv6Addr::UNSPECIFIED, 0).into(),
        };
        let socket = UdpSocket::bind(bind)?;
        socket.set_nonblocking(true)?;
        let origin = Instant::now();
        let tick_rate_hz = config.tick_rate_hz.max(1);
        let core = GameClient::with_config(token, config, origin)?;
        let mut client = Self {
            core,
            socket,
            clock: CallerClock::new(now_us, origin),
            tick_rate_hz,
            now: origin,
            recv: vec![0; RECV_BYTES].into_boxed_slice(),
            send: vec![0; MAX_PACKET_BYTES.max(RECV_BYTES)].into_boxed_slice(),
            send_errors: 0,
            snapshots_applied: 0,
            last_snapshot_at: None,
        };
        client.flush();
        Ok(client)
    }

    /// One frame's network work at the caller's time `now_us`: every
    /// datagram waiting in the socket into the core, the core's due timers,
    /// then everything it has to send.
    pub fn update(&mut self, now_us: u64) {
        self.now = self.clock.at(now_us);
        self.receive_waiting();
        if self.core.poll_timeout().is_some_and(|t| t <= self.now) {
            self.core.handle_timeout(self.now);
        }
        self.flush();
        let applied = self.core.stats().snapshots_applied;
        if applied != self.snapshots_applied {
            self.snapshots_applied = applied;
            self.last_snapshot_at = Some(self.now);
        }
    }

    /// Sends `command` (with the last three, for redundancy) right away.
    pub fn send_input(&mut self, command: InputCommand<G::Input>) -> Result<(), FfiError> {
        self.core.send_input(command)?;
        self.flush();
        Ok(())
    }

    /// Closes the connection; the server is told at once (a few redundant
    /// disconnect packets).
    pub fn disconnect(&mut self) {
        self.core.disconnect();
        self.flush();
    }

    /// The client core (world, events, stats).
    pub fn core(&self) -> &GameClient<G> {
        &self.core
    }

    /// The client core, to poll events.
    pub fn core_mut(&mut self) -> &mut GameClient<G> {
        &mut self.core
    }

    /// The instant of the newest update.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// The server's tick rate the client counts with.
    pub fn tick_rate_hz(&self) -> u32 {
        self.tick_rate_hz
    }

    /// The caller's clock.
    pub fn clock(&self) -> &CallerClock {
        &self.clock
    }

    /// How long ago (at the newest update) the newest snapshot arrived.
    pub fn snapshot_age(&self) -> Option<Duration> {
        self.last_snapshot_at
            .map(|at| self.now.saturating_duration_since(at))
    }

    /// Datagrams the socket refused to send.
    pub fn send_errors(&self) -> u64 {
        self.send_errors
    }

    /// The socket's local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket.local_addr()
    }

    fn flush(&mut self) {
        while let Some(t) = self.core.poll_transmit(self.now, &mut self.send) {
            if self
                .socket
                .send_to(&self.send[..t.len], t.destination)
                .is_err()
            {
                self.send_errors += 1; // UDP: a datagram that cannot go is lost
            }
        }
    }

    fn receive_waiting(&mut self) {
        let mut errors = 0;
        while errors < MAX_RECV_ERRORS {
            match self.socket.recv_from(&mut self.recv) {
                Ok((n, from)) => self
                    .core
                    .handle_datagram(self.now, from, &mut self.recv[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                // ICMP port unreachable and the like: keep reading, the
                // connection layer times out if the server is really gone.
                Err(_) => errors += 1,
            }
        }
    }
}
