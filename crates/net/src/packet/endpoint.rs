//! The per-connection packet layer that lives inside the encrypted payload:
//! [`PacketEndpoint`] ties together sequence numbers and acks
//! ([`crate::packet::reliable`]), the reliable ordered and unreliable channels
//! ([`crate::packet::channel`]), fragmentation (`fragment.rs`) and the RTT and
//! loss estimates ([`crate::packet::rtt`]).
//!
//! It is sans-IO: it is fed payload bytes and [`Instant`]s and hands back
//! payload bytes, never reading a clock or touching a socket. The secure layer
//! seals what [`PacketEndpoint::write_packet`] produces and feeds opened
//! payloads to [`PacketEndpoint::read_packet`]. Storage is allocated by
//! [`PacketEndpoint::new`] from a [`PacketConfig`], except the room for large
//! reliable messages: the sender's message ring and the receiver's chunk
//! pool start with room for a full window of whole messages and grow, up to
//! what the config allows, the first time fragmented messages need more.
//! Steady sending and receiving allocate nothing.
//!
//! Both ends of a connection must use the same config: the receiver's storage
//! is sized to hold everything a sender with that config can have in flight.
//! When the application stops draining messages the receiver stops accepting
//! (and acknowledging) packets that carry new reliable data, and the sender's
//! queue fills until `send_reliable` reports [`PacketError::SendQueueFull`].
//!
//! ```
//! use std::time::Instant;
//! use hightick_net::{Channel, PacketConfig, PacketEndpoint};
//!
//! let now = Instant::now();
//! let config = PacketConfig::default();
//! let mut server = PacketEndpoint::new(&config, now);
//! let mut client = PacketEndpoint::new(&config, now);
//!
//! server.send_reliable(b"round starts").unwrap();
//! let mut datagram = [0u8; 1200];
//! let (_sequence, len) = server.write_packet(now, &mut datagram).unwrap();
//! client.read_packet(now, &datagram[..len]).unwrap();
//!
//! let mut message = [0u8; 64];
//! let received = client.poll_message(&mut message).unwrap();
//! assert_eq!(received.channel, Channel::Reliable);
//! assert_eq!(&message[..received.len], b"round starts");
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::packet::error::{Malformed, PacketError};

use crate::packet::channel::{
    BlockLimits, BlockWriter, Blocks, Channel, FRAGMENT_BLOCK_OVERHEAD, UNRELIABLE_BLOCK_OVERHEAD,
};
use crate::packet::channel_reliable::{
    PieceFate, PieceRef, ReliableReceiver, ReliableSender, ReliableSizes,
};
use crate::packet::channel_unreliable::{UnreliableReceiver, UnreliableSender};
use crate::packet::fragment::FragmentGeometry;
use crate::packet::reliable::{
    Deliveries, Delivery, HEADER_LEN, PacketHeader, ReceivedPackets, SentPackets,
};
use crate::packet::rtt::RttEstimator;
use crate::packet::sequence::MAX_SEQUENCE_WINDOW;
use crate::prefetch::prefetch_range;

