//! [`Consistency`]: checks that what a client received hangs together.
//!
//! Counted as desyncs (besides snapshots that fail to decode, which the
//! client core counts itself): an event naming a player entity the client
//! never heard of (neither in its world nor in a join or welcome event), and
//! an enemy whose replicated vitals say dead yet whose position changes.

use hightick_engine::EntityId;
use hightick_engine::replication::ClientWorld;
use hightick_engine::tick::Tick;

use crate::Team;
use crate::event::ArenaEvent;
use crate::game::{ArenaKind, ArenaReplica};

/// Movement a dead body may show between snapshots (quantization), metres.
const DEAD_STILL: f32 = 0.05;

#[derive(Debug, Clone, Copy, Default)]
struct Seen {
    heard: bool,
    /// Position, alive flag and server tick when last checked.
    last: Option<([f32; 3], bool, Tick)>,
}

/// The consistency checks of one client. See the [module docs](self).
#[derive(Debug)]
pub struct Consistency {
    seen: Box<[Seen]>,
    checked_tick: Tick,
    unknown_entities: u64,
    dead_moved: u64,
}

impl Consistency {
    /// Checks for a world of `entities` slots.
    pub fn new(entities: usize) -> Self {
        Self {
            seen: vec![Seen::default(); entities].into_boxed_slice(),
            checked_tick: 0,
            unknown_entities: 0,
            dead_moved: 0,
        }
    }

    /// Events that named an entity never heard of.
    pub fn unknown_entities(&self) -> u64 {
        self.unknown_entities
    }

    /// Enemies that moved while dead.
    pub fn dead_moved(&self) -> u64 {
        self.dead_moved
    }

    fn hear(&mut self, e: EntityId) {
        if let Some(s) = self.seen.get_mut(usize::from(e.0)) {
            s.heard = true;
        }
    }

    fn known(&self, e: EntityId) -> bool {
        self.seen.get(usize::from(e.0)).is_some_and(|s| s.heard)
    }

    /// Checks one event; `false` if it names an entity never heard of.
    pub fn check_event(&mut self, event: &ArenaEvent) -> bool {
        let ok = match *event {
            ArenaEvent::Welcome { player, .. } | ArenaEvent::PlayerJoined { player, .. } => {
                self.hear(player);
                true
            }
            ArenaEvent::ShotHit {
                shooter, target, ..
            } => self.known(shooter) && self.known(target),
            ArenaEvent::Kill { killer, victim, .. } => self.known(killer) && self.known(victim),
            ArenaEvent::PlayerLeft { player, .. } => self.known(player),
            _ => true,
        };
        if !ok {
            self.unknown_entities += 1;
        }
        ok
    }

    /// Checks the world after snapshots arrived (once per new server tick);
    /// returns how many inconsistencies it found. `my_team`: enemies are the
    /// players of the other team.
    pub fn check_world(&mut self, world: &ClientWorld<ArenaReplica>, my_team: Option<Team>) -> u64 {
        let tick = world.server_tick();
        if tick == self.checked_tick {
            return 0;
        }
        let previous_check = self.checked_tick;
        self.checked_tick = tick;
        let mut found = 0;
        for e in world.iter() {
            if e.archetype != ArenaKind::Player {
                continue;
            }
            let Some(s) = self.seen.get_mut(usize::from(e.entity.0)) else {
                continue;
            };
            s.heard = true;
            let (Some(t), Some(v)) = (e.state.transform, e.state.vitals) else {
                s.last = None;
                continue;
            };
            // Compare only with the previous check, and only if it held the
            // entity then (an entity out of sight in between may respawn).
            let previous = s.last.filter(|(_, _, at)| *at == previous_check);
            let enemy = my_team.is_some_and(|team| v.team != team);
            if enemy
                && let Some((p, alive, _)) = previous
                && !alive
                && !v.alive
                && distance(p, t.position) > DEAD_STILL
            {
                found += 1;
            }
            s.last = Some((t.position, v.alive, tick));
        }
        self.dead_moved += found;
        found
    }
}

fn distance(a: [f32; 3], b: [f32; 3]) -> f32 {
    let d = [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_about_entities_never_heard_of_are_caught() {
        let mut c = Consistency::new(8);
        let kill = ArenaEvent::Kill {
            killer: EntityId(2),
            victim: EntityId(4),
            weapon: 0,
            headshot: false,
        };
        assert!(!c.check_event(&kill));
        for e in [2, 4] {
            assert!(c.check_event(&ArenaEvent::PlayerJoined {
                player: EntityId(e),
                team: Team::Attackers,
            }));
        }
        assert!(c.check_event(&kill));
        // Out of range ids are never heard of, and never panic.
        assert!(!c.check_event(&ArenaEvent::PlayerLeft {
            player: EntityId(100),
            reason: crate::event::LeaveReason::Kicked,
        }));
        assert_eq!(c.unknown_entities(), 2);
    }
}
