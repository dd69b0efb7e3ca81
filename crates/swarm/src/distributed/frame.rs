//! Frames after the handshake: each carries its direction's sequence
//! number and an HMAC-SHA256 tag under that direction's session key
//! (derived in the handshake, [`auth`](super::auth)), so a frame altered,
//! replayed, reordered, dropped or reflected on the wire is refused and
//! ends the session.
//!
//! ```text
//! frame = len ‖ seq ‖ body ‖ tag
//!   len   u32 big-endian: the bytes after it (seq, body and tag)
//!   seq   u64 big-endian: this direction's frame number, from 0
//!   body  the message: a kind byte and its payload (wire.rs)
//!   tag   HMAC-SHA256(this direction's key, len ‖ seq ‖ body), 32 bytes
//! ```
//!
//! The receiver checks the tag first (in constant time), then that `seq`
//! is the next it expects. A changed byte anywhere (the length included)
//! fails the tag; a frame sent again, out of order or after one that went
//! missing fails the sequence; a frame of one direction fed back to its
//! sender fails the tag (each direction has its own key); a frame of
//! another session fails the tag (each session's keys come from both
//! sides' fresh nonces). Frames are authenticated, not encrypted.

use std::fmt;

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::wire::{self, MAX_FRAME, Message};

/// Bytes of a direction's session key.
pub const KEY_BYTES: usize = 32;
/// Bytes of the length prefix.
pub const LEN_BYTES: usize = 4;
/// Bytes of the sequence number.
pub const SEQ_BYTES: usize = 8;
/// Bytes of a frame's tag.
pub const TAG_BYTES: usize = 32;
/// The shortest frame (after its length): a sequence number, a kind byte
/// and a tag.
pub const MIN_FRAME: usize = SEQ_BYTES + 1 + TAG_BYTES;

/// Why a frame was refused. Any of them ends the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameFault {
    /// The length prefix is outside [`MIN_FRAME`]`..=`[`MAX_FRAME`].
    Length(usize),
    /// The tag does not match: altered on the wire, or not sealed by the
    /// authenticated peer in this session.
    BadMac,
    /// The tag matches but the frame is not the next one: `got` arrived
    /// where `expected` was due.
    OutOfSequence {
        /// The sequence number due.
        expected: u64,
        /// The one that came.
        got: u64,
    },
}

impl fmt::Display for FrameFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Length(len) => write!(
                f,
                "frame length {len} outside {MIN_FRAME}..={MAX_FRAME} (altered on the wire?)"
            ),
            Self::BadMac => f.write_str(
                "bad MAC: the frame was altered on the wire or not sealed by the authenticated peer",
            ),
            Self::OutOfSequence { expected, got } => write!(
                f,
                "out of sequence: frame {got} where frame {expected} was due (replayed, reordered or dropped on the wire)"
            ),
        }
    }
}

fn keyed(key: &[u8; KEY_BYTES]) -> Hmac<Sha256> {
    // HMAC takes a key of any length.
    Hmac::<Sha256>::new_from_slice(key).expect("HMAC accepts a 32-byte key")
}

/// Seals the frames one side sends: numbers them and tags them.
#[derive(Clone)]
pub struct Sealer {
    mac: Hmac<Sha256>,
    next: u64,
}

impl fmt::Debug for Sealer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sealer(next {})", self.next)
    }
}

impl Sealer {
    /// Seals under `key`, from frame 0.
    pub fn new(key: &[u8; KEY_BYTES]) -> Self {
        Self {
            mac: keyed(key),
            next: 0,
        }
    }

    /// `msg` as the next frame, in `out` (cleared first).
    pub fn seal(&mut self, msg: &Message, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(&[0; LEN_BYTES]);
        out.extend_from_slice(&self.next.to_be_bytes());
        wire::encode(msg, out);
        let len = (out.len() - LEN_BYTES + TAG_BYTES) as u32;
        out[..LEN_BYTES].copy_from_slice(&len.to_be_bytes());
        let mut mac = self.mac.clone();
        mac.update(out);
        out.extend_from_slice(&mac.finalize().into_bytes());
        self.next += 1;
    }
}

