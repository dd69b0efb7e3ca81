//! Connect tokens and challenge tokens, with netcode.io 1.02 layouts.
//!
//! The gateway [generates](ConnectToken::generate) a connect token after login
//! and hands its [encoding](ConnectToken::encode) (2048 bytes) to the client over
//! HTTPS. The public part tells the client where to connect and which keys to
//! use; the private part (1024 bytes) is sealed with XChaCha20-Poly1305 under a
//! private key only the gateway and the servers know, and the client forwards it
//! untouched in its connection request. A server [opens](ConnectToken::open) it.
//!
//! Times are unix seconds passed in by the caller: nothing here reads a clock.
//!
//! Private part before sealing (zero padded to 1024, the last 16 bytes hold the tag):
//! client id u64, timeout seconds i32, address count u32 in [1, 32], addresses
//! (type u8: 1 = IPv4 as 4 x u8, 2 = IPv6 as 8 x u16; then port u16),
//! client-to-server key, server-to-client key, 256 bytes of user data.
//! Associated data: version info, protocol id, expire timestamp.
//!
//! Public token (zero padded to 2048): version info, protocol id, create and
//! expire timestamps (u64), 24-byte nonce, sealed private part, timeout seconds,
//! address count and addresses, client-to-server key, server-to-client key.

use std::fmt;
use std::net::SocketAddr;

use crate::secure::crypto::{
    AuthFailed, ChallengeCipher, KEY_BYTES, Key, MAC_BYTES, TOKEN_NONCE_BYTES, VERSION_INFO,
    open_token, seal_token,
};
use crate::secure::cursor::{ByteReader, ByteWriter};
use crate::secure::error::NetError;

/// Bytes of an encoded connect token.
pub const CONNECT_TOKEN_BYTES: usize = 2048;
/// Bytes of the sealed private part of a connect token (tag included).
pub const PRIVATE_TOKEN_BYTES: usize = 1024;
/// Bytes of application data a token carries to the server (e.g. account, match, team).
pub const USER_DATA_BYTES: usize = 256;
/// Most server addresses a token can list.
pub const MAX_SERVER_ADDRESSES: usize = 32;
/// Bytes of a sealed challenge token (tag included).
pub const CHALLENGE_TOKEN_BYTES: usize = 300;
/// Bytes of a connection request: 1 + 13 + 8 + 8 + 24 + 1024.
pub const REQUEST_BYTES: usize =
    1 + VERSION_INFO.len() + 8 + 8 + TOKEN_NONCE_BYTES + PRIVATE_TOKEN_BYTES;
/// Prefix byte of a connection request (`PacketKind::Request` in `wire`).
pub(crate) const REQUEST_PREFIX: u8 = 0;

const UNSPECIFIED: SocketAddr = SocketAddr::V4(std::net::SocketAddrV4::new(
    std::net::Ipv4Addr::UNSPECIFIED,
    0,
));

/// The server addresses of a token: 1 to 32, in the order a client tries them.
/// Fixed capacity, so opening a token never allocates.
#[derive(Clone, Copy)]
pub struct ServerAddresses {
    addrs: [SocketAddr; MAX_SERVER_ADDRESSES],
    len: usize,
}

impl ServerAddresses {
    /// Copies 1 to 32 addresses. IPv6 flow info and scope ids are not carried.
    pub fn from_slice(addrs: &[SocketAddr]) -> Result<Self, NetError> {
        if addrs.is_empty() || addrs.len() > MAX_SERVER_ADDRESSES {
            return Err(NetError::InvalidParameter {
                field: "server_addresses",
                reason: "a token lists 1 to 32 server addresses",
            });
        }
        let mut list = Self::empty();
        for a in addrs {
            list.push(*a);
        }
        Ok(list)
    }

    const fn empty() -> Self {
        Self {
            addrs: [UNSPECIFIED; MAX_SERVER_ADDRESSES],
            len: 0,
        }
    }

    fn push(&mut self, addr: SocketAddr) {
        if let Some(slot) = self.addrs.get_mut(self.len) {
            *slot = SocketAddr::new(addr.ip(), addr.port());
            self.len += 1;
        }
    }

    /// The addresses, in order.
    pub fn as_slice(&self) -> &[SocketAddr] {
        &self.addrs[..self.len]
    }

