//! Checks of clocks, memory and process limits: clock source, timer slack, transparent
//! huge pages, UDP socket buffer limits and open-file limits.

use super::host_files::HostFiles;
use super::{Check, Verdict};

/// Socket buffer ceilings below this can drop a tick's burst of datagrams.
pub(crate) const MIN_SOCKET_BUFFER_BYTES: u64 = 4 * 1024 * 1024;

/// Open-file soft limits below this run out when bots or many matches share a host.
pub(crate) const MIN_OPEN_FILES: u64 = 8192;

/// Timer slack at or below this keeps sleeps to the tick deadline tight.
pub(crate) const MAX_TIGHT_SLACK_NS: u64 = 1_000;

/// How a clock source name is judged.
pub(crate) fn clocksource_verdict(name: &str) -> Verdict {
    match name {
        "tsc" | "arch_sys_counter" => Verdict::Ok,
        "kvm-clock" | "hyperv_clocksource_tsc_page" => Verdict::Info,
        _ => Verdict::Warn,
    }
}

pub(crate) fn clocksource(host: &HostFiles) -> Check {
    const NAME: &str = "clock source";
    const WHY: &str = "every scope and deadline reads the clock; tsc is read in user space in \
                       nanoseconds, hpet or acpi_pm need a slow hardware access per read";
    const DIR: &str = "sys/devices/system/clocksource/clocksource0";
    let Some(current) = host.read(&format!("{DIR}/current_clocksource")) else {
        return Check::new(NAME, Verdict::Info, "not exposed", WHY);
    };
    let available = host
        .read(&format!("{DIR}/available_clocksource"))
        .unwrap_or_default();
    let verdict = clocksource_verdict(&current);
    let value = if available.is_empty() {
        current.clone()
    } else {
        format!("{current} (available: {available})")
    };
    let check = Check::new(NAME, verdict, value, WHY);
    match verdict {
        Verdict::Ok => check,
        _ if available.split_whitespace().any(|s| s == "tsc") => check.advise(
            "switch to tsc: echo tsc > /sys/devices/system/clocksource/clocksource0/current_clocksource",
        ),
        Verdict::Info => check.advise("a paravirtual clock is fast enough; tsc is faster still"),
        _ => check.advise("boot with clocksource=tsc tsc=reliable if the TSC is invariant"),
    }
}

pub(crate) fn timer_slack(host: &HostFiles) -> Check {
    const NAME: &str = "timer slack";
    const WHY: &str = "a sleep until the next tick may end up to the slack late; hightick's \
                       workers lower their own slack, other processes on the host keep this one";
    match host.read_u64("proc/self/timerslack_ns") {
        None => Check::new(NAME, Verdict::Info, "not exposed", WHY),
        Some(ns) if ns <= MAX_TIGHT_SLACK_NS => {
            Check::new(NAME, Verdict::Ok, format!("{ns} ns"), WHY)
        }
        Some(ns) => Check::new(NAME, Verdict::Info, format!("{ns} ns (default)"), WHY),
    }
}

/// The selected word of a sysfs choice such as `always [madvise] never`.
pub(crate) fn selected(choice: &str) -> Option<&str> {
    let start = choice.find('[')? + 1;
    let end = start + choice[start..].find(']')?;
    Some(&choice[start..end])
}

pub(crate) fn huge_pages(host: &HostFiles) -> Check {
    const NAME: &str = "transparent huge pages";
    const WHY: &str = "hightick's allocator asks for huge pages on its heap (MADV_HUGEPAGE): \
                       a tick's scattered per-client state then costs fewer TLB misses, \
                       5-14% of server CPU in a VM (docs/PERFORMANCE.md); never refuses \
                       them, and always lets page faults and khugepaged compaction stall a \
                       tick for milliseconds in any process; madvise gives them to code that \
                       asks";
    const FILE: &str = "sys/kernel/mm/transparent_hugepage/enabled";
    let Some(text) = host.read(FILE) else {
        return Check::new(NAME, Verdict::Info, "not exposed", WHY);
    };
    match selected(&text) {
        Some(mode @ ("always" | "never")) => {
            Check::new(NAME, Verdict::Warn, mode, WHY).advise(format!("echo madvise > /{FILE}"))
        }
        Some(mode) => Check::new(NAME, Verdict::Ok, mode, WHY),
        None => Check::new(NAME, Verdict::Info, format!("unrecognised: {text}"), WHY),
    }
}