/// Sizes and timings of the packet layer. Both ends of a connection must use
/// the same values.
///
/// Memory per endpoint is at most `reliable_buffer_bytes` (send queue) plus
/// `(message_window + reliable_buffer_bytes / fragment_size) * fragment_size`
/// (receive chunks) plus `sent_packet_window * max_pieces_per_packet * 4`
/// (sent-packet records): about 290 KiB with the defaults. The send queue
/// and the receive chunks start with room for `message_window` whole
/// messages (32 KiB each with the defaults) and grow only when fragmented
/// messages need more, so an endpoint that never carries one takes about
/// 140 KiB.
#[derive(Debug, Clone, PartialEq)]
pub struct PacketConfig {
    /// Largest payload `write_packet` produces (the secure layer adds its
    /// header and tag around it).
    pub max_packet_size: usize,
    /// Bytes per fragment; reliable messages up to this size travel whole.
    pub fragment_size: usize,
    /// Largest reliable message.
    pub max_message_size: usize,
    /// Reliable messages in flight, and the receiver's reorder window (a
    /// power of two).
    pub message_window: usize,
    /// Bytes of reliable messages queued and not yet acknowledged; at least
    /// `max_message_size`.
    pub reliable_buffer_bytes: usize,
    /// Fragmented reliable messages in flight at once.
    pub max_fragmented_in_flight: usize,
    /// Bytes of unreliable messages (plus 3 bytes each) one packet carries;
    /// `send_unreliable` fails beyond it until the next packet is built.
    pub unreliable_budget: usize,
    /// Bytes of received unreliable messages (plus 2 bytes each) kept until
    /// polled; further ones are dropped.
    pub unreliable_receive_bytes: usize,
    /// Sent-packet records kept for acks (a power of two, at least 64).
    pub sent_packet_window: usize,
    /// Received sequences remembered for acks and duplicate detection (a
    /// power of two, at least 64).
    pub received_packet_window: usize,
    /// Reliable pieces one packet carries at most.
    pub max_pieces_per_packet: usize,
    /// RTT assumed before the first measurement.
    pub initial_rtt: Duration,
    /// Shortest wait before an unacknowledged piece is resent.
    pub min_resend_delay: Duration,
    /// Resend an unacknowledged piece after `resend_rtt_factor * rtt`.
    pub resend_rtt_factor: f32,
    /// Shortest wait before an unacknowledged packet is presumed lost (the
    /// timeout is `max(this, 2 * rtt + 4 * rtt variation)`).
    pub min_loss_timeout: Duration,
    /// Weight of each new packet fate in the loss estimate, in `(0, 1]`.
    pub loss_smoothing: f32,
    /// How long owed acks wait for data to ride on before they make a packet
    /// of their own (default zero: at once). An end that sends every tick
    /// anyway sets about two tick periods, which halves its packet rate; the
    /// peer's RTT samples then include up to this wait. Need not match the
    /// peer's.
    pub ack_delay: Duration,
}

impl Default for PacketConfig {
    fn default() -> Self {
        Self {
            max_packet_size: 1200,
            fragment_size: 256,
            max_message_size: 64 * 1024,
            message_window: 128,
            reliable_buffer_bytes: 96 * 1024,
            max_fragmented_in_flight: 8,
            unreliable_budget: 900,
            unreliable_receive_bytes: 8 * 1024,
            sent_packet_window: 128,
            received_packet_window: 256,
            max_pieces_per_packet: 64,
            initial_rtt: Duration::from_millis(100),
            min_resend_delay: Duration::from_millis(20),
            resend_rtt_factor: 1.25,
            min_loss_timeout: Duration::from_millis(100),
            loss_smoothing: 0.05,
            ack_delay: Duration::ZERO,
        }
    }
}

fn check(ok: bool, field: &'static str, reason: &'static str) -> Result<(), PacketError> {
    if ok {
        Ok(())
    } else {
        Err(PacketError::Config { field, reason })
    }
}

fn is_window(n: usize, min: usize) -> bool {
    n.is_power_of_two() && (min..=MAX_SEQUENCE_WINDOW).contains(&n)
}

