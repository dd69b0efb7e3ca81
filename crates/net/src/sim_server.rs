//! One real [`Server`] and real [`Client`]s connected to it in memory, for
//! tests and benchmarks of what rides on the secure layer (a match's
//! snapshots, say): every packet sealed and opened as in production, with no
//! socket and no clock.
//!
//! [`SimServer::connect`] makes the connect tokens (from a seed, so a run is
//! reproducible), runs every handshake at one instant and records which
//! server slot each client got. After that the caller moves the datagrams:
//! straight across ([`SimServer::acknowledge`], or
//! [`SimServer::acknowledge_with`] to see the messages the client reads, or
//! `handle_datagram` on the
//! public [`SimServer::server`] and [`SimServer::clients`]), or through
//! [`SimLink`](crate::sim_link::SimLink)s for loss and latency. Everything is
//! allocated here; moving datagrams allocates nothing.
//!
//! ```
//! use std::time::Instant;
//! use hightick_net::sim_server::SimServer;
//! use hightick_net::wire::MAX_PACKET_BYTES;
//!
//! let now = Instant::now();
//! let mut sim = SimServer::connect(3, 7, now)?;
//! let slot = sim.slot(2);
//! sim.server.send_unreliable(slot, b"snapshot")?;
//! let mut datagram = [0u8; MAX_PACKET_BYTES];
//! let (t, _sequence) = sim.server.transmit_payload(now, slot, &mut datagram).unwrap();
//! assert_eq!(t.destination, sim.client_address(2));
//! // Client 2 opens and reads it, and its acks go straight back.
//! sim.acknowledge(now, 2, &mut datagram[..t.len]);
//! assert!(sim.server.poll_delivery(slot).is_some());
//! # Ok::<(), hightick_net::NetError>(())
//! ```

use std::net::SocketAddr;
use std::time::Instant;

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use crate::secure::wire::MAX_PACKET_BYTES;
use crate::{
    Channel, Client, ClientConfig, ConnectToken, Key, NetError, PacketConfig, Server, ServerConfig,
    ServerEvent, TokenParams,
};

/// The protocol id of the simulated server and its tokens.
pub const PROTOCOL: u64 = 0x6869_6768_7469_636B;
/// The unix time the simulated server starts at (tokens are valid a day from it).
pub const UNIX_START: u64 = 1_700_000_000;
/// How long a simulated connection stays up without hearing from its peer.
const TIMEOUT_SECONDS: i32 = 10;
/// Handshake rounds (request, challenge, response, keep-alive) to try: two
/// suffice when nothing is lost.
const HANDSHAKE_ROUNDS: usize = 4;
/// Longest message a client reads (the packet layer's default maximum).
const MESSAGE_BYTES: usize = 64 * 1024;

/// A [`Server`] with `n` [`Client`]s connected to it in memory. See the
/// [module docs](self).
#[derive(Debug)]
pub struct SimServer {
    /// The server, every connection on it.
    pub server: Server,
    /// Client `i`, at [`Self::client_address`]`(i)`.
    pub clients: Vec<Client>,
    /// The server slot of each client.
    slots: Vec<usize>,
    key: Key,
    rng: ChaCha20Rng,
    /// The packet layer of every client.
    packet: PacketConfig,
    datagram: Box<[u8]>,
    message: Box<[u8]>,
}

impl SimServer {
    /// A server with `clients` slots at [`Self::address`] and as many
    /// clients, each through its handshake at `now`. `seed` draws the keys;
    /// client `i` has client id `i`.
    pub fn connect(clients: usize, seed: u64, now: Instant) -> Result<Self, NetError> {
        Self::connect_with(clients, seed, now, PacketConfig::default())
    }

    /// [`connect`](Self::connect) with `packet` as the packet layer of the
    /// server and every client (a larger `unreliable_budget`, say).
    pub fn connect_with(
        clients: usize,
        seed: u64,
        now: Instant,
        packet: PacketConfig,
    ) -> Result<Self, NetError> {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let key = Key::generate(&mut rng);
        let mut config = ServerConfig::new(PROTOCOL, key.clone(), Self::address(), clients);
        config.packet = packet.clone();
        let server = Server::new(config, now, UNIX_START, &mut rng)?;
        let mut sim = Self {
            server,
            clients: Vec::with_capacity(clients),
            slots: vec![usize::MAX; clients],
            key,
            rng,
            packet,
            datagram: vec![0; MAX_PACKET_BYTES].into_boxed_slice(),
            message: vec![0; MESSAGE_BYTES].into_boxed_slice(),
        };
        for i in 0..clients {
            let client = sim.new_client(i, now)?;
            sim.clients.push(client);
        }
        sim.handshake(now)?;
        Ok(sim)
    }

