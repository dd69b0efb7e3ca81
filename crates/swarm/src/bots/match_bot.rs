//! [`MatchBot`]: a real client, playing a game's bot (`G::Bot`, from
//! [`BotGame`]) from what it receives, and counting what it saw; the game's
//! bot is also its consistency check. A bot has its own UDP socket, or a
//! seat on its group's [`SharedSocket`], whose group then does its I/O.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use hightick_client::{GameClient, GameClientConfig, UdpClient};
use hightick_engine::events::ReliableEvent;
use hightick_engine::mode::{self, HostedGame, Mode};
use hightick_engine::{Bot, BotGame, Game};
use hightick_net::{ClientState, ConnectToken};

use crate::bots::shared_socket::SharedSocket;
use crate::counters::BotCounters;
use crate::error::SwarmError;
use hightick_client::{Quality, QualityProbe};

/// How match bots play and connect. Game-agnostic: the mode and settings
/// are resolved against the game when a bot binds.
#[derive(Debug, Clone)]
pub struct MatchBotConfig {
    /// The mode the match runs (`None`: the game's first mode).
    pub mode: Option<String>,
    /// The match's settings, as create-match takes them (JSON; `null`: the
    /// mode's own).
    pub settings: serde_json::Value,
    /// Seed of the bots' decisions (each bot mixes in its index).
    pub seed: u64,
    /// Ticks ahead of the estimated server tick that inputs are stamped
    /// with, so they arrive before the server simulates them: at least
    /// this, more on a slow link (the round trip and four times its
    /// variation, plus two ticks), at most `max_input_lead_ticks`.
    pub input_lead_ticks: u32,
    /// The most ticks ahead inputs are stamped (the server holds inputs
    /// up to its `input_window_ticks` ahead and drops the rest).
    pub max_input_lead_ticks: u32,
    /// The client core's settings (world size, tick rate).
    pub client: GameClientConfig,
    /// Where each bot's socket binds (port 0: any).
    pub bind: SocketAddr,
    /// A relay every datagram goes through (the impairment proxy), if any
    /// (see `UdpClient::relay_via`).
    pub via: Option<SocketAddr>,
    /// How far behind its estimate of the server's tick the bot's
    /// [`QualityProbe`] draws entities, in ticks (2: the interpolation
    /// delay Source engines ship, `cl_interp_ratio 2`).
    pub render_delay_ticks: f32,
}

impl Default for MatchBotConfig {
    fn default() -> Self {
        Self {
            mode: None,
            settings: serde_json::Value::Null,
            seed: 1,
            input_lead_ticks: 6,
            max_input_lead_ticks: 63,
            client: GameClientConfig::default(),
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            via: None,
            render_delay_ticks: 2.0,
        }
    }
}

/// The mode called `mode` of game `G` (its first when `None`) and `settings`
/// read as the game's settings (`null`: none). An error names the mode or
/// the field at fault.
pub fn mode_and_settings<G: HostedGame>(
    mode: Option<&str>,
    settings: &serde_json::Value,
) -> Result<(&'static Mode, G::Settings), SwarmError> {
    let found = match mode {
        Some(name) => G::mode(name).ok_or_else(|| {
            SwarmError::Mode(format!(
                "unknown mode `{name}` of {} (known: {})",
                G::NAME,
                mode::names(G::MODES)
            ))
        })?,
        None => G::MODES
            .first()
            .ok_or_else(|| SwarmError::Mode(format!("{} registers no mode", G::NAME)))?,
    };
    let settings = if settings.is_null() {
        G::Settings::default()
    } else {
        serde_path_to_error::deserialize(settings).map_err(|e| {
            SwarmError::Mode(format!(
                "settings of {}: {}: {}",
                found.name,
                e.path(),
                e.inner()
            ))
        })?
    };
    Ok((found, settings))
}

/// A bot's client and how its datagrams travel.
#[derive(Debug)]
enum BotIo<G: Game> {
    /// Its own socket, drained at each tick.
    Own(UdpClient<G>),
    /// Seat `seat` of its group's [`SharedSocket`]: the group hands it what
    /// arrived and sends what it queued.
    Seated { core: GameClient<G>, seat: usize },
}

impl<G: Game> BotIo<G> {
    fn core(&self) -> &GameClient<G> {
        match self {
            Self::Own(client) => client.core(),
            Self::Seated { core, .. } => core,
        }
    }

    fn core_mut(&mut self) -> &mut GameClient<G> {
        match self {
            Self::Own(client) => client.core_mut(),
            Self::Seated { core, .. } => core,
        }
    }

