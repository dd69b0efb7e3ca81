//! [`Adapter`]: the host's calls to the Agones SDK server (the sidecar), over
//! the `agones` crate's gRPC client, each mapped to a [`ServerError`] that
//! says which call failed.

use std::collections::HashMap;

use crate::error::ServerError;

/// The Agones Counter that holds a GameServer's matches: its count is the
/// matches allocated to it, its capacity how many it may host at once.
pub const MATCHES_COUNTER: &str = "matches";

/// Label keys the host sets (the SDK prefixes each with `agones.dev/sdk-`).
pub const VERSION_LABEL: &str = "hightick-version";
/// See [`VERSION_LABEL`].
pub const BUILD_LABEL: &str = "hightick-build";
/// See [`VERSION_LABEL`].
pub const GAME_LABEL: &str = "hightick-game";

/// The build id labelled on the GameServer: `$HIGHTICK_BUILD` when the
/// binary was compiled (an image build sets it to the git commit), else
/// `dev`.
pub const BUILD: &str = match option_env!("HIGHTICK_BUILD") {
    Some(build) => build,
    None => "dev",
};

/// What the host reads of a GameServer update.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GameServerView {
    /// `Scheduled`, `Ready`, `Allocated`, `Shutdown`...
    pub state: String,
    /// Its annotations (an allocation's among them).
    pub annotations: HashMap<String, String>,
    /// Its uid.
    pub uid: String,
    /// Its creation time, unix seconds.
    pub creation_timestamp: i64,
}

impl From<agones::GameServer> for GameServerView {
    fn from(gs: agones::GameServer) -> Self {
        let (annotations, uid, creation_timestamp) = gs
            .object_meta
            .map(|m| (m.annotations, m.uid, m.creation_timestamp))
            .unwrap_or_default();
        Self {
            state: gs.status.map(|s| s.state).unwrap_or_default(),
            annotations,
            uid,
            creation_timestamp,
        }
    }
}

/// A live connection to the Agones SDK server. Cheap to clone.
#[derive(Clone)]
pub struct Adapter {
    sdk: agones::Sdk,
}

impl std::fmt::Debug for Adapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Adapter").finish_non_exhaustive()
    }
}

fn failed(call: &'static str) -> impl Fn(agones::errors::Error) -> ServerError {
    move |e| {
        let detail = match &e {
            agones::errors::Error::Rpc(status) => format!("{e}: {}", status.message()),
            agones::errors::Error::Transport(t) => format!("{e}: {t}"),
            _ => e.to_string(),
        };
        ServerError::Agones(format!("{call}: {detail}"))
    }
}

impl Adapter {
    /// Connects to the SDK server on `localhost:port` (`None`:
    /// `$AGONES_SDK_GRPC_PORT`, else 9357), retrying for up to 30 s while
    /// the sidecar starts.
    pub async fn connect(port: Option<u16>) -> Result<Self, ServerError> {
        let sdk = agones::Sdk::new(port, None)
            .await
            .map_err(failed("connect to the SDK server"))?;
        Ok(Self { sdk })
    }

    /// Sets a label (key prefixed with `agones.dev/sdk-` by Agones).
    pub async fn set_label(&mut self, key: &str, value: &str) -> Result<(), ServerError> {
        self.sdk
            .set_label(key, value)
            .await
            .map_err(failed("SetLabel"))
    }

    /// Labels the GameServer with the host's version, build and game.
    pub async fn label_build(&mut self, game: &str) -> Result<(), ServerError> {
        self.set_label(VERSION_LABEL, env!("CARGO_PKG_VERSION"))
            .await?;
        self.set_label(BUILD_LABEL, BUILD).await?;
        self.set_label(GAME_LABEL, game).await
    }

    /// Marks the GameServer Ready: it may be allocated.
    pub async fn ready(&mut self) -> Result<(), ServerError> {
        self.sdk.ready().await.map_err(failed("Ready"))
    }

    /// Marks the GameServer Shutdown: Agones deletes its pod.
    pub async fn shutdown(&mut self) -> Result<(), ServerError> {
        self.sdk.shutdown().await.map_err(failed("Shutdown"))
    }

    /// The health stream: each `()` sent is one ping. Send only when the
    /// host has shown progress (`crate::agones` module docs).
    pub fn health(&self) -> tokio::sync::mpsc::Sender<()> {
        self.sdk.health_check()
    }

    /// The GameServer now.
    pub async fn game_server(&mut self) -> Result<GameServerView, ServerError> {
        self.sdk
            .get_gameserver()
            .await
            .map(GameServerView::from)
            .map_err(failed("GetGameServer"))
    }

    /// Every update of the GameServer, the current one first.
    pub async fn watch(&mut self) -> Result<Watch, ServerError> {
        let stream = self
            .sdk
            .watch_gameserver()
            .await
            .map_err(failed("WatchGameServer"))?;
        Ok(Watch { stream })
    }

    /// The count of the [`MATCHES_COUNTER`]: matches allocated here.
    pub async fn matches_allocated(&mut self) -> Result<i64, ServerError> {
        self.sdk
            .beta()
            .clone()
            .get_counter_count(MATCHES_COUNTER)
            .await
            .map_err(failed("GetCounter matches"))
    }

    /// Gives a slot of the [`MATCHES_COUNTER`] back: a match ended (or an
    /// allocation was refused).
    pub async fn match_ended(&mut self) -> Result<(), ServerError> {
        self.sdk
            .beta()
            .clone()
            .decrement_counter(MATCHES_COUNTER, 1)
            .await
            .map_err(failed("UpdateCounter matches -1"))
    }

    /// Sets the [`MATCHES_COUNTER`] to 0 (a stray count: allocations the
    /// host never saw).
    pub async fn reset_matches(&mut self) -> Result<(), ServerError> {
        self.sdk
            .beta()
            .clone()
            .set_counter_count(MATCHES_COUNTER, 0)
            .await
            .map_err(failed("UpdateCounter matches = 0"))
    }

    /// The SDK itself, for the calls the host does not make (Allocate,
    /// Reserve, annotations): the conformance test's driver uses them.
    pub fn sdk(&mut self) -> &mut agones::Sdk {
        &mut self.sdk
    }
}

/// A stream of GameServer updates.
#[derive(Debug)]
pub struct Watch {
    stream: tonic::Streaming<agones::GameServer>,
}

impl Watch {
    /// The next update; `None` when the stream has ended.
    pub async fn next(&mut self) -> Option<Result<GameServerView, ServerError>> {
        match self.stream.message().await {
            Ok(Some(gs)) => Some(Ok(gs.into())),
            Ok(None) => None,
            Err(status) => Some(Err(ServerError::Agones(format!(
                "WatchGameServer: {}",
                status.message()
            )))),
        }
    }
}
