//! What a capacity plan starts from: the [`Target`] (players, mode, rates, the
//! meta-game mix), the [`Deployment`]'s shape (cores per pod, headroom, the
//! autoscaler's sync), and the measured [`Figures`] it scales by, each [`Measured`]
//! value naming its [`Source`]. A rehearsal can fill these by hand: nothing here
//! reads a database.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::error::LabError;
use crate::plan::rehearsal::Rehearsal;
use crate::summary::{GPC_HEADROOM, HostFacts, figure_token};

/// Which store the service runs on: the figures of that backend are used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StoreBackend {
    /// Embedded SQLite.
    Sqlite,
    /// PostgreSQL.
    Postgres,
}

impl StoreBackend {
    /// `sqlite` or `postgres`, as FIGURE names spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            StoreBackend::Sqlite => "sqlite",
            StoreBackend::Postgres => "postgres",
        }
    }
}

/// What the plan must carry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Target {
    /// Concurrent players, all counted as in a match (the plan's upper bound).
    pub ccu: u64,
    /// The game mode, e.g. `5v5`.
    pub mode: String,
    /// Players per match of the mode.
    pub players_per_match: u32,
    /// The mode's tick rate.
    pub tick_rate_hz: u32,
    /// Peak logins per second.
    pub login_rate_per_s: f64,
    /// Meta-game requests per player per minute.
    pub requests_per_player_min: f64,
    /// Of those, purchases (ledger writes) per player per minute.
    pub purchases_per_player_min: f64,
    /// How long a match lasts, minutes (a design figure, not measured).
    pub match_minutes: f64,
    /// The store the service runs on.
    pub store: StoreBackend,
}

impl Target {
    /// Checks every field; the error names the flag at fault.
    pub fn validate(&self) -> Result<(), LabError> {
        let positive = |field: &'static str, v: f64| {
            if v > 0.0 && v.is_finite() {
                Ok(())
            } else {
                Err(LabError::config(field, format!("must be above 0, not {v}")))
            }
        };
        if self.ccu == 0 {
            return Err(LabError::config("--ccu", "must be at least 1"));
        }
        if self.mode.is_empty() {
            return Err(LabError::config("--mode", "names no mode"));
        }
        positive("players per match", f64::from(self.players_per_match))?;
        positive("--tick-rate", f64::from(self.tick_rate_hz))?;
        positive("--login-rate", self.login_rate_per_s)?;
        positive("--requests-per-player-min", self.requests_per_player_min)?;
        positive("--match-minutes", self.match_minutes)?;
        if !(self.purchases_per_player_min >= 0.0
            && self.purchases_per_player_min <= self.requests_per_player_min)
        {
            return Err(LabError::config(
                "--purchases-per-player-min",
                "must be from 0 to --requests-per-player-min",
            ));
        }
        Ok(())
    }
}

/// The deployment's shape: choices, not measurements. The defaults are those of
/// `deploy/base` (2 cores per GameServer and per swarm agent, 1 per gateway pod, the
/// FleetAutoscaler's 10 s sync) and the sweep's 10% CPU headroom.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Deployment {
    /// CPU cores one GameServer pod requests.
    pub gameserver_cores: u32,
    /// CPU cores one gateway replica requests.
    pub gateway_cores: u32,
    /// CPU cores one swarm agent requests.
    pub agent_cores: u32,
    /// Share of CPU kept free on gateways and agents (game servers: the sweep's).
    pub cpu_headroom: f64,
    /// The FleetAutoscaler's sync interval, seconds.
    pub autoscaler_sync_s: f64,
    /// How often a gateway runs a matchmaking pass, seconds (the gateway's
    /// `PASS_EVERY`, crates/gateway/src/matchmaking.rs).
    pub matchmaking_pass_s: f64,
    /// How often a host tells the gateways what it runs, seconds (the host's
    /// `heartbeat_s`, crates/server/src/config.rs): a seat a match frees is
    /// free to the matchmaker from the host's next heartbeat.
    pub host_heartbeat_s: f64,
    /// Matches a gateway's matchmaking pass allocates at once (its
    /// `matchmaking.parallel_allocations`, crates/gateway/src/queue/rules.rs):
    /// the model's low end seats the tickets of the oldest that many alike
    /// (a match is filled by rating, not age).
    pub parallel_allocations: u32,
}

