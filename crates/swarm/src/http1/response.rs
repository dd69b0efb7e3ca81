//! Reading one HTTP/1.1 response from bytes as they arrive, sans-IO:
//! [`ResponseReader::feed`] takes whatever the socket gave and says how
//! much it used; [`ResponseReader::close`] says the peer hung up. Bodies
//! come by `Content-Length`, by chunked transfer-encoding (extensions and
//! trailers skipped) or, failing both, up to the close. The body is kept
//! in a buffer reused from one response to the next.

use thiserror::Error;

/// A response head longer than this is refused.
pub const MAX_HEAD: usize = 64 * 1024;
/// A chunk-size or trailer line longer than this is refused.
pub const MAX_LINE: usize = 4 * 1024;
/// A body longer than this is refused.
pub const MAX_BODY: usize = 64 * 1024 * 1024;
const MAX_HEADERS: usize = 64;

/// Why a response could not be read. Every malformed input ends here,
/// never in a panic.
#[derive(Debug, Error, Clone, Copy, PartialEq, Eq)]
pub enum ResponseError {
    /// The status line or a header is not HTTP/1.x.
    #[error("malformed response head: {0}")]
    Head(httparse::Error),
    /// The head did not end within [`MAX_HEAD`] bytes.
    #[error("response head over {MAX_HEAD} bytes")]
    HeadTooLarge,
    /// `Content-Length` is not a number, or two of them disagree.
    #[error("bad Content-Length")]
    ContentLength,
    /// A chunk-size line is not a hexadecimal size (with optional extensions).
    #[error("bad chunk-size line")]
    ChunkSize,
    /// Chunk data was not followed by a line end.
    #[error("chunk data not followed by CRLF")]
    ChunkEnd,
    /// A chunk-size or trailer line did not end within [`MAX_LINE`] bytes.
    #[error("line over {MAX_LINE} bytes")]
    LineTooLong,
    /// The body is longer than [`MAX_BODY`].
    #[error("body over {MAX_BODY} bytes")]
    BodyTooLarge,
    /// The peer closed before the response was complete.
    #[error("connection closed before the response was complete")]
    Truncated,
    /// `101 Switching Protocols`: the swarm's HTTP steps never upgrade.
    #[error("unexpected 101 Switching Protocols")]
    Upgrade,
}

/// Whether a response is complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// More bytes are needed.
    More,
    /// The response is complete.
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Head,
    Fixed(u64),
    ChunkSize,
    ChunkData(u64),
    ChunkEnd,
    Trailer,
    UntilClose,
    Done,
}

/// One response at a time on one connection. See the [module docs](self).
#[derive(Debug)]
pub struct ResponseReader {
    state: State,
    head_only: bool,
    status: u16,
    keep_alive: bool,
    body: Vec<u8>,
}

impl Default for ResponseReader {
    fn default() -> Self {
        Self::new()
    }
}

impl ResponseReader {
    /// A reader waiting for its first response.
    pub fn new() -> Self {
        Self {
            state: State::Head,
            head_only: false,
            status: 0,
            keep_alive: true,
            body: Vec::new(),
        }
    }

    /// Gets ready for the response to the next request (`head_only`: the
    /// request was a `HEAD`, so the response has no body).
    pub fn start(&mut self, head_only: bool) {
        self.state = State::Head;
        self.head_only = head_only;
        self.status = 0;
        self.keep_alive = true;
        self.body.clear();
    }

    /// Reads what it can from `input`: the number of bytes used and
    /// whether the response is complete. Unused bytes are a partial head
    /// or line (feed them again with more behind them) or, once
    /// [`Progress::Done`], bytes beyond this response.
    pub fn feed(&mut self, input: &[u8]) -> Result<(usize, Progress), ResponseError> {
        let mut used = 0;
        loop {
            let rest = &input[used..];
            match self.state {
                State::Done => return Ok((used, Progress::Done)),
                State::Head => match self.head(rest)? {
                    Some(n) => used += n,
                    None => return Ok((used, Progress::More)),
                },
                State::Fixed(left) | State::ChunkData(left) => {
                    let n = usize::try_from(left).map_or(rest.len(), |l| l.min(rest.len()));
                    self.take_body(&rest[..n])?;
                    used += n;
                    let left = left - n as u64;
                    let chunked = matches!(self.state, State::ChunkData(_));
                    self.state = match (left, chunked) {
                        (0, false) => State::Done,
                        (0, true) => State::ChunkEnd,
                        (l, false) => State::Fixed(l),
                        (l, true) => State::ChunkData(l),
                    };
                    if left > 0 {
                        return Ok((used, Progress::More));
                    }
                }
                State::ChunkSize => match line(rest)? {
                    Some((text, n)) => {
                        let size = chunk_size(text)?;
                        used += n;
                        self.state = if size == 0 {
                            State::Trailer
                        } else {
                            State::ChunkData(size)
                        };
                    }
                    None => return Ok((used, Progress::More)),
                },
                State::ChunkEnd => match line(rest)? {
                    Some((b"", n)) => {
                        used += n;
                        self.state = State::ChunkSize;
                    }
                    Some(_) => return Err(ResponseError::ChunkEnd),
                    None if rest.len() >= 2 => return Err(ResponseError::ChunkEnd),
                    None => return Ok((used, Progress::More)),
                },
                State::Trailer => match line(rest)? {
                    Some((text, n)) => {
                        used += n;
                        if text.is_empty() {
                            self.state = State::Done;
                        }
                    }
                    None => return Ok((used, Progress::More)),
                },
                State::UntilClose => {
                    self.take_body(rest)?;
                    return Ok((input.len(), Progress::More));
                }
            }
        }
    }

