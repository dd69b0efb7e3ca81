//! One frame's record: where the time of one tick went.

use crate::sub_scope::SubScopeId;
use crate::subsystem::Subsystem;

/// The time of one frame, split by subsystem and registered sub-scope.
/// Subsystem and sub-scope times are exclusive: a nested scope's time belongs
/// to the nested scope only, so nothing is counted twice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameRecord {
    /// The tick this frame ran.
    pub tick: u64,
    /// When the frame began, in nanoseconds since the recorder was created.
    pub start_ns: u64,
    /// The whole frame, in nanoseconds.
    pub total_ns: u64,
    /// Whether the frame overran the tick period.
    pub late: bool,
    /// Nanoseconds per subsystem, in [`Subsystem::index`] order.
    pub subsystem_ns: [u64; Subsystem::COUNT],
    /// Nanoseconds per sub-scope, indexed by [`SubScopeId::index`]; as long as
    /// the recorder's sub-scope capacity.
    pub sub_scope_ns: Vec<u64>,
}

impl FrameRecord {
    /// An empty record with room for `sub_scopes` sub-scopes.
    pub fn new(sub_scopes: usize) -> Self {
        Self {
            tick: 0,
            start_ns: 0,
            total_ns: 0,
            late: false,
            subsystem_ns: [0; Subsystem::COUNT],
            sub_scope_ns: vec![0; sub_scopes],
        }
    }

    /// Nanoseconds spent in `subsystem` (exclusive of nested scopes).
    pub fn subsystem(&self, subsystem: Subsystem) -> u64 {
        self.subsystem_ns[subsystem.index()]
    }

    /// Nanoseconds spent in a sub-scope (0 for an unknown id).
    pub fn sub_scope(&self, id: SubScopeId) -> u64 {
        self.sub_scope_ns.get(id.index()).copied().unwrap_or(0)
    }

    /// Nanoseconds inside any scope.
    pub fn attributed_ns(&self) -> u64 {
        self.subsystem_ns.iter().sum()
    }

    /// Nanoseconds of the frame spent outside every scope.
    pub fn unattributed_ns(&self) -> u64 {
        self.total_ns.saturating_sub(self.attributed_ns())
    }

    /// Copies `other` into `self` without allocating when both have the same
    /// sub-scope capacity.
    pub fn copy_from(&mut self, other: &FrameRecord) {
        self.tick = other.tick;
        self.start_ns = other.start_ns;
        self.total_ns = other.total_ns;
        self.late = other.late;
        self.subsystem_ns = other.subsystem_ns;
        self.sub_scope_ns.clone_from(&other.sub_scope_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unattributed_is_what_no_scope_claimed() {
        let mut r = FrameRecord::new(2);
        r.total_ns = 1_000;
        r.subsystem_ns[Subsystem::Fow.index()] = 300;
        r.subsystem_ns[Subsystem::Network.index()] = 200;
        assert_eq!(r.subsystem(Subsystem::Fow), 300);
        assert_eq!(r.attributed_ns(), 500);
        assert_eq!(r.unattributed_ns(), 500);
        let mut copy = FrameRecord::new(2);
        copy.copy_from(&r);
        assert_eq!(copy, r);
    }
}
