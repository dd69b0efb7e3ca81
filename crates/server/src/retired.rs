//! [`Retired`]: the frame statistics and late starts of the matches a
//! worker retired since the last stats reset, one entry per mode, so the
//! host's totals (`GET /v1/stats`: ticks, late starts, tick times) keep
//! counting a match after it ends instead of dropping its share.
//!
//! What it holds does not grow with the matches retired: one merged
//! [`FrameStats`] per mode the worker has hosted.

use hightick_telemetry::FrameStats;

/// One mode's retired matches, merged.
#[derive(Debug, Clone)]
pub(crate) struct RetiredMode {
    pub mode: &'static str,
    pub stats: FrameStats,
    pub late_starts: u64,
}

/// See the [module docs](self).
#[derive(Debug, Default)]
pub(crate) struct Retired {
    modes: Vec<RetiredMode>,
}

impl Retired {
    /// Adds a retired match of `mode`: its statistics and late starts.
    pub(crate) fn add(&mut self, mode: &'static str, stats: &FrameStats, late_starts: u64) {
        match self.modes.iter_mut().find(|r| r.mode == mode) {
            Some(r) => {
                // Same recorder configuration everywhere: merging cannot
                // fail short of a bug, and a bug here must not take the
                // host down.
                let _ = r.stats.merge(stats);
                r.late_starts += late_starts;
            }
            None => self.modes.push(RetiredMode {
                mode,
                stats: stats.clone(),
                late_starts,
            }),
        }
    }

    /// Forgets them (a stats reset).
    pub(crate) fn clear(&mut self) {
        self.modes.clear();
    }

    /// Each mode's retired matches, merged.
    pub(crate) fn modes(&self) -> &[RetiredMode] {
        &self.modes
    }
}