/// Opens the frames one side receives: checks each one's tag and number.
#[derive(Clone)]
pub struct Opener {
    mac: Hmac<Sha256>,
    next: u64,
}

impl fmt::Debug for Opener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Opener(next {})", self.next)
    }
}

impl Opener {
    /// Opens under `key`, expecting frame 0 first.
    pub fn new(key: &[u8; KEY_BYTES]) -> Self {
        Self {
            mac: keyed(key),
            next: 0,
        }
    }

    /// The frame length `len` announces, if a frame may have it.
    pub fn frame_len(len: [u8; LEN_BYTES]) -> Result<usize, FrameFault> {
        let n = u32::from_be_bytes(len) as usize;
        if (MIN_FRAME..=MAX_FRAME).contains(&n) {
            Ok(n)
        } else {
            Err(FrameFault::Length(n))
        }
    }

    /// The body of `frame` (what followed the length prefix `len`) if its
    /// tag holds and it is the next frame due.
    pub fn open<'a>(
        &mut self,
        len: [u8; LEN_BYTES],
        frame: &'a [u8],
    ) -> Result<&'a [u8], FrameFault> {
        if frame.len() < MIN_FRAME || frame.len() != u32::from_be_bytes(len) as usize {
            return Err(FrameFault::Length(frame.len()));
        }
        let (sealed, tag) = frame.split_at(frame.len() - TAG_BYTES);
        let mut mac = self.mac.clone();
        mac.update(&len);
        mac.update(sealed);
        mac.verify_slice(tag).map_err(|_| FrameFault::BadMac)?;
        let (seq, body) = sealed.split_at(SEQ_BYTES);
        let mut n = [0; SEQ_BYTES];
        n.copy_from_slice(seq);
        let got = u64::from_be_bytes(n);
        if got != self.next {
            return Err(FrameFault::OutOfSequence {
                expected: self.next,
                got,
            });
        }
        self.next += 1;
        Ok(body)
    }
}

/// Why no message came.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ReadError {
    /// The connection closed or failed, or an authenticated frame did
    /// not decode (the peer's fault, not the wire's).
    Lost(String),
    /// A frame failed its check: the session ends.
    Refused(FrameFault),
}

/// The frames one side receives from a stream.
#[derive(Debug)]
pub(crate) struct FrameReader<R> {
    stream: R,
    opener: Opener,
    buf: Vec<u8>,
    /// The scenario's steps (an interval's width; 0 on the agent).
    steps: usize,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    pub(crate) fn new(stream: R, opener: Opener, steps: usize) -> Self {
        Self {
            stream,
            opener,
            buf: Vec::new(),
            steps,
        }
    }

    /// The next message.
    pub(crate) async fn recv(&mut self) -> Result<Message, ReadError> {
        let lost = |e: std::io::Error| ReadError::Lost(format!("reading a frame: {e}"));
        let mut len = [0; LEN_BYTES];
        self.stream.read_exact(&mut len).await.map_err(lost)?;
        let n = Opener::frame_len(len).map_err(ReadError::Refused)?;
        self.buf.resize(n, 0);
        self.stream.read_exact(&mut self.buf).await.map_err(lost)?;
        let body = self
            .opener
            .open(len, &self.buf)
            .map_err(ReadError::Refused)?;
        wire::decode(body, self.steps).map_err(ReadError::Lost)
    }
}

/// The frames one side sends to a stream.
#[derive(Debug)]
pub(crate) struct FrameWriter<W> {
    stream: W,
    sealer: Sealer,
    buf: Vec<u8>,
}

impl<W: AsyncWrite + Unpin> FrameWriter<W> {
    pub(crate) fn new(stream: W, sealer: Sealer) -> Self {
        Self {
            stream,
            sealer,
            buf: Vec::new(),
        }
    }

