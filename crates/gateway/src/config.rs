//! [`GatewayConfig`]: every setting of `hightick gateway`, from a TOML file and
//! flags, with defaults and validation that names the field at fault.
//!
//! The reference file, every field with its default and its doc comment,
//! is generated from these structs: `hightick gateway --print-config` prints
//! it ([`GatewayConfig::reference`]), and a test checks that it parses to the
//! defaults and that no field goes without a doc.

use hightick_config::ConfigFileError;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::agones::AgonesConfig;
use crate::error::GatewayError;

/// The most players a matchmaking queue fills a match with.
pub const MAX_MODE_PLAYERS: usize = 128;

/// A matchmaking queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModeConfig {
    /// The mode name, as the server hosts know it (`5v5`).
    pub name: String,
    /// Players per match.
    pub players: usize,
    /// The game's match settings, sent to the host with each allocation
    /// (`rounds_to_win`, `map`... for the arena).
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    #[schemars(extend("examples" = [{"rounds_to_win": 2}]))]
    pub settings: serde_json::Map<String, serde_json::Value>,
}

/// Currency a player gets for a match, by outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RewardPolicy {
    /// For a win.
    pub win: i64,
    /// For a loss.
    pub loss: i64,
    /// For a draw.
    pub draw: i64,
}

impl Default for RewardPolicy {
    fn default() -> Self {
        Self {
            win: 100,
            loss: 40,
            draw: 60,
        }
    }
}

impl RewardPolicy {
    /// The reward for `outcome`.
    pub fn for_outcome(&self, outcome: hightick_host_api::Outcome) -> i64 {
        match outcome {
            hightick_host_api::Outcome::Win => self.win,
            hightick_host_api::Outcome::Loss => self.loss,
            hightick_host_api::Outcome::Draw => self.draw,
        }
    }
}

/// One item the shop sells.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CatalogItem {
    /// Item id.
    pub item_id: String,
    /// Price of one, in currency.
    pub price: i64,
}

/// A server host listed in the config (never times out).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StaticHost {
    /// Its admin API address (`POST /v1/matches`).
    #[schemars(example = "127.0.0.1:7780")]
    pub admin: SocketAddr,
    /// Matches it may be given at once.
    #[schemars(example = 64)]
    pub capacity: usize,
}

/// Every setting of a gateway. See the [module docs](self) for the file format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct GatewayConfig {
    /// HTTP API address.
    pub listen: SocketAddr,
    /// Database URL (`sqlite:...` or `postgres://...`); unset: SQLite in
    /// `data_dir`.
    #[schemars(example = "postgres://user:pw@db/hightick")]
    pub database_url: Option<String>,
    /// Directory of the embedded SQLite database.
    pub data_dir: PathBuf,
    /// Database pool size.
    pub database_connections: u32,
    /// PostgreSQL: milliseconds a request waits for a pooled connection
    /// before it is answered 503 with Retry-After (while the database
    /// restarts, the pool keeps reconnecting for this long).
    pub database_acquire_timeout_ms: u64,
    /// Logins worked on at once.
    pub auth_workers: usize,
    /// Logins that may wait in the queue.
    pub login_queue_capacity: usize,
    /// Seconds an answered ticket is kept for its client to collect; a
    /// gateway that did not issue a ticket answers it until four times the
    /// wait estimated at issue plus this.
    pub ticket_ttl_s: u64,
    /// Longest long-poll, milliseconds.
    pub max_wait_ms: u64,
    /// Session token lifetime, seconds.
    pub session_ttl_s: u64,
    /// Connect token lifetime, seconds.
    pub connect_token_ttl_s: u64,
    /// Silence timeout written in connect tokens, seconds.
    pub connect_timeout_s: u32,
    /// Largest request body, bytes.
    pub body_limit_bytes: usize,
    /// Sustained requests per second per client IP (0: no limit).
    pub rate_limit_per_s: f64,
    /// Burst of requests per client IP.
    pub rate_limit_burst: u32,
    /// Seconds after its last heartbeat a registered host stops getting matches.
    pub host_timeout_s: u64,
    /// Connect-token key file (64 hex digits), else `$HIGHTICK_KEY`.
    #[schemars(example = "key.hex")]
    pub token_key_file: Option<PathBuf>,
    /// Session signing key file (64 hex digits), else `$HIGHTICK_SESSION_KEY`, else random.
    #[schemars(example = "session.hex")]
    pub session_key_file: Option<PathBuf>,
    /// File holding the servers' bearer secret, else `$HIGHTICK_SERVER_SECRET`.
    #[schemars(example = "server.secret")]
    pub server_secret_file: Option<PathBuf>,
    /// Matchmaking queues.
    pub modes: Vec<ModeConfig>,
    /// The shop.
    pub catalog: Vec<CatalogItem>,
    /// Hosts known without registering.
    pub hosts: Vec<StaticHost>,
    /// Currency per outcome.
    pub rewards: RewardPolicy,
    /// The WebSocket push channel.
    pub push: crate::push::PushConfig,
    /// HTTP connection deadlines and caps.
    pub http: crate::listen::HttpConfig,
    /// Serve HTTPS and WSS with this certificate, read again when its files
    /// change (docs/OPERATIONS.md, "The gateway's own TLS"); unset: plain
    /// HTTP (behind an ingress that terminates TLS).
    pub tls: Option<crate::listen::TlsConfig>,
    /// The matching rules (`[matchmaking]`).
    pub matchmaking: crate::queue::rules::MatchRules,
    /// Allocate through the Agones allocator instead of the hosts
    /// (docs/AGONES.md).
    pub agones: Option<AgonesConfig>,
}

