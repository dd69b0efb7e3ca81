//! [`Watched`]: a TCP stream that reports each read to its connection's
//! [`Track`], the shared [`Deadlines`] the connection's watchdog sleeps on.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use parking_lot::{Mutex, MutexGuard};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;

use super::deadline::{Deadlines, Expiry};

/// One connection's deadlines, shared by its stream, its service and its
/// watchdog; `moved` wakes the watchdog when a deadline came sooner (the
/// first byte of a request on an idle connection). An answer moves the
/// deadline from none to the idle one without a wake-up: a watchdog over a
/// busy connection looks again every [`Deadlines::recheck`], which is
/// within the idle timeout. One wake-up per request, not two.
#[derive(Debug)]
pub(crate) struct Track {
    deadlines: Mutex<Deadlines>,
    moved: Notify,
}

impl Track {
    pub(crate) fn new(deadlines: Deadlines) -> Self {
        Self {
            deadlines: Mutex::new(deadlines),
            moved: Notify::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Deadlines> {
        self.deadlines.lock()
    }

    fn read(&self) {
        if self.lock().read(Instant::now()) {
            self.moved.notify_one();
        }
    }

    /// A request's headers are complete.
    pub(crate) fn request(&self) {
        self.lock().request();
    }

    /// Its response is ready.
    pub(crate) fn responded(&self) {
        self.lock().responded(Instant::now());
    }

    /// How often a watchdog looks at a connection with no deadline.
    pub(crate) fn recheck(&self) -> std::time::Duration {
        self.lock().recheck()
    }

    /// The current deadline, if any.
    pub(crate) fn deadline(&self) -> Option<(Instant, Expiry)> {
        self.lock().deadline()
    }

    /// The deadline missed by now, if one is.
    pub(crate) fn expired(&self) -> Option<Expiry> {
        self.lock().expired(Instant::now())
    }

    /// Resolves when a deadline moves (a wake-up stored before the wait
    /// counts).
    pub(crate) async fn moved(&self) {
        self.moved.notified().await;
    }
}

/// A stream whose reads are reported to a [`Track`].
#[derive(Debug)]
pub(crate) struct Watched<S> {
    inner: S,
    track: std::sync::Arc<Track>,
}

impl<S> Watched<S> {
    pub(crate) fn new(inner: S, track: std::sync::Arc<Track>) -> Self {
        Self { inner, track }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.track.read();
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
