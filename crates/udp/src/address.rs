//! Between Rust's addresses and the C structs the system calls take: socket
//! addresses, and the `IP_PKTINFO` control message that carries a
//! datagram's source (sending) or destination (receiving) address.

use std::mem::size_of;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

/// Bytes of room for one datagram's control messages.
const CONTROL_BYTES: usize = 64;

// SAFETY (of the call): CMSG_SPACE is arithmetic on its argument.
const PKTINFO_SPACE: usize =
    unsafe { libc::CMSG_SPACE(size_of::<libc::in_pktinfo>() as libc::c_uint) } as usize;
const _: () = assert!(PKTINFO_SPACE <= CONTROL_BYTES);

/// One datagram's control-message buffer, aligned as `cmsghdr`.
#[derive(Clone, Copy)]
#[repr(C, align(8))]
pub(crate) struct Control([u8; CONTROL_BYTES]);

impl Control {
    /// An empty buffer.
    pub(crate) const ZERO: Self = Self([0; CONTROL_BYTES]);

    /// Its length, for `msg_controllen` when receiving.
    pub(crate) const LEN: usize = CONTROL_BYTES;

    /// Writes an `IP_PKTINFO` message that makes a datagram leave from
    /// `source`; returns the length it takes (for `msg_controllen`).
    pub(crate) fn write_source(&mut self, source: Ipv4Addr) -> usize {
        self.0 = [0; CONTROL_BYTES];
        let info = libc::in_pktinfo {
            ipi_ifindex: 0,
            ipi_spec_dst: libc::in_addr {
                s_addr: u32::from(source).to_be(),
            },
            ipi_addr: libc::in_addr { s_addr: 0 },
        };
        let header = self.0.as_mut_ptr().cast::<libc::cmsghdr>();
        // SAFETY: the buffer is aligned for a cmsghdr and holds
        // CMSG_SPACE(in_pktinfo) bytes (asserted above); the data is written
        // unaligned at CMSG_DATA, inside that space.
        unsafe {
            (*header).cmsg_len =
                libc::CMSG_LEN(size_of::<libc::in_pktinfo>() as libc::c_uint) as usize;
            (*header).cmsg_level = libc::IPPROTO_IP;
            (*header).cmsg_type = libc::IP_PKTINFO;
            libc::CMSG_DATA(header)
                .cast::<libc::in_pktinfo>()
                .write_unaligned(info);
        }
        PKTINFO_SPACE
    }

    /// A pointer to the buffer, for `msg_control`.
    pub(crate) fn as_mut_ptr(&mut self) -> *mut libc::c_void {
        self.0.as_mut_ptr().cast()
    }
}

/// The destination address an `IP_PKTINFO` message of a received
/// datagram names, if `header` (as the kernel filled it in) carries one.
pub(crate) fn destination(header: &libc::msghdr) -> Option<Ipv4Addr> {
    // SAFETY: the kernel set msg_control/msg_controllen to the messages it
    // wrote inside the batch's own control buffer; the CMSG macros never
    // step past msg_controllen, and the data is read unaligned.
    unsafe {
        let mut message = libc::CMSG_FIRSTHDR(header);
        while !message.is_null() {
            if (*message).cmsg_level == libc::IPPROTO_IP && (*message).cmsg_type == libc::IP_PKTINFO
            {
                let info = libc::CMSG_DATA(message)
                    .cast::<libc::in_pktinfo>()
                    .read_unaligned();
                return Some(Ipv4Addr::from(u32::from_be(info.ipi_addr.s_addr)));
            }
            message = libc::CMSG_NXTHDR(header, message);
        }
    }
    None
}

/// The address in `storage`, if it is IPv4 or IPv6.
pub(crate) fn socket_address(storage: &libc::sockaddr_storage) -> Option<SocketAddr> {
    match i32::from(storage.ss_family) {
        libc::AF_INET => {
            // SAFETY: the family says the storage holds a sockaddr_in, and
            // sockaddr_storage is large and aligned enough for it.
            let a =
                unsafe { &*(storage as *const libc::sockaddr_storage).cast::<libc::sockaddr_in>() };
            let ip = u32::from_be(a.sin_addr.s_addr);
            Some(SocketAddr::V4(SocketAddrV4::new(
                ip.into(),
                u16::from_be(a.sin_port),
            )))
        }
        libc::AF_INET6 => {
            // SAFETY: as above, for sockaddr_in6.
            let a = unsafe {
                &*(storage as *const libc::sockaddr_storage).cast::<libc::sockaddr_in6>()
            };
            Some(SocketAddr::V6(SocketAddrV6::new(
                a.sin6_addr.s6_addr.into(),
                u16::from_be(a.sin6_port),
                a.sin6_flowinfo,
                a.sin6_scope_id,
            )))
        }
        _ => None,
    }
}

/// Writes `address` into `storage`; returns its length.
pub(crate) fn write_socket_address(
    address: SocketAddr,
    storage: &mut libc::sockaddr_storage,
) -> libc::socklen_t {
    match address {
        SocketAddr::V4(v4) => {
            // SAFETY: sockaddr_storage is large and aligned enough for a
            // sockaddr_in; every field written is plain data.
            let a = unsafe {
                &mut *(storage as *mut libc::sockaddr_storage).cast::<libc::sockaddr_in>()
            };
            a.sin_family = libc::AF_INET as libc::sa_family_t;
            a.sin_port = v4.port().to_be();
            a.sin_addr = libc::in_addr {
                s_addr: u32::from(*v4.ip()).to_be(),
            };
            a.sin_zero = [0; 8];
            size_of::<libc::sockaddr_in>() as libc::socklen_t
        }
        SocketAddr::V6(v6) => {
            // SAFETY: as above, for sockaddr_in6.
            let a = unsafe {
                &mut *(storage as *mut libc::sockaddr_storage).cast::<libc::sockaddr_in6>()
            };
            a.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            a.sin6_port = v6.port().to_be();
            a.sin6_flowinfo = v6.flowinfo();
            a.sin6_addr = libc::in6_addr {
                s6_addr: v6.ip().octets(),
            };
            a.sin6_scope_id = v6.scope_id();
            size_of::<libc::sockaddr_in6>() as libc::socklen_t
        }
    }
}

#[cfg(test)]
mod tests {
    use std::mem::zeroed;

    use super::*;

    #[test]
    fn addresses_round_trip_through_sockaddr() {
        for text in ["127.0.0.1:4000", "[::1]:5000", "10.1.2.3:65535"] {
            let address: SocketAddr = text.parse().unwrap();
            // SAFETY: all-zero is a valid sockaddr_storage.
            let mut storage: libc::sockaddr_storage = unsafe { zeroed() };
            write_socket_address(address, &mut storage);
            assert_eq!(socket_address(&storage), Some(address));
        }
    }

    #[test]
    fn a_written_source_reads_back_as_the_message_it_is() {
        let mut control = Control::ZERO;
        let len = control.write_source(Ipv4Addr::new(127, 1, 0, 9));
        // SAFETY: all-zero is a valid msghdr.
        let mut header: libc::msghdr = unsafe { zeroed() };
        header.msg_control = control.as_mut_ptr();
        header.msg_controllen = len;
        // The same message read as a received one names `ipi_addr`, which a
        // sender leaves zero; what matters is that it is found and parsed.
        assert_eq!(destination(&header), Some(Ipv4Addr::UNSPECIFIED));
        header.msg_controllen = 0;
        assert_eq!(destination(&header), None, "no message, no address");
    }
}
