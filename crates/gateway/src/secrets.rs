//! The gateway's three secrets, each from a file or an environment variable:
//! the connect-token key shared with server hosts, the key that signs session
//! tokens, and the bearer secret servers present when they post results or
//! register.

use std::path::Path;

use hightick_net::Key;
use hightick_net::crypto::KEY_BYTES;

use crate::error::GatewayError;

/// The connect-token key's variable (the same one `hightick serve` reads).
pub const TOKEN_KEY_ENV: &str = "HIGHTICK_KEY";
/// The session signing key's variable.
pub const SESSION_KEY_ENV: &str = "HIGHTICK_SESSION_KEY";
/// The server secret's variable.
pub const SERVER_SECRET_ENV: &str = "HIGHTICK_SERVER_SECRET";
/// Shortest server secret accepted, in bytes.
pub const MIN_SERVER_SECRET: usize = 16;

/// The secrets a gateway runs with.
#[derive(Clone)]
pub struct Secrets {
    /// Seals connect tokens; servers hold the same key.
    pub token_key: Key,
    /// Signs session tokens (HMAC-SHA256).
    pub session_key: [u8; KEY_BYTES],
    /// What servers send as `Authorization: Bearer ...`.
    pub server_secret: String,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secrets(..)")
    }
}

impl Secrets {
    /// Fresh random secrets (tests, single-process demos).
    pub fn generate() -> Self {
        let mut session_key = [0u8; KEY_BYTES];
        rand::fill(&mut session_key);
        let mut secret = [0u8; 24];
        rand::fill(&mut secret);
        Self {
            token_key: Key::generate(&mut rand::rng()),
            session_key,
            server_secret: hex::encode(secret),
        }
    }

    /// Loads each secret from its file if one is set, else from its variable.
    /// The token key and server secret are required; a missing session key is
    /// drawn at random (sessions then end when the process does).
    pub fn load(
        token_key_file: Option<&Path>,
        session_key_file: Option<&Path>,
        server_secret_file: Option<&Path>,
    ) -> Result<Self, GatewayError> {
        let token = read("token key", token_key_file, TOKEN_KEY_ENV)?.ok_or_else(|| {
            GatewayError::Secret {
                what: "token key",
                reason: format!("set token_key_file or ${TOKEN_KEY_ENV} to 64 hex digits"),
            }
        })?;
        let token_key =
            Key::from_bytes(
                parse_hex_key(&token).map_err(|reason| GatewayError::Secret {
                    what: "token key",
                    reason,
                })?,
            );
        let session_key = match read("session key", session_key_file, SESSION_KEY_ENV)? {
            Some(text) => parse_hex_key(&text).map_err(|reason| GatewayError::Secret {
                what: "session key",
                reason,
            })?,
            None => {
                let mut key = [0u8; KEY_BYTES];
                rand::fill(&mut key);
                key
            }
        };
        let server_secret = read("server secret", server_secret_file, SERVER_SECRET_ENV)?
            .map(|s| s.trim().to_owned())
            .ok_or_else(|| GatewayError::Secret {
                what: "server secret",
                reason: format!("set server_secret_file or ${SERVER_SECRET_ENV}"),
            })?;
        if server_secret.len() < MIN_SERVER_SECRET {
            return Err(GatewayError::Secret {
                what: "server secret",
                reason: format!("must be at least {MIN_SERVER_SECRET} bytes"),
            });
        }
        Ok(Self {
            token_key,
            session_key,
            server_secret,
        })
    }
}

fn read(
    what: &'static str,
    file: Option<&Path>,
    env: &str,
) -> Result<Option<String>, GatewayError> {
    match file {
        Some(path) => std::fs::read_to_string(path)
            .map(Some)
            .map_err(|e| GatewayError::Secret {
                what,
                reason: format!("cannot read {}: {e}", path.display()),
            }),
        None => Ok(std::env::var(env).ok().filter(|v| !v.trim().is_empty())),
    }
}

/// 64 hex digits (surrounding whitespace ignored) to 32 bytes, as [`Key::from_hex`]
/// reads the token key.
pub fn parse_hex_key(text: &str) -> Result<[u8; KEY_BYTES], String> {
    Key::from_hex(text).map(|key| *key.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_keys_round_trip_and_junk_is_refused() {
        let bytes = [0xa5u8; KEY_BYTES];
        assert_eq!(
            parse_hex_key(&format!(" {}\n", hex::encode(bytes))).unwrap(),
            bytes
        );
        assert!(parse_hex_key("abc").is_err());
        assert!(parse_hex_key(&"zz".repeat(KEY_BYTES)).is_err());
        assert!(parse_hex_key(&"é".repeat(KEY_BYTES)).is_err());
    }

    #[test]
    fn missing_required_secrets_are_named() {
        let dir = std::env::temp_dir().join(format!("hightick-gw-secrets-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let key = dir.join("key.hex");
        std::fs::write(&key, hex::encode([1u8; KEY_BYTES])).unwrap();
        let short = dir.join("short.secret");
        std::fs::write(&short, "tiny").unwrap();
        let err = Secrets::load(Some(&key), None, Some(&short)).unwrap_err();
        assert!(err.to_string().contains("server secret"), "{err}");
        let err = Secrets::load(Some(&dir.join("missing")), None, Some(&short)).unwrap_err();
        assert!(err.to_string().contains("token key"), "{err}");
        let good = dir.join("good.secret");
        std::fs::write(&good, "a-long-enough-server-secret\n").unwrap();
        let s = Secrets::load(Some(&key), None, Some(&good)).unwrap();
        assert_eq!(s.server_secret, "a-long-enough-server-secret");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