    /// The server's address, as its tokens list it.
    pub fn address() -> SocketAddr {
        SocketAddr::from(([10, 0, 0, 1], 40_000))
    }

    /// The address client `i` sends from.
    pub fn client_address(&self, i: usize) -> SocketAddr {
        SocketAddr::from(([10, 1, (i >> 8) as u8, i as u8], 50_000))
    }

    /// The server slot of client `i` (panics if there is no client `i`).
    pub fn slot(&self, i: usize) -> usize {
        self.slots[i]
    }

    /// The client whose address is `address`, if any.
    pub fn client_at(&self, address: SocketAddr) -> Option<usize> {
        (0..self.clients.len()).find(|&i| self.client_address(i) == address)
    }

    /// Replaces client `i` by a fresh one (a new token, the same address and
    /// client id), as after a lost connection: the server closes the old
    /// connection, the old client hears so, and the new one connects at
    /// `now`, maybe in another slot. The server's events are taken meanwhile.
    pub fn reconnect(&mut self, i: usize, now: Instant) -> Result<(), NetError> {
        self.server.disconnect(self.slots[i])?;
        self.slots[i] = usize::MAX;
        // The farewells, and the event: the slot is free once both are out.
        self.deliver_server_datagrams(now);
        while self.server.poll_event().is_some() {}
        self.clients[i] = self.new_client(i, now)?;
        self.handshake(now)
    }

    /// Client `i` takes `datagram` from the server, reads every message and
    /// delivery notification it brings (and drops them), and sends what it
    /// then has to send (its acks) straight to the server. The server's
    /// delivery notifications for the slot wait for
    /// [`Server::poll_delivery`].
    pub fn acknowledge(&mut self, now: Instant, i: usize, datagram: &mut [u8]) {
        self.acknowledge_with(now, i, datagram, |_, _| {});
    }

    /// [`acknowledge`](Self::acknowledge), handing each message client `i`
    /// reads to `read` (its channel and bytes, valid during the call) before
    /// it is dropped: a snapshot for the client's replicated world, say.
    pub fn acknowledge_with(
        &mut self,
        now: Instant,
        i: usize,
        datagram: &mut [u8],
        mut read: impl FnMut(Channel, &[u8]),
    ) {
        let from = self.client_address(i);
        let client = &mut self.clients[i];
        client.handle_datagram(now, Self::address(), datagram);
        while let Some(m) = client.poll_message(&mut self.message) {
            read(m.channel, &self.message[..m.len]);
        }
        while client.poll_delivery().is_some() {}
        while let Some(t) = client.poll_transmit(now, &mut self.datagram) {
            self.server
                .handle_datagram(now, from, &mut self.datagram[..t.len]);
        }
    }

    fn new_client(&mut self, i: usize, now: Instant) -> Result<Client, NetError> {
        let token = ConnectToken::generate(
            &TokenParams {
                protocol_id: PROTOCOL,
                client_id: i as u64,
                create_unix: UNIX_START,
                expire_unix: UNIX_START + 24 * 3600,
                timeout_seconds: TIMEOUT_SECONDS,
                server_addresses: &[Self::address()],
                user_data: &[],
            },
            &self.key,
            &mut self.rng,
        )?;
        let config = ClientConfig {
            packet: self.packet.clone(),
            ..ClientConfig::default()
        };
        Client::new(token, config, now)
    }

