//! [`SwarmError`]: what can go wrong setting up bots.

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
    /// The arena map could not be loaded.
    #[error("map: {0}")]
    Map(#[from] hightick_arena::MapError),
    /// The client library failed (socket, token).
    #[error(transparent)]
    Client(#[from] hightick_client::ClientError),
    /// `run_fleet` was called outside a tokio runtime.
    #[error("a fleet needs a tokio runtime")]
    NoRuntime,
}
