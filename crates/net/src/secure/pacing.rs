//! Pacing of what a server sends on one connection: a token bucket of
//! [`Pacing::burst_bytes`] filled at [`Pacing::bytes_per_s`]. Every payload
//! packet is charged to it; the packets a host sends on its own cadence
//! (one per tick, `Server::transmit_payload`) always go, and the extra ones
//! `Server::poll_transmit` would write (a full resync's reliable events, a
//! large reliable message's fragments, resends) wait until the bucket holds
//! a whole packet. So apart from the tick packets, what one connection
//! sends in any interval `t` is at most `burst_bytes + bytes_per_s * t`.

use std::time::{Duration, Instant};

use crate::secure::error::NetError;
use crate::secure::wire::MAX_PACKET_BYTES;

/// A connection's pacing: the most it may send at once, and how fast.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pacing {
    /// Bytes per second the bucket fills at (at least 1000).
    pub bytes_per_s: u64,
    /// Bytes the bucket holds: the largest burst (at least one packet,
    /// [`MAX_PACKET_BYTES`]).
    pub burst_bytes: u64,
}

impl Pacing {
    /// Checks both fields, naming the one at fault.
    pub fn validate(&self) -> Result<(), NetError> {
        if self.bytes_per_s < 1000 {
            return Err(NetError::InvalidParameter {
                field: "pacing.bytes_per_s",
                reason: "must be at least 1000",
            });
        }
        if self.burst_bytes < MAX_PACKET_BYTES as u64 {
            return Err(NetError::InvalidParameter {
                field: "pacing.burst_bytes",
                reason: "must hold at least one whole packet (wire::MAX_PACKET_BYTES)",
            });
        }
        Ok(())
    }

    fn nanos_for(&self, bytes: u64) -> Duration {
        Duration::from_nanos(
            u64::try_from(u128::from(bytes) * 1_000_000_000 / u128::from(self.bytes_per_s))
                .unwrap_or(u64::MAX),
        )
    }
}

/// One connection's bucket.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pacer {
    /// Bytes it may send now; negative after tick packets beyond the rate.
    tokens: i64,
    /// The instant `tokens` was counted at.
    at: Instant,
}

impl Pacer {
    /// A full bucket.
    pub(crate) fn new(now: Instant, pacing: &Pacing) -> Self {
        Self {
            tokens: i64::try_from(pacing.burst_bytes).unwrap_or(i64::MAX),
            at: now,
        }
    }

    fn refill(&mut self, now: Instant, pacing: &Pacing) {
        let burst = i64::try_from(pacing.burst_bytes).unwrap_or(i64::MAX);
        let elapsed = now.saturating_duration_since(self.at);
        let earned = elapsed.as_nanos() * u128::from(pacing.bytes_per_s) / 1_000_000_000;
        let earned = i64::try_from(earned).unwrap_or(i64::MAX);
        if self.tokens.saturating_add(earned) >= burst {
            self.tokens = burst;
            self.at = now;
        } else if earned > 0 {
            self.tokens += earned;
            // Keep the fraction of a byte not yet earned.
            self.at += pacing.nanos_for(earned as u64);
        }
    }

    /// Whether a whole packet may go now.
    pub(crate) fn ready(&mut self, now: Instant, pacing: &Pacing) -> bool {
        self.refill(now, pacing);
        self.tokens >= MAX_PACKET_BYTES as i64
    }

    /// `bytes` went out.
    pub(crate) fn spend(&mut self, bytes: usize) {
        self.tokens = self
            .tokens
            .saturating_sub(i64::try_from(bytes).unwrap_or(i64::MAX));
    }

    /// When a whole packet may go.
    pub(crate) fn ready_at(&self, pacing: &Pacing) -> Instant {
        let short = MAX_PACKET_BYTES as i64 - self.tokens;
        if short <= 0 {
            self.at
        } else {
            self.at + pacing.nanos_for(short as u64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PACING: Pacing = Pacing {
        bytes_per_s: 100_000,
        burst_bytes: 4 * MAX_PACKET_BYTES as u64,
    };

    #[test]
    fn a_full_bucket_lets_a_burst_go_then_the_rate_rules() {
        let t0 = Instant::now();
        let mut p = Pacer::new(t0, &PACING);
        let mut sent = 0;
        while p.ready(t0, &PACING) {
            p.spend(MAX_PACKET_BYTES);
            sent += 1;
        }
        assert_eq!(sent, 4, "the burst is the bucket");
        let next = p.ready_at(&PACING);
        assert_eq!(next, t0 + PACING.nanos_for(MAX_PACKET_BYTES as u64));
        assert!(!p.ready(next - Duration::from_micros(1), &PACING));
        assert!(p.ready(next, &PACING));
        // Tick packets may overdraw it; it recovers at the rate.
        p.spend(3 * MAX_PACKET_BYTES);
        assert!(!p.ready(next, &PACING));
        assert!(p.ready(p.ready_at(&PACING), &PACING));
    }

    #[test]
    fn validation_names_the_field() {
        assert!(PACING.validate().is_ok());
        let field = |p: Pacing| match p.validate() {
            Err(NetError::InvalidParameter { field, .. }) => field,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            field(Pacing {
                bytes_per_s: 10,
                ..PACING
            }),
            "pacing.bytes_per_s"
        );
        assert_eq!(
            field(Pacing {
                burst_bytes: 10,
                ..PACING
            }),
            "pacing.burst_bytes"
        );
    }
}
