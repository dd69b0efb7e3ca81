//! `hightick swarm agent`: runs the shard of a run a coordinator hands it
//! and streams an interval every interval. Only a coordinator that proves
//! it holds the shared secret gets that far ([`auth`](super::auth)), only
//! frames that pass their check are acted on ([`frame`](super::frame): the
//! first that fails ends the session), and only targets on the agent's
//! [`AllowList`] get load.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::task::JoinSet;

use super::allow::AllowList;
use super::auth::{RefusalReason, SessionKeys, SharedSecret, prove_coordinator};
use super::frame::{FrameFault, FrameReader, FrameWriter, ReadError};
use super::wire::{Message, StartPlan};
use crate::bots::play::MatchPlayer;
use crate::error::SwarmError;
use crate::interval::Interval;
use crate::run::LocalSwarm;
use crate::scenario::Scenario;

/// How long a peer has to prove itself.
pub const AUTH_TIMEOUT: Duration = Duration::from_secs(10);
/// How many peers may be proving themselves at once; more are turned away.
const MAX_AUTHENTICATING: usize = 64;

/// How an agent is started.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// Where to listen for a coordinator (`hightick swarm agent` defaults
    /// to `127.0.0.1:7700`).
    pub listen: SocketAddr,
    /// The secret coordinators must prove they hold.
    pub secret: SharedSecret,
    /// Where runs may send load.
    pub allow: AllowList,
}

/// A peer the agent turned away before it sent anything of a run.
#[derive(Debug, Clone)]
pub struct Refusal {
    /// Who.
    pub peer: SocketAddr,
    /// Why.
    pub reason: RefusalReason,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "refused {}: {}", self.peer, self.reason)
    }
}

/// An agent listening for a coordinator.
#[derive(Debug)]
pub struct Agent {
    listener: TcpListener,
    player: MatchPlayer,
    secret: SharedSecret,
    allow: Arc<AllowList>,
}

/// What an agent ran in one session.
#[derive(Debug)]
pub struct AgentRun {
    /// Its shard's index.
    pub shard: u32,
    /// Everything it measured and sent (the sum of its intervals).
    pub total: Interval,
    /// Intervals sent.
    pub intervals: u32,
}

impl Agent {
    /// Listens as `config` says; its runs' `play_match` steps play bots of
    /// `player`'s game.
    pub async fn bind(config: AgentConfig, player: MatchPlayer) -> Result<Self, SwarmError> {
        let listen = config.listen;
        let listener = TcpListener::bind(listen)
            .await
            .map_err(SwarmError::io(format!("listening on {listen}")))?;
        Ok(Self {
            listener,
            player,
            secret: config.secret,
            allow: Arc::new(config.allow),
        })
    }

    /// Where it listens.
    pub fn local_addr(&self) -> Result<SocketAddr, SwarmError> {
        self.listener
            .local_addr()
            .map_err(SwarmError::io("reading the agent's address"))
    }

    /// Serves one authenticated coordinator: runs the shard it is given to
    /// its end. Peers that fail to prove the secret (each given
    /// [`AUTH_TIMEOUT`], several at once, so an idle one blocks nobody) are
    /// passed to `refused` and hung up on; the agent keeps listening. A
    /// frame from the coordinator that fails its check stops the run and
    /// ends the session with [`SwarmError::Frame`] (the coordinator is told
    /// why in a last `Failed`).
    pub async fn serve_one(
        &self,
        mut refused: impl FnMut(Refusal),
    ) -> Result<AgentRun, SwarmError> {
        let coordinator = self.authenticated(&mut refused).await?;
        session(coordinator, self.player, self.allow.clone()).await
    }

