//! [`SwarmError`]: what can go wrong setting up bots, reading scenarios,
//! running them and talking to agents.

use std::net::SocketAddr;

/// Errors of the swarm.
#[derive(Debug, thiserror::Error)]
pub enum SwarmError {
    /// Bot `bot`'s connect token does not decode.
    #[error("bot {bot}: connect token: {source}")]
    Token {
        /// The bot's index in the fleet.
        bot: usize,
        /// Why.
        source: hightick_net::NetError,
    },
    /// Bot `bot`'s token does not list the server it was pointed at.
    #[error("bot {bot}: the connect token does not list server {server}")]
    ServerNotInToken {
        /// The bot's index in the fleet.
        bot: usize,
        /// The server it was given.
        server: SocketAddr,
    },
    /// The game refused the mode or its settings, or could not make a bot
    /// for them.
    #[error("{0}")]
    Mode(String),
    /// The client library failed (socket, token).
    #[error(transparent)]
    Client(#[from] hightick_client::ClientError),
    /// `run_fleet` was called outside a tokio runtime.
    #[error("a fleet needs a tokio runtime")]
    NoRuntime,
    /// A scenario file is wrong at a place.
    #[error("{file}:{line}:{column}: {field}: {message}")]
    Scenario {
        /// The file (or the name it was given).
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The field at fault, as a path (`behaviour[1].step[0].url`).
        field: String,
        /// What is wrong.
        message: String,
    },
    /// A scenario file could not be read.
    #[error("reading {path}: {source}")]
    ReadScenario {
        /// The path.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// An `https://` target's TLS client could not be made (its CA file,
    /// or a host that cannot be a TLS server name).
    #[error("target {target} ({url}): TLS: {message}")]
    Tls {
        /// The target's name.
        target: String,
        /// The URL.
        url: String,
        /// What is wrong.
        message: String,
    },
    /// A target's host name did not resolve.
    #[error("target {target} ({url}): {message}")]
    Resolve {
        /// The target's name.
        target: String,
        /// Its URL.
        url: String,
        /// Why.
        message: String,
    },
    /// A socket failed (listen, connect, accept).
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// Why.
        source: std::io::Error,
    },
    /// An agent or the coordinator sent something that does not decode or
    /// breaks the protocol.
    #[error("agent protocol: {0}")]
    Protocol(String),
    /// The agents' shared secret could not be read, or is too short.
    #[error("swarm secret from {origin}: {reason}")]
    Secret {
        /// Where it was read from (a file, `$VARIABLE`).
        origin: String,
        /// What is wrong.
        reason: String,
    },
    /// An agent and this coordinator did not authenticate each other.
    #[error("agent {agent}: {reason}")]
    Auth {
        /// The agent (`host:port`).
        agent: String,
        /// What went wrong.
        reason: String,
    },
    /// A frame from `peer` failed its check (bad MAC, out of sequence): the
    /// session with it ended.
    #[error("{peer}: frame refused, session ended: {fault}")]
    Frame {
        /// Who sent it (`agent host:port` or `coordinator host:port`).
        peer: String,
        /// Why it was refused.
        fault: crate::distributed::FrameFault,
    },
    /// An agent's allow-list entry does not read.
    #[error("--allow-target {0}")]
    AllowList(String),
    /// A scenario's target is outside the agent's allow-list.
    #[error(
        "target `{target}` ({url}, at {addr}) is outside this agent's allow-list ({allowed}); start the agent with --allow-target to allow it"
    )]
    TargetRefused {
        /// The target's name in the scenario.
        target: String,
        /// Its URL.
        url: String,
        /// The address it resolved to.
        addr: SocketAddr,
        /// The allow-list.
        allowed: String,
    },
    /// The impairment proxy of the scenario's `link` failed to start.
    #[error("link: {0}")]
    Link(#[from] hightick_netem::NetemError),
    /// A report could not be drawn.
    #[error("report: {0}")]
    Report(#[from] hightick_report::ReportError),
    /// A result file could not be read.
    #[error("result {path}: {message}")]
    Result {
        /// The path.
        path: String,
        /// Why.
        message: String,
    },
}

impl SwarmError {
    /// An I/O error while doing `what`.
    pub fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let what = what.into();
        move |source| Self::Io { what, source }
    }
}
