//! A simulated one-way network link for tests: loss, latency, jitter,
//! duplication and reordering, deterministic from a seed.
//!
//! [`SimLink`] holds datagrams until their delivery instant; a test drives it
//! with a virtual clock, jumping to [`SimLink::next_delivery`] instead of
//! sleeping. Every datagram draws its fate from a ChaCha8 stream seeded by
//! [`SimLinkConfig::seed`], so a run is reproducible. Storage (slots of
//! `max_datagram` bytes, `capacity` of them) is allocated once; datagrams that
//! do not fit are dropped and counted, like a full socket buffer would.
//!
//! [`PacketPair`] drives two [`PacketEndpoint`]s through two links the way
//! quinn-proto's test `Pair` does: time jumps to the next wake-up (a datagram
//! delivery, a send tick, or an endpoint timeout), never sleeping.
//!
//! ```
//! use std::time::{Duration, Instant};
//! use hightick_net::sim_link::{SimLink, SimLinkConfig};
//!
//! let mut link = SimLink::new(SimLinkConfig {
//!     latency: Duration::from_millis(20),
//!     ..SimLinkConfig::default()
//! });
//! let t0 = Instant::now();
//! link.send(t0, b"ping");
//! let mut buf = [0u8; 1500];
//! assert_eq!(link.poll_deliver(t0, &mut buf), None);
//! let at = link.next_delivery().unwrap();
//! assert_eq!(at, t0 + Duration::from_millis(20));
//! assert_eq!(link.poll_deliver(at, &mut buf), Some(4));
//! ```

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::packet::{PacketConfig, PacketEndpoint, PacketError};

/// Behaviour of a [`SimLink`].
#[derive(Debug, Clone, PartialEq)]
pub struct SimLinkConfig {
    /// Probability in `[0, 1]` that a datagram is dropped.
    pub loss: f32,
    /// Base one-way delay.
    pub latency: Duration,
    /// Extra delay drawn uniformly from `0..=jitter` per datagram.
    pub jitter: Duration,
    /// Probability that a datagram is delivered twice (each copy with its own
    /// delay).
    pub duplicate: f32,
    /// Probability that a datagram is held back by an extra delay drawn from
    /// `0..=latency + jitter`, so later datagrams overtake it.
    pub reorder: f32,
    /// Seed of the random stream.
    pub seed: u64,
    /// Datagrams held at once; more are dropped.
    pub capacity: usize,
    /// Longest datagram; longer ones are dropped.
    pub max_datagram: usize,
}

impl Default for SimLinkConfig {
    fn default() -> Self {
        Self {
            loss: 0.0,
            latency: Duration::ZERO,
            jitter: Duration::ZERO,
            duplicate: 0.0,
            reorder: 0.0,
            seed: 0,
            capacity: 1024,
            max_datagram: 1500,
        }
    }
}

/// Counters of a [`SimLink`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SimLinkStats {
    /// Datagrams handed to `send`.
    pub sent: u64,
    /// Datagrams dropped by simulated loss.
    pub lost: u64,
    /// Extra copies made by simulated duplication.
    pub duplicated: u64,
    /// Datagrams held back by simulated reordering.
    pub reordered: u64,
    /// Datagrams dropped because the link was full or they were too long.
    pub overflowed: u64,
    /// Datagrams handed out by `poll_deliver`.
    pub delivered: u64,
}

/// Next datagram to deliver: earliest instant first, then send order.
type Due = Reverse<(Instant, u64, usize)>;

/// A one-way link holding datagrams until their delivery instant.
#[derive(Debug)]
pub struct SimLink {
    config: SimLinkConfig,
    rng: ChaCha8Rng,
    /// `capacity` slots of `max_datagram` bytes.
    data: Box<[u8]>,
    lens: Box<[usize]>,
    free: Vec<usize>,
    due: BinaryHeap<Due>,
    order: u64,
    stats: SimLinkStats,
}

