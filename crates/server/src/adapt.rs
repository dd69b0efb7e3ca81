//! Per-client adaptation to a bad link (sans-IO): a [`LinkAdapter`] per
//! seat reads its connection's smoothed RTT and loss once a tick and sets a
//! send share (AIMD): the share of ticks on which the client gets a packet,
//! and its snapshot byte budget scaled by the same share.
//!
//! The link is called congested when the smoothed RTT stands above the least
//! RTT seen lately by more than [`AdaptConfig::queue_delay_ms`] and more than
//! [`AdaptConfig::queue_delay_ratio`] times that least RTT (a queue filling
//! somewhere on the path: a capped link), or when the smoothed loss passes
//! [`AdaptConfig::loss_high`]. Congested: the share is multiplied by
//! [`AdaptConfig::decrease`], at most once per round trip, down to
//! [`AdaptConfig::min_share`]. Otherwise it grows by
//! [`AdaptConfig::increase_per_s`] a second back to 1. Jitter and random loss
//! of the built-in links stay below both thresholds; only a queue that
//! builds, or loss far above theirs, sheds.
//!
//! It is not congestion control for the connection's other packets
//! (handshakes, pacing of large reliable messages: `pace_bytes_per_s`), and
//! it never reads a clock: the worker passes `now`.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use hightick_config::ConfigFileError;

use crate::error::ServerError;

/// The `[adapt]` table of the host config.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct AdaptConfig {
    /// Adapt each client's send share to its link.
    pub enabled: bool,
    /// Queueing delay (smoothed RTT above the least RTT seen), ms, from
    /// which the link counts as congested ...
    pub queue_delay_ms: f64,
    /// ... if it is also more than this many times the least RTT.
    pub queue_delay_ratio: f64,
    /// Smoothed loss (0..1) from which the link counts as congested.
    pub loss_high: f64,
    /// The share is multiplied by this on congestion (0..1).
    pub decrease: f64,
    /// The share grows by this much a second while the link is clear.
    pub increase_per_s: f64,
    /// The least share (0..1]: a client gets a packet at least this often.
    pub min_share: f64,
    /// How long the least RTT is remembered, seconds.
    pub min_rtt_window_s: f64,
}

impl Default for AdaptConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            queue_delay_ms: 80.0,
            queue_delay_ratio: 1.5,
            loss_high: 0.5,
            decrease: 0.7,
            increase_per_s: 0.5,
            min_share: 0.25,
            min_rtt_window_s: 10.0,
        }
    }
}

impl AdaptConfig {
    /// Checks every field, naming the one at fault.
    pub fn validate(&self) -> Result<(), ServerError> {
        let bad = |field, reason: &str| Err(ConfigFileError::invalid(field, reason).into());
        let finite = |v: f64| v.is_finite();
        if !(finite(self.queue_delay_ms) && self.queue_delay_ms > 0.0) {
            return bad("adapt.queue_delay_ms", "must be above 0");
        }
        if !(finite(self.queue_delay_ratio) && self.queue_delay_ratio >= 0.0) {
            return bad("adapt.queue_delay_ratio", "must be 0 or more");
        }
        if !(self.loss_high > 0.0 && self.loss_high <= 1.0) {
            return bad("adapt.loss_high", "must be in (0, 1]");
        }
        if !(self.decrease > 0.0 && self.decrease < 1.0) {
            return bad("adapt.decrease", "must be in (0, 1)");
        }
        if !(finite(self.increase_per_s) && self.increase_per_s > 0.0) {
            return bad("adapt.increase_per_s", "must be above 0");
        }
        if !(self.min_share > 0.0 && self.min_share <= 1.0) {
            return bad("adapt.min_share", "must be in (0, 1]");
        }
        if !(finite(self.min_rtt_window_s) && self.min_rtt_window_s > 0.0) {
            return bad("adapt.min_rtt_window_s", "must be above 0");
        }
        Ok(())
    }
}

/// What a client's connection says about its link, once a tick.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LinkReading {
    /// Smoothed round-trip time.
    pub rtt: Duration,
    /// Smoothed share of packets presumed lost, 0..1.
    pub loss: f32,
    /// Whether any packet was acked yet (before that the RTT is a guess).
    pub measured: bool,
}

