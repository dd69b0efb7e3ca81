//! [`Lane`]: one direction of one flow, deciding each datagram's fate from
//! its profile and a seeded generator. Sans-IO: it is told the time and the
//! datagram's size, and answers when (if ever) the datagram arrives.
//!
//! Every datagram draws the same six numbers whatever happens to it, so the
//! decisions for datagram `n` depend only on the seed, the stream and the
//! times and sizes of datagrams `0..=n`.

use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::profile::{DirectionProfile, RateLimit};

/// Why a datagram was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// A scheduled outage.
    Outage,
    /// Independent random loss.
    Loss,
    /// Bursty (Gilbert–Elliott) loss.
    Burst,
    /// The bandwidth cap's queue was full (tail drop).
    QueueFull,
}

impl DropReason {
    /// Every reason, in report order.
    pub const ALL: [DropReason; 4] = [
        DropReason::Outage,
        DropReason::Loss,
        DropReason::Burst,
        DropReason::QueueFull,
    ];

    /// The reason's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            DropReason::Outage => "outage",
            DropReason::Loss => "loss",
            DropReason::Burst => "burst",
            DropReason::QueueFull => "queue_full",
        }
    }
}

/// What happens to one datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// It arrives at `at`, and a second copy at `duplicate_at` if any.
    Deliver {
        /// When it arrives.
        at: Instant,
        /// When its duplicate arrives, if it is duplicated.
        duplicate_at: Option<Instant>,
    },
    /// It never arrives.
    Drop(DropReason),
}

/// One direction of one flow. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct Lane {
    profile: DirectionProfile,
    rng: ChaCha8Rng,
    /// When the flow began (outages count from it).
    start: Instant,
    /// Whether the Gilbert–Elliott chain is in its bad state.
    bad: bool,
    /// When the bandwidth cap finishes sending what it holds.
    busy_until: Option<Instant>,
    /// Arrival of the last datagram delivered in order.
    last_at: Option<Instant>,
}

impl Lane {
    /// A lane with `profile`, deciding from `seed` on generator stream
    /// `stream`, for a flow that began at `start`.
    pub fn new(profile: DirectionProfile, seed: u64, stream: u64, start: Instant) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(stream);
        Self {
            profile,
            rng,
            start,
            bad: false,
            busy_until: None,
            last_at: None,
        }
    }

    /// The profile it applies.
    pub fn profile(&self) -> &DirectionProfile {
        &self.profile
    }

    /// Decides the fate of a datagram of `len` bytes sent at `now` (times
    /// must not go backwards).
    pub fn decide(&mut self, now: Instant, len: usize) -> Decision {
        let u: [f64; 6] = std::array::from_fn(|_| self.rng.random::<f64>());
        let p = &self.profile;
        // The burst chain steps once per datagram, whatever else happens.
        if let Some(ge) = &p.bursts {
            self.bad = if self.bad {
                u[0] >= ge.leave
            } else {
                u[0] < ge.enter
            };
        }
        if p.outage
            .is_some_and(|o| o.covers(now.saturating_duration_since(self.start)))
        {
            return Decision::Drop(DropReason::Outage);
        }
        if u[1] < p.loss {
            return Decision::Drop(DropReason::Loss);
        }
        if let Some(ge) = &p.bursts {
            let loss = if self.bad { ge.loss_bad } else { ge.loss_good };
            if u[2] < loss {
                return Decision::Drop(DropReason::Burst);
            }
        }
        let depart = match &p.rate {
            Some(rate) => match enqueue(&mut self.busy_until, rate, now, len) {
                Some(done) => done,
                None => return Decision::Drop(DropReason::QueueFull),
            },
            None => now,
        };
        let jitter_ns = p.jitter.as_nanos() as f64 * (2.0 * u[3] - 1.0);
        let base_ns = p.latency.as_nanos() as f64 + jitter_ns;
        let mut at = depart + Duration::from_nanos(base_ns.max(0.0) as u64);
        if u[4] < p.reorder {
            // Held back: datagrams sent after it may overtake it.
            at += p.reorder_delay;
        } else {
            // Jitter is queueing: never before the one ahead.
            if let Some(last) = self.last_at {
                at = at.max(last);
            }
            self.last_at = Some(at);
        }
        let duplicate_at = (u[5] < p.duplicate).then_some(at);
        Decision::Deliver { at, duplicate_at }
    }
}

