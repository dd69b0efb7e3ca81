//! User-space UDP port mappings in front of the hosts (`stack
//! --port-mapping`): each worker binds a loopback port no player is told,
//! and is reached only through a forwarder on another loopback address
//! (127.0.0.2 for host 0, 127.0.0.3 for host 1...), as behind a NAT, a
//! NodePort, an Agones host port or a container's published port. The host
//! advertises the forwarders (`serve --public-address`), so its match
//! answers and the gateway's tokens name them, and a token naming the bound
//! port would be refused.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};
use std::path::Path;

use hightick_netem::{LinkProfile, Proxy, ProxyConfig};

use crate::error::StackError;

/// Tries at finding free consecutive ports before giving up.
const PORT_TRIES: usize = 64;

/// One host's mappings, one forwarder per worker; they stop when dropped.
#[derive(Debug)]
pub(crate) struct PortMapping {
    /// Where worker 0 binds (worker i: port + i).
    bind: SocketAddr,
    forwarders: Vec<Proxy>,
}

impl PortMapping {
    /// Forwarders for host `host`'s `workers`, on 127.0.0.(2 + host), to
    /// free loopback ports the host will bind.
    pub(crate) fn start(host: usize, workers: usize) -> Result<Self, StackError> {
        let bind = free_consecutive_ports(workers)?;
        let front = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2 + host as u8));
        let lan = LinkProfile::builtin("lan").expect("a built-in link");
        let forwarders = (0..workers)
            .map(|w| {
                let upstream = SocketAddr::new(bind.ip(), bind.port() + w as u16);
                Proxy::start(ProxyConfig::new(
                    SocketAddr::new(front, 0),
                    upstream,
                    lan.clone(),
                    (host * 64 + w) as u64,
                ))
                .map_err(|e| StackError::Options(format!("port mapping for host {host}: {e}")))
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { bind, forwarders })
    }

    /// `serve` flags: bind the hidden ports, advertise the forwarders.
    pub(crate) fn serve_args(&self) -> Vec<String> {
        let public: Vec<String> = self
            .forwarders
            .iter()
            .map(|f| f.local_addr().to_string())
            .collect();
        vec![
            "--bind".to_owned(),
            self.bind.to_string(),
            "--public-address".to_owned(),
            public.join(","),
        ]
    }

    /// Datagrams the forwarders have carried to the host so far.
    pub(crate) fn delivered_up(&self) -> u64 {
        self.forwarders
            .iter()
            .map(|f| f.report().emulator.up.delivered)
            .sum()
    }
}

/// A loopback port `p` with `p .. p + n` all free for UDP now.
fn free_consecutive_ports(n: usize) -> Result<SocketAddr, StackError> {
    let loopback = IpAddr::V4(Ipv4Addr::LOCALHOST);
    for _ in 0..PORT_TRIES {
        let first = UdpSocket::bind(SocketAddr::new(loopback, 0))
            .map_err(StackError::io(Path::new("127.0.0.1:0")))?;
        let base = first
            .local_addr()
            .map_err(StackError::io(Path::new("udp")))?;
        if usize::from(base.port()) + n > usize::from(u16::MAX) {
            continue;
        }
        let rest: Result<Vec<UdpSocket>, _> = (1..n)
            .map(|i| UdpSocket::bind(SocketAddr::new(loopback, base.port() + i as u16)))
            .collect();
        if rest.is_ok() {
            return Ok(base);
        }
    }
    Err(StackError::Options(format!(
        "port mapping: found no {n} free consecutive UDP ports on 127.0.0.1"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mapping_forwards_to_the_ports_the_host_binds_and_advertises_its_own() {
        let mapping = PortMapping::start(1, 2).unwrap();
        let args = mapping.serve_args();
        assert_eq!(args[0], "--bind");
        assert_eq!(args[2], "--public-address");
        let public: Vec<SocketAddr> = args[3].split(',').map(|a| a.parse().unwrap()).collect();
        assert_eq!(public.len(), 2);
        assert!(
            public
                .iter()
                .all(|a| a.ip() == IpAddr::V4(Ipv4Addr::new(127, 0, 0, 3)))
        );
        // A datagram to the forwarder reaches the bound port.
        let bound: SocketAddr = args[1].parse().unwrap();
        let worker = UdpSocket::bind(SocketAddr::new(bound.ip(), bound.port() + 1)).unwrap();
        worker
            .set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        let player = UdpSocket::bind("127.0.0.1:0").unwrap();
        player.send_to(b"hello", public[1]).unwrap();
        let mut buf = [0u8; 16];
        let (n, _) = worker.recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"hello");
        // The forwarder counts it once its thread has moved on.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while mapping.delivered_up() == 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(mapping.delivered_up(), 1);
    }
}