    /// Whether `addr` (IP and port) is listed.
    pub fn contains(&self, addr: &SocketAddr) -> bool {
        self.as_slice()
            .iter()
            .any(|a| a.ip() == addr.ip() && a.port() == addr.port())
    }

    fn write(&self, w: &mut ByteWriter<'_>) -> Option<()> {
        w.u32(self.len as u32)?;
        for a in self.as_slice() {
            w.address(a)?;
        }
        Some(())
    }

    fn read(r: &mut ByteReader<'_>) -> Result<Self, &'static str> {
        let count = r.u32().ok_or("truncated")? as usize;
        if count == 0 || count > MAX_SERVER_ADDRESSES {
            return Err("server address count outside [1, 32]");
        }
        let mut list = Self::empty();
        for _ in 0..count {
            list.push(r.address()?.ok_or("truncated")?);
        }
        Ok(list)
    }
}

impl fmt::Debug for ServerAddresses {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl PartialEq for ServerAddresses {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for ServerAddresses {}

/// What the gateway puts in a connect token.
#[derive(Debug, Clone, Copy)]
pub struct TokenParams<'a> {
    /// 64-bit id unique to the game; servers refuse tokens for other ids.
    pub protocol_id: u64,
    /// The authenticated client's globally unique id.
    pub client_id: u64,
    /// Unix seconds when the token is made.
    pub create_unix: u64,
    /// Unix seconds when the token stops being accepted; must be after `create_unix`.
    pub expire_unix: u64,
    /// Seconds of silence after which either side drops the connection;
    /// negative disables timeouts (development only).
    pub timeout_seconds: i32,
    /// Servers the client may connect to, tried in order (1 to 32).
    pub server_addresses: &'a [SocketAddr],
    /// Up to 256 bytes handed to the server on connect (zero padded).
    pub user_data: &'a [u8],
}

/// The sealed private part of a connect token, opaque to the client.
#[derive(Clone, PartialEq, Eq)]
pub struct SealedPrivateToken(pub [u8; PRIVATE_TOKEN_BYTES]);

impl fmt::Debug for SealedPrivateToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SealedPrivateToken({PRIVATE_TOKEN_BYTES} bytes)")
    }
}

/// A connect token as the client holds it: the public part in the clear plus
/// the sealed private part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectToken {
    /// The game's protocol id.
    pub protocol_id: u64,
    /// Unix seconds the token was made.
    pub create_unix: u64,
    /// Unix seconds the token expires.
    pub expire_unix: u64,
    /// Random nonce the private part is sealed with.
    pub nonce: [u8; TOKEN_NONCE_BYTES],
    /// The sealed private part, forwarded to the server in connection requests.
    pub private: SealedPrivateToken,
    /// Seconds of silence before timing out; negative disables timeouts.
    pub timeout_seconds: i32,
    /// Servers to try, in order.
    pub server_addresses: ServerAddresses,
    /// Key of packets from client to server.
    pub client_to_server_key: Key,
    /// Key of packets from server to client.
    pub server_to_client_key: Key,
}

/// The private part of a connect token once a server opened it.
#[derive(Clone, PartialEq, Eq)]
pub struct PrivateToken {
    /// The client's id.
    pub client_id: u64,
    /// Seconds of silence before timing out; negative disables timeouts.
    pub timeout_seconds: i32,
    /// Servers the token is valid for.
    pub server_addresses: ServerAddresses,
    /// Key of packets from client to server.
    pub client_to_server_key: Key,
    /// Key of packets from server to client.
    pub server_to_client_key: Key,
    /// Application data from the gateway.
    pub user_data: [u8; USER_DATA_BYTES],
}

impl fmt::Debug for PrivateToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PrivateToken")
            .field("client_id", &self.client_id)
            .field("timeout_seconds", &self.timeout_seconds)
            .field("server_addresses", &self.server_addresses)
            .finish_non_exhaustive()
    }
}

/// A connection request's token, opened and checked by a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenedToken {
    /// Unix seconds the token expires.
    pub expire_unix: u64,
    /// The tag of the sealed private part: identifies the token for reuse checks.
    pub mac: [u8; MAC_BYTES],
    /// The opened private part.
    pub private: PrivateToken,
}

fn user_data_block(data: &[u8]) -> Result<[u8; USER_DATA_BYTES], NetError> {
    let mut block = [0u8; USER_DATA_BYTES];
    block
        .get_mut(..data.len())
        .ok_or(NetError::InvalidParameter {
            field: "user_data",
            reason: "at most 256 bytes",
        })?
        .copy_from_slice(data);
    Ok(block)
}

