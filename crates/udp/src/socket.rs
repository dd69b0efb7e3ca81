//! Opening the sockets: on one address, or on every loopback address at
//! once for clients that share a socket.

use std::io;
use std::mem::size_of;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;

use socket2::{Domain, Protocol, Socket, Type};

/// Kernel socket buffer asked for in each direction (the kernel caps it at
/// net.core.rmem_max / wmem_max).
const SOCKET_BUFFER_BYTES: usize = 4 << 20;

/// Opens a non-blocking UDP socket bound to `address` with large kernel
/// buffers.
pub fn bind(address: SocketAddr) -> io::Result<UdpSocket> {
    open(address, None)
}

/// Opens a non-blocking UDP socket on port `port` (0: any free one) of
/// every loopback address (`127.0.0.0/8`) and of no other interface: bound
/// to `0.0.0.0` and to the device `lo`, with large kernel buffers and
/// [`enable_destinations`] on. Clients that share it tell themselves apart
/// by address: each sends from its own
/// ([`SendBatch::commit_from`](crate::SendBatch::commit_from)) and takes
/// what was sent to it
/// ([`ReceiveBatch::destination`](crate::ReceiveBatch::destination)).
pub fn bind_loopback(port: u16) -> io::Result<UdpSocket> {
    let socket = open(
        SocketAddr::from(([0, 0, 0, 0], port)),
        Some(b"lo".as_slice()),
    )?;
    enable_destinations(&socket)?;
    Ok(socket)
}

/// Asks the kernel to say, with each datagram `socket` receives, which
/// address it was sent to (`IP_PKTINFO`; IPv4), for
/// [`ReceiveBatch::destination`](crate::ReceiveBatch::destination).
pub fn enable_destinations(socket: &UdpSocket) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: a live socket and an int option given with its true size.
    let done = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::IPPROTO_IP,
            libc::IP_PKTINFO,
            (&raw const on).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if done == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn open(address: SocketAddr, device: Option<&[u8]>) -> io::Result<UdpSocket> {
    let socket = Socket::new(
        Domain::for_address(address),
        Type::DGRAM,
        Some(Protocol::UDP),
    )?;
    // Best effort: a host with low limits still works, it drops sooner.
    let _ = socket.set_recv_buffer_size(SOCKET_BUFFER_BYTES);
    let _ = socket.set_send_buffer_size(SOCKET_BUFFER_BYTES);
    socket.set_nonblocking(true)?;
    if let Some(device) = device {
        socket.bind_device(Some(device))?;
    }
    socket.bind(&address.into())?;
    Ok(socket.into())
}
