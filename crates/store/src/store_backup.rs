//! Backups of the embedded SQLite database while it serves, and restoring one
//! into a data directory. PostgreSQL is backed up with its own tools
//! (`pg_dump --format=custom`, `pg_restore`; docs/OPERATIONS.md).

use std::path::{Path, PathBuf};
use std::time::Duration;

use sqlx::Connection as _;
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection, SqliteLockingMode};

use super::{Backend, SQLITE_FILE_NAME, Store};
use crate::error::StoreError;

/// What [`Store::restore_in_data_dir`] put in place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    /// The database file written (`<data_dir>/hightick.db`).
    pub database: PathBuf,
    /// Migrations the backup had applied (the store applies newer ones on open).
    pub migrations: i64,
    /// Bytes copied.
    pub bytes: u64,
}

fn file_error(path: &Path, source: std::io::Error) -> StoreError {
    StoreError::File {
        path: path.display().to_string(),
        source,
    }
}

/// `path` with `suffix` appended to its file name.
fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

/// fsyncs `file`, renames it to `to`, and fsyncs the directory holding both, so
/// the finished file is on disk under its name (or not there at all).
fn settle(file: &Path, to: &Path) -> Result<u64, StoreError> {
    let bytes = {
        let f = std::fs::File::open(file).map_err(|e| file_error(file, e))?;
        f.sync_all().map_err(|e| file_error(file, e))?;
        f.metadata().map_err(|e| file_error(file, e))?.len()
    };
    std::fs::rename(file, to).map_err(|e| file_error(to, e))?;
    let dir = match to.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    // A directory opened read-only can be fsynced on Linux and the BSDs.
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(bytes)
}

fn refuse_existing(path: &Path, why: &str) -> Result<(), StoreError> {
    match std::fs::symlink_metadata(path) {
        Ok(_) => Err(file_error(
            path,
            std::io::Error::new(std::io::ErrorKind::AlreadyExists, why.to_owned()),
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(file_error(path, e)),
    }
}

impl Store {
    /// SQLite only: writes a consistent copy of the whole database to the new
    /// file `path` while the store goes on serving, and returns its size.
    ///
    /// The copy is SQLite's `VACUUM INTO`, run on one of the store's read
    /// connections: in WAL mode it reads one snapshot (the last commit when it
    /// began) while the writer goes on committing, so it holds every write
    /// acknowledged before the call and, of those that commit meanwhile, each
    /// whole or not at all (a balance and its ledger entry together). It is
    /// written beside `path` (`<path>.partial`), fsynced, and renamed into
    /// place, so `path` is either the whole backup or absent. An existing
    /// `path` is refused, never overwritten.
    ///
    /// On PostgreSQL this is [`StoreError::Unsupported`]: back up with
    /// `pg_dump --format=custom` (docs/OPERATIONS.md).
    pub async fn backup_to(&self, path: &Path) -> Result<u64, StoreError> {
        let Backend::Sqlite { reads, .. } = &self.backend else {
            return Err(StoreError::Unsupported {
                what: "backup_to is for SQLite; back up PostgreSQL with \
                       `pg_dump --format=custom` (docs/OPERATIONS.md)",
            });
        };
        refuse_existing(path, "already exists (a backup never overwrites a file)")?;
        let partial = beside(path, ".partial");
        let Some(target) = partial.to_str() else {
            return Err(crate::model::invalid("path", "must be valid UTF-8"));
        };
        match std::fs::remove_file(&partial) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(file_error(&partial, e));
            }
            _ => {}
        }
        if let Err(e) = sqlx::query("VACUUM INTO ?")
            .bind(target)
            .execute(reads)
            .await
        {
            let _ = std::fs::remove_file(&partial);
            return Err(e.into());
        }
        let to = path.to_owned();
        tokio::task::spawn_blocking(move || settle(&partial, &to))
            .await
            .map_err(|e| StoreError::Backend(sqlx::Error::Io(std::io::Error::other(e))))?
    }

    /// Restores a backup written by [`Store::backup_to`] as the embedded
    /// database of `data_dir` (`<data_dir>/hightick.db`, what
    /// [`Store::open_in_data_dir`] opens). Nothing may have that database open:
    /// stop the gateway first.
    ///
    /// The backup is checked first (`PRAGMA integrity_check`, and that it is a
    /// hightick store: it has applied migrations). A database already in
    /// `data_dir` is kept unless `replace`; when replaced, its WAL and
    /// shared-memory files go too, and a database another connection still has
    /// open is refused. The copy is written beside the target, fsynced and
    /// renamed into place. The backup's migrations are not run here: the next
    /// open applies whatever this build has that the backup lacks.
    pub async fn restore_in_data_dir(
        backup: &Path,
        data_dir: &Path,
        replace: bool,
    ) -> Result<Restored, StoreError> {
        let migrations = check_backup(backup).await?;
        std::fs::create_dir_all(data_dir).map_err(|source| StoreError::DataDir {
            path: data_dir.display().to_string(),
            source,
        })?;
        let database = data_dir.join(SQLITE_FILE_NAME);
        if database.exists() {
            if !replace {
                refuse_existing(
                    &database,
                    "already exists (pass replace to restore over it; stop the gateway first)",
                )?;
            }
            refuse_in_use(&database).await?;
        }
        let restoring = beside(&database, ".restoring");
        let (from, to) = (backup.to_owned(), database.clone());
        let bytes = tokio::task::spawn_blocking(move || {
            std::fs::copy(&from, &restoring).map_err(|e| file_error(&from, e))?;
            // The replaced database's journal belongs to it, not to the backup.
            for suffix in ["-wal", "-shm", "-journal"] {
                let old = beside(&to, suffix);
                match std::fs::remove_file(&old) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(file_error(&old, e));
                    }
                    _ => {}
                }
            }
            settle(&restoring, &to)
        })
        .await
        .map_err(|e| StoreError::Backend(sqlx::Error::Io(std::io::Error::other(e))))??;
        Ok(Restored {
            database,
            migrations,
            bytes,
        })
    }
}

