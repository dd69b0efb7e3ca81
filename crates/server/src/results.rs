//! Where finished matches go: the workers hand each [`MatchResult`] to one
//! results thread, which appends it to the results file (if configured),
//! writes it durably to the outbox (if the host reports to a gateway) and
//! hands it to the gateway link for posting. Until that thread is done with
//! a match, the match still counts as open ([`Settling`]): a heartbeat
//! reports it among the active matches, and a drain waits for it.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Sender};
use std::thread::JoinHandle;

use crate::error::ServerError;
use hightick_host_api::MatchResult;
use parking_lot::{Mutex, MutexGuard};

use crate::outbox::Outbox;

/// Matches retired by their worker whose result is not yet durable, and the
/// ids of every match the host holds (running or settling), so an id is
/// never hosted twice at once.
#[derive(Debug, Default)]
pub(crate) struct Settling {
    pending: AtomicUsize,
    /// Results in the outbox the gateway has not acknowledged (set by the
    /// gateway link).
    unacknowledged: AtomicUsize,
    live: Mutex<HashSet<String>>,
}

impl Settling {
    /// Results in the outbox the gateway has not yet acknowledged (0 for a
    /// host without a gateway).
    pub(crate) fn unacknowledged(&self) -> usize {
        self.unacknowledged.load(Ordering::Relaxed)
    }

    /// The gateway link's count of results it still has to deliver.
    pub(crate) fn set_unacknowledged(&self, n: usize) {
        self.unacknowledged.store(n, Ordering::Relaxed);
    }

    /// Retired matches whose result is not yet written.
    pub(crate) fn pending(&self) -> usize {
        self.pending.load(Ordering::SeqCst)
    }

    /// Claims `id` for a new match; `false` if a match holds it already.
    pub(crate) fn claim(&self, id: &str) -> bool {
        self.live_ids().insert(id.to_owned())
    }

    /// A retired match's result is written: it no longer counts.
    fn settled(&self, match_id: &str) {
        self.pending.fetch_sub(1, Ordering::SeqCst);
        self.release(match_id);
    }

    /// Gives `id` back (its match was refused, or its result is written).
    pub(crate) fn release(&self, id: &str) {
        self.live_ids().remove(id);
    }

    fn live_ids(&self) -> MutexGuard<'_, HashSet<String>> {
        self.live.lock()
    }
}

/// A worker's end of the results thread.
#[derive(Debug, Clone)]
pub(crate) struct ResultSender {
    tx: Sender<MatchResult>,
    settling: Arc<Settling>,
}

impl ResultSender {
    /// Hands a retired match's result over; it counts as settling until the
    /// results thread has written it.
    pub(crate) fn send(&self, line: MatchResult) {
        self.settling.pending.fetch_add(1, Ordering::SeqCst);
        if let Err(mpsc::SendError(line)) = self.tx.send(line) {
            self.settling.settled(&line.match_id);
        }
    }
}

/// Where the results thread puts each result.
#[derive(Debug, Default)]
pub(crate) struct ResultSinks {
    /// The results file (JSON lines).
    pub file: Option<File>,
    /// The outbox, and the gateway link that posts what lands there.
    pub outbox: Option<(Outbox, Sender<MatchResult>)>,
    /// Told each match's id once its result is written (the Agones
    /// lifecycle gives the match's counter slot back).
    pub ended: Option<tokio::sync::mpsc::UnboundedSender<String>>,
}

impl ResultSinks {
    /// Opens the results file at `path` for appending.
    pub(crate) fn open_file(path: &Path) -> Result<File, ServerError> {
        Ok(OpenOptions::new().create(true).append(true).open(path)?)
    }
}

/// Starts the results thread. It ends when every [`ResultSender`] is gone
/// (the workers have stopped) and every result is written.
pub(crate) fn start(
    mut sinks: ResultSinks,
    settling: Arc<Settling>,
) -> Result<(ResultSender, JoinHandle<()>), ServerError> {
    let (tx, rx) = mpsc::channel::<MatchResult>();
    let sender = ResultSender {
        tx,
        settling: Arc::clone(&settling),
    };
    let thread = std::thread::Builder::new()
        .name("hightick-results".to_owned())
        .spawn(move || {
            for line in rx {
                write(&mut sinks, &line);
                settling.settled(&line.match_id);
                if let Some(ended) = &sinks.ended {
                    let _ = ended.send(line.match_id);
                }
            }
            if let Some(file) = &sinks.file {
                let _ = file.sync_all();
            }
        })?;
    Ok((sender, thread))
}

fn write(sinks: &mut ResultSinks, line: &MatchResult) {
    // Each line is written whole and flushed before the next: a drain waits
    // for this thread, so nothing is cut mid-write.
    if let Some(file) = &mut sinks.file
        && let Ok(mut text) = serde_json::to_string(line)
    {
        text.push('\n');
        let _ = file.write_all(text.as_bytes());
        let _ = file.flush();
    }
    let Some((outbox, link)) = &sinks.outbox else {
        return;
    };
    let record = line.for_gateway();
    match outbox.put(&record) {
        Ok(()) => {
            let _ = link.send(record);
        }
        Err(e) => eprintln!(
            "hightick serve: match {}: the outbox could not take its result: {e}",
            line.match_id
        ),
    }
}
