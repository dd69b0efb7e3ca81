//! The PROXY protocol (`[http] proxy_protocol`), versions 1 and 2, as a TCP
//! (layer 4) load balancer sends it: a header before the first byte of the
//! connection naming the client's address, since a TCP proxy cannot add
//! `X-Forwarded-For`. Parsed with the `ppp` crate; this module reads exactly
//! the header's bytes off the stream (never a byte of the request after it)
//! and says whom it names.

use std::net::SocketAddr;

use tokio::io::{AsyncRead, AsyncReadExt};

/// The v2 signature; 12 bytes is also less than the shortest v1 header
/// (`PROXY UNKNOWN\r\n`, 15), so reading it never reads past a header.
const V2_SIGNATURE: &[u8; 12] = b"\r\n\r\n\0\r\nQUIT\n";
/// The longest v1 header, CRLF included.
const V1_MAX: usize = 107;

/// Whom a PROXY header names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// The client's address, as the proxy saw it.
    Client(SocketAddr),
    /// The proxy speaking for itself (v2 `LOCAL`, v1 `UNKNOWN`: its health
    /// checks): the peer is the client.
    Proxy,
}

/// Why a connection that owed a PROXY header is closed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ProxyHeaderError {
    /// The stream ended or failed before the header did.
    #[error("reading the PROXY header: {0}")]
    Io(#[from] std::io::Error),
    /// The first bytes are not a PROXY header, or not a valid one.
    #[error("not a PROXY protocol header: {0}")]
    Invalid(String),
}

/// Reads one PROXY header (v1 or v2) from the start of `stream`, and no more.
pub(crate) async fn read_header<S: AsyncRead + Unpin>(
    stream: &mut S,
) -> Result<Origin, ProxyHeaderError> {
    let mut header = vec![0u8; V2_SIGNATURE.len()];
    stream.read_exact(&mut header).await?;
    if header == V2_SIGNATURE {
        let mut rest = [0u8; 4];
        stream.read_exact(&mut rest).await?;
        header.extend_from_slice(&rest);
        let length = usize::from(u16::from_be_bytes([rest[2], rest[3]]));
        let start = header.len();
        header.resize(start + length, 0);
        stream.read_exact(&mut header[start..]).await?;
        return origin_v2(&header);
    }
    if !header.starts_with(b"PROXY ") {
        return Err(ProxyHeaderError::Invalid(format!(
            "starts with {:?}",
            String::from_utf8_lossy(&header)
        )));
    }
    // v1: text up to CRLF, read a byte at a time (it is at most 107).
    while !header.ends_with(b"\r\n") {
        if header.len() >= V1_MAX {
            return Err(ProxyHeaderError::Invalid(format!(
                "a v1 header longer than {V1_MAX} bytes"
            )));
        }
        header.push(stream.read_u8().await?);
    }
    origin_v1(&header)
}

fn origin_v2(header: &[u8]) -> Result<Origin, ProxyHeaderError> {
    use ppp::v2::{Addresses, Command, Header};
    let parsed = Header::try_from(header).map_err(|e| ProxyHeaderError::Invalid(e.to_string()))?;
    if parsed.command == Command::Local {
        return Ok(Origin::Proxy);
    }
    Ok(match parsed.addresses {
        Addresses::IPv4(a) => Origin::Client((a.source_address, a.source_port).into()),
        Addresses::IPv6(a) => Origin::Client((a.source_address, a.source_port).into()),
        // A client on a UNIX socket or of no family: nothing to key on but
        // the proxy.
        Addresses::Unix(_) | Addresses::Unspecified => Origin::Proxy,
    })
}

fn origin_v1(header: &[u8]) -> Result<Origin, ProxyHeaderError> {
    use ppp::v1::{Addresses, Header};
    let parsed = Header::try_from(header).map_err(|e| ProxyHeaderError::Invalid(e.to_string()))?;
    Ok(match parsed.addresses {
        Addresses::Tcp4(a) => Origin::Client((a.source_address, a.source_port).into()),
        Addresses::Tcp6(a) => Origin::Client((a.source_address, a.source_port).into()),
        Addresses::Unknown => Origin::Proxy,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ppp::v2::{Builder, Command, Protocol, Version};

    fn v2(source: &str, command: Command) -> Vec<u8> {
        let source: SocketAddr = source.parse().unwrap();
        let destination: SocketAddr = if source.is_ipv4() {
            "10.0.0.2:443".parse().unwrap()
        } else {
            "[2001:db8::2]:443".parse().unwrap()
        };
        Builder::with_addresses(
            Version::Two | command,
            Protocol::Stream,
            (source, destination),
        )
        .write_tlv(ppp::v2::Type::NoOp, b"pad")
        .unwrap()
        .build()
        .unwrap()
    }

    /// The header, then a request: what `read_header` says, and what is left.
    async fn read(bytes: &[u8]) -> (Result<Origin, ProxyHeaderError>, Vec<u8>) {
        let mut stream = bytes;
        let origin = read_header(&mut stream).await;
        (origin, stream.to_vec())
    }

    #[tokio::test]
    async fn v2_names_the_client_and_leaves_the_request_unread() {
        let mut bytes = v2("203.0.113.7:51000", Command::Proxy);
        bytes.extend_from_slice(b"GET / HTTP/1.1\r\n");
        let (origin, rest) = read(&bytes).await;
        assert_eq!(
            origin.unwrap(),
            Origin::Client("203.0.113.7:51000".parse().unwrap())
        );
        assert_eq!(rest, b"GET / HTTP/1.1\r\n");

        let (origin, _) = read(&v2("[2001:db8::7]:51000", Command::Proxy)).await;
        assert_eq!(
            origin.unwrap(),
            Origin::Client("[2001:db8::7]:51000".parse().unwrap())
        );
        let (origin, _) = read(&v2("203.0.113.7:1", Command::Local)).await;
        assert_eq!(origin.unwrap(), Origin::Proxy);
    }

    #[tokio::test]
    async fn v1_names_the_client_and_leaves_the_request_unread() {
        let (origin, rest) = read(b"PROXY TCP4 198.51.100.4 10.0.0.2 40000 443\r\nGET /").await;
        assert_eq!(
            origin.unwrap(),
            Origin::Client("198.51.100.4:40000".parse().unwrap())
        );
        assert_eq!(rest, b"GET /");
        let (origin, rest) = read(b"PROXY UNKNOWN\r\nG").await;
        assert_eq!(origin.unwrap(), Origin::Proxy);
        assert_eq!(rest, b"G");
    }

    #[tokio::test]
    async fn anything_else_is_refused() {
        for bad in [
            &b"GET / HTTP/1.1\r\nhost: x\r\n\r\n"[..],
            b"PROXY TCP4 not-an-address 10.0.0.2 1 2\r\n",
            b"PROXY TCP4 198.51.100.4 10.0.0.2 40000 443 and much more text after the ports \
              that goes on past the longest header a v1 proxy may send\r\n",
            b"PROXY TCP4 198.51.100.4",
            &V2_SIGNATURE[..],
        ] {
            let (origin, _) = read(bad).await;
            assert!(origin.is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
        // A v2 header cut short.
        let whole = v2("203.0.113.7:51000", Command::Proxy);
        let (origin, _) = read(&whole[..whole.len() - 2]).await;
        assert!(matches!(origin, Err(ProxyHeaderError::Io(_))));
    }
}
