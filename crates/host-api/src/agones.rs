//! What an Agones allocation tells the host: the match it is for, written
//! by the gateway into a GameServerAllocation's `spec.metadata.annotations`
//! ([`Allocation::annotations`]), copied by the allocator onto the
//! GameServer, and read back by the host ([`Allocation::read`]).
//!
//! Annotations, not labels: a label value holds at most 63 characters of
//! `A-Z a-z 0-9 - _ .`, so a roster of ten account ids or the game's
//! settings would not fit; an annotation holds any text.
//!
//! | key | value | needed |
//! |---|---|---|
//! | `hightick.dev/match-id` | the match's id everywhere (1 to 64 of `A-Z a-z 0-9 . _ -`) | yes |
//! | `hightick.dev/mode` | one of the game's modes | yes |
//! | `hightick.dev/roster` | client ids (decimal), comma-separated, in seat order | yes |
//! | `hightick.dev/worker` | the worker to host it: index `i` of the GameServer port named `game-<i>` | no (placement decides) |
//! | `hightick.dev/tick-rate-hz` | the match's tick rate | no (the mode's) |
//! | `hightick.dev/settings` | the game's match settings, a JSON object | no |
//!
//! Each allocation overwrites the previous one's annotations; a new
//! `match-id` is what marks a new allocation.
//!
//! ```
//! use std::collections::HashMap;
//! use hightick_host_api::agones::{self as annotations, Allocation};
//!
//! let gs: HashMap<String, String> = [
//!     (annotations::MATCH_ID, "m-1"),
//!     (annotations::MODE, "5v5"),
//!     (annotations::ROSTER, "11,12"),
//!     (annotations::WORKER, "1"),
//! ]
//! .into_iter()
//! .map(|(k, v)| (k.to_owned(), v.to_owned()))
//! .collect();
//! let allocation = Allocation::read(&gs).unwrap().expect("an allocation");
//! assert_eq!(allocation.request.match_id.as_deref(), Some("m-1"));
//! assert_eq!(allocation.request.roster, vec![11, 12]);
//! assert_eq!(allocation.worker, Some(1));
//! ```

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use crate::CreateMatch;

/// The match's id (the gateway's).
pub const MATCH_ID: &str = "hightick.dev/match-id";
/// The match's mode.
pub const MODE: &str = "hightick.dev/mode";
/// Client ids, decimal, comma-separated, in seat order.
pub const ROSTER: &str = "hightick.dev/roster";
/// Optional: the worker to host the match (port `game-<i>`).
pub const WORKER: &str = "hightick.dev/worker";
/// Optional: the match's tick rate, Hz.
pub const TICK_RATE_HZ: &str = "hightick.dev/tick-rate-hz";
/// Optional: the game's settings for the match, a JSON object.
pub const SETTINGS: &str = "hightick.dev/settings";

/// The Counter that holds a GameServer's matches: the gateway's allocation
/// takes a slot, the host gives it back when the match ends.
pub const MATCHES_COUNTER: &str = "matches";

/// The name of the GameServer port worker `i` serves (container port: the
/// host's `bind` port + `i`).
pub fn port_name(worker: usize) -> String {
    format!("game-{worker}")
}

/// One allocation's match, as the admin API's create-match takes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Allocation {
    /// The match to create (its `match_id` always set).
    pub request: CreateMatch,
    /// The worker it must go to, if the allocation names one.
    pub worker: Option<usize>,
}

impl Allocation {
    /// Reads the allocation from a GameServer's annotations: `None` when
    /// they name no match; an error names the annotation at fault.
    pub fn read(annotations: &HashMap<String, String>) -> Result<Option<Self>, AnnotationError> {
        let Some(match_id) = annotations.get(MATCH_ID) else {
            return Ok(None);
        };
        let get = |key: &'static str| {
            annotations
                .get(key)
                .map(|v| v.trim())
                .ok_or_else(|| bad(key, "missing"))
        };
        let mode = get(MODE)?;
        if mode.is_empty() {
            return Err(bad(MODE, "empty"));
        }
        let roster = get(ROSTER)?
            .split(',')
            .map(|id| {
                id.trim()
                    .parse::<u64>()
                    .map_err(|_| bad(ROSTER, &format!("`{id}` is no client id")))
            })
            .collect::<Result<Vec<u64>, AnnotationError>>()?;
        let mut request = CreateMatch::new(mode, roster);
        request.match_id = Some(match_id.trim().to_owned());
        request.tick_rate_hz = optional(annotations, TICK_RATE_HZ)?;
        if let Some(text) = annotations.get(SETTINGS) {
            request.settings = serde_json::from_str(text)
                .map_err(|e| bad(SETTINGS, &format!("not a JSON object: {e}")))?;
        }
        Ok(Some(Self {
            request,
            worker: optional(annotations, WORKER)?,
        }))
    }

    /// The match id (always present in a read allocation).
    pub fn match_id(&self) -> &str {
        self.request.match_id.as_deref().unwrap_or_default()
    }

    /// The annotations that describe it, as the gateway writes them into a
    /// GameServerAllocation ([`Allocation::read`] reads them back).
    pub fn annotations(&self) -> BTreeMap<String, String> {
        let request = &self.request;
        let roster: Vec<String> = request.roster.iter().map(u64::to_string).collect();
        let mut out = BTreeMap::from([
            (MATCH_ID.to_owned(), self.match_id().to_owned()),
            (MODE.to_owned(), request.mode.clone()),
            (ROSTER.to_owned(), roster.join(",")),
        ]);
        if let Some(worker) = self.worker {
            out.insert(WORKER.to_owned(), worker.to_string());
        }
        if let Some(rate) = request.tick_rate_hz {
            out.insert(TICK_RATE_HZ.to_owned(), rate.to_string());
        }
        if !request.settings.is_empty() {
            out.insert(
                SETTINGS.to_owned(),
                serde_json::Value::Object(request.settings.clone()).to_string(),
            );
        }
        out
    }
}

