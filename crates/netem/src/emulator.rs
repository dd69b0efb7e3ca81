//! [`Emulator`]: the sans-IO core of the proxy. Flows by client address,
//! two [`Lane`]s each, and the [`DelayLine`] of everything in flight. It is
//! fed datagrams with the time they came in and hands them back when their
//! time comes; it never reads a clock or touches a socket.
//!
//! Flow `n` (the `n`th opened) decides on generator streams `2n` (up) and
//! `2n + 1` (down) of the seed, so given the seed, the order flows open in
//! and each flow's datagram times and sizes, every decision repeats.

use std::time::{Duration, Instant};

use crate::delay_line::{DelayLine, Release};
use crate::flows::{FlowId, FlowKey, FlowTable};
use crate::lane::{Decision, Lane};
use crate::profile::Direction;
use crate::profile::LinkProfile;
use crate::stats::{DirectionCounters, DirectionReport};

/// How many flows and datagrams the emulator holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Flows open at once (client source addresses).
    pub max_flows: usize,
    /// A flow without a datagram either way for this long is forgotten.
    pub idle_timeout: Duration,
    /// Datagrams in flight at once, all flows.
    pub max_in_flight: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_flows: 1024,
            idle_timeout: Duration::from_secs(30),
            max_in_flight: 65_536,
        }
    }
}

#[derive(Debug)]
struct Flow {
    up: Lane,
    down: Lane,
}

/// See the [module docs](self).
#[derive(Debug)]
pub struct Emulator {
    profile: LinkProfile,
    seed: u64,
    table: FlowTable,
    flows: Vec<Option<Flow>>,
    line: DelayLine,
    counters: [DirectionCounters; 2],
    opened: u64,
    refused: u64,
    expired: u64,
}

impl Emulator {
    /// An emulator of `profile` deciding from `seed`.
    pub fn new(profile: LinkProfile, seed: u64, limits: Limits) -> Self {
        Self {
            profile,
            seed,
            table: FlowTable::new(limits.max_flows, limits.idle_timeout),
            flows: Vec::new(),
            line: DelayLine::new(limits.max_in_flight),
            counters: Default::default(),
            opened: 0,
            refused: 0,
            expired: 0,
        }
    }

    /// The link it emulates.
    pub fn profile(&self) -> &LinkProfile {
        &self.profile
    }

    /// The flow of datagrams from `key`, opened at `now` if new; `None`
    /// (and counted) when every flow is taken.
    pub fn flow(&mut self, now: Instant, key: FlowKey) -> Option<FlowId> {
        if let Some(id) = self.table.find(key) {
            return Some(id);
        }
        let Some(id) = self.table.open(now, key) else {
            self.refused += 1;
            return None;
        };
        let stream = 2 * self.opened;
        self.opened += 1;
        if self.flows.len() <= id.slot() {
            self.flows.resize_with(id.slot() + 1, || None);
        }
        self.flows[id.slot()] = Some(Flow {
            up: Lane::new(self.profile.up.clone(), self.seed, stream, now),
            down: Lane::new(self.profile.down.clone(), self.seed, stream + 1, now),
        });
        Some(id)
    }

    /// The route and client of `flow`, while it is open.
    pub fn key(&self, flow: FlowId) -> Option<FlowKey> {
        self.table.key(flow)
    }

    /// Takes in a datagram of `flow` going `direction` at `now`: decides its
    /// fate and holds it (and its duplicate) until it is due. Returns the
    /// decision (a datagram of a flow no longer open is ignored: `None`).
    pub fn handle_datagram(
        &mut self,
        now: Instant,
        flow: FlowId,
        direction: Direction,
        bytes: &[u8],
    ) -> Option<Decision> {
        self.table.key(flow)?;
        self.table.touch(flow, now);
        let state = self.flows.get_mut(flow.slot())?.as_mut()?;
        let lane = match direction {
            Direction::Up => &mut state.up,
            Direction::Down => &mut state.down,
        };
        let decision = lane.decide(now, bytes.len());
        let counters = &mut self.counters[direction as usize];
        if let Decision::Deliver { at, duplicate_at } = decision {
            let delay_us = at.saturating_duration_since(now).as_micros() as u64;
            for when in std::iter::once(at).chain(duplicate_at) {
                if !self.line.push(when, flow, direction, bytes) {
                    counters.count_overflow();
                }
            }
            counters.count(bytes.len(), &decision, delay_us);
        } else {
            counters.count(bytes.len(), &decision, 0);
        }
        Some(decision)
    }

