//! [`EntityId`] and its compact coding.

use crate::error::ProtoError;
use crate::reader::BitReader;
use crate::writer::BitWriter;

/// A replicated entity, as named on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct EntityId(pub u16);

/// Writes an entity id in 7 bits below 64, 12 bits below 1024, 18 otherwise.
#[inline]
pub fn write_entity_id(w: &mut BitWriter, id: EntityId) -> Result<(), ProtoError> {
    let id = u32::from(id.0);
    if id < 1 << 6 {
        w.write_bits(id << 1, 7)
    } else if id < 1 << 10 {
        w.write_bits((id << 2) | 0b01, 12)
    } else {
        w.write_bits((id << 2) | 0b11, 18)
    }
}

/// Reads an entity id written by [`write_entity_id`].
#[inline]
pub fn read_entity_id(r: &mut BitReader) -> Result<EntityId, ProtoError> {
    let id = if !r.read_bool()? {
        r.read_bits(6)?
    } else if !r.read_bool()? {
        r.read_bits(10)?
    } else {
        r.read_bits(16)?
    };
    Ok(EntityId(id as u16))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_in_few_bits() {
        for (id, bits) in [
            (0u16, 7),
            (63, 7),
            (64, 12),
            (1023, 12),
            (1024, 18),
            (u16::MAX, 18),
        ] {
            let mut buf = [0u8; 4];
            let mut w = BitWriter::new(&mut buf);
            write_entity_id(&mut w, EntityId(id)).unwrap();
            assert_eq!(w.bits_written(), bits, "id {id}");
            let mut r = BitReader::new(&buf);
            assert_eq!(read_entity_id(&mut r).unwrap(), EntityId(id));
            assert_eq!(r.bits_read(), bits);
        }
    }
}
