//! [`AgonesConfig`]: the `[agones]` table of the gateway's config.

use std::collections::BTreeMap;
use std::path::PathBuf;

use hightick_config::ConfigFileError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where and how to reach the Agones allocator service. See the
/// [`crate::agones`] module docs and the gateway's reference config.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgonesConfig {
    /// The allocator service, `https://host:port`.
    #[schemars(example = "https://agones-allocator.agones-system.svc:443")]
    pub allocator: String,
    /// The namespace of the Fleet.
    #[serde(default = "default_namespace")]
    pub namespace: String,
    /// The Fleet (`agones.dev/fleet` label).
    #[schemars(example = &"hightick")]
    pub fleet: String,
    /// Labels a GameServer must also carry (a build:
    /// `agones.dev/sdk-hightick-version`, a region...).
    #[serde(default)]
    #[schemars(extend("examples" = [{"agones.dev/sdk-hightick-version": "0.1.0"}]))]
    pub match_labels: BTreeMap<String, String>,
    /// Game ports per GameServer, named `game-0`...: the host's workers.
    #[serde(default = "one")]
    pub game_ports: usize,
    /// The gateway's client certificate (PEM), which the allocator's
    /// client CA must have signed.
    #[schemars(example = "allocator/client.crt")]
    pub client_cert_file: PathBuf,
    /// Its private key (PEM).
    #[schemars(example = "allocator/client.key")]
    pub client_key_file: PathBuf,
    /// The CA (PEM) that signed the allocator's server certificate.
    #[schemars(example = "allocator/ca.crt")]
    pub ca_file: PathBuf,
    /// Longest one allocation may take, seconds.
    #[serde(default = "five")]
    pub timeout_s: u64,
}

fn default_namespace() -> String {
    "default".to_owned()
}

fn one() -> usize {
    1
}

fn five() -> u64 {
    5
}

impl AgonesConfig {
    /// Checks every field, naming the first one out of range.
    pub fn validate(&self) -> Result<(), ConfigFileError> {
        let bad = |field, reason: &str| Err(ConfigFileError::invalid(field, reason));
        let host = self.allocator.strip_prefix("https://").unwrap_or_default();
        if host.is_empty() || host.starts_with('/') {
            return bad(
                "agones.allocator",
                "must be an https:// URL with a host (the allocator requires TLS)",
            );
        }
        if self.namespace.is_empty() {
            return bad("agones.namespace", "must not be empty");
        }
        if self.fleet.is_empty() {
            return bad("agones.fleet", "must name the Fleet");
        }
        if !(1..=1024).contains(&self.game_ports) {
            return bad("agones.game_ports", "must be in 1..=1024");
        }
        if !(1..=60).contains(&self.timeout_s) {
            return bad("agones.timeout_s", "must be in 1..=60");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> AgonesConfig {
        AgonesConfig {
            allocator: "https://10.0.0.1:443".to_owned(),
            namespace: default_namespace(),
            fleet: "hightick".to_owned(),
            match_labels: BTreeMap::new(),
            game_ports: 1,
            client_cert_file: "c.crt".into(),
            client_key_file: "c.key".into(),
            ca_file: "ca.crt".into(),
            timeout_s: 5,
        }
    }

    /// Spoils one field of a good config.
    type Spoil = fn(&mut AgonesConfig);

    #[test]
    fn bad_fields_are_named() {
        config().validate().unwrap();
        let cases: [(Spoil, &str); 4] = [
            (
                |c| c.allocator = "http://10.0.0.1".into(),
                "agones.allocator",
            ),
            (|c| c.fleet.clear(), "agones.fleet"),
            (|c| c.game_ports = 0, "agones.game_ports"),
            (|c| c.timeout_s = 0, "agones.timeout_s"),
        ];
        for (spoil, field) in cases {
            let mut c = config();
            spoil(&mut c);
            let err = c.validate().unwrap_err();
            assert!(err.to_string().contains(field), "{field}: {err}");
        }
    }
}