const LAYOUT: &str = "token layout overflow";

impl ConnectToken {
    /// Makes and seals a token. `rng` draws the nonce and both per-connection keys.
    pub fn generate<R: rand::CryptoRng + ?Sized>(
        params: &TokenParams<'_>,
        private_key: &Key,
        rng: &mut R,
    ) -> Result<Self, NetError> {
        if params.expire_unix <= params.create_unix {
            return Err(NetError::InvalidParameter {
                field: "expire_unix",
                reason: "must be later than create_unix",
            });
        }
        let server_addresses = ServerAddresses::from_slice(params.server_addresses)?;
        let user_data = user_data_block(params.user_data)?;
        let mut nonce = [0u8; TOKEN_NONCE_BYTES];
        rng.fill_bytes(&mut nonce);
        let private = PrivateToken {
            client_id: params.client_id,
            timeout_seconds: params.timeout_seconds,
            server_addresses,
            client_to_server_key: Key::generate(rng),
            server_to_client_key: Key::generate(rng),
            user_data,
        };
        let mut sealed = [0u8; PRIVATE_TOKEN_BYTES];
        private
            .write(&mut sealed)
            .ok_or(NetError::MalformedToken(LAYOUT))?;
        let (data, tag) = sealed.split_at_mut(PRIVATE_TOKEN_BYTES - MAC_BYTES);
        tag.copy_from_slice(&seal_token(
            private_key,
            &nonce,
            params.protocol_id,
            params.expire_unix,
            data,
        ));
        Ok(Self {
            protocol_id: params.protocol_id,
            create_unix: params.create_unix,
            expire_unix: params.expire_unix,
            nonce,
            private: SealedPrivateToken(sealed),
            timeout_seconds: params.timeout_seconds,
            server_addresses,
            client_to_server_key: private.client_to_server_key,
            server_to_client_key: private.server_to_client_key,
        })
    }

    /// The 2048-byte form the gateway sends to the client.
    pub fn encode(&self) -> [u8; CONNECT_TOKEN_BYTES] {
        let mut out = [0u8; CONNECT_TOKEN_BYTES];
        let mut w = ByteWriter::new(&mut out);
        // The layout is at most 1765 bytes, so these writes cannot run out of room.
        let _ = (|| {
            w.bytes(&VERSION_INFO)?;
            w.u64(self.protocol_id)?;
            w.u64(self.create_unix)?;
            w.u64(self.expire_unix)?;
            w.bytes(&self.nonce)?;
            w.bytes(&self.private.0)?;
            w.i32(self.timeout_seconds)?;
            self.server_addresses.write(&mut w)?;
            w.bytes(self.client_to_server_key.as_bytes())?;
            w.bytes(self.server_to_client_key.as_bytes())
        })();
        out
    }

    /// Reads an encoded token on the client. Checks the layout, the version
    /// string, the address count and that it expires after it was created;
    /// it cannot check the sealed part (only servers hold the private key).
    pub fn decode(bytes: &[u8]) -> Result<Self, NetError> {
        if bytes.len() != CONNECT_TOKEN_BYTES {
            return Err(NetError::MalformedToken("a connect token is 2048 bytes"));
        }
        let mut r = ByteReader::new(bytes);
        let truncated = NetError::MalformedToken("truncated");
        if r.array::<13>() != Some(&VERSION_INFO) {
            return Err(NetError::WrongVersion);
        }
        let protocol_id = r.u64().ok_or(truncated.clone())?;
        let create_unix = r.u64().ok_or(truncated.clone())?;
        let expire_unix = r.u64().ok_or(truncated.clone())?;
        if expire_unix <= create_unix {
            return Err(NetError::MalformedToken("expires before it was created"));
        }
        let nonce = *r.array::<TOKEN_NONCE_BYTES>().ok_or(truncated.clone())?;
        let private = *r.array::<PRIVATE_TOKEN_BYTES>().ok_or(truncated.clone())?;
        let timeout_seconds = r.i32().ok_or(truncated.clone())?;
        let server_addresses = ServerAddresses::read(&mut r).map_err(NetError::MalformedToken)?;
        let c2s = *r.array::<KEY_BYTES>().ok_or(truncated.clone())?;
        let s2c = *r.array::<KEY_BYTES>().ok_or(truncated)?;
        Ok(Self {
            protocol_id,
            create_unix,
            expire_unix,
            nonce,
            private: SealedPrivateToken(private),
            timeout_seconds,
            server_addresses,
            client_to_server_key: Key::from_bytes(c2s),
            server_to_client_key: Key::from_bytes(s2c),
        })
    }

