//! Creating a run's matches: `POST /v1/matches` on an instance, and a
//! connect token minted for every seat of it.

use hightick_host_api::CreateMatch;
use hightick_net::Key;
use hightick_swarm::BotTarget;

use crate::error::LabError;
use crate::load::LoadSpec;
use crate::load::admin::AdminClient;
use crate::load::tokens;

/// A match this run created.
#[derive(Debug)]
pub(crate) struct Created {
    /// The instance hosting it (its index in the run's admin clients).
    pub instance: usize,
    /// The match id the host gave it.
    pub id: String,
    /// One bot target per seat.
    pub targets: Vec<BotTarget>,
}

/// Creates match number `serial` of the run on instance `instance` (its roster of
/// `players` client ids and its seed follow from `serial`, so no two of a
/// run's matches share a player) and mints a token for every seat.
pub(crate) fn create_match(
    spec: &LoadSpec,
    admins: &[AdminClient],
    instance: usize,
    key: &Key,
    players: u32,
    serial: u32,
) -> Result<Created, LabError> {
    let roster: Vec<u64> = (1..=u64::from(players))
        .map(|p| 10_000 * (u64::from(serial) + 1) + p)
        .collect();
    let mut request = CreateMatch::new(&spec.mode, roster.clone());
    request.seed = Some(u64::from(serial) + 1);
    request.tick_rate_hz = spec.tick_rate_hz;
    if let serde_json::Value::Object(settings) = &spec.settings {
        request.settings.extend(settings.clone());
    }
    let info = admins[instance].create_match(&request)?;
    let mut targets = Vec::with_capacity(roster.len());
    for id in roster {
        targets.push(BotTarget {
            server: info.address,
            token: tokens::mint_token(key, id, info.address)?,
        });
    }
    Ok(Created {
        instance,
        id: info.id,
        targets,
    })
}

/// Creates the spec's matches round-robin over the instances: match `m` on
/// instance `m mod instances`.
pub(crate) fn create_matches(
    spec: &LoadSpec,
    admins: &[AdminClient],
    key: &Key,
    players: u32,
) -> Result<Vec<Created>, LabError> {
    (0..spec.matches)
        .map(|m| create_match(spec, admins, m as usize % admins.len(), key, players, m))
        .collect()
}
