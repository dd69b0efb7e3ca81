//! The frame profiler hook (cargo feature `tracy`; without it this module
//! is not compiled, and scopes and frames carry nothing of it).
//!
//! - Every [`Scope`](crate::scope::Scope) is also a Tracy zone named after its
//!   subsystem (`movement`, `replication`, ...), with its sub-scope name
//!   (`collide`) as the zone's text: Tracy's statistics group by subsystem,
//!   and each zone still says what it was.
//! - Every [`Frame`](crate::recorder::Frame) (one match tick on a server worker) is a
//!   discontinuous Tracy frame named after its thread (`tick
//!   hightick-worker-0`: frames of one name must not overlap, and a thread
//!   records one frame at a time), holding a `tick` zone whose value is the
//!   tick number.
//!
//! The Tracy client starts with the process, listens on localhost only and
//! collects only while a profiler is connected (tracy-client features
//! `only-localhost`, `ondemand`); docs/PROFILING.md says how to attach one.

use std::fmt;

use tracy_client::{Client, FrameName, Span, SpanLocation, span_location};

use crate::subsystem::Subsystem;

/// One scope's zone; it ends when dropped.
pub(crate) struct Zone {
    _span: Span,
}

impl fmt::Debug for Zone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Zone")
    }
}

/// The zone location of each subsystem (a static per name, as Tracy wants).
fn location(subsystem: Subsystem) -> &'static SpanLocation {
    macro_rules! by_subsystem {
        ($($variant:ident => $name:literal),* $(,)?) => {
            match subsystem {
                $(Subsystem::$variant => span_location!($name),)*
            }
        };
    }
    by_subsystem! {
        Replication => "replication",
        Fow => "fow",
        Network => "network",
        Animation => "animation",
        Gameplay => "gameplay",
        Movement => "movement",
        Equippable => "equippable",
        Character => "character",
        Physics => "physics",
        Other => "other",
    }
}

/// Opens the zone of a scope of `subsystem` named `name` (`""`: none);
/// `None` while no profiler is connected (one check instead of a zone's
/// three calls into the client).
#[inline]
pub(crate) fn zone(subsystem: Subsystem, name: &'static str) -> Option<Zone> {
    if !Client::is_connected() {
        return None;
    }
    let span = Client::start().span(location(subsystem), 0);
    if !name.is_empty() {
        span.emit_text(name);
    }
    Some(Zone { _span: span })
}

thread_local! {
    /// This thread's frame name, made (and leaked, as Tracy keeps it) once.
    static FRAME_NAME: FrameName = FrameName::new_leak(format!(
        "tick {}",
        std::thread::current().name().unwrap_or("thread")
    ));
}

/// One recorded frame as a Tracy frame; it ends when dropped.
pub(crate) struct TickFrame {
    // Fields drop in order: the zone ends inside the frame.
    _zone: Span,
    _frame: tracy_client::Frame,
}

impl fmt::Debug for TickFrame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TickFrame")
    }
}

/// Starts the Tracy frame of `tick` on this thread (`None` while no
/// profiler is connected).
#[inline]
pub(crate) fn tick_frame(tick: u64) -> Option<TickFrame> {
    if !Client::is_connected() {
        return None;
    }
    let client = Client::start();
    let frame = client.non_continuous_frame(FRAME_NAME.with(|name| *name));
    let zone = client.span(span_location!("tick"), 0);
    zone.emit_value(tick);
    Some(TickFrame {
        _zone: zone,
        _frame: frame,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zones_and_frames_open_and_close_without_a_profiler() {
        for s in Subsystem::ALL {
            let _z = zone(s, "named");
            let _u = zone(s, "");
        }
        drop(tick_frame(7));
        // The same with the client's zone calls (connected or not, these must
        // pair up): a zone per subsystem, text and all.
        for s in Subsystem::ALL {
            let span = Client::start().span(location(s), 0);
            span.emit_text("named");
        }
        let a = FRAME_NAME.with(|n| *n);
        assert!(a == FRAME_NAME.with(|n| *n), "one name per thread");
    }
}