    /// The peer closed the connection: fine if the body runs up to the
    /// close (or the response was already complete), an error otherwise.
    pub fn close(&mut self) -> Result<(), ResponseError> {
        self.keep_alive = false;
        match self.state {
            State::UntilClose | State::Done => {
                self.state = State::Done;
                Ok(())
            }
            _ => Err(ResponseError::Truncated),
        }
    }

    /// Whether the response is complete.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// The status code (0 before the head is read).
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The body read so far.
    pub fn body(&self) -> &[u8] {
        &self.body
    }

    /// Whether the connection may carry another request after this
    /// response (no `Connection: close`, not HTTP/1.0 without keep-alive,
    /// not a body delimited by the close).
    pub fn keep_alive(&self) -> bool {
        self.keep_alive
    }

    /// Parses a head from the start of `rest`; `None` if it is not all there.
    fn head(&mut self, rest: &[u8]) -> Result<Option<usize>, ResponseError> {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut response = httparse::Response::new(&mut headers);
        let n = match response.parse(rest).map_err(ResponseError::Head)? {
            httparse::Status::Complete(n) => n,
            httparse::Status::Partial if rest.len() > MAX_HEAD => {
                return Err(ResponseError::HeadTooLarge);
            }
            httparse::Status::Partial => return Ok(None),
        };
        let status = response.code.unwrap_or(0);
        if status == 101 {
            return Err(ResponseError::Upgrade);
        }
        if (100..200).contains(&status) {
            // An interim response (100 Continue, 103 Early Hints): the
            // real one follows.
            return Ok(Some(n));
        }
        let mut length: Option<u64> = None;
        let mut transfer: Option<bool> = None;
        let (mut close, mut keep) = (false, false);
        for h in response.headers.iter() {
            if h.name.eq_ignore_ascii_case("content-length") {
                let l = content_length(h.value)?;
                if length.is_some_and(|old| old != l) {
                    return Err(ResponseError::ContentLength);
                }
                length = Some(l);
            } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
                let last = h.value.rsplit(|&b| b == b',').next().unwrap_or(b"");
                transfer = Some(trim(last).eq_ignore_ascii_case(b"chunked"));
            } else if h.name.eq_ignore_ascii_case("connection") {
                for token in h.value.split(|&b| b == b',') {
                    let token = trim(token);
                    close |= token.eq_ignore_ascii_case(b"close");
                    keep |= token.eq_ignore_ascii_case(b"keep-alive");
                }
            }
        }
        self.status = status;
        self.keep_alive = !close && (response.version == Some(1) || keep);
        self.state = if self.head_only || status == 204 || status == 304 {
            State::Done
        } else {
            match (transfer, length) {
                (Some(true), _) => State::ChunkSize,
                (Some(false), _) | (None, None) => {
                    self.keep_alive = false;
                    State::UntilClose
                }
                (None, Some(l)) if l > MAX_BODY as u64 => return Err(ResponseError::BodyTooLarge),
                (None, Some(0)) => State::Done,
                (None, Some(l)) => State::Fixed(l),
            }
        };
        Ok(Some(n))
    }

    fn take_body(&mut self, bytes: &[u8]) -> Result<(), ResponseError> {
        if self.body.len() + bytes.len() > MAX_BODY {
            return Err(ResponseError::BodyTooLarge);
        }
        self.body.extend_from_slice(bytes);
        Ok(())
    }
}

/// The first line of `rest` without its line end (CRLF, or a bare LF)
/// and the bytes it takes; `None` if it has not ended yet.
fn line(rest: &[u8]) -> Result<Option<(&[u8], usize)>, ResponseError> {
    match rest.iter().position(|&b| b == b'\n') {
        Some(i) if i > MAX_LINE => Err(ResponseError::LineTooLong),
        Some(i) => {
            let text = &rest[..i];
            Ok(Some((text.strip_suffix(b"\r").unwrap_or(text), i + 1)))
        }
        None if rest.len() > MAX_LINE => Err(ResponseError::LineTooLong),
        None => Ok(None),
    }
}

/// `1a`, `1A ; name=value`: the size, extensions ignored.
fn chunk_size(text: &[u8]) -> Result<u64, ResponseError> {
    let digits = text.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    if digits == 0 || digits > 15 {
        return Err(ResponseError::ChunkSize);
    }
    let mut size = 0u64;
    for &b in &text[..digits] {
        // Checked above: at most 15 hex digits fit in a u64.
        size = size * 16 + u64::from((b as char).to_digit(16).unwrap_or(0));
    }
    let after = trim(&text[digits..]);
    if after.is_empty() || after[0] == b';' {
        Ok(size)
    } else {
        Err(ResponseError::ChunkSize)
    }
}

fn content_length(value: &[u8]) -> Result<u64, ResponseError> {
    let value = trim(value);
    if value.is_empty() || value.len() > 19 || !value.iter().all(u8::is_ascii_digit) {
        return Err(ResponseError::ContentLength);
    }
    Ok(value
        .iter()
        .fold(0u64, |n, &d| n * 10 + u64::from(d - b'0')))
}

fn trim(bytes: &[u8]) -> &[u8] {
    let is_space = |b: &u8| *b == b' ' || *b == b'\t';
    let start = bytes
        .iter()
        .position(|b| !is_space(b))
        .unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !is_space(b))
        .map_or(start, |i| i + 1);
    &bytes[start..end]
}

#[cfg(test)]
mod tests;
