//! [`Avatar`]: the server tells a client which entity is its player's own
//! (the runner, the car, the soldier it steers), or that it has none. Sent
//! on the reliable channel when the player's avatar changes and again on
//! each new connection, so a game never writes a "you are this entity"
//! event of its own.

use super::MessageKind;
use super::entity::{EntityId, read_entity_id, write_entity_id};
use crate::error::ProtoError;
use crate::reader::BitReader;
use crate::writer::BitWriter;

/// The entity a player steers, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Avatar(pub Option<EntityId>);

impl Avatar {
    /// Bytes of the longest whole message: the tag, a flag and an 18-bit id.
    pub const MAX_MESSAGE_BYTES: usize = 4;

    /// Writes a whole message (the [`MessageKind::Avatar`] tag, a bit for
    /// whether there is one, then its id) into `out`; returns its length.
    pub fn write_message(self, out: &mut [u8]) -> Result<usize, ProtoError> {
        let mut w = BitWriter::new(out);
        MessageKind::Avatar.encode(&mut w)?;
        w.write_bool(self.0.is_some())?;
        if let Some(entity) = self.0 {
            write_entity_id(&mut w, entity)?;
        }
        Ok(w.finish())
    }

    /// Reads the body, after its tag.
    pub fn decode(r: &mut BitReader) -> Result<Self, ProtoError> {
        Ok(Self(if r.read_bool()? {
            Some(read_entity_id(r)?)
        } else {
            None
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn avatar_messages_read_back() {
        for avatar in [None, Some(EntityId(3)), Some(EntityId(65_535))] {
            let mut buf = [0u8; Avatar::MAX_MESSAGE_BYTES];
            let len = Avatar(avatar).write_message(&mut buf).unwrap();
            let mut r = BitReader::new(&buf[..len]);
            assert_eq!(MessageKind::decode(&mut r), Ok(MessageKind::Avatar));
            assert_eq!(Avatar::decode(&mut r), Ok(Avatar(avatar)));
        }
        let mut buf = [0u8; Avatar::MAX_MESSAGE_BYTES];
        let len = Avatar(Some(EntityId(2_000)))
            .write_message(&mut buf)
            .unwrap();
        let mut r = BitReader::new(&buf[..len - 1]);
        MessageKind::decode(&mut r).unwrap();
        assert!(Avatar::decode(&mut r).is_err(), "a cut message is an error");
    }
}
