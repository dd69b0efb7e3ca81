//! `hightick gateway`: the front door from a config file and flags.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use hightick_engine::mode::{HostedGame, Mode};
use hightick_gateway::config::{MAX_MODE_PLAYERS, ModeConfig};
use hightick_gateway::{GatewayConfig, Secrets, serve};

/// Flags of `hightick gateway`; each overrides the config file's field.
#[derive(Debug, Args)]
pub(crate) struct GatewayArgs {
    /// Gateway config file (TOML; every key: --print-config).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Print the reference config file, every key with its default and doc,
    /// as TOML, and exit.
    #[arg(long)]
    print_config: bool,
    /// HTTP API address.
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
    /// Database URL (sqlite:... or postgres://...); default: SQLite under --data-dir.
    #[arg(long, value_name = "URL")]
    database_url: Option<String>,
    /// Directory of the embedded SQLite database.
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Logins worked on at once (the auth worker pool).
    #[arg(long)]
    auth_workers: Option<usize>,
    /// Connect-token key file (64 hex digits, shared with servers); else $HIGHTICK_KEY.
    #[arg(long, value_name = "FILE")]
    token_key_file: Option<PathBuf>,
    /// Server secret file; else $HIGHTICK_SERVER_SECRET.
    #[arg(long, value_name = "FILE")]
    server_secret_file: Option<PathBuf>,
}

impl GatewayArgs {
    /// The config file (or defaults) with the flags applied, and the
    /// game's own modes unless the file lists `[[modes]]`.
    pub(crate) fn config(&self, game_modes: &[Mode]) -> Result<GatewayConfig> {
        let (mut config, lists_modes) = match &self.config {
            Some(path) => {
                let text = hightick_config::read(path)?;
                let file = path.display().to_string();
                (GatewayConfig::parse(&text, &file)?, lists_modes(&text))
            }
            None => (GatewayConfig::default(), false),
        };
        if !lists_modes {
            // Crowds above what a queue fills (a 400-player plaza) are
            // made by the admin API, not matchmaking.
            config.modes = game_modes
                .iter()
                .filter(|m| usize::from(m.players) <= MAX_MODE_PLAYERS)
                .map(|m| ModeConfig {
                    name: m.name.to_owned(),
                    players: usize::from(m.players),
                    settings: serde_json::Map::new(),
                })
                .collect();
        }
        if let Some(v) = self.listen {
            config.listen = v;
        }
        if let Some(v) = &self.database_url {
            config.database_url = Some(v.clone());
        }
        if let Some(v) = &self.data_dir {
            config.data_dir = v.clone();
        }
        if let Some(v) = self.auth_workers {
            config.auth_workers = v;
        }
        if let Some(v) = &self.token_key_file {
            config.token_key_file = Some(v.clone());
        }
        if let Some(v) = &self.server_secret_file {
            config.server_secret_file = Some(v.clone());
        }
        config.validate()?;
        Ok(config)
    }
}

/// Whether config text (already parsed as a gateway config, so TOML) lists
/// `[[modes]]` itself.
fn lists_modes(text: &str) -> bool {
    text.parse::<toml::Table>()
        .is_ok_and(|table| table.contains_key("modes"))
}

/// Runs the gateway of game `G` until SIGTERM / SIGINT: its matchmaking
/// queues are the game's modes unless the config lists its own.
pub(crate) fn run<G: HostedGame>(args: &GatewayArgs) -> Result<()> {
    if args.print_config {
        return crate::serve::print_stdout(&GatewayConfig::reference());
    }
    let config = args.config(G::MODES)?;
    let secrets = Secrets::load(
        config.token_key_file.as_deref(),
        config.session_key_file.as_deref(),
        config.server_secret_file.as_deref(),
    )?;
    let scheme = if config.tls.is_some() {
        "https"
    } else {
        "http"
    };
    serve(&config, secrets, |address| {
        // One line a supervisor (or a test) can read.
        println!("hightick gateway: listening on {scheme}://{address}");
        let _ = std::io::stdout().flush();
    })
    .context("gateway")?;
    eprintln!("hightick gateway: stopped");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: GatewayArgs,
    }

    const GAME: &[Mode] = &[Mode {
        name: "tag",
        players: 6,
        tick_rate_hz: 128,
        summary: "",
    }];

    fn modes(args: &[&str]) -> Vec<(String, usize)> {
        let cli = Cli::parse_from(std::iter::once("gateway").chain(args.iter().copied()));
        let config = cli.args.config(GAME).unwrap();
        config
            .modes
            .iter()
            .map(|m| (m.name.clone(), m.players))
            .collect()
    }

    #[test]
    fn the_queues_are_the_games_modes_unless_the_file_lists_its_own() {
        assert_eq!(modes(&[]), [("tag".to_owned(), 6)]);
        let dir = std::env::temp_dir().join(format!("gateway-modes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let listed = dir.join("listed.toml");
        std::fs::write(&listed, "[[modes]]\nname = \"duel\"\nplayers = 2\n").unwrap();
        let silent = dir.join("silent.toml");
        std::fs::write(&silent, "rate_limit_per_s = 5.0\n").unwrap();
        assert_eq!(
            modes(&["--config", listed.to_str().unwrap()]),
            [("duel".to_owned(), 2)]
        );
        assert_eq!(
            modes(&["--config", silent.to_str().unwrap()]),
            [("tag".to_owned(), 6)]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
