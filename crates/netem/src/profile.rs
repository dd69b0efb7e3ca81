//! What a link does to datagrams, per direction ([`DirectionProfile`]), and
//! the built-in links `lan`, `wifi`, `mobile` and `bad` ([`LinkProfile::builtin`]).
//!
//! The figures of the built-ins are round trips split evenly over the two
//! directions: `wifi` is 30 ms ± 10 of round trip, so 15 ms ± 5 each way.
//! Loss is per direction.

use std::time::Duration;

use serde::Serialize;

use crate::error::NetemError;

/// Which way a datagram goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Client to server.
    Up,
    /// Server to client.
    Down,
}

/// The built-in link names, in order of how bad they are.
pub const BUILTIN: [&str; 4] = ["lan", "wifi", "mobile", "bad"];

/// Gilbert–Elliott loss: a two-state chain stepped once per datagram, each
/// state losing datagrams at its own rate. Long-run loss is
/// `(enter * loss_bad + leave * loss_good) / (enter + leave)`; a bad spell
/// lasts `1 / leave` datagrams on average.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GilbertElliott {
    /// Chance per datagram of going from the good state to the bad one.
    pub enter: f64,
    /// Chance per datagram of going from the bad state back to the good one.
    pub leave: f64,
    /// Loss in the bad state.
    pub loss_bad: f64,
    /// Loss in the good state.
    pub loss_good: f64,
}

impl GilbertElliott {
    /// The simple Gilbert model with long-run loss `loss` in spells of
    /// `mean_burst` datagrams on average (everything lost in the bad state,
    /// nothing in the good one).
    pub fn bursts(loss: f64, mean_burst: f64) -> Self {
        let leave = 1.0 / mean_burst.max(1.0);
        let loss = loss.clamp(0.0, 0.999);
        Self {
            enter: leave * loss / (1.0 - loss),
            leave,
            loss_bad: 1.0,
            loss_good: 0.0,
        }
    }

    /// The long-run share of datagrams lost.
    pub fn mean_loss(&self) -> f64 {
        let total = self.enter + self.leave;
        if total <= 0.0 {
            return self.loss_good;
        }
        (self.enter * self.loss_bad + self.leave * self.loss_good) / total
    }
}

/// A bandwidth cap: the link sends `bytes_per_s` and holds at most
/// `queue_bytes` waiting to be sent; a datagram that would overflow the queue
/// is dropped (tail drop).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RateLimit {
    /// Bytes the link sends per second.
    pub bytes_per_s: u64,
    /// Bytes that may wait to be sent.
    pub queue_bytes: u64,
}

/// Scheduled outages: every `every`, the link drops everything for `length`.
/// The first starts `first_after` after the flow's first datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Outage {
    /// Time from the start of one outage to the start of the next.
    pub every: Duration,
    /// How long each outage lasts.
    pub length: Duration,
    /// Time from the flow's first datagram to the first outage.
    pub first_after: Duration,
}

impl Outage {
    /// Whether `since_start` (time since the flow's first datagram) falls in
    /// an outage.
    pub fn covers(&self, since_start: Duration) -> bool {
        let Some(into) = since_start.checked_sub(self.first_after) else {
            return false;
        };
        let every = self.every.as_nanos().max(1);
        into.as_nanos() % every < self.length.as_nanos()
    }
}

/// What one direction of a link does to each datagram, in the order the
/// decisions are taken: an outage drops it; loss (random, then bursty) drops
/// it; the bandwidth cap queues it or drops it when the queue is full;
/// latency plus jitter delays it, keeping order (jitter is queueing, not
/// reordering); a few are held back further (reordering) or sent twice.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DirectionProfile {
    /// Base one-way delay.
    pub latency: Duration,
    /// Each datagram's delay is `latency` plus or minus up to this (uniform),
    /// but never before the datagram sent ahead of it.
    pub jitter: Duration,
    /// Independent random loss, 0 to 1.
    pub loss: f64,
    /// Bursty loss on top of `loss`.
    pub bursts: Option<GilbertElliott>,
    /// Share of datagrams held back by `reorder_delay`, so later ones
    /// overtake them, 0 to 1.
    pub reorder: f64,
    /// How much longer a reordered datagram takes.
    pub reorder_delay: Duration,
    /// Share of datagrams delivered twice, 0 to 1.
    pub duplicate: f64,
    /// A bandwidth cap with its queue.
    pub rate: Option<RateLimit>,
    /// Scheduled outages.
    pub outage: Option<Outage>,
}

