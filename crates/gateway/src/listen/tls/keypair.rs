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

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(dir: &Path, name: &str) -> TlsConfig {
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let config = TlsConfig {
            cert_file: dir.join(format!("{name}.crt")),
            key_file: dir.join(format!("{name}.key")),
        };
        std::fs::write(&config.cert_file, cert.pem()).unwrap();
        std::fs::write(&config.key_file, key.serialize_pem()).unwrap();
        config
    }

    #[test]
    fn a_pair_reads_and_each_fault_names_its_field_and_file() {
        let dir = std::env::temp_dir().join(format!("hightick-keypair-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ring = rustls::crypto::ring::default_provider();
        let a = pair(&dir, "a");
        let b = pair(&dir, "b");
        assert!(read(&a, &ring).is_ok());

        let missing = TlsConfig {
            cert_file: dir.join("missing.crt"),
            ..a.clone()
        };
        let text = read(&missing, &ring).unwrap_err().to_string();
        assert!(
            text.contains("tls.cert_file") && text.contains("missing.crt"),
            "{text}"
        );

        let mismatched = TlsConfig {
            key_file: b.key_file.clone(),
            ..a.clone()
        };
        let text = read(&mismatched, &ring).unwrap_err().to_string();
        assert!(
            text.contains("tls.key_file") && text.contains("b.key"),
            "{text}"
        );

        std::fs::write(&b.cert_file, "not PEM").unwrap();
        let text = read(&b, &ring).unwrap_err().to_string();
        assert!(text.contains("no certificate"), "{text}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
