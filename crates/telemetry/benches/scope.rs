//! Cost of telemetry on the tick path: one scope open+close inside an open
//! frame (the headline figure), the raw clock read it is built on, and the
//! cost of opening and closing a whole frame.
//!
//! Run: `cargo bench -p hightick-telemetry --bench scope`
//!
//! With `--features tracy` every scope is also a Tracy zone; the bench then
//! also attaches a stand-in profiler to its own Tracy client and measures a
//! scope again while a profiler collects (`telemetry_scope_tracy_connected_ns`).
//! `crates/telemetry/benches/tracy_cost.sh` runs the builds without and with
//! the feature in turn and prints the ratios.

use std::hint::black_box;

use hightick_telemetry::bench::{figure, measure};
use hightick_telemetry::{Budgets, FrameRecorder, RecorderConfig, Subsystem, TscClock};

// Short batches, many of them: on a shared, oversubscribed machine a batch
// that is preempted counts the time another process ran; the median of many
// short batches is the cost when this one has the core.
const ITERS: u32 = 20_000;
const SAMPLES: u32 = 301;

fn main() {
    let budgets = Budgets::load(concat!(env!("CARGO_MANIFEST_DIR"), "/budgets.toml"))
        .expect("shipped budgets load");
    let budget = budgets.mode("5v5").expect("5v5 budget").clone();
    let mut recorder =
        FrameRecorder::new(RecorderConfig::default(), budget).expect("default config is valid");

    let clock = TscClock::new();
    let clock_read = measure(|| clock.raw(), ITERS, SAMPLES);
    // A scope reads the clock twice (open, close): this is its floor.
    let clock_pair = measure(|| black_box(clock.raw()) ^ clock.raw(), ITERS, SAMPLES);
    let std_now = measure(std::time::Instant::now, ITERS, SAMPLES);

    let (scope, unnamed, nested) = {
        let frame = recorder.begin(0);
        let scope = measure(
            || {
                let _s = frame.scope(black_box(Subsystem::Movement), "collide");
            },
            ITERS,
            SAMPLES,
        );
        let unnamed = measure(
            || {
                let _s = frame.enter(black_box(Subsystem::Fow));
            },
            ITERS,
            SAMPLES,
        );
        // A child inside an open parent: the parent's time is charged at the
        // child's open, so this is what one more nesting level costs.
        let parent = frame.scope(Subsystem::Movement, "step");
        let nested = measure(
            || {
                let _s = frame.scope(black_box(Subsystem::Physics), "sweep");
            },
            ITERS,
            SAMPLES,
        );
        drop(parent);
        frame.end();
        (scope, unnamed, nested)
    };

    let mut tick = 1;
    let frame_cost = measure(
        || {
            let frame = recorder.begin(tick);
            tick += 1;
            frame.end()
        },
        1_000,
        SAMPLES,
    );

    #[cfg(feature = "tracy")]
    let connected = match tracy_drain::attach() {
        Some(drain) => {
            let frame = recorder.begin(tick);
            let connected = measure(
                || {
                    let _s = frame.scope(black_box(Subsystem::Movement), "collide");
                },
                ITERS,
                SAMPLES,
            );
            frame.end();
            drop(drain);
            Some(connected)
        }
        None => {
            println!("no Tracy client of this process found to attach to");
            None
        }
    };

    figure("telemetry_scope_ns", scope.median_ns(), "ns");
    figure("telemetry_clock_read_ns", clock_read.median_ns(), "ns");
    #[cfg(feature = "tracy")]
    if let Some(connected) = &connected {
        figure(
            "telemetry_scope_tracy_connected_ns",
            connected.median_ns(),
            "ns",
        );
    }
    println!();
    println!(
        "{:<44} {:>10} {:>10} {:>10}",
        "operation", "p10 ns", "median ns", "p90 ns"
    );
    for (name, stats) in [
        ("scope open+close, named (frame.scope)", &scope),
        ("scope open+close, unnamed (frame.enter)", &unnamed),
        ("scope open+close, nested in a parent", &nested),
        ("raw TSC clock read (TscClock::raw)", &clock_read),
        ("two raw clock reads (a scope's floor)", &clock_pair),
        ("std::time::Instant::now", &std_now),
        ("empty frame begin+end (histograms, budgets)", &frame_cost),
    ] {
        println!(
            "{:<44} {:>10.2} {:>10.2} {:>10.2}",
            name,
            stats.quantile_ns(0.1),
            stats.median_ns(),
            stats.quantile_ns(0.9)
        );
    }
    println!("target: telemetry_scope_ns <= 30 ns");
}

/// A stand-in for the Tracy profiler: it connects to this process's Tracy
/// client, shakes hands as the profiler does, then reads and drops
/// everything the client streams, so the client works as it does with a
/// profiler attached.
#[cfg(feature = "tracy")]
mod tracy_drain {
    use std::io::{Read, Write};
    use std::net::TcpStream;
    use std::thread::JoinHandle;
    use std::time::Duration;

    /// Tracy's protocol version in the tracy-client-sys of Cargo.lock
    /// (0.30.1: Tracy v0.14.1).
    const PROTOCOL: u32 = 82;
    /// Where `pid` sits in Tracy's welcome message (after six 8-byte fields).
    const PID_AT: usize = 48;

    /// An attached stand-in; dropping it detaches (Tracy's client waits at
    /// exit for a connected profiler to let it go).
    pub(super) struct Drain {
        stream: TcpStream,
        reader: Option<JoinHandle<()>>,
    }

    impl Drop for Drain {
        fn drop(&mut self) {
            // ServerQueryTerminate: type 0, ptr 0, extra 0 (13 bytes, packed).
            let _ = self.stream.write_all(&[0u8; 13]);
            let _ = self.stream.shutdown(std::net::Shutdown::Both);
            if let Some(reader) = self.reader.take() {
                let _ = reader.join();
            }
        }
    }

    /// Attaches to this process's client ($TRACY_PORT, else the first of
    /// Tracy's ports 8086..8105 that answers with this process's id).
    pub(super) fn attach() -> Option<Drain> {
        let ports: Vec<u16> = match std::env::var("TRACY_PORT") {
            Ok(p) => vec![p.parse().ok()?],
            Err(_) => (8086..8106).collect(),
        };
        ports.into_iter().find_map(|port| {
            let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
            s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
            s.write_all(b"TracyPrf").ok()?;
            s.write_all(&PROTOCOL.to_le_bytes()).ok()?;
            let mut reply = [0u8; 1 + PID_AT + 8];
            s.read_exact(&mut reply).ok()?;
            let pid = u64::from_le_bytes(reply[1 + PID_AT..].try_into().ok()?);
            if reply[0] != 1 || pid != u64::from(std::process::id()) {
                return None;
            }
            s.set_read_timeout(None).ok()?;
            let mut reading = s.try_clone().ok()?;
            let reader = std::thread::spawn(move || {
                let mut sink = vec![0u8; 1 << 16];
                while reading.read(&mut sink).is_ok_and(|n| n > 0) {}
            });
            Some(Drain {
                stream: s,
                reader: Some(reader),
            })
        })
    }
}
