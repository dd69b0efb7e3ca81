//! [`MatchBot`]: a real client with its own UDP socket, playing the arena
//! bot behaviour from what it receives, checking and counting it.

use std::net::SocketAddr;
use std::time::Instant;

use hdrhistogram::Histogram;
use hightick_arena::Map;
use hightick_arena::bot::{Bot, BotStyle};
use hightick_arena::game::ArenaReplica;
use hightick_client::{GameClientConfig, UdpClient};
use hightick_engine::PlayerId;
use hightick_net::{ClientState, ConnectToken};

use crate::consistency::Consistency;
use crate::counters::BotCounters;
use crate::error::SwarmError;
use crate::view::Knowledge;

/// How match bots play and connect.
#[derive(Debug, Clone)]
pub struct MatchBotConfig {
    /// The arena map the match runs on (for spawn points).
    pub map: String,
    /// How the bots play.
    pub style: BotStyle,
    /// Seed of the bots' decisions (each bot mixes in its index).
    pub seed: u64,
    /// Ticks ahead of the estimated server tick that inputs are stamped
    /// with, so they arrive before the server simulates them.
    pub input_lead_ticks: u32,
    /// The client core's settings (world size, tick rate).
    pub client: GameClientConfig,
    /// Where each bot's socket binds (port 0: any).
    pub bind: SocketAddr,
}

impl Default for MatchBotConfig {
    fn default() -> Self {
        Self {
            map: hightick_arena::game::ArenaConfig::default().map,
            style: BotStyle::default(),
            seed: 1,
            input_lead_ticks: 6,
            client: GameClientConfig::default(),
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
        }
    }
}

/// One match bot: a UDP client, what the events told it, the arena bot, its checks and counters.
#[derive(Debug)]
pub struct MatchBot {
    client: UdpClient<ArenaReplica>,
    knowledge: Knowledge,
    bot: Bot,
    consistency: Consistency,
    counters: BotCounters,
    lead: u32,
    last_tick: u32,
}

impl MatchBot {
    /// Binds the bot's socket; it connects with `token` as it runs. `index`
    /// tells the bots of one fleet apart (seed mix, crouch rhythm).
    pub async fn bind(
        token: ConnectToken,
        index: u16,
        config: &MatchBotConfig,
    ) -> Result<Self, SwarmError> {
        let map = Map::builtin(&config.map)?;
        let entities = config.client.entities;
        let client = UdpClient::bind(token, config.client.clone(), config.bind).await?;
        Ok(Self {
            client,
            knowledge: Knowledge::new(map),
            bot: Bot::new(PlayerId(index), config.seed, config.style),
            consistency: Consistency::new(entities),
            counters: BotCounters::default(),
            lead: config.input_lead_ticks,
            last_tick: 0,
        })
    }

    /// What it counted so far.
    pub fn counters(&self) -> BotCounters {
        self.counters
    }

    /// Snapshot inter-arrival times, microseconds.
    pub fn interarrival(&self) -> &Histogram<u64> {
        self.client.core().snapshot_interarrival()
    }

    /// What the events told it.
    pub fn knowledge(&self) -> &Knowledge {
        &self.knowledge
    }

    /// The client under the bot.
    pub fn client(&self) -> &UdpClient<ArenaReplica> {
        &self.client
    }

    /// Whether the connection is over (closed, timed out, refused).
    pub fn is_disconnected(&self) -> bool {
        matches!(self.client.core().state(), ClientState::Disconnected(_))
    }

    /// One bot tick: network I/O until `deadline`, then read events and
    /// check the world, then send the next input.
    pub async fn tick(&mut self, deadline: Instant) -> Result<(), SwarmError> {
        self.client.run_until(deadline).await?;
        self.read();
        self.act(Instant::now());
        self.client.flush();
        self.count();
        Ok(())
    }

    /// Says goodbye to the server (redundant disconnect packets). The
    /// counters keep what they had: a bot closing at the end of its run is
    /// not counted as disconnected.
    pub fn disconnect(&mut self) {
        self.client.core_mut().disconnect();
        self.client.flush();
    }

    fn read(&mut self) {
        let core = self.client.core_mut();
        while let Some(event) = core.poll_event() {
            self.counters.count_event(&event);
            if !self.consistency.check_event(&event) {
                core.report_desync();
            }
            self.knowledge.observe(&event);
        }
        let found = self
            .consistency
            .check_world(core.world(), self.knowledge.team());
        for _ in 0..found {
            core.report_desync();
        }
    }

    fn act(&mut self, now: Instant) {
        let core = self.client.core();
        if !core.is_connected() {
            return;
        }
        let Some(estimate) = core.server_tick_estimate(now) else {
            return;
        };
        let tick = (estimate as u32 + self.lead).max(self.last_tick + 1);
        self.last_tick = tick;
        let command = self.bot.command(&self.knowledge.sight(core.world()), tick);
        // Not connected any more: nothing to send it to.
        let _ = self.client.core_mut().send_input(command);
    }

    fn count(&mut self) {
        let disconnected = self.is_disconnected();
        let core = self.client.core();
        let s = core.stats();
        let c = &mut self.counters;
        if core.is_connected() {
            c.connected = 1;
        }
        c.disconnected = u64::from(c.connected == 1 && disconnected);
        c.snapshots = s.snapshots_applied;
        c.decode_errors = s.decode_errors;
        c.desyncs = s.desyncs;
        c.resyncs_requested = s.resyncs_requested;
        c.unknown_entities = self.consistency.unknown_entities();
        c.dead_moved = self.consistency.dead_moved();
        c.bytes_in = s.bytes_in;
        c.bytes_out = s.bytes_out;
        c.packets_in = s.packets_in;
        c.packets_out = s.packets_out;
    }
}
