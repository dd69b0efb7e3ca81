//! Login tickets: signed, self-describing strings that every gateway sharing
//! the session key can check without asking the replica that issued them.
//!
//! A ticket is 58 URL-safe base64 characters over 43 bytes:
//! `version(1) | id(12) | issued_at_ms(6) | position(4) | estimate_ms(4) |
//! tag(16)`, the tag a truncated HMAC-SHA256 of the rest under a key derived
//! from the session key. The id names the session the login will create:
//! [`TicketSigner::token_id`] turns it into the store's `token_id`, so any
//! replica finds the admitted session with one indexed read, and nothing is
//! written while a login waits. The position and estimate at issue let a
//! replica that does not hold the queue give an honest estimate later.
//!
//! What it is not: the queue itself ([`crate::admission`] holds that on the
//! issuing replica) nor a record of refusals (a refused login is only known
//! where it was worked on).
//!
//! ```
//! use hightick_gateway::ticket::{LoginTicket, TicketId, TicketSigner};
//! let signer = TicketSigner::new(&[7; 32]);
//! let ticket = LoginTicket { id: TicketId::random(), issued_at_ms: 1_000, position: 3, estimate_ms: 900 };
//! let text = signer.sign(&ticket);
//! assert_eq!(signer.verify(&text), Ok(ticket));
//! ```

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// Length of every ticket's text.
pub const TICKET_LEN: usize = 58;
const VERSION: u8 = 1;
const ID_BYTES: usize = 12;
const BODY_BYTES: usize = 1 + ID_BYTES + 6 + 4 + 4;
const TAG_BYTES: usize = 16;
const TICKET_BYTES: usize = BODY_BYTES + TAG_BYTES;
const TOKEN_ID_BYTES: usize = 16;
/// Largest issue time six bytes hold.
const MAX_ISSUED_MS: i64 = (1 << 48) - 1;

/// The random id a ticket (and its login's session) is named by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TicketId(pub [u8; ID_BYTES]);

impl TicketId {
    /// A fresh random id.
    pub fn random() -> Self {
        let mut id = [0u8; ID_BYTES];
        rand::fill(&mut id);
        Self(id)
    }
}

/// What a ticket says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoginTicket {
    /// Names the session the login creates.
    pub id: TicketId,
    /// Issue time, unix milliseconds (clamped to 0..2^48).
    pub issued_at_ms: i64,
    /// Position in the queue at issue (1 = next).
    pub position: u32,
    /// Expected wait at issue, milliseconds.
    pub estimate_ms: u32,
}

impl LoginTicket {
    /// Where the ticket should stand at `now_ms` if the queue drains at the
    /// rate estimated at issue: `(position, estimate_ms)`, position at least 1.
    pub fn estimate_at(&self, now_ms: i64) -> (u64, u64) {
        let waited = u64::try_from(now_ms.saturating_sub(self.issued_at_ms)).unwrap_or(0);
        let estimate = u64::from(self.estimate_ms);
        let left = estimate.saturating_sub(waited);
        let position = if estimate == 0 {
            1
        } else {
            (u64::from(self.position) * left).div_ceil(estimate).max(1)
        };
        (position, left)
    }

    /// The last moment (unix ms) a gateway that does not hold the ticket
    /// still answers it: four times the wait estimated at issue (estimates
    /// made early in a stampede run low) plus `ttl`.
    pub fn answered_until_ms(&self, ttl: Duration) -> i64 {
        let ttl_ms = i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX);
        self.issued_at_ms
            .saturating_add(4 * i64::from(self.estimate_ms))
            .saturating_add(ttl_ms)
    }
}

/// Why a ticket text was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TicketRefused {
    /// Not of a ticket's shape.
    #[error("malformed login ticket")]
    Malformed,
    /// The tag does not match (forged, altered, or another key).
    #[error("bad login ticket signature")]
    BadSignature,
}

/// Signs and checks login tickets; derives session token ids from them.
#[derive(Clone)]
pub struct TicketSigner {
    mac: Hmac<Sha256>,
}

impl std::fmt::Debug for TicketSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TicketSigner(..)")
    }
}

impl TicketSigner {
    /// A signer whose key is derived from the session key (so every replica
    /// that shares sessions shares tickets, and the two never share a key).
    pub fn new(session_key: &[u8; 32]) -> Self {
        let mut derive =
            Hmac::<Sha256>::new_from_slice(session_key).expect("HMAC takes any key length");
        derive.update(b"hightick login tickets v1");
        let key = derive.finalize().into_bytes();
        Self {
            mac: Hmac::<Sha256>::new_from_slice(&key).expect("HMAC takes any key length"),
        }
    }

    /// The MAC of `bytes` in `domain` (`t` tickets, `s` session ids).
    fn keyed(&self, domain: u8, bytes: &[u8]) -> Hmac<Sha256> {
        let mut mac = self.mac.clone();
        mac.update(&[domain]);
        mac.update(bytes);
        mac
    }

    /// The store `token_id` of the session a login with ticket id `id`
    /// creates (32 hex digits, like a random one).
    pub fn token_id(&self, id: &TicketId) -> String {
        hex::encode(&self.keyed(b's', &id.0).finalize().into_bytes()[..TOKEN_ID_BYTES])
    }

