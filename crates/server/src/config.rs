//! [`HostConfig`]: every setting of `hightick serve`, from a TOML file and
//! flags, with defaults and validation that names the field at fault.
//!
//! The reference file, every field with its default and its doc comment,
//! is generated from this struct: `hightick serve --print-config` prints it
//! ([`HostConfig::reference`]), and a test checks that it parses to the
//! defaults and that no field goes without a doc.

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use hightick_config::ConfigFileError;
use hightick_net::Key;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::adapt::AdaptConfig;
use crate::error::ServerError;
use crate::placement::Placement;

/// The environment variable a token key is read from when no key file is set.
pub const KEY_ENV: &str = "HIGHTICK_KEY";
/// The environment variable holding the pod's IP (Kubernetes' downward API):
/// the admin address advertised when none is given.
pub const POD_IP_ENV: &str = "POD_IP";
/// The environment variable the gateway's server secret is read from when no
/// secret file is set (the gateway reads the same one).
pub const SERVER_SECRET_ENV: &str = "HIGHTICK_SERVER_SECRET";

/// The environment variable holding the admin API's bearer secret (or, with
/// `_FILE`, naming the file that does).
pub const ADMIN_SECRET_ENV: &str = "HIGHTICK_ADMIN_SECRET";

/// Every setting of a host. See the [module docs](self) for the file format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct HostConfig {
    /// Game traffic address; worker `i` binds port + `i` (port 0: any).
    pub bind: SocketAddr,
    /// Where players reach the workers, if not where they bind (behind a
    /// NAT, a NodePort, an Agones host port, a container's published port):
    /// one address per worker, or one for all (worker `i`: its port + `i`).
    /// Match answers carry it and tokens must list it. Empty: the bound
    /// address, or with [`Self::agones`] the GameServer's `status.address`
    /// and `status.ports` (`game-<i>`).
    #[schemars(extend("examples" = [["203.0.113.7:30001"]]))]
    pub public_address: Vec<SocketAddr>,
    /// Admin HTTP address.
    pub admin: SocketAddr,
    /// The admin address given to the gateway, if not the bound one (else
    /// `$POD_IP` with the bound port, when set).
    #[schemars(example = "10.1.2.3:7780")]
    pub advertise_admin: Option<SocketAddr>,
    /// Worker threads (0: one per core).
    pub workers: usize,
    /// Pin worker `i` to core `i mod cores`.
    pub pin_workers: bool,
    /// Matches one worker hosts at most.
    pub max_matches_per_worker: usize,
    /// How new matches are spread over the workers.
    pub placement: Placement,
    /// With `placement = "pack"`: the share of a core (0..1) a worker may
    /// reach with one more match before the next worker gets new matches.
    pub pack_until: f64,
    /// Share of a tick period (0..1) the budgeted mean ticks of one phase
    /// group may fill: matches of a group tick back to back on one wake-up,
    /// groups are staggered across the period. 0 gives every match its own
    /// phase.
    pub phase_group_share: f64,
    /// Timer slack of worker threads, microseconds.
    pub timer_slack_us: u64,
    /// How long running matches may go on after SIGTERM, seconds.
    pub drain_timeout_s: u64,
    /// Seconds a finished match keeps ticking so its clients hear the end.
    pub match_linger_s: f64,
    /// Seconds a seat may stay empty (its client gone, or never come)
    /// before it is released through the game's `seat_released` hook; a
    /// match with no client connected for as long ends as abandoned.
    pub seat_timeout_s: f64,
    /// Per client, bytes per second its packets beyond the one a tick
    /// carries (a rejoin's introductions, large reliable messages, resends)
    /// are paced to; 0 turns pacing off.
    pub pace_bytes_per_s: u64,
    /// Per client, the most of those packets sent at once, bytes.
    pub pace_burst_bytes: u64,
    /// Frame-time budgets file (default: the shipped budgets).
    #[schemars(example = "budgets.toml")]
    pub budgets: Option<PathBuf>,
    /// Where finished matches are appended as JSON lines.
    #[schemars(example = "results.jsonl")]
    pub results: Option<PathBuf>,
    /// File holding the token key as 64 hex digits (else `$HIGHTICK_KEY`).
    #[schemars(example = "key.hex")]
    pub key_file: Option<PathBuf>,
    /// The gateway to register with, heartbeat and post results to
    /// (`http://host:port`).
    #[schemars(example = "http://127.0.0.1:8080")]
    pub gateway: Option<String>,
    /// File holding the gateway's server secret (else
    /// `$HIGHTICK_SERVER_SECRET`).
    #[schemars(example = "server.secret")]
    pub server_secret_file: Option<PathBuf>,
    /// File holding the bearer secret the admin API's routes that change
    /// something take (`POST /v1/matches`, `POST /v1/stats/reset`; else
    /// `$HIGHTICK_ADMIN_SECRET`). Default: the gateway's server secret, when
    /// the host has a gateway. Without either those routes are open, which
    /// only a loopback `admin` address allows; `/healthz`, `/metrics` and the
    /// other reads stay open.
    #[schemars(example = "admin.secret")]
    pub admin_secret_file: Option<PathBuf>,
    /// The host's state: its identity (`host-id`, kept across restarts) and
    /// its results outbox (`outbox/`). Needed with [`Self::gateway`].
    #[schemars(example = "hightick-host")]
    pub state_dir: Option<PathBuf>,
    /// Region tag the gateway's matchmaking may prefer.
    pub region: String,
    /// Seconds between heartbeats to the gateway.
    pub heartbeat_s: f64,
    /// Run as an Agones GameServer: Ready once warm, health from the workers,
    /// matches from allocations, Shutdown after the drain (docs/AGONES.md).
    pub agones: bool,
    /// The Agones SDK server's REST port (else `$AGONES_SDK_HTTP_PORT`,
    /// else 9358).
    #[schemars(example = 9358)]
    pub agones_sdk_port: Option<u16>,
    /// Per client: fewer packets and a smaller snapshot budget while its link
    /// is congested ([`crate::adapt`]).
    pub adapt: AdaptConfig,
}

