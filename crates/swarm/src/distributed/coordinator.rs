//! `hightick swarm run --agents a,b`: the coordinator hands each agent its
//! shard, merges their intervals as they stream in, runs pacing on the
//! merged measurements and sends the rate back, and writes the result. An
//! agent that goes away is reported and the run goes on without it; a
//! frame that fails its check ([`frame`](super::frame)) ends the run with
//! [`SwarmError::Frame`], since what it carried cannot be trusted.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::net::TcpStream;
use tokio::net::tcp::OwnedWriteHalf;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use super::agent::AUTH_TIMEOUT;
use super::auth::{SharedSecret, prove_agent};
use super::frame::{FrameFault, FrameReader, FrameWriter, ReadError};
use super::wire::{Message, StartPlan};
use crate::aggregate::{Aggregate, Progress};
use crate::driver::Shard;
use crate::error::SwarmError;
use crate::interval::Interval;
use crate::result::RunResult;
use crate::scenario::{Overrides, Scenario};

/// How long agents get between the start message and the run's start.
const START_DELAY: Duration = Duration::from_millis(1_000);

enum Event {
    Message(usize, Message),
    Gone(usize, String),
    /// A frame from the agent failed its check.
    Refused(usize, FrameFault),
}

/// The half the coordinator writes an agent's frames to.
type AgentWriter = FrameWriter<OwnedWriteHalf>;

/// The error that ends a run when agent `addr` sent a frame that failed
/// its check.
fn refused_frame(addr: &str, fault: FrameFault) -> SwarmError {
    SwarmError::Frame {
        peer: format!("agent {addr}"),
        fault,
    }
}

struct Pending {
    merged: Interval,
    from: usize,
}

/// Runs `scenario` (with `overrides`) on `agents` (`host:port` each),
/// calling `observe` after every merged interval. An agent that does not
/// accept yet is tried again for up to `connect_wait` (agents on a cluster
/// come up in their own time). Each agent and this coordinator prove to
/// each other that they hold `secret` before the scenario is sent.
pub async fn run_distributed(
    scenario: Arc<Scenario>,
    overrides: &Overrides,
    agents: &[String],
    secret: &SharedSecret,
    connect_wait: Duration,
    stop: Arc<AtomicBool>,
    observe: impl FnMut(&Progress),
) -> Result<RunResult, SwarmError> {
    if agents.is_empty() {
        return Err(SwarmError::Protocol("no agents".to_owned()));
    }
    let n = agents.len();
    let seed: u64 = rand::random();
    let mut writers: Vec<Option<AgentWriter>> = Vec::with_capacity(n);
    let (events, inbox) = tokio::sync::mpsc::unbounded_channel();
    for (i, addr) in agents.iter().enumerate() {
        let plan = StartPlan {
            scenario: scenario.text.clone(),
            file: scenario.file.clone(),
            overrides: overrides.clone(),
            shard: Shard {
                index: i as u32,
                count: n as u32,
            },
            start_in_ms: START_DELAY.as_millis() as u64,
            seed,
        };
        let link = AgentLink {
            index: i,
            addr,
            steps: scenario.step_names.len(),
        };
        writers.push(Some(
            link.start(plan, secret, connect_wait, events.clone())
                .await?,
        ));
    }
    drop(events);
    let merger = Merger {
        aggregate: Aggregate::new(&scenario, n as u32),
        pending: BTreeMap::new(),
        live: n,
        last_t: Duration::ZERO,
        writers,
        scenario: &scenario,
        agents,
    };
    merger.run(inbox, &stop, observe).await
}

/// One agent, as the coordinator starts it.
struct AgentLink<'a> {
    index: usize,
    addr: &'a String,
    /// The scenario's steps (an interval's width).
    steps: usize,
}

impl AgentLink<'_> {
    /// Connects, authenticates both ways, sends the agent its `plan` and
    /// waits for it to be ready; then a task forwards its messages to
    /// `events`. The half to write to it comes back.
    async fn start(
        &self,
        plan: StartPlan,
        secret: &SharedSecret,
        connect_wait: Duration,
        events: UnboundedSender<Event>,
    ) -> Result<AgentWriter, SwarmError> {
        let addr = self.addr;
        let mut stream = connect(addr, connect_wait).await?;
        let _ = stream.set_nodelay(true);
        let auth = |reason: String| SwarmError::Auth {
            agent: addr.clone(),
            reason,
        };
        let keys = tokio::time::timeout(AUTH_TIMEOUT, prove_agent(&mut stream, secret))
            .await
            .map_err(|_| auth("did not authenticate in time".to_owned()))?
            .map_err(auth)?;
        let (rx, tx) = stream.into_split();
        let mut rx = FrameReader::new(rx, keys.opener, self.steps);
        let mut tx = FrameWriter::new(tx, keys.sealer);
        tx.send(&Message::Start(plan))
            .await
            .map_err(|e| SwarmError::Protocol(format!("agent {addr}: {e}")))?;
        match rx.recv().await {
            Ok(Message::Ready) => {}
            Ok(Message::Failed(why)) => {
                return Err(SwarmError::Protocol(format!("agent {addr}: {why}")));
            }
            Ok(other) => {
                return Err(SwarmError::Protocol(format!(
                    "agent {addr}: expected Ready, got {other:?}"
                )));
            }
            Err(ReadError::Lost(e)) => {
                return Err(SwarmError::Protocol(format!("agent {addr}: {e}")));
            }
            Err(ReadError::Refused(fault)) => return Err(refused_frame(addr, fault)),
        }
        let i = self.index;
        tokio::spawn(async move {
            loop {
                match rx.recv().await {
                    Ok(msg) => {
                        let done = matches!(msg, Message::Done);
                        if events.send(Event::Message(i, msg)).is_err() || done {
                            break;
                        }
                    }
                    Err(e) => {
                        let _ = events.send(match e {
                            ReadError::Lost(why) => Event::Gone(i, why),
                            ReadError::Refused(fault) => Event::Refused(i, fault),
                        });
                        break;
                    }
                }
            }
        });
        Ok(tx)
    }
}

