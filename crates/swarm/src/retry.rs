//! [`RetryPolicy`]: failed requests (refused, timed out, a 429 or 503) are
//! tried again after an exponential backoff with jitter, the way a real
//! client under stress behaves: the n-th retry waits a random time in
//! `[cap/2, cap]` with `cap = min(max_backoff, backoff * 2^(n-1))` ("equal
//! jitter": spread out, never immediate).

use std::time::Duration;

use rand::Rng;

/// When and how a failed step is tried again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Tries in all, the first included (1: never retry).
    pub attempts: u32,
    /// The first retry's backoff cap.
    pub backoff: Duration,
    /// The largest backoff cap.
    pub max_backoff: Duration,
    /// Response statuses worth retrying (transport errors and timeouts always are).
    pub on_status: Vec<u16>,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            attempts: 3,
            backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
            on_status: vec![429, 502, 503, 504],
        }
    }
}

impl RetryPolicy {
    /// Whether a response with `status` is worth another try.
    pub fn retries_status(&self, status: u16) -> bool {
        self.on_status.contains(&status)
    }

    /// The wait before retry number `retry` (1 for the first retry).
    pub fn delay(&self, retry: u32, rng: &mut impl Rng) -> Duration {
        let doubling = 1u32 << retry.saturating_sub(1).min(20);
        let cap = self.backoff.saturating_mul(doubling).min(self.max_backoff);
        cap / 2 + (cap / 2).mul_f64(rng.random::<f64>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::SmallRng;

    #[test]
    fn backoff_doubles_up_to_its_cap_with_jitter() {
        let policy = RetryPolicy {
            attempts: 10,
            backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(1),
            on_status: vec![503],
        };
        let mut rng = SmallRng::seed_from_u64(9);
        let mut seen = std::collections::BTreeSet::new();
        for retry in 1..=8 {
            let cap = (Duration::from_millis(100) * (1 << (retry - 1))).min(Duration::from_secs(1));
            for _ in 0..50 {
                let d = policy.delay(retry, &mut rng);
                assert!(d >= cap / 2 && d <= cap, "retry {retry}: {d:?}");
                seen.insert(d);
            }
        }
        assert!(seen.len() > 300, "jitter spreads the waits");
        assert!(policy.retries_status(503) && !policy.retries_status(400));
        assert!(policy.delay(u32::MAX, &mut rng) <= Duration::from_secs(1));
    }
}