    /// Sends what its own socket's client queued (a seated one's queue is
    /// its group's to send).
    fn flush_own(&mut self) {
        if let Self::Own(client) = self {
            client.flush();
        }
    }
}

/// One match bot: a UDP client, the game's bot and its counters.
#[derive(Debug)]
pub struct MatchBot<G: BotGame> {
    io: BotIo<G>,
    bot: G::Bot,
    counters: BotCounters,
    probe: QualityProbe,
    lead: u32,
    max_lead: u32,
    tick_rate_hz: u32,
    last_tick: u32,
    /// An event that ends the match arrived ([`ReliableEvent::ends_match`]).
    saw_match_end: bool,
}

/// Game `G`'s bot for the `index`th bot of a fleet, in `config`'s mode and
/// settings.
fn game_bot<G: BotGame>(index: u16, config: &MatchBotConfig) -> Result<G::Bot, SwarmError> {
    let (mode, settings) = mode_and_settings::<G>(config.mode.as_deref(), &config.settings)?;
    G::bot(
        mode,
        &settings,
        config.client.tick_rate_hz,
        index,
        config.seed,
    )
    .map_err(SwarmError::Mode)
}

impl<G: BotGame> MatchBot<G> {
    /// Binds the bot's socket; it connects with `token` as it runs. `index`
    /// tells the bots of one fleet apart (seed mix).
    pub async fn bind(
        token: ConnectToken,
        index: u16,
        config: &MatchBotConfig,
    ) -> Result<Self, SwarmError> {
        let bot = game_bot::<G>(index, config)?;
        let mut client = UdpClient::bind(token, config.client.clone(), config.bind).await?;
        if let Some(via) = config.via {
            client.relay_via(via);
        }
        Ok(Self::with_io(BotIo::Own(client), bot, config))
    }

    /// A bot on seat `seat` of its group's [`SharedSocket`] (its servers on
    /// loopback, no relay): the group hands it what arrives
    /// ([`Self::core_mut`]) and ticks it with [`Self::tick_seated`].
    pub(crate) fn seated(
        token: ConnectToken,
        index: u16,
        config: &MatchBotConfig,
        seat: usize,
    ) -> Result<Self, SwarmError> {
        let bot = game_bot::<G>(index, config)?;
        let core = GameClient::with_config(token, config.client.clone(), Instant::now())?;
        Ok(Self::with_io(BotIo::Seated { core, seat }, bot, config))
    }

    fn with_io(mut io: BotIo<G>, bot: G::Bot, config: &MatchBotConfig) -> Self {
        io.core_mut().track_positions(G::replica_position);
        Self {
            io,
            bot,
            counters: BotCounters::default(),
            probe: QualityProbe::new(
                config.client.tick_rate_hz,
                config.render_delay_ticks,
                Instant::now(),
            ),
            lead: config.input_lead_ticks,
            max_lead: config.max_input_lead_ticks.max(config.input_lead_ticks),
            tick_rate_hz: config.client.tick_rate_hz.max(1),
            last_tick: 0,
            saw_match_end: false,
        }
    }

    /// What it counted so far.
    pub fn counters(&self) -> BotCounters {
        self.counters
    }

    /// Snapshot inter-arrival times, microseconds.
    pub fn interarrival(&self) -> &Histogram<u64> {
        self.io.core().snapshot_interarrival()
    }

    /// What a player would have seen (see [`QualityProbe`]).
    pub fn quality(&self) -> &Quality {
        self.probe.quality()
    }

    /// The game's bot.
    pub fn bot(&self) -> &G::Bot {
        &self.bot
    }

    /// The client under the bot.
    pub fn core(&self) -> &GameClient<G> {
        self.io.core()
    }

    /// The client under the bot, to hand it datagrams (a seated bot's group
    /// does).
    pub fn core_mut(&mut self) -> &mut GameClient<G> {
        self.io.core_mut()
    }

    /// Whether the connection is over (closed, timed out, refused).
    pub fn is_disconnected(&self) -> bool {
        matches!(self.io.core().state(), ClientState::Disconnected(_))
    }

    /// Whether the bot learnt that its match is over: an event that ends
    /// the match arrived, or the game's bot says so.
    pub fn match_over(&self) -> bool {
        self.saw_match_end || self.bot.match_over()
    }

    /// One bot tick: network I/O until `deadline` (on its own socket; a
    /// seated bot's I/O is its group's), then read events and check the
    /// world, then send the next input.
    pub async fn tick(&mut self, deadline: Instant) -> Result<(), SwarmError> {
        if let BotIo::Own(client) = &mut self.io {
            client.run_until(deadline).await?;
        }
        self.play();
        self.io.flush_own();
        self.count();
        Ok(())
    }

