//! [`Messages`]: the C structs a batch hands the kernel for each of its
//! [`BATCH`] datagrams (peer address, control buffer, iovec, header),
//! allocated once and pointed at the batch's buffers just before each call.

use std::mem::zeroed;

use crate::BATCH;
use crate::address::Control;

/// One batch's message structs, all zero until [`Messages::point`] fills
/// one in.
pub(crate) struct Messages {
    /// Each datagram's peer: its sender when receiving, its destination
    /// when sending.
    pub(crate) addresses: Box<[libc::sockaddr_storage]>,
    pub(crate) controls: Box<[Control]>,
    iovecs: Box<[libc::iovec]>,
    pub(crate) headers: Box<[libc::mmsghdr]>,
}

// SAFETY: the raw pointers inside the headers and iovecs point only into
// the owning batch's heap buffers and these structs (which move with it),
// and are rewritten just before each system call; nothing is shared
// between threads.
unsafe impl Send for Messages {}

impl Messages {
    /// [`BATCH`] zeroed messages.
    pub(crate) fn new() -> Self {
        // SAFETY: all-zero is a valid value of these plain C structs.
        let zero_address: libc::sockaddr_storage = unsafe { zeroed() };
        let zero_iovec = libc::iovec {
            iov_base: std::ptr::null_mut(),
            iov_len: 0,
        };
        // SAFETY: as above.
        let zero_header: libc::mmsghdr = unsafe { zeroed() };
        Self {
            addresses: vec![zero_address; BATCH].into_boxed_slice(),
            controls: vec![Control::ZERO; BATCH].into_boxed_slice(),
            iovecs: vec![zero_iovec; BATCH].into_boxed_slice(),
            headers: vec![zero_header; BATCH].into_boxed_slice(),
        }
    }

    /// Points header `i` at `buffer` (the datagram), at its own address
    /// (`address_len` bytes of it) and at `control_len` bytes of its
    /// control buffer (0: none).
    pub(crate) fn point(
        &mut self,
        i: usize,
        buffer: &mut [u8],
        address_len: libc::socklen_t,
        control_len: usize,
    ) {
        self.iovecs[i] = libc::iovec {
            iov_base: buffer.as_mut_ptr().cast(),
            iov_len: buffer.len(),
        };
        let header = &mut self.headers[i].msg_hdr;
        header.msg_name = (&raw mut self.addresses[i]).cast();
        header.msg_namelen = address_len;
        header.msg_iov = &raw mut self.iovecs[i];
        header.msg_iovlen = 1;
        header.msg_control = if control_len == 0 {
            std::ptr::null_mut()
        } else {
            self.controls[i].as_mut_ptr()
        };
        header.msg_controllen = control_len;
        header.msg_flags = 0;
        self.headers[i].msg_len = 0;
    }
}