    /// The first connection whose peer proves the secret.
    async fn authenticated(
        &self,
        refused: &mut impl FnMut(Refusal),
    ) -> Result<Coordinator, SwarmError> {
        let mut proving = JoinSet::new();
        loop {
            tokio::select! {
                accepted = self.listener.accept() => {
                    let (mut stream, peer) =
                        accepted.map_err(SwarmError::io("accepting a coordinator"))?;
                    if proving.len() >= MAX_AUTHENTICATING {
                        refused(Refusal { peer, reason: RefusalReason::Busy });
                        continue;
                    }
                    let _ = stream.set_nodelay(true);
                    let secret = self.secret.clone();
                    proving.spawn(async move {
                        let proof =
                            tokio::time::timeout(AUTH_TIMEOUT, prove_coordinator(&mut stream, &secret))
                                .await
                                .unwrap_or(Err(RefusalReason::Timeout));
                        (peer, proof.map(|keys| (stream, keys)))
                    });
                }
                Some(done) = proving.join_next(), if !proving.is_empty() => match done {
                    Ok((peer, Ok((stream, keys)))) => return Ok(Coordinator { stream, peer, keys }),
                    Ok((peer, Err(reason))) => refused(Refusal { peer, reason }),
                    // A proving task cannot panic; if one did, its peer is gone.
                    Err(_) => {}
                },
            }
        }
    }
}

/// A coordinator that proved the secret: its connection, where it is,
/// and the session's keys.
struct Coordinator {
    stream: TcpStream,
    peer: SocketAddr,
    keys: SessionKeys,
}

fn protocol(e: String) -> SwarmError {
    SwarmError::Protocol(e)
}

/// The error that ends a session whose coordinator at `peer` sent a frame
/// that failed its check.
fn refused_frame(peer: SocketAddr, fault: FrameFault) -> SwarmError {
    SwarmError::Frame {
        peer: format!("coordinator {peer}"),
        fault,
    }
}

/// One coordinator's run on this agent: its plan, the local swarm started
/// on it, the intervals streamed back, the drain and the end.
async fn session(
    coordinator: Coordinator,
    player: MatchPlayer,
    allow: Arc<AllowList>,
) -> Result<AgentRun, SwarmError> {
    let Coordinator { stream, peer, keys } = coordinator;
    let (rx, tx) = stream.into_split();
    let mut rx = FrameReader::new(rx, keys.opener, 0);
    let mut tx = FrameWriter::new(tx, keys.sealer);
    let plan = match rx.recv().await {
        Ok(Message::Start(plan)) => plan,
        Ok(other) => return Err(protocol(format!("expected Start, got {other:?}"))),
        Err(ReadError::Lost(e)) => return Err(protocol(e)),
        Err(ReadError::Refused(fault)) => return Err(refused_frame(peer, fault)),
    };
    let received = Instant::now();
    let start = received + Duration::from_millis(plan.start_in_ms);
    let started = start_swarm(&plan, start, player, allow).await;
    let (scenario, mut swarm) = match started {
        Ok(started) => started,
        Err(e) => {
            let _ = tx.send(&Message::Failed(e.to_string())).await;
            return Err(e);
        }
    };
    tx.send(&Message::Ready).await.map_err(protocol)?;

    // Rate and Stop arrive while the run goes on; a frame that fails its
    // check comes as the last item, and the coordinator gone closes the
    // channel.
    let (rates, mut commands) = tokio::sync::mpsc::unbounded_channel();
    let listen = tokio::spawn(async move {
        loop {
            let item = match rx.recv().await {
                Ok(msg) => Ok(msg),
                Err(ReadError::Refused(fault)) => Err(fault),
                Err(ReadError::Lost(_)) => break,
            };
            let last = item.is_err();
            if rates.send(item).is_err() || last {
                break;
            }
        }
    });
    let mut stream = IntervalStream {
        total: Interval::new(scenario.step_names.len()),
        interval: Interval::new(scenario.step_names.len()),
        seq: 0,
        tx: &mut tx,
        refused: None,
    };
    stream
        .run(&scenario, start, &mut swarm, &mut commands)
        .await?;
    let log = swarm.join().await;
    if let Some(fault) = stream.refused.take() {
        listen.abort();
        // Sealed under the agent's own key, so the coordinator can trust
        // why the agent hangs up (unless the wire eats this frame too).
        let err = refused_frame(peer, fault);
        let _ = tx.send(&Message::Failed(err.to_string())).await;
        return Err(err);
    }
    stream.send(&mut swarm, true).await?;
    let (total, seq) = (stream.total, stream.seq);
    tx.send(&Message::Done).await.map_err(protocol)?;
    listen.abort();
    log?;
    Ok(AgentRun {
        shard: plan.shard.index,
        total,
        intervals: seq,
    })
}