impl PacketConfig {
    /// Checks every field; the error names the first field at fault.
    pub fn validate(&self) -> Result<(), PacketError> {
        check(
            (1..=usize::from(u16::MAX)).contains(&self.fragment_size),
            "fragment_size",
            "must be in 1..=65535",
        )?;
        check(
            (1..=16 << 20).contains(&self.max_message_size)
                && self.max_message_size.div_ceil(self.fragment_size) <= usize::from(u16::MAX),
            "max_message_size",
            "must be in 1..=16 MiB and at most 65535 fragments",
        )?;
        check(
            (UNRELIABLE_BLOCK_OVERHEAD + 1..=usize::from(u16::MAX))
                .contains(&self.unreliable_budget),
            "unreliable_budget",
            "must be in 4..=65535",
        )?;
        check(
            self.max_packet_size <= usize::from(u16::MAX)
                && self.max_packet_size
                    >= HEADER_LEN
                        + self.unreliable_budget
                        + FRAGMENT_BLOCK_OVERHEAD
                        + self.fragment_size,
            "max_packet_size",
            "must be at most 65535 and hold the 9-byte header, unreliable_budget and one full fragment block",
        )?;
        check(
            is_window(self.message_window, 1),
            "message_window",
            "must be a power of two in 1..=32768",
        )?;
        check(
            self.reliable_buffer_bytes >= self.max_message_size
                && self.reliable_buffer_bytes <= 1 << 30,
            "reliable_buffer_bytes",
            "must be at least max_message_size and at most 1 GiB",
        )?;
        check(
            (1..=64).contains(&self.max_fragmented_in_flight),
            "max_fragmented_in_flight",
            "must be in 1..=64",
        )?;
        check(
            self.unreliable_receive_bytes >= self.unreliable_budget,
            "unreliable_receive_bytes",
            "must be at least unreliable_budget",
        )?;
        check(
            is_window(self.sent_packet_window, 64),
            "sent_packet_window",
            "must be a power of two in 64..=32768",
        )?;
        check(
            is_window(self.received_packet_window, 64),
            "received_packet_window",
            "must be a power of two in 64..=32768",
        )?;
        check(
            (1..=usize::from(u16::MAX)).contains(&self.max_pieces_per_packet),
            "max_pieces_per_packet",
            "must be in 1..=65535",
        )?;
        check(
            !self.initial_rtt.is_zero(),
            "initial_rtt",
            "must be positive",
        )?;
        check(
            self.resend_rtt_factor.is_finite() && self.resend_rtt_factor > 0.0,
            "resend_rtt_factor",
            "must be a positive number",
        )?;
        check(
            self.loss_smoothing > 0.0 && self.loss_smoothing <= 1.0,
            "loss_smoothing",
            "must be in (0, 1]",
        )?;
        Ok(())
    }

    fn geometry(&self) -> FragmentGeometry {
        FragmentGeometry::new(self.fragment_size, self.max_message_size)
    }

    fn reliable_sizes(&self) -> ReliableSizes {
        ReliableSizes {
            geometry: self.geometry(),
            window: self.message_window,
            buffer_bytes: self.reliable_buffer_bytes,
            max_fragmented: self.max_fragmented_in_flight,
        }
    }

    /// Largest message `send_unreliable` accepts.
    pub fn max_unreliable_message(&self) -> usize {
        self.unreliable_budget - UNRELIABLE_BLOCK_OVERHEAD
    }
}

/// A message copied out by [`PacketEndpoint::poll_message`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReceivedMessage {
    /// The channel it came on.
    pub channel: Channel,
    /// Its length in bytes (at the start of the caller's buffer).
    pub len: usize,
}

/// Counters of one endpoint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PacketStats {
    /// Packets built by `write_packet`.
    pub packets_sent: u64,
    /// Packets accepted by `read_packet`.
    pub packets_received: u64,
    /// Sent packets the peer acknowledged.
    pub packets_acked: u64,
    /// Sent packets presumed lost.
    pub packets_lost: u64,
    /// Reliable pieces sent again after the resend delay.
    pub pieces_resent: u64,
    /// Payloads dropped as malformed.
    pub dropped_malformed: u64,
    /// Payloads dropped as duplicates of received packets.
    pub duplicates: u64,
    /// Payloads dropped as older than the receive window.
    pub dropped_stale: u64,
    /// Payloads dropped (unacknowledged) because reliable storage was full.
    pub dropped_window_full: u64,
    /// Reliable messages queued.
    pub reliable_sent: u64,
    /// Reliable messages handed to the application.
    pub reliable_received: u64,
    /// Unreliable messages written into packets.
    pub unreliable_sent: u64,
    /// Unreliable messages received and kept.
    pub unreliable_received: u64,
    /// Unreliable messages dropped: no room in the packet buffer handed to
    /// `write_packet`, or no room in the receive queue.
    pub unreliable_dropped: u64,
    /// Delivery notifications overwritten because they were not polled.
    pub deliveries_dropped: u64,
}

