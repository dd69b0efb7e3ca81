//! [`FfiError`]: what can go wrong at the C boundary, and the status each
//! error returns.

use hightick_client::ClientError;
use hightick_net::NetError;
use hightick_proto::ProtoError;

use crate::status::HightickStatus;

/// Errors of the C ABI. Each maps to one [`HightickStatus`]; its text is
/// what `hightick_last_error` returns.
#[derive(Debug, thiserror::Error)]
pub enum FfiError {
    /// A pointer argument was null.
    #[error("argument `{0}` is null")]
    NullPointer(&'static str),
    /// A caller's buffer cannot hold what there is.
    #[error("buffer `{field}` holds {capacity}, {needed} needed")]
    BufferTooSmall {
        /// The buffer argument.
        field: &'static str,
        /// Its capacity, in its elements.
        capacity: usize,
        /// How many elements are needed.
        needed: usize,
    },
    /// An argument is out of range.
    #[error("argument `{field}`: {reason}")]
    InvalidArgument {
        /// The argument (or field of a record argument) at fault.
        field: &'static str,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A field of the caller's input record is out of range.
    #[error("input: {0}")]
    Input(ProtoError),
    /// The token bytes are not a connect token for this game.
    #[error("connect token: {0}")]
    InvalidToken(NetError),
    /// The token expired.
    #[error("connect token expired at unix time {expire_unix}, now {now_unix}")]
    TokenExpired {
        /// The token's expiry, unix seconds.
        expire_unix: u64,
        /// This machine's clock, unix seconds.
        now_unix: u64,
    },
    /// The handle was closed.
    #[error("handle {0:#x} was closed")]
    Closed(u64),
    /// The handle was never issued.
    #[error("handle {0:#x} was never opened")]
    InvalidHandle(u64),
    /// Every handle slot is open.
    #[error("{0} handles are open, the most one library holds")]
    TooManyHandles(usize),
    /// Another thread holds the handle.
    #[error("handle {0:#x} is in use by another thread")]
    Busy(u64),
    /// The connection is not up.
    #[error("not connected")]
    NotConnected,
    /// The socket failed.
    #[error("socket: {0}")]
    Io(#[from] std::io::Error),
    /// The client library refused.
    #[error("client: {0}")]
    Client(ClientError),
    /// A prediction call on a handle that does not predict.
    #[error("handle {0:#x} does not predict: call hightick_prediction_start first")]
    NotPredicting(u64),
    /// The game has no stage of that name.
    #[error("argument `stage`: {0}")]
    Stage(Box<dyn std::error::Error + Send + Sync>),
    /// A caught panic.
    #[error("internal error: {0}")]
    Panic(&'static str),
}

impl FfiError {
    /// The status this error returns.
    pub fn status(&self) -> HightickStatus {
        match self {
            Self::NullPointer(_) => HightickStatus::NullPointer,
            Self::BufferTooSmall { .. } => HightickStatus::BufferTooSmall,
            Self::InvalidArgument { .. } => HightickStatus::InvalidArgument,
            Self::Input(_) => HightickStatus::InvalidArgument,
            Self::InvalidToken(_) => HightickStatus::InvalidToken,
            Self::TokenExpired { .. } => HightickStatus::TokenExpired,
            Self::Closed(_) => HightickStatus::Closed,
            Self::InvalidHandle(_) => HightickStatus::InvalidHandle,
            Self::TooManyHandles(_) => HightickStatus::TooManyHandles,
            Self::Busy(_) => HightickStatus::Busy,
            Self::NotConnected => HightickStatus::NotConnected,
            Self::Io(_) => HightickStatus::Io,
            // Refused: not connected any more, and the last error says why
            // (another version of the game).
            Self::Client(ClientError::NotConnected | ClientError::Refused(_)) => {
                HightickStatus::NotConnected
            }
            Self::Client(ClientError::Io(_)) => HightickStatus::Io,
            Self::Client(ClientError::Proto(_)) => HightickStatus::InvalidArgument,
            Self::Client(ClientError::Net(_)) => HightickStatus::InvalidArgument,
            Self::NotPredicting(_) => HightickStatus::NotPredicting,
            Self::Stage(_) => HightickStatus::InvalidArgument,
            Self::Panic(_) => HightickStatus::Panic,
        }
    }
}

impl From<ClientError> for FfiError {
    fn from(e: ClientError) -> Self {
        match e {
            ClientError::NotConnected => Self::NotConnected,
            e => Self::Client(e),
        }
    }
}
