//! Exclusive-time accounting for nested scopes within one open frame.
//!
//! The open frame keeps a stack of open scopes and a "mark": the raw clock
//! reading of the last transition. Every transition (a scope opening or
//! closing) reads the clock once and charges the time since the mark to the
//! scope on top of the stack, so time inside a child is charged to the child
//! only. Time with no scope open is charged to nobody (it shows as the
//! frame's unattributed time). Sums are kept in raw clock units and scaled to
//! nanoseconds once, when the frame closes.

use std::cell::Cell;

use crate::clock::TscClock;
use crate::sub_scope::SubScopeId;
use crate::subsystem::Subsystem;

/// How deep scopes may nest; deeper scopes are counted and their time stays
/// with the deepest open scope.
pub const MAX_SCOPE_DEPTH: usize = 32;

const NO_SUB: u16 = u16::MAX;
const INERT: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Entry {
    subsystem: Subsystem,
    sub: u16,
}

const BOTTOM: Entry = Entry {
    subsystem: Subsystem::Other,
    sub: NO_SUB,
};

/// The accounting state of the frame being recorded.
#[derive(Debug)]
pub(crate) struct LiveFrame {
    clock: TscClock,
    mark: Cell<u64>,
    depth: Cell<usize>,
    stack: [Cell<Entry>; MAX_SCOPE_DEPTH],
    subsystem_raw: [Cell<u64>; Subsystem::COUNT],
    sub_raw: Box<[Cell<u64>]>,
    depth_overflow: Cell<u64>,
}

impl LiveFrame {
    pub(crate) fn new(clock: TscClock, sub_scopes: usize) -> Self {
        Self {
            clock,
            mark: Cell::new(0),
            depth: Cell::new(0),
            stack: std::array::from_fn(|_| Cell::new(BOTTOM)),
            subsystem_raw: std::array::from_fn(|_| Cell::new(0)),
            sub_raw: (0..sub_scopes).map(|_| Cell::new(0)).collect(),
            depth_overflow: Cell::new(0),
        }
    }

    /// Starts accounting a new frame at raw time `now`. Only the first
    /// `registered` sub-scope sums can hold time from an earlier frame; the
    /// rest have never been charged.
    pub(crate) fn begin(&self, now: u64, registered: usize) {
        for c in &self.subsystem_raw {
            c.set(0);
        }
        for c in self.sub_raw.iter().take(registered) {
            c.set(0);
        }
        self.mark.set(now);
        self.depth.set(0);
    }

    /// Stops accounting at raw time `now`, closing any scope left open.
    pub(crate) fn finish(&self, now: u64) {
        if let Some(top) = self.top() {
            self.charge(top, now);
        }
        self.mark.set(now);
        self.depth.set(0);
    }

    /// Raw time charged to `subsystem` in this frame.
    pub(crate) fn subsystem_raw(&self, subsystem: Subsystem) -> u64 {
        self.subsystem_raw[subsystem.index()].get()
    }

    /// Raw time charged to each sub-scope in this frame, by id.
    pub(crate) fn sub_raw(&self) -> impl Iterator<Item = u64> + '_ {
        self.sub_raw.iter().map(Cell::get)
    }

    /// Scopes opened deeper than [`MAX_SCOPE_DEPTH`] since creation.
    pub(crate) fn depth_overflow(&self) -> u64 {
        self.depth_overflow.get()
    }

    #[inline]
    fn top(&self) -> Option<Entry> {
        let d = self.depth.get();
        if d == 0 {
            None
        } else {
            self.stack.get(d - 1).map(Cell::get)
        }
    }

    #[inline(always)]
    fn charge(&self, entry: Entry, now: u64) {
        // Saturating: a thread moved between cores whose counters disagree
        // must not charge 2^64 ticks.
        let delta = now.saturating_sub(self.mark.get());
        let s = &self.subsystem_raw[entry.subsystem.index()];
        s.set(s.get() + delta);
        if let Some(c) = self.sub_raw.get(usize::from(entry.sub)) {
            c.set(c.get() + delta);
        }
    }

    #[inline]
    pub(crate) fn open(&self, subsystem: Subsystem, sub: Option<SubScopeId>) -> Scope<'_> {
        let now = self.clock.raw();
        let d = self.depth.get();
        if let Some(top) = self.top() {
            self.charge(top, now);
        }
        self.mark.set(now);
        let Some(slot) = self.stack.get(d) else {
            self.depth_overflow.set(self.depth_overflow.get() + 1);
            return Scope {
                live: self,
                level: INERT,
                #[cfg(feature = "tracy")]
                zone: None,
            };
        };
        slot.set(Entry {
            subsystem,
            sub: sub.map_or(NO_SUB, |id| id.index() as u16),
        });
        self.depth.set(d + 1);
        Scope {
            live: self,
            level: d as u32,
            #[cfg(feature = "tracy")]
            zone: None,
        }
    }

    #[inline]
    fn close(&self, level: u32) {
        if level == INERT {
            return;
        }
        let level = level as usize;
        // A scope already closed because an outer scope was dropped before it
        // has nothing left to charge.
        let Some(top) = self.top().filter(|_| self.depth.get() > level) else {
            return;
        };
        let now = self.clock.raw();
        self.charge(top, now);
        self.mark.set(now);
        self.depth.set(level);
    }
}