impl Default for GatewayConfig {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:8080".parse().expect("literal address"),
            database_url: None,
            data_dir: PathBuf::from("hightick-data"),
            database_connections: 8,
            database_acquire_timeout_ms: 3_000,
            auth_workers: 4,
            login_queue_capacity: 1_000_000,
            ticket_ttl_s: 120,
            max_wait_ms: 10_000,
            session_ttl_s: 86_400,
            connect_token_ttl_s: 60,
            connect_timeout_s: 10,
            body_limit_bytes: 16 * 1024,
            rate_limit_per_s: 20.0,
            rate_limit_burst: 100,
            host_timeout_s: 15,
            token_key_file: None,
            session_key_file: None,
            server_secret_file: None,
            modes: vec![ModeConfig {
                name: "5v5".to_owned(),
                players: 10,
                settings: serde_json::Map::new(),
            }],
            catalog: vec![
                item("skin.red", 100),
                item("skin.blue", 150),
                item("xp.boost", 25),
            ],
            hosts: Vec::new(),
            rewards: RewardPolicy::default(),
            push: crate::push::PushConfig::default(),
            http: crate::listen::HttpConfig::default(),
            tls: None,
            matchmaking: crate::queue::rules::MatchRules::default(),
            agones: None,
        }
    }
}

fn item(id: &str, price: i64) -> CatalogItem {
    CatalogItem {
        item_id: id.to_owned(),
        price,
    }
}

impl GatewayConfig {
    /// The reference config file: every field with its default and its doc,
    /// as TOML (`hightick gateway --print-config`).
    pub fn reference() -> String {
        hightick_config::reference::text::<Self>(
            "The gateway's config file (hightick gateway --config FILE), from\n\
             hightick gateway --print-config. Flags override its keys.",
        )
    }

