//! Allocation through Agones on the real path: the gateway's allocator
//! client over mutual TLS against a local HTTPS server standing in for the
//! Agones allocator service (a test CA made with rcgen; the server requires
//! a client certificate that CA signed) and answering with the documents of
//! Agones' published allocation API; the host's side of the contract (the
//! annotations the gateway writes are what `serve --agones` reads); and a
//! gateway configured with `[agones]` handing two queued players the
//! allocated GameServer's address. No real allocator runs here (no cluster):
//! what the stand-in checks is the request's shape, not Agones' choice.

mod common;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hightick_gateway::agones::{AgonesAllocator, AgonesConfig, worker_for};
use hightick_gateway::config::ModeConfig;
use hightick_gateway::hosts::{AllocateError, MatchRequest};
use hightick_host_api::agones::Allocation;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::{Value, json};

/// What the stand-in answers: the JSON mapping of `AllocationResponse`.
fn answer(address: &str) -> Value {
    json!({
        "gameServerName": "hightick-fleet-abcde-fghij",
        "ports": [{"name": "game-0", "port": 7100}, {"name": "game-1", "port": 7101}],
        "address": address,
        "addresses": [{"type": "InternalIP", "address": address}],
        "nodeName": "node-1",
        "source": "local",
        "metadata": {"labels": {"agones.dev/fleet": "hightick"}, "annotations": {}},
        "counters": {"matches": {"count": "1", "capacity": "8"}},
    })
}

/// A CA and, signed by it, a server certificate for 127.0.0.1 and a client
/// certificate; PEM files for the gateway in `dir`.
struct Pki {
    server_chain: Vec<CertificateDer<'static>>,
    server_key: String,
    ca: CertificateDer<'static>,
}

fn ca() -> CertifiedIssuer<'static, KeyPair> {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap()
}

fn pki(dir: &Path) -> Pki {
    let ca = ca();
    let server_key = KeyPair::generate().unwrap();
    let server = CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .unwrap()
        .signed_by(&server_key, &ca)
        .unwrap();
    let client_key = KeyPair::generate().unwrap();
    let client = CertificateParams::new(vec!["hightick-gateway".to_owned()])
        .unwrap()
        .signed_by(&client_key, &ca)
        .unwrap();
    std::fs::write(dir.join("ca.crt"), ca.pem()).unwrap();
    std::fs::write(dir.join("client.crt"), client.pem()).unwrap();
    std::fs::write(dir.join("client.key"), client_key.serialize_pem()).unwrap();
    Pki {
        server_chain: vec![server.der().clone()],
        server_key: server_key.serialize_pem(),
        ca: ca.der().clone(),
    }
}

/// The gateway's `[agones]` table for the stand-in at `address`.
fn agones_config(dir: &Path, address: SocketAddr) -> AgonesConfig {
    AgonesConfig {
        allocator: format!("https://{address}"),
        namespace: "games".to_owned(),
        fleet: "hightick".to_owned(),
        match_labels: BTreeMap::from([("region".to_owned(), "local".to_owned())]),
        game_ports: 2,
        client_cert_file: dir.join("client.crt"),
        client_key_file: dir.join("client.key"),
        ca_file: dir.join("ca.crt"),
        timeout_s: 5,
    }
}

/// Every request the stand-in took: its path and JSON body.
type Seen = Arc<Mutex<Vec<(String, Value)>>>;

/// The stand-in allocator: HTTPS on loopback, a client certificate signed
/// by `pki`'s CA required, `status` and `body` for every request.
async fn allocator(pki: &Pki, status: u16, body: Value) -> (SocketAddr, Seen) {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots.add(pki.ca.clone()).unwrap();
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    )
    .build()
    .unwrap();
    let tls = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(
            pki.server_chain.clone(),
            PrivateKeyDer::from_pem_slice(pki.server_key.as_bytes()).unwrap(),
        )
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let seen: Seen = Arc::default();
    let log = Arc::clone(&seen);
    let body = Bytes::from(body.to_string());
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let Ok(tls) = acceptor.accept(tcp).await else {
                continue; // no or a wrong client certificate
            };
            let (log, body) = (Arc::clone(&log), body.clone());
            let service = service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                let (log, body) = (Arc::clone(&log), body.clone());
                async move {
                    let path = request.uri().path().to_owned();
                    let bytes = match request.into_body().collect().await {
                        Ok(b) => b.to_bytes(),
                        Err(_) => Bytes::new(),
                    };
                    let json = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                    log.lock().unwrap().push((path, json));
                    hyper::Response::builder()
                        .status(status)
                        .header("content-type", "application/json")
                        .body(Full::new(body))
                }
            });
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), service),
            );
        }
    });
    (address, seen)
}

fn scratch(name: &str) -> std::path::PathBuf {
    common::temp_dir(name)
}

