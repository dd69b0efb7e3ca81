//! HTTP/1.1 keep-alive connections shared by the players of one driver:
//! [`KeepAlivePool`] bounds how many are open to a target (one process may
//! hold at most ~20,000 open files; 100,000 players cannot each have one),
//! spreads them over source addresses, and queues players while every
//! connection is busy. [`connect`] and [`exchange`] are the two futures a
//! driver runs for it; the connections are the swarm's own
//! [HTTP/1.1 client](crate::http1).

use std::collections::VecDeque;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use tokio::net::TcpStream;

use crate::http1::Connection;
use crate::interval::ErrorKind;
use crate::tls::{Secure, Stream};

/// A ready HTTP/1.1 connection.
pub type Sender = Connection;

/// A request built and waiting for a connection.
#[derive(Debug)]
pub struct Waiting {
    /// The player it is for.
    pub player: u32,
    /// The request.
    pub request: Request<Full<Bytes>>,
    /// Its timeout once sent.
    pub timeout: Duration,
}

/// A response, fully read (so the connection can carry the next request).
#[derive(Debug)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// The body.
    pub body: Bytes,
}

/// One target's connections in one driver. See the [module docs](self).
#[derive(Debug)]
pub struct KeepAlivePool {
    addr: SocketAddr,
    sources: Arc<[IpAddr]>,
    next_source: usize,
    idle: Vec<Sender>,
    /// Connections open or being opened.
    open: usize,
    max: usize,
    /// Requests waiting for a connection, oldest first.
    pub waiting: VecDeque<Waiting>,
}

impl KeepAlivePool {
    /// At most `max` connections to `addr`, bound round-robin to `sources`
    /// (empty: the system picks), first offset by `offset`.
    pub fn new(addr: SocketAddr, max: usize, sources: Arc<[IpAddr]>, offset: usize) -> Self {
        Self {
            addr,
            next_source: offset,
            sources,
            idle: Vec::with_capacity(max),
            open: 0,
            max: max.max(1),
            waiting: VecDeque::new(),
        }
    }

    /// An idle connection, if one is still usable.
    pub fn take_idle(&mut self) -> Option<Sender> {
        while let Some(mut s) = self.idle.pop() {
            if s.is_closed() {
                self.open -= 1;
            } else {
                return Some(s);
            }
        }
        None
    }

    /// Reserves a new connection if under the bound: the address to dial
    /// and the source address to dial from.
    pub fn reserve(&mut self) -> Option<(SocketAddr, Option<IpAddr>)> {
        if self.open >= self.max {
            return None;
        }
        self.open += 1;
        let source = if self.sources.is_empty() {
            None
        } else {
            self.next_source = (self.next_source + 1) % self.sources.len();
            Some(self.sources[self.next_source])
        };
        Some((self.addr, source))
    }

    /// A connection came back (or was just made) and is free.
    pub fn release(&mut self, mut s: Sender) {
        if s.is_closed() {
            self.open -= 1;
        } else {
            self.idle.push(s);
        }
    }

    /// A connection (or an attempt to make one) is gone.
    pub fn lost(&mut self) {
        self.open = self.open.saturating_sub(1);
    }

    /// Connections open or being opened.
    pub fn open(&self) -> usize {
        self.open
    }

    /// Idle connections.
    pub fn idle(&self) -> usize {
        self.idle.len()
    }
}

/// Opens a TCP connection (from `source`, if given) for HTTP/1.1, over
/// TLS when `secure` (an `https://` target): the handshake is part of the
/// connect, within `timeout`.
pub async fn connect(
    addr: SocketAddr,
    source: Option<IpAddr>,
    secure: Option<Secure>,
    timeout: Duration,
) -> Result<Sender, ErrorKind> {
    tokio::time::timeout(timeout, open(addr, source, secure.as_ref()))
        .await
        .unwrap_or(Err(ErrorKind::Timeout))
        .map(Connection::new)
}

/// [`dial`], then the TLS handshake when `secure`.
pub async fn open(
    addr: SocketAddr,
    source: Option<IpAddr>,
    secure: Option<&Secure>,
) -> Result<Stream, ErrorKind> {
    let tcp = dial(addr, source).await?;
    match secure {
        None => Ok(Stream::Plain(tcp)),
        Some(secure) => secure.handshake(tcp).await.map_err(|_| ErrorKind::Connect),
    }
}