impl SimLink {
    /// A link with all storage allocated.
    pub fn new(config: SimLinkConfig) -> Self {
        let capacity = config.capacity.max(1);
        Self {
            rng: ChaCha8Rng::seed_from_u64(config.seed),
            data: vec![0; capacity * config.max_datagram].into_boxed_slice(),
            lens: vec![0; capacity].into_boxed_slice(),
            free: (0..capacity).rev().collect(),
            due: BinaryHeap::with_capacity(capacity),
            order: 0,
            stats: SimLinkStats::default(),
            config,
        }
    }

    /// The link's behaviour.
    pub fn config(&self) -> &SimLinkConfig {
        &self.config
    }

    /// Counters since creation.
    pub fn stats(&self) -> SimLinkStats {
        self.stats
    }

    /// Datagrams in flight.
    pub fn in_flight(&self) -> usize {
        self.due.len()
    }

    fn chance(&mut self, p: f32) -> bool {
        // Always draw, so the stream does not depend on which knobs are set.
        let roll: f32 = self.rng.random();
        roll < p
    }

    fn uniform(&mut self, max: Duration) -> Duration {
        let nanos = u64::try_from(max.as_nanos()).unwrap_or(u64::MAX);
        let draw = self.rng.random_range(0..=nanos);
        Duration::from_nanos(draw)
    }

    fn delay(&mut self) -> Duration {
        let mut delay = self.config.latency + self.uniform(self.config.jitter);
        if self.chance(self.config.reorder) {
            self.stats.reordered += 1;
            delay += self.uniform(self.config.latency + self.config.jitter);
        }
        delay
    }

    fn hold(&mut self, deliver_at: Instant, bytes: &[u8]) {
        let Some(slot) = self.free.pop() else {
            self.stats.overflowed += 1;
            return;
        };
        let size = self.config.max_datagram;
        self.data[slot * size..slot * size + bytes.len()].copy_from_slice(bytes);
        self.lens[slot] = bytes.len();
        self.due.push(Reverse((deliver_at, self.order, slot)));
        self.order += 1;
    }

    /// Sends a datagram at `now`; it is lost, or held until its delivery
    /// instant (possibly twice).
    pub fn send(&mut self, now: Instant, bytes: &[u8]) {
        self.stats.sent += 1;
        if bytes.len() > self.config.max_datagram {
            self.stats.overflowed += 1;
            return;
        }
        if self.chance(self.config.loss) {
            self.stats.lost += 1;
            return;
        }
        let delay = self.delay();
        self.hold(now + delay, bytes);
        if self.chance(self.config.duplicate) {
            self.stats.duplicated += 1;
            let delay = self.delay();
            self.hold(now + delay, bytes);
        }
    }

    /// When the next datagram becomes deliverable.
    pub fn next_delivery(&self) -> Option<Instant> {
        self.due.peek().map(|Reverse((at, _, _))| *at)
    }

    /// Copies the earliest datagram due at `now` into `out` and returns its
    /// length. A datagram longer than `out` is dropped (counted as overflow)
    /// and the next one is tried.
    pub fn poll_deliver(&mut self, now: Instant, out: &mut [u8]) -> Option<usize> {
        loop {
            if self.next_delivery()? > now {
                return None;
            }
            let Reverse((_, _, slot)) = self.due.pop()?;
            self.free.push(slot);
            let len = self.lens[slot];
            let Some(dst) = out.get_mut(..len) else {
                self.stats.overflowed += 1;
                continue;
            };
            let at = slot * self.config.max_datagram;
            dst.copy_from_slice(&self.data[at..at + len]);
            self.stats.delivered += 1;
            return Some(len);
        }
    }
}

/// One of the two endpoints of a [`PacketPair`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// Endpoint `a` (sends on `a_to_b`).
    A,
    /// Endpoint `b` (sends on `b_to_a`).
    B,
}

