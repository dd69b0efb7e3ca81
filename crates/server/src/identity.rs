//! Who the host is: a stable host id kept in its state directory (the same
//! across restarts, so the gateway knows it again), and the match ids it
//! mints when a create-match request brings none (host id, a per-start
//! nonce and a counter: unique across hosts and restarts).

use std::fs;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::outbox::write_durably;

/// The file under the state directory that holds the host id.
const HOST_ID_FILE: &str = "host-id";

/// The host id kept in `dir` (created on first use).
pub(crate) fn load_or_create(dir: &Path) -> io::Result<String> {
    let path = dir.join(HOST_ID_FILE);
    match fs::read_to_string(&path) {
        Ok(text) if is_host_id(text.trim()) => return Ok(text.trim().to_owned()),
        Ok(text) => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: `{}` is not a host id (1 to 32 of a-z 0-9 -)",
                    path.display(),
                    text.trim()
                ),
            ));
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    fs::create_dir_all(dir)?;
    let id = fresh();
    write_durably(dir, &path, format!("{id}\n").as_bytes())?;
    Ok(id)
}

/// A host id for a host without a state directory (this run only).
pub(crate) fn fresh() -> String {
    format!("host-{:012x}", rand::random::<u64>() >> 16)
}

fn is_host_id(id: &str) -> bool {
    (1..=32).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// Mints match ids: `<host id>-<start nonce>-<n>`.
#[derive(Debug)]
pub(crate) struct MatchIds {
    prefix: String,
    next: AtomicU64,
}

impl MatchIds {
    /// Ids for this start of host `host_id`.
    pub(crate) fn new(host_id: &str) -> Self {
        Self {
            prefix: format!("{host_id}-{:08x}", rand::random::<u32>()),
            next: AtomicU64::new(1),
        }
    }

    /// The next id.
    pub(crate) fn mint(&self) -> String {
        format!(
            "{}-{}",
            self.prefix,
            self.next.fetch_add(1, Ordering::Relaxed)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outbox::is_file_safe;

    #[test]
    fn the_host_id_survives_a_restart() {
        let dir = std::env::temp_dir().join(format!(
            "hightick-identity-{}-{}",
            std::process::id(),
            rand::random::<u32>()
        ));
        let first = load_or_create(&dir).unwrap();
        assert_eq!(load_or_create(&dir).unwrap(), first);
        fs::write(dir.join(HOST_ID_FILE), "Not An Id!\n").unwrap();
        let err = load_or_create(&dir).unwrap_err();
        assert!(err.to_string().contains("host-id"), "{err}");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn minted_ids_differ_across_starts_and_name_files() {
        let id = fresh();
        let (a, b) = (MatchIds::new(&id), MatchIds::new(&id));
        let (a1, a2, b1) = (a.mint(), a.mint(), b.mint());
        assert_ne!(a1, a2);
        assert_ne!(a1, b1, "two starts of one host");
        assert!(a1.starts_with(&id), "{a1}");
        assert!(is_file_safe(&a1) && a1.len() <= 64, "{a1}");
    }
}
