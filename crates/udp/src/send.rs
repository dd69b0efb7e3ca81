//! [`SendBatch`]: up to [`BATCH`] datagrams per `sendmmsg`, each to its own
//! destination and, if asked, from its own source address.

use std::io;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;

use crate::address::write_socket_address;
use crate::messages::Messages;
use crate::{BATCH, SEND_BYTES};

/// Datagrams waiting to be sent: [`Self::buffer`] to write the next one,
/// [`Self::commit`] (or [`Self::commit_from`]) to keep it, [`Self::flush`]
/// to send them all.
pub struct SendBatch {
    buffers: Box<[[u8; SEND_BYTES]]>,
    lengths: Box<[usize]>,
    address_lengths: Box<[libc::socklen_t]>,
    /// Bytes of each datagram's control message (its source address), 0
    /// for none.
    control_lengths: Box<[usize]>,
    messages: Messages,
    count: usize,
}

impl std::fmt::Debug for SendBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SendBatch")
            .field("count", &self.count)
            .finish_non_exhaustive()
    }
}

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
        Self {
            buffers: vec![[0u8; SEND_BYTES]; BATCH].into_boxed_slice(),
            lengths: vec![0; BATCH].into_boxed_slice(),
            address_lengths: vec![0; BATCH].into_boxed_slice(),
            control_lengths: vec![0; BATCH].into_boxed_slice(),
            messages: Messages::new(),
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

    /// Keeps the first `len` bytes of [`Self::buffer`] as a datagram to `to`
    /// from the socket's own address.
    pub fn commit(&mut self, len: usize, to: SocketAddr) {
        self.keep(len, to, None);
    }

    /// Keeps the first `len` bytes of [`Self::buffer`] as a datagram to `to`
    /// that leaves from `source` (`IP_PKTINFO`), one of the host's own
    /// addresses: for a socket bound to `0.0.0.0` that several clients
    /// share ([`bind_loopback`](crate::bind_loopback)), each with its own.
    pub fn commit_from(&mut self, len: usize, to: SocketAddr, source: Ipv4Addr) {
        self.keep(len, to, Some(source));
    }

    fn keep(&mut self, len: usize, to: SocketAddr, source: Option<Ipv4Addr>) {
        if self.count == BATCH || len > SEND_BYTES {
            return;
        }
        let i = self.count;
        self.lengths[i] = len;
        self.address_lengths[i] = write_socket_address(to, &mut self.messages.addresses[i]);
        self.control_lengths[i] =
            source.map_or(0, |source| self.messages.controls[i].write_source(source));
        self.count += 1;
    }

    /// Sends every waiting datagram (several `sendmmsg` calls if the kernel
    /// takes part of the batch). What the kernel refuses is dropped: UDP.
    pub fn flush(&mut self, socket: &UdpSocket) -> Flushed {
        let mut flushed = Flushed::default();
        for i in 0..self.count {
            self.messages.point(
                i,
                &mut self.buffers[i][..self.lengths[i]],
                self.address_lengths[i],
                self.control_lengths[i],
            );
        }
        let mut start = 0;
        while start < self.count {
            // SAFETY: headers start..count point at live buffers, iovecs,
            // addresses and control messages of this batch with their true
            // lengths.
            let n = unsafe {
                libc::sendmmsg(
                    socket.as_raw_fd(),
                    self.messages.headers[start..].as_mut_ptr(),
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
