//! Noisy neighbours: the processes whose context switches rise fastest during a short
//! sample. Each switch is a wake-up that can take a core from a tick worker.

use std::path::Path;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::host_files::HostFiles;
use super::{Check, Verdict};

/// A process switching more often than this per second is flagged.
pub(super) const NOISY_SWITCHES_PER_S: f64 = 1_000.0;

/// How many of the busiest processes the check names.
const SHOWN: usize = 3;

/// Context switches of one process (all its threads) at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskSwitches {
    /// Process id.
    pub pid: u32,
    /// Command name from `/proc/<pid>/status`.
    pub name: String,
    /// Voluntary plus involuntary context switches so far.
    pub switches: u64,
}

/// A process and how often it switched during the sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Neighbour {
    /// Process id.
    pub pid: u32,
    /// Command name.
    pub name: String,
    /// Context switches per second during the sample.
    pub switches_per_s: f64,
}

/// Name and switch count from the text of a `/proc/<pid>/status` file.
fn parse_status(text: &str) -> Option<(String, u64)> {
    let mut name = None;
    let mut switches: Option<u64> = None;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match key {
            "Name" => name = Some(value.to_string()),
            "voluntary_ctxt_switches" | "nonvoluntary_ctxt_switches" => {
                let n: u64 = value.parse().ok()?;
                switches = Some(switches.unwrap_or(0).saturating_add(n));
            }
            _ => {}
        }
    }
    Some((name?, switches?))
}

/// Context switches of every process under `root/proc`, threads summed per process.
/// Processes that vanish while being read are skipped.
pub fn read_switches(root: &Path) -> Vec<TaskSwitches> {
    let host = HostFiles::new(root);
    let Ok(dir) = std::fs::read_dir(root.join("proc")) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in dir.filter_map(|e| e.ok()) {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let tasks = host.numbered(&format!("proc/{pid}/task"), "");
        let statuses: Vec<String> = if tasks.is_empty() {
            host.read(&format!("proc/{pid}/status"))
                .into_iter()
                .collect()
        } else {
            tasks
                .iter()
                .filter_map(|(_, tid)| host.read(&format!("proc/{pid}/task/{tid}/status")))
                .collect()
        };
        let mut name = None;
        let mut switches = 0u64;
        for text in &statuses {
            if let Some((n, s)) = parse_status(text) {
                name.get_or_insert(n);
                switches = switches.saturating_add(s);
            }
        }
        if let Some(name) = name {
            found.push(TaskSwitches {
                pid,
                name,
                switches,
            });
        }
    }
    found.sort_unstable_by_key(|t| t.pid);
    found
}

/// Switch rates of processes present in both samples, busiest first. Processes that
/// appeared or vanished in between are left out; `elapsed` of zero gives no rates.
pub fn rank_neighbours(
    before: &[TaskSwitches],
    after: &[TaskSwitches],
    elapsed: Duration,
) -> Vec<Neighbour> {
    let secs = elapsed.as_secs_f64();
    if secs <= 0.0 {
        return Vec::new();
    }
    let mut ranked: Vec<Neighbour> = after
        .iter()
        .filter_map(|a| {
            let b = before.iter().find(|b| b.pid == a.pid && b.name == a.name)?;
            Some(Neighbour {
                pid: a.pid,
                name: a.name.clone(),
                switches_per_s: a.switches.saturating_sub(b.switches) as f64 / secs,
            })
        })
        .collect();
    ranked.sort_by(|x, y| y.switches_per_s.total_cmp(&x.switches_per_s));
    ranked
}

/// The verdict on ranked neighbours (busiest first), leaving out this process.
pub(crate) fn judge(ranked: &[Neighbour], sample: Duration) -> Check {
    const NAME: &str = "noisy neighbours";
    const WHY: &str = "a process that wakes thousands of times a second preempts tick workers \
                       on its core and evicts their cache; move it or pin workers away from it";
    let me = std::process::id();
    let others: Vec<&Neighbour> = ranked.iter().filter(|n| n.pid != me).collect();
    let top = others
        .iter()
        .take(SHOWN)
        .map(|n| format!("{} (pid {}) {:.0}/s", n.name, n.pid, n.switches_per_s))
        .collect::<Vec<_>>()
        .join(", ");
    let ms = sample.as_millis();
    if others.is_empty() {
        return Check::new(
            NAME,
            Verdict::Info,
            format!("no processes sampled ({ms} ms)"),
            WHY,
        );
    }
    let value = format!("busiest over {ms} ms: {top}");
    let noisy = others
        .iter()
        .filter(|n| n.switches_per_s > NOISY_SWITCHES_PER_S)
        .count();
    if noisy > 0 {
        Check::new(NAME, Verdict::Warn, value, WHY).advise(format!(
            "{noisy} process(es) above {NOISY_SWITCHES_PER_S:.0} switches/s: stop them, \
             or keep them off the tick workers' cores (taskset, cgroup cpusets)"
        ))
    } else {
        Check::new(NAME, Verdict::Ok, value, WHY)
    }
}

/// Samples context switches under `root` for `sample` and judges the busiest processes.
pub(crate) fn check(root: &Path, sample: Duration) -> Check {
    if sample.is_zero() {
        return judge(&[], sample);
    }
    let before = read_switches(root);
    let start = Instant::now();
    std::thread::sleep(sample);
    let after = read_switches(root);
    judge(&rank_neighbours(&before, &after, start.elapsed()), sample)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(pid: u32, name: &str, switches: u64) -> TaskSwitches {
        TaskSwitches {
            pid,
            name: name.into(),
            switches,
        }
    }

    #[test]
    fn status_text_parses() {
        let text = "Name:\tchrome\nState:\tS\nvoluntary_ctxt_switches:\t100\n\
                    nonvoluntary_ctxt_switches:\t23\n";
        assert_eq!(parse_status(text), Some(("chrome".into(), 123)));
        assert_eq!(parse_status("Name:\tx\n"), None);
        assert_eq!(
            parse_status("voluntary_ctxt_switches:\tnope\nName:\tx"),
            None
        );
    }

    #[test]
    fn ranking_orders_by_rate_and_skips_newcomers() {
        let before = [
            task(1, "init", 10),
            task(2, "busy", 100),
            task(3, "gone", 5),
        ];
        let after = [
            task(1, "init", 12),
            task(2, "busy", 2_100),
            task(4, "new", 9_999),
        ];
        let ranked = rank_neighbours(&before, &after, Duration::from_millis(500));
        assert_eq!(ranked.len(), 2);
        assert_eq!(ranked[0].name, "busy");
        assert!((ranked[0].switches_per_s - 4_000.0).abs() < 1e-6);
        assert!((ranked[1].switches_per_s - 4.0).abs() < 1e-6);
        assert!(rank_neighbours(&before, &after, Duration::ZERO).is_empty());
    }

    #[test]
    fn a_busy_process_is_a_warning() {
        let before = [task(2, "busy", 0), task(3, "quiet", 0)];
        let after = [task(2, "busy", 3_000), task(3, "quiet", 10)];
        let sample = Duration::from_secs(1);
        let check = judge(&rank_neighbours(&before, &after, sample), sample);
        assert_eq!(check.verdict, Verdict::Warn);
        assert!(
            check.value.contains("busy (pid 2) 3000/s"),
            "{}",
            check.value
        );
        let calm = [task(2, "busy", 500), task(3, "quiet", 10)];
        let check = judge(&rank_neighbours(&before, &calm, sample), sample);
        assert_eq!(check.verdict, Verdict::Ok);
        assert_eq!(judge(&[], Duration::ZERO).verdict, Verdict::Info);
    }
}
