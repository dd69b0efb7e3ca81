//! Swarm agents that no stranger can steer, over real TCP on loopback
//! against a real HTTP target and a UDP listener standing in for a game
//! server: a peer without the hello, one with the wrong secret and an
//! impostor agent get nothing; a target or game server off the agent's
//! allow-list gets nothing; the right coordinator runs.

mod common;

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use hightick_arena::game::Arena;
use hightick_net::{ConnectToken, Key, TokenParams};
use hightick_swarm::distributed::wire::{Message, StartPlan, encode};
use hightick_swarm::distributed::{
    Agent, AgentConfig, AgentRun, AllowList, RefusalReason, SharedSecret, run_distributed,
};
use hightick_swarm::driver::Shard;
use hightick_swarm::result::RunResult;
use hightick_swarm::scenario::Overrides;
use hightick_swarm::{MatchPlayer, Scenario, SwarmError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

fn secret(byte: u8) -> SharedSecret {
    SharedSecret::new(&[byte; 32], "test").unwrap()
}

struct RunningAgent {
    addr: String,
    task: JoinHandle<Result<AgentRun, SwarmError>>,
    refusals: Arc<Mutex<Vec<RefusalReason>>>,
}

async fn start_agent(secret: SharedSecret, allow: AllowList) -> RunningAgent {
    let config = AgentConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        secret,
        allow,
    };
    let agent = Agent::bind(config, MatchPlayer::of::<Arena>())
        .await
        .unwrap();
    let addr = agent.local_addr().unwrap().to_string();
    let refusals = Arc::new(Mutex::new(Vec::new()));
    let seen = refusals.clone();
    let task = tokio::spawn(async move {
        agent
            .serve_one(move |r| seen.lock().unwrap().push(r.reason))
            .await
    });
    RunningAgent {
        addr,
        task,
        refusals,
    }
}

async fn coordinate(
    text: &str,
    target: SocketAddr,
    agent: &str,
    secret: &SharedSecret,
) -> Result<RunResult, SwarmError> {
    let scenario = Arc::new(Scenario::parse(text, "auth.toml").unwrap());
    let overrides = Overrides {
        targets: vec![("t".into(), format!("http://{target}"))],
        ..Overrides::default()
    };
    run_distributed(
        scenario,
        &overrides,
        &[agent.to_owned()],
        secret,
        Duration::ZERO,
        Arc::new(AtomicBool::new(false)),
        |_| {},
    )
    .await
}

/// Bytes the peer sends until it hangs up.
async fn bytes_until_hang_up(stream: &mut TcpStream) -> usize {
    let mut buf = [0u8; 4096];
    let mut got = 0;
    while let Ok(n) = stream.read(&mut buf).await {
        if n == 0 {
            break;
        }
        got += n;
    }
    got
}