impl Default for Deployment {
    fn default() -> Self {
        Deployment {
            gameserver_cores: 2,
            gateway_cores: 1,
            agent_cores: 2,
            cpu_headroom: 1.0 - GPC_HEADROOM,
            autoscaler_sync_s: 10.0,
            matchmaking_pass_s: 0.5,
            host_heartbeat_s: 2.0,
            parallel_allocations: 64,
        }
    }
}

impl Deployment {
    /// Checks every field; the error names the flag at fault.
    pub fn validate(&self) -> Result<(), LabError> {
        for (field, v) in [
            ("--gameserver-cores", self.gameserver_cores),
            ("--gateway-cores", self.gateway_cores),
            ("--agent-cores", self.agent_cores),
        ] {
            if v == 0 {
                return Err(LabError::config(field, "must be at least 1"));
            }
        }
        if !(0.0..0.9).contains(&self.cpu_headroom) {
            return Err(LabError::config(
                "--headroom",
                "must be from 0 to 90 percent",
            ));
        }
        if !(self.autoscaler_sync_s >= 0.0 && self.autoscaler_sync_s.is_finite()) {
            return Err(LabError::config(
                "--autoscaler-sync",
                "must not be negative",
            ));
        }
        Ok(())
    }
}

/// A kind of machine: figures from another CPU model are another machine's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Machine {
    /// CPU model, e.g. `AMD EPYC 7B13 64-Core Processor`.
    pub cpu_model: String,
    /// Logical CPUs it had.
    pub cores: u32,
}

impl Machine {
    /// The machine of a run's host facts.
    pub fn of(host: &HostFacts) -> Machine {
        Machine {
            cpu_model: host.cpu_model.clone(),
            cores: host.cores,
        }
    }

    /// Whether both are the same kind of machine (the same CPU model).
    pub fn same_kind(&self, other: &Machine) -> bool {
        self.cpu_model == other.cpu_model
    }
}

impl std::fmt::Display for Machine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}, {} CPUs", self.cpu_model, self.cores)
    }
}

/// Where a measured figure came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Source {
    /// The command that measured it, as a person would rerun it.
    pub command: String,
    /// The FIGURE (or report field) it was read from.
    pub figure: String,
    /// Its run in the history, when it came from there.
    pub run_id: Option<i64>,
    /// The commit measured, when known.
    pub commit: Option<String>,
    /// The machine it ran on.
    pub machine: Machine,
    /// `debug` or `release`, when the history knows it (a lab run; a recorded
    /// bench's output does not say).
    pub build_profile: Option<String>,
    /// When it was recorded, ms since the Unix epoch.
    pub recorded_at_ms: i64,
}

/// One measured value and its source.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measured {
    /// The value.
    pub value: f64,
    /// Its unit.
    pub unit: String,
    /// Where it came from.
    pub source: Source,
}

/// A measured figure the plan scales by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Need {
    /// 5v5-style matches one core carries within budget with CPU headroom (`lab sweep`).
    GamesPerCore,
    /// Match bots one swarm core drives (`swarm_match_bots_per_core`).
    MatchBotsPerCore,
    /// Meta-game requests one gateway core serves.
    GatewayRequestsPerCore,
    /// Push WebSockets one gateway replica holds.
    WebSocketsPerReplica,
    /// Guest logins one gateway core admits per second.
    LoginsPerCore,
    /// Match results (with their ledger rows) the store commits per second.
    StoreResultsPerS,
    /// Purchases (ledger writes) the store commits per second.
    StorePurchasesPerS,
    /// Players the shared matchmaking queue claims per second.
    MatchmakingPlayersPerS,
    /// Meta-game requests one swarm core makes per second.
    SwarmRequestsPerCore,
    /// A GameServer's start to Ready (the Agones bench).
    GameServerStartMs,
}