fn optional<T: std::str::FromStr>(
    annotations: &HashMap<String, String>,
    key: &'static str,
) -> Result<Option<T>, AnnotationError> {
    annotations
        .get(key)
        .map(|v| {
            v.trim()
                .parse()
                .map_err(|_| bad(key, &format!("`{v}` is not a number")))
        })
        .transpose()
}

fn bad(annotation: &'static str, reason: &str) -> AnnotationError {
    AnnotationError {
        annotation,
        reason: reason.to_owned(),
    }
}

/// An allocation's annotations do not describe a match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnnotationError {
    /// The annotation at fault.
    pub annotation: &'static str,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Display for AnnotationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "allocation annotation `{}`: {}",
            self.annotation, self.reason
        )
    }
}

impl std::error::Error for AnnotationError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn annotations(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn a_game_server_without_a_match_id_holds_no_allocation() {
        let gs = annotations(&[("agones.dev/last-allocated", "x"), (MODE, "5v5")]);
        assert_eq!(Allocation::read(&gs).unwrap(), None);
    }

    #[test]
    fn every_field_is_read() {
        let gs = annotations(&[
            (MATCH_ID, "m-7"),
            (MODE, "duel"),
            (ROSTER, " 3, 4 ,5"),
            (WORKER, "2"),
            (TICK_RATE_HZ, "64"),
            (SETTINGS, r#"{"map":"dust","rounds":3}"#),
        ]);
        let a = Allocation::read(&gs).unwrap().unwrap();
        assert_eq!(a.match_id(), "m-7");
        assert_eq!(a.request.mode, "duel");
        assert_eq!(a.request.roster, vec![3, 4, 5]);
        assert_eq!(a.request.tick_rate_hz, Some(64));
        assert_eq!(a.request.settings["rounds"], 3);
        assert_eq!(a.worker, Some(2));
    }

    #[test]
    fn a_bad_annotation_is_named() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            (&[(MATCH_ID, "m"), (ROSTER, "1")], MODE),
            (&[(MATCH_ID, "m"), (MODE, "5v5")], ROSTER),
            (&[(MATCH_ID, "m"), (MODE, "5v5"), (ROSTER, "1,x")], ROSTER),
            (
                &[
                    (MATCH_ID, "m"),
                    (MODE, "5v5"),
                    (ROSTER, "1"),
                    (WORKER, "-1"),
                ],
                WORKER,
            ),
            (
                &[
                    (MATCH_ID, "m"),
                    (MODE, "5v5"),
                    (ROSTER, "1"),
                    (SETTINGS, "[1]"),
                ],
                SETTINGS,
            ),
        ];
        for (pairs, key) in cases {
            let err = Allocation::read(&annotations(pairs)).unwrap_err();
            assert!(err.to_string().contains(key), "{key}: {err}");
        }
    }

    proptest::proptest! {
        #[test]
        fn what_the_gateway_writes_the_host_reads(
            id in "[A-Za-z0-9._-]{1,64}",
            mode in "[a-z0-9]{1,12}",
            roster in proptest::collection::vec(proptest::num::u64::ANY, 1..12),
            worker in proptest::option::of(0usize..64),
            rate in proptest::option::of(1u32..=256),
            rounds in proptest::option::of(0i64..10),
        ) {
            let mut request = CreateMatch::new(&mode, roster);
            request.match_id = Some(id);
            request.tick_rate_hz = rate;
            if let Some(rounds) = rounds {
                request = request.with("rounds_to_win", rounds);
            }
            let written = Allocation { request, worker };
            let annotations: HashMap<String, String> = written.annotations().into_iter().collect();
            proptest::prop_assert_eq!(Allocation::read(&annotations).unwrap(), Some(written));
        }
    }

    #[test]
    fn ports_are_named_after_workers() {
        assert_eq!(port_name(0), "game-0");
        assert_eq!(port_name(11), "game-11");
    }
}
