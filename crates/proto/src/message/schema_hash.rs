//! [`SchemaHash`]: the server's first reliable message to a client on each
//! connection, the hash of its game's wire schema. A client whose own
//! schema hashes differently was built for another version of the game:
//! it refuses the server with that reason rather than misread every
//! message after.

use super::MessageKind;
use crate::error::ProtoError;
use crate::reader::BitReader;
use crate::writer::BitWriter;

/// The hash of a game's wire schema (`hightick_engine::schema`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SchemaHash(pub u64);

impl SchemaHash {
    /// Bytes of a whole message: the tag and 64 bits.
    pub const MESSAGE_BYTES: usize = 9;

    /// Writes a whole message (the [`MessageKind::SchemaHash`] tag, then
    /// the hash) into `out`; returns its length.
    pub fn write_message(self, out: &mut [u8]) -> Result<usize, ProtoError> {
        let mut w = BitWriter::new(out);
        MessageKind::SchemaHash.encode(&mut w)?;
        w.write_u64(self.0)?;
        Ok(w.finish())
    }

    /// Reads the body, after its tag.
    pub fn decode(r: &mut BitReader) -> Result<Self, ProtoError> {
        Ok(Self(r.read_u64()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_message_reads_back() {
        let mut buf = [0u8; SchemaHash::MESSAGE_BYTES];
        let len = SchemaHash(0x0123_4567_89ab_cdef)
            .write_message(&mut buf)
            .unwrap();
        assert_eq!(len, SchemaHash::MESSAGE_BYTES);
        let mut r = BitReader::new(&buf);
        assert_eq!(MessageKind::decode(&mut r), Ok(MessageKind::SchemaHash));
        assert_eq!(
            SchemaHash::decode(&mut r),
            Ok(SchemaHash(0x0123_4567_89ab_cdef))
        );
        assert!(SchemaHash::decode(&mut BitReader::new(&buf[..5])).is_err());
    }
}
