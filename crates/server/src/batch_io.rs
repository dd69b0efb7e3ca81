//! Batched UDP I/O on one socket: `recvmmsg` fills up to [`BATCH`]
//! datagrams per system call and `sendmmsg` sends up to [`BATCH`] per call
//! (Linux). Every buffer is allocated when the socket is opened; receiving
//! and sending allocate nothing.
//!
//! The message headers point into the batch's own buffers, so they are
//! filled in just before each call (a few stores per datagram) instead of
//! once, which keeps the structs movable.

use std::io;
use std::mem::{size_of, zeroed};
use std::net::{SocketAddr, SocketAddrV4, SocketAddrV6, UdpSocket};
use std::os::fd::AsRawFd;

use socket2::{Domain, Protocol, Socket, Type};

/// Datagrams per system call.
pub const BATCH: usize = 64;
/// Receive buffer per datagram: larger than any valid packet, so a longer
/// one is seen as truncated and dropped.
pub const RECEIVE_BYTES: usize = 2048;
/// Send buffer per datagram (the largest packet the secure layer writes).
pub const SEND_BYTES: usize = hightick_net::wire::MAX_PACKET_BYTES;

/// Kernel socket buffer asked for in each direction (the kernel caps it at
/// net.core.rmem_max / wmem_max).
const SOCKET_BUFFER_BYTES: usize = 4 << 20;

/// Opens a non-blocking UDP socket bound to `address` with large kernel
/// buffers.
pub fn bind(address: SocketAddr) -> io::Result<UdpSocket> {
    let socket = Socket::new(
        Domain::for_address(address),
        Type::DGRAM,
        Some(Protocol::UDP),
    )?;
    // Best effort: a host with low limits still works, it drops sooner.
    let _ = socket.set_recv_buffer_size(SOCKET_BUFFER_BYTES);
    let _ = socket.set_send_buffer_size(SOCKET_BUFFER_BYTES);
    socket.set_nonblocking(true)?;
    socket.bind(&address.into())?;
    Ok(socket.into())
}

/// Received datagrams: [`Self::receive`] fills them, [`Self::datagram`]
/// reads one.
pub struct ReceiveBatch {
    buffers: Box<[[u8; RECEIVE_BYTES]]>,
    addresses: Box<[libc::sockaddr_storage]>,
    iovecs: Box<[libc::iovec]>,
    headers: Box<[libc::mmsghdr]>,
    count: usize,
}

impl std::fmt::Debug for ReceiveBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReceiveBatch")
            .field("count", &self.count)
            .finish_non_exhaustive()
    }
}

// SAFETY: the raw pointers inside the headers and iovecs point only into
// this batch's own heap buffers (which move with it) and are rewritten just
// before each system call; nothing is shared between threads.
unsafe impl Send for ReceiveBatch {}

impl Default for ReceiveBatch {
    fn default() -> Self {
        Self::new()
    }
}

impl ReceiveBatch {
    /// Buffers for [`BATCH`] datagrams.
    pub fn new() -> Self {
        // SAFETY: all-zero is a valid value of these plain C structs.
        let zero_address: libc::sockaddr_storage = unsafe { zeroed() };
        let zero_iovec = libc::iovec {
            iov_base: std::ptr::null_mut(),
            iov_len: 0,
        };
        // SAFETY: as above.
        let zero_header: libc::mmsghdr = unsafe { zeroed() };
        Self {
            buffers: vec![[0u8; RECEIVE_BYTES]; BATCH].into_boxed_slice(),
            addresses: vec![zero_address; BATCH].into_boxed_slice(),
            iovecs: vec![zero_iovec; BATCH].into_boxed_slice(),
            headers: vec![zero_header; BATCH].into_boxed_slice(),
            count: 0,
        }
    }