    /// Runs the handshakes of every client not yet connected, then records
    /// the slots the server gave them.
    fn handshake(&mut self, now: Instant) -> Result<(), NetError> {
        for _ in 0..HANDSHAKE_ROUNDS {
            if self.clients.iter().all(Client::is_connected) {
                break;
            }
            for i in 0..self.clients.len() {
                let from = self.client_address(i);
                while let Some(t) = self.clients[i].poll_transmit(now, &mut self.datagram) {
                    self.server
                        .handle_datagram(now, from, &mut self.datagram[..t.len]);
                }
            }
            self.deliver_server_datagrams(now);
        }
        while let Some(event) = self.server.poll_event() {
            if let ServerEvent::Connected {
                slot, client_id, ..
            } = event
                && let Some(s) = self.slots.get_mut(client_id as usize)
            {
                *s = slot;
            }
        }
        for client in &mut self.clients {
            while client.poll_event().is_some() {}
        }
        if self.slots.contains(&usize::MAX) {
            return Err(NetError::ClientNotConnected);
        }
        Ok(())
    }

    /// Everything the server has to send, straight to its clients.
    fn deliver_server_datagrams(&mut self, now: Instant) {
        while let Some(t) = self.server.poll_transmit(now, &mut self.datagram) {
            if let Some(i) = self.client_at(t.destination) {
                self.clients[i].handle_datagram(now, Self::address(), &mut self.datagram[..t.len]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_client_connects_to_its_own_slot() {
        let sim = SimServer::connect(5, 1, Instant::now()).unwrap();
        assert_eq!(sim.server.connected_clients(), 5);
        let mut slots: Vec<_> = (0..5).map(|i| sim.slot(i)).collect();
        for (i, &slot) in slots.iter().enumerate() {
            assert_eq!(sim.server.client_id(slot), Some(i as u64));
            assert_eq!(sim.server.client_address(slot), Some(sim.client_address(i)));
        }
        slots.sort_unstable();
        slots.dedup();
        assert_eq!(slots.len(), 5);
    }

    #[test]
    fn acknowledge_with_hands_over_every_message() {
        let now = Instant::now();
        let mut sim = SimServer::connect(2, 3, now).unwrap();
        let slot = sim.slot(1);
        sim.server.send_reliable(slot, b"event").unwrap();
        sim.server.send_unreliable(slot, b"snapshot").unwrap();
        let mut datagram = [0u8; MAX_PACKET_BYTES];
        let (t, _) = sim
            .server
            .transmit_payload(now, slot, &mut datagram)
            .unwrap();
        let mut read = Vec::new();
        sim.acknowledge_with(now, 1, &mut datagram[..t.len], |channel, bytes| {
            read.push((channel, bytes.to_vec()));
        });
        assert_eq!(
            read,
            [
                (Channel::Unreliable, b"snapshot".to_vec()),
                (Channel::Reliable, b"event".to_vec())
            ]
        );
        assert!(sim.server.poll_delivery(slot).is_some(), "acked");
    }

    #[test]
    fn connect_with_sets_the_packet_layer_of_both_ends() {
        let now = Instant::now();
        let big = [7u8; 1_100];
        let mut plain = SimServer::connect(1, 4, now).unwrap();
        let slot = plain.slot(0);
        assert!(plain.server.send_unreliable(slot, &big).is_err());
        let packet = PacketConfig {
            fragment_size: 64,
            unreliable_budget: 1_118,
            ..PacketConfig::default()
        };
        let mut sim = SimServer::connect_with(1, 4, now, packet).unwrap();
        let slot = sim.slot(0);
        sim.server.send_unreliable(slot, &big).unwrap();
        let mut datagram = [0u8; MAX_PACKET_BYTES];
        let (t, _) = sim
            .server
            .transmit_payload(now, slot, &mut datagram)
            .unwrap();
        let mut read = 0;
        sim.acknowledge_with(now, 0, &mut datagram[..t.len], |_, bytes| {
            read = bytes.len();
        });
        assert_eq!(read, big.len());
    }

    #[test]
    fn a_reconnected_client_has_a_new_connection() {
        let now = Instant::now();
        let mut sim = SimServer::connect(3, 2, now).unwrap();
        let later = now + std::time::Duration::from_secs(2);
        let result = sim.reconnect(1, later);
        assert!(result.is_ok(), "{result:?}: {:?}", sim.server.counters());
        assert!(sim.clients.iter().all(Client::is_connected));
        assert_eq!(sim.server.connected_clients(), 3);
        assert_eq!(sim.server.client_id(sim.slot(1)), Some(1));
    }
}
