//! [`ReceiveBatch`]: up to [`BATCH`] datagrams per `recvmmsg`.

use std::io;
use std::mem::size_of;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;

use crate::address::{Control, destination, socket_address};
use crate::messages::Messages;
use crate::{BATCH, RECEIVE_BYTES};

/// Received datagrams: [`Self::receive`] fills them, [`Self::datagram`]
/// reads one.
pub struct ReceiveBatch {
    buffers: Box<[[u8; RECEIVE_BYTES]]>,
    messages: Messages,
    count: usize,
}

impl std::fmt::Debug for ReceiveBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReceiveBatch")
            .field("count", &self.count)
            .finish_non_exhaustive()
    }
}

impl Default for ReceiveBatch {
    fn default() -> Self {
        Self::new()
    }
}

impl ReceiveBatch {
    /// Buffers for [`BATCH`] datagrams.
    pub fn new() -> Self {
        Self {
            buffers: vec![[0u8; RECEIVE_BYTES]; BATCH].into_boxed_slice(),
            messages: Messages::new(),
            count: 0,
        }
    }

    /// Reads as many waiting datagrams as fit (up to [`BATCH`]) without
    /// blocking; returns how many (0 when none is waiting). Datagrams longer
    /// than [`RECEIVE_BYTES`] are returned with length 0 (drop them).
    pub fn receive(&mut self, socket: &UdpSocket) -> io::Result<usize> {
        let address_len = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        for (i, buffer) in self.buffers.iter_mut().enumerate() {
            self.messages.point(i, buffer, address_len, Control::LEN);
        }
        // SAFETY: every header points at a live buffer, iovec, address and
        // control buffer of this batch, each as long as the header says; the
        // kernel writes at most that much and fills msg_len / msg_namelen /
        // msg_controllen / msg_flags.
        let n = unsafe {
            libc::recvmmsg(
                socket.as_raw_fd(),
                self.messages.headers.as_mut_ptr(),
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
        let header = &self.messages.headers[i];
        let from = socket_address(&self.messages.addresses[i])?;
        let truncated = header.msg_hdr.msg_flags & libc::MSG_TRUNC != 0;
        let len = if truncated {
            0
        } else {
            (header.msg_len as usize).min(RECEIVE_BYTES)
        };
        Some((from, &mut self.buffers[i][..len]))
    }

    /// The address the `i`th datagram of the last receive was sent to, on
    /// a socket that asked for it
    /// ([`enable_destinations`](crate::enable_destinations), IPv4); `None`
    /// otherwise.
    pub fn destination(&self, i: usize) -> Option<Ipv4Addr> {
        if i >= self.count {
            return None;
        }
        destination(&self.messages.headers[i].msg_hdr)
    }
}