    /// Opens the token inside a 1078-byte connection request, on a server.
    ///
    /// Checks, in netcode.io order: size and version, protocol id, expiry
    /// (expired when `expire <= now_unix`), authentication under `private_key`
    /// (version, protocol id and expire timestamp are covered by it, so none of
    /// them can be edited), layout, and that `server_address` is listed.
    pub fn open(
        request: &[u8],
        private_key: &Key,
        protocol_id: u64,
        server_address: SocketAddr,
        now_unix: u64,
    ) -> Result<OpenedToken, NetError> {
        let req = read_request(request)?;
        if req.protocol_id != protocol_id {
            return Err(NetError::WrongProtocol {
                expected: protocol_id,
                found: req.protocol_id,
            });
        }
        if req.expire_unix <= now_unix {
            return Err(NetError::TokenExpired {
                expire_unix: req.expire_unix,
                now_unix,
            });
        }
        let mut plain = *req.sealed;
        let (data, tag) = plain.split_at_mut(PRIVATE_TOKEN_BYTES - MAC_BYTES);
        let mac: [u8; MAC_BYTES] = (*tag).try_into().map_err(|_| NetError::TokenForged)?;
        open_token(
            private_key,
            req.nonce,
            protocol_id,
            req.expire_unix,
            data,
            &mac,
        )
        .map_err(|AuthFailed| NetError::TokenForged)?;
        let private = PrivateToken::read(data).map_err(NetError::MalformedToken)?;
        if !private.server_addresses.contains(&server_address) {
            return Err(NetError::ServerAddressNotListed(server_address));
        }
        Ok(OpenedToken {
            expire_unix: req.expire_unix,
            mac,
            private,
        })
    }
}

impl PrivateToken {
    fn write(&self, out: &mut [u8]) -> Option<()> {
        let mut w = ByteWriter::new(out);
        w.u64(self.client_id)?;
        w.i32(self.timeout_seconds)?;
        self.server_addresses.write(&mut w)?;
        w.bytes(self.client_to_server_key.as_bytes())?;
        w.bytes(self.server_to_client_key.as_bytes())?;
        w.bytes(&self.user_data)
    }

    fn read(data: &[u8]) -> Result<Self, &'static str> {
        let mut r = ByteReader::new(data);
        let client_id = r.u64().ok_or("truncated")?;
        let timeout_seconds = r.i32().ok_or("truncated")?;
        let server_addresses = ServerAddresses::read(&mut r)?;
        let c2s = *r.array::<KEY_BYTES>().ok_or("truncated")?;
        let s2c = *r.array::<KEY_BYTES>().ok_or("truncated")?;
        let user_data = *r.array::<USER_DATA_BYTES>().ok_or("truncated")?;
        Ok(Self {
            client_id,
            timeout_seconds,
            server_addresses,
            client_to_server_key: Key::from_bytes(c2s),
            server_to_client_key: Key::from_bytes(s2c),
            user_data,
        })
    }
}

/// Seals a challenge token (client id and user data) into `out`.
pub(crate) fn seal_challenge(
    cipher: &ChallengeCipher,
    sequence: u64,
    client_id: u64,
    user_data: &[u8; USER_DATA_BYTES],
    out: &mut [u8; CHALLENGE_TOKEN_BYTES],
) {
    *out = [0u8; CHALLENGE_TOKEN_BYTES];
    out[..8].copy_from_slice(&client_id.to_le_bytes());
    out[8..8 + USER_DATA_BYTES].copy_from_slice(user_data);
    let (data, tag) = out.split_at_mut(CHALLENGE_TOKEN_BYTES - MAC_BYTES);
    tag.copy_from_slice(&cipher.seal(sequence, data));
}

