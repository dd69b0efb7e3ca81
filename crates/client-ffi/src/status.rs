//! [`HightickStatus`]: what every call of the C ABI returns.

use std::ffi::c_char;

/// The result of a call. Zero is success, positive values are successes
/// with nothing to hand over, negative values are errors; after an error
/// `hightick_last_error` tells what went wrong in words.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HightickStatus {
    /// Done.
    Ok = 0,
    /// Done, with nothing to hand over: no snapshot since the last poll, or
    /// the entity is not held.
    Empty = 1,
    /// A pointer argument that must not be null was null.
    NullPointer = -1,
    /// A caller's buffer is too small; the call's `out_count`/`out_len`
    /// says how much is needed, and nothing was written to the buffer.
    BufferTooSmall = -2,
    /// An argument is out of range (the last error names it).
    InvalidArgument = -3,
    /// The connect token is not a connect token of this game.
    InvalidToken = -4,
    /// The connect token has expired (by this machine's clock).
    TokenExpired = -5,
    /// The handle was closed.
    Closed = -6,
    /// The handle was never opened (zero, or a value no call returned).
    InvalidHandle = -7,
    /// Another thread is inside a call on this handle: a handle is meant to
    /// be used by one thread at a time. Nothing was done.
    Busy = -8,
    /// The connection is not up (yet, or any more).
    NotConnected = -9,
    /// The socket failed.
    Io = -10,
    /// The library hit a bug and caught it; the handle may be broken (the
    /// last error says where). Close it.
    Panic = -11,
    /// Every handle this library can hold is open
    /// (`HIGHTICK_MAX_OPEN_HANDLES`); close one first.
    TooManyHandles = -12,
    /// Prediction was not started on this handle
    /// (`hightick_prediction_start`).
    NotPredicting = -13,
}

/// Every status.
const ALL: [HightickStatus; 15] = [
    HightickStatus::Ok,
    HightickStatus::Empty,
    HightickStatus::NullPointer,
    HightickStatus::BufferTooSmall,
    HightickStatus::InvalidArgument,
    HightickStatus::InvalidToken,
    HightickStatus::TokenExpired,
    HightickStatus::Closed,
    HightickStatus::InvalidHandle,
    HightickStatus::Busy,
    HightickStatus::NotConnected,
    HightickStatus::Io,
    HightickStatus::Panic,
    HightickStatus::TooManyHandles,
    HightickStatus::NotPredicting,
];

impl HightickStatus {
    /// A short name, NUL-terminated for C.
    pub const fn text_nul(self) -> &'static str {
        match self {
            Self::Ok => "ok\0",
            Self::Empty => "empty\0",
            Self::NullPointer => "null pointer\0",
            Self::BufferTooSmall => "buffer too small\0",
            Self::InvalidArgument => "invalid argument\0",
            Self::InvalidToken => "invalid connect token\0",
            Self::TokenExpired => "connect token expired\0",
            Self::Closed => "handle closed\0",
            Self::InvalidHandle => "invalid handle\0",
            Self::Busy => "handle busy on another thread\0",
            Self::NotConnected => "not connected\0",
            Self::Io => "socket error\0",
            Self::Panic => "internal error (caught panic)\0",
            Self::TooManyHandles => "too many open handles\0",
            Self::NotPredicting => "prediction not started\0",
        }
    }

    /// The short name.
    pub fn text(self) -> &'static str {
        self.text_nul().trim_end_matches('\0')
    }

    /// The status of code `code`, if it is one.
    pub fn from_code(code: i32) -> Option<Self> {
        ALL.into_iter().find(|s| *s as i32 == code)
    }
}

/// `hightick_status_text`: the short name of status `code` as a static
/// NUL-terminated string (`"unknown status"` for other values).
pub fn status_text(code: i32) -> *const c_char {
    HightickStatus::from_code(code)
        .map_or("unknown status\0", HightickStatus::text_nul)
        .as_ptr()
        .cast()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_has_a_distinct_code_and_a_name() {
        for s in ALL {
            assert_eq!(HightickStatus::from_code(s as i32), Some(s));
            assert!(!s.text().is_empty() && !s.text().contains('\0'));
        }
        assert_eq!(HightickStatus::from_code(99), None);
        // SAFETY: status_text returns a static NUL-terminated string.
        let unknown = unsafe { std::ffi::CStr::from_ptr(status_text(99)) };
        assert_eq!(unknown.to_str(), Ok("unknown status"));
    }
}
