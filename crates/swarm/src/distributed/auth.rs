//! Agents and coordinators prove to each other that they hold the same
//! shared secret before anything else crosses: a mutual challenge-response
//! in which the secret itself never does.
//!
//! ```text
//! coordinator -> agent   hello:     MAGIC (16 bytes) ‖ coordinator nonce Nc (32)
//! agent -> coordinator   challenge: agent nonce Na (32)
//! coordinator -> agent   proof:     HMAC-SHA256(secret, "coordinator" ‖ MAGIC ‖ Nc ‖ Na)
//! agent -> coordinator   verdict:   ACCEPT ‖ HMAC-SHA256(secret, "agent" ‖ MAGIC ‖ Nc ‖ Na)
//!                                   or REFUSE, and the agent hangs up
//! ```
//!
//! The coordinator proves first, so an agent computes nothing with its
//! secret for a peer that has not proven it holds it; the agent then proves
//! itself, so a coordinator never hands its scenario to an impostor. Each
//! proof is labelled with its role and covers both fresh nonces: neither can
//! be replayed, reflected or used for the other direction. Every message
//! has a fixed size, so an agent reads at most 80 bytes from a stranger
//! (and none of a scenario) before it refuses. Tags are compared in
//! constant time ([`Mac::verify_slice`]).
//!
//! Both sides then derive the session's frame keys from the secret and the
//! two fresh nonces (HKDF-SHA256, one key per direction; [`frame`](super::frame)),
//! so every frame that follows is authenticated: one altered, replayed,
//! reordered, dropped or reflected on the wire ends the session. Frames are
//! not encrypted. The agent's target allow-list
//! ([`AllowList`](super::AllowList)) bounds what a holder of the secret
//! could make of an agent.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use hkdf::Hkdf;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::frame::{KEY_BYTES, Opener, Sealer};
use crate::error::SwarmError;

/// The first bytes a coordinator sends: the protocol and its version
/// (3: frames carry a sequence number and a MAC).
pub const MAGIC: &[u8; 16] = b"hightick-swarm/3";
/// Bytes of each side's nonce.
pub const NONCE_BYTES: usize = 32;
/// Bytes of an HMAC-SHA256 tag.
pub const TAG_BYTES: usize = 32;
/// The shortest secret accepted, in bytes.
pub const MIN_SECRET_BYTES: usize = 32;
/// The variable holding the secret (`HIGHTICK_SWARM_SECRET_FILE` names a
/// file holding it instead).
pub const SECRET_ENV: &str = "HIGHTICK_SWARM_SECRET";

const ACCEPT: u8 = 1;
const REFUSE: u8 = 0;

/// Which side a proof is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Coordinator,
    Agent,
}

impl Role {
    fn label(self) -> &'static [u8] {
        match self {
            Self::Coordinator => b"coordinator",
            Self::Agent => b"agent",
        }
    }

    /// The HKDF `info` of the key for the frames this side sends.
    fn sending(self) -> &'static [u8] {
        match self {
            Self::Coordinator => b"hightick-swarm/3 frames coordinator->agent",
            Self::Agent => b"hightick-swarm/3 frames agent->coordinator",
        }
    }

    fn peer(self) -> Self {
        match self {
            Self::Coordinator => Self::Agent,
            Self::Agent => Self::Coordinator,
        }
    }
}

/// The keys of one session, as one side holds them: it seals what it
/// sends under its direction's key and opens what it receives under the
/// other's.
#[derive(Debug)]
pub(crate) struct SessionKeys {
    pub(crate) sealer: Sealer,
    pub(crate) opener: Opener,
}

/// The secret agents and their coordinator share, keyed for HMAC-SHA256.
/// `Debug` shows where it came from, never the secret.
#[derive(Clone)]
pub struct SharedSecret {
    mac: Hmac<Sha256>,
    /// The secret itself: the input keying material of each session's keys.
    ikm: Arc<[u8]>,
    origin: String,
}

impl fmt::Debug for SharedSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SharedSecret(from {})", self.origin)
    }
}