/// Opens a sealed challenge token: the client id and user data it carries.
pub(crate) fn open_challenge(
    cipher: &ChallengeCipher,
    sequence: u64,
    sealed: &[u8; CHALLENGE_TOKEN_BYTES],
) -> Result<(u64, [u8; USER_DATA_BYTES]), AuthFailed> {
    let mut plain = *sealed;
    let (data, tag) = plain.split_at_mut(CHALLENGE_TOKEN_BYTES - MAC_BYTES);
    let tag: [u8; MAC_BYTES] = (*tag).try_into().map_err(|_| AuthFailed)?;
    cipher.open(sequence, data, &tag)?;
    let mut r = ByteReader::new(data);
    let client_id = r.u64().ok_or(AuthFailed)?;
    let user_data = *r.array::<USER_DATA_BYTES>().ok_or(AuthFailed)?;
    Ok((client_id, user_data))
}

// ---- the connection request: the token's clear header and sealed private part,
// forwarded by the client (prefix byte 0, netcode.io 1.02). `wire` re-exports it.

/// The fields of a connection request, borrowed from the datagram.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionRequest<'a> {
    /// Protocol id claimed by the request (authenticated by the token's tag).
    pub protocol_id: u64,
    /// Token expiry claimed by the request (authenticated by the token's tag).
    pub expire_unix: u64,
    /// Nonce of the sealed private token.
    pub nonce: &'a [u8; TOKEN_NONCE_BYTES],
    /// The sealed private token.
    pub sealed: &'a [u8; PRIVATE_TOKEN_BYTES],
}

/// Reads a connection request: exactly [`REQUEST_BYTES`], prefix 0, version 1.02.
pub fn read_request(datagram: &[u8]) -> Result<ConnectionRequest<'_>, NetError> {
    if datagram.len() != REQUEST_BYTES {
        return Err(NetError::MalformedToken(
            "a connection request is 1078 bytes",
        ));
    }
    let mut r = ByteReader::new(datagram);
    let malformed = NetError::MalformedToken("not a connection request");
    if r.u8() != Some(REQUEST_PREFIX) {
        return Err(malformed);
    }
    if r.array::<13>() != Some(&VERSION_INFO) {
        return Err(NetError::WrongVersion);
    }
    Ok(ConnectionRequest {
        protocol_id: r.u64().ok_or(malformed.clone())?,
        expire_unix: r.u64().ok_or(malformed.clone())?,
        nonce: r.array().ok_or(malformed.clone())?,
        sealed: r.array().ok_or(malformed)?,
    })
}

