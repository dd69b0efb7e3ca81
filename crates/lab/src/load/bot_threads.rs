//! [`BotThreads`]: the CPU time of the match bots' runtime threads, read
//! from each thread's CPU clock, so a run can say what its bots cost
//! (`swarm_match_bots_per_core`) apart from the rest of the lab process.

use std::sync::Arc;

use parking_lot::Mutex;

/// The CPU clocks of the threads that registered (the bots' runtime
/// registers each worker as it starts).
#[derive(Debug, Clone, Default)]
pub(crate) struct BotThreads {
    clocks: Arc<Mutex<Vec<libc::clockid_t>>>,
}

impl BotThreads {
    /// Adds the calling thread.
    pub(crate) fn register(&self) {
        let mut clock: libc::clockid_t = 0;
        // SAFETY: `clock` is writable and pthread_self() is this live thread.
        if unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut clock) } == 0 {
            self.clocks.lock().push(clock);
        }
    }

    /// CPU seconds the registered threads have used (a thread that ended
    /// no longer counts: read while they run).
    pub(crate) fn cpu_seconds(&self) -> f64 {
        self.clocks
            .lock()
            .iter()
            .map(|&clock| {
                let mut t = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                };
                // SAFETY: `t` is writable; a stale clock id fails and reads 0.
                if unsafe { libc::clock_gettime(clock, &mut t) } == 0 {
                    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
                } else {
                    0.0
                }
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registered_thread_that_spins_is_counted() {
        let threads = BotThreads::default();
        let registered = threads.clone();
        let (ready, wait) = std::sync::mpsc::channel();
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let spinner = std::thread::spawn(move || {
            registered.register();
            let start = std::time::Instant::now();
            let mut x = 0u64;
            while start.elapsed() < std::time::Duration::from_millis(50) {
                x = x.wrapping_add(std::hint::black_box(1));
            }
            ready.send(x).unwrap();
            let _ = stopped.recv();
        });
        wait.recv().unwrap();
        // At least some of the 50 ms of spinning, and never this thread's.
        assert!(threads.cpu_seconds() > 0.005, "{}", threads.cpu_seconds());
        stop.send(()).unwrap();
        spinner.join().unwrap();
    }
}
