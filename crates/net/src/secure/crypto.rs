//! The AEAD constructions of netcode.io 1.02, in place on caller buffers.
//!
//! - Connect tokens: XChaCha20-Poly1305 under the private key shared by gateway
//!   and servers, a random 24-byte nonce per token, associated data = version
//!   info + protocol id + expire timestamp.
//! - Challenge tokens: ChaCha20-Poly1305 (IETF) under a key each server draws at
//!   start, nonce = challenge sequence, no associated data.
//! - Packets: ChaCha20-Poly1305 (IETF) under the per-direction key of the
//!   connection, nonce = packet sequence, associated data = version info +
//!   protocol id + prefix byte.
//!
//! Nothing here allocates: every seal and open works on `&mut [u8]` with a
//! detached 16-byte tag.
//!
//! Packets and challenge tokens, sealed at 128 Hz per player, use `ring`'s
//! assembly ChaCha20-Poly1305 (0.55 us against 1.3-2.4 us for RustCrypto's
//! code on a 200-byte packet on our machines, see docs/PERFORMANCE.md); connect
//! tokens need XChaCha20, which `ring` lacks, and use the RustCrypto crate.

use std::fmt;

use chacha20poly1305::aead::AeadInPlace;
use chacha20poly1305::{KeyInit, Tag, XChaCha20Poly1305, XNonce};
use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, Nonce, UnboundKey};

/// Bytes in every symmetric key (private key, per-direction keys, challenge key).
pub const KEY_BYTES: usize = 32;
/// Bytes of the Poly1305 tag that authenticates every sealed piece.
pub const MAC_BYTES: usize = 16;
/// The netcode.io version string, with its null terminator.
pub const VERSION_INFO: [u8; 13] = *b"NETCODE 1.02\0";
/// Bytes of the random nonce that seals a connect token's private part.
pub const TOKEN_NONCE_BYTES: usize = 24;

/// A 32-byte symmetric key. Its `Debug` output never shows the bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct Key([u8; KEY_BYTES]);

impl Key {
    /// Wraps raw key bytes (for example the private key read from a secret store).
    pub const fn from_bytes(bytes: [u8; KEY_BYTES]) -> Self {
        Self(bytes)
    }

    /// Draws a fresh key from a cryptographic random number generator.
    pub fn generate<R: rand::CryptoRng + ?Sized>(rng: &mut R) -> Self {
        let mut bytes = [0u8; KEY_BYTES];
        rng.fill_bytes(&mut bytes);
        Self(bytes)
    }

    /// The raw key bytes.
    pub const fn as_bytes(&self) -> &[u8; KEY_BYTES] {
        &self.0
    }

    /// Reads a key written as 64 hex digits, surrounding whitespace ignored: the
    /// form of key files and `$HIGHTICK_KEY`, shared by servers and gateways.
    pub fn from_hex(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.len() != KEY_BYTES * 2 {
            return Err(format!(
                "expected {} hex digits, found {} characters",
                KEY_BYTES * 2,
                text.len()
            ));
        }
        let mut bytes = [0u8; KEY_BYTES];
        hex::decode_to_slice(text, &mut bytes).map_err(|e| match e {
            hex::FromHexError::InvalidHexCharacter { index, .. } => {
                format!("not a hex digit pair at position {}", index - index % 2)
            }
            other => other.to_string(),
        })?;
        Ok(Self(bytes))
    }

    /// The key as 64 lower-case hex digits (what [`Key::from_hex`] reads).
    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Key(<redacted>)")
    }
}

/// A sealed piece failed to authenticate: wrong key, wrong nonce, wrong
/// associated data, or tampered bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthFailed;

/// The only failure of the in-place seal is a plaintext over 256 GiB, which no
/// datagram or token can be; should it ever happen, the all-zero tag simply
/// fails authentication at the receiver.
fn tag_bytes(tag: Result<Tag, chacha20poly1305::Error>) -> [u8; MAC_BYTES] {
    tag.map(Into::into).unwrap_or([0; MAC_BYTES])
}

/// The 96-bit IETF nonce netcode.io builds from a 64-bit sequence: four zero
/// bytes, then the sequence in little-endian order.
fn sequence_nonce(sequence: u64) -> Nonce {
    let mut nonce = [0u8; 12];
    nonce[4..].copy_from_slice(&sequence.to_le_bytes());
    Nonce::assume_unique_for_key(nonce)
}

/// ChaCha20-Poly1305 (IETF) under one key, sealing and opening in place.
/// Keeps the key bytes so that it can be cloned (ring's key is not `Clone`);
/// they come last, as only cloning reads them.
#[repr(C)]
struct IetfAead {
    aead: LessSafeKey,
    key: Key,
}