/// The plan's scenario (with its overrides) and this agent's shard of it,
/// started to begin at `start`.
async fn start_swarm(
    plan: &StartPlan,
    start: Instant,
    player: MatchPlayer,
    allow: Arc<AllowList>,
) -> Result<(Arc<Scenario>, LocalSwarm), SwarmError> {
    let mut scenario = Scenario::parse(&plan.scenario, &plan.file)?;
    scenario.apply(&plan.overrides)?;
    let scenario = Arc::new(scenario);
    let swarm = LocalSwarm::start(
        scenario.clone(),
        plan.shard,
        start,
        plan.seed,
        player,
        allow,
    )
    .await?;
    Ok((scenario, swarm))
}

/// The agent's measurements going back to the coordinator, one interval
/// at a time.
struct IntervalStream<'a, W> {
    /// Everything sent so far.
    total: Interval,
    /// The interval being sent (reused).
    interval: Interval,
    /// The next interval's sequence number.
    seq: u32,
    tx: &'a mut FrameWriter<W>,
    /// Why a frame from the coordinator was refused, if one was.
    refused: Option<FrameFault>,
}

impl<W: tokio::io::AsyncWrite + Unpin> IntervalStream<'_, W> {
    /// Sends an interval at every boundary until the scenario's end, taking
    /// the coordinator's rates on the way; a Stop (or the coordinator
    /// gone) ends it early, and so does a refused frame (kept in
    /// `refused`, and no interval is sent after it).
    async fn run(
        &mut self,
        scenario: &Scenario,
        start: Instant,
        swarm: &mut LocalSwarm,
        commands: &mut UnboundedReceiver<Result<Message, FrameFault>>,
    ) -> Result<(), SwarmError> {
        let end = start + scenario.total_duration();
        loop {
            let boundary = (start + scenario.interval * (self.seq + 1)).min(end);
            let sleep = tokio::time::sleep_until(boundary.into());
            tokio::pin!(sleep);
            let mut stopped = false;
            loop {
                tokio::select! {
                    _ = &mut sleep => break,
                    command = commands.recv() => match command {
                        Some(Ok(Message::Rate(rate))) => swarm.set_rate(rate),
                        // Stop, or the coordinator went away: end the run now.
                        Some(Ok(Message::Stop)) | None => {
                            swarm.stop();
                            stopped = true;
                            break;
                        }
                        Some(Ok(_)) => {}
                        Some(Err(fault)) => {
                            swarm.stop();
                            self.refused = Some(fault);
                            return Ok(());
                        }
                    },
                }
            }
            self.send(swarm, false).await?;
            self.seq += 1;
            if boundary >= end || stopped {
                return Ok(());
            }
        }
    }

    /// Collects what `swarm` measured since the last call and sends it as
    /// interval `seq` (`drain`: the last one, after the players stopped).
    async fn send(&mut self, swarm: &mut LocalSwarm, drain: bool) -> Result<(), SwarmError> {
        self.interval.reset();
        swarm.collect(&mut self.interval);
        self.total.add(&self.interval);
        let msg = Message::Interval {
            seq: self.seq,
            drain,
            interval: Box::new(self.interval.clone()),
        };
        self.tx.send(&msg).await.map_err(protocol)
    }
}