/// What happened during a [`PacketPair::step_with`], for tests that check
/// packet-level facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairEvent {
    /// `side` built packet `sequence` and put it on its link.
    Sent {
        /// The sender.
        side: Side,
        /// Sequence returned by `write_packet`.
        sequence: u16,
    },
    /// `side` was handed a datagram; `sequence` is read from its header.
    Read {
        /// The receiver.
        side: Side,
        /// Sequence in the datagram's header, if it has one.
        sequence: Option<u16>,
        /// What `read_packet` returned.
        result: Result<(), PacketError>,
    },
}

/// Two packet endpoints connected by two simulated links, on a virtual clock.
///
/// With a send tick, each endpoint builds packets (calling `write_packet`
/// until it returns `None`) once per tick, as a game server does; without
/// one, an endpoint sends as soon as its `poll_timeout` says it has work.
/// Between steps a test queues messages and polls messages and deliveries on
/// the public endpoints.
#[derive(Debug)]
pub struct PacketPair {
    /// Endpoint `a`.
    pub a: PacketEndpoint,
    /// Endpoint `b`.
    pub b: PacketEndpoint,
    /// Link from `a` to `b`.
    pub a_to_b: SimLink,
    /// Link from `b` to `a`.
    pub b_to_a: SimLink,
    now: Instant,
    tick: Option<Duration>,
    next_tick: Instant,
    datagram: Box<[u8]>,
}

impl PacketPair {
    /// Two endpoints built from `config` at `start`, with a link each way.
    /// `tick` is the send interval, or `None` to send eagerly.
    pub fn new(
        config: &PacketConfig,
        a_to_b: SimLinkConfig,
        b_to_a: SimLinkConfig,
        tick: Option<Duration>,
        start: Instant,
    ) -> Self {
        let datagram = config
            .max_packet_size
            .max(a_to_b.max_datagram)
            .max(b_to_a.max_datagram);
        Self {
            a: PacketEndpoint::new(config, start),
            b: PacketEndpoint::new(config, start),
            a_to_b: SimLink::new(a_to_b),
            b_to_a: SimLink::new(b_to_a),
            now: start,
            tick,
            next_tick: start,
            datagram: vec![0; datagram].into_boxed_slice(),
        }
    }

    /// The virtual time.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// The next instant something happens, if anything is scheduled.
    pub fn next_wakeup(&self) -> Option<Instant> {
        let mut candidates = [
            self.a_to_b.next_delivery(),
            self.b_to_a.next_delivery(),
            self.tick.map(|_| self.next_tick),
            self.tick.map_or_else(|| self.a.poll_timeout(), |_| None),
            self.tick.map_or_else(|| self.b.poll_timeout(), |_| None),
        ];
        candidates.sort();
        candidates.into_iter().flatten().next()
    }

    /// Jumps to the next wake-up and processes it; returns the new time, or
    /// `None` (without moving) when nothing is scheduled.
    pub fn step(&mut self) -> Option<Instant> {
        self.step_with(|_| {})
    }

    /// [`Self::step`], reporting every packet sent and read to `observe`.
    pub fn step_with(&mut self, mut observe: impl FnMut(PairEvent)) -> Option<Instant> {
        let wake = self.next_wakeup()?;
        self.now = self.now.max(wake);
        let now = self.now;
        let buf = &mut self.datagram;
        for (link, endpoint, side) in [
            (&mut self.a_to_b, &mut self.b, Side::B),
            (&mut self.b_to_a, &mut self.a, Side::A),
        ] {
            while let Some(n) = link.poll_deliver(now, buf) {
                let result = endpoint.read_packet(now, &buf[..n]);
                let sequence = crate::packet::PacketHeader::read(&buf[..n])
                    .ok()
                    .map(|(header, _)| header.sequence);
                observe(PairEvent::Read {
                    side,
                    sequence,
                    result,
                });
            }
        }
        let send = match self.tick {
            Some(tick) if now >= self.next_tick => {
                while self.next_tick <= now {
                    self.next_tick += tick;
                }
                true
            }
            Some(_) => false,
            None => true,
        };
        if send {
            for (endpoint, link, side) in [
                (&mut self.a, &mut self.a_to_b, Side::A),
                (&mut self.b, &mut self.b_to_a, Side::B),
            ] {
                while let Some((sequence, n)) = endpoint.write_packet(now, buf) {
                    link.send(now, &buf[..n]);
                    observe(PairEvent::Sent { side, sequence });
                }
            }
        } else {
            self.a.handle_timeout(now);
            self.b.handle_timeout(now);
        }
        Some(now)
    }

