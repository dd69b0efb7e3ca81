//! Per-thread settings (Linux): timer slack and CPU pinning for tick workers,
//! a lower priority for load generators that share the host with them.

/// Lets the kernel wake this thread at most `ns` nanoseconds after a sleep
/// ends (the default slack is 50 us; tick workers want little).
pub fn set_timer_slack(ns: u64) {
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and affects only
    // the calling thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, ns.max(1) as libc::c_ulong, 0, 0, 0);
    }
}

/// Pins this thread to core `core mod cores`. Best effort: returns whether
/// the kernel accepted it.
pub fn pin_to_core(core: usize) -> bool {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // SAFETY: cpu_set_t is plain data; CPU_ZERO/CPU_SET write inside it and
    // sched_setaffinity reads it for the calling thread (pid 0).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        libc::CPU_SET(core % cores, &mut set);
        libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

/// Gives this thread (only) the nice value `nice` (-20..=19; higher yields
/// sooner). Best effort: returns whether the kernel accepted it.
pub fn set_nice(nice: i32) -> bool {
    // SAFETY: gettid has no arguments; setpriority with PRIO_PROCESS and a
    // thread id changes that one thread's nice value (Linux semantics).
    unsafe {
        let tid = libc::gettid();
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice) == 0
    }
}

/// The nice value of this thread.
pub fn nice() -> i32 {
    // SAFETY: as in `set_nice`; getpriority only reads.
    unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) }
}

/// The timer slack of this thread, nanoseconds.
pub fn timer_slack() -> u64 {
    // SAFETY: PR_GET_TIMERSLACK takes no argument and returns the slack.
    let slack = unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) };
    slack.max(0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slack_is_set_for_this_thread() {
        std::thread::spawn(|| {
            set_timer_slack(20_000);
            assert_eq!(timer_slack(), 20_000);
            assert!(pin_to_core(0));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn nice_is_set_for_this_thread_only() {
        let before = nice();
        // Nice values stop at 19: under a heavily niced test runner, +5 would be clamped.
        let lower = (before + 5).min(19);
        std::thread::spawn(move || {
            assert!(set_nice(lower));
            assert_eq!(nice(), lower);
        })
        .join()
        .unwrap();
        assert_eq!(nice(), before, "the calling thread keeps its own");
    }
}
