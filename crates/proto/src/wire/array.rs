//! Fixed-size arrays written element by element, with any element codec.

use crate::error::ProtoError;
use crate::reader::BitReader;
use crate::writer::BitWriter;

/// Writes every element of `values` with `write_one` (all or nothing).
#[inline]
pub fn write<T, const N: usize>(
    w: &mut BitWriter,
    values: &[T; N],
    mut write_one: impl FnMut(&T, &mut BitWriter) -> Result<(), ProtoError>,
) -> Result<(), ProtoError> {
    w.all_or_nothing(|w| values.iter().try_for_each(|v| write_one(v, w)))
}

/// Reads `N` elements with `read_one`, as [`write`] wrote them.
#[inline]
pub fn read<T: Default, const N: usize>(
    r: &mut BitReader,
    mut read_one: impl FnMut(&mut BitReader) -> Result<T, ProtoError>,
) -> Result<[T; N], ProtoError> {
    let mut out: [T; N] = std::array::from_fn(|_| T::default());
    for slot in &mut out {
        *slot = read_one(r)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::int;

    #[test]
    fn elements_use_the_given_codec() {
        let mut buf = [0u8; 4];
        let mut w = BitWriter::new(&mut buf);
        write(&mut w, &[1u8, 2, 3], |v, w| int::write_bits(w, *v, 4)).unwrap();
        assert_eq!(w.bits_written(), 12);
        assert!(write(&mut w, &[1u8, 200], |v, w| int::write_bits(w, *v, 4)).is_err());
        assert_eq!(w.bits_written(), 12, "all or nothing");
        let len = w.finish();
        let back: [u8; 3] =
            read(&mut BitReader::new(&buf[..len]), |r| int::read_bits(r, 4)).unwrap();
        assert_eq!(back, [1, 2, 3]);
        assert!(read::<u8, 5>(&mut BitReader::new(&buf[..len]), |r| int::read_bits(r, 4)).is_err());
    }
}