pub(crate) fn udp_buffers(host: &HostFiles) -> Check {
    const NAME: &str = "UDP socket buffers";
    const WHY: &str = "one worker socket carries every client of several matches; a burst \
                       larger than the buffer at a tick boundary is dropped by the kernel";
    let rmem = host.read_u64("proc/sys/net/core/rmem_max");
    let wmem = host.read_u64("proc/sys/net/core/wmem_max");
    let (Some(r), Some(w)) = (rmem, wmem) else {
        return Check::new(NAME, Verdict::Info, "not exposed", WHY);
    };
    let value = format!("rmem_max {r}, wmem_max {w}");
    if r.min(w) < MIN_SOCKET_BUFFER_BYTES {
        Check::new(NAME, Verdict::Warn, value, WHY).advise(format!(
            "sysctl -w net.core.rmem_max={m} net.core.wmem_max={m}",
            m = 2 * MIN_SOCKET_BUFFER_BYTES
        ))
    } else {
        Check::new(NAME, Verdict::Ok, value, WHY)
    }
}

/// The soft and hard `Max open files` limits from `/proc/<pid>/limits` text;
/// `u64::MAX` stands for unlimited.
pub(crate) fn open_file_limits(limits: &str) -> Option<(u64, u64)> {
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    let mut words = line["Max open files".len()..].split_whitespace();
    let parse = |w: Option<&str>| match w? {
        "unlimited" => Some(u64::MAX),
        n => n.parse().ok(),
    };
    Some((parse(words.next())?, parse(words.next())?))
}

pub(crate) fn open_files(host: &HostFiles) -> Check {
    const NAME: &str = "open-file limit";
    const WHY: &str = "every bot and every worker holds a socket; a low limit makes large \
                       runs fail to connect rather than run slow";
    let Some((soft, hard)) = host
        .read("proc/self/limits")
        .and_then(|t| open_file_limits(&t))
    else {
        return Check::new(NAME, Verdict::Info, "not exposed", WHY);
    };
    let show = |n: u64| {
        if n == u64::MAX {
            "unlimited".to_string()
        } else {
            n.to_string()
        }
    };
    let value = format!("soft {}, hard {}", show(soft), show(hard));
    if soft < MIN_OPEN_FILES {
        Check::new(NAME, Verdict::Warn, value, WHY).advise(format!(
            "ulimit -n {} (or LimitNOFILE= in the service unit)",
            hard.clamp(MIN_OPEN_FILES, 65_536)
        ))
    } else {
        Check::new(NAME, Verdict::Ok, value, WHY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_sources_are_judged() {
        assert_eq!(clocksource_verdict("tsc"), Verdict::Ok);
        assert_eq!(clocksource_verdict("kvm-clock"), Verdict::Info);
        assert_eq!(clocksource_verdict("hpet"), Verdict::Warn);
        assert_eq!(clocksource_verdict("acpi_pm"), Verdict::Warn);
    }

    #[test]
    fn selected_word_is_found() {
        assert_eq!(selected("always [madvise] never"), Some("madvise"));
        assert_eq!(selected("[always] madvise never"), Some("always"));
        assert_eq!(selected("always madvise"), None);
        assert_eq!(selected("[unclosed"), None);
    }

    #[test]
    fn open_file_limits_parse() {
        let text = "Limit                     Soft Limit           Hard Limit           Units\n\
                    Max open files            1024                 unlimited            files\n";
        assert_eq!(open_file_limits(text), Some((1024, u64::MAX)));
        assert_eq!(open_file_limits("Max open files  x y files"), None);
        assert_eq!(open_file_limits(""), None);
    }
}
