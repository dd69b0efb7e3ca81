//! Churn: during a run, each match that ended is replaced by a new one on
//! the same instance with bots of its own, so the matches hosted stay at
//! the spec's count and a soak covers match set-up and teardown.
//!
//! A match has ended when its host no longer lists it (`GET /v1/matches`):
//! a finished match stays listed while it lingers, until it is retired (its
//! players told goodbye, its seats freed), so a replacement never runs
//! beside the match it replaces. A create that fails is tried again at the
//! next call; the samples' hosted matches show any shortfall.

use std::collections::HashSet;
use std::time::Instant;

use hightick_engine::BotGame;
use hightick_net::Key;
use hightick_swarm::FleetConfig;

use crate::error::LabError;
use crate::load::LoadSpec;
use crate::load::admin::AdminClient;
use crate::load::create::{Created, create_match};
use crate::load::fleets::BotFleets;

/// See the [module docs](self).
#[derive(Debug)]
pub(crate) struct Churn {
    /// Per instance, the ids of the run's matches it hosts.
    hosted: Vec<Vec<String>>,
    /// Per instance, matches that ended and are not replaced yet.
    owed: Vec<usize>,
    key: Key,
    players: u32,
    /// The serial of the next match created.
    next: u32,
    /// Matches started in place of ended ones.
    started: u64,
    /// The bots' settings.
    config: FleetConfig,
    /// When every bot of the run stops at the latest.
    bots_until: Instant,
}

impl Churn {
    /// Churn over the run's first matches, `created`, on `instances`
    /// instances, whose replacements' bots play with `config` until
    /// `bots_until`.
    pub(crate) fn new(
        created: &[Created],
        instances: usize,
        key: &Key,
        players: u32,
        config: FleetConfig,
        bots_until: Instant,
    ) -> Self {
        let mut hosted = vec![Vec::new(); instances];
        for c in created {
            hosted[c.instance].push(c.id.clone());
        }
        Self {
            hosted,
            owed: vec![0; instances],
            key: key.clone(),
            players,
            next: u32::try_from(created.len()).unwrap_or(u32::MAX),
            started: 0,
            config,
            bots_until,
        }
    }

    /// Matches started in place of ended ones so far.
    pub(crate) fn started(&self) -> u64 {
        self.started
    }

    /// Replaces every match that ended since the last call (and any still
    /// owed) with a new one of `spec` on the same instance, its bots joining
    /// `fleets`; folds the bots that left into the fleets' report.
    pub(crate) fn replace_ended<G: BotGame>(
        &mut self,
        spec: &LoadSpec,
        admins: &[AdminClient],
        fleets: &mut BotFleets,
    ) -> Result<(), LabError> {
        fleets.reap();
        for instance in 0..admins.len() {
            let Ok(listed) = admins[instance].matches() else {
                continue;
            };
            let listed: HashSet<String> = listed.into_iter().map(|m| m.id).collect();
            let before = self.hosted[instance].len();
            self.hosted[instance].retain(|id| listed.contains(id));
            self.owed[instance] += before - self.hosted[instance].len();
            while self.owed[instance] > 0 {
                // A serial per try: a create that timed out may have landed.
                let serial = self.next;
                self.next += 1;
                let Ok(created) =
                    create_match(spec, admins, instance, &self.key, self.players, serial)
                else {
                    break;
                };
                let config = FleetConfig {
                    duration: self.bots_until.saturating_duration_since(Instant::now()),
                    ..self.config.clone()
                };
                fleets.join::<G>(&created.targets, &config)?;
                self.hosted[instance].push(created.id);
                self.owed[instance] -= 1;
                self.started += 1;
            }
        }
        Ok(())
    }
}
