//! The gateway's own TLS (`[tls]`) on loopback, with a CA the test makes
//! (rcgen) and real clients:
//! - curl with `--cacert` gets 200 over https; with another CA it is
//!   refused, and the gateway counts the failed handshake;
//! - a player logs in over https and opens its push socket over wss;
//!   after the certificate files are replaced (signed by a second CA) a
//!   new connection sees the new certificate, while the WebSocket opened
//!   before keeps receiving; a bad new file keeps the certificate in use;
//! - a handshake that stalls is closed at the header deadline, and the
//!   per-IP cap holds for TLS connections.
//!
//! Every wait is bounded; no assertion is on time.

mod common;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use hightick_gateway::GatewayConfig;
use hightick_gateway::listen::{HttpConfig, TlsConfig};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DistinguishedName, DnType, IsCa, KeyPair,
};
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

const PATIENCE: Duration = Duration::from_secs(20);

/// A CA of the test's own: its PEM file, and what it signs with.
struct Ca {
    file: PathBuf,
    issuer: CertifiedIssuer<'static, KeyPair>,
}

impl Ca {
    fn new(dir: &Path, name: &str) -> Self {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        // Distinct names: OpenSSL (curl) takes a certificate whose issuer
        // is its own subject for self-signed.
        params.distinguished_name = named(&format!("hightick test CA {name}"));
        let issuer = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
        let file = dir.join(format!("{name}.crt"));
        std::fs::write(&file, issuer.pem()).unwrap();
        Self { file, issuer }
    }

    /// A server certificate for 127.0.0.1, written as `config`'s files
    /// (key first, then the certificate, as a deploy tool might); its DER.
    fn issue(&self, config: &TlsConfig) -> CertificateDer<'static> {
        let key = KeyPair::generate().unwrap();
        let mut params =
            CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()]).unwrap();
        params.distinguished_name = named("hightick gateway");
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        std::fs::write(&config.key_file, key.serialize_pem()).unwrap();
        std::fs::write(&config.cert_file, cert.pem()).unwrap();
        cert.der().clone()
    }

    /// A client config trusting this CA only.
    fn client(&self) -> Arc<rustls::ClientConfig> {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(self.issuer.der().clone()).unwrap();
        Arc::new(
            rustls::ClientConfig::builder_with_provider(Arc::new(
                rustls::crypto::ring::default_provider(),
            ))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth(),
        )
    }
}

fn named(common_name: &str) -> DistinguishedName {
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, common_name);
    name
}

fn tls_files(dir: &Path) -> TlsConfig {
    TlsConfig {
        cert_file: dir.join("gateway.crt"),
        key_file: dir.join("gateway.key"),
    }
}

fn tls_config(tls: TlsConfig) -> GatewayConfig {
    GatewayConfig {
        tls: Some(tls),
        ..common::test_config()
    }
}

/// A TLS connection to `gateway` trusting `client`'s roots.
async fn connect(
    gateway: SocketAddr,
    client: Arc<rustls::ClientConfig>,
) -> std::io::Result<tokio_rustls::client::TlsStream<TcpStream>> {
    let tcp = TcpStream::connect(gateway).await?;
    let name = ServerName::IpAddress(gateway.ip().into());
    tokio::time::timeout(
        PATIENCE,
        tokio_rustls::TlsConnector::from(client).connect(name, tcp),
    )
    .await?
}

/// `curl --cacert ca https://127.0.0.1:port/healthz`: the status it saw
/// (`000` when it refused the connection) and its exit code.
async fn curl(gateway: SocketAddr, ca: &Path) -> (String, i32) {
    let url = format!("https://{gateway}/healthz");
    let ca = ca.to_owned();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new("curl")
            .args([
                "-s",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
                "--max-time",
                "20",
            ])
            .arg("--cacert")
            .arg(&ca)
            .arg(&url)
            .output()
            .expect("curl is installed (.ci/run installs it)")
    })
    .await
    .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