impl SharedSecret {
    /// `bytes` as the secret; `origin` (a file, `$VARIABLE`) names it in
    /// errors. Fewer than [`MIN_SECRET_BYTES`] is an error.
    pub fn new(bytes: &[u8], origin: &str) -> Result<Self, SwarmError> {
        if bytes.len() < MIN_SECRET_BYTES {
            return Err(SwarmError::Secret {
                origin: origin.to_owned(),
                reason: format!(
                    "{} bytes; at least {MIN_SECRET_BYTES} are needed (make one with `openssl rand -hex 32`)",
                    bytes.len()
                ),
            });
        }
        let mac = Hmac::<Sha256>::new_from_slice(bytes).map_err(|e| SwarmError::Secret {
            origin: origin.to_owned(),
            reason: e.to_string(),
        })?;
        Ok(Self {
            mac,
            ikm: bytes.into(),
            origin: origin.to_owned(),
        })
    }

    /// The secret from `file` if given, else the file `$HIGHTICK_SWARM_SECRET_FILE`
    /// names, else `$HIGHTICK_SWARM_SECRET`; none of them is an error.
    pub fn load(file: Option<&Path>) -> Result<Self, SwarmError> {
        let secret = hightick_config::read_secret(file, SECRET_ENV)
            .map_err(|e| SwarmError::Secret {
                origin: file.map_or_else(|| format!("${SECRET_ENV}_FILE"), |f| f.display().to_string()),
                reason: e.to_string(),
            })?
            .ok_or_else(|| SwarmError::Secret {
                origin: "(none given)".to_owned(),
                reason: format!(
                    "agents and coordinators need a shared secret: pass --secret-file, or set ${SECRET_ENV}_FILE or ${SECRET_ENV}"
                ),
            })?;
        Self::new(&secret.bytes, &secret.origin)
    }

    /// Where the secret came from.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    fn keyed(&self, role: Role, nonces: &Nonces) -> Hmac<Sha256> {
        let mut mac = self.mac.clone();
        mac.update(role.label());
        mac.update(MAGIC);
        mac.update(&nonces.coordinator);
        mac.update(&nonces.agent);
        mac
    }

    fn tag(&self, role: Role, nonces: &Nonces) -> [u8; TAG_BYTES] {
        self.keyed(role, nonces).finalize().into_bytes().into()
    }

    fn verify(&self, role: Role, nonces: &Nonces, tag: &[u8]) -> bool {
        self.keyed(role, nonces).verify_slice(tag).is_ok()
    }

    /// `side`'s keys for the session both nonces began: HKDF-SHA256 with
    /// the secret as input keying material, `MAGIC ‖ Nc ‖ Na` as salt and
    /// each direction's label as info.
    fn session_keys(&self, side: Role, nonces: &Nonces) -> SessionKeys {
        let mut salt = [0; MAGIC.len() + 2 * NONCE_BYTES];
        salt[..MAGIC.len()].copy_from_slice(MAGIC);
        salt[MAGIC.len()..MAGIC.len() + NONCE_BYTES].copy_from_slice(&nonces.coordinator);
        salt[MAGIC.len() + NONCE_BYTES..].copy_from_slice(&nonces.agent);
        let hkdf = Hkdf::<Sha256>::new(Some(&salt), &self.ikm);
        let key = |info: &[u8]| {
            let mut key = [0; KEY_BYTES];
            // 32 bytes is far below HKDF-SHA256's limit (255 blocks).
            hkdf.expand(info, &mut key)
                .expect("HKDF-SHA256 expands to 32 bytes");
            key
        };
        SessionKeys {
            sealer: Sealer::new(&key(side.sending())),
            opener: Opener::new(&key(side.peer().sending())),
        }
    }
}

/// Both sides' nonces of one exchange.
struct Nonces {
    coordinator: [u8; NONCE_BYTES],
    agent: [u8; NONCE_BYTES],
}

fn nonce() -> [u8; NONCE_BYTES] {
    let mut n = [0; NONCE_BYTES];
    rand::fill(&mut n);
    n
}

/// Why an agent turned a peer away.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefusalReason {
    /// The peer did not open with [`MAGIC`]: not a coordinator, or one of
    /// an older protocol without authentication.
    NotACoordinator,
    /// The peer's proof does not match: it holds another secret (or none).
    WrongSecret,
    /// The peer did not finish the exchange in time.
    Timeout,
    /// Too many peers were proving themselves at once.
    Busy,
    /// The connection failed during the exchange.
    Io(String),
}

