//! Adaptive pacing: a controller that holds a target response time on a
//! measured percentile by setting the load (the arrival rate in the open
//! model, the rate at which steps may start in the closed model).
//!
//! # Design
//!
//! Tools that hold a target response time usually multiply a sleep by
//! `measured / target` each period. That gain is huge where it matters: near
//! capacity, response time grows like `1 / (1 - utilization)`, so one slow
//! interval cuts the load by a large factor, the next fast one restores it,
//! and the run oscillates (or overshoots into collapse and never recovers
//! because queued work keeps the measurement high).
//!
//! [`Pacer`] is a PI controller with these choices:
//!
//! - **It works in logarithms.** The controlled variable is `ln(rate)` and
//!   the error is `ln(target / measured)`: a 10 % miss moves the rate by the
//!   same fraction at 50 req/s as at 50,000 req/s, and the hockey-stick
//!   latency curve becomes much closer to linear. The error is clamped to
//!   `[-3, 3]`.
//! - **Velocity form.** Each interval it computes a change,
//!   `Δu = K·(e - e_prev) + (K / Ti)·e` (`Ti` in intervals), rather than an absolute output.
//!   The integral lives in the output itself, so when the output is clamped
//!   (to `[min_rate, max_rate]` or by the rate limit below) nothing winds
//!   up: this is the anti-windup. When no measurement arrives (too few
//!   samples), it holds and forgets `e_prev`.
//! - **A rate limit on change.** `|Δu| <= ln(1 + max_change)` per interval
//!   (25 % by default), so it approaches capacity in steps the system can
//!   answer before the next decision.
//! - **A measured percentile over a window.** The percentile is taken over
//!   the merged histograms of the last few intervals (3 by default) of the
//!   controlled requests, failures included (a timeout counts at its
//!   timeout), which smooths the noise of a tail percentile.
//!
//! The gains are small on purpose. Near capacity the log-latency rises
//! several times faster than the log-rate (an elasticity `a` of 3 to 5 on a
//! single queue), and with a measurement one interval late the loop is only
//! well damped while `a·K/Ti` stays well under 1. The defaults (`K = 0.05`,
//! `Ti = 0.5` intervals: an integral gain of 0.1 per interval) climb at the
//! rate limit while far below the target (the error there is large) and
//! settle without a limit cycle once near it;
//! `tests::settles_on_a_queue_model` drives it against a queueing model and
//! `tests/pacing.rs` against a local server with a fixed service rate.
//!
//! ```
//! use std::time::Duration;
//! use hightick_swarm::pacing::{Pacer, PacingConfig};
//!
//! let mut pacer = Pacer::new(PacingConfig::new(Duration::from_millis(50), 100.0));
//! // Measured p99 was 10 ms: well under target, so the rate goes up (by at most 25 %).
//! let rate = pacer.update(Some(10_000.0));
//! assert!(rate > 100.0 && rate <= 125.0);
//! ```

use std::time::Duration;

/// The controller's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct PacingConfig {
    /// The response time to hold.
    pub target: Duration,
    /// The percentile it is held on, as a quantile in `(0, 1]`.
    pub quantile: f64,
    /// Intervals merged for one measurement.
    pub window: u32,
    /// The rate to start from (per second).
    pub initial_rate: f64,
    /// The lowest rate it may set.
    pub min_rate: f64,
    /// The highest rate it may set.
    pub max_rate: f64,
    /// The largest change per interval, as a fraction (0.25: ±25 %).
    pub max_change: f64,
    /// The proportional gain on the log error.
    pub gain: f64,
    /// The integral time, in intervals.
    pub integral_intervals: f64,
    /// Fewer completions than this in the window: hold.
    pub min_samples: u64,
}

impl PacingConfig {
    /// Holds `target` on the p99, starting at `initial_rate` per second.
    pub fn new(target: Duration, initial_rate: f64) -> Self {
        Self {
            target,
            quantile: 0.99,
            window: 3,
            initial_rate,
            min_rate: 0.1,
            max_rate: 1e7,
            max_change: 0.25,
            gain: 0.05,
            integral_intervals: 0.5,
            min_samples: 20,
        }
    }
}

/// The pacing controller. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct Pacer {
    config: PacingConfig,
    log_rate: f64,
    prev_error: Option<f64>,
}