impl Need {
    /// Every figure a plan uses, in the order the plan uses them.
    pub const ALL: [Need; 10] = [
        Need::GamesPerCore,
        Need::GatewayRequestsPerCore,
        Need::WebSocketsPerReplica,
        Need::LoginsPerCore,
        Need::StoreResultsPerS,
        Need::StorePurchasesPerS,
        Need::MatchmakingPlayersPerS,
        Need::MatchBotsPerCore,
        Need::SwarmRequestsPerCore,
        Need::GameServerStartMs,
    ];

    /// Its name in JSON and in the plan's `from` column.
    pub fn key(self) -> &'static str {
        match self {
            Need::GamesPerCore => "games_per_core",
            Need::MatchBotsPerCore => "match_bots_per_core",
            Need::GatewayRequestsPerCore => "gateway_requests_per_core",
            Need::WebSocketsPerReplica => "websockets_per_replica",
            Need::LoginsPerCore => "logins_per_core",
            Need::StoreResultsPerS => "store_results_per_s",
            Need::StorePurchasesPerS => "store_purchases_per_s",
            Need::MatchmakingPlayersPerS => "matchmaking_players_per_s",
            Need::SwarmRequestsPerCore => "swarm_requests_per_core",
            Need::GameServerStartMs => "gameserver_start_ms",
        }
    }

    /// The FIGURE name that carries it for `target` (`*` stands for any text).
    pub fn figure(self, target: &Target) -> String {
        let store = target.store.as_str();
        match self {
            Need::GamesPerCore => format!(
                "lab_gpc_{}_{}hz",
                figure_token(&target.mode),
                target.tick_rate_hz
            ),
            Need::MatchBotsPerCore => "swarm_match_bots_per_core".into(),
            Need::GatewayRequestsPerCore => format!("meta_{store}_*_req_per_gateway_core"),
            Need::WebSocketsPerReplica => "ws_held_sockets".into(),
            Need::LoginsPerCore => "gateway_guest_logins_per_core_s".into(),
            Need::StoreResultsPerS => format!("store_{store}_match_result_batched"),
            Need::StorePurchasesPerS => format!("store_{store}_purchase_concurrent16"),
            Need::MatchmakingPlayersPerS => format!("mm_{store}_{}_players_per_s", target.mode),
            Need::SwarmRequestsPerCore => "swarm_rps_per_core".into(),
            Need::GameServerStartMs => "agones_start_to_ready_ms".into(),
        }
    }

    /// How to measure it into the history: a lab sweep records itself; a bench's
    /// output is piped to `hightick lab record`.
    pub fn record_command(self, target: &Target) -> String {
        let command = self.command(target);
        match self {
            Need::GamesPerCore | Need::MatchBotsPerCore => command,
            _ => format!("{command} | hightick lab record --command '{command}'"),
        }
    }

    /// Whether a FIGURE line named `name` carries it for `target`.
    pub fn matches(self, target: &Target, name: &str) -> bool {
        let pattern = self.figure(target);
        match pattern.split_once('*') {
            Some((head, tail)) => {
                name.len() > head.len() + tail.len()
                    && name.starts_with(head)
                    && name.ends_with(tail)
            }
            None => name == pattern,
        }
    }

    /// The command that measures it (to record: `... | hightick lab record --command '...'`,
    /// or for a sweep `--record`).
    pub fn command(self, target: &Target) -> String {
        let pg = match target.store {
            StoreBackend::Postgres => "HIGHTICK_TEST_DATABASE_URL=postgres://... ",
            StoreBackend::Sqlite => "",
        };
        match self {
            Need::GamesPerCore | Need::MatchBotsPerCore => format!(
                "hightick lab sweep --mode {} --max 64 --record",
                target.mode
            ),
            Need::GatewayRequestsPerCore => match target.store {
                StoreBackend::Sqlite => {
                    "scenarios/meta-game-run.sh target/release/hightick 20000 30 60".into()
                }
                StoreBackend::Postgres => {
                    "scenarios/meta-game-run.sh target/release/hightick 20000 30 60 postgres://...".into()
                }
            },
            Need::WebSocketsPerReplica => "cargo bench -p hightick-gateway --bench ws_hold".into(),
            Need::LoginsPerCore => "cargo bench -p hightick-gateway --bench gateway".into(),
            Need::StoreResultsPerS | Need::StorePurchasesPerS => {
                format!("{pg}cargo bench -p hightick-store --bench store_ops")
            }
            Need::MatchmakingPlayersPerS => {
                format!("{pg}cargo bench -p hightick-gateway --bench matchmaking_queue")
            }
            Need::SwarmRequestsPerCore => {
                "hightick swarm selftest --users 512 --every 0s --ramp-up 2s --duration 20s --connections 256".into()
            }
            Need::GameServerStartMs => "cargo bench -p hightick-cli --bench agones".into(),
        }
    }
}

