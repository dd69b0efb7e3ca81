//! `hightick serve`: a host from a config file and flags.

use hightick_engine::mode::HostedGame;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use hightick_server::{HostConfig, Placement, serve};

/// Flags of `hightick serve`; each overrides the config file's field.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Host config file (TOML; every key: --print-config).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Print the reference config file, every key with its default and doc,
    /// as TOML, and exit.
    #[arg(long)]
    print_config: bool,
    /// Game traffic address; worker i listens on port + i.
    #[arg(long, value_name = "ADDR")]
    bind: Option<SocketAddr>,
    /// Where players reach the workers, if not where they bind (a NAT, a
    /// NodePort, a container's published port): one IP:PORT per worker, or
    /// one for all (worker i: port + i). Tokens must list it. With --agones
    /// the default is the GameServer's status.address and ports.
    #[arg(long, value_name = "ADDR[,ADDR...]", value_delimiter = ',')]
    public_address: Vec<SocketAddr>,
    /// Admin HTTP address.
    #[arg(long, value_name = "ADDR")]
    admin: Option<SocketAddr>,
    /// The admin address the gateway is given, if not the bound one (else
    /// $POD_IP with the admin port, when set).
    #[arg(long, value_name = "ADDR")]
    advertise_admin: Option<SocketAddr>,
    /// Worker threads (0: one per core).
    #[arg(long)]
    workers: Option<usize>,
    /// Pin worker i to core i mod cores.
    #[arg(long)]
    pin_workers: bool,
    /// New matches: spread (fewest matches) or pack (fill a worker up to pack_until of a core).
    #[arg(long, value_name = "pack|spread")]
    placement: Option<Placement>,
    /// Share of a tick period one phase group's budgeted ticks may fill (0: every match its own phase).
    #[arg(long, value_name = "SHARE")]
    phase_group_share: Option<f64>,
    /// Token key file (64 hex digits); else $HIGHTICK_KEY.
    #[arg(long, value_name = "FILE")]
    key_file: Option<PathBuf>,
    /// Frame-time budgets file.
    #[arg(long, value_name = "FILE")]
    budgets: Option<PathBuf>,
    /// Append finished matches here as JSON lines.
    #[arg(long, value_name = "FILE")]
    results: Option<PathBuf>,
    /// Seconds running matches may go on after SIGTERM.
    #[arg(long, value_name = "SECS")]
    drain_timeout: Option<u64>,
    /// Register with this gateway, heartbeat, and post every result there.
    #[arg(long, value_name = "URL")]
    gateway: Option<String>,
    /// The gateway's server secret; else $HIGHTICK_SERVER_SECRET.
    #[arg(long, value_name = "FILE")]
    server_secret_file: Option<PathBuf>,
    /// The bearer secret of the admin routes that change something (create
    /// a match, reset statistics); else $HIGHTICK_ADMIN_SECRET, else the
    /// gateway's server secret. Without one the admin API must be on loopback.
    #[arg(long, value_name = "FILE")]
    admin_secret_file: Option<PathBuf>,
    /// The host's identity and results outbox (needed with --gateway).
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
    /// Region tag the gateway's matchmaking may prefer.
    #[arg(long)]
    region: Option<String>,
    /// Run as an Agones GameServer: Ready once warm, health from the
    /// workers, matches from allocations, Shutdown after the drain.
    #[arg(long)]
    agones: bool,
    /// The Agones SDK server's REST port (else $AGONES_SDK_HTTP_PORT, else 9358).
    #[arg(long, value_name = "PORT")]
    agones_sdk_port: Option<u16>,
    /// Per-client adaptation to congested links: on or off (the config's
    /// `[adapt] enabled`).
    #[arg(long, value_name = "on|off", value_parser = on_off)]
    adapt: Option<bool>,
}

/// `text` on stdout; a reader that went away (`| head`) is no error.
pub(crate) fn print_stdout(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e).context("stdout"),
        _ => Ok(()),
    }
}

/// `on` or `off`, as a flag's value.
pub(crate) fn on_off(v: &str) -> Result<bool, String> {
    match v {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("`{v}`: on or off")),
    }
}

impl ServeArgs {
    /// The config file (or defaults) with the flags applied.
    pub(crate) fn config(&self) -> Result<HostConfig> {
        let mut config = match &self.config {
            Some(path) => HostConfig::load(path)?,
            None => HostConfig::default(),
        };
        if let Some(v) = self.bind {
            config.bind = v;
        }
        if !self.public_address.is_empty() {
            config.public_address.clone_from(&self.public_address);
        }
        if let Some(v) = self.admin {
            config.admin = v;
        }
        if let Some(v) = self.advertise_admin {
            config.advertise_admin = Some(v);
        }
        if let Some(v) = self.workers {
            config.workers = v;
        }
        if self.pin_workers {
            config.pin_workers = true;
        }
        if let Some(v) = self.placement {
            config.placement = v;
        }
        if let Some(v) = self.phase_group_share {
            config.phase_group_share = v;
        }
        if let Some(v) = &self.key_file {
            config.key_file = Some(v.clone());
        }
        if let Some(v) = &self.budgets {
            config.budgets = Some(v.clone());
        }
        if let Some(v) = &self.results {
            config.results = Some(v.clone());
        }
        if let Some(v) = self.drain_timeout {
            config.drain_timeout_s = v;
        }
        if let Some(v) = &self.gateway {
            config.gateway = Some(v.clone());
        }
        if let Some(v) = &self.server_secret_file {
            config.server_secret_file = Some(v.clone());
        }
        if let Some(v) = &self.admin_secret_file {
            config.admin_secret_file = Some(v.clone());
        }
        if let Some(v) = &self.state_dir {
            config.state_dir = Some(v.clone());
        }
        if let Some(v) = &self.region {
            config.region = v.clone();
        }
        if self.agones {
            config.agones = true;
        }
        if let Some(v) = self.agones_sdk_port {
            config.agones_sdk_port = Some(v);
        }
        if let Some(v) = self.adapt {
            config.adapt.enabled = v;
        }
        config.validate()?;
        Ok(config)
    }
}

/// Runs the host of game `G` until SIGTERM / SIGINT and a drain.
pub(crate) fn run<G: HostedGame>(args: &ServeArgs) -> Result<()> {
    if args.print_config {
        return print_stdout(&HostConfig::reference());
    }
    let config = args.config()?;
    let key = config.load_key()?;
    serve::<G>(&config, &key, |host| {
        // One line a supervisor (or `hightick demo`) can read.
        let games: Vec<String> = host
            .game_addresses()
            .iter()
            .map(ToString::to_string)
            .collect();
        println!(
            "hightick serve: admin http://{} game {} host {}",
            host.admin_address(),
            games.join(","),
            host.host_id()
        );
        let _ = std::io::stdout().flush();
    })
    .context("server")?;
    eprintln!("hightick serve: drained, bye");
    Ok(())
}
