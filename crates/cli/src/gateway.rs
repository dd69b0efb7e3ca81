//! `hightick gateway`: the front door from a config file and flags.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
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
    /// The config file (or defaults) with the flags applied.
    pub(crate) fn config(&self) -> Result<GatewayConfig> {
        let mut config = match &self.config {
            Some(path) => GatewayConfig::load(path)?,
            None => GatewayConfig::default(),
        };
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

/// Runs the gateway until SIGTERM / SIGINT.
pub(crate) fn run(args: &GatewayArgs) -> Result<()> {
    if args.print_config {
        return crate::serve::print_stdout(&GatewayConfig::reference());
    }
    let config = args.config()?;
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