impl DirectionProfile {
    /// A perfect direction: no delay, no loss.
    pub const PERFECT: Self = Self {
        latency: Duration::ZERO,
        jitter: Duration::ZERO,
        loss: 0.0,
        bursts: None,
        reorder: 0.0,
        reorder_delay: Duration::ZERO,
        duplicate: 0.0,
        rate: None,
        outage: None,
    };

    /// The long-run share of datagrams lost to random and bursty loss
    /// (outages and tail drops not counted).
    pub fn mean_loss(&self) -> f64 {
        let bursty = self.bursts.map_or(0.0, |b| b.mean_loss());
        1.0 - (1.0 - self.loss) * (1.0 - bursty)
    }

    /// The shortest delay this direction gives a datagram that waits in no
    /// queue.
    pub fn min_delay(&self) -> Duration {
        self.latency.saturating_sub(self.jitter)
    }

    /// Checks every field; `path` prefixes the field names (`up`, `down`).
    pub fn validate(&self, path: &str) -> Result<(), NetemError> {
        let field = |name: &str| format!("{path}.{name}");
        let share = |name: &str, v: f64| {
            if (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                Err(NetemError::invalid(field(name), "must be in 0..=1"))
            }
        };
        let most = Duration::from_secs(60);
        if self.latency > most {
            return Err(NetemError::invalid(field("latency_ms"), "at most 60000"));
        }
        if self.jitter > most {
            return Err(NetemError::invalid(field("jitter_ms"), "at most 60000"));
        }
        if self.reorder_delay > most {
            return Err(NetemError::invalid(
                field("reorder_delay_ms"),
                "at most 60000",
            ));
        }
        share("loss", self.loss)?;
        share("reorder", self.reorder)?;
        share("duplicate", self.duplicate)?;
        if let Some(b) = &self.bursts {
            share("bursts.enter", b.enter)?;
            share("bursts.leave", b.leave)?;
            share("bursts.loss_bad", b.loss_bad)?;
            share("bursts.loss_good", b.loss_good)?;
            if b.leave <= 0.0 {
                return Err(NetemError::invalid(
                    field("bursts.leave"),
                    "must be above 0 (a bad spell must end)",
                ));
            }
        }
        if let Some(r) = &self.rate {
            if !(1_000..=10_000_000_000).contains(&r.bytes_per_s) {
                return Err(NetemError::invalid(
                    field("rate_bytes_per_s"),
                    "must be in 1000..=10000000000",
                ));
            }
            if !(1_500..=1 << 30).contains(&r.queue_bytes) {
                return Err(NetemError::invalid(
                    field("queue_bytes"),
                    "must be in 1500..=1073741824 (at least one datagram)",
                ));
            }
        }
        if let Some(o) = &self.outage {
            if o.every.is_zero() || o.every > Duration::from_secs(86_400) {
                return Err(NetemError::invalid(
                    field("outage.every_s"),
                    "must be above 0 and at most 86400",
                ));
            }
            if o.length >= o.every {
                return Err(NetemError::invalid(
                    field("outage.length_s"),
                    "must be shorter than every_s",
                ));
            }
            if o.first_after > Duration::from_secs(86_400) {
                return Err(NetemError::invalid(
                    field("outage.first_after_s"),
                    "at most 86400",
                ));
            }
        }
        Ok(())
    }
}

/// Both directions of a link: `up` is client to server, `down` server to
/// client.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkProfile {
    /// A name for reports (`mobile`, or the file's).
    pub name: String,
    /// Client to server.
    pub up: DirectionProfile,
    /// Server to client.
    pub down: DirectionProfile,
}

