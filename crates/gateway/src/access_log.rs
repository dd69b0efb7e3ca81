//! The access log (`[http] access_log`): one JSON line per answered request,
//! the audit trail of who called what. Each line has the client's address
//! (behind a trusted proxy, the one it forwarded: `listen::client_ip`) and
//! the TCP peer's, the method, the route template, the status and the time
//! taken:
//!
//! ```text
//! {"ts_ms":1795000000000,"client":"203.0.113.7","peer":"10.0.0.5:41234","method":"POST","route":"/v1/auth/guest","status":200,"us":1840}
//! ```
//!
//! The route is the router's template (`/v1/matchmaking/tickets/{ticket}`),
//! never the raw path or query, which carry tickets and access tokens. Lines
//! go to a task of their own through a bounded queue: a request never waits
//! on the disk, and when the writer falls behind a line is dropped and
//! counted (`hightick_gateway_access_log_dropped_total`).

use std::fmt::Write as _;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::{AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use hightick_store::clock::now_ms;

use crate::error::GatewayError;

/// Lines waiting for the writer; past it lines are dropped.
const QUEUE: usize = 16_384;

/// Where `[http] access_log` sends the lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// `""`: no access log (the default).
    Off,
    /// `"-"`: standard error.
    Stderr,
    /// A file, appended to.
    File(PathBuf),
}

impl Destination {
    /// The config value's meaning.
    pub fn parse(value: &str) -> Self {
        match value {
            "" => Self::Off,
            "-" => Self::Stderr,
            path => Self::File(PathBuf::from(path)),
        }
    }
}

/// One answered request.
#[derive(Debug, Clone, Copy)]
pub struct Entry<'a> {
    /// The client (behind a trusted proxy, the address it forwarded).
    pub client: IpAddr,
    /// The TCP peer (the proxy, behind one).
    pub peer: Option<SocketAddr>,
    pub method: &'a str,
    /// The route template, or `unmatched`.
    pub route: &'a str,
    pub status: u16,
    pub elapsed: Duration,
}

/// The request side of the log: hands lines to the writer.
#[derive(Debug, Default)]
pub struct AccessLog {
    lines: Option<mpsc::Sender<String>>,
    dropped: AtomicU64,
}

/// The writing side: stopped (and flushed) with [`AccessLogWriter::close`].
#[derive(Debug)]
pub struct AccessLogWriter {
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl AccessLog {
    /// Opens `destination` (a file is created or appended to) and starts its
    /// writer; `Off` logs nothing and starts nothing.
    pub async fn open(
        destination: &Destination,
    ) -> Result<(Self, Option<AccessLogWriter>), GatewayError> {
        let sink: Box<dyn AsyncWrite + Send + Unpin> = match destination {
            Destination::Off => return Ok((Self::default(), None)),
            Destination::Stderr => Box::new(tokio::io::stderr()),
            Destination::File(path) => Box::new(
                tokio::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .await
                    .map_err(|e| {
                        GatewayError::Io(std::io::Error::new(
                            e.kind(),
                            format!("[http] access_log {}: {e}", path.display()),
                        ))
                    })?,
            ),
        };
        let (lines, queue) = mpsc::channel(QUEUE);
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(write_lines(queue, stopped, BufWriter::new(sink)));
        let log = Self {
            lines: Some(lines),
            dropped: AtomicU64::new(0),
        };
        Ok((log, Some(AccessLogWriter { stop, task })))
    }

    /// Logs `entry` now, or drops it (counted) when the writer is behind.
    /// With no log, nothing is done (the clock is not read).
    pub fn record(&self, entry: &Entry<'_>) {
        let Some(lines) = &self.lines else {
            return;
        };
        if lines.try_send(line(entry, now_ms())).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Lines dropped because the writer was behind.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

impl AccessLogWriter {
    /// Writes what is queued, flushes and stops.
    pub async fn close(self) {
        let _ = self.stop.send(());
        let _ = self.task.await;
    }
}

/// `entry` as one JSON line.
fn line(entry: &Entry<'_>, now_ms: i64) -> String {
    let mut out = String::with_capacity(160);
    let peer = entry.peer.map(|p| p.to_string()).unwrap_or_default();
    let _ = writeln!(
        out,
        r#"{{"ts_ms":{now_ms},"client":"{}","peer":"{peer}","method":{},"route":{},"status":{},"us":{}}}"#,
        entry.client,
        serde_json::Value::from(entry.method),
        serde_json::Value::from(entry.route),
        entry.status,
        entry.elapsed.as_micros(),
    );
    out
}

async fn write_lines(
    mut queue: mpsc::Receiver<String>,
    mut stopped: oneshot::Receiver<()>,
    mut sink: BufWriter<Box<dyn AsyncWrite + Send + Unpin>>,
) {
    loop {
        let next = tokio::select! {
            biased;
            line = queue.recv() => line,
            _ = &mut stopped => None,
        };
        let Some(first) = next else { break };
        if sink.write_all(first.as_bytes()).await.is_err() {
            return;
        }
        while let Ok(more) = queue.try_recv() {
            if sink.write_all(more.as_bytes()).await.is_err() {
                return;
            }
        }
        if sink.flush().await.is_err() {
            return;
        }
    }
    while let Ok(more) = queue.try_recv() {
        if sink.write_all(more.as_bytes()).await.is_err() {
            return;
        }
    }
    let _ = sink.flush().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_one_json_object_with_every_field() {
        let entry = Entry {
            client: "203.0.113.7".parse().unwrap(),
            peer: Some("10.0.0.5:41234".parse().unwrap()),
            method: "POST",
            route: "/v1/matchmaking/tickets/{ticket}",
            status: 401,
            elapsed: Duration::from_micros(1840),
        };
        let text = line(&entry, 17);
        assert!(text.ends_with('\n'));
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["client"], "203.0.113.7");
        assert_eq!(v["peer"], "10.0.0.5:41234");
        assert_eq!(v["route"], "/v1/matchmaking/tickets/{ticket}");
        assert_eq!(
            (v["status"].as_u64(), v["us"].as_u64()),
            (Some(401), Some(1840))
        );
        assert_eq!(v["ts_ms"], 17);
    }

    #[test]
    fn the_config_value_names_the_destination() {
        assert_eq!(Destination::parse(""), Destination::Off);
        assert_eq!(Destination::parse("-"), Destination::Stderr);
        assert_eq!(
            Destination::parse("/var/log/a.jsonl"),
            Destination::File("/var/log/a.jsonl".into())
        );
    }

    #[tokio::test]
    async fn off_logs_nothing_and_a_file_gets_every_line_by_close() {
        let (off, writer) = AccessLog::open(&Destination::Off).await.unwrap();
        assert!(writer.is_none());
        let entry = Entry {
            client: "127.0.0.1".parse().unwrap(),
            peer: None,
            method: "GET",
            route: "/healthz",
            status: 200,
            elapsed: Duration::ZERO,
        };
        off.record(&entry);
        assert_eq!(off.dropped(), 0);

        let path = std::env::temp_dir().join(format!("access-log-{}.jsonl", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let (log, writer) = AccessLog::open(&Destination::File(path.clone()))
            .await
            .unwrap();
        for _ in 0..100 {
            log.record(&entry);
        }
        writer.unwrap().close().await;
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count() as u64 + log.dropped(), 100);
        assert_eq!(log.dropped(), 0, "100 lines fit the queue");
        let _ = std::fs::remove_file(&path);
    }
}
