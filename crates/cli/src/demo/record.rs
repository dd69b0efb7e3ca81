//! Where recorded runs go (`--record`, `hightick lab history|compare`): the embedded
//! SQLite database under a data directory, or a store URL.

use std::path::PathBuf;

use clap::Args;
use hightick_lab::HistoryLocation;

/// Environment variable naming the default data directory.
pub(crate) const DATA_DIR_ENV: &str = "HIGHTICK_DATA_DIR";

/// The results database flags.
#[derive(Debug, Clone, Args)]
pub(crate) struct HistoryDbArgs {
    /// Directory of the embedded results database (hightick.db); default
    /// $HIGHTICK_DATA_DIR, else $XDG_DATA_HOME/hightick, else ~/.local/share/hightick.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// A results database URL instead (sqlite://FILE, postgres://...).
    #[arg(long, value_name = "URL", conflicts_with = "data_dir")]
    pub database_url: Option<String>,
}

impl HistoryDbArgs {
    /// The location these flags (and the environment) name.
    pub(crate) fn location(&self) -> HistoryLocation {
        if let Some(url) = &self.database_url {
            return HistoryLocation::Url(url.clone());
        }
        let env = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let dir = self
            .data_dir
            .clone()
            .or_else(|| env(DATA_DIR_ENV))
            .or_else(|| env("XDG_DATA_HOME").map(|d| d.join("hightick")))
            .or_else(|| env("HOME").map(|h| h.join(".local/share/hightick")))
            .unwrap_or_else(|| PathBuf::from("hightick-data"));
        HistoryLocation::DataDir(dir)
    }

    /// How the location is shown to a person (never a URL's password).
    pub(crate) fn describe(&self) -> String {
        match self.location() {
            HistoryLocation::DataDir(dir) => dir
                .join(hightick_lab::results_db::HISTORY_FILE_NAME)
                .display()
                .to_string(),
            HistoryLocation::Url(url) => redact(&url),
        }
    }
}

/// `postgres://user:secret@host/db` -> `postgres://user:***@host/db`.
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    match rest.split_once('@') {
        Some((user_info, host)) => {
            let user = user_info.split(':').next().unwrap_or("");
            if user_info.contains(':') {
                format!("{scheme}://{user}:***@{host}")
            } else {
                url.to_string()
            }
        }
        None => url.to_string(),
    }
}

/// `--record` and where to.
#[derive(Debug, Clone, Args)]
pub(crate) struct RecordArgs {
    /// Store the run (commit, build profile, host, config, summary) in the results database.
    #[arg(long)]
    pub record: bool,
    #[command(flatten)]
    pub db: HistoryDbArgs,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_their_passwords_when_shown() {
        assert_eq!(
            redact("postgres://u:pw@h:5432/db"),
            "postgres://u:***@h:5432/db"
        );
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(redact("sqlite::memory:"), "sqlite::memory:");
    }

    #[test]
    fn a_url_wins_over_the_data_dir() {
        let args = HistoryDbArgs {
            data_dir: None,
            database_url: Some("sqlite::memory:".into()),
        };
        assert_eq!(
            args.location(),
            HistoryLocation::Url("sqlite::memory:".into())
        );
        let args = HistoryDbArgs {
            data_dir: Some("/tmp/x".into()),
            database_url: None,
        };
        assert_eq!(args.location(), HistoryLocation::DataDir("/tmp/x".into()));
    }
}
