//! [`SimCarrier`]: a freshness [`Carrier`] over `hightick_net`'s in-memory
//! server: each tick's packet queued on the server's one send path
//! (`Match::transmit_tick`), written and sealed; the client opens it, reads
//! it (its messages go to the probe) and acks at once; the match takes in
//! the fates. Shared by the freshness test and the `plaza_freshness` bench.
//!
//! [`everything`]: the packet layer and snapshot budget under which nothing
//! waits in plaza100. A snapshot of all 99 others moving is 999 bytes, over
//! the 896 the default packet layer lets one unreliable message carry; with
//! 64-byte fragments instead of 256 a 1200-byte packet carries 1115.

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
pub(crate) struct SimCarrier {
    net: SimServer,
    datagrams: Vec<[u8; MAX_PACKET_BYTES]>,
    lens: Vec<usize>,
    start: Instant,
    period: Duration,
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
        })
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
        let len = std::mem::take(&mut self.lens[i]);
        if len > 0 {
            self.net
                .acknowledge_with(now, i, &mut self.datagrams[i][..len], |channel, message| {
                    if channel == Channel::Unreliable {
                        read(message);
                    }
                });
        }
        let slot = self.net.slot(i);
        game.absorb_deliveries(player, &mut self.net.server, slot);
    }
}
