//! Counting heap allocations per thread, to prove a hot path allocates nothing.
//!
//! Install [`CountingAllocator`] as the global allocator of a test binary, then
//! wrap the steady-state work in [`count_allocations`]. Counts are per thread,
//! so tests running in parallel in the same binary do not disturb each other.
//!
//! ```
//! use hightick_telemetry::alloc::{count_allocations, CountingAllocator};
//!
//! #[global_allocator]
//! static ALLOCATOR: CountingAllocator = CountingAllocator;
//!
//! let mut buf = Vec::with_capacity(64);
//! let allocations = count_allocations(|| {
//!     buf.clear();
//!     buf.extend_from_slice(b"no allocation here");
//! });
//! assert_eq!(allocations, 0);
//! assert_eq!(count_allocations(|| vec![0u8; 64].len()), 1);
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

/// The system allocator, counting every allocation and reallocation made by
/// each thread. Frees are not counted: a hot path that frees also allocated.
#[derive(Debug, Clone, Copy, Default)]
pub struct CountingAllocator;

fn bump() {
    // `try_with` fails only while the thread is being torn down; those
    // allocations belong to no measured region, so they are ignored.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged;
// counting touches only a const-initialized thread-local `Cell`, which never allocates.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        bump();
        // SAFETY: forwarded contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        bump();
        // SAFETY: forwarded contract.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        bump();
        // SAFETY: forwarded contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Allocations (and reallocations) made so far by the calling thread. Always 0
/// unless [`CountingAllocator`] is the global allocator.
pub fn allocations_on_this_thread() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

/// Runs `work` and returns how many allocations the calling thread made in it.
pub fn count_allocations<R>(work: impl FnOnce() -> R) -> u64 {
    let before = allocations_on_this_thread();
    std::hint::black_box(work());
    allocations_on_this_thread() - before
}
