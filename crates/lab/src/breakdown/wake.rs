//! What one wake-up costs a tick thread: a thread that sleeps to the next
//! deadline at the tick rate, as a host worker does between its ticks
//! (`std::thread::sleep`, the host's default timer slack of 50 us), and
//! does nothing else. Its CPU time (`CLOCK_THREAD_CPUTIME_ID`) per wake-up
//! is the figure: entering the sleep, the switch away, being woken and
//! switched back in, the return to user space.
//!
//! What the kernel does on the thread's behalf in interrupt context (the
//! timer firing, the wake-up itself) is charged to whatever ran on that
//! CPU then, often the idle task, so this is the thread's share, a lower
//! bound of the whole cost; the live server's wake-ups may also cost it
//! caches, which the sans-IO cold tick counts.

use std::time::{Duration, Instant};

use hightick_process::{set_timer_slack, thread_cpu_time};

use crate::error::LabError;

/// The host's default timer slack (`timer_slack_us` of its config).
pub const TIMER_SLACK_NS: u64 = 50_000;

/// What the wake-up measurement found.
#[derive(Debug, Clone, PartialEq)]
pub struct WakeRun {
    /// Thread CPU per wake-up in each round, microseconds.
    pub round_cpu_us: Vec<f64>,
    /// Median lateness of a wake-up past its deadline, microseconds (wall).
    pub median_late_us: f64,
}

/// Sleeps `rounds` rounds of `wakes_per_round` periods of `1 / rate_hz` on
/// a thread of its own and returns its CPU per wake-up.
pub fn measure(rate_hz: u32, rounds: u32, wakes_per_round: u32) -> Result<WakeRun, LabError> {
    if rate_hz == 0 || rounds == 0 || wakes_per_round == 0 {
        return Err(LabError::config(
            "wake",
            "a rate, rounds and wake-ups of at least 1",
        ));
    }
    let period = Duration::from_secs(1) / rate_hz;
    let sleeper = std::thread::Builder::new()
        .name("breakdown-wake".into())
        .spawn(move || {
            set_timer_slack(TIMER_SLACK_NS);
            let mut round_cpu_us = Vec::with_capacity(rounds as usize);
            let mut late_ns = Vec::with_capacity((rounds * wakes_per_round) as usize);
            let mut deadline = Instant::now() + period;
            for _ in 0..rounds {
                let cpu = thread_cpu_time();
                for _ in 0..wakes_per_round {
                    let now = Instant::now();
                    if deadline > now {
                        std::thread::sleep(deadline - now);
                    }
                    late_ns.push(
                        Instant::now()
                            .saturating_duration_since(deadline)
                            .as_nanos(),
                    );
                    deadline += period;
                }
                let spent = thread_cpu_time().saturating_sub(cpu);
                round_cpu_us.push(spent.as_secs_f64() * 1e6 / f64::from(wakes_per_round));
            }
            late_ns.sort_unstable();
            WakeRun {
                round_cpu_us,
                median_late_us: late_ns[late_ns.len() / 2] as f64 / 1e3,
            }
        })
        .map_err(LabError::io("starting the wake-up thread"))?;
    sleeper
        .join()
        .map_err(|_| LabError::Breakdown("the wake-up thread panicked".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_round_gives_a_cost() {
        let run = measure(1000, 3, 5).unwrap();
        assert_eq!(run.round_cpu_us.len(), 3);
        assert!(
            run.round_cpu_us
                .iter()
                .all(|us| us.is_finite() && *us >= 0.0)
        );
        assert!(measure(128, 0, 5).is_err());
    }
}