/// Opens `backup` read-only and checks it: whole (`integrity_check`), and a
/// hightick store. Returns its applied migrations.
async fn check_backup(backup: &Path) -> Result<i64, StoreError> {
    use sqlx::Row as _;
    if !backup.is_file() {
        return Err(file_error(
            backup,
            std::io::Error::new(std::io::ErrorKind::NotFound, "no such backup file"),
        ));
    }
    let options = SqliteConnectOptions::new().filename(backup).read_only(true);
    let mut conn = SqliteConnection::connect_with(&options).await?;
    let check: String = sqlx::query("PRAGMA integrity_check")
        .fetch_one(&mut conn)
        .await?
        .try_get(0)?;
    let migrations: Result<i64, sqlx::Error> =
        sqlx::query("SELECT COUNT(*) FROM _sqlx_migrations WHERE success")
            .fetch_one(&mut conn)
            .await
            .and_then(|row| row.try_get(0));
    conn.close().await?;
    if check != "ok" {
        return Err(file_error(
            backup,
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("integrity check failed: {check}"),
            ),
        ));
    }
    match migrations {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(file_error(
            backup,
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "not a hightick store (no applied migrations)",
            ),
        )),
    }
}

/// Refuses `database` if another connection (a running gateway) has it open:
/// an exclusive lock is not to be had at once.
async fn refuse_in_use(database: &Path) -> Result<(), StoreError> {
    let options = SqliteConnectOptions::new()
        .filename(database)
        .locking_mode(SqliteLockingMode::Exclusive)
        .busy_timeout(Duration::ZERO);
    let mut conn = SqliteConnection::connect_with(&options).await?;
    let locked = sqlx::query("BEGIN EXCLUSIVE").execute(&mut conn).await;
    let _ = sqlx::query("ROLLBACK").execute(&mut conn).await;
    let _ = conn.close().await;
    match locked {
        Ok(_) => Ok(()),
        Err(sqlx::Error::Database(db)) if db.message().contains("locked") => Err(file_error(
            database,
            std::io::Error::new(
                std::io::ErrorKind::ResourceBusy,
                "is open elsewhere (stop the gateway before restoring)",
            ),
        )),
        Err(e) => Err(e.into()),
    }
}
