//! `hightick store`: backups of the gateway's embedded SQLite database while the
//! gateway runs, and restoring one (the work is in crate `hightick-store`).
//! PostgreSQL is backed up with `pg_dump` (docs/OPERATIONS.md).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use hightick_gateway::GatewayConfig;
use hightick_store::{SQLITE_FILE_NAME, Store, StoreOptions};

/// Flags of `hightick store`.
#[derive(Debug, Args)]
pub(crate) struct StoreArgs {
    #[command(subcommand)]
    command: StoreCommand,
}

#[derive(Debug, Subcommand)]
enum StoreCommand {
    /// Copy the embedded SQLite database to a new file while the gateway runs
    /// (one consistent snapshot). PostgreSQL: use pg_dump (docs/OPERATIONS.md).
    Backup(BackupArgs),
    /// Put a backup in place as a data directory's database. Stop the gateway
    /// first; it migrates the restored database when it starts.
    Restore(RestoreArgs),
}

/// Where the database is: the gateway's config file, or a flag.
#[derive(Debug, Args)]
struct Source {
    /// The gateway's config file: its `database_url`, else its `data_dir`.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["data_dir", "database_url"])]
    config: Option<PathBuf>,
    /// Directory of the embedded SQLite database (default: the gateway's, hightick-data).
    #[arg(long, value_name = "DIR", conflicts_with = "database_url")]
    data_dir: Option<PathBuf>,
    /// Database URL (sqlite:FILE).
    #[arg(long, value_name = "URL")]
    database_url: Option<String>,
}

#[derive(Debug, Args)]
struct BackupArgs {
    #[command(flatten)]
    source: Source,
    /// The backup file to write (must not exist).
    #[arg(long, value_name = "FILE")]
    to: PathBuf,
}

#[derive(Debug, Args)]
struct RestoreArgs {
    /// The backup file (from `hightick store backup`).
    #[arg(long, value_name = "FILE")]
    from: PathBuf,
    /// The gateway's config file, for its `data_dir`.
    #[arg(long, value_name = "FILE", conflicts_with = "data_dir")]
    config: Option<PathBuf>,
    /// The data directory to restore into (default: the gateway's, hightick-data).
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Restore over a database already in the data directory.
    #[arg(long)]
    replace: bool,
}

const PG_DUMP: &str = "PostgreSQL is backed up with its own tools: \
    pg_dump --format=custom --file FILE --dbname URL, restored with \
    pg_restore --no-owner --dbname URL FILE (docs/OPERATIONS.md)";

/// The database URL (or `None`: SQLite in the data directory) and the data
/// directory, from the config file or the flags.
fn database(source: &Source) -> Result<(Option<String>, PathBuf)> {
    if let Some(path) = &source.config {
        let config = GatewayConfig::load(path)?;
        return Ok((config.database_url, config.data_dir));
    }
    let data_dir = source
        .data_dir
        .clone()
        .unwrap_or_else(|| GatewayConfig::default().data_dir);
    Ok((source.database_url.clone(), data_dir))
}

/// The SQLite file a URL names (`sqlite:FILE`, `sqlite://FILE`, options after `?`).
fn sqlite_file(url: &str) -> Result<PathBuf> {
    let Some(rest) = url.strip_prefix("sqlite:") else {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            bail!("{PG_DUMP}");
        }
        bail!("unsupported database url (expected sqlite:FILE)");
    };
    let rest = rest.strip_prefix("//").unwrap_or(rest);
    let file = rest.split('?').next().unwrap_or_default();
    if file.is_empty() || file.contains(":memory:") || url.contains("mode=memory") {
        bail!("{url}: an in-memory database has nothing to back up");
    }
    Ok(PathBuf::from(file))
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("tokio runtime")
}

fn backup(args: &BackupArgs) -> Result<()> {
    let (url, data_dir) = database(&args.source)?;
    let file = match &url {
        Some(url) => sqlite_file(url)?,
        None => data_dir.join(SQLITE_FILE_NAME),
    };
    if !file.is_file() {
        bail!("{}: no database there", file.display());
    }
    runtime()?.block_on(async {
        // As it is: a backup never migrates the database it copies.
        let mut options = StoreOptions::new(format!("sqlite://{}", file.display()));
        options.migrate = false;
        options.max_connections = 1;
        let store = Store::open_with(&options)
            .await
            .with_context(|| format!("open {}", file.display()))?;
        let bytes = store.backup_to(&args.to).await;
        store.close().await;
        let bytes = bytes.context("backup")?;
        println!(
            "hightick store: backed up {} to {} ({bytes} bytes)",
            file.display(),
            args.to.display()
        );
        Ok(())
    })
}

fn restore(args: &RestoreArgs) -> Result<()> {
    let data_dir: PathBuf = match (&args.config, &args.data_dir) {
        (Some(path), _) => {
            let config = GatewayConfig::load(path)?;
            if let Some(url) = &config.database_url {
                if !url.starts_with("sqlite:") {
                    bail!("{PG_DUMP}");
                }
                bail!(
                    "{}: names database_url {url}; restore copies into a data directory \
                     (pass --data-dir, or copy the backup to that file with the gateway stopped)",
                    path.display()
                );
            }
            config.data_dir
        }
        (None, Some(dir)) => dir.clone(),
        (None, None) => GatewayConfig::default().data_dir,
    };
    let restored = runtime()?
        .block_on(Store::restore_in_data_dir(
            &args.from,
            Path::new(&data_dir),
            args.replace,
        ))
        .context("restore")?;
    println!(
        "hightick store: restored {} to {} ({} bytes, {} migrations applied; \
         the gateway applies newer ones when it starts)",
        args.from.display(),
        restored.database.display(),
        restored.bytes,
        restored.migrations
    );
    Ok(())
}

/// Runs `hightick store ...`.
pub(crate) fn run(args: &StoreArgs) -> Result<()> {
    match &args.command {
        StoreCommand::Backup(a) => backup(a),
        StoreCommand::Restore(a) => restore(a),
    }
}

#[cfg(test)]
mod tests {
    use super::sqlite_file;
    use std::path::PathBuf;

    #[test]
    fn sqlite_urls_name_their_file() {
        assert_eq!(
            sqlite_file("sqlite://data/h.db?mode=rwc").unwrap(),
            PathBuf::from("data/h.db")
        );
        assert_eq!(
            sqlite_file("sqlite:/abs/h.db").unwrap(),
            PathBuf::from("/abs/h.db")
        );
        assert!(sqlite_file("sqlite::memory:").is_err());
        let pg = sqlite_file("postgres://u@db/h").unwrap_err().to_string();
        assert!(pg.contains("pg_dump"), "{pg}");
    }
}
