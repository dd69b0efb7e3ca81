//! Waking a worker that sleeps with nothing to do.
//!
//! A worker with no match and no connection has no deadline to wake for: it
//! blocks in `poll(2)` on its UDP socket and a [`Doorbell`] (an eventfd)
//! together, with no timeout. A datagram (a client connecting) or a ring
//! wakes it. The admin side queues commands through a [`CommandSender`],
//! which rings the bell after each one, so a command never waits for a
//! periodic wake-up; there is none.
//!
//! Not for busy workers: they sleep until their next deadline as before
//! (`crate::worker`).

use std::io;
use std::net::UdpSocket;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;
use std::sync::mpsc::{SendError, Sender};

/// An eventfd a sleeping worker waits on beside its socket.
#[derive(Debug)]
pub(crate) struct Doorbell {
    fd: OwnedFd,
}

impl Doorbell {
    /// A bell that has not rung.
    pub(crate) fn new() -> io::Result<Self> {
        // SAFETY: eventfd takes no pointers; a valid result is a new fd
        // that nothing else owns.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is open and owned by nobody else.
        Ok(Self {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// Wakes the worker waiting on the bell (or makes its next wait return
    /// at once).
    pub(crate) fn ring(&self) {
        let one = 1u64.to_ne_bytes();
        // SAFETY: writes 8 bytes from a live buffer to an open fd. A full
        // counter (EAGAIN) already means "rung".
        unsafe {
            libc::write(self.fd.as_raw_fd(), one.as_ptr().cast(), one.len());
        }
    }

    /// Blocks until a datagram waits on `socket` or the bell rings (at once
    /// if either already has), then clears the bell.
    pub(crate) fn wait(&self, socket: &UdpSocket) {
        let mut fds = [
            libc::pollfd {
                fd: socket.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: self.fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: `fds` is a live array of two pollfds. An error (EINTR)
        // returns early, as a wake-up would.
        unsafe {
            libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1);
        }
        if fds[1].revents != 0 {
            let mut count = [0u8; 8];
            // SAFETY: reads at most 8 bytes into a live 8-byte buffer.
            unsafe {
                libc::read(self.fd.as_raw_fd(), count.as_mut_ptr().cast(), count.len());
            }
        }
    }
}

/// Queues commands for one worker and rings its [`Doorbell`] after each.
#[derive(Debug)]
pub(crate) struct CommandSender<T> {
    tx: Sender<T>,
    bell: Arc<Doorbell>,
}

impl<T> CommandSender<T> {
    /// Sends on `tx` and rings `bell`, which the receiving worker waits on.
    pub(crate) fn new(tx: Sender<T>, bell: Arc<Doorbell>) -> Self {
        Self { tx, bell }
    }

    /// Queues `command` and wakes the worker; an error when the worker is
    /// gone.
    pub(crate) fn send(&self, command: T) -> Result<(), SendError<T>> {
        self.tx.send(command)?;
        self.bell.ring();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    #[test]
    fn a_ring_before_the_wait_ends_it_at_once_and_is_cleared() {
        let bell = Doorbell::new().unwrap();
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        bell.ring();
        bell.ring();
        bell.wait(&socket);
        // Cleared: another wait blocks until another ring comes.
        let bell = Arc::new(bell);
        let rung = Arc::new(AtomicBool::new(false));
        let (ringer, flag) = (Arc::clone(&bell), Arc::clone(&rung));
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            flag.store(true, Ordering::SeqCst);
            ringer.ring();
        });
        bell.wait(&socket);
        assert!(rung.load(Ordering::SeqCst), "woke before the ring");
        t.join().unwrap();
    }

    #[test]
    fn a_datagram_wakes_the_wait() {
        let bell = Doorbell::new().unwrap();
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .send_to(b"x", socket.local_addr().unwrap())
            .unwrap();
        bell.wait(&socket); // returns: the datagram waits
    }

    #[test]
    fn sending_queues_and_rings() {
        let (tx, rx) = std::sync::mpsc::channel();
        let bell = Arc::new(Doorbell::new().unwrap());
        let sender = CommandSender::new(tx, Arc::clone(&bell));
        sender.send(7).unwrap();
        bell.wait(&UdpSocket::bind("127.0.0.1:0").unwrap());
        assert_eq!(rx.try_recv(), Ok(7));
        drop(rx);
        assert!(sender.send(8).is_err());
    }
}
