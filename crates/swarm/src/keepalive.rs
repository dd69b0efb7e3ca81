//! HTTP/1.1 keep-alive connections shared by the players of one driver:
//! [`KeepAlivePool`] bounds how many are open to a target (one process may
//! hold at most ~20,000 open files; 100,000 players cannot each have one),
//! spreads them over source addresses, and queues players while every
//! connection is busy. [`connect`] and [`exchange`] are the two futures a
//! driver runs for it.

use std::collections::VecDeque;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::Request;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;

use crate::interval::ErrorKind;

/// A ready HTTP/1.1 connection's request side.
pub type Sender = SendRequest<Full<Bytes>>;

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
        while let Some(s) = self.idle.pop() {
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
    pub fn release(&mut self, s: Sender) {
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

/// Opens a TCP connection (from `source`, if given) and does the HTTP/1.1
/// handshake; the connection's I/O runs on its own task.
pub async fn connect(
    addr: SocketAddr,
    source: Option<IpAddr>,
    timeout: Duration,
) -> Result<Sender, ErrorKind> {
    let dial = async {
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
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|_| ErrorKind::Connect)?;
        tokio::spawn(async move {
            // Ends when the peer closes or the sender is dropped.
            let _ = connection.await;
        });
        Ok(sender)
    };
    tokio::time::timeout(timeout, dial)
        .await
        .unwrap_or(Err(ErrorKind::Timeout))
}

/// Sends `request` on `sender` and reads the whole response. The sender
/// comes back if the connection can carry another request.
pub async fn exchange(
    mut sender: Sender,
    request: Request<Full<Bytes>>,
    timeout: Duration,
) -> (Option<Sender>, Result<Answer, ErrorKind>) {
    let round_trip = async {
        sender.ready().await.map_err(|_| ErrorKind::Transport)?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|_| ErrorKind::Transport)?;
        let status = response.status().as_u16();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|_| ErrorKind::Transport)?
            .to_bytes();
        Ok(Answer { status, body })
    };
    match tokio::time::timeout(timeout, round_trip).await {
        Ok(Ok(answer)) => (Some(sender), Ok(answer)),
        Ok(Err(kind)) => (None, Err(kind)),
        Err(_) => (None, Err(ErrorKind::Timeout)),
    }
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
}