impl Pacer {
    /// A controller at its initial rate.
    pub fn new(config: PacingConfig) -> Self {
        let log_rate = config
            .initial_rate
            .clamp(
                config.min_rate.max(1e-9),
                config.max_rate.max(config.min_rate),
            )
            .ln();
        Self {
            config,
            log_rate,
            prev_error: None,
        }
    }

    /// The settings.
    pub fn config(&self) -> &PacingConfig {
        &self.config
    }

    /// The rate it sets now, per second.
    pub fn rate(&self) -> f64 {
        self.log_rate.exp()
    }

    /// One interval: given the measured percentile in microseconds
    /// (`None`: too few samples), returns the new rate.
    pub fn update(&mut self, measured_us: Option<f64>) -> f64 {
        let c = &self.config;
        let Some(measured) = measured_us else {
            self.prev_error = None;
            return self.rate();
        };
        let target = c.target.as_secs_f64() * 1e6;
        let error = (target / measured.max(1.0)).ln().clamp(-3.0, 3.0);
        let proportional = self.prev_error.map_or(0.0, |prev| error - prev);
        let integral = error / c.integral_intervals.max(1e-3);
        let step_limit = (1.0 + c.max_change.max(0.0)).ln();
        let delta = (c.gain * (proportional + integral)).clamp(-step_limit, step_limit);
        let (lo, hi) = (
            c.min_rate.max(1e-9).ln(),
            c.max_rate.max(c.min_rate.max(1e-9)).ln(),
        );
        self.log_rate = (self.log_rate + delta).clamp(lo, hi);
        self.prev_error = Some(error);
        self.rate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// p99 of an M/D/1 queue in microseconds at `rate` per second with a
    /// service time of `service_us`, from the waiting-time tail
    /// approximation P(W > t) ≈ ρ·exp(-2(1-ρ)t / (ρ·s)); overload answers
    /// with a large number growing with the excess.
    fn md1_p99_us(rate: f64, service_us: f64) -> f64 {
        let rho = rate * service_us / 1e6;
        if rho >= 0.999 {
            return 1e6 * rho;
        }
        let wait = if rho <= 0.01 {
            0.0
        } else {
            (rho / 0.01).ln().max(0.0) * rho * service_us / (2.0 * (1.0 - rho))
        };
        service_us + wait
    }

    #[test]
    fn settles_on_a_queue_model() {
        // Capacity 200/s (5 ms service); target p99 50 ms sits near ρ ≈ 0.9.
        let mut config = PacingConfig::new(Duration::from_millis(50), 20.0);
        config.window = 1;
        let mut pacer = Pacer::new(config);
        let mut rates = Vec::new();
        let mut measured = md1_p99_us(pacer.rate(), 5_000.0);
        for _ in 0..80 {
            // The measurement lags one interval behind the rate.
            let rate = pacer.update(Some(measured));
            measured = md1_p99_us(rate, 5_000.0);
            rates.push((rate, measured));
        }
        let tail = &rates[50..];
        for (rate, p99) in tail {
            assert!(
                (p99 / 50_000.0 - 1.0).abs() < 0.02,
                "p99 {p99} at rate {rate}: {rates:?}"
            );
            assert!(*rate < 200.0);
        }
        // Never thrown into deep overload on the way.
        assert!(rates.iter().all(|(r, _)| *r < 200.0 * 1.05), "{rates:?}");
    }

    #[test]
    fn steps_are_rate_limited_and_clamped() {
        let mut config = PacingConfig::new(Duration::from_millis(10), 100.0);
        config.max_rate = 150.0;
        let mut pacer = Pacer::new(config);
        let r1 = pacer.update(Some(1.0));
        assert!((r1 - 125.0).abs() < 1e-6, "{r1}");
        for _ in 0..10 {
            pacer.update(Some(1.0));
        }
        assert!((pacer.rate() - 150.0).abs() < 1e-6);
        // No windup: the first over-target measurement turns it down at once.
        let down = pacer.update(Some(1e9));
        assert!((down - 120.0).abs() < 1e-6, "{down}");
        // No measurement: hold.
        assert_eq!(pacer.update(None), down);
        // Any measurement over target lowers it, a little when close.
        let mut pacer = Pacer::new(PacingConfig::new(Duration::from_millis(10), 100.0));
        let slower = pacer.update(Some(11_000.0));
        assert!(slower < 100.0 && slower > 99.0, "{slower}");
    }
}