/// A TCP connection to `addr` from `source` (if given), without delay.
pub async fn dial(addr: SocketAddr, source: Option<IpAddr>) -> Result<TcpStream, ErrorKind> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()
    } else {
        tokio::net::TcpSocket::new_v6()
    }
    .map_err(|_| ErrorKind::Connect)?;
    if let Some(ip) = source {
        socket
            .bind(SocketAddr::new(ip, 0))
            .map_err(|_| ErrorKind::Connect)?;
    }
    let stream = socket.connect(addr).await.map_err(|_| ErrorKind::Connect)?;
    let _ = stream.set_nodelay(true);
    Ok(stream)
}

/// Sends `request` on `sender` and reads the whole response. The sender
/// comes back if the connection can carry another request. A broken
/// connection or a response that is not HTTP/1.1 is
/// [`ErrorKind::Transport`].
pub async fn exchange(
    mut sender: Sender,
    request: Request<Full<Bytes>>,
    timeout: Duration,
) -> (Option<Sender>, Result<Answer, ErrorKind>) {
    let answer = match tokio::time::timeout(timeout, sender.round_trip(request)).await {
        Ok(Ok((status, body))) => Answer {
            status,
            body: if body.is_empty() {
                Bytes::new()
            } else {
                Bytes::copy_from_slice(body)
            },
        },
        Ok(Err(_)) => return (None, Err(ErrorKind::Transport)),
        Err(_) => return (None, Err(ErrorKind::Timeout)),
    };
    let sender = sender.keeps_alive().then_some(sender);
    (sender, Ok(answer))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pool_bounds_connections_and_rotates_sources() {
        let sources: Arc<[IpAddr]> = Arc::from(vec![
            "127.0.0.2".parse::<IpAddr>().unwrap(),
            "127.0.0.3".parse().unwrap(),
        ]);
        let mut pool = KeepAlivePool::new("127.0.0.1:80".parse().unwrap(), 3, sources, 0);
        let picks: Vec<_> = (0..4)
            .map(|_| pool.reserve().map(|(_, s)| s.unwrap().to_string()))
            .collect();
        assert_eq!(
            picks,
            [
                Some("127.0.0.3".into()),
                Some("127.0.0.2".into()),
                Some("127.0.0.3".into()),
                None
            ]
        );
        assert_eq!(pool.open(), 3);
        pool.lost();
        assert_eq!(pool.open(), 2);
        assert!(pool.reserve().is_some());
        assert!(pool.take_idle().is_none());
    }

    /// Answers one request on one connection with `reply` (nothing if
    /// empty), then holds the connection open until the client drops it.
    async fn peer(reply: &'static [u8]) -> SocketAddr {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 1024];
            let _ = stream.read(&mut buf).await;
            if !reply.is_empty() {
                let _ = stream.write_all(reply).await;
            }
            while stream.read(&mut buf).await.is_ok_and(|n| n > 0) {}
        });
        addr
    }

    fn get() -> Request<Full<Bytes>> {
        Request::get("/").body(Full::new(Bytes::new())).unwrap()
    }

    #[tokio::test]
    async fn exchange_maps_close_garbage_and_silence() {
        let timeout = Duration::from_secs(10);
        let cases: [(&'static [u8], Result<u16, ErrorKind>, bool); 3] = [
            (
                b"HTTP/1.1 503 Busy\r\ncontent-length: 1\r\n\r\nx",
                Ok(503),
                true,
            ),
            (
                b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 0\r\n\r\n",
                Ok(200),
                false,
            ),
            (b"SSH-2.0-OpenSSH\r\n\r\n", Err(ErrorKind::Transport), false),
        ];
        for (reply, expected, kept) in cases {
            let sender = connect(peer(reply).await, None, None, timeout)
                .await
                .unwrap();
            let (sender, result) = exchange(sender, get(), timeout).await;
            assert_eq!(result.map(|a| a.status), expected);
            assert_eq!(sender.is_some(), kept);
        }
        let sender = connect(peer(b"").await, None, None, timeout).await.unwrap();
        let (sender, result) = exchange(sender, get(), Duration::from_millis(20)).await;
        assert_eq!(result.map(|a| a.status), Err(ErrorKind::Timeout));
        assert!(sender.is_none());
    }
}
