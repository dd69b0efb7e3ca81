//! [`Registry`]: the handles of one game's client library. A handle is a
//! number (slot and generation), not a pointer, so a closed or made-up
//! handle is recognised and refused instead of dereferenced.
//!
//! Each slot has one atomic state word: its generation, whether it is open,
//! whether a call is inside it, whether a call panicked in it. A call takes
//! the slot with one compare-and-swap (no lock shared between handles) and
//! releases it with one store; a second thread on the same handle fails the
//! swap and gets [`FfiError::Busy`], never a data race.

use std::cell::UnsafeCell;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::FfiError;
use parking_lot::Mutex;

/// A client handle as C sees it: opaque, never zero.
pub type HightickClient = u64;

/// Handles one library can have open at once.
pub const HIGHTICK_MAX_OPEN_HANDLES: usize = 1024;

/// State bits: the slot holds a session.
const OPEN: u64 = 1 << 0;
/// A call is inside the slot.
const BUSY: u64 = 1 << 1;
/// A call panicked inside the slot; its session may be inconsistent.
const BROKEN: u64 = 1 << 2;

fn generation_of(state: u64) -> u32 {
    (state >> 32) as u32
}

fn open_state(generation: u32) -> u64 {
    (u64::from(generation) << 32) | OPEN
}

/// A handle's slot index and generation.
fn split(handle: HightickClient) -> (usize, u32) {
    let index = (handle & 0xffff_ffff) as usize;
    (index.wrapping_sub(1), (handle >> 32) as u32)
}

struct Slot<T> {
    state: AtomicU64,
    session: UnsafeCell<Option<Box<T>>>,
}

// SAFETY: `session` is only touched by the thread that set BUSY in `state`
// with a successful compare-and-swap (calls, close), or by `open` while the
// slot is not OPEN (no call can take it then; opens are serialised).
unsafe impl<T: Send> Sync for Slot<T> {}

impl<T> Default for Slot<T> {
    fn default() -> Self {
        Self {
            state: AtomicU64::new(0),
            session: UnsafeCell::new(None),
        }
    }
}

/// Releases a slot taken by a call; marks it broken if the call panicked.
struct Taken<'a> {
    state: &'a AtomicU64,
    open: u64,
}

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        let released = if std::thread::panicking() {
            self.open | BROKEN
        } else {
            self.open
        };
        self.state.store(released, Ordering::Release);
    }
}

/// The open sessions of one library, behind numbered handles. See the
/// [module docs](self).
pub struct Registry<T> {
    slots: OnceLock<Box<[Slot<T>]>>,
    /// Serialises `open` (which picks a free slot).
    opening: Mutex<()>,
}

impl<T> std::fmt::Debug for Registry<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("open", &self.open_sessions())
            .finish()
    }
}

impl<T> Default for Registry<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Registry<T> {
    /// An empty registry (usable in a `static`; slots are allocated at the
    /// first `open`).
    pub const fn new() -> Self {
        Self {
            slots: OnceLock::new(),
            opening: Mutex::new(()),
        }
    }

    /// Opens a session; returns its handle. Allocates (a connect does).
    pub fn open(&self, session: T) -> Result<HightickClient, FfiError> {
        let _opening = self.opening.lock();
        let slots = self.slots.get_or_init(|| {
            (0..HIGHTICK_MAX_OPEN_HANDLES)
                .map(|_| Slot::default())
                .collect()
        });
        let (index, slot) = slots
            .iter()
            .enumerate()
            .find(|(_, s)| s.state.load(Ordering::Acquire) & OPEN == 0)
            .ok_or(FfiError::TooManyHandles(HIGHTICK_MAX_OPEN_HANDLES))?;
        let previous = generation_of(slot.state.load(Ordering::Acquire));
        // A slot reused 2^32 times starts over at 1; 0 is never issued.
        let generation = previous.checked_add(1).unwrap_or(1);
        // SAFETY: the slot is not OPEN, so no call can take it, and opens
        // are serialised by `opening`.
        unsafe { *slot.session.get() = Some(Box::new(session)) };
        slot.state.store(open_state(generation), Ordering::Release);
        Ok((u64::from(generation) << 32) | (index as u64 + 1))
    }

    /// Why `handle` could not take a slot whose state is `state`.
    fn refusal(handle: HightickClient, generation: u32, state: u64) -> FfiError {
        let current = generation_of(state);
        if generation == 0 || generation > current {
            FfiError::InvalidHandle(handle)
        } else if generation < current || state & OPEN == 0 {
            FfiError::Closed(handle)
        } else if state & BROKEN != 0 {
            FfiError::Panic("an earlier call on this handle panicked; close it")
        } else {
            FfiError::Busy(handle)
        }
    }

    fn slot(&self, handle: HightickClient) -> Result<(&Slot<T>, u32), FfiError> {
        let (index, generation) = split(handle);
        let slot = self
            .slots
            .get()
            .and_then(|slots| slots.get(index))
            .ok_or(FfiError::InvalidHandle(handle))?;
        Ok((slot, generation))
    }