impl fmt::Display for RefusalReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotACoordinator => f.write_str(
                "not a hightick swarm coordinator (no authentication hello; an older coordinator?)",
            ),
            Self::WrongSecret => f.write_str("wrong shared secret"),
            Self::Timeout => f.write_str("did not authenticate in time"),
            Self::Busy => f.write_str("too many connections authenticating at once"),
            Self::Io(e) => write!(f, "connection failed while authenticating: {e}"),
        }
    }
}

fn io_reason(e: std::io::Error) -> RefusalReason {
    RefusalReason::Io(e.to_string())
}

/// The agent's side: checks the peer's proof, then proves itself. On
/// `Ok` the stream carries an authenticated coordinator's frames, under
/// the keys returned.
pub(crate) async fn prove_coordinator<S>(
    stream: &mut S,
    secret: &SharedSecret,
) -> Result<SessionKeys, RefusalReason>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut magic = [0; MAGIC.len()];
    stream.read_exact(&mut magic).await.map_err(io_reason)?;
    if &magic != MAGIC {
        return Err(RefusalReason::NotACoordinator);
    }
    let mut coordinator = [0; NONCE_BYTES];
    stream
        .read_exact(&mut coordinator)
        .await
        .map_err(io_reason)?;
    let nonces = Nonces {
        coordinator,
        agent: nonce(),
    };
    stream.write_all(&nonces.agent).await.map_err(io_reason)?;
    let mut tag = [0; TAG_BYTES];
    stream.read_exact(&mut tag).await.map_err(io_reason)?;
    if !secret.verify(Role::Coordinator, &nonces, &tag) {
        let _ = stream.write_all(&[REFUSE]).await;
        return Err(RefusalReason::WrongSecret);
    }
    let mut verdict = [0; 1 + TAG_BYTES];
    verdict[0] = ACCEPT;
    verdict[1..].copy_from_slice(&secret.tag(Role::Agent, &nonces));
    stream.write_all(&verdict).await.map_err(io_reason)?;
    Ok(secret.session_keys(Role::Agent, &nonces))
}