impl LinkProfile {
    /// The built-in link called `name` (one of [`BUILTIN`]):
    ///
    /// | link | round trip | loss each way | cap each way | outages |
    /// |---|---|---|---|---|
    /// | `lan` | 0.5 ms | 0 | none | none |
    /// | `wifi` | 30 ms ± 10 | 1% random | none | none |
    /// | `mobile` | 80 ms ± 30 | 3% in bursts of 3 on average | 2 Mbit/s, 64 KiB queue | none |
    /// | `bad` | 150 ms ± 50 | 8% in bursts of 2 on average | 1 Mbit/s, 64 KiB queue | 1 s every 30 s, the first 10 s in |
    ///
    /// The round trips and losses are the ones issue 20 proposed; the
    /// burst lengths, the caps and the queues are this crate's choice.
    pub fn builtin(name: &str) -> Result<Self, NetemError> {
        let ms = Duration::from_millis;
        let us = Duration::from_micros;
        let (up, down) = match name {
            "lan" => {
                let d = DirectionProfile {
                    latency: us(250),
                    ..DirectionProfile::PERFECT
                };
                (d.clone(), d)
            }
            "wifi" => {
                let d = DirectionProfile {
                    latency: ms(15),
                    jitter: ms(5),
                    loss: 0.01,
                    ..DirectionProfile::PERFECT
                };
                (d.clone(), d)
            }
            "mobile" => {
                let d = DirectionProfile {
                    latency: ms(40),
                    jitter: ms(15),
                    bursts: Some(GilbertElliott::bursts(0.03, 3.0)),
                    rate: Some(RateLimit {
                        bytes_per_s: 250_000,
                        queue_bytes: 64 * 1024,
                    }),
                    ..DirectionProfile::PERFECT
                };
                (d.clone(), d)
            }
            "bad" => {
                let d = DirectionProfile {
                    latency: ms(75),
                    jitter: ms(25),
                    bursts: Some(GilbertElliott::bursts(0.08, 2.0)),
                    rate: Some(RateLimit {
                        bytes_per_s: 125_000,
                        queue_bytes: 64 * 1024,
                    }),
                    outage: Some(Outage {
                        every: Duration::from_secs(30),
                        length: Duration::from_secs(1),
                        first_after: Duration::from_secs(10),
                    }),
                    ..DirectionProfile::PERFECT
                };
                (d.clone(), d)
            }
            other => return Err(NetemError::UnknownLink(other.to_owned())),
        };
        Ok(Self {
            name: name.to_owned(),
            up,
            down,
        })
    }

    /// Checks both directions, naming the first field at fault.
    pub fn validate(&self) -> Result<(), NetemError> {
        self.up.validate("up")?;
        self.down.validate("down")
    }

    /// The direction `direction`.
    pub fn direction(&self, direction: Direction) -> &DirectionProfile {
        match direction {
            Direction::Up => &self.up,
            Direction::Down => &self.down,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_are_valid_and_their_loss_is_what_they_say() {
        for name in BUILTIN {
            let link = LinkProfile::builtin(name).unwrap();
            link.validate().unwrap();
            assert_eq!(link.name, name);
        }
        let mobile = LinkProfile::builtin("mobile").unwrap();
        assert!((mobile.down.mean_loss() - 0.03).abs() < 1e-9);
        let bad = LinkProfile::builtin("bad").unwrap();
        assert!((bad.up.mean_loss() - 0.08).abs() < 1e-9);
        assert_eq!(bad.up.min_delay(), Duration::from_millis(50));
        let err = LinkProfile::builtin("dialup").unwrap_err().to_string();
        assert!(err.contains("lan, wifi, mobile, bad"), "{err}");
    }

    #[test]
    fn outages_repeat_from_their_first() {
        let o = Outage {
            every: Duration::from_secs(30),
            length: Duration::from_secs(1),
            first_after: Duration::from_secs(10),
        };
        let s = Duration::from_millis;
        assert!(!o.covers(s(9_999)));
        assert!(o.covers(s(10_000)));
        assert!(o.covers(s(10_999)));
        assert!(!o.covers(s(11_000)));
        assert!(o.covers(s(40_500)));
        assert!(!o.covers(s(39_000)));
    }

    #[test]
    fn validation_names_the_direction_and_field() {
        let mut link = LinkProfile::builtin("wifi").unwrap();
        link.down.loss = 1.5;
        let err = link.validate().unwrap_err().to_string();
        assert!(err.contains("down.loss"), "{err}");
        let mut link = LinkProfile::builtin("bad").unwrap();
        if let Some(o) = &mut link.up.outage {
            o.length = o.every;
        }
        let err = link.validate().unwrap_err().to_string();
        assert!(err.contains("up.outage.length_s"), "{err}");
    }
}
