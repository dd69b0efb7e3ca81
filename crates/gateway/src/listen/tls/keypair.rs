//! [`read`]: the certificate chain and key files of `[tls]`, read into the
//! one value rustls serves from, with errors that name the field and file.

use std::path::Path;
use std::sync::Arc;

use hightick_config::ConfigFileError;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::sign::CertifiedKey;

use super::TlsConfig;

fn unusable(field: &'static str, path: &Path, reason: impl std::fmt::Display) -> ConfigFileError {
    ConfigFileError::invalid(field, &format!("{}: {reason}", path.display()))
}

/// The chain in `config.cert_file` with the key in `config.key_file`,
/// checked to belong together.
pub(crate) fn read(
    config: &TlsConfig,
    provider: &CryptoProvider,
) -> Result<Arc<CertifiedKey>, ConfigFileError> {
    let cert = &config.cert_file;
    let chain = CertificateDer::pem_file_iter(cert)
        .and_then(Iterator::collect::<Result<Vec<_>, _>>)
        .map_err(|e| unusable("tls.cert_file", cert, e))?;
    if chain.is_empty() {
        return Err(unusable("tls.cert_file", cert, "no certificate in it"));
    }
    let key_file = &config.key_file;
    let key = PrivateKeyDer::from_pem_file(key_file)
        .map_err(|e| unusable("tls.key_file", key_file, e))?;
    CertifiedKey::from_der(chain, key, provider)
        .map(Arc::new)
        .map_err(|e| {
            unusable(
                "tls.key_file",
                key_file,
                format!("{e} (with {})", cert.display()),
            )
        })
}
