//! [`ClientError`]: what can go wrong at the client library's boundary.

use hightick_net::NetError;
use hightick_proto::ProtoError;

/// Errors of the client library.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The connection layer refused (bad token, queue full...).
    #[error("connection: {0}")]
    Net(#[from] NetError),
    /// A message could not be encoded.
    #[error("message: {0}")]
    Proto(#[from] ProtoError),
    /// Not connected (yet, or any more).
    #[error("not connected")]
    NotConnected,
    /// The socket failed.
    #[error("socket: {0}")]
    Io(#[from] std::io::Error),
    /// The client turned its server away.
    #[error("refused: {0}")]
    Refused(Refusal),
}

/// Why a client turned its server away (and closed the connection).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The server's game speaks another wire schema: one of the two was
    /// built for another version of the game (`<game> schema` prints each
    /// side's).
    #[error(
        "the server's game has wire schema {server:016x}, this client was built for {client:016x}: \
         another version of the game"
    )]
    SchemaMismatch {
        /// The hash the server sent.
        server: u64,
        /// This client's own.
        client: u64,
    },
}
