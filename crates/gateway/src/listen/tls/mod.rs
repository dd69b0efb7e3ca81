//! TLS on the gateway's own listener (`[tls]`), for where no ingress or
//! load balancer terminates it: rustls on ring (no C toolchain for
//! aws-lc), TLS 1.2 and 1.3, HTTP/1.1 with WebSocket upgrades over it.
//!
//! - [`TlsConfig`]: the files; [`keypair`] reads them.
//! - [`reload`]: the certificate served, read again when the files change,
//!   without touching open connections.
//! - [`Tls`]: what the listener holds: the acceptor, with stateless session
//!   tickets so that a returning client resumes instead of paying a full
//!   handshake, and the watcher, stopped when it is dropped.
//!
//! The handshake runs under the connection's header deadline
//! (`http.header_timeout_ms` from accept), so a client that stalls it is
//! closed like one that trickles its headers.

mod config;
mod keypair;
mod reload;

use std::sync::Arc;
use std::time::Duration;

use hightick_config::ConfigFileError;
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;

pub use config::TlsConfig;
use reload::Reloading;

use super::ConnectionCounts;

/// How often the certificate files are looked at.
const RELOAD_CHECK: Duration = Duration::from_secs(1);

/// The listener's TLS: see the [module docs](self).
#[derive(Debug)]
pub struct Tls {
    server: Arc<rustls::ServerConfig>,
    watcher: JoinHandle<()>,
}

impl Tls {
    /// Reads `config`'s files (an error names the field and the file) and
    /// starts watching them, counting reloads in `counts`. Needs a tokio
    /// runtime.
    pub fn start(
        config: &TlsConfig,
        counts: Arc<ConnectionCounts>,
    ) -> Result<Self, ConfigFileError> {
        if let Some((field, rule)) = config.invalid_field() {
            return Err(ConfigFileError::invalid(field, rule));
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let serving = Arc::new(Reloading::new(keypair::read(config, &provider)?));
        let mut server = rustls::ServerConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .map_err(|e| ConfigFileError::invalid("tls", &e.to_string()))?
            .with_no_client_auth()
            .with_cert_resolver(Arc::clone(&serving) as _);
        server.alpn_protocols = vec![b"http/1.1".to_vec()];
        server.ticketer = rustls::crypto::ring::Ticketer::new()
            .map_err(|e| ConfigFileError::invalid("tls", &e.to_string()))?;
        let watcher = tokio::spawn(reload::watch(
            config.clone(),
            provider,
            serving,
            counts,
            RELOAD_CHECK,
        ));
        Ok(Self {
            server: Arc::new(server),
            watcher,
        })
    }

    /// The acceptor new connections' handshakes run on.
    pub(crate) fn acceptor(&self) -> TlsAcceptor {
        TlsAcceptor::from(Arc::clone(&self.server))
    }
}

impl Drop for Tls {
    fn drop(&mut self) {
        self.watcher.abort();
    }
}