    /// Seals `msg` as the next frame and writes it.
    pub(crate) async fn send(&mut self, msg: &Message) -> Result<(), String> {
        self.sealer.seal(msg, &mut self.buf);
        self.stream
            .write_all(&self.buf)
            .await
            .map_err(|e| format!("writing a frame: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interval::Interval;
    use proptest::prelude::*;

    fn pair() -> (Sealer, Opener) {
        (Sealer::new(&[7; KEY_BYTES]), Opener::new(&[7; KEY_BYTES]))
    }

    /// The frame's length prefix and the rest.
    fn split(frame: &[u8]) -> ([u8; LEN_BYTES], &[u8]) {
        let mut len = [0; LEN_BYTES];
        len.copy_from_slice(&frame[..LEN_BYTES]);
        (len, &frame[LEN_BYTES..])
    }

    fn sealed(sealer: &mut Sealer, msg: &Message) -> Vec<u8> {
        let mut out = Vec::new();
        sealer.seal(msg, &mut out);
        out
    }

    fn interval() -> Message {
        let mut i = Interval::new(1);
        i.record_ok(0, 1234);
        Message::Interval {
            seq: 0,
            drain: false,
            interval: Box::new(i),
        }
    }

    #[test]
    fn frames_open_in_order_and_carry_their_message() {
        let (mut s, mut o) = pair();
        for rate in [1.0, 2.0, 3.0] {
            let f = sealed(&mut s, &Message::Rate(rate));
            let (len, rest) = split(&f);
            assert_eq!(Opener::frame_len(len), Ok(rest.len()));
            let body = o.open(len, rest).unwrap();
            assert!(matches!(wire::decode(body, 0), Ok(Message::Rate(r)) if r == rate));
        }
    }

    #[test]
    fn replayed_reordered_and_dropped_frames_are_out_of_sequence() {
        let (mut s, mut o) = pair();
        let f0 = sealed(&mut s, &Message::Ready);
        let f1 = sealed(&mut s, &Message::Rate(1.0));
        let f2 = sealed(&mut s, &Message::Done);
        let (l0, r0) = split(&f0);
        let (l2, r2) = split(&f2);
        let (l1, r1) = split(&f1);
        assert_eq!(
            o.open(l2, r2),
            Err(FrameFault::OutOfSequence {
                expected: 0,
                got: 2
            }),
            "reordered"
        );
        o.open(l0, r0).unwrap();
        assert_eq!(
            o.open(l0, r0),
            Err(FrameFault::OutOfSequence {
                expected: 1,
                got: 0
            }),
            "replayed"
        );
        o.open(l1, r1).unwrap();
        let _lost_on_the_wire = sealed(&mut s, &Message::Stop);
        let f4 = sealed(&mut s, &Message::Stop);
        o.open(l2, r2).unwrap();
        let (l4, r4) = split(&f4);
        assert_eq!(
            o.open(l4, r4),
            Err(FrameFault::OutOfSequence {
                expected: 3,
                got: 4
            }),
            "dropped"
        );
    }

    #[test]
    fn another_key_and_the_other_direction_fail_the_mac() {
        let (mut s, _) = pair();
        let f = sealed(&mut s, &Message::Ready);
        let (len, rest) = split(&f);
        let mut other = Opener::new(&[8; KEY_BYTES]);
        assert_eq!(other.open(len, rest), Err(FrameFault::BadMac));
        assert!(FrameFault::BadMac.to_string().contains("bad MAC"));
    }

    #[test]
    fn lengths_outside_the_bounds_are_refused() {
        assert_eq!(
            Opener::frame_len(0u32.to_be_bytes()),
            Err(FrameFault::Length(0))
        );
        let short = (MIN_FRAME - 1) as u32;
        assert!(Opener::frame_len(short.to_be_bytes()).is_err());
        let long = (MAX_FRAME + 1) as u32;
        assert!(Opener::frame_len(long.to_be_bytes()).is_err());
        assert!(Opener::frame_len((MIN_FRAME as u32).to_be_bytes()).is_ok());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Any change to any byte of a frame (its length included) is
        /// refused; nothing altered ever opens.
        #[test]
        fn any_flipped_byte_is_refused(at in any::<usize>(), x in 1u8..=255) {
            let (mut s, mut o) = pair();
            let mut f = sealed(&mut s, &interval());
            let n = f.len();
            f[at % n] ^= x;
            let (len, rest) = split(&f);
            let refused = match Opener::frame_len(len) {
                Err(_) => true,
                Ok(n) if n != rest.len() => true,
                Ok(_) => o.open(len, rest).is_err(),
            };
            prop_assert!(refused);
        }
    }
}
