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
}