impl Default for HostConfig {
    fn default() -> Self {
        Self {
            bind: "0.0.0.0:7777".parse().expect("literal address"),
            public_address: Vec::new(),
            admin: "127.0.0.1:7780".parse().expect("literal address"),
            advertise_admin: None,
            workers: 0,
            pin_workers: false,
            max_matches_per_worker: 64,
            placement: Placement::Spread,
            pack_until: 0.5,
            phase_group_share: 0.25,
            timer_slack_us: 50,
            drain_timeout_s: 120,
            match_linger_s: 3.0,
            seat_timeout_s: 30.0,
            pace_bytes_per_s: 250_000,
            pace_burst_bytes: 12_288,
            budgets: None,
            results: None,
            key_file: None,
            gateway: None,
            server_secret_file: None,
            admin_secret_file: None,
            state_dir: None,
            region: "local".to_owned(),
            heartbeat_s: 2.0,
            agones: false,
            agones_sdk_port: None,
            adapt: AdaptConfig::default(),
        }
    }
}

impl HostConfig {
    /// The reference config file: every field with its default and its doc,
    /// as TOML (`hightick serve --print-config`).
    pub fn reference() -> String {
        hightick_config::reference::text::<Self>(
            "The host's config file (hightick serve --config FILE), from\n\
             hightick serve --print-config. Flags override its keys.",
        )
    }