/// One end of a connection's packet layer. See the [module docs](self).
///
/// `repr(C)` keeps the fields in this order: what building a packet reads
/// comes first, so a cold `write_packet` touches the fewest cache lines; the
/// receive side's storage follows.
#[derive(Debug)]
#[repr(C)]
pub struct PacketEndpoint {
    last_now: Instant,
    /// When the oldest pending sent packet reaches its loss timeout; `None`
    /// when nothing is pending. Checked before the sent records are touched,
    /// so a packet that times nothing out costs one comparison.
    loss_check_at: Option<Instant>,
    /// Since when a received packet has waited for its ack, if one has.
    ack_owed_since: Option<Instant>,
    /// Shared by every endpoint built with [`Self::new_shared`]: a server's
    /// connections read the same few cache lines instead of a copy each.
    config: Arc<PacketConfig>,
    sent: SentPackets,
    received: ReceivedPackets,
    unreliable_out: UnreliableSender,
    rtt: RttEstimator,
    /// Scratch: pieces the packet being built carries.
    carried: Box<[PieceRef]>,
    deliveries: Deliveries,
    reliable_out: ReliableSender,
    stats: PacketStats,
    limits: BlockLimits,
    reliable_in: ReliableReceiver,
    unreliable_in: UnreliableReceiver,
    /// Scratch: `(id, fragment count)` of messages a received packet opens.
    opened: Box<[(u16, u16)]>,
}

/// Room a received packet needs, worked out before anything is stored.
#[derive(Debug, Default)]
struct Plan {
    has_blocks: bool,
    chunks: usize,
    reassembly: usize,
    out_of_window: bool,
}

impl PacketEndpoint {
    /// An endpoint with all storage allocated from `config`.
    ///
    /// # Panics
    /// When `config` is invalid (see [`PacketConfig::validate`] and
    /// [`Self::try_new`]).
    pub fn new(config: &PacketConfig, now: Instant) -> Self {
        match Self::try_new(config, now) {
            Ok(endpoint) => endpoint,
            Err(e) => panic!("{e}"),
        }
    }

    /// An endpoint with all storage allocated from `config`, or the config
    /// error.
    pub fn try_new(config: &PacketConfig, now: Instant) -> Result<Self, PacketError> {
        Self::try_new_shared(Arc::new(config.clone()), now)
    }

    /// Like [`Self::new`], sharing `config` with other endpoints (a server
    /// builds every connection from one).
    ///
    /// # Panics
    /// When `config` is invalid, as [`Self::new`].
    pub fn new_shared(config: Arc<PacketConfig>, now: Instant) -> Self {
        match Self::try_new_shared(config, now) {
            Ok(endpoint) => endpoint,
            Err(e) => panic!("{e}"),
        }
    }

    /// Like [`Self::try_new`], sharing `config` with other endpoints.
    pub fn try_new_shared(config: Arc<PacketConfig>, now: Instant) -> Result<Self, PacketError> {
        config.validate()?;
        let sizes = config.reliable_sizes();
        // Allocated first, so they lie together: the small buffers every
        // packet built or read touches.
        let received = ReceivedPackets::new(config.received_packet_window);
        let deliveries = Deliveries::new(config.sent_packet_window * 2, config.loss_smoothing);
        let unreliable_out = UnreliableSender::new(config.unreliable_budget);
        let carried = vec![PieceRef::default(); config.max_pieces_per_packet].into_boxed_slice();
        let sent = SentPackets::new(config.sent_packet_window, config.max_pieces_per_packet);
        Ok(Self {
            limits: BlockLimits {
                geometry: config.geometry(),
                max_unreliable: config.max_unreliable_message(),
            },
            sent,
            received,
            deliveries,
            reliable_out: ReliableSender::new(sizes),
            reliable_in: ReliableReceiver::new(sizes),
            unreliable_out,
            unreliable_in: UnreliableReceiver::new(config.unreliable_receive_bytes),
            rtt: RttEstimator::new(config.initial_rtt),
            carried,
            opened: vec![(0, 0); config.max_pieces_per_packet].into_boxed_slice(),
            ack_owed_since: None,
            loss_check_at: None,
            last_now: now,
            stats: PacketStats::default(),
            config,
        })
    }

    /// The config this endpoint was built from.
    pub fn config(&self) -> &PacketConfig {
        &self.config
    }

