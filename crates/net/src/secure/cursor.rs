//! Little-endian byte cursors over caller buffers, for the fixed layouts of
//! tokens and handshake packets. Reading past the end yields `None`, writing past
//! the end yields `None`: never a panic, never an allocation.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// Address type byte of an IPv4 address in tokens (netcode.io 1.02).
const ADDRESS_IPV4: u8 = 1;
/// Address type byte of an IPv6 address in tokens (netcode.io 1.02).
const ADDRESS_IPV6: u8 = 2;

/// Reads little-endian values from the front of a byte slice.
#[derive(Debug)]
pub(crate) struct ByteReader<'a> {
    buf: &'a [u8],
}

impl<'a> ByteReader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Self { buf }
    }

    pub(crate) fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = self.buf.split_at_checked(n)?;
        self.buf = rest;
        Some(head)
    }

    pub(crate) fn array<const N: usize>(&mut self) -> Option<&'a [u8; N]> {
        self.bytes(N)?.try_into().ok()
    }

    pub(crate) fn u8(&mut self) -> Option<u8> {
        self.array::<1>().map(|b| b[0])
    }

    pub(crate) fn u16(&mut self) -> Option<u16> {
        self.array().map(|b| u16::from_le_bytes(*b))
    }

    pub(crate) fn u32(&mut self) -> Option<u32> {
        self.array().map(|b| u32::from_le_bytes(*b))
    }

    pub(crate) fn i32(&mut self) -> Option<i32> {
        self.array().map(|b| i32::from_le_bytes(*b))
    }

    pub(crate) fn u64(&mut self) -> Option<u64> {
        self.array().map(|b| u64::from_le_bytes(*b))
    }

    /// A server address: type byte, then IPv4 (4 x u8) or IPv6 (8 x u16), then port.
    /// `Err` names what is wrong; `Ok(None)` means the bytes ran out.
    pub(crate) fn address(&mut self) -> Result<Option<SocketAddr>, &'static str> {
        let Some(kind) = self.u8() else {
            return Ok(None);
        };
        let ip = match kind {
            ADDRESS_IPV4 => match self.array::<4>() {
                Some(o) => IpAddr::V4(Ipv4Addr::from(*o)),
                None => return Ok(None),
            },
            ADDRESS_IPV6 => {
                let mut segments = [0u16; 8];
                for s in &mut segments {
                    match self.u16() {
                        Some(v) => *s = v,
                        None => return Ok(None),
                    }
                }
                IpAddr::V6(Ipv6Addr::from(segments))
            }
            _ => return Err("unknown server address type"),
        };
        Ok(self.u16().map(|port| SocketAddr::new(ip, port)))
    }
}

/// Writes little-endian values to the front of a byte slice.
#[derive(Debug)]
pub(crate) struct ByteWriter<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl<'a> ByteWriter<'a> {
    pub(crate) fn new(buf: &'a mut [u8]) -> Self {
        Self { buf, len: 0 }
    }

    /// Bytes written so far.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn bytes(&mut self, data: &[u8]) -> Option<()> {
        let end = self.len.checked_add(data.len())?;
        self.buf.get_mut(self.len..end)?.copy_from_slice(data);
        self.len = end;
        Some(())
    }

    pub(crate) fn u8(&mut self, v: u8) -> Option<()> {
        self.bytes(&[v])
    }

    pub(crate) fn u16(&mut self, v: u16) -> Option<()> {
        self.bytes(&v.to_le_bytes())
    }

    pub(crate) fn u32(&mut self, v: u32) -> Option<()> {
        self.bytes(&v.to_le_bytes())
    }

    pub(crate) fn i32(&mut self, v: i32) -> Option<()> {
        self.bytes(&v.to_le_bytes())
    }

    pub(crate) fn u64(&mut self, v: u64) -> Option<()> {
        self.bytes(&v.to_le_bytes())
    }

    pub(crate) fn address(&mut self, addr: &SocketAddr) -> Option<()> {
        match addr.ip() {
            IpAddr::V4(ip) => {
                self.u8(ADDRESS_IPV4)?;
                self.bytes(&ip.octets())?;
            }
            IpAddr::V6(ip) => {
                self.u8(ADDRESS_IPV6)?;
                for s in ip.segments() {
                    self.u16(s)?;
                }
            }
        }
        self.u16(addr.port())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_addresses_round_trip() {
        let mut buf = [0u8; 64];
        let v4: SocketAddr = "10.1.2.3:4000".parse().unwrap();
        let v6: SocketAddr = "[2001:db8::7]:65535".parse().unwrap();
        let mut w = ByteWriter::new(&mut buf);
        w.u8(7).unwrap();
        w.u16(0xBEEF).unwrap();
        w.i32(-5).unwrap();
        w.u64(u64::MAX - 1).unwrap();
        w.address(&v4).unwrap();
        w.address(&v6).unwrap();
        let len = w.len();
        assert_eq!(len, 1 + 2 + 4 + 8 + 7 + 19);
        let mut r = ByteReader::new(&buf[..len]);
        assert_eq!(r.u8(), Some(7));
        assert_eq!(r.u16(), Some(0xBEEF));
        assert_eq!(r.i32(), Some(-5));
        assert_eq!(r.u64(), Some(u64::MAX - 1));
        assert_eq!(r.address(), Ok(Some(v4)));
        assert_eq!(r.address(), Ok(Some(v6)));
        assert_eq!(r.u8(), None);
    }

    #[test]
    fn overruns_are_none_not_panics() {
        let mut buf = [0u8; 3];
        let mut w = ByteWriter::new(&mut buf);
        assert_eq!(w.u32(1), None);
        assert_eq!(w.u16(1), Some(()));
        let mut r = ByteReader::new(&buf[..1]);
        assert_eq!(r.u16(), None);
        let mut r = ByteReader::new(&[9u8, 1, 2]);
        assert!(r.address().is_err());
        let mut r = ByteReader::new(&[ADDRESS_IPV4, 1, 2]);
        assert_eq!(r.address(), Ok(None));
    }
}