    /// One bot tick now, without waiting: what arrived since the last one,
    /// then as [`MatchBot::tick`]. For a caller that keeps the schedule of
    /// many bots at once.
    pub fn tick_now(&mut self) {
        if let BotIo::Own(client) = &mut self.io {
            client.poll_now();
        }
        self.play();
        self.io.flush_own();
        self.count();
    }

    /// One tick of a seated bot, after its group handed it what arrived:
    /// its connection's due timers, then as [`MatchBot::tick`], queuing
    /// what it sends on `socket`.
    pub(crate) fn tick_seated(&mut self, socket: &mut SharedSocket) {
        let now = Instant::now();
        let core = self.io.core_mut();
        if core.poll_timeout().is_some_and(|t| t <= now) {
            core.handle_timeout(now);
        }
        self.play();
        self.queue_seated(socket);
        self.count();
    }

    /// Reads events and checks the world, then queues the next input.
    fn play(&mut self) {
        self.read();
        let now = Instant::now();
        self.probe.frame(now, self.io.core());
        self.act(now);
    }

    fn queue_seated(&mut self, socket: &mut SharedSocket) {
        if let BotIo::Seated { core, seat } = &mut self.io {
            socket.queue(core, *seat, Instant::now());
        }
    }

    /// Ticks at the next deadline, one `period` after `next` (or now, when
    /// the bot fell behind: ticks are skipped rather than bunched), never
    /// past `end`. `false` once `end` is reached: the bot's run is over.
    pub async fn tick_on_schedule(
        &mut self,
        next: &mut Instant,
        period: Duration,
        end: Instant,
    ) -> Result<bool, SwarmError> {
        *next += period;
        let now = Instant::now();
        if *next < now {
            *next = now;
        }
        if *next >= end {
            self.tick(end).await?;
            return Ok(false);
        }
        self.tick(*next).await?;
        Ok(true)
    }

    /// Says goodbye to the server (redundant disconnect packets). The
    /// counters keep what they had: a bot closing at the end of its run is
    /// not counted as disconnected.
    pub fn disconnect(&mut self) {
        self.io.core_mut().disconnect();
        self.io.flush_own();
    }

    /// As [`Self::disconnect`], for a seated bot: the goodbye is queued on
    /// its group's `socket`.
    pub(crate) fn disconnect_seated(&mut self, socket: &mut SharedSocket) {
        self.io.core_mut().disconnect();
        self.queue_seated(socket);
    }

    fn read(&mut self) {
        let core = self.io.core_mut();
        while let Some(event) = core.poll_event() {
            self.counters.count_event(event.kind());
            self.saw_match_end |= event.ends_match();
            if !self.bot.observe(&event) {
                core.report_desync();
            }
        }
        let found = self.bot.check_world(core.world());
        for _ in 0..found {
            core.report_desync();
        }
    }

    fn act(&mut self, now: Instant) {
        let core = self.io.core();
        if !core.is_connected() {
            return;
        }
        let Some(estimate) = core.server_tick_estimate(now) else {
            return;
        };
        // The estimate is a one-way delay behind the server and the input
        // takes another to arrive: on a slow link the lead covers the round
        // trip, and its variation.
        let endpoint = core.net().endpoint();
        let path = endpoint.rtt() + 4 * endpoint.rtt_variation();
        let path_ticks = (path.as_secs_f32() * self.tick_rate_hz as f32).ceil() as u32;
        let lead = self.lead.max(path_ticks + 2).min(self.max_lead);
        let tick = (estimate as u32 + lead).max(self.last_tick + 1);
        self.last_tick = tick;
        let command = self.bot.command(core.world(), tick);
        // Not connected any more: nothing to send it to.
        let _ = self.io.core_mut().send_input(command);
    }

    fn count(&mut self) {
        let disconnected = self.is_disconnected();
        let over = self.match_over();
        let core = self.io.core();
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
        c.bytes_in = s.bytes_in;
        c.bytes_out = s.bytes_out;
        c.packets_in = s.packets_in;
        c.packets_out = s.packets_out;
        c.snapshots_dropped = s.snapshots_dropped;
        c.full_resyncs = s.full_resyncs;
        c.events_dropped = s.events_dropped;
        c.matches_over = u64::from(over);
        c.with_avatar = u64::from(core.world().avatar().is_some());
    }
}
