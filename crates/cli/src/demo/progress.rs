//! A progress bar for one load run: warm-up, then the measured window, with bots
//! connected, server CPU, tick p99 and the events each player got.

use hightick_lab::{Phase, Progress};
use indicatif::{ProgressBar, ProgressStyle};

/// The bar of one run; cleared when finished.
#[derive(Debug)]
pub(crate) struct RunBar {
    bar: ProgressBar,
    label: String,
}

impl RunBar {
    /// A bar labelled `label` (may be empty).
    pub(crate) fn new(label: impl Into<String>) -> Self {
        let bar = ProgressBar::new(1);
        bar.set_style(
            ProgressStyle::with_template("{elapsed:>4} [{bar:30}] {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        Self {
            bar,
            label: label.into(),
        }
    }

    /// Shows a progress sample.
    pub(crate) fn update(&self, p: &Progress) {
        self.bar.set_length(p.total.as_secs().max(1));
        self.bar.set_position(p.elapsed.as_secs());
        let phase = match p.phase {
            Phase::WarmingUp => "warming up",
            Phase::Measuring => "measuring",
        };
        let label = if self.label.is_empty() {
            String::new()
        } else {
            format!("{}: ", self.label)
        };
        self.bar.set_message(format!(
            "{label}{phase} {}/{} bots, server {:.2} cores, tick p99 {:.0} us, events {}",
            p.connected, p.bots, p.server_cpu_cores, p.tick_p99_us, p.events
        ));
    }

    /// Prints `line` on standard error above the bar (also when the bar is
    /// hidden, as it is when standard error is not a terminal).
    pub(crate) fn print_above(&self, line: &str) {
        self.bar.suspend(|| eprintln!("{line}"));
    }

    /// Clears the bar.
    pub(crate) fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