/// An open scope: from its creation until it is dropped, frame time is
/// charged to its subsystem (and sub-scope), except time inside scopes nested
/// in it. Create one with [`Frame::scope`](crate::Frame::scope) or
/// [`Frame::enter`](crate::Frame::enter) and keep it in a `let _s` binding;
/// scopes close in reverse order of opening, as bindings drop.
#[derive(Debug)]
#[must_use = "a scope measures until it is dropped; bind it with `let _s = ...`"]
pub struct Scope<'f> {
    live: &'f LiveFrame,
    level: u32,
    /// Feature `tracy`: the scope's Tracy zone, ended after the scope closes.
    #[cfg(feature = "tracy")]
    zone: Option<crate::tracy::Zone>,
}

impl Scope<'_> {
    /// The scope, also a Tracy zone of `subsystem` named `name` (feature
    /// `tracy`; without it, the scope as it is).
    #[cfg(feature = "tracy")]
    #[inline]
    pub(crate) fn traced(mut self, subsystem: Subsystem, name: &'static str) -> Self {
        self.zone = crate::tracy::zone(subsystem, name);
        self
    }

    /// Without feature `tracy`: the scope as it is.
    #[cfg(not(feature = "tracy"))]
    #[inline(always)]
    pub(crate) fn traced(self, _: Subsystem, _: &'static str) -> Self {
        self
    }
}

impl Drop for Scope<'_> {
    #[inline]
    fn drop(&mut self) {
        self.live.close(self.level);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::MockTime;

    fn live() -> (LiveFrame, MockTime) {
        let (clock, time) = TscClock::mock();
        let live = LiveFrame::new(clock, 4);
        live.begin(0, 4);
        (live, time)
    }

    fn id(i: u16) -> Option<SubScopeId> {
        Some(SubScopeId::for_tests(i))
    }

    #[test]
    fn nested_time_is_charged_to_the_child_only() {
        let (live, time) = live();
        time.advance(5); // outside every scope: nobody's
        {
            let _outer = live.open(Subsystem::Movement, id(0));
            time.advance(10);
            {
                let _inner = live.open(Subsystem::Physics, id(1));
                time.advance(100);
            }
            time.advance(20);
        }
        time.advance(7);
        live.finish(142);
        assert_eq!(live.subsystem_raw(Subsystem::Movement), 30);
        assert_eq!(live.subsystem_raw(Subsystem::Physics), 100);
        let subs: Vec<u64> = live.sub_raw().collect();
        assert_eq!(subs, [30, 100, 0, 0]);
    }

    #[test]
    fn a_child_of_the_same_subsystem_keeps_its_own_sub_scope() {
        let (live, time) = live();
        {
            let _step = live.open(Subsystem::Movement, id(0));
            time.advance(10);
            let _collide = live.open(Subsystem::Movement, id(1));
            time.advance(40);
        }
        assert_eq!(live.subsystem_raw(Subsystem::Movement), 50);
        let subs: Vec<u64> = live.sub_raw().collect();
        assert_eq!(subs, [10, 40, 0, 0]);
    }

    #[test]
    fn dropping_an_outer_scope_first_closes_the_inner_ones() {
        let (live, time) = live();
        let outer = live.open(Subsystem::Fow, None);
        time.advance(10);
        let inner = live.open(Subsystem::Replication, None);
        time.advance(20);
        drop(outer);
        time.advance(1_000);
        drop(inner); // already closed: charges nothing
        live.finish(0);
        assert_eq!(live.subsystem_raw(Subsystem::Fow), 10);
        assert_eq!(live.subsystem_raw(Subsystem::Replication), 20);
    }

    #[test]
    fn scopes_past_the_depth_limit_are_counted_and_charged_to_the_deepest() {
        let (live, time) = live();
        let mut open = Vec::new();
        for _ in 0..MAX_SCOPE_DEPTH {
            open.push(live.open(Subsystem::Gameplay, None));
        }
        let extra = live.open(Subsystem::Network, None);
        time.advance(50);
        drop(extra);
        assert_eq!(live.depth_overflow(), 1);
        while let Some(s) = open.pop() {
            drop(s);
        }
        assert_eq!(live.subsystem_raw(Subsystem::Gameplay), 50);
        assert_eq!(live.subsystem_raw(Subsystem::Network), 0);
    }

    #[test]
    fn finish_charges_scopes_left_open() {
        let (live, time) = live();
        let s = live.open(Subsystem::Animation, None);
        time.advance(70);
        live.finish(70);
        std::mem::forget(s);
        assert_eq!(live.subsystem_raw(Subsystem::Animation), 70);
        live.begin(70, 4);
        assert_eq!(live.subsystem_raw(Subsystem::Animation), 0);
    }
}
