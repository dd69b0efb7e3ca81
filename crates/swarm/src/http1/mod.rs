//! A purpose-built HTTP/1.1 client connection for the swarm's
//! [keep-alive pool](crate::keepalive): one TCP stream, one request at a
//! time, the request written into a reused buffer ([`request`]) and the
//! response read from a reused buffer by a sans-IO [`ResponseReader`]
//! ([`response`]). Nothing is spawned and, once the buffers have grown to
//! the traffic's size, a round trip allocates only the body it returns.
//!
//! The stream is plain TCP or [TLS](crate::tls) (`https://` targets).
//!
//! What it is not: a general HTTP client. No HTTP/2, no pipelining, no
//! upgrades, no redirects; the swarm's steps need none.

pub mod request;
pub mod response;

use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::tls::Stream;

pub use request::write_request;
pub use response::{Progress, ResponseError, ResponseReader};

/// The read buffer's starting size; it grows only for a longer head or
/// line (the body is copied out as it arrives).
const READ_BUFFER: usize = 4 * 1024;

/// Why a round trip failed.
#[derive(Debug, thiserror::Error)]
pub enum RoundTripError {
    /// Writing or reading the socket failed.
    #[error("connection: {0}")]
    Io(#[from] std::io::Error),
    /// The response was not valid HTTP/1.1.
    #[error(transparent)]
    Response(#[from] ResponseError),
}

/// One keep-alive connection. See the [module docs](self).
#[derive(Debug)]
pub struct Connection {
    stream: Stream,
    out: Vec<u8>,
    input: Vec<u8>,
    /// Unread bytes are `input[start..end]`.
    start: usize,
    end: usize,
    reader: ResponseReader,
    reusable: bool,
}

impl Connection {
    /// Wraps a connected stream (a `TcpStream`, or a TLS one).
    pub fn new(stream: impl Into<Stream>) -> Self {
        Self {
            stream: stream.into(),
            out: Vec::new(),
            input: vec![0; READ_BUFFER],
            start: 0,
            end: 0,
            reader: ResponseReader::new(),
            reusable: true,
        }
    }

    /// Whether the connection can no longer carry a request: a response
    /// said so, or the peer closed it (or sent something unasked) while
    /// it sat idle. Never blocks.
    pub fn is_closed(&mut self) -> bool {
        !self.reusable || self.stream.is_closed()
    }

    /// Whether the last response left the connection able to carry
    /// another request (without probing the socket, unlike
    /// [`is_closed`](Self::is_closed)).
    pub fn keeps_alive(&self) -> bool {
        self.reusable
    }

    /// Sends `request` and reads its whole response: the status and the
    /// body. Afterwards [`is_closed`](Self::is_closed) says whether the
    /// connection can carry another request.
    pub async fn round_trip(
        &mut self,
        request: Request<Full<Bytes>>,
    ) -> Result<(u16, &[u8]), RoundTripError> {
        self.reusable = false;
        let head_only = write_request(&mut self.out, request);
        self.stream.write_all(&self.out).await?;
        // TLS may hold the request's last record until flushed (its socket
        // was full for a moment): the server would wait for the rest.
        self.stream.flush().await?;
        self.reader.start(head_only);
        // Bytes left from an earlier response were never asked for.
        let stray = self.start != self.end;
        self.start = 0;
        self.end = 0;
        loop {
            let (used, progress) = self.reader.feed(&self.input[self.start..self.end])?;
            self.start += used;
            if progress == Progress::Done {
                break;
            }
            self.make_room();
            let n = self.stream.read(&mut self.input[self.end..]).await?;
            if n == 0 {
                self.reader.close()?;
                break;
            }
            self.end += n;
        }
        self.reusable = self.reader.keep_alive() && !stray && self.start == self.end;
        Ok((self.reader.status(), self.reader.body()))
    }

    /// Free space after `end`: moves the unread bytes to the front, and
    /// doubles the buffer if they fill it (a head or line still arriving;
    /// the reader bounds both).
    fn make_room(&mut self) {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
        if self.end < self.input.len() {
            return;
        }
        self.input.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        if self.end == self.input.len() {
            self.input.resize(self.input.len() * 2, 0);
        }
    }
}

#[cfg(test)]
mod tests;