/// Merges the agents' intervals in order, paces on the merged figures and
/// sends the rate back, until every agent still connected is done.
struct Merger<'a> {
    aggregate: Aggregate,
    /// Intervals not yet complete (some agent has not sent its part), by
    /// sequence number.
    pending: BTreeMap<u32, Pending>,
    /// Agents still connected.
    live: usize,
    /// The end of the last interval merged.
    last_t: Duration,
    writers: Vec<Option<AgentWriter>>,
    scenario: &'a Scenario,
    agents: &'a [String],
}

impl Merger<'_> {
    async fn run(
        mut self,
        mut inbox: UnboundedReceiver<Event>,
        stop: &AtomicBool,
        mut observe: impl FnMut(&Progress),
    ) -> Result<RunResult, SwarmError> {
        if let Some(rate) = self.aggregate.rate() {
            self.broadcast(&Message::Rate(rate)).await;
        }
        let mut done = 0;
        let mut stop_sent = false;
        let mut ticker = tokio::time::interval(Duration::from_millis(200));
        while done < self.live {
            let event = tokio::select! {
                e = inbox.recv() => e,
                _ = ticker.tick() => {
                    if stop.load(Ordering::Relaxed) && !stop_sent {
                        stop_sent = true;
                        self.broadcast(&Message::Stop).await;
                    }
                    continue;
                }
            };
            let Some(event) = event else { break };
            match event {
                Event::Message(
                    _,
                    Message::Interval {
                        drain: true,
                        interval,
                        ..
                    },
                ) => {
                    self.aggregate.absorb(&interval);
                }
                Event::Message(_, Message::Interval { seq, interval, .. }) => {
                    self.add(seq, &interval, &mut observe).await;
                }
                Event::Message(_, Message::Done) => done += 1,
                // The agent gave up on the session (e.g. it refused one of
                // our frames): what the run measured is incomplete.
                Event::Message(i, Message::Failed(why)) => {
                    return Err(SwarmError::Protocol(format!(
                        "agent {} ended the session: {why}",
                        self.agents[i]
                    )));
                }
                Event::Message(i, other) => {
                    return Err(SwarmError::Protocol(format!(
                        "agent {}: unexpected {other:?}",
                        self.agents[i]
                    )));
                }
                Event::Refused(i, fault) => {
                    return Err(refused_frame(&self.agents[i], fault));
                }
                Event::Gone(i, why) => {
                    eprintln!("hightick swarm: agent {} lost: {why}", self.agents[i]);
                    self.writers[i] = None;
                    self.live -= 1;
                }
            }
        }
        // Whatever is still incomplete goes in as it is.
        for (seq, p) in std::mem::take(&mut self.pending) {
            self.last_t = self.scenario.interval * (seq + 1);
            self.aggregate.push(self.last_t, &p.merged);
        }
        Ok(self.aggregate.finish(self.last_t))
    }

    /// One agent's part of interval `seq`. Complete intervals go in in
    /// order; one that waits on a lost or late agent goes in once a later
    /// one is complete.
    async fn add(&mut self, seq: u32, interval: &Interval, observe: &mut impl FnMut(&Progress)) {
        let steps = self.scenario.step_names.len();
        let entry = self.pending.entry(seq).or_insert_with(|| Pending {
            merged: Interval::new(steps),
            from: 0,
        });
        entry.merged.add(interval);
        entry.from += 1;
        while let Some((&first, p)) = self.pending.first_key_value() {
            let complete = p.from >= self.live;
            let overtaken = self
                .pending
                .range(first + 1..)
                .any(|(_, q)| q.from >= self.live);
            if !(complete || overtaken) {
                break;
            }
            let Some((seq, p)) = self.pending.pop_first() else {
                break;
            };
            self.last_t = self.scenario.interval * (seq + 1);
            if let Some(rate) = self.aggregate.push(self.last_t, &p.merged) {
                self.broadcast(&Message::Rate(rate)).await;
            }
            observe(&self.aggregate.progress(self.last_t));
        }
    }

    async fn broadcast(&mut self, message: &Message) {
        broadcast(&mut self.writers, message).await;
    }
}

async fn connect(addr: &str, wait: Duration) -> Result<TcpStream, SwarmError> {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        match TcpStream::connect(addr).await {
            Ok(s) => return Ok(s),
            Err(e) if tokio::time::Instant::now() >= deadline => {
                return Err(SwarmError::Io {
                    what: format!("connecting to agent {addr}"),
                    source: e,
                });
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(500)).await,
        }
    }
}

async fn broadcast(writers: &mut [Option<AgentWriter>], msg: &Message) {
    for w in writers.iter_mut() {
        if let Some(tx) = w
            && tx.send(msg).await.is_err()
        {
            *w = None;
        }
    }
}