    /// Runs `call` on the session of `handle`, unless the handle is closed,
    /// unknown, broken by a panic, or busy on another thread.
    pub fn with<R>(
        &self,
        handle: HightickClient,
        call: impl FnOnce(&mut T) -> Result<R, FfiError>,
    ) -> Result<R, FfiError> {
        let (slot, generation) = self.slot(handle)?;
        let open = open_state(generation);
        if let Err(state) =
            slot.state
                .compare_exchange(open, open | BUSY, Ordering::Acquire, Ordering::Relaxed)
        {
            return Err(Self::refusal(handle, generation, state));
        }
        let _taken = Taken {
            state: &slot.state,
            open,
        };
        // SAFETY: this thread set BUSY: it alone touches the session until
        // `_taken` releases it. An OPEN slot always holds a session.
        let session = unsafe { (*slot.session.get()).as_deref_mut() };
        call(session.ok_or(FfiError::Panic("open slot without a session"))?)
    }

    /// Closes `handle` (later calls with it return [`FfiError::Closed`]),
    /// then runs `finish` on its session, unless the session was broken by
    /// a panic. A busy handle stays open.
    pub fn close(
        &self,
        handle: HightickClient,
        finish: impl FnOnce(&mut T),
    ) -> Result<(), FfiError> {
        let (slot, generation) = self.slot(handle)?;
        let open = open_state(generation);
        let taken = [open, open | BROKEN].into_iter().find_map(|from| {
            slot.state
                .compare_exchange(from, from | BUSY, Ordering::Acquire, Ordering::Relaxed)
                .ok()
        });
        let Some(from) = taken else {
            let state = slot.state.load(Ordering::Acquire);
            return Err(Self::refusal(handle, generation, state));
        };
        // SAFETY: this thread set BUSY: it alone touches the session.
        let session = unsafe { (*slot.session.get()).take() };
        slot.state
            .store(u64::from(generation) << 32, Ordering::Release);
        if let Some(mut session) = session
            && from & BROKEN == 0
        {
            finish(&mut session);
        }
        Ok(())
    }

    /// Sessions open now.
    pub fn open_sessions(&self) -> usize {
        self.slots.get().map_or(0, |slots| {
            slots
                .iter()
                .filter(|s| s.state.load(Ordering::Acquire) & OPEN != 0)
                .count()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_unknown_and_reused_handles_are_told_apart() {
        let r = Registry::new();
        assert!(matches!(
            r.with(1, |v: &mut u32| Ok(*v)),
            Err(FfiError::InvalidHandle(_))
        ));
        let a = r.open(1u32).unwrap();
        let b = r.open(2u32).unwrap();
        assert_ne!(a, b);
        assert_eq!(r.with(a, |v| Ok(*v)).unwrap(), 1);
        let mut finished = 0;
        r.close(a, |v| finished = *v).unwrap();
        assert_eq!(finished, 1);
        assert!(matches!(r.with(a, |v| Ok(*v)), Err(FfiError::Closed(_))));
        assert!(matches!(r.close(a, |_| {}), Err(FfiError::Closed(_))));
        // The slot is reused under a new generation; the old handle stays closed.
        let c = r.open(3u32).unwrap();
        assert_eq!(c & 0xffff_ffff, a & 0xffff_ffff);
        assert!(matches!(r.with(a, |v| Ok(*v)), Err(FfiError::Closed(_))));
        assert_eq!(r.with(c, |v| Ok(*v)).unwrap(), 3);
        for bad in [0, 77, c + (1 << 32), u64::MAX] {
            assert!(
                matches!(r.with(bad, |v| Ok(*v)), Err(FfiError::InvalidHandle(_))),
                "{bad:#x}"
            );
        }
        assert_eq!(r.open_sessions(), 2);
        r.close(b, |_| {}).unwrap();
        r.close(c, |_| {}).unwrap();
        assert_eq!(r.open_sessions(), 0);
    }

    #[test]
    fn a_second_caller_on_a_held_handle_is_busy_and_a_panicked_one_broken() {
        let r = Registry::new();
        let a = r.open(0u32).unwrap();
        let inner = r.with(a, |_| Ok(r.with(a, |_| Ok(()))));
        assert!(matches!(inner, Ok(Err(FfiError::Busy(_)))));
        let inner_close = r.with(a, |_| Ok(r.close(a, |_| {})));
        assert!(matches!(inner_close, Ok(Err(FfiError::Busy(_)))));
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = r.with(a, |_| -> Result<(), FfiError> { panic!("boom") });
        }));
        assert!(matches!(r.with(a, |_| Ok(())), Err(FfiError::Panic(_))));
        // A broken session is closed without its farewell.
        r.close(a, |_| panic!("not called on a broken session"))
            .unwrap();
        assert!(matches!(r.with(a, |_| Ok(())), Err(FfiError::Closed(_))));
        assert_eq!(r.open_sessions(), 0);
    }

    #[test]
    fn the_table_has_room_for_max_open_handles() {
        let r = Registry::new();
        let handles: Vec<_> = (0..HIGHTICK_MAX_OPEN_HANDLES)
            .map(|i| r.open(i).unwrap())
            .collect();
        assert!(matches!(r.open(0), Err(FfiError::TooManyHandles(_))));
        r.close(handles[7], |_| {}).unwrap();
        let again = r.open(7).unwrap();
        assert_eq!(r.with(again, |v| Ok(*v)).unwrap(), 7);
    }
}