/// The coordinator's side: proves itself, then checks the agent's proof;
/// the session's keys come back. The error says what went wrong in words
/// for the operator.
pub(crate) async fn prove_agent<S>(
    stream: &mut S,
    secret: &SharedSecret,
) -> Result<SessionKeys, String>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let io = |e: std::io::Error| {
        format!("authenticating: {e} (the agent hung up: an agent of an older version?)")
    };
    let coordinator = nonce();
    let mut hello = [0; MAGIC.len() + NONCE_BYTES];
    hello[..MAGIC.len()].copy_from_slice(MAGIC);
    hello[MAGIC.len()..].copy_from_slice(&coordinator);
    stream.write_all(&hello).await.map_err(io)?;
    let mut agent = [0; NONCE_BYTES];
    stream.read_exact(&mut agent).await.map_err(io)?;
    let nonces = Nonces { coordinator, agent };
    stream
        .write_all(&secret.tag(Role::Coordinator, &nonces))
        .await
        .map_err(io)?;
    let mut verdict = [0; 1];
    stream.read_exact(&mut verdict).await.map_err(io)?;
    if verdict[0] != ACCEPT {
        return Err(format!(
            "the agent refused us: our shared secret (from {}) is not the agent's",
            secret.origin()
        ));
    }
    let mut tag = [0; TAG_BYTES];
    stream.read_exact(&mut tag).await.map_err(io)?;
    if !secret.verify(Role::Agent, &nonces, &tag) {
        return Err(
            "the agent could not prove it holds our shared secret: not sending it the scenario"
                .to_owned(),
        );
    }
    Ok(secret.session_keys(Role::Coordinator, &nonces))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(byte: u8) -> SharedSecret {
        SharedSecret::new(&[byte; MIN_SECRET_BYTES], "test").unwrap()
    }

    #[test]
    fn proofs_are_bound_to_role_secret_and_both_nonces() {
        let s = secret(1);
        let n = Nonces {
            coordinator: [2; NONCE_BYTES],
            agent: [3; NONCE_BYTES],
        };
        let tag = s.tag(Role::Coordinator, &n);
        assert!(s.verify(Role::Coordinator, &n, &tag));
        assert!(!s.verify(Role::Agent, &n, &tag), "no reflection");
        assert!(!secret(9).verify(Role::Coordinator, &n, &tag));
        let other = Nonces {
            coordinator: [2; NONCE_BYTES],
            agent: [4; NONCE_BYTES],
        };
        assert!(!s.verify(Role::Coordinator, &other, &tag), "no replay");
        assert!(!s.verify(Role::Coordinator, &n, &tag[..31]));
    }

    #[test]
    fn short_secrets_are_refused_naming_where_they_came_from() {
        let err = SharedSecret::new(b"0123456789", "/run/secrets/swarm").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("/run/secrets/swarm"), "{text}");
        assert!(text.contains("10 bytes"), "{text}");
        assert!(!format!("{:?}", secret(7)).contains("07"));
        let dir =
            std::env::temp_dir().join(format!("hightick-swarm-secret-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("short");
        std::fs::write(&file, "too short\n").unwrap();
        let err = SharedSecret::load(Some(&file)).unwrap_err().to_string();
        assert!(
            err.contains(&file.display().to_string()) && err.contains("9 bytes"),
            "{err}"
        );
        let missing = dir.join("missing");
        let err = SharedSecret::load(Some(&missing)).unwrap_err().to_string();
        assert!(err.contains(&missing.display().to_string()), "{err}");
        std::fs::write(&file, format!("{}\n", "ab".repeat(32))).unwrap();
        assert!(SharedSecret::load(Some(&file)).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }

    async fn exchange(
        agent: &SharedSecret,
        coordinator: &SharedSecret,
    ) -> (
        Result<SessionKeys, RefusalReason>,
        Result<SessionKeys, String>,
    ) {
        let (mut a, mut c) = tokio::io::duplex(256);
        tokio::join!(prove_coordinator(&mut a, agent), async {
            let r = prove_agent(&mut c, coordinator).await;
            drop(c);
            r
        })
    }

    /// Whether `sealer`'s next frame opens with `opener`.
    fn opens(sealer: &mut Sealer, opener: &mut Opener) -> bool {
        let mut frame = Vec::new();
        sealer.seal(&super::super::wire::Message::Ready, &mut frame);
        let mut len = [0; 4];
        len.copy_from_slice(&frame[..4]);
        opener.open(len, &frame[4..]).is_ok()
    }

    #[tokio::test]
    async fn the_same_secret_passes_both_ways_and_another_is_refused() {
        let (a, c) = exchange(&secret(1), &secret(1)).await;
        let (mut a, mut c) = (a.unwrap(), c.unwrap());
        assert!(opens(&mut c.sealer, &mut a.opener), "coordinator -> agent");
        assert!(opens(&mut a.sealer, &mut c.opener), "agent -> coordinator");
        let (a, c) = exchange(&secret(1), &secret(2)).await;
        assert_eq!(a.unwrap_err(), RefusalReason::WrongSecret);
        assert!(c.unwrap_err().contains("refused"));
    }

    #[tokio::test]
    async fn each_session_and_each_direction_has_its_own_key() {
        let s = secret(1);
        let (_, c1) = exchange(&s, &s).await;
        let (a2, _) = exchange(&s, &s).await;
        let (mut c1, mut a2) = (c1.unwrap(), a2.unwrap());
        assert!(
            !opens(&mut c1.sealer.clone(), &mut a2.opener),
            "a frame of another session"
        );
        assert!(
            !opens(&mut c1.sealer.clone(), &mut c1.opener),
            "a frame fed back to its sender"
        );
    }

    #[tokio::test]
    async fn a_peer_without_the_hello_is_refused_after_sixteen_bytes() {
        let (mut a, mut c) = tokio::io::duplex(1 << 16);
        c.write_all(&[0x00, 0x00, 0x10, 0x00, 1]).await.unwrap();
        c.write_all(&[b'{'; 4096]).await.unwrap();
        let r = prove_coordinator(&mut a, &secret(1)).await;
        assert_eq!(r.unwrap_err(), RefusalReason::NotACoordinator);
        drop(a);
        let mut rest = Vec::new();
        c.read_to_end(&mut rest).await.unwrap();
        assert!(rest.is_empty(), "the agent answered a stranger");
    }
}
