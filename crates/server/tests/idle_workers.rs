//! Workers with no match sleep until a command or a datagram wakes them:
//! over a quiet second each idle worker thread is woken at most a few times
//! (the host's once-a-second timeline pulse is a command), where a loop
//! that woke every 10 ms would be woken about 100 times. Counted from the
//! threads' voluntary context switches in `/proc` (Linux). A match created
//! afterwards still starts at once: the command wakes its worker.
//!
//! `cargo test -p hightick-server --test idle_workers -- --nocapture` prints
//! the counts.

mod support;

use std::time::Duration;

use hightick_net::Key;
use support::{create_match, start_host};

/// Voluntary context switches of every `hightick-worker-*` thread of this
/// process, by thread id.
fn worker_switches() -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").expect("procfs") {
        let path = task.expect("task").path();
        let comm = std::fs::read_to_string(path.join("comm")).unwrap_or_default();
        if !comm.starts_with("hightick-worke") {
            continue;
        }
        let status = std::fs::read_to_string(path.join("status")).unwrap_or_default();
        let switches = status
            .lines()
            .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
            .and_then(|v| v.trim().parse().ok())
            .expect("voluntary_ctxt_switches");
        let tid = path.file_name().unwrap().to_string_lossy().into_owned();
        out.push((tid, switches));
    }
    out.sort();
    out
}

#[test]
fn idle_workers_are_not_woken_periodically_and_a_command_still_wakes_one() {
    let key = Key::generate(&mut rand::rng());
    let host = start_host(2, &key, |_| {});
    std::thread::sleep(Duration::from_millis(300));
    let before = worker_switches();
    assert_eq!(before.len(), 2, "two worker threads: {before:?}");
    std::thread::sleep(Duration::from_secs(1));
    let after = worker_switches();
    for ((tid, then), (_, now)) in before.iter().zip(&after) {
        let woken = now - then;
        println!("idle worker thread {tid}: woken {woken} times in 1 s");
        assert!(
            woken <= 5,
            "an idle worker woke {woken} times in a second (a periodic wake-up)"
        );
    }
    let info = create_match(
        host.admin_address(),
        r#"{"mode":"5v5","roster":[1,2,3,4,5,6,7,8,9,10]}"#,
    );
    assert_eq!(info.players, 10);
    host.drain(Duration::ZERO);
    host.wait();
}