    /// Hints the cache to fetch what the next [`Self::write_packet`] reads:
    /// the endpoint's sending fields and the slots of its small buffers that
    /// the next packet uses (see [`crate::prefetch`]).
    pub fn prefetch(&self) {
        prefetch_range(
            (self as *const Self).cast(),
            std::mem::offset_of!(Self, limits),
        );
        self.sent.prefetch();
        self.received.prefetch();
        self.deliveries.prefetch();
        self.unreliable_out.prefetch();
        self.reliable_out.prefetch();
    }

    /// Queues a message on the reliable ordered channel. Messages longer than
    /// `fragment_size` (up to `max_message_size`) are sent in fragments.
    pub fn send_reliable(&mut self, msg: &[u8]) -> Result<(), PacketError> {
        self.reliable_out.queue(msg)?;
        self.stats.reliable_sent += 1;
        Ok(())
    }

    /// Queues a message on the unreliable channel; it goes out in the next
    /// packet only.
    pub fn send_unreliable(&mut self, msg: &[u8]) -> Result<(), PacketError> {
        let max = self.config.max_unreliable_message();
        if msg.len() > max {
            return Err(PacketError::MessageTooLarge {
                len: msg.len(),
                max,
            });
        }
        if self.unreliable_out.queue(msg) {
            Ok(())
        } else {
            Err(PacketError::UnreliableFull)
        }
    }

    /// Reliable messages queued and not yet fully acknowledged.
    pub fn reliable_in_flight(&self) -> usize {
        self.reliable_out.in_flight()
    }

    fn resend_delay(&self) -> Duration {
        self.config
            .min_resend_delay
            .max(self.rtt.smoothed().mul_f32(self.config.resend_rtt_factor))
    }

    fn loss_timeout(&self) -> Duration {
        self.config
            .min_loss_timeout
            .max(self.rtt.smoothed() * 2 + self.rtt.variation() * 4)
    }

    /// Presumes lost what timed out by `now`. The sent records are only
    /// walked once the oldest pending packet's deadline has come; that
    /// deadline is fixed when the check runs (or the packet is sent), so a
    /// loss timeout that shrinks in between (a better RTT) takes effect at
    /// the next check. The timeout never goes below `min_loss_timeout`.
    fn observe(&mut self, now: Instant) {
        self.last_now = self.last_now.max(now);
        match self.loss_check_at {
            Some(at) if now >= at => {}
            _ => return,
        }
        let timeout = self.loss_timeout();
        self.sent.lose_timed_out(now, timeout, &mut self.deliveries);
        self.loss_check_at = self.sent.next_loss_deadline(timeout);
    }

    /// Builds the next packet payload into `out` (at most `max_packet_size`
    /// bytes of it): the header with acks, then the queued unreliable
    /// messages, then reliable pieces that are new or due for resend. Returns
    /// the packet's sequence and length, or `None` when there is nothing to
    /// send (no messages due and no ack due). Call it until it returns
    /// `None` to send everything due. Unreliable messages that do not fit a
    /// short `out` are dropped and counted.
    pub fn write_packet(&mut self, now: Instant, out: &mut [u8]) -> Option<(u16, usize)> {
        self.observe(now);
        let limit = out.len().min(self.config.max_packet_size);
        if limit < HEADER_LEN {
            return None;
        }
        let out = &mut out[..limit];
        let resend_delay = self.resend_delay();
        let mut writer = BlockWriter::new(out, HEADER_LEN);
        let (written, dropped) = self.unreliable_out.drain_into(&mut writer);
        self.stats.unreliable_sent += written;
        self.stats.unreliable_dropped += dropped;
        let mut carried = 0;
        let resent = self.reliable_out.write_due(
            now,
            resend_delay,
            &mut writer,
            &mut self.carried,
            &mut carried,
        );
        if writer.blocks() == 0 && !self.acks_due(now) {
            return None;
        }
        let len = writer.position();
        let sequence = self
            .sent
            .record(now, &self.carried[..carried], &mut self.deliveries);
        let deadline = now + self.loss_timeout();
        self.loss_check_at = Some(self.loss_check_at.map_or(deadline, |at| at.min(deadline)));
        let header = PacketHeader {
            sequence,
            ack: self.received.ack(),
        };
        header.write(out);
        self.ack_owed_since = None;
        self.stats.packets_sent += 1;
        self.stats.pieces_resent += resent;
        Some((sequence, len))
    }

