//! The impairment proxy on the real path: `hightick netem` forwards a
//! client's datagrams to a server and reports what it cost; and a whole
//! match of arena bots behind the `bad` link (the lab's load run: this
//! binary's `serve` as a child process, the bots and the proxy in this
//! process) plays to its end, through a scheduled outage, with nothing
//! inconsistent and nothing undecodable.

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, UdpSocket};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hightick_arena::game::Arena;
use hightick_lab::load::LinkSpec;
use hightick_lab::{BudgetBook, LoadSpec, run_load};

const PATIENCE: Duration = Duration::from_secs(20);

#[test]
fn the_netem_command_forwards_a_client_and_prints_its_cost() {
    let server = UdpSocket::bind("127.0.0.1:0").unwrap();
    server
        .set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_hightick"))
        .args(["netem", "--listen", "127.0.0.1:0", "--upstream"])
        .arg(server.local_addr().unwrap().to_string())
        .args(["--link", "wifi", "--seed", "7", "--duration", "3s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the hightick binary runs");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut banner = String::new();
    stdout.read_line(&mut banner).unwrap();
    // "hightick netem: wifi link, seed 7, listening on ADDR, forwarding to ADDR"
    let listen: SocketAddr = banner
        .split("listening on ")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .and_then(|a| a.trim().parse().ok())
        .unwrap_or_else(|| panic!("no address in {banner:?}"));
    let client = UdpSocket::bind("127.0.0.1:0").unwrap();
    let start = Instant::now();
    let mut buf = [0u8; 64];
    let from = loop {
        assert!(start.elapsed() < PATIENCE, "nothing came through");
        client.send_to(b"ping", listen).unwrap();
        if let Ok((n, from)) = server.recv_from(&mut buf) {
            assert_eq!(&buf[..n], b"ping");
            break from;
        }
    };
    // The server sees the proxy's upstream socket, not the client.
    assert_ne!(from, client.local_addr().unwrap());
    let rest: Vec<String> = stdout.lines().map_while(Result::ok).collect();
    assert!(child.wait().unwrap().success());
    let text = rest.join("\n");
    assert!(text.contains("flows opened 1"), "{text}");
    assert!(text.contains("FIGURE netem_ns_per_datagram "), "{text}");
    assert!(text.contains("FIGURE netem_cpu_cores "), "{text}");
}

#[test]
fn a_match_behind_the_bad_link_plays_to_its_end_through_an_outage() {
    // One round to win, 1 s of buying and 10 s of combat: the match ends
    // about 11 s after the bots connect, and the bad link's first outage
    // (1 s, 10 s after each bot's first datagram) falls inside it.
    let spec = LoadSpec {
        warmup: Duration::from_secs(2),
        duration: Duration::from_secs(11),
        workers: 1,
        link: Some(LinkSpec::new("bad")),
        settings: serde_json::json!({
            "rounds_to_win": 1,
            "buy_seconds": 1.0,
            "combat_seconds": 10.0,
        }),
        ..LoadSpec::new(env!("CARGO_BIN_EXE_hightick"), "5v5", 1)
    };
    let summary = run_load::<Arena>(&spec, &BudgetBook::shipped(), &mut |_| {}).expect("run");
    let link = summary.link.as_ref().expect("a link row");
    let q = &link.behind;
    assert_eq!((q.bots, q.connected), (10, 10), "{q:?}");
    assert_eq!(q.desyncs, 0, "{q:?}");
    assert_eq!(q.decode_errors, 0, "{q:?}");
    assert_eq!(
        q.matches_over, 10,
        "every bot heard the match end: {q:?} {:?}",
        summary.bots
    );
    assert!(summary.quality.is_none(), "no bot played straight");
    // Every bot went through the proxy, which dropped datagrams in each way
    // the bad link has (bursts, and the outage).
    let proxy = &link.proxy.emulator;
    assert_eq!(proxy.flows_opened, 10, "{proxy:?}");
    let dropped = |why: &str| {
        proxy
            .down
            .dropped
            .iter()
            .find(|(k, _)| k == why)
            .map_or(0, |(_, n)| *n)
    };
    assert!(dropped("burst") > 0, "{proxy:?}");
    assert!(dropped("outage") > 0, "{proxy:?}");
    assert!(proxy.down.delay_min_us >= 50_000.0, "{proxy:?}");
    // Its CPU is its own line, not the server's.
    assert!(link.proxy.cpu_s > 0.0, "{:?}", link.proxy);
    assert!(
        summary
            .figures()
            .iter()
            .any(|f| f.starts_with("FIGURE netem_proxy_cpu_cores ")),
        "{:?}",
        summary.figures()
    );
    // The server dropped no reliable event.
    assert!(
        !summary
            .network
            .drops
            .iter()
            .any(|d| d.reason == "event_queue_full"),
        "{:?}",
        summary.network.drops
    );
}
