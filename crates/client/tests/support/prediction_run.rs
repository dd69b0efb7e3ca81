//! Arena players predicting their own moves against the in-process host over
//! a simulated link (latency each way, random loss, both directions), on a
//! virtual clock: the prediction test and the prediction bench share it.

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use hightick_arena::game::Arena;
use hightick_arena::input::ArenaInput;
use hightick_arena::motion::wander_input;
use hightick_client::{GameClient, PredictionConfig, Predictor};
use hightick_net::sim_link::{SimLink, SimLinkConfig};
use hightick_net::wire::MAX_PACKET_BYTES;
use hightick_proto::InputCommand;

use super::{Host, PERIOD, SERVER, client_address};

/// One run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PredictionRun {
    /// Round trip of the link (half each way).
    pub rtt: Duration,
    /// Loss in each direction.
    pub loss: f32,
    /// Extra delay each way, drawn uniformly from `0..=jitter` per datagram.
    pub jitter: Duration,
    /// Predicting players.
    pub players: usize,
    /// Virtual seconds played.
    pub seconds: u32,
    /// Seed of the links.
    pub seed: u64,
    /// Holds every player's uplink for this many ticks once, half-way: the
    /// server repeats their last input meanwhile (a forced misprediction).
    pub stall_ticks: u32,
}

/// What the players' predictors counted, summed.
#[derive(Debug)]
pub(crate) struct PredictionOutcome {
    /// Authoritative states compared with a prediction.
    pub compared: u64,
    /// Of those, mispredicted.
    pub mispredicted: u64,
    /// States taken without comparison (first, respawns, too old).
    pub resets: u64,
    /// Correction distances, micrometres.
    pub correction_um: Histogram<u64>,
    /// Bytes each client received per second, mean.
    pub bytes_in_per_s: f64,
    /// Metres the predicted players travelled, summed.
    pub travelled_m: f64,
    /// Whether, at the end, each player's newest authoritative motion was
    /// the one predicted for its tick.
    pub agree_at_end: Vec<bool>,
}

/// The input of player `p` at tick `t`: the arena's scripted wander, each
/// player at its own phase and pace.
pub(crate) fn wander(p: usize, t: u32) -> ArenaInput {
    wander_input(t + p as u32 * 211, 0.0123 + p as f32 * 0.001)
}

pub(crate) fn run(cfg: PredictionRun) -> PredictionOutcome {
    let start = Instant::now();
    let mut host = Host::new(cfg.players, start);
    let stage = host.game.game().stage().clone();
    let mut clients: Vec<GameClient<Arena>> =
        (0..cfg.players).map(|i| host.client(i as u64)).collect();
    let mut predictors: Vec<Predictor<Arena>> = (0..cfg.players)
        .map(|_| Predictor::new(stage.clone(), 128, PredictionConfig::default()))
        .collect();
    let link = |direction: u64, i: usize| {
        SimLink::new(SimLinkConfig {
            loss: cfg.loss,
            latency: cfg.rtt / 2,
            jitter: cfg.jitter,
            seed: cfg.seed ^ (direction << 32) ^ i as u64,
            capacity: 4096,
            ..SimLinkConfig::default()
        })
    };
    let mut up: Vec<SimLink> = (0..cfg.players).map(|i| link(1, i)).collect();
    let mut down: Vec<SimLink> = (0..cfg.players).map(|i| link(2, i)).collect();
    let mut last_tick = vec![0u32; cfg.players];
    let mut last_position: Vec<Option<[f32; 3]>> = vec![None; cfg.players];
    let mut travelled_m = 0.0f64;
    let server = SERVER.parse().unwrap();
    let mut buf = vec![0u8; MAX_PACKET_BYTES];
    let steps = cfg.seconds * 128;
    let stall = steps / 2..steps / 2 + cfg.stall_ticks;
    for step in 0..steps {
        let now = host.now;
        for i in 0..cfg.players {
            let c = &mut clients[i];
            // Snapshots in, then reconcile, then this frame's input.
            while let Some(n) = down[i].poll_deliver(now, &mut buf) {
                c.handle_datagram(now, server, &mut buf[..n]);
            }
            if c.poll_timeout().is_some_and(|t| t <= now) {
                c.handle_timeout(now);
            }
            while c.poll_event().is_some() {}
            predictors[i].reconcile(c.world());
            if let Some(estimate) = c.server_tick_estimate(now) {
                let e = c.net().endpoint();
                let path = e.rtt() + 4 * e.rtt_variation();
                let lead = ((path.as_secs_f32() * 128.0).ceil() as u32 + 2).max(6);
                let tick = (estimate as u32 + lead).max(last_tick[i] + 1);
                last_tick[i] = tick;
                let command = InputCommand::new(tick, estimate as u32, wander(i, tick));
                predictors[i].predict(&command);
                let _ = c.send_input(command);
            }
            let position = predictors[i]
                .motion()
                .map(|(_, m)| m.state.position.to_array());
            if let (Some(a), Some(b)) = (last_position[i], position) {
                let d: f32 = (0..3).map(|k| (a[k] - b[k]) * (a[k] - b[k])).sum();
                travelled_m += f64::from(d.sqrt());
            }
            last_position[i] = position;
            while let Some(t) = c.poll_transmit(now, &mut buf) {
                if !stall.contains(&step) {
                    up[i].send(now, &buf[..t.len]);
                }
            }
            while let Some(n) = up[i].poll_deliver(now, &mut buf) {
                host.receive(i, &mut buf[..n]);
            }
        }
        host.tick();
        for (i, link) in down.iter_mut().enumerate() {
            for d in host.take_outbox(client_address(i)) {
                link.send(now, &d);
            }
        }
        host.now += PERIOD;
    }
    let mut correction_um = Histogram::new(3).unwrap();
    let (mut compared, mut mispredicted, mut resets) = (0, 0, 0);
    let mut agree_at_end = Vec::new();
    for (p, c) in predictors.iter().zip(&clients) {
        let s = p.stats();
        compared += s.compared;
        mispredicted += s.mispredicted;
        resets += s.resets;
        correction_um.add(&s.correction_um).unwrap();
        agree_at_end.push(p.agrees_with(c.world()));
    }
    let bytes_in: u64 = clients.iter().map(|c| c.stats().bytes_in).sum();
    PredictionOutcome {
        bytes_in_per_s: bytes_in as f64 / cfg.players as f64 / f64::from(cfg.seconds),
        compared,
        mispredicted,
        resets,
        correction_um,
        travelled_m,
        agree_at_end,
    }
}