/// An https client trusting `client`'s roots.
type Https = Client<
    hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>,
    Full<Bytes>,
>;

fn https(client: Arc<rustls::ClientConfig>) -> Https {
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config((*client).clone())
        .https_only()
        .enable_http1()
        .build();
    Client::builder(TokioExecutor::new()).build(connector)
}

async fn call(http: &Https, method: &str, url: &str, body: Option<Value>) -> (u16, Value) {
    let request = hyper::Request::builder()
        .method(method)
        .uri(url)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(
            body.map(|b| b.to_string()).unwrap_or_default(),
        )))
        .unwrap();
    let answer = tokio::time::timeout(PATIENCE, http.request(request))
        .await
        .unwrap()
        .unwrap();
    let status = answer.status().as_u16();
    let bytes = answer.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// Logs a guest in over https: its session token.
async fn guest(http: &Https, gateway: SocketAddr) -> String {
    let base = format!("https://{gateway}");
    let mut a = call(
        http,
        "POST",
        &format!("{base}/v1/auth/guest"),
        Some(json!({ "device_id": "tls-player" })),
    )
    .await;
    while a.0 == 202 {
        let ticket = a.1["ticket"].as_str().unwrap().to_owned();
        let url = format!("{base}/v1/auth/tickets/{ticket}?wait_ms=2000");
        a = call(http, "GET", &url, None).await;
    }
    assert_eq!(a.0, 200, "{}", a.1);
    a.1["session_token"].as_str().unwrap().to_owned()
}