/// One client's send share. See the [module docs](self).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LinkAdapter {
    share: f64,
    /// Sends owed: grows by the share each tick, a send spends 1.
    credit: f64,
    /// The least RTT of the current window and of the one before.
    min_rtt: [Option<Duration>; 2],
    window_started: Option<Instant>,
    last_decrease: Option<Instant>,
    last_reading: Option<Instant>,
    decreases: u64,
}

impl Default for LinkAdapter {
    fn default() -> Self {
        Self {
            share: 1.0,
            credit: 0.0,
            min_rtt: [None, None],
            window_started: None,
            last_decrease: None,
            last_reading: None,
            decreases: 0,
        }
    }
}

impl LinkAdapter {
    /// The share of ticks this client gets a packet on (and of its full
    /// snapshot budget), in `[min_share, 1]`.
    pub(crate) fn share(&self) -> f64 {
        self.share
    }

    /// Times the share was cut.
    pub(crate) fn decreases(&self) -> u64 {
        self.decreases
    }

    /// The least RTT of the last one or two windows.
    pub(crate) fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt.iter().flatten().min().copied()
    }

    /// Takes this tick's reading of the link at `now` and moves the share.
    pub(crate) fn observe(&mut self, config: &AdaptConfig, now: Instant, reading: LinkReading) {
        let elapsed = self
            .last_reading
            .map_or(Duration::ZERO, |at| now.saturating_duration_since(at));
        self.last_reading = Some(now);
        if !reading.measured {
            return;
        }
        self.remember_rtt(config, now, reading.rtt);
        let least = self.min_rtt().unwrap_or(reading.rtt);
        let queued = reading.rtt.saturating_sub(least).as_secs_f64();
        let queue_bound =
            (config.queue_delay_ms / 1e3).max(config.queue_delay_ratio * least.as_secs_f64());
        let congested = queued > queue_bound || f64::from(reading.loss) > config.loss_high;
        if congested {
            let once_per_rtt = self
                .last_decrease
                .is_none_or(|at| now.saturating_duration_since(at) >= reading.rtt);
            if once_per_rtt && self.share > config.min_share {
                self.share = (self.share * config.decrease).max(config.min_share);
                self.last_decrease = Some(now);
                self.decreases += 1;
            }
        } else {
            self.share = (self.share + config.increase_per_s * elapsed.as_secs_f64()).min(1.0);
        }
    }

    /// Whether this tick's packet goes: spends a send from the credit the
    /// share builds up (a share of 1 sends every tick).
    pub(crate) fn take_send(&mut self) -> bool {
        self.credit = (self.credit + self.share).min(1.0);
        if self.credit >= 1.0 - 1e-9 {
            self.credit -= 1.0;
            true
        } else {
            false
        }
    }

    /// The snapshot budget for a full one of `full` bytes.
    pub(crate) fn budget(&self, full: u16) -> u16 {
        (f64::from(full) * self.share()).round() as u16
    }

    fn remember_rtt(&mut self, config: &AdaptConfig, now: Instant, rtt: Duration) {
        let window = Duration::from_secs_f64(config.min_rtt_window_s);
        match self.window_started {
            Some(at) if now.saturating_duration_since(at) < window => {}
            Some(_) => {
                self.min_rtt = [None, self.min_rtt[0]];
                self.window_started = Some(now);
            }
            None => self.window_started = Some(now),
        }
        self.min_rtt[0] = Some(self.min_rtt[0].map_or(rtt, |m| m.min(rtt)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TICK: Duration = Duration::from_micros(7_812);

    fn reading(rtt_ms: u64, loss: f32) -> LinkReading {
        LinkReading {
            rtt: Duration::from_millis(rtt_ms),
            loss,
            measured: true,
        }
    }

    /// The default config, a new adapter and a clock.
    fn fresh() -> (AdaptConfig, LinkAdapter, Instant) {
        (
            AdaptConfig::default(),
            LinkAdapter::default(),
            Instant::now(),
        )
    }

    /// Runs `ticks` ticks of `reading` from `*now`, returning the sends.
    fn run(
        a: &mut LinkAdapter,
        config: &AdaptConfig,
        now: &mut Instant,
        ticks: u32,
        reading: LinkReading,
    ) -> u32 {
        let mut sent = 0;
        for _ in 0..ticks {
            a.observe(config, *now, reading);
            sent += u32::from(a.take_send());
            *now += TICK;
        }
        sent
    }

    #[test]
    fn a_clear_link_keeps_every_tick() {
        let (config, mut a, mut now) = fresh();
        assert_eq!(
            run(&mut a, &config, &mut now, 1_000, reading(30, 0.01)),
            1_000
        );
        assert_eq!(a.share(), 1.0);
        assert_eq!(a.budget(896), 896);
    }

    #[test]
    fn jitter_and_random_loss_of_the_bad_link_do_not_shed() {
        // RTT between 100 and 200 ms, loss 8-15%: no queue beyond the ratio.
        let (config, mut a, mut now) = fresh();
        let mut sent = 0;
        for i in 0..2_000u64 {
            let rtt = 100 + (i * 37) % 100;
            let loss = if i % 50 < 10 { 0.15 } else { 0.08 };
            sent += run(&mut a, &config, &mut now, 1, reading(rtt, loss));
        }
        assert_eq!(a.decreases(), 0);
        assert_eq!(sent, 2_000);
    }

    #[test]
    fn a_filling_queue_cuts_the_share_once_per_round_trip_to_the_floor() {
        let (config, mut a, mut now) = fresh();
        run(&mut a, &config, &mut now, 100, reading(40, 0.0));
        // The queue adds 200 ms: one cut per 240 ms round trip.
        run(&mut a, &config, &mut now, 31, reading(240, 0.0));
        assert_eq!(a.decreases(), 1, "31 ticks are less than two round trips");
        assert!((a.share() - 0.7).abs() < 1e-9);
        run(&mut a, &config, &mut now, 2_000, reading(240, 0.0));
        assert_eq!(a.share(), config.min_share);
        // At the floor a quarter of the ticks send.
        let sent = run(&mut a, &config, &mut now, 400, reading(240, 0.0));
        assert_eq!(sent, 100);
        assert_eq!(a.budget(896), 224);
    }

    #[test]
    fn heavy_loss_sheds_and_a_recovered_link_climbs_back_in_seconds() {
        let (config, mut a, mut now) = fresh();
        run(&mut a, &config, &mut now, 100, reading(40, 0.0));
        run(&mut a, &config, &mut now, 256, reading(40, 0.9));
        assert_eq!(a.share(), config.min_share);
        // 0.75 to climb at 0.5 a second: 1.5 s, 192 ticks.
        run(&mut a, &config, &mut now, 180, reading(40, 0.0));
        assert!(a.share() < 1.0);
        run(&mut a, &config, &mut now, 20, reading(40, 0.0));
        assert_eq!(a.share(), 1.0);
    }

    #[test]
    fn the_least_rtt_is_forgotten_after_two_windows() {
        let config = AdaptConfig {
            min_rtt_window_s: 1.0,
            ..AdaptConfig::default()
        };
        let mut a = LinkAdapter::default();
        let mut now = Instant::now();
        run(&mut a, &config, &mut now, 10, reading(20, 0.0));
        assert_eq!(a.min_rtt(), Some(Duration::from_millis(20)));
        // The path changed: 300 ms from now on. It reads as a queue at
        // first, then becomes the new floor and the share comes back.
        run(&mut a, &config, &mut now, 400, reading(300, 0.0));
        assert_eq!(a.min_rtt(), Some(Duration::from_millis(300)));
        run(&mut a, &config, &mut now, 400, reading(300, 0.0));
        assert_eq!(a.share(), 1.0);
    }

    #[test]
    fn no_reading_before_the_first_ack_moves_nothing() {
        let (config, mut a, mut now) = fresh();
        let guess = LinkReading {
            measured: false,
            ..reading(2_000, 1.0)
        };
        assert_eq!(run(&mut a, &config, &mut now, 100, guess), 100);
        assert_eq!(a.min_rtt(), None);
    }

    #[test]
    fn each_bad_field_is_named() {
        let field = |c: AdaptConfig| match c.validate() {
            Err(e) => e.to_string(),
            Ok(()) => panic!("{c:?} passed"),
        };
        let d = AdaptConfig::default();
        assert!(d.validate().is_ok());
        assert!(field(AdaptConfig { decrease: 1.0, ..d }).contains("adapt.decrease"));
        assert!(
            field(AdaptConfig {
                min_share: 0.0,
                ..d
            })
            .contains("adapt.min_share")
        );
        assert!(
            field(AdaptConfig {
                loss_high: 2.0,
                ..d
            })
            .contains("adapt.loss_high")
        );
        assert!(
            field(AdaptConfig {
                queue_delay_ms: f64::NAN,
                ..d
            })
            .contains("adapt.queue_delay_ms")
        );
    }
}
