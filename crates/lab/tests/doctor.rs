//! The host doctor against fixture trees of /proc and /sys, and against this machine.

use std::path::{Path, PathBuf};
use std::time::Duration;

use hightick_lab::doctor::{DoctorOptions, DoctorReport, Verdict, examine, read_switches};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/doctor")
        .join(name)
}

fn report(name: &str) -> DoctorReport {
    examine(&DoctorOptions {
        root: fixture(name),
        sample: Duration::ZERO,
    })
    .unwrap()
}

fn verdict(report: &DoctorReport, check: &str) -> Verdict {
    report
        .check(check)
        .unwrap_or_else(|| panic!("no check named {check}"))
        .verdict
}

const CHECKS: [&str; 11] = [
    "NUMA nodes",
    "SMT siblings",
    "CPU frequency governor",
    "cpuidle states",
    "sched migration cost",
    "clock source",
    "timer slack",
    "transparent huge pages",
    "UDP socket buffers",
    "open-file limit",
    "noisy neighbours",
];

#[test]
fn a_tuned_host_is_all_ok() {
    let r = report("tuned");
    for name in &CHECKS[..10] {
        assert_eq!(
            verdict(&r, name),
            Verdict::Ok,
            "{name}: {:?}",
            r.check(name)
        );
    }
    assert_eq!(
        r.check("clock source").unwrap().value,
        "tsc (available: tsc hpet acpi_pm)"
    );
    let idle = &r.check("cpuidle states").unwrap().value;
    assert!(
        idle.contains("C1E (10 us)") && !idle.contains("C6"),
        "{idle}"
    );
    assert!(r.check("NUMA nodes").unwrap().advice.is_none());
    assert_eq!(
        r.check("open-file limit").unwrap().value,
        "soft 65536, hard 1048576"
    );
}

#[test]
fn an_untuned_host_gets_warnings_and_advice() {
    let r = report("untuned");
    for name in [
        "SMT siblings",
        "CPU frequency governor",
        "cpuidle states",
        "sched migration cost",
        "clock source",
        "transparent huge pages",
        "UDP socket buffers",
        "open-file limit",
    ] {
        assert_eq!(
            verdict(&r, name),
            Verdict::Warn,
            "{name}: {:?}",
            r.check(name)
        );
        assert!(r.check(name).unwrap().advice.is_some(), "{name} has advice");
    }
    let numa = r.check("NUMA nodes").unwrap();
    assert_eq!(numa.verdict, Verdict::Info);
    assert_eq!(numa.value, "2 nodes (node0: cpus 0-1; node1: cpus 2-3)");
    assert!(numa.advice.as_deref().unwrap().contains("node i mod 2"));
    assert_eq!(
        r.check("SMT siblings").unwrap().value,
        "on, 2 threads per core (siblings 0,2)"
    );
    assert_eq!(
        r.check("CPU frequency governor").unwrap().value,
        "powersave (cpus 0-1), performance (cpus 2-3)"
    );
    assert!(
        r.check("cpuidle states")
            .unwrap()
            .value
            .contains("C6 (133 us)")
    );
    assert_eq!(r.check("sched migration cost").unwrap().value, "50000 ns");
    assert_eq!(verdict(&r, "timer slack"), Verdict::Info);
    let text = r.render_table();
    assert!(text.contains("8 WARN"), "{text}");
}

#[test]
fn a_vm_has_paravirtual_clock_and_no_power_controls() {
    let r = report("vm");
    let clock = r.check("clock source").unwrap();
    assert_eq!(clock.verdict, Verdict::Info);
    assert!(clock.advice.as_deref().unwrap().contains("echo tsc"));
    assert_eq!(verdict(&r, "SMT siblings"), Verdict::Ok);
    assert_eq!(verdict(&r, "CPU frequency governor"), Verdict::Info);
    let idle = r.check("cpuidle states").unwrap();
    assert_eq!(idle.verdict, Verdict::Info);
    assert!(idle.value.contains("halts"), "{idle:?}");
    assert!(
        idle.advice
            .as_deref()
            .is_some_and(|a| a.contains("cpuidle_haltpoll.force=1")),
        "{idle:?}"
    );
    // The server asks for huge pages; a host that refuses them is told how.
    let thp = r.check("transparent huge pages").unwrap();
    assert_eq!(thp.value, "never");
    assert_eq!(thp.verdict, Verdict::Warn);
    assert!(
        thp.advice
            .as_deref()
            .is_some_and(|a| a.contains("echo madvise")),
        "{thp:?}"
    );
}

#[test]
fn a_bare_root_is_all_info() {
    let r = report("bare");
    assert_eq!(r.checks.len(), CHECKS.len());
    for c in &r.checks {
        assert_eq!(c.verdict, Verdict::Info, "{c:?}");
    }
}

#[test]
fn checks_come_in_a_fixed_order_and_json_round_trips() {
    let r = report("untuned");
    let names: Vec<&str> = r.checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, CHECKS);
    let json = r.to_json().unwrap();
    assert!(json.contains("\"verdict\": \"WARN\""));
    assert_eq!(DoctorReport::from_json(&json).unwrap(), r);
    assert!(DoctorReport::from_json("[1,2]").is_err());
}

#[test]
fn context_switches_sum_over_threads() {
    let tasks = read_switches(&fixture("tuned"));
    assert_eq!(tasks.len(), 2);
    assert_eq!(
        (tasks[0].pid, tasks[0].name.as_str(), tasks[0].switches),
        (100, "hightick", 4217)
    );
    assert_eq!(
        (tasks[1].pid, tasks[1].name.as_str(), tasks[1].switches),
        (200, "chatty", 1505)
    );
}

#[test]
fn the_live_machine_is_examined_without_error() {
    let r = examine(&DoctorOptions {
        root: PathBuf::from("/"),
        sample: Duration::from_millis(50),
    })
    .unwrap();
    assert_eq!(r.checks.len(), CHECKS.len());
    assert!(r.render_table().contains("read-only"));
    // Some process besides this test exists on any machine, so the sample found something.
    assert!(!read_switches(Path::new("/")).is_empty());
}
