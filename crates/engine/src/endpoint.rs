//! The thin coupling between a [`Match`] and `hightick-net`: one packet per
//! player per tick, through the player's connection on the secure layer's
//! [`Server`].
//!
//! After [`Match::tick`], the host calls [`Match::transmit_tick`] for each
//! seated player: the player's queued reliable events go on the reliable
//! channel of its connection's packet layer, its snapshot on the unreliable
//! one, the server writes and seals the packet into the host's buffer, and
//! the packet's sequence is recorded. When the connection reports packets'
//! fates (after the server took in the client's acks, or presumed packets
//! lost), [`Match::absorb_deliveries`] moves the acked ticks of what each
//! packet carried. Sending the datagram is the host's.
//!
//! The two steps inside [`Match::transmit_tick`], [`Match::queue_tick`] and
//! [`Match::packet_sent`], stay public for hosts with a transport of their
//! own (with [`Match::on_delivery`] for the fates).

use std::time::Instant;

use hightick_net::{DeliveryOutcome, PacketEndpoint, PacketError, Server, Transmit};
use hightick_proto::{Avatar, SchemaHash};

use crate::error::EngineError;
use crate::events::ReliableEvent;
use crate::game::Game;
use crate::player::PlayerId;
use crate::replication::{ChangeDetection, PacketFate};
use crate::runtime::Match;

/// Longest encoded event message.
const MAX_EVENT_BYTES: usize = 256;

impl From<DeliveryOutcome> for PacketFate {
    fn from(outcome: DeliveryOutcome) -> Self {
        match outcome {
            DeliveryOutcome::Acked => PacketFate::Acked,
            DeliveryOutcome::Lost => PacketFate::Lost,
        }
    }
}

/// Queues one reliable message on `endpoint`: `false` when its queue is
/// full (the message waits for a later tick), an error for anything else.
fn queue_reliable(endpoint: &mut PacketEndpoint, message: &[u8]) -> Result<bool, EngineError> {
    match endpoint.send_reliable(message) {
        Ok(()) => Ok(true),
        Err(PacketError::SendQueueFull) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

impl<G: Game, D: ChangeDetection> Match<G, D> {
    /// Puts `player`'s tick on its connection in server `slot`: its events
    /// and this tick's snapshot are queued ([`Self::queue_tick`]), the server
    /// writes the slot's next packet, sealed, into `buf`
    /// ([`Server::transmit_payload`]; `buf` must hold
    /// [`MAX_PACKET_BYTES`](hightick_net::wire::MAX_PACKET_BYTES)), and if it
    /// carries the snapshot its sequence is recorded ([`Self::packet_sent`]).
    /// Returns where to send the datagram and its length; `None`: the slot is
    /// not connected or had nothing to send.
    ///
    /// One packet per call: events the reliable queue cannot take yet stay
    /// queued for the next tick. If the packet layer refuses the tick (an
    /// event or snapshot over its size limits: a game or config bug), the
    /// packet goes without the snapshot.
    pub fn transmit_tick(
        &mut self,
        player: PlayerId,
        server: &mut Server,
        slot: usize,
        now: Instant,
        buf: &mut [u8],
    ) -> Option<Transmit> {
        let endpoint = server.endpoint_mut(slot)?;
        let has_snapshot = self.queue_tick(player, endpoint).unwrap_or(false);
        let (transmit, sequence) = server.transmit_payload(now, slot, buf)?;
        if has_snapshot {
            self.packet_sent(player, sequence);
        }
        Some(transmit)
    }

    /// The first step of [`Self::transmit_tick`], for hosts that write the
    /// packet themselves: queues `player`'s events on the reliable channel
    /// and this tick's snapshot on the unreliable one (after a (re)connect,
    /// the first tick queues the game's schema hash alone:
    /// [`Match::schema_hash`]; the player's avatar goes before its events
    /// whenever the connection has not been told it). Returns whether a
    /// snapshot was queued; if so, report the sequence of the packet that
    /// carries it with [`Match::packet_sent`].
    pub fn queue_tick(
        &mut self,
        player: PlayerId,
        endpoint: &mut PacketEndpoint,
    ) -> Result<bool, EngineError> {
        let mut message = [0u8; MAX_EVENT_BYTES];
        // A connection's first packet carries the schema hash alone, so a
        // client of another version refuses before it reads a snapshot or
        // an event; they follow from the next tick.
        if self.hash_pending(player) {
            let len = SchemaHash(self.schema_hash()).write_message(&mut message)?;
            if queue_reliable(endpoint, &message[..len])? {
                self.hash_sent(player);
            }
            return Ok(false);
        }
        // Events wait behind an avatar the queue cannot take yet: one may
        // name it.
        let mut queue_open = true;
        if let Some(avatar) = self.avatar_untold(player) {
            let len = Avatar(avatar).write_message(&mut message)?;
            queue_open = queue_reliable(endpoint, &message[..len])?;
            if queue_open {
                self.avatar_sent(player, avatar);
            }
        }
        while queue_open && let Some(event) = self.peek_event(player) {
            let len = event.write_message(&mut message)?;
            if !queue_reliable(endpoint, &message[..len])? {
                break;
            }
            self.pop_event(player);
        }
        let snapshot = self.snapshot(player);
        let has_snapshot = !snapshot.is_empty();
        if has_snapshot {
            endpoint.send_unreliable(snapshot)?;
        }
        Ok(has_snapshot)
    }

    /// Feeds every delivery notification waiting on `player`'s connection in
    /// server `slot` to the replication writer (fates of packets without a
    /// snapshot are ignored). Call it for each slot
    /// [`Server::poll_readable`] returns, or simply before each
    /// [`Self::transmit_tick`].
    pub fn absorb_deliveries(&mut self, player: PlayerId, server: &mut Server, slot: usize) {
        while let Some(delivery) = server.poll_delivery(slot) {
            self.on_delivery(player, delivery.sequence, delivery.outcome.into());
        }
    }
}
