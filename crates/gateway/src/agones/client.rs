//! [`AgonesAllocator`]: one GameServerAllocation per match, over HTTPS with
//! the gateway's client certificate (rustls on ring).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use parking_lot::Mutex;
use rustls::RootCertStore;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::wire::{ALLOCATE_PATH, AllocationRequest, AllocationResponse, ErrorBody};
use super::{AgonesConfig, worker_for};
use crate::hosts::{AllocateError, Allocated, MatchRequest, exchange};
use hightick_config::ConfigFileError;

/// The allocator's status when no GameServer matches the selectors.
const NO_GAME_SERVER: hyper::StatusCode = hyper::StatusCode::TOO_MANY_REQUESTS;

/// Allocates matches through the Agones allocator service. Cheap to clone.
#[derive(Debug, Clone)]
pub struct AgonesAllocator {
    http: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    url: String,
    config: AgonesConfig,
    /// The last failure said on stderr (each new one is said once).
    said: Arc<Mutex<String>>,
}

fn unreadable(field: &'static str, path: &Path, reason: impl std::fmt::Display) -> ConfigFileError {
    ConfigFileError::invalid(field, &format!("{}: {reason}", path.display()))
}

impl AgonesAllocator {
    /// A client for `config`'s allocator, with its certificates read; an
    /// error names the field whose file is unreadable or unusable.
    pub fn new(config: &AgonesConfig) -> Result<Self, ConfigFileError> {
        config.validate()?;
        let mut roots = RootCertStore::empty();
        for cert in CertificateDer::pem_file_iter(&config.ca_file)
            .map_err(|e| unreadable("agones.ca_file", &config.ca_file, e))?
        {
            let cert = cert.map_err(|e| unreadable("agones.ca_file", &config.ca_file, e))?;
            roots
                .add(cert)
                .map_err(|e| unreadable("agones.ca_file", &config.ca_file, e))?;
        }
        let chain = CertificateDer::pem_file_iter(&config.client_cert_file)
            .and_then(Iterator::collect::<Result<Vec<_>, _>>)
            .map_err(|e| unreadable("agones.client_cert_file", &config.client_cert_file, e))?;
        if chain.is_empty() {
            return Err(unreadable(
                "agones.client_cert_file",
                &config.client_cert_file,
                "no certificate in it",
            ));
        }
        let key = PrivateKeyDer::from_pem_file(&config.client_key_file)
            .map_err(|e| unreadable("agones.client_key_file", &config.client_key_file, e))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| ConfigFileError::invalid("agones", &e.to_string()))?
            .with_root_certificates(roots)
            .with_client_auth_cert(chain, key)
            .map_err(|e| unreadable("agones.client_key_file", &config.client_key_file, e))?;
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_only()
            .enable_http1()
            .build();
        Ok(Self {
            http: Client::builder(TokioExecutor::new()).build(https),
            url: format!("{}{ALLOCATE_PATH}", config.allocator.trim_end_matches('/')),
            config: config.clone(),
            said: Arc::default(),
        })
    }

    /// Allocates a GameServer for `request`'s match: the address its
    /// players connect to (see the [`crate::agones`] module docs).
    pub async fn allocate(&self, request: MatchRequest<'_>) -> Result<Allocated, AllocateError> {
        let answer = self.call(request).await;
        if let Err(e) = &answer {
            self.say(e);
        }
        answer
    }

    async fn call(&self, request: MatchRequest<'_>) -> Result<Allocated, AllocateError> {
        let failed = AllocateError::Allocator;
        let worker = worker_for(request.match_id, self.config.game_ports);
        let body = serde_json::to_vec(&AllocationRequest::for_match(&self.config, request, worker))
            .map_err(|e| failed(e.to_string()))?;
        let call = hyper::Request::post(&self.url)
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| failed(format!("{}: {e}", self.url)))?;
        let timeout = Duration::from_secs(self.config.timeout_s);
        let (status, bytes) = exchange(&self.http, call, timeout)
            .await
            .map_err(|e| failed(format!("{}: {e}", self.url)))?;
        if status == NO_GAME_SERVER {
            return Err(AllocateError::NoGameServer);
        }
        if !status.is_success() {
            let message = serde_json::from_slice::<ErrorBody>(&bytes)
                .map(|b| b.message)
                .unwrap_or_else(|_| String::from_utf8_lossy(&bytes).into_owned());
            return Err(failed(format!("{} answered {status}: {message}", self.url)));
        }
        let answer: AllocationResponse = serde_json::from_slice(&bytes)
            .map_err(|e| failed(format!("{}: malformed answer: {e}", self.url)))?;
        let address = answer.game_address(worker).map_err(failed)?;
        Ok(Allocated {
            id: request.match_id.to_owned(),
            address,
        })
    }

    /// Says a failure on stderr, once until another one comes (the
    /// matchmaker retries every half second).
    fn say(&self, error: &AllocateError) {
        let text = error.to_string();
        let mut said = self.said.lock();
        if *said != text {
            eprintln!("hightick gateway: {text}");
            *said = text;
        }
    }
}