    /// Reads and validates a config file.
    pub fn load(path: &Path) -> Result<Self, ServerError> {
        let text = hightick_config::read(path)?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses and validates config text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Self, ServerError> {
        let config: Self = hightick_config::parse_toml(text, file)?;
        config.validate()?;
        Ok(config)
    }

    /// Checks every field, naming the first one out of range.
    pub fn validate(&self) -> Result<(), ServerError> {
        let bad = |field, reason: &str| Err(ConfigFileError::invalid(field, reason).into());
        if self.workers > 1024 {
            return bad("workers", "must be at most 1024 (0 = one per core)");
        }
        if !(1..=4096).contains(&self.max_matches_per_worker) {
            return bad("max_matches_per_worker", "must be in 1..=4096");
        }
        if !(0.01..=1.0).contains(&self.pack_until) {
            return bad("pack_until", "must be a share of a core in 0.01..=1.0");
        }
        if !(0.0..1.0).contains(&self.phase_group_share) {
            return bad(
                "phase_group_share",
                "must be a share of the tick period in 0..1 (0 = every match its own phase)",
            );
        }
        if self.timer_slack_us > 1_000_000 {
            return bad("timer_slack_us", "must be at most 1000000");
        }
        if !(0.0..=600.0).contains(&self.match_linger_s) {
            return bad("match_linger_s", "must be in 0..=600 seconds");
        }
        if !(0.1..=86_400.0).contains(&self.seat_timeout_s) {
            return bad("seat_timeout_s", "must be in 0.1..=86400 seconds");
        }
        if let Some(pacing) = self.pacing() {
            if pacing.bytes_per_s < 1000 {
                return bad("pace_bytes_per_s", "must be 0 (off) or at least 1000");
            }
            if pacing.burst_bytes < hightick_net::wire::MAX_PACKET_BYTES as u64 {
                return bad(
                    "pace_burst_bytes",
                    "must hold at least one packet (1225 bytes)",
                );
            }
        }
        self.adapt.validate()?;
        if self.drain_timeout_s > 86_400 {
            return bad("drain_timeout_s", "must be at most 86400");
        }
        if let Some(url) = &self.gateway {
            let rest = url.strip_prefix("http://").unwrap_or_default();
            if rest.is_empty() || rest.starts_with('/') {
                return bad(
                    "gateway",
                    "must be an http:// URL with a host (http://host:port)",
                );
            }
            if self.state_dir.is_none() {
                return bad(
                    "state_dir",
                    "needed with gateway: it holds the host's identity and its results outbox",
                );
            }
        }
        if self.region.is_empty()
            || self.region.len() > 32
            || !self
                .region
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return bad("region", "must be 1 to 32 of A-Z a-z 0-9 - _");
        }
        if !(0.1..=60.0).contains(&self.heartbeat_s) {
            return bad("heartbeat_s", "must be in 0.1..=60 seconds");
        }
        if self.bind.port() != 0
            && usize::from(self.bind.port()) + self.worker_count() > usize::from(u16::MAX) + 1
        {
            return bad("bind", "port + workers runs past 65535");
        }
        self.validate_advertised()
    }

    /// The advertised addresses: well formed, and given wherever a bound
    /// address would be unreachable and someone must be told where the
    /// host is (a gateway it registers with).
    fn validate_advertised(&self) -> Result<(), ServerError> {
        let bad = |field, reason: String| Err(ConfigFileError::invalid(field, &reason).into());
        let workers = self.worker_count();
        match self.public_address.as_slice() {
            [] | [_] => {}
            list if list.len() != workers => {
                return bad(
                    "public_address",
                    format!(
                        "lists {} addresses for {workers} workers: give one per worker, or one \
                         for all (worker i: its port + i)",
                        list.len()
                    ),
                );
            }
            _ => {}
        }
        for a in &self.public_address {
            if a.ip().is_unspecified() || a.port() == 0 {
                return bad(
                    "public_address",
                    format!("{a} is not an address players can reach (no 0.0.0.0, no port 0)"),
                );
            }
        }
        if let [one] = self.public_address.as_slice()
            && usize::from(one.port()) + workers > usize::from(u16::MAX) + 1
        {
            return bad(
                "public_address",
                format!("{one}: port + workers runs past 65535"),
            );
        }
        if let Some(a) = self.advertise_admin
            && (a.ip().is_unspecified() || a.port() == 0)
        {
            return bad(
                "advertise_admin",
                format!("{a} is not an address the gateway can reach (no 0.0.0.0, no port 0)"),
            );
        }
        if self.gateway.is_none() {
            return Ok(());
        }
        if self.bind.ip().is_unspecified() && self.public_address.is_empty() && !self.agones {
            return bad(
                "public_address",
                format!(
                    "needed with gateway when bind is {}: players cannot reach an unspecified \
                     address (--public-address IP:PORT, one per worker or the first)",
                    self.bind
                ),
            );
        }
        if self.admin.ip().is_unspecified() && self.advertise_admin.is_none() && pod_ip().is_none()
        {
            return bad(
                "advertise_admin",
                format!(
                    "needed with gateway when admin is {}: the gateway cannot reach an \
                     unspecified address (--advertise-admin IP:PORT, or set ${POD_IP_ENV})",
                    self.admin
                ),
            );
        }
        Ok(())
    }

