//! What the emulator did to each direction ([`DirectionCounters`], kept as
//! it runs) and its report ([`DirectionReport`]: counts, drops by reason,
//! and the delays it decided, in microseconds).

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::lane::{Decision, DropReason};

/// Counters of one direction, over every flow.
#[derive(Debug, Clone)]
pub struct DirectionCounters {
    datagrams: u64,
    bytes: u64,
    delivered: u64,
    duplicated: u64,
    dropped: [u64; DropReason::ALL.len()],
    overflow: u64,
    /// Decided delay of each delivered datagram, microseconds.
    delay_us: Histogram<u64>,
}

impl Default for DirectionCounters {
    fn default() -> Self {
        Self {
            datagrams: 0,
            bytes: 0,
            delivered: 0,
            duplicated: 0,
            dropped: [0; DropReason::ALL.len()],
            overflow: 0,
            // 1 us .. 10 min, 3 significant figures.
            delay_us: Histogram::new_with_bounds(1, 600_000_000, 3)
                .expect("constant histogram bounds are valid"),
        }
    }
}

impl DirectionCounters {
    /// Counts a datagram of `len` bytes and `decision`, taken `delay_us`
    /// after it was sent (for a delivered one).
    pub fn count(&mut self, len: usize, decision: &Decision, delay_us: u64) {
        self.datagrams += 1;
        self.bytes += len as u64;
        match decision {
            Decision::Deliver { duplicate_at, .. } => {
                self.delivered += 1;
                self.duplicated += u64::from(duplicate_at.is_some());
                self.delay_us.saturating_record(delay_us.max(1));
            }
            Decision::Drop(reason) => self.dropped[*reason as usize] += 1,
        }
    }

    /// Counts a datagram the emulator could not hold (its delay line full,
    /// or longer than any datagram it holds).
    pub fn count_overflow(&mut self) {
        self.overflow += 1;
    }

    /// Datagrams seen.
    pub fn datagrams(&self) -> u64 {
        self.datagrams
    }

    /// The report of these counters.
    pub fn report(&self) -> DirectionReport {
        let h = &self.delay_us;
        let q = |q: f64| {
            if h.is_empty() {
                0.0
            } else {
                h.value_at_quantile(q) as f64
            }
        };
        DirectionReport {
            datagrams: self.datagrams,
            bytes: self.bytes,
            delivered: self.delivered,
            duplicated: self.duplicated,
            dropped: DropReason::ALL
                .iter()
                .map(|r| (r.name().to_owned(), self.dropped[*r as usize]))
                .collect(),
            overflow: self.overflow,
            delay_min_us: if h.is_empty() { 0.0 } else { h.min() as f64 },
            delay_mean_us: if h.is_empty() { 0.0 } else { h.mean() },
            delay_p50_us: q(0.5),
            delay_p99_us: q(0.99),
            delay_max_us: if h.is_empty() { 0.0 } else { h.max() as f64 },
        }
    }
}

/// What the emulator did to one direction.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DirectionReport {
    /// Datagrams that came in.
    pub datagrams: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Datagrams delivered (duplicates not counted).
    pub delivered: u64,
    /// Datagrams delivered twice.
    pub duplicated: u64,
    /// Datagrams dropped, by reason (`outage`, `loss`, `burst`, `queue_full`).
    pub dropped: Vec<(String, u64)>,
    /// Datagrams the emulator itself could not hold (delay line full, or
    /// too long).
    pub overflow: u64,
    /// Shortest decided delay, microseconds.
    pub delay_min_us: f64,
    /// Mean decided delay, microseconds.
    pub delay_mean_us: f64,
    /// Median decided delay, microseconds.
    pub delay_p50_us: f64,
    /// 99th percentile decided delay, microseconds.
    pub delay_p99_us: f64,
    /// Longest decided delay, microseconds.
    pub delay_max_us: f64,
}

impl DirectionReport {
    /// Datagrams dropped for any reason (and overflow).
    pub fn dropped_total(&self) -> u64 {
        self.dropped.iter().map(|(_, n)| n).sum::<u64>() + self.overflow
    }

    /// The share of datagrams that did not arrive.
    pub fn loss(&self) -> f64 {
        if self.datagrams == 0 {
            0.0
        } else {
            self.dropped_total() as f64 / self.datagrams as f64
        }
    }
}