    /// Processes one received payload: acks in its header (which produce
    /// delivery notifications and RTT samples), then its messages. A
    /// malformed, duplicate or stale payload is dropped with an error and
    /// changes nothing; one whose reliable data does not fit is dropped
    /// unacknowledged after its acks are processed. Never panics.
    pub fn read_packet(&mut self, now: Instant, payload: &[u8]) -> Result<(), PacketError> {
        self.observe(now);
        let (header, body) = match PacketHeader::read(payload) {
            Ok(parsed) => parsed,
            Err(malformed) => {
                self.stats.dropped_malformed += 1;
                return Err(malformed.into());
            }
        };
        if let Err(e) = self.received.check(header.sequence) {
            match e {
                PacketError::Duplicate(_) => self.stats.duplicates += 1,
                _ => self.stats.dropped_stale += 1,
            }
            return Err(e);
        }
        let plan = match self.plan(body) {
            Ok(plan) => plan,
            Err(malformed) => {
                self.stats.dropped_malformed += 1;
                return Err(malformed.into());
            }
        };
        if let Some((ack, bits)) = header.ack {
            self.process_acks(now, ack, bits);
        }
        if plan.out_of_window
            || (plan.chunks > 0 && plan.chunks > self.reliable_in.chunks_available())
            || (plan.reassembly > 0 && plan.reassembly > self.reliable_in.reassembly_available())
        {
            self.stats.dropped_window_full += 1;
            return Err(PacketError::ReceiveWindowFull);
        }
        self.received.record(header.sequence);
        self.stats.packets_received += 1;
        if plan.has_blocks {
            self.ack_owed_since.get_or_insert(now);
        }
        self.store_messages(body);
        Ok(())
    }

    /// Validates every block and works out the room the packet needs,
    /// without changing anything.
    fn plan(&mut self, body: &[u8]) -> Result<Plan, Malformed> {
        let mut plan = Plan::default();
        let mut pieces = 0;
        let mut opened = 0;
        for block in Blocks::new(body, self.limits) {
            let block = block?;
            plan.has_blocks = true;
            let Some((id, index, count, data)) = block.reliable_piece() else {
                continue;
            };
            pieces += 1;
            if pieces > self.opened.len() {
                return Err(Malformed::TooManyPieces);
            }
            match self.reliable_in.classify(id, index, count, data.len())? {
                PieceFate::Delivered | PieceFate::Duplicate => {}
                PieceFate::OutOfWindow => plan.out_of_window = true,
                PieceFate::New { opens, chunk } => {
                    plan.chunks += usize::from(chunk);
                    if opens {
                        match self.opened[..opened].iter().find(|(open, _)| *open == id) {
                            Some(&(_, known)) if known != count => {
                                return Err(Malformed::FragmentMismatch);
                            }
                            Some(_) => {}
                            None => {
                                self.opened[opened] = (id, count);
                                opened += 1;
                                plan.reassembly += usize::from(count > 1);
                            }
                        }
                    }
                }
            }
        }
        Ok(plan)
    }

    fn process_acks(&mut self, now: Instant, ack: u16, bits: u32) {
        let reliable_out = &mut self.reliable_out;
        // Oldest first; only bits naming a packet still pending are looked up.
        let mut bits = bits & self.sent.pending_ack_bits(ack);
        while bits != 0 {
            let i = 31 - bits.leading_zeros() as u16;
            bits &= !(1 << i);
            let sequence = ack.wrapping_sub(i + 1);
            self.sent.ack(sequence, &mut self.deliveries, |piece| {
                reliable_out.on_piece_acked(piece)
            });
        }
        if let Some(sent_at) = self.sent.ack(ack, &mut self.deliveries, |piece| {
            reliable_out.on_piece_acked(piece)
        }) {
            self.rtt.sample(now.saturating_duration_since(sent_at));
        }
        self.sent.lose_beyond_ack_window(ack, &mut self.deliveries);
    }