    /// Reads as many waiting datagrams as fit (up to [`BATCH`]) without
    /// blocking; returns how many (0 when none is waiting). Datagrams longer
    /// than [`RECEIVE_BYTES`] are returned with length 0 (drop them).
    pub fn receive(&mut self, socket: &UdpSocket) -> io::Result<usize> {
        for i in 0..BATCH {
            self.iovecs[i] = libc::iovec {
                iov_base: self.buffers[i].as_mut_ptr().cast(),
                iov_len: RECEIVE_BYTES,
            };
            let header = &mut self.headers[i].msg_hdr;
            header.msg_name = (&raw mut self.addresses[i]).cast();
            header.msg_namelen = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            header.msg_iov = &raw mut self.iovecs[i];
            header.msg_iovlen = 1;
            header.msg_control = std::ptr::null_mut();
            header.msg_controllen = 0;
            header.msg_flags = 0;
            self.headers[i].msg_len = 0;
        }
        // SAFETY: every header points at a live buffer, iovec and address
        // of this batch, each as long as the header says; the kernel writes
        // at most that much and fills msg_len / msg_namelen / msg_flags.
        let n = unsafe {
            libc::recvmmsg(
                socket.as_raw_fd(),
                self.headers.as_mut_ptr(),
                BATCH as libc::c_uint,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
            )
        };
        if n < 0 {
            self.count = 0;
            let error = io::Error::last_os_error();
            return match error.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(0),
                _ => Err(error),
            };
        }
        self.count = n as usize;
        Ok(self.count)
    }

    /// Datagrams from the last [`Self::receive`].
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether the last [`Self::receive`] got nothing.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The `i`th datagram of the last receive: its sender and bytes
    /// (`None` for an unknown address family; empty bytes if truncated).
    pub fn datagram(&mut self, i: usize) -> Option<(SocketAddr, &mut [u8])> {
        if i >= self.count {
            return None;
        }
        let header = &self.headers[i];
        let from = socket_address(&self.addresses[i])?;
        let truncated = header.msg_hdr.msg_flags & libc::MSG_TRUNC != 0;
        let len = if truncated {
            0
        } else {
            (header.msg_len as usize).min(RECEIVE_BYTES)
        };
        Some((from, &mut self.buffers[i][..len]))
    }
}

/// Datagrams waiting to be sent: [`Self::buffer`] to write the next one,
/// [`Self::commit`] to keep it, [`Self::flush`] to send them all.
pub struct SendBatch {
    buffers: Box<[[u8; SEND_BYTES]]>,
    lengths: Box<[usize]>,
    addresses: Box<[libc::sockaddr_storage]>,
    address_lengths: Box<[libc::socklen_t]>,
    iovecs: Box<[libc::iovec]>,
    headers: Box<[libc::mmsghdr]>,
    count: usize,
}

impl std::fmt::Debug for SendBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SendBatch")
            .field("count", &self.count)
            .finish_non_exhaustive()
    }
}

// SAFETY: as for ReceiveBatch.
unsafe impl Send for SendBatch {}

impl Default for SendBatch {
    fn default() -> Self {
        Self::new()
    }
}

/// What one [`SendBatch::flush`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Flushed {
    /// Datagrams the kernel took.
    pub sent: usize,
    /// Their bytes.
    pub bytes: usize,
    /// Datagrams dropped because the socket buffer was full or the send failed.
    pub dropped: usize,
}

impl SendBatch {
    /// Room for [`BATCH`] datagrams.
    pub fn new() -> Self {
        // SAFETY: all-zero is a valid value of these plain C structs.
        let zero_address: libc::sockaddr_storage = unsafe { zeroed() };
        let zero_iovec = libc::iovec {
            iov_base: std::ptr::null_mut(),
            iov_len: 0,
        };
        // SAFETY: as above.
        let zero_header: libc::mmsghdr = unsafe { zeroed() };
        Self {
            buffers: vec![[0u8; SEND_BYTES]; BATCH].into_boxed_slice(),
            lengths: vec![0; BATCH].into_boxed_slice(),
            addresses: vec![zero_address; BATCH].into_boxed_slice(),
            address_lengths: vec![0; BATCH].into_boxed_slice(),
            iovecs: vec![zero_iovec; BATCH].into_boxed_slice(),
            headers: vec![zero_header; BATCH].into_boxed_slice(),
            count: 0,
        }
    }

    /// Datagrams waiting.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Whether the batch is full (flush before writing more).
    pub fn is_full(&self) -> bool {
        self.count == BATCH
    }

