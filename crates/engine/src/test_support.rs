//! What the unit tests of several modules share.

use crate::world::{Archetype, GroupMask};

/// A test archetype with three field groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Thing;

impl Archetype for Thing {
    fn wire_id(self) -> u8 {
        1
    }
    fn from_wire_id(id: u8) -> Option<Self> {
        (id == 1).then_some(Thing)
    }
    fn groups(self) -> GroupMask {
        GroupMask::first(3)
    }
}
