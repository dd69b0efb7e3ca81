//! `hightick swarm agent`: runs the shard of a run a coordinator hands it
//! and streams an interval every interval.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::net::{TcpListener, TcpStream};

use super::wire::{Message, read_message, write_message};
use crate::error::SwarmError;
use crate::interval::Interval;
use crate::play::MatchPlayer;
use crate::run::LocalSwarm;
use crate::scenario::Scenario;

/// An agent listening for a coordinator.
#[derive(Debug)]
pub struct Agent {
    listener: TcpListener,
    player: MatchPlayer,
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
    /// Listens on `listen`; its runs' `play_match` steps play bots of
    /// `player`'s game.
    pub async fn bind(listen: SocketAddr, player: MatchPlayer) -> Result<Self, SwarmError> {
        let listener = TcpListener::bind(listen)
            .await
            .map_err(SwarmError::io(format!("listening on {listen}")))?;
        Ok(Self { listener, player })
    }

    /// Where it listens.
    pub fn local_addr(&self) -> Result<SocketAddr, SwarmError> {
        self.listener
            .local_addr()
            .map_err(SwarmError::io("reading the agent's address"))
    }

    /// Serves one coordinator: runs the shard it is given to its end.
    pub async fn serve_one(&self) -> Result<AgentRun, SwarmError> {
        let (stream, _) = self
            .listener
            .accept()
            .await
            .map_err(SwarmError::io("accepting a coordinator"))?;
        let _ = stream.set_nodelay(true);
        session(stream, self.player).await
    }
}

fn protocol(e: String) -> SwarmError {
    SwarmError::Protocol(e)
}

async fn session(stream: TcpStream, player: MatchPlayer) -> Result<AgentRun, SwarmError> {
    let (mut rx, mut tx) = stream.into_split();
    let (mut rbuf, mut wbuf) = (Vec::new(), Vec::new());
    let plan = match read_message(&mut rx, &mut rbuf, 0)
        .await
        .map_err(protocol)?
    {
        Message::Start(plan) => plan,
        other => return Err(protocol(format!("expected Start, got {other:?}"))),
    };
    let received = Instant::now();
    let scenario = Scenario::parse(&plan.scenario, &plan.file).and_then(|mut s| {
        s.apply(&plan.overrides)?;
        Ok(s)
    });
    let scenario = match scenario {
        Ok(s) => Arc::new(s),
        Err(e) => {
            let _ = write_message(&mut tx, &Message::Failed(e.to_string()), &mut wbuf).await;
            return Err(e);
        }
    };
    let start = received + Duration::from_millis(plan.start_in_ms);
    let mut swarm =
        match LocalSwarm::start(scenario.clone(), plan.shard, start, plan.seed, player).await {
            Ok(s) => s,
            Err(e) => {
                let _ = write_message(&mut tx, &Message::Failed(e.to_string()), &mut wbuf).await;
                return Err(e);
            }
        };
    write_message(&mut tx, &Message::Ready, &mut wbuf)
        .await
        .map_err(protocol)?;

    // Rate and Stop arrive while the run goes on.
    let (rates, mut commands) = tokio::sync::mpsc::unbounded_channel();
    let listen = tokio::spawn(async move {
        let mut buf = Vec::new();
        while let Ok(msg) = read_message(&mut rx, &mut buf, 0).await {
            if rates.send(msg).is_err() {
                break;
            }
        }
    });

    let steps = scenario.step_names.len();
    let mut total = Interval::new(steps);
    let mut interval = Interval::new(steps);
    let end = start + scenario.total_duration();
    let mut seq = 0u32;
    loop {
        let boundary = (start + scenario.interval * (seq + 1)).min(end);
        let sleep = tokio::time::sleep_until(boundary.into());
        tokio::pin!(sleep);
        let mut stopped = false;
        loop {
            tokio::select! {
                _ = &mut sleep => break,
                command = commands.recv() => match command {
                    Some(Message::Rate(rate)) => swarm.set_rate(rate),
                    // Stop, or the coordinator went away: end the run now.
                    Some(Message::Stop) | None => {
                        swarm.stop();
                        stopped = true;
                        break;
                    }
                    Some(_) => {}
                },
            }
        }
        interval.reset();
        swarm.collect(&mut interval);
        total.add(&interval);
        let msg = Message::Interval {
            seq,
            drain: false,
            interval: Box::new(interval.clone()),
        };
        write_message(&mut tx, &msg, &mut wbuf)
            .await
            .map_err(protocol)?;
        seq += 1;
        if boundary >= end || stopped {
            break;
        }
    }
    let log = swarm.join().await;
    interval.reset();
    swarm.collect(&mut interval);
    total.add(&interval);
    let drain = Message::Interval {
        seq,
        drain: true,
        interval: Box::new(interval),
    };
    write_message(&mut tx, &drain, &mut wbuf)
        .await
        .map_err(protocol)?;
    write_message(&mut tx, &Message::Done, &mut wbuf)
        .await
        .map_err(protocol)?;
    listen.abort();
    log?;
    Ok(AgentRun {
        shard: plan.shard.index,
        total,
        intervals: seq,
    })
}
