//! Every frame between a coordinator and an agent is authenticated after
//! the handshake. A man-in-the-middle relay of the test's own sits on real
//! TCP on loopback between them: passing bytes through, the run works;
//! flipping one byte of a frame, or sending a frame twice, ends the session
//! with the frame error naming the peer and the reason (no panic, no
//! result made of what the relay changed).
//!
//! Each test is bounded by [`BOUND`]: a guard against a hang, not a timing
//! assertion.

mod common;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use hightick_swarm::distributed::auth::{MAGIC, NONCE_BYTES, TAG_BYTES};
use hightick_swarm::distributed::{AgentRun, FrameFault, SharedSecret, run_distributed};
use hightick_swarm::result::RunResult;
use hightick_swarm::scenario::Overrides;
use hightick_swarm::target::Target;
use hightick_swarm::{Scenario, SwarmError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// The longest a test may take before it counts as hung.
const BOUND: Duration = Duration::from_secs(60);

/// What the relay does to one direction's frames after the handshake
/// (frames counted from 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tamper {
    /// Passes every byte through.
    Nothing,
    /// Flips one byte in the middle of frame `n`.
    Flip(usize),
    /// Sends frame `n` twice.
    Replay(usize),
}

/// Bytes of the handshake each way: the hello and the proof from the
/// coordinator, the challenge and the verdict from the agent.
const HANDSHAKE_TO_AGENT: usize = MAGIC.len() + NONCE_BYTES + TAG_BYTES;
const HANDSHAKE_TO_COORDINATOR: usize = NONCE_BYTES + 1 + TAG_BYTES;

/// A relay in front of `agent` for one connection; where it listens.
async fn relay(agent: String, to_agent: Tamper, to_coordinator: Tamper) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        let (coordinator, _) = listener.accept().await.unwrap();
        let agent = TcpStream::connect(agent).await.unwrap();
        let (c_rx, c_tx) = coordinator.into_split();
        let (a_rx, a_tx) = agent.into_split();
        tokio::join!(
            pump(c_rx, a_tx, HANDSHAKE_TO_AGENT, to_agent),
            pump(a_rx, c_tx, HANDSHAKE_TO_COORDINATOR, to_coordinator),
        );
    });
    addr
}

/// Copies the handshake's `handshake` bytes as they come (each side waits
/// for the other's part), then frame by frame (a big-endian u32 length and
/// what it counts), doing `tamper`; ends when either side hangs up.
async fn pump(mut rx: OwnedReadHalf, mut tx: OwnedWriteHalf, handshake: usize, tamper: Tamper) {
    let mut buf = vec![0; handshake];
    let mut left = handshake;
    while left > 0 {
        match rx.read(&mut buf[..left]).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if tx.write_all(&buf[..n]).await.is_err() {
                    return;
                }
                left -= n;
            }
        }
    }
    for n in 0.. {
        let mut len = [0; 4];
        if rx.read_exact(&mut len).await.is_err() {
            break;
        }
        let mut frame = len.to_vec();
        frame.resize(4 + u32::from_be_bytes(len) as usize, 0);
        if rx.read_exact(&mut frame[4..]).await.is_err() {
            break;
        }
        let copies = match tamper {
            Tamper::Flip(at) if at == n => {
                let middle = 4 + (frame.len() - 4) / 2;
                frame[middle] ^= 0x01;
                1
            }
            Tamper::Replay(at) if at == n => 2,
            _ => 1,
        };
        for _ in 0..copies {
            if tx.write_all(&frame).await.is_err() {
                return;
            }
        }
    }
    let _ = tx.shutdown().await;
}

struct Run {
    coordinator: Result<RunResult, SwarmError>,
    agent: Result<AgentRun, SwarmError>,
    /// Where the coordinator reached the agent (the relay).
    agent_addr: String,
    target: Target,
}