    /// Where players reach worker `i`, when the config says
    /// ([`Self::public_address`]); `None`: where it binds (or the
    /// GameServer's status, with Agones).
    pub fn worker_public_address(&self, i: usize) -> Option<SocketAddr> {
        match self.public_address.as_slice() {
            [] => None,
            [first] => Some(SocketAddr::new(first.ip(), first.port() + i as u16)),
            list => list.get(i).copied(),
        }
    }

    /// The admin address the gateway is given: [`Self::advertise_admin`],
    /// else `$POD_IP` with the port `bound`, else `bound`.
    pub fn advertised_admin(&self, bound: SocketAddr) -> SocketAddr {
        self.advertise_admin
            .or_else(|| pod_ip().map(|ip| SocketAddr::new(ip, bound.port())))
            .unwrap_or(bound)
    }

    /// Worker threads to start.
    pub fn worker_count(&self) -> usize {
        if self.workers > 0 {
            self.workers
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        }
    }

    /// The address worker `i` binds.
    pub fn worker_bind(&self, i: usize) -> SocketAddr {
        let mut address = self.bind;
        if address.port() != 0 {
            address.set_port(address.port() + i as u16);
        }
        address
    }

    /// How long a finished match lingers.
    pub fn linger(&self) -> Duration {
        Duration::from_secs_f64(self.match_linger_s)
    }

    /// Each client's pacing, unless [`Self::pace_bytes_per_s`] is 0.
    pub fn pacing(&self) -> Option<hightick_net::Pacing> {
        (self.pace_bytes_per_s > 0).then_some(hightick_net::Pacing {
            bytes_per_s: self.pace_bytes_per_s,
            burst_bytes: self.pace_burst_bytes,
        })
    }

    /// How long a seat may stay empty ([`Self::seat_timeout_s`]).
    pub fn seat_timeout(&self) -> Duration {
        Duration::from_secs_f64(self.seat_timeout_s)
    }

    /// The gateway's server secret: from `server_secret_file`, else the file
    /// named by `$HIGHTICK_SERVER_SECRET_FILE`, else `$HIGHTICK_SERVER_SECRET`.
    pub fn load_server_secret(&self) -> Result<String, ServerError> {
        let secret = read_secret(
            self.server_secret_file.as_deref(),
            SERVER_SECRET_ENV,
            || {
                format!(
                    "no server secret for the gateway: set server_secret_file (--server-secret-file) or ${SERVER_SECRET_ENV}"
                )
            },
        )?;
        secret_text(secret, "server")
    }

    /// The admin API's bearer secret: from `admin_secret_file`, else the
    /// file named by `$HIGHTICK_ADMIN_SECRET_FILE`, else
    /// `$HIGHTICK_ADMIN_SECRET`, else the gateway's server secret (with a
    /// gateway). `None`: the routes that change something are open, which
    /// [`Self::validate_admin_secret`] allows on a loopback address only.
    pub fn load_admin_secret(&self) -> Result<Option<String>, ServerError> {
        let secret =
            match hightick_config::read_secret(self.admin_secret_file.as_deref(), ADMIN_SECRET_ENV)
                .map_err(|e| ServerError::Key(e.to_string()))?
            {
                Some(secret) => secret,
                None if self.gateway.is_some() => return self.load_server_secret().map(Some),
                None => return Ok(None),
            };
        secret_text(secret, "admin").map(Some)
    }

