//! [`Registry`]: the handles of one game's client library. A handle is a
//! number (slot and generation), not a pointer, so a closed or made-up
//! handle is recognised and refused instead of dereferenced.

use std::sync::{Arc, Mutex, PoisonError, TryLockError};

use crate::error::FfiError;

/// A client handle as C sees it: opaque, never zero.
pub type HightickClient = u64;

#[derive(Debug)]
struct Slot<T> {
    /// Generation of the newest handle issued for this slot (0: never).
    generation: u32,
    session: Option<Arc<Mutex<T>>>,
}

/// The open sessions of one library, behind numbered handles. Each call
/// takes its session's lock with `try_lock`: a second thread inside a call
/// on the same handle gets [`FfiError::Busy`], never a data race.
#[derive(Debug)]
pub struct Registry<T> {
    slots: Mutex<Vec<Slot<T>>>,
}

impl<T> Default for Registry<T> {
    fn default() -> Self {
        Self::new()
    }
}

fn split(handle: HightickClient) -> (usize, u32) {
    let index = (handle & 0xffff_ffff) as usize;
    (index.wrapping_sub(1), (handle >> 32) as u32)
}

impl<T> Registry<T> {
    /// An empty registry (usable in a `static`).
    pub const fn new() -> Self {
        Self {
            slots: Mutex::new(Vec::new()),
        }
    }

    /// Opens a session; returns its handle. Allocates (a connect does).
    pub fn open(&self, session: T) -> HightickClient {
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        let index = match slots.iter().position(|s| s.session.is_none()) {
            Some(i) => i,
            None => {
                slots.push(Slot {
                    generation: 0,
                    session: None,
                });
                slots.len() - 1
            }
        };
        let slot = &mut slots[index];
        // A slot reused 2^32 times starts over at 1; 0 is never issued.
        slot.generation = slot.generation.checked_add(1).unwrap_or(1);
        slot.session = Some(Arc::new(Mutex::new(session)));
        (u64::from(slot.generation) << 32) | (index as u64 + 1)
    }

    fn find(slots: &[Slot<T>], handle: HightickClient) -> Result<&Arc<Mutex<T>>, FfiError> {
        let (index, generation) = split(handle);
        let slot = slots
            .get(index)
            .filter(|s| generation != 0 && generation <= s.generation)
            .ok_or(FfiError::InvalidHandle(handle))?;
        match &slot.session {
            Some(session) if slot.generation == generation => Ok(session),
            _ => Err(FfiError::Closed(handle)),
        }
    }

    /// Runs `call` on the session of `handle`, unless the handle is closed,
    /// unknown, or busy on another thread.
    pub fn with<R>(
        &self,
        handle: HightickClient,
        call: impl FnOnce(&mut T) -> Result<R, FfiError>,
    ) -> Result<R, FfiError> {
        let session = {
            let slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
            Arc::clone(Self::find(&slots, handle)?)
        };
        let mut guard = lock(&session, handle)?;
        call(&mut guard)
    }

    /// Runs `finish` on the session of `handle` and closes the handle: later
    /// calls with it return [`FfiError::Closed`]. A busy handle stays open.
    pub fn close(
        &self,
        handle: HightickClient,
        finish: impl FnOnce(&mut T),
    ) -> Result<(), FfiError> {
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        let session = Arc::clone(Self::find(&slots, handle)?);
        {
            // A session broken by a panic is closed without its farewell.
            match lock(&session, handle) {
                Ok(mut guard) => finish(&mut guard),
                Err(FfiError::Busy(h)) => return Err(FfiError::Busy(h)),
                Err(_) => {}
            }
        }
        let (index, _) = split(handle);
        slots[index].session = None;
        Ok(())
    }

    /// Sessions open now.
    pub fn open_sessions(&self) -> usize {
        let slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        slots.iter().filter(|s| s.session.is_some()).count()
    }
}

fn lock<T>(
    session: &Mutex<T>,
    handle: HightickClient,
) -> Result<std::sync::MutexGuard<'_, T>, FfiError> {
    match session.try_lock() {
        Ok(guard) => Ok(guard),
        Err(TryLockError::WouldBlock) => Err(FfiError::Busy(handle)),
        Err(TryLockError::Poisoned(_)) => Err(FfiError::Panic(
            "an earlier call on this handle panicked; close it",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_unknown_and_reused_handles_are_told_apart() {
        let r = Registry::new();
        let a = r.open(1u32);
        let b = r.open(2u32);
        assert_ne!(a, b);
        assert_eq!(r.with(a, |v| Ok(*v)).unwrap(), 1);
        r.close(a, |v| *v = 0).unwrap();
        assert!(matches!(r.with(a, |v| Ok(*v)), Err(FfiError::Closed(_))));
        assert!(matches!(r.close(a, |_| {}), Err(FfiError::Closed(_))));
        // The slot is reused under a new generation; the old handle stays closed.
        let c = r.open(3u32);
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
        let _ = b;
    }

    #[test]
    fn a_second_caller_on_a_held_handle_is_busy_and_a_panicked_one_broken() {
        let r = Registry::new();
        let a = r.open(0u32);
        let inner = r.with(a, |_| Ok(r.with(a, |_| Ok(()))));
        assert!(matches!(inner, Ok(Err(FfiError::Busy(_)))));
        let inner_close = r.with(a, |_| Ok(r.close(a, |_| {})));
        assert!(matches!(inner_close, Ok(Err(FfiError::Busy(_)))));
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = r.with(a, |_| -> Result<(), FfiError> { panic!("boom") });
        }));
        assert!(matches!(r.with(a, |_| Ok(())), Err(FfiError::Panic(_))));
        r.close(a, |_| {}).unwrap();
        assert_eq!(r.open_sessions(), 0);
    }
}