async fn wait_for_refusals(agent: &RunningAgent, n: usize) -> Vec<RefusalReason> {
    loop {
        let seen = agent.refusals.lock().unwrap().clone();
        if seen.len() >= n {
            return seen;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strangers_are_refused_and_the_target_hears_nothing_then_the_coordinator_runs() {
    let target = common::target().await;
    let good = secret(0x11);
    let agent = start_agent(good.clone(), AllowList::loopback()).await;

    // A peer that connects and says nothing holds nobody up.
    let _idle = TcpStream::connect(&agent.addr).await.unwrap();

    // A coordinator of the old protocol: a Start frame straight away.
    let mut old = TcpStream::connect(&agent.addr).await.unwrap();
    let plan = StartPlan {
        scenario: common::PING_SCENARIO.replace("127.0.0.1:9", &target.addr.to_string()),
        file: "auth.toml".into(),
        overrides: Overrides::default(),
        shard: Shard { index: 0, count: 1 },
        start_in_ms: 0,
        seed: 1,
    };
    let mut body = Vec::new();
    encode(&Message::Start(plan), &mut body);
    old.write_all(&(body.len() as u32).to_be_bytes())
        .await
        .unwrap();
    old.write_all(&body).await.unwrap();
    assert_eq!(
        bytes_until_hang_up(&mut old).await,
        0,
        "answered a stranger"
    );

    // A coordinator with the wrong secret.
    let err = coordinate(
        common::PING_SCENARIO,
        target.addr,
        &agent.addr,
        &secret(0x22),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(err.contains("refused"), "{err}");

    let mut refusals = wait_for_refusals(&agent, 2).await;
    refusals.sort_by_key(|r| format!("{r:?}"));
    assert_eq!(
        refusals,
        [RefusalReason::NotACoordinator, RefusalReason::WrongSecret]
    );
    assert_eq!(target.connections(), 0);
    assert_eq!(target.served(), 0);

    // The agent still listens, and the right coordinator runs.
    let result = coordinate(common::PING_SCENARIO, target.addr, &agent.addr, &good)
        .await
        .unwrap();
    let run = agent.task.await.unwrap().unwrap();
    assert!(result.total.requests > 0);
    assert_eq!(target.served(), run.total.requests());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_coordinator_does_not_hand_its_scenario_to_an_impostor() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    // Plays the agent's part without the secret: accepts whatever proof
    // and answers with a made-up one.
    let impostor = tokio::spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        let mut hello = [0u8; 48];
        s.read_exact(&mut hello).await.unwrap();
        s.write_all(&[7u8; 32]).await.unwrap();
        let mut proof = [0u8; 32];
        s.read_exact(&mut proof).await.unwrap();
        let mut verdict = [9u8; 33];
        verdict[0] = 1;
        s.write_all(&verdict).await.unwrap();
        bytes_until_hang_up(&mut s).await
    });
    let err = coordinate(
        common::PING_SCENARIO,
        "127.0.0.1:9".parse().unwrap(),
        &addr,
        &secret(0x11),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(err.contains("could not prove"), "{err}");
    assert_eq!(impostor.await.unwrap(), 0, "the scenario went out");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_off_the_allow_list_is_refused_by_name() {
    let target = common::target().await;
    let good = secret(0x33);
    let allow = AllowList::parse(&["192.0.2.0/24"]).unwrap();
    let agent = start_agent(good.clone(), allow).await;
    let err = coordinate(common::PING_SCENARIO, target.addr, &agent.addr, &good)
        .await
        .unwrap_err()
        .to_string();
    let addr = target.addr.to_string();
    assert!(
        err.contains("target `t`") && err.contains(&addr) && err.contains("192.0.2.0/24"),
        "{err}"
    );
    let agent_err = agent.task.await.unwrap().unwrap_err();
    assert!(
        matches!(agent_err, SwarmError::TargetRefused { .. }),
        "{agent_err}"
    );
    assert_eq!(target.connections(), 0);
    assert_eq!(target.served(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_server_off_the_allow_list_gets_no_packet() {
    let target = common::target().await;
    let server = UdpSocket::bind("127.0.0.1:0").unwrap();
    server.set_nonblocking(true).unwrap();
    let servers = [server.local_addr().unwrap()];
    let params = TokenParams {
        protocol_id: 1,
        client_id: 7,
        create_unix: 1,
        expire_unix: u64::MAX / 2,
        timeout_seconds: 5,
        server_addresses: &servers,
        user_data: &[],
    };
    let token = ConnectToken::generate(&params, &Key::generate(&mut rand::rng()), &mut rand::rng())
        .unwrap();
    let token = base64::engine::general_purpose::STANDARD.encode(token.encode());
    // The HTTP target is allowed (by host and port); the game server is not.
    let text = format!(
        "{}[[behaviour.step]]\nname = \"play\"\nplay_match = {{ token = \"{token}\", duration = \"500ms\" }}\n",
        common::PING_SCENARIO
    );
    let good = secret(0x44);
    let allow = AllowList::parse(&[target.addr.to_string()]).unwrap();
    let agent = start_agent(good.clone(), allow).await;
    let result = coordinate(&text, target.addr, &agent.addr, &good)
        .await
        .unwrap();
    agent.task.await.unwrap().unwrap();
    let play = result.steps.iter().find(|s| s.name == "play").unwrap();
    assert!(
        play.errors.get("match").copied().unwrap_or(0) > 0,
        "{play:?}"
    );
    assert!(target.served() > 0);
    let mut buf = [0u8; 2048];
    let err = server.recv_from(&mut buf).unwrap_err();
    assert_eq!(
        err.kind(),
        std::io::ErrorKind::WouldBlock,
        "a packet reached the server"
    );
}