impl IetfAead {
    fn new(key: &Key) -> Self {
        // A wrong key length is the only input `UnboundKey::new` refuses, and
        // `Key` always holds exactly 32 bytes.
        let unbound = UnboundKey::new(&CHACHA20_POLY1305, key.as_bytes())
            .unwrap_or_else(|_| unreachable!("ChaCha20-Poly1305 keys are 32 bytes"));
        Self {
            aead: LessSafeKey::new(unbound),
            key: key.clone(),
        }
    }

    fn seal(&self, sequence: u64, ad: &[u8], data: &mut [u8]) -> [u8; MAC_BYTES] {
        let mut out = [0u8; MAC_BYTES];
        // Sealing fails only for inputs over 256 GiB; the all-zero tag then
        // fails authentication at the receiver.
        if let Ok(tag) =
            self.aead
                .seal_in_place_separate_tag(sequence_nonce(sequence), Aad::from(ad), data)
        {
            out.copy_from_slice(tag.as_ref());
        }
        out
    }

    fn open(
        &self,
        sequence: u64,
        ad: &[u8],
        data: &mut [u8],
        tag: &[u8; MAC_BYTES],
    ) -> Result<(), AuthFailed> {
        let tag = ring::aead::Tag::from(*tag);
        self.aead
            .open_in_place_separate_tag(sequence_nonce(sequence), Aad::from(ad), tag, data, 0..)
            .map(|_| ())
            .map_err(|_| AuthFailed)
    }
}

impl Clone for IetfAead {
    fn clone(&self) -> Self {
        Self::new(&self.key)
    }
}

/// Seals and opens the packets of one direction of one connection.
///
/// Aligned to a cache line, with the protocol id first: sealing reads it
/// and the start of the key, and a cipher never straddles more lines than
/// its size needs, wherever it sits in a connection.
#[derive(Clone)]
#[repr(C, align(64))]
pub struct PacketCipher {
    protocol_id: u64,
    aead: IetfAead,
}

impl fmt::Debug for PacketCipher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PacketCipher")
            .field("protocol_id", &self.protocol_id)
            .finish_non_exhaustive()
    }
}

impl PacketCipher {
    /// A cipher for packets of `protocol_id` under `key`.
    pub fn new(key: &Key, protocol_id: u64) -> Self {
        Self {
            aead: IetfAead::new(key),
            protocol_id,
        }
    }

    /// Hints the cache to fetch what sealing and opening read: the first
    /// line (the protocol id, then ring's key tag and ChaCha20 key) and the
    /// line holding the end of ring's key (its algorithm pointer), not the
    /// lines between, which only an AES key would fill.
    pub(crate) fn prefetch(&self) {
        crate::prefetch::prefetch(&self.protocol_id);
        let key: *const u8 = (&self.aead.aead as *const LessSafeKey).cast();
        crate::prefetch::prefetch_range(
            key.wrapping_add(std::mem::size_of::<LessSafeKey>() - 1),
            1,
        );
    }

    fn associated_data(&self, prefix: u8) -> [u8; 22] {
        let mut ad = [0u8; 22];
        ad[..13].copy_from_slice(&VERSION_INFO);
        ad[13..21].copy_from_slice(&self.protocol_id.to_le_bytes());
        ad[21] = prefix;
        ad
    }

    /// Encrypts `body` in place and returns its tag.
    pub fn seal(&self, sequence: u64, prefix: u8, body: &mut [u8]) -> [u8; MAC_BYTES] {
        let ad = self.associated_data(prefix);
        self.aead.seal(sequence, &ad, body)
    }

    /// Authenticates `body` against `tag` and decrypts it in place. On failure
    /// the bytes are unspecified: callers drop the datagram.
    pub fn open(
        &self,
        sequence: u64,
        prefix: u8,
        body: &mut [u8],
        tag: &[u8; MAC_BYTES],
    ) -> Result<(), AuthFailed> {
        let ad = self.associated_data(prefix);
        self.aead.open(sequence, &ad, body, tag)
    }
}

/// Associated data of a connect token's private part.
fn token_associated_data(protocol_id: u64, expire_unix: u64) -> [u8; 29] {
    let mut ad = [0u8; 29];
    ad[..13].copy_from_slice(&VERSION_INFO);
    ad[13..21].copy_from_slice(&protocol_id.to_le_bytes());
    ad[21..29].copy_from_slice(&expire_unix.to_le_bytes());
    ad
}

/// Seals a connect token's private part in place (XChaCha20-Poly1305).
pub(crate) fn seal_token(
    key: &Key,
    nonce: &[u8; TOKEN_NONCE_BYTES],
    protocol_id: u64,
    expire_unix: u64,
    data: &mut [u8],
) -> [u8; MAC_BYTES] {
    let aead = XChaCha20Poly1305::new(key.as_bytes().into());
    let ad = token_associated_data(protocol_id, expire_unix);
    tag_bytes(aead.encrypt_in_place_detached(XNonce::from_slice(nonce), &ad, data))
}