    /// The text of `ticket`.
    pub fn sign(&self, ticket: &LoginTicket) -> String {
        let mut bytes = [0u8; TICKET_BYTES];
        bytes[0] = VERSION;
        bytes[1..13].copy_from_slice(&ticket.id.0);
        let issued = ticket.issued_at_ms.clamp(0, MAX_ISSUED_MS).to_be_bytes();
        bytes[13..19].copy_from_slice(&issued[2..]);
        bytes[19..23].copy_from_slice(&ticket.position.to_be_bytes());
        bytes[23..27].copy_from_slice(&ticket.estimate_ms.to_be_bytes());
        let tag = self
            .keyed(b't', &bytes[..BODY_BYTES])
            .finalize()
            .into_bytes();
        bytes[BODY_BYTES..].copy_from_slice(&tag[..TAG_BYTES]);
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// Checks a ticket's shape and tag (the caller judges its age).
    pub fn verify(&self, text: &str) -> Result<LoginTicket, TicketRefused> {
        if text.len() != TICKET_LEN {
            return Err(TicketRefused::Malformed);
        }
        let mut bytes = [0u8; TICKET_BYTES];
        match URL_SAFE_NO_PAD.decode_slice(text, &mut bytes) {
            Ok(TICKET_BYTES) => {}
            _ => return Err(TicketRefused::Malformed),
        }
        if bytes[0] != VERSION {
            return Err(TicketRefused::Malformed);
        }
        self.keyed(b't', &bytes[..BODY_BYTES])
            .verify_truncated_left(&bytes[BODY_BYTES..])
            .map_err(|_| TicketRefused::BadSignature)?;
        let mut id = [0u8; ID_BYTES];
        id.copy_from_slice(&bytes[1..13]);
        let mut issued = [0u8; 8];
        issued[2..].copy_from_slice(&bytes[13..19]);
        let word = |at: usize| {
            u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
        };
        Ok(LoginTicket {
            id: TicketId(id),
            issued_at_ms: i64::from_be_bytes(issued),
            position: word(19),
            estimate_ms: word(23),
        })
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn ticket() -> LoginTicket {
        LoginTicket {
            id: TicketId::random(),
            issued_at_ms: 1_764_190_000_000,
            position: 40,
            estimate_ms: 2_000,
        }
    }

    #[test]
    fn a_ticket_round_trips_in_58_url_safe_characters() {
        let signer = TicketSigner::new(&[7; 32]);
        let t = ticket();
        let text = signer.sign(&t);
        assert_eq!(text.len(), TICKET_LEN);
        assert!(
            text.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        );
        assert_eq!(signer.verify(&text), Ok(t));
    }

    #[test]
    fn another_key_or_any_edited_character_is_refused() {
        let signer = TicketSigner::new(&[7; 32]);
        let text = signer.sign(&ticket());
        let other = TicketSigner::new(&[8; 32]);
        assert_eq!(other.verify(&text), Err(TicketRefused::BadSignature));
        for at in 0..text.len() {
            let mut edited = text.clone().into_bytes();
            edited[at] = if edited[at] == b'A' { b'B' } else { b'A' };
            let edited = String::from_utf8(edited).unwrap();
            assert!(signer.verify(&edited).is_err(), "edit at {at} verified");
        }
        assert_eq!(signer.verify(&text[1..]), Err(TicketRefused::Malformed));
    }

    #[test]
    fn token_ids_follow_the_id_and_the_key() {
        let (a, b) = (TicketSigner::new(&[7; 32]), TicketSigner::new(&[8; 32]));
        let id = TicketId([1; ID_BYTES]);
        assert_eq!(a.token_id(&id), a.token_id(&id));
        assert_eq!(a.token_id(&id).len(), 32);
        assert_ne!(a.token_id(&id), b.token_id(&id));
        assert_ne!(a.token_id(&id), a.token_id(&TicketId([2; ID_BYTES])));
    }

    #[test]
    fn the_estimate_drains_at_the_rate_given_at_issue() {
        let t = ticket();
        assert_eq!(t.estimate_at(t.issued_at_ms), (40, 2_000));
        assert_eq!(t.estimate_at(t.issued_at_ms + 1_000), (20, 1_000));
        assert_eq!(t.estimate_at(t.issued_at_ms + 9_000), (1, 0));
        assert_eq!(t.estimate_at(t.issued_at_ms - 5), (40, 2_000));
        let until = t.answered_until_ms(Duration::from_secs(120));
        assert_eq!(until, t.issued_at_ms + 8_000 + 120_000);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn arbitrary_text_never_panics_and_never_verifies(text in ".{0,80}") {
            let signer = TicketSigner::new(&[9; 32]);
            prop_assert!(signer.verify(&text).is_err());
        }

        #[test]
        fn ticket_shaped_text_never_verifies(text in "[A-Za-z0-9_-]{58}") {
            let signer = TicketSigner::new(&[9; 32]);
            prop_assert!(signer.verify(&text).is_err());
        }

        #[test]
        fn any_ticket_round_trips(
            id in any::<[u8; ID_BYTES]>(),
            issued in 0..=MAX_ISSUED_MS,
            position in any::<u32>(),
            estimate in any::<u32>(),
        ) {
            let signer = TicketSigner::new(&[3; 32]);
            let t = LoginTicket { id: TicketId(id), issued_at_ms: issued, position, estimate_ms: estimate };
            prop_assert_eq!(signer.verify(&signer.sign(&t)), Ok(t));
        }
    }
}