    /// Stores the messages of a packet that [`Self::plan`] accepted.
    fn store_messages(&mut self, body: &[u8]) {
        for block in Blocks::new(body, self.limits).flatten() {
            let Some((id, index, count, data)) = block.reliable_piece() else {
                if let crate::packet::channel::Block::Unreliable(msg) = block {
                    if self.unreliable_in.store(msg) {
                        self.stats.unreliable_received += 1;
                    } else {
                        self.stats.unreliable_dropped += 1;
                    }
                }
                continue;
            };
            if let Ok(PieceFate::New { .. }) =
                self.reliable_in.classify(id, index, count, data.len())
            {
                let stored = self.reliable_in.accept(id, index, count, data);
                debug_assert!(stored, "planned room for every new piece");
            }
        }
    }

    /// The next delivery notification: every packet `write_packet` produced
    /// is reported exactly once, as acked or presumed lost, in the order the
    /// fates became known. Poll after every `read_packet`/`write_packet`; if
    /// more than `2 * sent_packet_window` pile up the oldest are dropped (and
    /// counted in [`PacketStats::deliveries_dropped`]).
    pub fn poll_delivery(&mut self) -> Option<Delivery> {
        self.deliveries.pop()
    }

    /// Whether [`Self::poll_delivery`] has a notification to return.
    pub fn deliveries_pending(&self) -> bool {
        !self.deliveries.is_empty()
    }

    /// Channel and length of the message `poll_message` would return next.
    pub fn next_message_len(&self) -> Option<(Channel, usize)> {
        if let Some(len) = self.unreliable_in.next_len() {
            return Some((Channel::Unreliable, len));
        }
        self.reliable_in
            .next_len()
            .map(|len| (Channel::Reliable, len))
    }

    /// Copies the next received message into the start of `out`: unreliable
    /// messages as they came, then reliable ones exactly once and in order.
    /// Returns `None` when nothing is ready or `out` is shorter than the next
    /// message (see [`Self::next_message_len`]; it stays queued).
    pub fn poll_message(&mut self, out: &mut [u8]) -> Option<ReceivedMessage> {
        if let Some(len) = self.unreliable_in.pop(out) {
            return Some(ReceivedMessage {
                channel: Channel::Unreliable,
                len,
            });
        }
        let len = self.reliable_in.pop(out)?;
        self.stats.reliable_received += 1;
        Some(ReceivedMessage {
            channel: Channel::Reliable,
            len,
        })
    }

    /// When `write_packet` (or [`Self::handle_timeout`]) next has work: an ack
    /// or unreliable message waiting (the last instant seen), a reliable
    /// piece due for (re)sending, or a packet reaching its loss timeout.
    /// `None` when idle.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let mut at = self.unreliable_out.is_pending().then_some(self.last_now);
        let mut earliest = |t: Option<Instant>| {
            if let Some(t) = t {
                at = Some(at.map_or(t, |a| a.min(t)));
            }
        };
        earliest(
            self.reliable_out
                .next_due(self.resend_delay(), self.last_now),
        );
        earliest(self.loss_check_at);
        earliest(self.ack_owed_since.map(|t| t + self.config.ack_delay));
        at
    }

    /// Whether owed acks have waited their [`PacketConfig::ack_delay`] and
    /// make a packet even with nothing else to carry.
    fn acks_due(&self, now: Instant) -> bool {
        self.ack_owed_since
            .is_some_and(|since| now >= since + self.config.ack_delay)
    }

    /// Presumes lost the packets whose loss timeout has passed at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.observe(now);
    }

    /// Smoothed round-trip time (RFC 6298); the configured initial RTT until
    /// the first ack.
    pub fn rtt(&self) -> Duration {
        self.rtt.smoothed()
    }

    /// Round-trip time variation.
    pub fn rtt_variation(&self) -> Duration {
        self.rtt.variation()
    }

    /// Smoothed fraction of sent packets presumed lost, in `[0, 1]`.
    pub fn packet_loss(&self) -> f32 {
        self.deliveries.loss.loss()
    }

    /// Counters since creation.
    pub fn stats(&self) -> PacketStats {
        PacketStats {
            packets_acked: self.deliveries.acked,
            packets_lost: self.deliveries.lost,
            deliveries_dropped: self.deliveries.dropped,
            ..self.stats
        }
    }
}