    /// An admin API others can reach needs a secret: without one, `admin`
    /// must be a loopback address.
    pub fn validate_admin_secret(&self, secret: Option<&str>) -> Result<(), ServerError> {
        if secret.is_none() && !self.admin.ip().is_loopback() {
            return Err(ConfigFileError::invalid(
                "admin",
                &format!(
                    "{} is not a loopback address: the admin API there needs a secret (admin_secret_file, ${ADMIN_SECRET_ENV}, or a gateway's server secret)",
                    self.admin
                ),
            )
            .into());
        }
        Ok(())
    }

    /// The token key: from `key_file`, else the file named by
    /// `$HIGHTICK_KEY_FILE`, else `$HIGHTICK_KEY` (64 hex digits).
    pub fn load_key(&self) -> Result<Key, ServerError> {
        let secret = read_secret(self.key_file.as_deref(), KEY_ENV, || {
            format!("no key: set key_file (--key-file) or ${KEY_ENV} to 64 hex digits")
        })?;
        std::str::from_utf8(&secret.bytes)
            .map_err(|e| e.to_string())
            .and_then(|text| Key::from_hex(text).map_err(|e| e.to_string()))
            .map_err(|e| ServerError::Key(format!("{}: {e}", secret.origin)))
    }
}

/// A secret from `file`, `${env}_FILE` or `$env` ([`hightick_config::read_secret`]);
/// `missing` says what to set when none is.
fn read_secret(
    file: Option<&Path>,
    env: &str,
    missing: impl FnOnce() -> String,
) -> Result<hightick_config::Secret, ServerError> {
    hightick_config::read_secret(file, env)
        .map_err(|e| ServerError::Key(e.to_string()))?
        .ok_or_else(|| ServerError::Key(missing()))
}

/// A bearer secret's text: UTF-8, without the surrounding whitespace (a
/// file's trailing newline), as the gateway reads its copy; never empty.
fn secret_text(secret: hightick_config::Secret, what: &str) -> Result<String, ServerError> {
    let text = String::from_utf8(secret.bytes)
        .map(|t| t.trim().to_owned())
        .map_err(|_| {
            ServerError::Key(format!("{}: the {what} secret is not UTF-8", secret.origin))
        })?;
    if text.is_empty() {
        return Err(ServerError::Key(format!(
            "{}: the {what} secret is empty",
            secret.origin
        )));
    }
    Ok(text)
}

