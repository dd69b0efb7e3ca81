//! [`SimCarrier`]: a freshness [`Carrier`] over `hightick_net`'s in-memory
//! server: each tick's packet queued on the server's one send path
//! (`Match::transmit_tick`), written and sealed; the client opens it, reads
//! it (its messages go to the probe) and acks at once; the match takes in
//! the fates. Shared by the freshness test and the `plaza_freshness` and
//! `match_tick` benches.
//!
//! [`everything`]: the packet layer and snapshot budget under which nothing
//! waits in plaza100. A snapshot of all 99 others moving is 999 bytes, over
//! the 896 the default packet layer lets one unreliable message carry; with
//! 64-byte fragments instead of 256 a 1200-byte packet carries 1115.

#![allow(dead_code)] // each including binary uses its own part

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use hightick_arena::freshness::Carrier;
use hightick_arena::game::Arena;
use hightick_engine::replication::ChangeDetection;
use hightick_engine::{Match, PlayerId};
use hightick_net::sim_server::SimServer;
use hightick_net::wire::MAX_PACKET_BYTES;
use hightick_net::{Channel, NetError, PacketConfig};

/// The packet layer whose unreliable message fills a whole packet (with
/// reliable fragments of 64 bytes), and the snapshot budget that fills it.
pub(crate) fn everything() -> (PacketConfig, u16) {
    let packet = PacketConfig {
        fragment_size: 64,
        // 1200 = 9 header + this + 9 fragment block overhead + 64.
        unreliable_budget: 1_118,
        ..PacketConfig::default()
    };
    let budget = packet.max_unreliable_message() as u16;
    (packet, budget)
}

/// Clients connected in memory; client `i` plays the match's `i`th player.
/// Each packet reaches its client `delay_ticks` ticks after it was sent (0:
/// the same tick); the client's acks go back at once, so the server learns
/// of a packet one `delay_ticks` after sending it, as over a link of that
/// round trip.
pub(crate) struct SimCarrier {
    net: SimServer,
    datagrams: Vec<[u8; MAX_PACKET_BYTES]>,
    lens: Vec<usize>,
    start: Instant,
    period: Duration,
    delay_ticks: u32,
    /// Per client, packets on the way: the tick each is due, its bytes.
    in_flight: Vec<VecDeque<(u32, Vec<u8>)>>,
    /// Emptied packet buffers, to reuse.
    spare: Vec<Vec<u8>>,
}

impl SimCarrier {
    /// `clients` clients of a match ticking at `tick_rate_hz`, over
    /// `packet`.
    pub(crate) fn connect(
        clients: usize,
        tick_rate_hz: u32,
        packet: PacketConfig,
    ) -> Result<Self, NetError> {
        let start = Instant::now();
        Ok(Self {
            net: SimServer::connect_with(clients, 42, start, packet)?,
            datagrams: vec![[0u8; MAX_PACKET_BYTES]; clients],
            lens: vec![0; clients],
            start,
            period: Duration::from_secs_f64(1.0 / f64::from(tick_rate_hz)),
            delay_ticks: 0,
            in_flight: (0..clients).map(|_| VecDeque::new()).collect(),
            spare: Vec::new(),
        })
    }

    /// As a live server does before a tick: every client's connection asked
    /// for, so the sends find it in cache.
    pub(crate) fn prefetch(&self) {
        for i in 0..self.lens.len() {
            self.net.server.prefetch(self.net.slot(i));
        }
    }

    /// Delays every packet by `ticks` ticks on its way to the client.
    pub(crate) fn with_delay(mut self, ticks: u32) -> Self {
        self.delay_ticks = ticks;
        self
    }

    /// The virtual time of the match's current tick.
    fn now<D: ChangeDetection>(&self, game: &Match<Arena, D>) -> Instant {
        self.start + self.period * game.tick_number()
    }
}

impl<D: ChangeDetection> Carrier<D> for SimCarrier {
    fn send(&mut self, game: &mut Match<Arena, D>, i: usize, player: PlayerId) -> usize {
        let now = self.now(game);
        let slot = self.net.slot(i);
        self.lens[i] = game
            .transmit_tick(
                player,
                &mut self.net.server,
                slot,
                now,
                &mut self.datagrams[i],
            )
            .map_or(0, |t| t.len);
        self.lens[i]
    }

    fn receive(
        &mut self,
        game: &mut Match<Arena, D>,
        i: usize,
        player: PlayerId,
        read: &mut dyn FnMut(&[u8]),
    ) {
        let now = self.now(game);
        let tick = game.tick_number();
        let len = std::mem::take(&mut self.lens[i]);
        if len > 0 {
            let mut bytes = self.spare.pop().unwrap_or_default();
            bytes.clear();
            bytes.extend_from_slice(&self.datagrams[i][..len]);
            self.in_flight[i].push_back((tick + self.delay_ticks, bytes));
        }
        while self.in_flight[i]
            .front()
            .is_some_and(|(due, _)| *due <= tick)
        {
            let Some((_, mut bytes)) = self.in_flight[i].pop_front() else {
                break;
            };
            self.net
                .acknowledge_with(now, i, &mut bytes, |channel, message| {
                    if channel == Channel::Unreliable {
                        read(message);
                    }
                });
            self.spare.push(bytes);
        }
        let slot = self.net.slot(i);
        game.absorb_deliveries(player, &mut self.net.server, slot);
    }
}
