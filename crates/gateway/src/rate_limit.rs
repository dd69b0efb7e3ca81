//! Per-client-IP token buckets: `per_s` requests a second sustained, `burst`
//! at once. A refused request learns how long until a token is back.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// Buckets idle this long are forgotten (they would be full anyway).
const IDLE_FORGET: Duration = Duration::from_secs(60);
/// Forget idle buckets after this many new ones.
const PRUNE_EVERY: usize = 4096;

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// The per-IP limiter.
#[derive(Debug)]
pub struct RateLimit {
    per_s: f64,
    burst: f64,
    buckets: Mutex<(HashMap<IpAddr, Bucket>, usize)>,
}

impl RateLimit {
    /// `per_s` = 0 turns limiting off.
    pub fn new(per_s: f64, burst: u32) -> Self {
        Self {
            per_s,
            burst: f64::from(burst.max(1)),
            buckets: Mutex::new((HashMap::new(), 0)),
        }
    }

    /// Takes one token for `ip` at `now`; `Err(wait)` when none is left.
    pub fn take(&self, ip: IpAddr, now: Instant) -> Result<(), Duration> {
        if self.per_s <= 0.0 {
            return Ok(());
        }
        let mut guard = self.buckets.lock();
        let (buckets, inserted) = &mut *guard;
        let bucket = buckets.entry(ip).or_insert_with(|| {
            *inserted += 1;
            Bucket {
                tokens: self.burst,
                at: now,
            }
        });
        let elapsed = now.saturating_duration_since(bucket.at).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * self.per_s).min(self.burst);
        bucket.at = now;
        let answer = if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - bucket.tokens) / self.per_s))
        };
        if *inserted >= PRUNE_EVERY {
            *inserted = 0;
            buckets.retain(|_, b| now.saturating_duration_since(b.at) < IDLE_FORGET);
        }
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_then_a_refusal_then_a_refill() {
        let limit = RateLimit::new(10.0, 3);
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        let t0 = Instant::now();
        for _ in 0..3 {
            assert!(limit.take(ip, t0).is_ok());
        }
        let wait = limit.take(ip, t0).unwrap_err();
        assert!(wait > Duration::ZERO && wait <= Duration::from_millis(100));
        // Another client is not affected.
        assert!(limit.take("10.0.0.2".parse().unwrap(), t0).is_ok());
        assert!(limit.take(ip, t0 + Duration::from_millis(100)).is_ok());
    }

    #[test]
    fn zero_is_off() {
        let limit = RateLimit::new(0.0, 1);
        let ip: IpAddr = "::1".parse().unwrap();
        for _ in 0..1000 {
            assert!(limit.take(ip, Instant::now()).is_ok());
        }
    }
}