/// `$POD_IP`, when set to an IP address.
fn pod_ip() -> Option<IpAddr> {
    std::env::var(POD_IP_ENV).ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_parses_to_the_defaults_documents_every_field_and_refuses_others() {
        if let Err(fault) = hightick_config::reference::check(|text| HostConfig::parse(text, "ref"))
        {
            panic!("{fault}");
        }
    }

    #[test]
    fn a_wrong_type_is_named() {
        let err = HostConfig::parse("bind = 7777\n", "host.toml").unwrap_err();
        assert!(err.to_string().starts_with("host.toml:1:"), "{err}");
    }

    #[test]
    fn out_of_range_values_name_the_field() {
        let err = HostConfig::parse("pack_until = 1.5\n", "h").unwrap_err();
        assert!(err.to_string().contains("pack_until"), "{err}");
        // A misspelt placement: file, line and column of the value, and the choices.
        let err = HostConfig::parse("placement = \"packed\"\n", "h").unwrap_err();
        assert!(err.to_string().starts_with("h:1:13:"), "{err}");
        assert!(err.to_string().contains("`spread` or `pack`"), "{err}");
        let err = HostConfig::parse("phase_group_share = 1.0\n", "h").unwrap_err();
        assert!(err.to_string().contains("phase_group_share"), "{err}");
        let err = HostConfig::parse("max_matches_per_worker = 0\n", "h").unwrap_err();
        assert!(err.to_string().contains("max_matches_per_worker"), "{err}");
        for (text, field) in [
            ("seat_timeout_s = 0.0\n", "seat_timeout_s"),
            ("pace_bytes_per_s = 10\n", "pace_bytes_per_s"),
            ("pace_burst_bytes = 100\n", "pace_burst_bytes"),
            ("[adapt]\ndecrease = 1.5\n", "adapt.decrease"),
        ] {
            let err = HostConfig::parse(text, "h").unwrap_err();
            assert!(err.to_string().contains(field), "{err}");
        }
        let off = HostConfig::parse("pace_bytes_per_s = 0\npace_burst_bytes = 1\n", "h").unwrap();
        assert_eq!(off.pacing(), None);
    }

    #[test]
    fn a_gateway_needs_a_state_dir_and_an_http_url() {
        let err = HostConfig::parse("gateway = \"http://127.0.0.1:8080\"\n", "h").unwrap_err();
        assert!(err.to_string().contains("state_dir"), "{err}");
        let err =
            HostConfig::parse("gateway = \"https://gw\"\nstate_dir = \"s\"\n", "h").unwrap_err();
        assert!(err.to_string().contains("gateway"), "{err}");
        let reachable = "bind = \"127.0.0.1:7777\"\n";
        HostConfig::parse(
            &format!("{reachable}gateway = \"http://gw:8080\"\nstate_dir = \"s\"\n"),
            "h",
        )
        .unwrap();
        let err = HostConfig::parse("region = \"eu west\"\n", "h").unwrap_err();
        assert!(err.to_string().contains("region"), "{err}");
    }

    #[test]
    fn workers_get_consecutive_ports() {
        let config = HostConfig {
            bind: "127.0.0.1:9000".parse().unwrap(),
            ..HostConfig::default()
        };
        assert_eq!(config.worker_bind(2).port(), 9002);
        let any = HostConfig {
            bind: "127.0.0.1:0".parse().unwrap(),
            ..HostConfig::default()
        };
        assert_eq!(any.worker_bind(3).port(), 0);
    }

    #[test]
    fn public_addresses_are_one_per_worker_or_a_first_port() {
        let one = HostConfig::parse(
            "workers = 3\npublic_address = [\"203.0.113.7:30001\"]\n",
            "h",
        )
        .unwrap();
        assert_eq!(
            one.worker_public_address(2),
            Some("203.0.113.7:30003".parse().unwrap())
        );
        let each = HostConfig::parse(
            "workers = 2\npublic_address = [\"10.0.0.1:9000\", \"10.0.0.2:5000\"]\n",
            "h",
        )
        .unwrap();
        assert_eq!(
            each.worker_public_address(1),
            Some("10.0.0.2:5000".parse().unwrap())
        );
        assert_eq!(HostConfig::default().worker_public_address(0), None);
        let err = HostConfig::parse(
            "workers = 3\npublic_address = [\"10.0.0.1:9000\", \"10.0.0.2:5000\"]\n",
            "h",
        )
        .unwrap_err();
        assert!(err.to_string().contains("public_address"), "{err}");
        assert!(
            err.to_string().contains("2 addresses for 3 workers"),
            "{err}"
        );
        let err = HostConfig::parse("public_address = [\"0.0.0.0:9000\"]\n", "h").unwrap_err();
        assert!(err.to_string().contains("public_address"), "{err}");
    }

    #[test]
    fn a_gateway_needs_addresses_it_can_reach() {
        let gateway = "gateway = \"http://127.0.0.1:8080\"\nstate_dir = \"s\"\n";
        let err = HostConfig::parse(gateway, "h").unwrap_err();
        assert!(err.to_string().contains("public_address"), "{err}");
        assert!(err.to_string().contains("0.0.0.0:7777"), "{err}");
        let reachable = format!("{gateway}public_address = [\"203.0.113.7:30001\"]\n");
        HostConfig::parse(&reachable, "h").unwrap();
        let agones = format!("{gateway}agones = true\n");
        HostConfig::parse(&agones, "h").unwrap();
        if pod_ip().is_none() {
            let open_admin = format!("{reachable}admin = \"0.0.0.0:7780\"\n");
            let err = HostConfig::parse(&open_admin, "h").unwrap_err();
            assert!(err.to_string().contains("advertise_admin"), "{err}");
            let told = format!("{open_admin}advertise_admin = \"10.1.2.3:7780\"\n");
            let config = HostConfig::parse(&told, "h").unwrap();
            assert_eq!(
                config.advertised_admin("0.0.0.0:7780".parse().unwrap()),
                "10.1.2.3:7780".parse().unwrap()
            );
        }
    }
}
