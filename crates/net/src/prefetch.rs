//! Cache prefetch hints, for hosts about to visit many connections.
//!
//! A match tick that follows a sleep beside other matches finds its
//! connections' state cold: each client's packet layer and link cost a
//! dozen cache misses, taken one after another as the send loop reaches
//! them. Asking for every client's lines before the loop lets the misses
//! overlap (the memory system serves many at once), so the loop finds them
//! warm. A hint changes no state and is never wrong, only wasted; on targets
//! without a prefetch instruction it does nothing.
//!
//! ```
//! let buffers = vec![[0u8; 256]; 4];
//! for b in &buffers {
//!     hightick_net::prefetch::prefetch(b);
//! }
//! ```

/// Bytes of one cache line.
pub const LINE: usize = 64;

/// Hints that the bytes of `value` will be read soon.
#[inline]
pub fn prefetch<T: ?Sized>(value: &T) {
    prefetch_range((value as *const T).cast(), size_of_val(value));
}

/// Hints that `len` bytes from `start` will be read soon.
#[inline]
pub fn prefetch_range(start: *const u8, len: usize) {
    if len == 0 {
        return;
    }
    // From the start of `start`'s line, one hint per line up to the last byte.
    let skew = start as usize % LINE;
    let mut at = start.wrapping_sub(skew);
    let mut left = len.saturating_add(skew);
    loop {
        prefetch_line(at);
        if left <= LINE {
            break;
        }
        left -= LINE;
        at = at.wrapping_add(LINE);
    }
}

#[inline]
fn prefetch_line(at: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 is a hint: it never faults, whatever the address,
    // and changes nothing the program can observe.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(at.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_over_any_range_change_nothing() {
        let bytes: Vec<u8> = (0..=255).collect();
        prefetch(&bytes[..]);
        prefetch(&bytes[3..70]);
        prefetch(&bytes[..0]);
        prefetch_range(std::ptr::null(), 4096);
        prefetch_range(usize::MAX as *const u8, 1);
        assert_eq!(bytes.iter().map(|&b| u32::from(b)).sum::<u32>(), 255 * 128);
    }
}