#[tokio::test]
async fn a_match_is_allocated_over_mutual_tls_and_the_host_can_read_it() {
    let dir = scratch("agones-mtls");
    let pki = pki(&dir);
    let (address, seen) = allocator(&pki, 200, answer("10.1.2.3")).await;
    let client = AgonesAllocator::new(&agones_config(&dir, address)).unwrap();
    let settings = json!({"rounds_to_win": 1});
    let request = MatchRequest {
        match_id: "m-0123456789abcdef",
        mode: "5v5",
        roster: &[21, 22, 23],
        settings: settings.as_object().unwrap(),
    };
    let allocated = client.allocate(request).await.unwrap();
    let worker = worker_for(request.match_id, 2);
    assert_eq!(allocated.id, "m-0123456789abcdef");
    assert_eq!(
        allocated.address,
        SocketAddr::new("10.1.2.3".parse().unwrap(), 7100 + worker as u16)
    );

    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    let (path, body) = &seen[0];
    assert_eq!(path, "/gameserverallocation");
    assert_eq!(body["namespace"], "games");
    let selectors = body["gameServerSelectors"].as_array().unwrap();
    assert_eq!(selectors[0]["gameServerState"], "ALLOCATED");
    assert_eq!(selectors[1]["gameServerState"], "READY");
    for s in selectors {
        assert_eq!(s["matchLabels"]["agones.dev/fleet"], "hightick");
        assert_eq!(s["matchLabels"]["region"], "local");
        assert_eq!(s["counters"]["matches"]["minAvailable"], 1);
    }
    assert_eq!(body["counters"]["matches"]["action"], "Increment");
    assert_eq!(body["counters"]["matches"]["amount"], 1);

    // The host reads the match the gateway wrote (one module, the contract's).
    let written: std::collections::HashMap<String, String> =
        serde_json::from_value(body["metadata"]["annotations"].clone()).unwrap();
    let read = Allocation::read(&written).unwrap().expect("an allocation");
    assert_eq!(read.match_id(), "m-0123456789abcdef");
    assert_eq!(read.request.mode, "5v5");
    assert_eq!(read.request.roster, vec![21, 22, 23]);
    assert_eq!(read.request.settings["rounds_to_win"], 1);
    assert_eq!(read.worker, Some(worker));
}

#[tokio::test]
async fn no_game_server_and_a_refused_certificate_are_errors_that_say_so() {
    let dir = scratch("agones-refusals");
    let pki = pki(&dir);
    let none = json!({"code": 8, "message": "there is no available GameServer to allocate", "details": []});
    let (address, _) = allocator(&pki, 429, none).await;
    let client = AgonesAllocator::new(&agones_config(&dir, address)).unwrap();
    let request = MatchRequest {
        match_id: "m-1",
        mode: "5v5",
        roster: &[1],
        settings: &serde_json::Map::new(),
    };
    let err = client.allocate(request).await.unwrap_err();
    assert_eq!(err, AllocateError::NoGameServer);

    // A client certificate from another CA: the handshake fails, nothing is taken.
    let (address, seen) = allocator(&pki, 200, answer("10.1.2.3")).await;
    let stranger = ca();
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["stranger".to_owned()])
        .unwrap()
        .signed_by(&key, &stranger)
        .unwrap();
    std::fs::write(dir.join("client.crt"), cert.pem()).unwrap();
    std::fs::write(dir.join("client.key"), key.serialize_pem()).unwrap();
    let client = AgonesAllocator::new(&agones_config(&dir, address)).unwrap();
    let err = client.allocate(request).await.unwrap_err();
    assert!(matches!(err, AllocateError::Allocator(_)), "{err}");
    assert!(seen.lock().unwrap().is_empty());

    // An unreadable certificate file is named at start-up.
    let mut bad = agones_config(&dir, address);
    bad.client_cert_file = dir.join("missing.crt");
    let err = AgonesAllocator::new(&bad).unwrap_err();
    assert!(
        err.to_string().contains("agones.client_cert_file")
            && err.to_string().contains("missing.crt"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_with_agones_hands_players_the_allocated_address() {
    let dir = scratch("agones-gateway");
    let pki = pki(&dir);
    let (address, seen) = allocator(&pki, 200, answer("10.9.8.7")).await;
    let mut config = common::test_config();
    config.modes = vec![ModeConfig {
        name: "5v5".to_owned(),
        players: 2,
        settings: serde_json::Map::new(),
    }];
    config.agones = Some(agones_config(&dir, address));
    let (_gateway, _, http) = common::sqlite_gateway("agones_gateway", &config).await;
    let mut players = Vec::new();
    for i in 0..2 {
        let (_, token) = http.guest(&format!("agones-player-{i}")).await;
        let a = http
            .post(
                "/v1/matchmaking/tickets",
                &json!({"mode": "5v5"}),
                Some(&token),
            )
            .await;
        assert!(a.status == 200 || a.status == 202, "{}", a.text);
        players.push((token, a.body["ticket"].as_str().unwrap().to_owned()));
    }
    for (token, ticket) in &players {
        let deadline = Instant::now() + Duration::from_secs(20);
        let matched = loop {
            let a = http
                .get(
                    &format!("/v1/matchmaking/tickets/{ticket}?wait_ms=2000"),
                    Some(token),
                )
                .await;
            if a.body["status"] == "matched" {
                break a.body;
            }
            assert!(Instant::now() < deadline, "not matched: {}", a.text);
        };
        let address: SocketAddr = matched["match"]["address"]
            .as_str()
            .unwrap_or_else(|| panic!("no address in {matched}"))
            .parse()
            .unwrap();
        assert_eq!(address.ip().to_string(), "10.9.8.7", "{matched}");
        assert!([7100, 7101].contains(&address.port()), "{matched}");
    }
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1, "one allocation for the match");
    assert_eq!(
        seen[0].1["metadata"]["annotations"]["hightick.dev/mode"],
        "5v5"
    );
}
