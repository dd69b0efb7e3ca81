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

/// A TLS server for `localhost` (a self-signed certificate, also written
/// to `ca_file`) whose sockets hold tiny buffers and which starts reading
/// late, so the client's writes meet a full socket: it reads one request
/// with a `content-length` body and answers 200 with its length.
async fn tiny_buffered_tls_peer(ca_file: &std::path::Path) -> std::net::SocketAddr {
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    std::fs::write(ca_file, cert.pem()).unwrap();
    let der = rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der()).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![cert.der().clone()], der)
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let listener = socket.listen(1).unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.unwrap();
        let mut tls = acceptor.accept(tcp).await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        let body_len = loop {
            let n = tls.read(&mut buf).await.unwrap();
            assert!(n > 0, "the client hung up");
            seen.extend_from_slice(&buf[..n]);
            let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") else {
                continue;
            };
            let head = String::from_utf8_lossy(&seen[..end]).to_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length: "))
                .unwrap()
                .parse()
                .unwrap();
            if seen.len() - end - 4 >= length {
                break length;
            }
        };
        let answer = format!(
            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n",
            body_len.to_string().len()
        );
        tls.write_all(answer.as_bytes()).await.unwrap();
        tls.write_all(body_len.to_string().as_bytes())
            .await
            .unwrap();
        tls.flush().await.unwrap();
        // Hold the connection until the client is done.
        let _ = tls.read(&mut buf).await;
    });
    addr
}

#[tokio::test]
async fn a_request_larger_than_the_socket_buffers_arrives_whole_over_tls() {
    let dir = std::env::temp_dir().join(format!("hightick-http1-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca_file = dir.join("ca.crt");
    let addr = tiny_buffered_tls_peer(&ca_file).await;
    let secure = crate::tls::TlsClient::new(Some(&ca_file))
        .unwrap()
        .to("localhost")
        .unwrap();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_send_buffer_size(4096).unwrap();
    let tcp = socket.connect(addr).await.unwrap();
    let mut c = Connection::new(secure.handshake(tcp).await.unwrap());
    let body = vec![b'x'; 1 << 20];
    let request = Request::post("/big")
        .header("host", "localhost")
        .body(Full::new(Bytes::from(body)))
        .unwrap();
    let answer = tokio::time::timeout(std::time::Duration::from_secs(20), c.round_trip(request))
        .await
        .expect("the whole request reached the server (flushed), and it answered");
    assert_eq!(answer.unwrap(), (200, &b"1048576"[..]));
    let _ = std::fs::remove_dir_all(&dir);
}