    /// The next datagram due at `now`, copied into `buf` (at least
    /// [`MAX_DATAGRAM`](crate::delay_line::MAX_DATAGRAM) long). Datagrams of flows that
    /// closed meanwhile are skipped.
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut [u8]) -> Option<Release> {
        loop {
            let release = self.line.pop_due(now, buf)?;
            if self.table.key(release.flow).is_some() {
                return Some(release);
            }
        }
    }

    /// When the next datagram is due.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.line.next_at()
    }

    /// Closes the flows idle at `now`, adding them to `closed`.
    pub fn expire_idle(&mut self, now: Instant, closed: &mut Vec<FlowId>) {
        let before = closed.len();
        self.table.expire(now, closed);
        for id in &closed[before..] {
            if let Some(f) = self.flows.get_mut(id.slot()) {
                *f = None;
            }
        }
        self.expired += (closed.len() - before) as u64;
    }

    /// Datagrams in flight now.
    pub fn in_flight(&self) -> usize {
        self.line.len()
    }

    /// Datagrams taken in so far, both directions.
    pub fn datagrams(&self) -> u64 {
        self.counters.iter().map(DirectionCounters::datagrams).sum()
    }

    /// What it did so far.
    pub fn report(&self) -> EmulatorReport {
        EmulatorReport {
            link: self.profile.name.clone(),
            seed: self.seed,
            flows_open: self.table.len() as u64,
            flows_opened: self.opened,
            flows_refused: self.refused,
            flows_expired: self.expired,
            up: self.counters[Direction::Up as usize].report(),
            down: self.counters[Direction::Down as usize].report(),
        }
    }
}

/// What an [`Emulator`] did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EmulatorReport {
    /// The link's name.
    pub link: String,
    /// The seed it decided from.
    pub seed: u64,
    /// Flows open now.
    pub flows_open: u64,
    /// Flows opened so far.
    pub flows_opened: u64,
    /// Datagrams from new clients refused because every flow was taken.
    pub flows_refused: u64,
    /// Flows closed for being idle.
    pub flows_expired: u64,
    /// Client to server.
    pub up: DirectionReport,
    /// Server to client.
    pub down: DirectionReport,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;

    fn addr(port: u16) -> FlowKey {
        FlowKey::new(0, SocketAddr::from(([127, 0, 0, 1], port)))
    }

    #[test]
    fn datagrams_come_back_when_due_on_their_flow() {
        let t0 = Instant::now();
        let mut e = Emulator::new(LinkProfile::builtin("lan").unwrap(), 1, Limits::default());
        let a = e.flow(t0, addr(1)).unwrap();
        let b = e.flow(t0, addr(2)).unwrap();
        e.handle_datagram(t0, a, Direction::Up, b"from a");
        e.handle_datagram(t0, b, Direction::Down, b"to b");
        let mut buf = [0u8; crate::delay_line::MAX_DATAGRAM];
        assert_eq!(e.poll_transmit(t0, &mut buf), None);
        let due = e.poll_timeout().unwrap();
        assert_eq!(due, t0 + Duration::from_micros(250));
        let r = e.poll_transmit(due, &mut buf).unwrap();
        assert_eq!(
            (r.flow, r.direction, &buf[..r.len]),
            (a, Direction::Up, &b"from a"[..])
        );
        let r = e.poll_transmit(due, &mut buf).unwrap();
        assert_eq!((r.flow, r.direction), (b, Direction::Down));
        assert_eq!(e.key(b), Some(addr(2)));
        let report = e.report();
        assert_eq!((report.up.delivered, report.down.delivered), (1, 1));
        assert_eq!(report.flows_opened, 2);
    }

    #[test]
    fn an_expired_flows_datagrams_are_not_delivered() {
        let t0 = Instant::now();
        let limits = Limits {
            idle_timeout: Duration::from_millis(100),
            ..Limits::default()
        };
        let mut e = Emulator::new(LinkProfile::builtin("bad").unwrap(), 1, limits);
        let a = e.flow(t0, addr(1)).unwrap();
        for _ in 0..20 {
            e.handle_datagram(t0, a, Direction::Up, b"x");
        }
        let mut closed = Vec::new();
        e.expire_idle(t0 + Duration::from_millis(100), &mut closed);
        assert_eq!(closed, [a]);
        let mut buf = [0u8; crate::delay_line::MAX_DATAGRAM];
        assert_eq!(e.poll_transmit(t0 + Duration::from_secs(5), &mut buf), None);
        assert_eq!(e.handle_datagram(t0, a, Direction::Up, b"x"), None);
        assert_eq!(e.report().flows_expired, 1);
    }
}