/// Opens a connect token's private part in place (XChaCha20-Poly1305).
pub(crate) fn open_token(
    key: &Key,
    nonce: &[u8; TOKEN_NONCE_BYTES],
    protocol_id: u64,
    expire_unix: u64,
    data: &mut [u8],
    tag: &[u8; MAC_BYTES],
) -> Result<(), AuthFailed> {
    let aead = XChaCha20Poly1305::new(key.as_bytes().into());
    let ad = token_associated_data(protocol_id, expire_unix);
    aead.decrypt_in_place_detached(XNonce::from_slice(nonce), &ad, data, tag.into())
        .map_err(|_| AuthFailed)
}

/// Seals and opens challenge tokens under the key a server draws at start.
#[derive(Clone)]
pub(crate) struct ChallengeCipher(IetfAead);

impl fmt::Debug for ChallengeCipher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ChallengeCipher(<redacted>)")
    }
}

impl ChallengeCipher {
    pub(crate) fn new(key: &Key) -> Self {
        Self(IetfAead::new(key))
    }

    pub(crate) fn seal(&self, sequence: u64, data: &mut [u8]) -> [u8; MAC_BYTES] {
        self.0.seal(sequence, &[], data)
    }

    pub(crate) fn open(
        &self,
        sequence: u64,
        data: &mut [u8],
        tag: &[u8; MAC_BYTES],
    ) -> Result<(), AuthFailed> {
        self.0.open(sequence, &[], data, tag)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(byte: u8) -> Key {
        Key::from_bytes([byte; KEY_BYTES])
    }

    #[test]
    fn keys_round_trip_through_hex_and_reject_junk() {
        let key = key(0xab);
        let text = key.to_hex();
        assert_eq!(Key::from_hex(&format!(" {text}\n")).unwrap(), key);
        assert!(Key::from_hex("abc").is_err());
        assert!(Key::from_hex(&"zz".repeat(KEY_BYTES)).is_err());
        assert!(Key::from_hex(&"é".repeat(KEY_BYTES)).is_err());
        assert!(Key::from_hex(&format!("ab{}", "é".repeat(31))).is_err());
    }

    #[test]
    fn packet_round_trip_in_place() {
        let cipher = PacketCipher::new(&key(7), 0x1234);
        let mut body = *b"hello, game packet";
        let tag = cipher.seal(42, 0x15, &mut body);
        assert_ne!(&body, b"hello, game packet");
        cipher.open(42, 0x15, &mut body, &tag).unwrap();
        assert_eq!(&body, b"hello, game packet");
    }

    #[test]
    fn packet_open_refuses_any_change_of_context() {
        let cipher = PacketCipher::new(&key(7), 0x1234);
        let mut body = *b"payload";
        let tag = cipher.seal(42, 0x15, &mut body);
        let sealed = body;
        let mut b = sealed;
        assert_eq!(cipher.open(43, 0x15, &mut b, &tag), Err(AuthFailed));
        assert_eq!(cipher.open(42, 0x16, &mut b, &tag), Err(AuthFailed));
        let other_protocol = PacketCipher::new(&key(7), 0x1235);
        assert_eq!(other_protocol.open(42, 0x15, &mut b, &tag), Err(AuthFailed));
        let other_key = PacketCipher::new(&key(8), 0x1234);
        assert_eq!(other_key.open(42, 0x15, &mut b, &tag), Err(AuthFailed));
        b[0] ^= 1;
        assert_eq!(cipher.open(42, 0x15, &mut b, &tag), Err(AuthFailed));
        let mut intact = sealed;
        cipher.open(42, 0x15, &mut intact, &tag).unwrap();
        assert_eq!(&intact, b"payload");
    }

    #[test]
    fn token_and_challenge_round_trip() {
        let nonce = [3u8; TOKEN_NONCE_BYTES];
        let mut data = [9u8; 100];
        let tag = seal_token(&key(1), &nonce, 5, 1000, &mut data);
        assert!(open_token(&key(1), &nonce, 5, 1001, &mut data.clone(), &tag).is_err());
        open_token(&key(1), &nonce, 5, 1000, &mut data, &tag).unwrap();
        assert_eq!(data, [9u8; 100]);

        let challenge = ChallengeCipher::new(&key(2));
        let mut data = [4u8; 50];
        let tag = challenge.seal(11, &mut data);
        assert!(challenge.open(12, &mut data.clone(), &tag).is_err());
        challenge.open(11, &mut data, &tag).unwrap();
        assert_eq!(data, [4u8; 50]);
    }

    #[test]
    fn key_debug_hides_bytes() {
        assert_eq!(format!("{:?}", key(0xAB)), "Key(<redacted>)");
    }
}
