//! Session tokens: `<account id>.<token id>.<expiry ms>.<signature>`, signed
//! with HMAC-SHA256 under the gateway's session key. The signature and the
//! expiry are checked without the database; revocation is checked against the
//! store's session record (by token id) on every API call.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// Longest token text accepted before any parsing.
pub const MAX_TOKEN_LEN: usize = 256;
const SIGNATURE_HEX: usize = 64;
const TOKEN_ID_BYTES: usize = 16;

/// What a valid token says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionClaims {
    /// The account.
    pub account_id: i64,
    /// The session's id in the store (for revocation).
    pub token_id: String,
    /// Expiry, unix milliseconds.
    pub expires_at_ms: i64,
}

/// Why a token was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TokenRefused {
    /// Not of the token's shape.
    #[error("malformed session token")]
    Malformed,
    /// The signature does not match (forged or altered).
    #[error("bad session token signature")]
    BadSignature,
    /// Past its expiry.
    #[error("session token expired")]
    Expired,
}

/// Signs and checks session tokens.
#[derive(Clone)]
pub struct SessionSigner {
    mac: Hmac<Sha256>,
}

impl std::fmt::Debug for SessionSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionSigner(..)")
    }
}

impl SessionSigner {
    /// A signer with `key`.
    pub fn new(key: &[u8; 32]) -> Self {
        Self {
            mac: Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length"),
        }
    }

    fn signature(&self, body: &str) -> Hmac<Sha256> {
        let mut mac = self.mac.clone();
        mac.update(body.as_bytes());
        mac
    }

    /// A fresh token id (random, 32 hex digits).
    pub fn new_token_id() -> String {
        let mut id = [0u8; TOKEN_ID_BYTES];
        rand::fill(&mut id);
        hex::encode(id)
    }

    /// The token text for `claims`.
    pub fn sign(&self, claims: &SessionClaims) -> String {
        let body = format!(
            "{}.{}.{}",
            claims.account_id, claims.token_id, claims.expires_at_ms
        );
        let tag = self.signature(&body).finalize().into_bytes();
        format!("{body}.{}", hex::encode(tag))
    }

    /// Checks shape, signature and expiry (at `now_ms`); revocation is the
    /// caller's (it needs the store).
    pub fn verify(&self, token: &str, now_ms: i64) -> Result<SessionClaims, TokenRefused> {
        if token.len() > MAX_TOKEN_LEN || !token.is_ascii() {
            return Err(TokenRefused::Malformed);
        }
        let (body, signature) = token.rsplit_once('.').ok_or(TokenRefused::Malformed)?;
        if signature.len() != SIGNATURE_HEX {
            return Err(TokenRefused::Malformed);
        }
        let mut tag = [0u8; SIGNATURE_HEX / 2];
        hex::decode_to_slice(signature, &mut tag).map_err(|_| TokenRefused::Malformed)?;
        self.signature(body)
            .verify_slice(&tag)
            .map_err(|_| TokenRefused::BadSignature)?;
        let mut parts = body.split('.');
        let (Some(account), Some(token_id), Some(expiry), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(TokenRefused::Malformed);
        };
        let account_id = account.parse().map_err(|_| TokenRefused::Malformed)?;
        let expires_at_ms: i64 = expiry.parse().map_err(|_| TokenRefused::Malformed)?;
        if now_ms >= expires_at_ms {
            return Err(TokenRefused::Expired);
        }
        Ok(SessionClaims {
            account_id,
            token_id: token_id.to_owned(),
            expires_at_ms,
        })
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn claims() -> SessionClaims {
        SessionClaims {
            account_id: 42,
            token_id: SessionSigner::new_token_id(),
            expires_at_ms: 2_000,
        }
    }

    #[test]
    fn a_signed_token_verifies_until_it_expires() {
        let signer = SessionSigner::new(&[7; 32]);
        let c = claims();
        let token = signer.sign(&c);
        assert_eq!(signer.verify(&token, 1_999), Ok(c));
        assert_eq!(signer.verify(&token, 2_000), Err(TokenRefused::Expired));
    }

    #[test]
    fn another_key_or_an_edit_breaks_the_signature() {
        let signer = SessionSigner::new(&[7; 32]);
        let token = signer.sign(&claims());
        let other = SessionSigner::new(&[8; 32]);
        assert_eq!(other.verify(&token, 0), Err(TokenRefused::BadSignature));
        let forged = token.replacen("42.", "43.", 1);
        assert_eq!(signer.verify(&forged, 0), Err(TokenRefused::BadSignature));
        let later = {
            let (body, sig) = token.rsplit_once('.').unwrap();
            format!("{}9.{sig}", body)
        };
        assert_eq!(signer.verify(&later, 0), Err(TokenRefused::BadSignature));
    }

    #[test]
    fn junk_is_malformed() {
        let signer = SessionSigner::new(&[7; 32]);
        for junk in ["", ".", "a.b.c.d", "x".repeat(400).as_str(), "1.2.3.zz"] {
            assert_eq!(
                signer.verify(junk, 0),
                Err(TokenRefused::Malformed),
                "{junk}"
            );
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn arbitrary_text_never_panics_and_never_verifies(text in ".{0,300}") {
            let signer = SessionSigner::new(&[9; 32]);
            prop_assert!(signer.verify(&text, 0).is_err());
        }

        #[test]
        fn any_claims_round_trip(account in any::<i64>(), expiry in 1i64..i64::MAX) {
            let signer = SessionSigner::new(&[3; 32]);
            let c = SessionClaims { account_id: account, token_id: "abc".into(), expires_at_ms: expiry };
            prop_assert_eq!(signer.verify(&signer.sign(&c), expiry - 1), Ok(c));
        }
    }
}