/// The measured figures a plan has, one per [`Need`] at most.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Figures(BTreeMap<Need, Measured>);

impl Figures {
    /// The figure for `need`, if measured.
    pub fn get(&self, need: Need) -> Option<&Measured> {
        self.0.get(&need)
    }

    /// Its value, if measured.
    pub fn value(&self, need: Need) -> Option<f64> {
        self.get(need).map(|m| m.value)
    }

    /// Sets the figure for `need`.
    pub fn insert(&mut self, need: Need, measured: Measured) {
        self.0.insert(need, measured);
    }
}

/// Everything a plan is computed from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanInputs {
    /// What it must carry.
    pub target: Target,
    /// How it is deployed.
    pub deployment: Deployment,
    /// The measured figures.
    pub figures: Figures,
    /// The commit the plan is for: figures of another commit are stale.
    pub commit: Option<String>,
    /// The kind of machine the plan is for: figures from another are warned about.
    pub machine: Machine,
    /// The rehearsal the plan was built from, when it was: its matchmaking
    /// is then worked out with the rehearsal's hosts, and set against the run.
    pub rehearsal: Option<Rehearsal>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::fixtures::target;

    #[test]
    fn needs_know_their_figures() {
        let t = target();
        assert!(
            Need::GatewayRequestsPerCore.matches(&t, "meta_postgres_20000_req_per_gateway_core")
        );
        assert!(
            !Need::GatewayRequestsPerCore.matches(&t, "meta_sqlite_20000_req_per_gateway_core")
        );
        assert!(!Need::GatewayRequestsPerCore.matches(&t, "meta_postgres__req_per_gateway_core"));
        assert!(Need::MatchmakingPlayersPerS.matches(&t, "mm_postgres_5v5_players_per_s"));
        assert_eq!(Need::GamesPerCore.figure(&t), "lab_gpc_5v5_128hz");
        assert!(
            Need::StoreResultsPerS
                .command(&t)
                .contains("HIGHTICK_TEST_DATABASE_URL")
        );
        let keys: std::collections::HashSet<_> = Need::ALL.iter().map(|n| n.key()).collect();
        assert_eq!(keys.len(), Need::ALL.len());
    }

    #[test]
    fn a_bad_target_names_its_flag() {
        let mut t = target();
        t.login_rate_per_s = 0.0;
        assert!(
            t.validate()
                .unwrap_err()
                .to_string()
                .starts_with("--login-rate")
        );
        let mut t = target();
        t.purchases_per_player_min = 7.0;
        assert!(
            t.validate()
                .unwrap_err()
                .to_string()
                .contains("--purchases")
        );
        assert!(target().validate().is_ok());
        let d = Deployment {
            cpu_headroom: 0.95,
            ..Deployment::default()
        };
        assert!(
            d.validate()
                .unwrap_err()
                .to_string()
                .starts_with("--headroom")
        );
        assert!(Deployment::default().validate().is_ok());
    }
}
