use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::*;
use tokio::net::TcpStream;

/// A peer that answers each request (a head ending in a blank line) with
/// the next of `answers`, each written in the given pieces, and returns
/// what it was sent.
async fn peer(
    answers: Vec<Vec<&'static [u8]>>,
) -> (std::net::SocketAddr, tokio::task::JoinHandle<Vec<u8>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut seen = Vec::new();
        for pieces in answers {
            let mut buf = [0u8; 1024];
            while !seen.ends_with(b"\r\n\r\n") {
                let n = stream.read(&mut buf).await.unwrap();
                assert!(n > 0, "the client hung up");
                seen.extend_from_slice(&buf[..n]);
            }
            seen.extend_from_slice(b"|");
            for piece in pieces {
                stream.write_all(piece).await.unwrap();
                stream.flush().await.unwrap();
                tokio::task::yield_now().await;
            }
        }
        seen
    });
    (addr, task)
}

fn get(path: &str) -> Request<Full<Bytes>> {
    Request::get(path)
        .header("host", "swarm.test")
        .body(Full::new(Bytes::new()))
        .unwrap()
}

#[tokio::test]
async fn responses_in_pieces_reuse_the_connection_until_close() {
    let (addr, seen) = peer(vec![
        vec![
            b"HTTP/1.1 200 OK\r\nContent-Le",
            b"ngth: 5\r\n\r\nhel",
            b"lo",
        ],
        vec![
            b"HTTP/1.1 404 Not Found\r\ntransfer-encoding: chunked\r\n\r\n3;x=y\r\nab",
            b"c\r\n0\r\nT: 1\r\n\r\n",
        ],
        vec![b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 3\r\n\r\nbye"],
    ])
    .await;
    let mut c = Connection::new(TcpStream::connect(addr).await.unwrap());
    assert_eq!(c.round_trip(get("/a")).await.unwrap(), (200, &b"hello"[..]));
    assert!(!c.is_closed());
    assert_eq!(c.round_trip(get("/b")).await.unwrap(), (404, &b"abc"[..]));
    assert!(!c.is_closed());
    assert_eq!(c.round_trip(get("/c")).await.unwrap(), (200, &b"bye"[..]));
    assert!(c.is_closed());
    let seen = String::from_utf8(seen.await.unwrap()).unwrap();
    assert_eq!(
        seen,
        "GET /a HTTP/1.1\r\nhost: swarm.test\r\n\r\n|GET /b HTTP/1.1\r\nhost: swarm.test\r\n\r\n|\
         GET /c HTTP/1.1\r\nhost: swarm.test\r\n\r\n|"
    );
}

#[tokio::test]
async fn a_peer_closing_mid_body_is_an_error_and_an_idle_close_is_seen() {
    let (addr, _seen) = peer(vec![vec![
        b"HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\nhal",
    ]])
    .await;
    let mut c = Connection::new(TcpStream::connect(addr).await.unwrap());
    let err = c.round_trip(get("/")).await.unwrap_err();
    assert!(
        matches!(err, RoundTripError::Response(ResponseError::Truncated)),
        "{err}"
    );
    assert!(c.is_closed());

    let (addr, seen) = peer(vec![vec![b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"]]).await;
    let mut c = Connection::new(TcpStream::connect(addr).await.unwrap());
    assert_eq!(c.round_trip(get("/")).await.unwrap(), (200, &b""[..]));
    seen.await.unwrap(); // The peer has closed its end.
    let mut closed = false;
    for _ in 0..1000 {
        if c.is_closed() {
            closed = true;
            break;
        }
        tokio::task::yield_now().await;
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }
    assert!(
        closed,
        "an idle connection the peer closed is never reported closed"
    );
}
