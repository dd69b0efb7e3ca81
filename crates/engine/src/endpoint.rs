//! The thin coupling between a [`Match`] and the packet layer of
//! `hightick-net`: one [`PacketEndpoint`] per player, one packet per player
//! per tick.
//!
//! After [`Match::tick`], the host calls [`Match::send_tick`] for each
//! player: the player's queued reliable events go on the reliable channel,
//! its snapshot on the unreliable one, the endpoint writes the packet, and
//! its sequence is recorded so the fate reported later by
//! [`Match::absorb_deliveries`] moves the right acked ticks. Packets are
//! sealed and sent by the host (secure layer and socket are not this crate's).

use std::time::Instant;

use hightick_net::{DeliveryOutcome, PacketEndpoint, PacketError};

use crate::PlayerId;
use crate::error::EngineError;
use crate::events::ReliableEvent;
use crate::game::Game;
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

impl<G: Game, D: ChangeDetection> Match<G, D> {
    /// Hands `player`'s events and this tick's snapshot to its endpoint and
    /// writes the packet that carries the snapshot into `datagram`. Returns
    /// the packet's length (`None`: the endpoint had nothing to send). Events
    /// the reliable queue cannot take yet stay queued for the next tick.
    /// Call the endpoint's `write_packet` again afterwards to flush further
    /// reliable data.
    pub fn send_tick(
        &mut self,
        player: PlayerId,
        endpoint: &mut PacketEndpoint,
        now: Instant,
        datagram: &mut [u8],
    ) -> Result<Option<usize>, EngineError> {
        let has_snapshot = self.queue_tick(player, endpoint)?;
        let Some((sequence, len)) = endpoint.write_packet(now, datagram) else {
            return Ok(None);
        };
        if has_snapshot {
            self.packet_sent(player, sequence);
        }
        Ok(Some(len))
    }

    /// The first half of [`Self::send_tick`], for hosts whose secure layer
    /// writes the packet: queues `player`'s events on the reliable channel
    /// and this tick's snapshot on the unreliable one. Returns whether a
    /// snapshot was queued; if so, report the sequence of the packet that
    /// carries it with [`Match::packet_sent`].
    pub fn queue_tick(
        &mut self,
        player: PlayerId,
        endpoint: &mut PacketEndpoint,
    ) -> Result<bool, EngineError> {
        let mut message = [0u8; MAX_EVENT_BYTES];
        while let Some(event) = self.peek_event(player) {
            let len = event.write_message(&mut message)?;
            match endpoint.send_reliable(&message[..len]) {
                Ok(()) => {}
                Err(PacketError::SendQueueFull) => break,
                Err(e) => return Err(e.into()),
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

    /// Feeds every delivery notification of `player`'s endpoint to the
    /// replication writer (fates of packets without a snapshot are ignored).
    pub fn absorb_deliveries(&mut self, player: PlayerId, endpoint: &mut PacketEndpoint) {
        while let Some(delivery) = endpoint.poll_delivery() {
            self.on_delivery(player, delivery.sequence, delivery.outcome.into());
        }
    }
}