    /// The buffer the next datagram is written into (`None` when full).
    pub fn buffer(&mut self) -> Option<&mut [u8; SEND_BYTES]> {
        self.buffers.get_mut(self.count)
    }

    /// Keeps the first `len` bytes of [`Self::buffer`] as a datagram to `to`.
    pub fn commit(&mut self, len: usize, to: SocketAddr) {
        if self.count == BATCH || len > SEND_BYTES {
            return;
        }
        let i = self.count;
        self.lengths[i] = len;
        self.address_lengths[i] = write_socket_address(to, &mut self.addresses[i]);
        self.count += 1;
    }

    /// Sends every waiting datagram (several `sendmmsg` calls if the kernel
    /// takes part of the batch). What the kernel refuses is dropped: UDP.
    pub fn flush(&mut self, socket: &UdpSocket) -> Flushed {
        let mut flushed = Flushed::default();
        for i in 0..self.count {
            self.iovecs[i] = libc::iovec {
                iov_base: self.buffers[i].as_mut_ptr().cast(),
                iov_len: self.lengths[i],
            };
            let header = &mut self.headers[i].msg_hdr;
            header.msg_name = (&raw mut self.addresses[i]).cast();
            header.msg_namelen = self.address_lengths[i];
            header.msg_iov = &raw mut self.iovecs[i];
            header.msg_iovlen = 1;
            header.msg_control = std::ptr::null_mut();
            header.msg_controllen = 0;
            header.msg_flags = 0;
        }
        let mut start = 0;
        while start < self.count {
            // SAFETY: headers start..count point at live buffers, iovecs and
            // addresses of this batch with their true lengths.
            let n = unsafe {
                libc::sendmmsg(
                    socket.as_raw_fd(),
                    self.headers[start..].as_mut_ptr(),
                    (self.count - start) as libc::c_uint,
                    libc::MSG_DONTWAIT,
                )
            };
            if n < 0 {
                if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                // Buffer full or a failed destination: drop this datagram
                // and go on with the rest.
                flushed.dropped += 1;
                start += 1;
                continue;
            }
            let n = n as usize;
            flushed.sent += n;
            flushed.bytes += self.lengths[start..start + n].iter().sum::<usize>();
            start += n.max(1);
            if n == 0 {
                flushed.dropped += 1;
            }
        }
        self.count = 0;
        flushed
    }
}

fn socket_address(storage: &libc::sockaddr_storage) -> Option<SocketAddr> {
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

fn write_socket_address(
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
    use super::*;

    #[test]
    fn a_batch_goes_out_and_comes_back_with_senders() {
        let a = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let b = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let (a_addr, b_addr) = (a.local_addr().unwrap(), b.local_addr().unwrap());
        let mut out = SendBatch::new();
        for i in 0..10u8 {
            let buf = out.buffer().unwrap();
            buf[..3].copy_from_slice(&[i, i, i]);
            out.commit(3, b_addr);
        }
        let flushed = out.flush(&a);
        assert_eq!(flushed.sent, 10);
        assert_eq!(flushed.bytes, 30);
        let mut received = Vec::new();
        let mut batch = ReceiveBatch::new();
        for _ in 0..1000 {
            let n = batch.receive(&b).unwrap();
            for i in 0..n {
                let (from, bytes) = batch.datagram(i).unwrap();
                assert_eq!(from, a_addr);
                received.push(bytes.to_vec());
            }
            if received.len() == 10 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        received.sort();
        let expected: Vec<Vec<u8>> = (0..10u8).map(|i| vec![i, i, i]).collect();
        assert_eq!(received, expected);
        assert_eq!(batch.receive(&b).unwrap(), 0, "nothing more waits");
    }

    #[test]
    fn oversized_datagrams_arrive_empty() {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        a.send_to(&[7u8; RECEIVE_BYTES + 100], b.local_addr().unwrap())
            .unwrap();
        let mut batch = ReceiveBatch::new();
        for _ in 0..1000 {
            if batch.receive(&b).unwrap() > 0 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert_eq!(batch.len(), 1);
        assert!(batch.datagram(0).unwrap().1.is_empty());
    }

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
}