    /// Reads and validates a config file.
    pub fn load(path: &Path) -> Result<Self, GatewayError> {
        let text = hightick_config::read(path)?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses and validates config text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Self, GatewayError> {
        let config: Self = hightick_config::parse_toml(text, file)?;
        config.validate()?;
        Ok(config)
    }

    /// Checks every field, naming the first one out of range.
    pub fn validate(&self) -> Result<(), GatewayError> {
        let bad = |field, reason: &str| Err(ConfigFileError::invalid(field, reason).into());
        if !(1..=1024).contains(&self.database_connections) {
            return bad("database_connections", "must be in 1..=1024");
        }
        if !(100..=600_000).contains(&self.database_acquire_timeout_ms) {
            return bad("database_acquire_timeout_ms", "must be in 100..=600000");
        }
        if !(1..=4096).contains(&self.auth_workers) {
            return bad("auth_workers", "must be in 1..=4096");
        }
        if !(1..=100_000_000).contains(&self.login_queue_capacity) {
            return bad("login_queue_capacity", "must be in 1..=100000000");
        }
        if !(1..=86_400).contains(&self.ticket_ttl_s) {
            return bad("ticket_ttl_s", "must be in 1..=86400");
        }
        if self.max_wait_ms > 60_000 {
            return bad("max_wait_ms", "must be at most 60000");
        }
        if !(60..=31_536_000).contains(&self.session_ttl_s) {
            return bad("session_ttl_s", "must be in 60..=31536000");
        }
        if !(5..=86_400).contains(&self.connect_token_ttl_s) {
            return bad("connect_token_ttl_s", "must be in 5..=86400");
        }
        if !(1..=3600).contains(&self.connect_timeout_s) {
            return bad("connect_timeout_s", "must be in 1..=3600");
        }
        if !(256..=16 * 1024 * 1024).contains(&self.body_limit_bytes) {
            return bad("body_limit_bytes", "must be in 256..=16777216");
        }
        if !(self.rate_limit_per_s.is_finite() && (0.0..=1e9).contains(&self.rate_limit_per_s)) {
            return bad("rate_limit_per_s", "must be in 0..=1e9 (0 = off)");
        }
        if self.rate_limit_per_s > 0.0 && self.rate_limit_burst == 0 {
            return bad("rate_limit_burst", "must be at least 1 when rate limiting");
        }
        if !(1..=3600).contains(&self.host_timeout_s) {
            return bad("host_timeout_s", "must be in 1..=3600");
        }
        if let Some(url) = &self.database_url
            && !(url.starts_with("sqlite:")
                || url.starts_with("postgres://")
                || url.starts_with("postgresql://"))
        {
            return bad("database_url", "must start with sqlite: or postgres://");
        }
        if self.modes.is_empty() {
            return bad("modes", "at least one mode");
        }
        for (i, mode) in self.modes.iter().enumerate() {
            if !valid_id(&mode.name) {
                return bad("modes.name", "1..=64 characters of [A-Za-z0-9_.-]");
            }
            if !(1..=MAX_MODE_PLAYERS).contains(&mode.players) {
                return bad("modes.players", "must be in 1..=128 (MAX_MODE_PLAYERS)");
            }
            if self.modes[..i].iter().any(|m| m.name == mode.name) {
                return bad("modes.name", "listed twice");
            }
        }
        for (field, amount) in [
            ("rewards.win", self.rewards.win),
            ("rewards.loss", self.rewards.loss),
            ("rewards.draw", self.rewards.draw),
        ] {
            if !(0..=1_000_000_000).contains(&amount) {
                return bad(field, "must be in 0..=1000000000");
            }
        }
        for (i, item) in self.catalog.iter().enumerate() {
            if !valid_id(&item.item_id) {
                return bad("catalog.item_id", "1..=64 characters of [A-Za-z0-9_.-]");
            }
            if !(0..=hightick_store::MAX_AMOUNT).contains(&item.price) {
                return bad("catalog.price", "must be in 0..=1e12");
            }
            if self.catalog[..i].iter().any(|c| c.item_id == item.item_id) {
                return bad("catalog.item_id", "listed twice");
            }
        }
        if let Some((field, rule)) = self.push.invalid_field() {
            return bad(field, rule);
        }
        if let Some((field, rule)) = self.http.invalid_field() {
            return bad(field, rule);
        }
        if let Some((field, rule)) = self.tls.as_ref().and_then(|t| t.invalid_field()) {
            return bad(field, rule);
        }
        if let Some((field, rule)) = self.matchmaking.invalid_field() {
            return bad(field, rule);
        }
        for host in &self.hosts {
            if !(1..=100_000).contains(&host.capacity) {
                return bad("hosts.capacity", "must be in 1..=100000");
            }
        }
        if let Some(agones) = &self.agones {
            agones.validate()?;
        }
        Ok(())
    }

    /// The players per match of `mode`, if it is a queue.
    pub fn mode(&self, name: &str) -> Option<&ModeConfig> {
        self.modes.iter().find(|m| m.name == name)
    }

    /// The price of `item_id`, if the shop sells it.
    pub fn price(&self, item_id: &str) -> Option<i64> {
        self.catalog
            .iter()
            .find(|c| c.item_id == item_id)
            .map(|c| c.price)
    }

    /// Longest long-poll.
    pub fn max_wait(&self) -> Duration {
        Duration::from_millis(self.max_wait_ms)
    }
}

/// Mode names and item ids: short, plain characters.
pub(crate) fn valid_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_parses_to_the_defaults_documents_every_field_and_refuses_others() {
        if let Err(fault) =
            hightick_config::reference::check(|text| GatewayConfig::parse(text, "ref"))
        {
            panic!("{fault}");
        }
    }

    #[test]
    fn a_wrong_type_is_named_with_its_line() {
        let err = GatewayConfig::parse("\nlisten = 8080\n", "gw.toml").unwrap_err();
        assert!(err.to_string().starts_with("gw.toml:2:"), "{err}");
    }

    #[test]
    fn out_of_range_values_name_the_field() {
        for (text, field) in [
            ("auth_workers = 0\n", "auth_workers"),
            ("rate_limit_per_s = -1.0\n", "rate_limit_per_s"),
            ("database_url = \"mysql://x\"\n", "database_url"),
            ("[[modes]]\nname = \"5v5\"\nplayers = 0\n", "modes.players"),
            (
                "[[catalog]]\nitem_id = \"x\"\nprice = -5\n",
                "catalog.price",
            ),
            ("[[modes]]\nname = \"a b\"\nplayers = 2\n", "modes.name"),
        ] {
            let err = GatewayConfig::parse(text, "gw.toml").unwrap_err();
            assert!(err.to_string().contains(field), "{text}: {err}");
        }
    }

    #[test]
    fn lookups_find_modes_and_prices() {
        let c = GatewayConfig::default();
        assert_eq!(c.mode("5v5").map(|m| m.players), Some(10));
        assert!(c.mode("nope").is_none());
        assert_eq!(c.price("skin.red"), Some(100));
        assert_eq!(c.price("'; DROP TABLE accounts; --"), None);
    }
}
