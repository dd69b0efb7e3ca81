//! Checks of CPU topology and power management: NUMA, SMT, frequency governor,
//! idle states and the scheduler's migration cost.

use super::host_files::{HostFiles, parse_cpu_list};
use super::{Check, Verdict};

const CPU_DIR: &str = "sys/devices/system/cpu";
const NODE_DIR: &str = "sys/devices/system/node";

/// Idle states whose exit latency is at least this are "deep" (C3 and below).
pub(crate) const DEEP_CSTATE_LATENCY_US: u64 = 20;

/// Migration costs below the kernel default (0.5 ms) let tasks bounce between cores.
pub(crate) const MIN_MIGRATION_COST_NS: u64 = 500_000;

fn cpus(host: &HostFiles) -> Vec<(u32, String)> {
    host.numbered(CPU_DIR, "cpu")
}

/// A short CPU list such as `0-3,8`, the inverse of the kernel's format.
fn cpu_list_text(cpus: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

pub(crate) fn numa(host: &HostFiles) -> Check {
    const NAME: &str = "NUMA nodes";
    const WHY: &str = "a match whose memory sits on another node pays the interconnect on \
                       every cache miss; instances bound to one node keep ticks local";
    let nodes: Vec<(u32, Vec<u32>)> = host
        .numbered(NODE_DIR, "node")
        .into_iter()
        .map(|(n, name)| {
            let cpus = host
                .read(&format!("{NODE_DIR}/{name}/cpulist"))
                .and_then(|t| parse_cpu_list(&t))
                .unwrap_or_default();
            (n, cpus)
        })
        .collect();
    let described = nodes
        .iter()
        .map(|(n, cpus)| format!("node{n}: cpus {}", cpu_list_text(cpus)))
        .collect::<Vec<_>>()
        .join("; ");
    match nodes.len() {
        0 => Check::new(NAME, Verdict::Info, "not exposed (treat as one node)", WHY),
        1 => Check::new(NAME, Verdict::Ok, format!("1 node ({described})"), WHY),
        n => Check::new(NAME, Verdict::Info, format!("{n} nodes ({described})"), WHY).advise(
            format!(
                "run one server instance per node, instance i on node i mod {n}: \
                 numactl --cpunodebind=<i mod {n}> --membind=<i mod {n}> hightick serve ..."
            ),
        ),
    }
}

pub(crate) fn smt(host: &HostFiles) -> Check {
    const NAME: &str = "SMT siblings";
    const WHY: &str = "hyper-thread siblings share execution units and L1/L2: a busy sibling \
                       can stretch a tick; one tick worker per physical core is steadier";
    let active = host.read_u64(&format!("{CPU_DIR}/smt/active"));
    let widest = cpus(host)
        .iter()
        .filter_map(|(_, name)| {
            host.read(&format!("{CPU_DIR}/{name}/topology/thread_siblings_list"))
                .and_then(|t| parse_cpu_list(&t))
        })
        .fold(None, |widest: Option<Vec<u32>>, list| match widest {
            Some(w) if w.len() >= list.len() => Some(w),
            _ => Some(list),
        });
    let per_core = widest.as_ref().map_or(0, Vec::len);
    match (active, per_core) {
        (Some(1), _) | (_, 2..) => {
            let siblings = widest
                .filter(|w| w.len() > 1)
                .map(|w| {
                    format!(
                        ", {} threads per core (siblings {})",
                        w.len(),
                        cpu_list_text(&w)
                    )
                })
                .unwrap_or_default();
            Check::new(NAME, Verdict::Warn, format!("on{siblings}"), WHY).advise(
                "pin tick workers to one thread per physical core (server pinning), \
                 or turn SMT off for dedicated game hosts",
            )
        }
        (Some(_), _) | (None, 1) => Check::new(NAME, Verdict::Ok, "off", WHY),
        (None, _) => Check::new(NAME, Verdict::Info, "not exposed", WHY),
    }
}

pub(crate) fn governor(host: &HostFiles) -> Check {
    const NAME: &str = "CPU frequency governor";
    const WHY: &str = "a power-saving governor lowers the clock between ticks and ramps up \
                       too late, so short bursty ticks run slow";
    let mut seen: Vec<(String, Vec<u32>)> = Vec::new();
    for (n, name) in cpus(host) {
        if let Some(g) = host.read(&format!("{CPU_DIR}/{name}/cpufreq/scaling_governor")) {
            match seen.iter_mut().find(|(known, _)| *known == g) {
                Some((_, list)) => list.push(n),
                None => seen.push((g, vec![n])),
            }
        }
    }
    if seen.is_empty() {
        return Check::new(NAME, Verdict::Info, "no cpufreq (VM or fixed clock)", WHY);
    }
    let value = seen
        .iter()
        .map(|(g, list)| format!("{g} (cpus {})", cpu_list_text(list)))
        .collect::<Vec<_>>()
        .join(", ");
    if seen.iter().all(|(g, _)| g == "performance") {
        Check::new(NAME, Verdict::Ok, value, WHY)
    } else {
        Check::new(NAME, Verdict::Warn, value, WHY).advise("cpupower frequency-set -g performance")
    }
}

/// One enabled idle state: name and exit latency.
struct IdleState {
    name: String,
    latency_us: u64,
}

pub(crate) fn cstates(host: &HostFiles) -> Check {
    const NAME: &str = "cpuidle states";
    const WHY: &str = "waking from a deep C-state takes tens to hundreds of microseconds, \
                       added to the first tick after every idle gap";
    let mut enabled: Vec<IdleState> = Vec::new();
    let mut any = false;
    for (_, cpu) in cpus(host) {
        let dir = format!("{CPU_DIR}/{cpu}/cpuidle");
        for (_, state) in host.numbered(&dir, "state") {
            let base = format!("{dir}/{state}");
            let Some(name) = host.read(&format!("{base}/name")) else {
                continue;
            };
            any = true;
            let disabled = host.read_u64(&format!("{base}/disable")).unwrap_or(0) != 0;
            let latency_us = host.read_u64(&format!("{base}/latency")).unwrap_or(0);
            if !disabled && !enabled.iter().any(|s| s.name == name) {
                enabled.push(IdleState { name, latency_us });
            }
        }
    }
    if !any {
        return halting_idle(host, NAME, WHY);
    }
    let value = if enabled.is_empty() {
        "all disabled".to_string()
    } else {
        let list = enabled
            .iter()
            .map(|s| format!("{} ({} us)", s.name, s.latency_us))
            .collect::<Vec<_>>()
            .join(", ");
        format!("enabled: {list}")
    };
    let deepest = enabled.iter().map(|s| s.latency_us).max().unwrap_or(0);
    if deepest >= DEEP_CSTATE_LATENCY_US {
        Check::new(NAME, Verdict::Warn, value, WHY).advise(format!(
            "disable states with exit latency >= {DEEP_CSTATE_LATENCY_US} us \
             (cpupower idle-set -D {DEEP_CSTATE_LATENCY_US}) or boot with intel_idle.max_cstate=1"
        ))
    } else {
        Check::new(NAME, Verdict::Ok, value, WHY)
    }
}

/// No idle states listed: with cpuidle driver `none` an idle CPU just halts,
/// which in a VM hands the vCPU back to the hypervisor until the next timer.
fn halting_idle(host: &HostFiles, name: &str, why: &str) -> Check {
    let driver = host.read(&format!("{CPU_DIR}/cpuidle/current_driver"));
    if driver.as_deref() != Some("none") {
        return Check::new(name, Verdict::Info, "not exposed (no cpuidle driver)", why);
    }
    let check = Check::new(
        name,
        Verdict::Info,
        "none: an idle CPU halts (cpuidle driver none)",
        "a halted vCPU goes back to the hypervisor, and the tick that wakes it starts on a cold \
         core: on a 2-vCPU Firecracker guest, keeping both vCPUs from halting cut the server's \
         CPU per match tick by 20-30% (docs/PERFORMANCE.md)",
    );
    if host
        .read("sys/module/cpuidle_haltpoll/parameters/force")
        .is_some()
    {
        check.advise(
            "this kernel has guest halt polling: boot with cpuidle_haltpoll.force=1 so an idle \
             vCPU polls up to guest_halt_poll_ns (haltpoll governor) before it halts; polling \
             costs a busy vCPU, so size it to the gap between ticks",
        )
    } else {
        check
    }
}

pub(crate) fn migration_cost(host: &HostFiles) -> Check {
    const NAME: &str = "sched migration cost";
    const WHY: &str = "below it the scheduler treats a task's cache as cold and moves it more \
                       freely; a tick worker moved between cores refills its caches";
    let found = [
        "proc/sys/kernel/sched_migration_cost_ns",
        "sys/kernel/debug/sched/migration_cost_ns",
    ]
    .iter()
    .find_map(|p| host.read_u64(p));
    match found {
        None => Check::new(NAME, Verdict::Info, "not exposed", WHY),
        Some(ns) if ns < MIN_MIGRATION_COST_NS => {
            Check::new(NAME, Verdict::Warn, format!("{ns} ns"), WHY).advise(format!(
                "raise it to at least {MIN_MIGRATION_COST_NS} ns, or pin tick workers"
            ))
        }
        Some(ns) => Check::new(NAME, Verdict::Ok, format!("{ns} ns"), WHY),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_list_text_joins_runs() {
        assert_eq!(cpu_list_text(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
        assert_eq!(cpu_list_text(&[]), "");
        assert_eq!(cpu_list_text(&[5]), "5");
    }
}
