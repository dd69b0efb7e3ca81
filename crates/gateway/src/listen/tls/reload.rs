//! [`Reloading`]: the certificate the TLS listener serves, and [`watch`],
//! which reads its files again when they change. Each handshake takes the
//! certificate current at its start, so a reload reaches new connections
//! only; open ones keep what they were given.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use parking_lot::RwLock;
use rustls::crypto::CryptoProvider;
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

use super::super::ConnectionCounts;
use super::{TlsConfig, keypair};

/// The certificate served to every new handshake. See the [module docs](self).
#[derive(Debug)]
pub(crate) struct Reloading {
    current: RwLock<Arc<CertifiedKey>>,
}

impl Reloading {
    pub(crate) fn new(first: Arc<CertifiedKey>) -> Self {
        Self {
            current: RwLock::new(first),
        }
    }

    fn replace(&self, next: Arc<CertifiedKey>) {
        *self.current.write() = next;
    }
}

impl ResolvesServerCert for Reloading {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(Arc::clone(&self.current.read()))
    }
}

/// What says a file changed: its modification time, length and inode (a
/// file renamed into place is another inode); `None` while it is missing.
type Stamp = Option<(SystemTime, u64, u64)>;

fn stamp(path: &Path) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len(), meta.ino()))
}

fn stamps(config: &TlsConfig) -> [Stamp; 2] {
    [stamp(&config.cert_file), stamp(&config.key_file)]
}

/// Looks at `config`'s files every `every` and, when either changed since
/// the last look, reads both into `serving`. A pair that does not read or
/// does not match (a certificate written before its key, say) is logged
/// and the certificate in use kept; the next change is tried again. Each
/// outcome is counted in `counts`. Runs until dropped.
pub(crate) async fn watch(
    config: TlsConfig,
    provider: Arc<CryptoProvider>,
    serving: Arc<Reloading>,
    counts: Arc<ConnectionCounts>,
    every: Duration,
) {
    let mut seen = stamps(&config);
    let mut looks = tokio::time::interval(every);
    looks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        looks.tick().await;
        let now = stamps(&config);
        if now == seen {
            continue;
        }
        seen = now;
        match keypair::read(&config, &provider) {
            Ok(next) => {
                serving.replace(next);
                counts.tls_reload(true);
                eprintln!(
                    "hightick gateway: tls: new connections get the certificate now in {}",
                    config.cert_file.display()
                );
            }
            Err(e) => {
                counts.tls_reload(false);
                eprintln!("hightick gateway: tls: keeping the certificate in use: {e}");
            }
        }
    }
}
