//! Facts and settings of this process and its threads (Linux), in one place
//! for the host, the lab and the command line: timer slack and CPU pinning
//! for tick workers, a lower priority for load generators that share the
//! host with them, the CPUs a process may use, the CPU time a thread or a
//! process has used, and resident memory.

/// Lets the kernel wake this thread at most `ns` nanoseconds after a sleep
/// ends (the default slack is 50 us; tick workers want little).
pub fn set_timer_slack(ns: u64) {
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and affects only
    // the calling thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, ns.max(1) as libc::c_ulong, 0, 0, 0);
    }
}

/// The CPUs this process may run on, in order: the main thread's affinity
/// (a worker already pinned still sees the whole set). Empty if unknown.
pub fn process_cpus() -> Vec<usize> {
    // SAFETY: getpid has no arguments and cannot fail.
    cpus_of(unsafe { libc::getpid() })
}

/// The CPUs this thread may run on, in order.
pub fn thread_cpus() -> Vec<usize> {
    cpus_of(0)
}

/// The affinity of thread `tid` (0: the calling thread).
fn cpus_of(tid: libc::pid_t) -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity writes it for `tid`
    // and CPU_ISSET reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(tid, size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&cpu| libc::CPU_ISSET(cpu, &set))
            .collect()
    }
}

/// Pins this thread to the `core mod n`th of the process's `n` CPUs (so under
/// `taskset -c 4-7`, core 0 is CPU 4). Best effort: returns whether the
/// kernel accepted it.
pub fn pin_to_core(core: usize) -> bool {
    let cpus = process_cpus();
    let Some(&cpu) = cpus.get(core % cpus.len().max(1)) else {
        return false;
    };
    // SAFETY: cpu_set_t is plain data; CPU_ZERO/CPU_SET write inside it and
    // sched_setaffinity reads it for the calling thread (pid 0).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        libc::CPU_SET(cpu, &mut set);
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

/// CPU time this thread has used so far (user and system).
pub fn thread_cpu_time() -> std::time::Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    std::time::Duration::new(
        t.tv_sec.max(0) as u64,
        t.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// CPU seconds (user + system) this process has used, from /proc/self/stat.
pub fn process_cpu_seconds() -> f64 {
    cpu_seconds_of("self").unwrap_or(0.0)
}

/// CPU seconds (user + system) of process `pid` (`"self"` for this one),
/// from /proc/PID/stat; `None` if it cannot be read.
pub fn cpu_seconds_of(pid: &str) -> Option<f64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command (which may hold spaces) start after ") ".
    let rest = &text[text.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line; 12 and 13 after ")".
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    // SAFETY: sysconf only reads a system constant.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    Some((utime + stime) / ticks.max(1) as f64)
}

/// Resident memory of this process, bytes (from /proc/self/statm; 0 if it
/// cannot be read).
pub fn rss_bytes() -> u64 {
    rss_bytes_of("self").unwrap_or(0)
}

/// Resident memory of process `pid` (`"self"` for this one), bytes, from
/// /proc/PID/statm; `None` if it cannot be read.
pub fn rss_bytes_of(pid: &str) -> Option<u64> {
    let pages = std::fs::read_to_string(format!("/proc/{pid}/statm"))
        .ok()?
        .split_whitespace()
        .nth(1)?
        .parse::<u64>()
        .ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * page.max(1) as u64)
}

/// What a long run watches of a process for leaks: memory, open files and
/// threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProcessFacts {
    /// Resident memory, bytes.
    pub rss_bytes: u64,
    /// Open file descriptors (sockets included).
    pub open_files: u64,
    /// Threads.
    pub threads: u64,
}

/// [`ProcessFacts`] of process `pid` (`"self"` for this one), from /proc;
/// `None` if the process is gone or /proc cannot be read.
pub fn process_facts(pid: &str) -> Option<ProcessFacts> {
    let open_files = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count() as u64;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let threads = status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))?
        .trim()
        .parse()
        .ok()?;
    Some(ProcessFacts {
        rss_bytes: rss_bytes_of(pid)?,
        open_files,
        threads,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_memory_files_and_threads() {
        let facts = process_facts("self").unwrap();
        assert!(facts.rss_bytes > 0 && facts.open_files >= 3 && facts.threads >= 1);
        assert!(process_facts("0").is_none());
    }

    #[test]
    fn this_process_has_used_some_cpu() {
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        assert!(x != 1);
        assert!(process_cpu_seconds() > 0.0);
        assert!(cpu_seconds_of("999999999").is_none());
    }

    #[test]
    fn thread_cpu_time_counts_this_threads_work_only() {
        std::thread::spawn(|| {
            let before = thread_cpu_time();
            let start = std::time::Instant::now();
            let mut x = 0u64;
            while start.elapsed() < std::time::Duration::from_millis(50) {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
            }
            let spun = thread_cpu_time() - before;
            assert!(spun > std::time::Duration::ZERO, "{spun:?}");
            // A sleeping thread uses next to none of it.
            let before = thread_cpu_time();
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert!(thread_cpu_time() - before < spun, "sleep counted as work");
        })
        .join()
        .unwrap();
    }

    #[test]
    fn slack_is_set_for_this_thread() {
        std::thread::spawn(|| {
            set_timer_slack(20_000);
            assert_eq!(timer_slack(), 20_000);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn pinning_counts_cores_in_the_process_set_even_from_a_pinned_thread() {
        let cpus = process_cpus();
        assert!(!cpus.is_empty());
        std::thread::spawn(move || {
            // Each pin starts from the previous one's single CPU: the core
            // number must still index the process's whole set.
            for core in (0..2 * cpus.len()).rev() {
                assert!(pin_to_core(core), "core {core}");
                assert_eq!(thread_cpus(), vec![cpus[core % cpus.len()]], "core {core}");
            }
        })
        .join()
        .unwrap();
        assert_eq!(
            process_cpus(),
            thread_cpus(),
            "the test thread is not pinned"
        );
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