    /// Steps until the virtual time reaches `deadline` or nothing is
    /// scheduled.
    pub fn run_until(&mut self, deadline: Instant) {
        while self.next_wakeup().is_some_and(|at| at <= deadline) {
            self.step();
        }
        self.now = self.now.max(deadline);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(config: SimLinkConfig, datagrams: u32) -> (Vec<(Duration, u32)>, SimLinkStats) {
        let t0 = Instant::now();
        let mut link = SimLink::new(config);
        for i in 0..datagrams {
            link.send(t0 + Duration::from_millis(u64::from(i)), &i.to_le_bytes());
        }
        let mut out = Vec::new();
        let mut buf = [0u8; 8];
        while let Some(at) = link.next_delivery() {
            while let Some(n) = link.poll_deliver(at, &mut buf) {
                assert_eq!(n, 4);
                out.push((at - t0, u32::from_le_bytes(buf[..4].try_into().unwrap())));
            }
        }
        (out, link.stats())
    }

    #[test]
    fn perfect_link_delivers_in_order_after_latency() {
        let config = SimLinkConfig {
            latency: Duration::from_millis(30),
            ..SimLinkConfig::default()
        };
        let (out, stats) = run(config, 100);
        assert_eq!(out.len(), 100);
        for (i, (at, value)) in out.iter().enumerate() {
            assert_eq!(*value, i as u32);
            assert_eq!(*at, Duration::from_millis(30 + i as u64));
        }
        assert_eq!(stats.delivered, 100);
    }

    #[test]
    fn impairments_happen_at_about_their_rates_and_replay_from_the_seed() {
        let config = SimLinkConfig {
            loss: 0.2,
            latency: Duration::from_millis(50),
            jitter: Duration::from_millis(10),
            duplicate: 0.1,
            reorder: 0.1,
            seed: 7,
            capacity: 4096,
            ..SimLinkConfig::default()
        };
        let (out, stats) = run(config.clone(), 2000);
        assert_eq!(
            run(config, 2000),
            (out.clone(), stats),
            "same seed, same run"
        );
        assert!((300..500).contains(&stats.lost), "{stats:?}");
        assert!((100..220).contains(&stats.duplicated), "{stats:?}");
        assert!((100..220).contains(&stats.reordered), "{stats:?}");
        assert_eq!(out.len() as u64, 2000 - stats.lost + stats.duplicated);
        let overtaken = out.windows(2).filter(|w| w[1].1 < w[0].1).count();
        assert!(overtaken > 50, "reordering happened: {overtaken}");
        for (at, value) in &out {
            let sent = Duration::from_millis(u64::from(*value));
            assert!(*at >= sent + Duration::from_millis(50));
            assert!(*at <= sent + Duration::from_millis(50 + 10 + 60));
        }
    }

    #[test]
    fn full_link_and_oversized_datagrams_are_dropped() {
        let t0 = Instant::now();
        let mut link = SimLink::new(SimLinkConfig {
            capacity: 2,
            max_datagram: 4,
            ..SimLinkConfig::default()
        });
        link.send(t0, b"a");
        link.send(t0, b"b");
        link.send(t0, b"c");
        link.send(t0, b"toolong");
        assert_eq!(link.stats().overflowed, 2);
        assert_eq!(link.in_flight(), 2);
        let mut tiny = [0u8; 0];
        assert_eq!(link.poll_deliver(t0, &mut tiny), None);
        assert_eq!(link.stats().overflowed, 4);
    }
}
