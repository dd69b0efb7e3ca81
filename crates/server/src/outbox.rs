//! The results outbox: each finished match's result, as the gateway's
//! `POST /v1/results` takes it ([`MatchResult::for_gateway`]), as a file of its own under
//! `<dir>/pending/`, written and fsynced (file and directory) before the
//! match counts as closed. A record leaves `pending/` only when the gateway
//! has acknowledged it ([`Outbox::acknowledge`]) or refused it for good
//! ([`Outbox::reject`], kept under `<dir>/rejected/` with the reason beside
//! it). A host that crashes finds its undelivered results there at its next
//! start.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use hightick_host_api::MatchResult;

/// The outbox directory.
#[derive(Debug, Clone)]
pub struct Outbox {
    pending: PathBuf,
    rejected: PathBuf,
}

impl Outbox {
    /// Opens (creating) the outbox under `dir`, dropping half-written
    /// records a crash left behind (their match was not yet closed).
    pub fn open(dir: &Path) -> io::Result<Self> {
        let outbox = Self {
            pending: dir.join("pending"),
            rejected: dir.join("rejected"),
        };
        fs::create_dir_all(&outbox.pending)?;
        fs::create_dir_all(&outbox.rejected)?;
        for entry in fs::read_dir(&outbox.pending)? {
            let path = entry?.path();
            if path.extension().is_some_and(|e| e == "tmp") {
                fs::remove_file(&path)?;
            }
        }
        Ok(outbox)
    }

    /// Writes `record` durably. A record already pending under the same
    /// match id is kept as it is (the first result of a match stands).
    pub fn put(&self, record: &MatchResult) -> io::Result<()> {
        let path = self.path_of(&record.match_id)?;
        if path.exists() {
            return Ok(());
        }
        let text = serde_json::to_vec_pretty(record).map_err(io::Error::other)?;
        write_durably(&self.pending, &path, &text)
    }

    /// Every pending record, oldest match id first by file name order. A
    /// file that does not parse is moved to `rejected/` with the reason.
    pub fn pending(&self) -> io::Result<Vec<MatchResult>> {
        let mut paths: Vec<PathBuf> = fs::read_dir(&self.pending)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        paths.sort();
        let mut records = Vec::with_capacity(paths.len());
        for path in paths {
            let parsed = fs::read(&path)
                .map_err(|e| e.to_string())
                .and_then(|bytes| {
                    serde_json::from_slice::<MatchResult>(&bytes).map_err(|e| e.to_string())
                });
            match parsed {
                Ok(record) => records.push(record),
                Err(reason) => self.move_to_rejected(&path, &reason)?,
            }
        }
        Ok(records)
    }

    /// The gateway has the record: it leaves the outbox.
    pub fn acknowledge(&self, match_id: &str) -> io::Result<()> {
        let path = self.path_of(match_id)?;
        match fs::remove_file(&path) {
            Ok(()) => sync_dir(&self.pending),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// The gateway refused the record for good (`reason`): it moves to
    /// `rejected/`, with the reason in a `.reason` file beside it, for an
    /// operator to look at. It is never posted again.
    pub fn reject(&self, match_id: &str, reason: &str) -> io::Result<()> {
        let path = self.path_of(match_id)?;
        self.move_to_rejected(&path, reason)
    }

    /// Records waiting, counted from the directory.
    pub fn len(&self) -> io::Result<usize> {
        Ok(fs::read_dir(&self.pending)?
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .count())
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> io::Result<bool> {
        self.len().map(|n| n == 0)
    }

    fn move_to_rejected(&self, path: &Path, reason: &str) -> io::Result<()> {
        let Some(name) = path.file_name() else {
            return Ok(());
        };
        let target = self.rejected.join(name);
        fs::write(target.with_extension("reason"), reason)?;
        match fs::rename(path, &target) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        }
        sync_dir(&self.rejected)?;
        sync_dir(&self.pending)
    }

    fn path_of(&self, match_id: &str) -> io::Result<PathBuf> {
        if !is_file_safe(match_id) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("match id `{match_id}` cannot name a file"),
            ));
        }
        Ok(self.pending.join(format!("{match_id}.json")))
    }
}

/// Whether `id` is a usable match id: 1 to 64 of `A-Z a-z 0-9 . _ -`, not
/// starting with a dot (so it is safe as a file name).
pub fn is_file_safe(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Writes `bytes` to `path` in `dir` so that a crash leaves either the old
/// state or the whole new file: a `.tmp` beside it, fsynced, renamed over,
/// and the directory fsynced.
pub(crate) fn write_durably(dir: &Path, path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = path.with_extension("tmp");
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    drop(file);
    fs::rename(&tmp, path)?;
    sync_dir(dir)
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str) -> MatchResult {
        let text = format!(
            r#"{{"match_id":"{id}","mode":"5v5","players":[{{"account_id":7,"team":0,"score":3,"outcome":"win"}}]}}"#
        );
        serde_json::from_str(&text).unwrap()
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "hightick-outbox-{name}-{}-{}",
            std::process::id(),
            rand::random::<u32>()
        ));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_record_stays_until_acknowledged_and_survives_a_reopen() {
        let dir = temp_dir("ack");
        let outbox = Outbox::open(&dir).unwrap();
        outbox.put(&record("m-b")).unwrap();
        outbox.put(&record("m-a")).unwrap();
        // A crash mid-write leaves a .tmp: the reopen drops it.
        fs::write(dir.join("pending/m-c.tmp"), b"{half").unwrap();
        let reopened = Outbox::open(&dir).unwrap();
        let ids: Vec<String> = reopened
            .pending()
            .unwrap()
            .into_iter()
            .map(|r| r.match_id)
            .collect();
        assert_eq!(ids, ["m-a", "m-b"]);
        reopened.acknowledge("m-a").unwrap();
        reopened.acknowledge("m-a").unwrap();
        assert_eq!(reopened.len().unwrap(), 1);
        assert_eq!(reopened.pending().unwrap(), vec![record("m-b")]);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_first_result_of_a_match_stands() {
        let dir = temp_dir("first");
        let outbox = Outbox::open(&dir).unwrap();
        outbox.put(&record("m-1")).unwrap();
        let mut second = record("m-1");
        second.players[0].score = 99;
        outbox.put(&second).unwrap();
        assert_eq!(outbox.pending().unwrap(), vec![record("m-1")]);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn refused_and_unreadable_records_move_aside_with_their_reason() {
        let dir = temp_dir("reject");
        let outbox = Outbox::open(&dir).unwrap();
        outbox.put(&record("m-1")).unwrap();
        outbox
            .reject("m-1", "400: players: unknown account")
            .unwrap();
        fs::write(dir.join("pending/m-2.json"), b"not json").unwrap();
        assert!(outbox.pending().unwrap().is_empty());
        assert!(outbox.is_empty().unwrap());
        let reason = fs::read_to_string(dir.join("rejected/m-1.reason")).unwrap();
        assert!(reason.contains("unknown account"), "{reason}");
        assert!(dir.join("rejected/m-2.json").exists());
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn ids_that_cannot_name_a_file_are_refused() {
        for bad in ["", "../x", ".hidden", "a/b", "a b", &"x".repeat(65)] {
            assert!(!is_file_safe(bad), "{bad:?}");
        }
        for good in ["m-0a1b", "host.7_1", "A-9"] {
            assert!(is_file_safe(good), "{good:?}");
        }
        let outbox = Outbox::open(&temp_dir("bad")).unwrap();
        assert!(outbox.put(&record("../escape")).is_err());
    }
}
