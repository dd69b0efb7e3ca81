//! [`TlsConfig`]: the `[tls]` table of the gateway's config.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The gateway's own TLS (`[tls]` in the config file): with it the API is
/// served as `https://` and `wss://` only. The files are read at start (a
/// bad one stops the gateway, naming it) and read again whenever either
/// changes: new connections get the new certificate, open ones (WebSockets
/// included) keep theirs; a bad new pair is logged and the old one kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TlsConfig {
    /// The certificate chain (PEM): the gateway's certificate first, then
    /// any intermediates.
    #[schemars(example = "tls/gateway.crt")]
    pub cert_file: PathBuf,
    /// Its private key (PEM: PKCS#8, PKCS#1 or SEC1).
    #[schemars(example = "tls/gateway.key")]
    pub key_file: PathBuf,
}

impl TlsConfig {
    /// The first field out of range: its name (under `tls.`) and the rule.
    pub fn invalid_field(&self) -> Option<(&'static str, &'static str)> {
        if self.cert_file.as_os_str().is_empty() {
            return Some(("tls.cert_file", "must name a PEM file"));
        }
        if self.key_file.as_os_str().is_empty() {
            return Some(("tls.key_file", "must name a PEM file"));
        }
        None
    }
}