/// Writes the connection request for `token` into `out`; `None` if `out` is
/// shorter than [`REQUEST_BYTES`].
pub fn write_request(token: &ConnectToken, out: &mut [u8]) -> Option<usize> {
    let mut w = ByteWriter::new(out);
    w.u8(REQUEST_PREFIX)?;
    w.bytes(&VERSION_INFO)?;
    w.u64(token.protocol_id)?;
    w.u64(token.expire_unix)?;
    w.bytes(&token.nonce)?;
    w.bytes(&token.private.0)?;
    Some(w.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    const PROTOCOL: u64 = 0x4849_4748_5449_434B;

    fn server() -> SocketAddr {
        "127.0.0.1:40000".parse().unwrap()
    }

    fn token(rng: &mut ChaCha20Rng, key: &Key) -> ConnectToken {
        let addrs = [server(), "[::1]:40001".parse().unwrap()];
        ConnectToken::generate(
            &TokenParams {
                protocol_id: PROTOCOL,
                client_id: 77,
                create_unix: 1_000,
                expire_unix: 1_030,
                timeout_seconds: 5,
                server_addresses: &addrs,
                user_data: b"team=blue",
            },
            key,
            rng,
        )
        .unwrap()
    }

    fn request(token: &ConnectToken) -> [u8; REQUEST_BYTES] {
        let mut out = [0u8; REQUEST_BYTES];
        assert_eq!(write_request(token, &mut out), Some(REQUEST_BYTES));
        out
    }

    #[test]
    fn encode_decode_round_trip() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let key = Key::generate(&mut rng);
        let t = token(&mut rng, &key);
        let bytes = t.encode();
        assert_eq!(ConnectToken::decode(&bytes).unwrap(), t);
        assert_eq!(t.server_addresses.as_slice().len(), 2);
        assert!(ConnectToken::decode(&bytes[..100]).is_err());
        let mut bad = bytes;
        bad[0] = b'X';
        assert_eq!(ConnectToken::decode(&bad), Err(NetError::WrongVersion));
    }

    #[test]
    fn open_gives_back_the_private_part() {
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        let key = Key::generate(&mut rng);
        let t = token(&mut rng, &key);
        let opened = ConnectToken::open(&request(&t), &key, PROTOCOL, server(), 1_010).unwrap();
        assert_eq!(opened.private.client_id, 77);
        assert_eq!(opened.private.timeout_seconds, 5);
        assert_eq!(&opened.private.user_data[..9], b"team=blue");
        assert!(opened.private.user_data[9..].iter().all(|&b| b == 0));
        assert_eq!(opened.private.client_to_server_key, t.client_to_server_key);
        assert_eq!(opened.private.server_to_client_key, t.server_to_client_key);
        assert_eq!(opened.expire_unix, 1_030);
        assert_eq!(
            &opened.mac[..],
            &t.private.0[PRIVATE_TOKEN_BYTES - MAC_BYTES..]
        );
    }

    #[test]
    fn open_refuses_with_clear_errors() {
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let key = Key::generate(&mut rng);
        let t = token(&mut rng, &key);
        let req = request(&t);
        assert!(matches!(
            ConnectToken::open(&req, &key, PROTOCOL, server(), 1_030),
            Err(NetError::TokenExpired {
                expire_unix: 1_030,
                now_unix: 1_030
            })
        ));
        assert!(matches!(
            ConnectToken::open(&req, &key, PROTOCOL + 1, server(), 1_000),
            Err(NetError::WrongProtocol { .. })
        ));
        let other_key = Key::generate(&mut rng);
        assert_eq!(
            ConnectToken::open(&req, &other_key, PROTOCOL, server(), 1_000),
            Err(NetError::TokenForged)
        );
        let elsewhere: SocketAddr = "10.0.0.1:40000".parse().unwrap();
        assert_eq!(
            ConnectToken::open(&req, &key, PROTOCOL, elsewhere, 1_000),
            Err(NetError::ServerAddressNotListed(elsewhere))
        );
        // Moving the expiry forward breaks authentication: it is associated data.
        let mut later = req;
        later[22..30].copy_from_slice(&2_000u64.to_le_bytes());
        assert_eq!(
            ConnectToken::open(&later, &key, PROTOCOL, server(), 1_000),
            Err(NetError::TokenForged)
        );
        let mut flipped = req;
        flipped[600] ^= 0x40;
        assert_eq!(
            ConnectToken::open(&flipped, &key, PROTOCOL, server(), 1_000),
            Err(NetError::TokenForged)
        );
        assert!(ConnectToken::open(&req[..1000], &key, PROTOCOL, server(), 1_000).is_err());
    }

    #[test]
    fn generate_checks_parameters() {
        let mut rng = ChaCha20Rng::seed_from_u64(4);
        let key = Key::generate(&mut rng);
        let addrs = [server()];
        let mut p = TokenParams {
            protocol_id: 1,
            client_id: 1,
            create_unix: 10,
            expire_unix: 10,
            timeout_seconds: 5,
            server_addresses: &addrs,
            user_data: &[],
        };
        assert!(ConnectToken::generate(&p, &key, &mut rng).is_err());
        p.expire_unix = 20;
        p.server_addresses = &[];
        assert!(ConnectToken::generate(&p, &key, &mut rng).is_err());
        p.server_addresses = &addrs;
        let big = [0u8; 257];
        p.user_data = &big;
        assert!(ConnectToken::generate(&p, &key, &mut rng).is_err());
        let many = [server(); 33];
        p.user_data = &[];
        p.server_addresses = &many;
        assert!(ConnectToken::generate(&p, &key, &mut rng).is_err());
        let max = [server(); 32];
        p.server_addresses = &max;
        let t = ConnectToken::generate(&p, &key, &mut rng).unwrap();
        assert_eq!(ConnectToken::decode(&t.encode()).unwrap(), t);
    }

    #[test]
    fn challenge_round_trip_and_tamper() {
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        let cipher = ChallengeCipher::new(&Key::generate(&mut rng));
        let mut sealed = [0u8; CHALLENGE_TOKEN_BYTES];
        seal_challenge(&cipher, 9, 1234, &[7u8; USER_DATA_BYTES], &mut sealed);
        let (id, data) = open_challenge(&cipher, 9, &sealed).unwrap();
        assert_eq!(id, 1234);
        assert_eq!(data, [7u8; USER_DATA_BYTES]);
        assert!(open_challenge(&cipher, 10, &sealed).is_err());
        sealed[3] ^= 1;
        assert!(open_challenge(&cipher, 9, &sealed).is_err());
    }
}