/// One agent behind a relay doing `to_agent` and `to_coordinator`, one
/// coordinator through it; both ends' results.
async fn run_through_relay(to_agent: Tamper, to_coordinator: Tamper) -> Run {
    let target = common::target().await;
    let secret = SharedSecret::new(&[0x5c; 32], "test").unwrap();
    let (addrs, mut agents) = common::start_agents(1, &secret).await;
    let agent_addr = relay(addrs[0].clone(), to_agent, to_coordinator).await;
    let scenario = Arc::new(Scenario::parse(common::PING_SCENARIO, "frames.toml").unwrap());
    let overrides = Overrides {
        targets: vec![("t".into(), format!("http://{}", target.addr))],
        ..Overrides::default()
    };
    let coordinator = run_distributed(
        scenario,
        &overrides,
        std::slice::from_ref(&agent_addr),
        &secret,
        Duration::ZERO,
        Arc::new(AtomicBool::new(false)),
        |_| {},
    )
    .await;
    let agent: JoinHandle<_> = agents.pop().unwrap();
    // A panicking agent fails the test here.
    let agent = agent.await.expect("the agent panicked");
    Run {
        coordinator,
        agent,
        agent_addr,
        target,
    }
}

async fn bounded(to_agent: Tamper, to_coordinator: Tamper) -> Run {
    tokio::time::timeout(BOUND, run_through_relay(to_agent, to_coordinator))
        .await
        .expect("the session did not end")
}

/// The fault of a [`SwarmError::Frame`] from `peer`, or a panic naming
/// what came instead.
fn frame_fault<T: std::fmt::Debug>(r: &Result<T, SwarmError>, peer: &str) -> FrameFault {
    match r {
        Err(e @ SwarmError::Frame { peer: p, fault }) => {
            assert!(p.contains(peer), "{e} does not name {peer}");
            fault.clone()
        }
        other => panic!("expected a refused frame from {peer}, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relay_that_passes_bytes_through_changes_nothing() {
    let run = bounded(Tamper::Nothing, Tamper::Nothing).await;
    let result = run.coordinator.unwrap();
    let agent = run.agent.unwrap();
    assert!(result.total.requests > 0);
    assert_eq!(result.total.requests, agent.total.requests());
    assert_eq!(run.target.served(), agent.total.requests());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flipped_byte_in_an_agents_interval_ends_the_run_with_a_mac_error() {
    // Frame 0 is Ready, 1 the first interval.
    let run = bounded(Tamper::Nothing, Tamper::Flip(1)).await;
    let err = run.coordinator.as_ref().unwrap_err().to_string();
    assert_eq!(
        frame_fault(&run.coordinator, &format!("agent {}", run.agent_addr)),
        FrameFault::BadMac
    );
    assert!(err.contains("bad MAC"), "{err}");
    // The agent ends too (its coordinator hung up), whichever way.
    let _ = run.agent;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flipped_byte_in_the_start_frame_ends_the_session_before_any_load() {
    let run = bounded(Tamper::Flip(0), Tamper::Nothing).await;
    assert_eq!(
        frame_fault(&run.agent, "coordinator 127.0.0.1:"),
        FrameFault::BadMac
    );
    assert!(run.coordinator.is_err(), "{:?}", run.coordinator);
    assert_eq!(run.target.connections(), 0, "a tampered plan sent load");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replayed_interval_is_refused_not_counted_twice() {
    let run = bounded(Tamper::Nothing, Tamper::Replay(1)).await;
    let err = run.coordinator.as_ref().unwrap_err().to_string();
    assert_eq!(
        frame_fault(&run.coordinator, &format!("agent {}", run.agent_addr)),
        FrameFault::OutOfSequence {
            expected: 2,
            got: 1
        }
    );
    assert!(err.contains("out of sequence"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replayed_start_is_refused_by_the_agent_and_the_run_ends() {
    let run = bounded(Tamper::Replay(0), Tamper::Nothing).await;
    assert_eq!(
        frame_fault(&run.agent, "coordinator 127.0.0.1:"),
        FrameFault::OutOfSequence {
            expected: 1,
            got: 0
        }
    );
    // The agent says why before it hangs up; no partial result comes out.
    let err = run.coordinator.unwrap_err().to_string();
    assert!(
        err.contains(&run.agent_addr) && err.contains("out of sequence"),
        "{err}"
    );
}
