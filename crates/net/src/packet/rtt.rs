//! Round-trip time and packet-loss estimates for one connection.
//!
//! [`RttEstimator`] follows RFC 6298: the first sample sets the smoothed RTT
//! and half of it as the variation; later samples move them by 1/8 and 1/4.
//! Samples come from acks of the newest packet a header acknowledges, so they
//! include the peer's ack delay (at most one of its send intervals).
//!
//! [`LossEstimator`] is an exponentially weighted fraction of packets presumed
//! lost among those whose fate is known (acked or lost).
//!
//! Neither reads a clock: durations are handed in by the packet layer.
//!
//! ```
//! use std::time::Duration;
//! use hightick_net::rtt::RttEstimator;
//!
//! let mut rtt = RttEstimator::new(Duration::from_millis(100));
//! rtt.sample(Duration::from_millis(40));
//! assert_eq!(rtt.smoothed(), Duration::from_millis(40));
//! assert_eq!(rtt.variation(), Duration::from_millis(20));
//! ```

use std::time::Duration;

/// Smoothed RTT and RTT variation (RFC 6298).
#[derive(Debug, Clone, Copy)]
pub struct RttEstimator {
    smoothed: Duration,
    variation: Duration,
    has_sample: bool,
}

impl RttEstimator {
    /// An estimator that reports `initial` (and `initial / 2` as variation)
    /// until the first sample.
    pub fn new(initial: Duration) -> Self {
        Self {
            smoothed: initial,
            variation: initial / 2,
            has_sample: false,
        }
    }

    /// Folds in one round-trip measurement.
    pub fn sample(&mut self, rtt: Duration) {
        if !self.has_sample {
            self.smoothed = rtt;
            self.variation = rtt / 2;
            self.has_sample = true;
            return;
        }
        let deviation = self.smoothed.abs_diff(rtt);
        self.variation = (self.variation * 3 + deviation) / 4;
        self.smoothed = (self.smoothed * 7 + rtt) / 8;
    }

    /// Smoothed round-trip time.
    pub fn smoothed(&self) -> Duration {
        self.smoothed
    }

    /// Round-trip time variation.
    pub fn variation(&self) -> Duration {
        self.variation
    }

    /// True once at least one sample was taken.
    pub fn has_sample(&self) -> bool {
        self.has_sample
    }
}

/// Exponentially weighted fraction of packets presumed lost.
#[derive(Debug, Clone, Copy)]
pub struct LossEstimator {
    loss: f32,
    smoothing: f32,
}

impl LossEstimator {
    /// An estimator starting at 0 that moves by `smoothing` (in `(0, 1]`) of
    /// the difference on every outcome.
    pub fn new(smoothing: f32) -> Self {
        Self {
            loss: 0.0,
            smoothing: smoothing.clamp(f32::MIN_POSITIVE, 1.0),
        }
    }

    /// Folds in the fate of one packet.
    pub fn record(&mut self, lost: bool) {
        let sample = if lost { 1.0 } else { 0.0 };
        self.loss += (sample - self.loss) * self.smoothing;
    }

    /// Current loss estimate in `[0, 1]`.
    pub fn loss(&self) -> f32 {
        self.loss
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rtt_converges_to_a_steady_sample() {
        let mut rtt = RttEstimator::new(Duration::from_millis(500));
        assert!(!rtt.has_sample());
        rtt.sample(Duration::from_millis(10));
        for _ in 0..100 {
            rtt.sample(Duration::from_millis(80));
        }
        let ms = rtt.smoothed().as_secs_f64() * 1000.0;
        assert!((79.0..=80.0).contains(&ms), "{ms}");
        assert!(rtt.variation() < Duration::from_millis(1));
    }

    #[test]
    fn rtt_follows_rfc6298_weights() {
        let mut rtt = RttEstimator::new(Duration::from_millis(100));
        rtt.sample(Duration::from_millis(80));
        rtt.sample(Duration::from_millis(160));
        // variation = 3/4 * 40 + 1/4 * 80 = 50; smoothed = 7/8 * 80 + 1/8 * 160 = 90
        assert_eq!(rtt.variation(), Duration::from_millis(50));
        assert_eq!(rtt.smoothed(), Duration::from_millis(90));
    }

    #[test]
    fn loss_tracks_the_lost_fraction() {
        let mut loss = LossEstimator::new(0.05);
        for i in 0..2000 {
            loss.record(i % 5 == 0);
        }
        assert!((0.15..0.25).contains(&loss.loss()), "{}", loss.loss());
        for _ in 0..2000 {
            loss.record(false);
        }
        assert!(loss.loss() < 0.01);
    }
}