/// Puts `len` bytes at `now` in the queue of a cap sending at `rate` that
/// is busy until `busy_until`: when they finish sending, or `None` if the
/// queue has no room.
fn enqueue(
    busy_until: &mut Option<Instant>,
    rate: &RateLimit,
    now: Instant,
    len: usize,
) -> Option<Instant> {
    let busy = busy_until.filter(|&b| b > now);
    let backlog_ns = busy.map_or(0, |b| (b - now).as_nanos());
    let backlog_bytes = backlog_ns * u128::from(rate.bytes_per_s) / 1_000_000_000;
    if backlog_bytes + len as u128 > u128::from(rate.queue_bytes) {
        return None;
    }
    let send_ns = len as u128 * 1_000_000_000 / u128::from(rate.bytes_per_s);
    let done = busy.unwrap_or(now) + Duration::from_nanos(send_ns as u64);
    *busy_until = Some(done);
    Some(done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{GilbertElliott, Outage};

    fn lane(profile: DirectionProfile, start: Instant) -> Lane {
        Lane::new(profile, 7, 0, start)
    }

    #[test]
    fn a_perfect_lane_delivers_everything_at_once() {
        let t0 = Instant::now();
        let mut l = lane(DirectionProfile::PERFECT, t0);
        for i in 0..100 {
            let now = t0 + Duration::from_millis(i);
            assert_eq!(
                l.decide(now, 100),
                Decision::Deliver {
                    at: now,
                    duplicate_at: None
                }
            );
        }
    }

    #[test]
    fn jitter_keeps_order_and_reordering_breaks_it() {
        let t0 = Instant::now();
        let profile = DirectionProfile {
            latency: Duration::from_millis(20),
            jitter: Duration::from_millis(15),
            ..DirectionProfile::PERFECT
        };
        let mut l = lane(profile.clone(), t0);
        let mut last = t0;
        for i in 0..1000 {
            let Decision::Deliver { at, .. } = l.decide(t0 + Duration::from_millis(i), 100) else {
                panic!("no loss configured");
            };
            assert!(at >= last);
            last = at;
        }
        let mut l = lane(
            DirectionProfile {
                reorder: 0.2,
                reorder_delay: Duration::from_millis(30),
                ..profile
            },
            t0,
        );
        let mut overtaken = 0;
        let mut last = t0;
        for i in 0..1000 {
            let Decision::Deliver { at, .. } = l.decide(t0 + Duration::from_millis(i), 100) else {
                panic!("no loss configured");
            };
            overtaken += u32::from(at < last);
            last = at;
        }
        assert!(overtaken > 50, "{overtaken}");
    }

    #[test]
    fn the_bandwidth_cap_spaces_datagrams_and_drops_at_the_tail() {
        let t0 = Instant::now();
        let mut l = lane(
            DirectionProfile {
                rate: Some(RateLimit {
                    bytes_per_s: 100_000,
                    queue_bytes: 5_000,
                }),
                ..DirectionProfile::PERFECT
            },
            t0,
        );
        // 1000 B at 100 kB/s: 10 ms each; the queue holds five.
        let mut fates = Vec::new();
        for _ in 0..8 {
            fates.push(l.decide(t0, 1000));
        }
        for (i, f) in fates.iter().take(5).enumerate() {
            assert_eq!(
                *f,
                Decision::Deliver {
                    at: t0 + Duration::from_millis(10 * (i as u64 + 1)),
                    duplicate_at: None
                }
            );
        }
        assert!(
            fates[5..]
                .iter()
                .all(|f| *f == Decision::Drop(DropReason::QueueFull))
        );
        // Once it has drained, there is room again.
        let later = t0 + Duration::from_millis(50);
        assert_eq!(
            l.decide(later, 1000),
            Decision::Deliver {
                at: later + Duration::from_millis(10),
                duplicate_at: None
            }
        );
    }

    #[test]
    fn outages_drop_everything_while_they_last() {
        let t0 = Instant::now();
        let mut l = lane(
            DirectionProfile {
                outage: Some(Outage {
                    every: Duration::from_secs(3),
                    length: Duration::from_secs(1),
                    first_after: Duration::from_secs(2),
                }),
                ..DirectionProfile::PERFECT
            },
            t0,
        );
        let at = |ms| t0 + Duration::from_millis(ms);
        assert!(matches!(l.decide(at(1_999), 10), Decision::Deliver { .. }));
        assert_eq!(l.decide(at(2_000), 10), Decision::Drop(DropReason::Outage));
        assert_eq!(l.decide(at(2_999), 10), Decision::Drop(DropReason::Outage));
        assert!(matches!(l.decide(at(3_000), 10), Decision::Deliver { .. }));
        assert_eq!(l.decide(at(5_500), 10), Decision::Drop(DropReason::Outage));
    }

    #[test]
    fn bursty_loss_comes_in_runs() {
        let t0 = Instant::now();
        let mut l = lane(
            DirectionProfile {
                bursts: Some(GilbertElliott::bursts(0.1, 5.0)),
                ..DirectionProfile::PERFECT
            },
            t0,
        );
        let lost: Vec<bool> = (0..20_000)
            .map(|_| matches!(l.decide(t0, 10), Decision::Drop(_)))
            .collect();
        let losses = lost.iter().filter(|&&x| x).count();
        let runs = lost.windows(2).filter(|w| w[1] && !w[0]).count();
        // Mean run length near 5 (random loss at 10% would give about 1.1).
        let mean_run = losses as f64 / runs as f64;
        assert!((3.5..7.0).contains(&mean_run), "{mean_run}");
    }
}