/// A counter's value in the gateway's `/metrics`, read over https. A
/// refused connection is tried again: under a per-IP cap of 1, the seat of
/// a connection the gateway just closed is freed a moment after the close.
async fn counter(http: &Https, gateway: SocketAddr, name: &str) -> u64 {
    let answer = tokio::time::timeout(PATIENCE, async {
        loop {
            let request = hyper::Request::get(format!("https://{gateway}/metrics"))
                .body(Full::new(Bytes::new()))
                .unwrap();
            match http.request(request).await {
                Ok(answer) => return answer,
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    })
    .await
    .expect("/metrics answers");
    let text = answer.into_body().collect().await.unwrap().to_bytes();
    String::from_utf8_lossy(&text)
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("{name} not on /metrics"))
}

/// Waits (bounded) until `name` on `/metrics` reaches `at_least`.
async fn counted(http: &Https, gateway: SocketAddr, name: &str, at_least: u64) {
    tokio::time::timeout(PATIENCE, async {
        while counter(http, gateway, name).await < at_least {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{name} never reached {at_least}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curl_with_the_ca_gets_200_and_with_another_ca_is_refused() {
    let dir = common::temp_dir("tls_curl");
    let ca = Ca::new(&dir, "ca");
    let stranger = Ca::new(&dir, "stranger");
    let files = tls_files(&dir);
    ca.issue(&files);
    let store = common::stores("tls_curl", 4).await.remove(0).1;
    let (gateway, _) = common::start(&tls_config(files), store).await;
    let address = gateway.address();

    assert_eq!(curl(address, &ca.file).await, ("200".to_owned(), 0));
    let (status, code) = curl(address, &stranger.file).await;
    assert_eq!(status, "000", "curl with another CA got an answer");
    assert_eq!(code, 60, "curl: 60 is a certificate it cannot verify");

    let http = https(ca.client());
    counted(
        &http,
        address,
        "hightick_gateway_tls_handshakes_failed_total",
        1,
    )
    .await;
    assert!(counter(&http, address, "hightick_gateway_tls_handshakes_full_total").await >= 1);
    gateway.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replaced_certificate_reaches_new_connections_and_an_open_websocket_stays_up() {
    let dir = common::temp_dir("tls_reload");
    let first = Ca::new(&dir, "first");
    let second = Ca::new(&dir, "second");
    let files = tls_files(&dir);
    first.issue(&files);
    let mut config = tls_config(files.clone());
    config.push.ping_s = 1;
    let store = common::stores("tls_reload", 4).await.remove(0).1;
    let (gateway, _) = common::start(&config, store).await;
    let address = gateway.address();

    // A player over https, its push socket over wss.
    let http = https(first.client());
    let token = guest(&http, address).await;
    let mut request = format!("wss://{address}/v1/events")
        .into_client_request()
        .unwrap();
    request
        .headers_mut()
        .insert("authorization", format!("Bearer {token}").parse().unwrap());
    let stream = connect(address, first.client()).await.unwrap();
    let (mut socket, _) = tokio_tungstenite::client_async(request, stream)
        .await
        .unwrap();
    // Read on (answering the gateway's pings) and report each ping; the
    // channel closes with the socket.
    let (pinged, mut pings) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(Ok(message)) = socket.next().await {
            if matches!(message, Message::Ping(_)) && pinged.send(()).is_err() {
                return;
            }
        }
    });
    assert!(
        connect(address, second.client()).await.is_err(),
        "the second CA is not trusted before the reload"
    );

    // A bad file in place: counted, and the certificate in use kept.
    std::fs::write(&files.cert_file, "not a certificate").unwrap();
    counted(
        &http,
        address,
        "hightick_gateway_tls_reload_failures_total",
        1,
    )
    .await;
    assert!(connect(address, first.client()).await.is_ok());

    // The new pair: new connections get it.
    let new = second.issue(&files);
    let seen = tokio::time::timeout(PATIENCE, async {
        loop {
            if let Ok(stream) = connect(address, second.client()).await {
                return stream.get_ref().1.peer_certificates().unwrap()[0].clone();
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("a new connection gets the new certificate");
    assert_eq!(seen, new);

    // The socket opened before the reload still receives (the gateway
    // pings it every second and closes it if it stops answering).
    while pings.try_recv().is_ok() {}
    for _ in 0..3 {
        tokio::time::timeout(PATIENCE, pings.recv())
            .await
            .expect("the WebSocket keeps receiving")
            .expect("the WebSocket stays open");
    }
    let http = https(second.client());
    assert!(counter(&http, address, "hightick_gateway_tls_reloads_total").await >= 1);
    gateway.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_handshake_is_closed_at_the_header_deadline_and_the_per_ip_cap_holds() {
    let dir = common::temp_dir("tls_stall");
    let ca = Ca::new(&dir, "ca");
    let files = tls_files(&dir);
    ca.issue(&files);
    let config = GatewayConfig {
        http: HttpConfig {
            header_timeout_ms: 300,
            max_connections_per_ip: 1,
            ..HttpConfig::default()
        },
        ..tls_config(files)
    };
    let store = common::stores("tls_stall", 4).await.remove(0).1;
    let (gateway, _) = common::start(&config, store).await;
    let address = gateway.address();

    // Half a ClientHello, then nothing: closed by the gateway.
    let mut stalled = TcpStream::connect(address).await.unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut stalled, &[0x16, 0x03, 0x01, 0x02, 0x00])
        .await
        .unwrap();
    // Meanwhile a second connection from the same address is refused.
    let mut second = TcpStream::connect(address).await.unwrap();
    let mut byte = [0u8; 1];
    let refused = tokio::time::timeout(PATIENCE, second.read(&mut byte))
        .await
        .expect("the second connection is closed");
    assert!(matches!(refused, Ok(0) | Err(_)), "{refused:?}");
    let closed = tokio::time::timeout(PATIENCE, stalled.read(&mut byte))
        .await
        .expect("the stalled handshake is closed");
    assert!(matches!(closed, Ok(0) | Err(_)), "{closed:?}");
    drop(stalled);

    // Its seat freed, the address gets in again.
    let http = https(ca.client());
    counted(
        &http,
        address,
        "hightick_gateway_connections_closed_header_timeout_total",
        1,
    )
    .await;
    assert!(
        counter(
            &http,
            address,
            "hightick_gateway_connections_refused_per_ip_total"
        )
        .await
            >= 1
    );
    gateway.shutdown().await.unwrap();
}
