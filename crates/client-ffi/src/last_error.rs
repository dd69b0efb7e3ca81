//! The last error of the calling thread, as text: set by a failing call,
//! read by `hightick_last_error`. Held in a fixed buffer, so recording an
//! error allocates nothing (a client that is not connected yet fails its
//! `send_input` every frame).

use std::cell::RefCell;
use std::fmt::{self, Write};

/// Longest error text kept, in bytes, NUL excluded (longer texts are cut at
/// a character boundary): a buffer of this plus one always holds it.
pub const HIGHTICK_LAST_ERROR_BYTES: usize = 256;

struct Text {
    bytes: [u8; HIGHTICK_LAST_ERROR_BYTES],
    len: usize,
}

impl Write for Text {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let room = HIGHTICK_LAST_ERROR_BYTES - self.len;
        let mut take = s.len().min(room);
        while !s.is_char_boundary(take) {
            take -= 1;
        }
        self.bytes[self.len..self.len + take].copy_from_slice(&s.as_bytes()[..take]);
        self.len += take;
        Ok(())
    }
}

thread_local! {
    static LAST: RefCell<Text> = const {
        RefCell::new(Text { bytes: [0; HIGHTICK_LAST_ERROR_BYTES], len: 0 })
    };
}

/// Records `error`'s text as the calling thread's last error.
pub(crate) fn record(error: &dyn fmt::Display) {
    let _ = LAST.try_with(|last| {
        if let Ok(mut text) = last.try_borrow_mut() {
            text.len = 0;
            let _ = write!(text, "{error}");
        }
    });
}

/// Runs `read` on the calling thread's last error text (`""` if none).
pub(crate) fn with<R>(read: impl FnOnce(&str) -> R) -> R {
    LAST.with(|last| {
        let text = last.borrow();
        // Only whole characters are ever written.
        read(std::str::from_utf8(&text.bytes[..text.len]).unwrap_or(""))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_newest_error_cut_at_a_character_boundary() {
        with(|t| assert_eq!(t, ""));
        record(&"first");
        record(&format_args!("second {}", 2));
        with(|t| assert_eq!(t, "second 2"));
        let long = "é".repeat(HIGHTICK_LAST_ERROR_BYTES);
        record(&long);
        with(|t| {
            assert_eq!(t.len(), HIGHTICK_LAST_ERROR_BYTES);
            assert!(t.chars().all(|c| c == 'é'));
        });
        // Per thread.
        std::thread::spawn(|| with(|t| assert_eq!(t, "")))
            .join()
            .unwrap();
    }
}
