//! [`RequestLog`]: the raw per-request log, only when a scenario asks for
//! it (`[request_log]`, or `hightick swarm run --request-log PATH`).
//!
//! The measurements never need it (they are interval histograms); it is
//! for looking at single requests after the fact. Drivers hand fixed-size
//! [`Entry`]s to a bounded channel without blocking or allocating; one
//! writer thread formats them as tab-separated lines
//! (`ms_since_start player step status_or_error latency_us`) and rotates
//! the file when it passes `rotate_bytes`: `requests.log` becomes
//! `requests.log.1`, `.1` becomes `.2`, and so on, keeping `keep` old files.
//! When the channel is full (the disk is slower than the swarm), entries are
//! dropped and counted, never waited for.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::thread::JoinHandle;

use crate::error::SwarmError;
use crate::interval::ErrorKind;

/// Entries that may wait for the writer before new ones are dropped.
const QUEUE: usize = 64 * 1024;

/// Where and how the raw per-request log is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestLogConfig {
    /// The file being written; rotated files get `.1`, `.2`, ... appended.
    pub path: PathBuf,
    /// Rotate when the file passes this many bytes.
    pub rotate_bytes: u64,
    /// Rotated files kept (older ones are deleted).
    pub keep: u32,
}

impl RequestLogConfig {
    /// 64 MiB per file, 8 old files kept.
    pub fn at(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            rotate_bytes: 64 << 20,
            keep: 8,
        }
    }
}

/// One request's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Milliseconds since the run started.
    pub at_ms: u64,
    /// The player (index within its driver's shard).
    pub player: u32,
    /// The step id (an index into the scenario's step names).
    pub step: u16,
    /// The HTTP status, or why there was none.
    pub outcome: Result<u16, ErrorKind>,
    /// Response time, microseconds.
    pub latency_us: u64,
}

/// The drivers' end of the log: cheap to clone, never blocks.
#[derive(Debug, Clone)]
pub struct RequestLog {
    tx: SyncSender<Entry>,
    dropped: Arc<AtomicU64>,
}

impl RequestLog {
    /// Creates the file and starts the writer thread; `step_names` name
    /// the steps in the lines.
    pub fn open(
        config: &RequestLogConfig,
        step_names: Vec<String>,
    ) -> Result<(Self, RequestLogWriter), SwarmError> {
        let file = create(&config.path)?;
        let (tx, rx) = sync_channel(QUEUE);
        let dropped = Arc::new(AtomicU64::new(0));
        let config = config.clone();
        let thread = std::thread::Builder::new()
            .name("hightick-swarm-log".to_owned())
            .spawn(move || write_all(rx, file, &config, &step_names))
            .map_err(SwarmError::io("starting the request log writer"))?;
        Ok((
            Self {
                tx,
                dropped: dropped.clone(),
            },
            RequestLogWriter { thread, dropped },
        ))
    }

    /// Queues one entry; drops (and counts) it if the writer is behind.
    pub fn log(&self, entry: Entry) {
        match self.tx.try_send(entry) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// The writer thread; finishes once every [`RequestLog`] clone is dropped.
#[derive(Debug)]
pub struct RequestLogWriter {
    thread: JoinHandle<Result<LogSummary, std::io::Error>>,
    dropped: Arc<AtomicU64>,
}

/// What the writer wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct LogSummary {
    /// Lines written.
    pub lines: u64,
    /// Entries dropped because the writer was behind.
    pub dropped: u64,
    /// Times the file was rotated.
    pub rotations: u64,
}

impl RequestLogWriter {
    /// Waits for the writer to drain and close the file (blocking: call it
    /// after dropping every [`RequestLog`], off the async runtime).
    pub fn finish(self) -> Result<LogSummary, SwarmError> {
        let mut summary = self
            .thread
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the writer thread panicked")))
            .map_err(SwarmError::io("writing the request log"))?;
        summary.dropped = self.dropped.load(Ordering::Relaxed);
        Ok(summary)
    }
}

fn create(path: &Path) -> Result<BufWriter<File>, SwarmError> {
    File::create(path)
        .map(|f| BufWriter::with_capacity(256 * 1024, f))
        .map_err(SwarmError::io(format!("creating {}", path.display())))
}

fn rotated(path: &Path, n: u32) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{n}"));
    PathBuf::from(name)
}

/// Shifts `path.(keep-1)` .. `path` up by one, dropping the oldest.
fn rotate(path: &Path, keep: u32) -> std::io::Result<()> {
    if keep == 0 {
        return std::fs::remove_file(path);
    }
    let _ = std::fs::remove_file(rotated(path, keep));
    for n in (1..keep).rev() {
        let from = rotated(path, n);
        if from.exists() {
            std::fs::rename(&from, rotated(path, n + 1))?;
        }
    }
    std::fs::rename(path, rotated(path, 1))
}

fn write_all(
    rx: Receiver<Entry>,
    mut out: BufWriter<File>,
    config: &RequestLogConfig,
    step_names: &[String],
) -> Result<LogSummary, std::io::Error> {
    let mut summary = LogSummary::default();
    let mut written = 0u64;
    let mut line = String::with_capacity(128);
    while let Ok(e) = rx.recv() {
        use std::fmt::Write as _;
        line.clear();
        let step = step_names
            .get(usize::from(e.step))
            .map_or("?", String::as_str);
        let _ = match e.outcome {
            Ok(status) => writeln!(
                line,
                "{}\t{}\t{step}\t{status}\t{}",
                e.at_ms, e.player, e.latency_us
            ),
            Err(kind) => writeln!(
                line,
                "{}\t{}\t{step}\t{}\t{}",
                e.at_ms,
                e.player,
                kind.name(),
                e.latency_us
            ),
        };
        if written > 0 && written + line.len() as u64 > config.rotate_bytes {
            out.flush()?;
            drop(out);
            rotate(&config.path, config.keep)?;
            out = BufWriter::with_capacity(256 * 1024, File::create(&config.path)?);
            written = 0;
            summary.rotations += 1;
        }
        out.write_all(line.as_bytes())?;
        written += line.len() as u64;
        summary.lines += 1;
    }
    out.flush()?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_rotate_and_old_files_beyond_keep_go() {
        let dir = std::env::temp_dir().join(format!("hightick-request-log-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let config = RequestLogConfig {
            path: dir.join("requests.log"),
            rotate_bytes: 200,
            keep: 2,
        };
        let (log, writer) = RequestLog::open(&config, vec!["login".into(), "ping".into()]).unwrap();
        for i in 0..100u32 {
            log.log(Entry {
                at_ms: u64::from(i),
                player: i,
                step: (i % 2) as u16,
                outcome: if i == 7 {
                    Err(ErrorKind::Timeout)
                } else {
                    Ok(200)
                },
                latency_us: 1500,
            });
        }
        drop(log);
        let summary = writer.finish().unwrap();
        let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
        let newest = read(&config.path);
        let older = read(&rotated(&config.path, 1)) + &read(&rotated(&config.path, 2));
        let gone = rotated(&config.path, 3).exists();
        let _ = std::fs::remove_dir_all(&dir);

        assert_eq!(summary.lines + summary.dropped, 100);
        assert!(summary.rotations >= 5, "{summary:?}");
        assert!(!gone, "only `keep` rotated files remain");
        assert!(newest.len() <= 200 && !newest.is_empty());
        assert!(
            newest
                .lines()
                .last()
                .unwrap()
                .starts_with("99\t99\tping\t200\t1500"),
            "{newest}"
        );
        assert!(older.lines().all(|l| l.split('\t').count() == 5), "{older}");
    }
}
