//! Message channels and the blocks that carry them inside a packet payload.
//!
//! After the packet header (see [`crate::reliable`]) a payload is a sequence
//! of blocks, each starting with a one-byte tag; integers are little-endian:
//!
//! | tag | block | layout after the tag |
//! |-----|-------|----------------------|
//! | 1 | unreliable message | `len: u16`, `len` bytes |
//! | 2 | whole reliable message | `id: u16`, `len: u16` (<= fragment size), bytes |
//! | 3 | reliable fragment | `id: u16`, `index: u16`, `count: u16`, `len: u16`, bytes |
//!
//! `Blocks` walks a payload and checks every block against the configured
//! limits without touching connection state; it yields an error for an
//! unknown tag, a length past the end or over a limit, or a fragment header
//! that the fragment checks (see `fragment.rs`) reject. `BlockWriter` appends
//! blocks to an output buffer and never writes past it.

use crate::packet::error::Malformed;
use crate::packet::fragment::FragmentGeometry;

/// The channel a message travels on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Channel {
    /// Delivered exactly once and in order, resent until acknowledged.
    Reliable,
    /// Sent in one packet only; may be lost, duplicated packets are dropped.
    Unreliable,
}

pub(crate) const TAG_UNRELIABLE: u8 = 1;
pub(crate) const TAG_RELIABLE: u8 = 2;
pub(crate) const TAG_FRAGMENT: u8 = 3;

/// Bytes before the data of an unreliable block.
pub(crate) const UNRELIABLE_BLOCK_OVERHEAD: usize = 3;
/// Bytes before the data of a whole reliable block.
pub(crate) const RELIABLE_BLOCK_OVERHEAD: usize = 5;
/// Bytes before the data of a fragment block.
pub(crate) const FRAGMENT_BLOCK_OVERHEAD: usize = 9;

/// One block of a payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Block<'a> {
    Unreliable(&'a [u8]),
    Reliable {
        id: u16,
        data: &'a [u8],
    },
    Fragment {
        id: u16,
        index: u16,
        count: u16,
        data: &'a [u8],
    },
}

impl<'a> Block<'a> {
    /// The reliable piece this block carries: `(id, index, count, data)`.
    pub(crate) fn reliable_piece(&self) -> Option<(u16, u16, u16, &'a [u8])> {
        match *self {
            Block::Unreliable(_) => None,
            Block::Reliable { id, data } => Some((id, 0, 1, data)),
            Block::Fragment {
                id,
                index,
                count,
                data,
            } => Some((id, index, count, data)),
        }
    }
}

/// Limits a block must respect.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BlockLimits {
    pub(crate) geometry: FragmentGeometry,
    pub(crate) max_unreliable: usize,
}

/// Iterator over the blocks of a payload; stops after the first error.
#[derive(Debug)]
pub(crate) struct Blocks<'a> {
    bytes: &'a [u8],
    pos: usize,
    limits: BlockLimits,
    failed: bool,
}

impl<'a> Blocks<'a> {
    pub(crate) fn new(bytes: &'a [u8], limits: BlockLimits) -> Self {
        Self {
            bytes,
            pos: 0,
            limits,
            failed: false,
        }
    }

    fn u16(&mut self) -> Result<u16, Malformed> {
        let b = self
            .bytes
            .get(self.pos..self.pos + 2)
            .ok_or(Malformed::Truncated)?;
        self.pos += 2;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn data(&mut self, len: usize) -> Result<&'a [u8], Malformed> {
        let d = self
            .bytes
            .get(self.pos..self.pos + len)
            .ok_or(Malformed::Truncated)?;
        self.pos += len;
        Ok(d)
    }

    fn block(&mut self) -> Result<Block<'a>, Malformed> {
        let tag = self.bytes[self.pos];
        self.pos += 1;
        match tag {
            TAG_UNRELIABLE => {
                let len = usize::from(self.u16()?);
                if len > self.limits.max_unreliable {
                    return Err(Malformed::UnreliableTooLarge);
                }
                Ok(Block::Unreliable(self.data(len)?))
            }
            TAG_RELIABLE => {
                let id = self.u16()?;
                let len = usize::from(self.u16()?);
                if len > self.limits.geometry.fragment_size {
                    return Err(Malformed::ReliableTooLarge);
                }
                Ok(Block::Reliable {
                    id,
                    data: self.data(len)?,
                })
            }
            TAG_FRAGMENT => {
                let id = self.u16()?;
                let index = self.u16()?;
                let count = self.u16()?;
                let len = usize::from(self.u16()?);
                self.limits.geometry.check_fragment(index, count, len)?;
                Ok(Block::Fragment {
                    id,
                    index,
                    count,
                    data: self.data(len)?,
                })
            }
            _ => Err(Malformed::UnknownBlock),
        }
    }
}

impl<'a> Iterator for Blocks<'a> {
    type Item = Result<Block<'a>, Malformed>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.bytes.len() {
            return None;
        }
        let block = self.block();
        self.failed = block.is_err();
        Some(block)
    }
}

/// Appends blocks to a caller buffer, never past its end.
#[derive(Debug)]
pub(crate) struct BlockWriter<'a> {
    out: &'a mut [u8],
    pos: usize,
    blocks: usize,
}

impl<'a> BlockWriter<'a> {
    /// Writes blocks into `out` starting at `pos`.
    pub(crate) fn new(out: &'a mut [u8], pos: usize) -> Self {
        Self {
            out,
            pos,
            blocks: 0,
        }
    }

    /// Bytes left.
    pub(crate) fn remaining(&self) -> usize {
        self.out.len() - self.pos
    }

    /// End of the written bytes.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// Blocks written so far.
    pub(crate) fn blocks(&self) -> usize {
        self.blocks
    }

    fn begin(&mut self, header: &[u8], len: usize) -> Option<&mut [u8]> {
        if header.len() + len > self.remaining() {
            return None;
        }
        let at = self.pos;
        self.out[at..at + header.len()].copy_from_slice(header);
        let data = at + header.len();
        self.pos = data + len;
        self.blocks += 1;
        Some(&mut self.out[data..data + len])
    }

    /// Copies already-encoded blocks (as produced by [`encode_unreliable`]).
    pub(crate) fn raw_block(&mut self, encoded: &[u8]) -> bool {
        match self.begin(&[], encoded.len()) {
            Some(dst) => {
                dst.copy_from_slice(encoded);
                true
            }
            None => false,
        }
    }

    /// Starts a whole reliable block of `len` bytes; returns its data area.
    pub(crate) fn reliable(&mut self, id: u16, len: usize) -> Option<&mut [u8]> {
        let [i0, i1] = id.to_le_bytes();
        let [l0, l1] = (len as u16).to_le_bytes();
        self.begin(&[TAG_RELIABLE, i0, i1, l0, l1], len)
    }

    /// Starts a fragment block of `len` bytes; returns its data area.
    pub(crate) fn fragment(
        &mut self,
        id: u16,
        index: u16,
        count: u16,
        len: usize,
    ) -> Option<&mut [u8]> {
        let [i0, i1] = id.to_le_bytes();
        let [x0, x1] = index.to_le_bytes();
        let [c0, c1] = count.to_le_bytes();
        let [l0, l1] = (len as u16).to_le_bytes();
        self.begin(&[TAG_FRAGMENT, i0, i1, x0, x1, c0, c1, l0, l1], len)
    }
}

/// Encodes an unreliable block (tag, length, data) into `out`; returns the
/// encoded length, or `None` if it does not fit.
pub(crate) fn encode_unreliable(msg: &[u8], out: &mut [u8]) -> Option<usize> {
    let total = UNRELIABLE_BLOCK_OVERHEAD + msg.len();
    let len = u16::try_from(msg.len()).ok()?;
    let dst = out.get_mut(..total)?;
    dst[0] = TAG_UNRELIABLE;
    dst[1..3].copy_from_slice(&len.to_le_bytes());
    dst[3..].copy_from_slice(msg);
    Some(total)
}

/// Length of the encoded block starting at `encoded[0]`, for walking a buffer
/// filled by [`encode_unreliable`].
pub(crate) fn unreliable_block_len(encoded: &[u8]) -> usize {
    UNRELIABLE_BLOCK_OVERHEAD + usize::from(u16::from_le_bytes([encoded[1], encoded[2]]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> BlockLimits {
        BlockLimits {
            geometry: FragmentGeometry::new(16, 64),
            max_unreliable: 20,
        }
    }

    #[test]
    fn blocks_round_trip() {
        let mut buf = [0u8; 128];
        let mut w = BlockWriter::new(&mut buf, 0);
        let mut enc = [0u8; 32];
        let n = encode_unreliable(b"hello", &mut enc).unwrap();
        assert_eq!(unreliable_block_len(&enc), n);
        assert!(w.raw_block(&enc[..n]));
        w.reliable(7, 3).unwrap().copy_from_slice(b"abc");
        w.fragment(9, 1, 3, 16).unwrap().fill(b'x');
        assert_eq!(w.blocks(), 3);
        let end = w.position();
        let blocks: Vec<_> = Blocks::new(&buf[..end], limits()).collect();
        assert_eq!(
            blocks,
            vec![
                Ok(Block::Unreliable(b"hello")),
                Ok(Block::Reliable {
                    id: 7,
                    data: b"abc"
                }),
                Ok(Block::Fragment {
                    id: 9,
                    index: 1,
                    count: 3,
                    data: &[b'x'; 16]
                }),
            ]
        );
    }

    #[test]
    fn writer_refuses_overflow() {
        let mut buf = [0u8; 8];
        let mut w = BlockWriter::new(&mut buf, 2);
        assert!(w.reliable(1, 2).is_none());
        assert!(w.reliable(1, 1).is_some());
        assert_eq!(w.remaining(), 0);
    }

    #[test]
    fn bad_blocks_are_errors() {
        let cases: [(&[u8], Malformed); 6] = [
            (&[9], Malformed::UnknownBlock),
            (&[TAG_UNRELIABLE, 5, 0, 1], Malformed::Truncated),
            (&[TAG_UNRELIABLE, 21, 0], Malformed::UnreliableTooLarge),
            (&[TAG_RELIABLE, 0, 0, 17, 0], Malformed::ReliableTooLarge),
            (
                &[TAG_FRAGMENT, 0, 0, 0, 0, 0xff, 0xff, 16, 0],
                Malformed::FragmentCount,
            ),
            (&[TAG_FRAGMENT, 0, 0], Malformed::Truncated),
        ];
        for (bytes, want) in cases {
            let mut blocks = Blocks::new(bytes, limits());
            assert_eq!(blocks.next(), Some(Err(want)), "{bytes:?}");
            assert_eq!(blocks.next(), None);
        }
    }
}
