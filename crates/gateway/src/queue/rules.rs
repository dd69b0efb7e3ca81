//! The matching rules, sans IO: which waiting tickets make a match.
//!
//! Tickets are taken oldest first. The oldest unmatched ticket anchors a match
//! and takes the tickets nearest its rating within its window, which widens
//! with its wait ([`MatchRules::window`]); since it is the oldest, its window
//! is the widest of all, so the pairing is symmetric. A ticket (a solo player
//! or a party) fills seats on one team only. Tickets that prefer another
//! region are passed over until both have waited past
//! [`MatchRules::region_fallback_s`]. An anchor that cannot fill every seat
//! waits for more tickets.

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The matching rules (`[matchmaking]` in the gateway's config).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct MatchRules {
    /// Rating difference a fresh ticket accepts.
    pub rating_window: i64,
    /// How much the window widens per second waited.
    pub window_widen_per_s: f64,
    /// Widest window (a ticket waiting long enough takes anyone up to it).
    pub max_window: i64,
    /// Seconds a ticket holds out for its preferred region's players and
    /// hosts before any region will do.
    pub region_fallback_s: u64,
    /// Teams per match (seat `i` is on team `i % teams`, as the arena seats
    /// them); a mode whose players do not divide into them has one team.
    pub teams: usize,
    /// Most players in a party.
    pub max_party_size: usize,
    /// Tickets one matchmaker pass claims per mode.
    pub claim_batch: usize,
    /// Allocations a pass runs at once.
    pub parallel_allocations: usize,
}

impl Default for MatchRules {
    fn default() -> Self {
        Self {
            rating_window: 100,
            window_widen_per_s: 25.0,
            max_window: 1000,
            region_fallback_s: 10,
            teams: 2,
            max_party_size: 5,
            claim_batch: 20_000,
            parallel_allocations: 64,
        }
    }
}

impl MatchRules {
    /// The first field out of range: its name (under `matchmaking.`) and the rule.
    pub fn invalid_field(&self) -> Option<(&'static str, &'static str)> {
        if !(0..=1_000_000).contains(&self.rating_window) {
            return Some(("matchmaking.rating_window", "must be in 0..=1000000"));
        }
        if !(self.window_widen_per_s.is_finite() && (0.0..=1e6).contains(&self.window_widen_per_s))
        {
            return Some(("matchmaking.window_widen_per_s", "must be in 0..=1e6"));
        }
        if !(self.rating_window..=1_000_000).contains(&self.max_window) {
            return Some((
                "matchmaking.max_window",
                "must be in rating_window..=1000000",
            ));
        }
        if self.region_fallback_s > 86_400 {
            return Some(("matchmaking.region_fallback_s", "must be at most 86400"));
        }
        if !(1..=16).contains(&self.teams) {
            return Some(("matchmaking.teams", "must be in 1..=16"));
        }
        if !(1..=64).contains(&self.max_party_size) {
            return Some(("matchmaking.max_party_size", "must be in 1..=64"));
        }
        if !(1..=1_000_000).contains(&self.claim_batch) {
            return Some(("matchmaking.claim_batch", "must be in 1..=1000000"));
        }
        if !(1..=4096).contains(&self.parallel_allocations) {
            return Some(("matchmaking.parallel_allocations", "must be in 1..=4096"));
        }
        None
    }

    /// The rating window of a ticket that has waited `waited_ms`.
    pub fn window(&self, waited_ms: i64) -> i64 {
        let widened = self.rating_window as f64
            + self.window_widen_per_s * (waited_ms.max(0) as f64 / 1000.0);
        (widened as i64).min(self.max_window)
    }

    /// Teams a match of `players` has.
    pub fn teams_of(&self, players: usize) -> usize {
        if players >= self.teams && players.is_multiple_of(self.teams) {
            self.teams
        } else {
            1
        }
    }

    fn past_fallback(&self, waited_ms: i64) -> bool {
        waited_ms >= i64::try_from(self.region_fallback_s * 1000).unwrap_or(i64::MAX)
    }
}

/// One waiting ticket, as the rules see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    /// Players on it.
    pub size: usize,
    /// Its rating.
    pub rating: i64,
    /// Preferred region ("" for any).
    pub region: String,
    /// How long it has waited, ms.
    pub waited_ms: i64,
}

/// A match the rules formed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Formed {
    /// Each ticket (its index in the input) with its team.
    pub tickets: Vec<(usize, usize)>,
    /// The region its hosts should be in ("" for any).
    pub region: String,
    /// Whether only that region's hosts will do (its anchor has not waited
    /// past the fallback yet).
    pub region_only: bool,
}

/// Forms every match it can from `waiting` (oldest first) for a mode of
/// `players` seats in `teams` teams.
pub fn form(waiting: &[Waiting], players: usize, teams: usize, rules: &MatchRules) -> Vec<Formed> {
    let teams = teams.max(1);
    let team_size = players / teams;
    let mut free: BTreeSet<(i64, usize)> = waiting
        .iter()
        .enumerate()
        .filter(|(_, w)| (1..=team_size).contains(&w.size))
        .map(|(i, w)| (w.rating, i))
        .collect();
    let mut out = Vec::new();
    for (a, anchor) in waiting.iter().enumerate() {
        if !free.contains(&(anchor.rating, a)) {
            continue;
        }
        let window = rules.window(anchor.waited_ms);
        let mut room = vec![team_size; teams];
        let mut taken = vec![(a, 0)];
        room[0] -= anchor.size;
        let mut seated = anchor.size;
        let mut region = anchor.region.clone();
        {
            let mut below = free.range(..(anchor.rating, a)).rev().peekable();
            let mut above = free
                .range((anchor.rating, a)..)
                .filter(|&&(_, i)| i != a)
                .peekable();
            while seated < players {
                let next = match (below.peek(), above.peek()) {
                    (Some(&&(lo, _)), Some(&&(hi, _))) => {
                        if anchor.rating - lo <= hi - anchor.rating {
                            below.next()
                        } else {
                            above.next()
                        }
                    }
                    (Some(_), None) => below.next(),
                    (None, Some(_)) => above.next(),
                    (None, None) => None,
                };
                let Some(&(rating, c)) = next else { break };
                if (rating - anchor.rating).abs() > window {
                    // Nearest first: the other side may still be in the window.
                    if (below
                        .peek()
                        .is_none_or(|&&(lo, _)| anchor.rating - lo > window))
                        && (above
                            .peek()
                            .is_none_or(|&&(hi, _)| hi - anchor.rating > window))
                    {
                        break;
                    }
                    continue;
                }
                let candidate = &waiting[c];
                let same_region = candidate.region.is_empty()
                    || region.is_empty()
                    || candidate.region == region
                    || (rules.past_fallback(anchor.waited_ms)
                        && rules.past_fallback(candidate.waited_ms));
                if !same_region {
                    continue;
                }
                let Some(team) = (0..teams)
                    .filter(|&t| room[t] >= candidate.size)
                    .max_by_key(|&t| (room[t], std::cmp::Reverse(t)))
                else {
                    continue;
                };
                room[team] -= candidate.size;
                seated += candidate.size;
                if region.is_empty() {
                    region = candidate.region.clone();
                }
                taken.push((c, team));
            }
        }
        if seated == players {
            for &(i, _) in &taken {
                free.remove(&(waiting[i].rating, i));
            }
            out.push(Formed {
                tickets: taken,
                region_only: !region.is_empty() && !rules.past_fallback(anchor.waited_ms),
                region,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solo(rating: i64, waited_ms: i64) -> Waiting {
        Waiting {
            size: 1,
            rating,
            region: String::new(),
            waited_ms,
        }
    }

    fn rules() -> MatchRules {
        MatchRules {
            rating_window: 100,
            window_widen_per_s: 100.0,
            max_window: 1000,
            region_fallback_s: 10,
            ..MatchRules::default()
        }
    }

    #[test]
    fn the_default_is_valid_and_bounds_name_their_field() {
        assert_eq!(MatchRules::default().invalid_field(), None);
        let bad = MatchRules {
            teams: 0,
            ..MatchRules::default()
        };
        assert_eq!(bad.invalid_field().map(|f| f.0), Some("matchmaking.teams"));
        let bad = MatchRules {
            max_window: 10,
            ..MatchRules::default()
        };
        assert_eq!(
            bad.invalid_field().map(|f| f.0),
            Some("matchmaking.max_window")
        );
    }

    #[test]
    fn the_window_widens_with_the_wait_up_to_its_cap() {
        let r = rules();
        assert_eq!(r.window(0), 100);
        assert_eq!(r.window(2_000), 300);
        assert_eq!(r.window(60_000), 1000);
        // Far apart: no match while fresh, a match once the older one waited.
        let fresh = [solo(1000, 0), solo(1500, 0)];
        assert!(form(&fresh, 2, 2, &r).is_empty());
        let waited = [solo(1000, 4_000), solo(1500, 0)];
        let formed = form(&waited, 2, 2, &r);
        assert_eq!(formed.len(), 1);
        assert_eq!(formed[0].tickets, [(0, 0), (1, 1)]);
    }

    #[test]
    fn nearest_ratings_are_matched_together() {
        let r = rules();
        let w = [solo(1000, 0), solo(2000, 0), solo(1050, 0), solo(2010, 0)];
        let formed = form(&w, 2, 2, &r);
        let pairs: Vec<Vec<usize>> = formed
            .iter()
            .map(|f| f.tickets.iter().map(|t| t.0).collect())
            .collect();
        assert_eq!(pairs, [vec![0, 2], vec![1, 3]]);
    }

    #[test]
    fn a_party_lands_on_one_team() {
        let r = rules();
        let party = Waiting {
            size: 3,
            ..solo(1000, 0)
        };
        let mut w = vec![solo(1000, 0), party, solo(1000, 0)];
        w.extend((0..5).map(|_| solo(1000, 0)));
        let formed = form(&w, 6, 2, &r);
        assert_eq!(formed.len(), 1);
        let f = &formed[0];
        let party_team = f.tickets.iter().find(|t| t.0 == 1).unwrap().1;
        let per_team = |team| {
            f.tickets
                .iter()
                .filter(|t| t.1 == team)
                .map(|t| w[t.0].size)
                .sum::<usize>()
        };
        assert_eq!((per_team(0), per_team(1)), (3, 3));
        assert!(f.tickets.iter().filter(|t| t.1 == party_team).count() == 1);
        // A party larger than a team never forms.
        let big = [Waiting {
            size: 4,
            ..solo(1000, 0)
        }];
        assert!(form(&big, 6, 2, &r).is_empty());
    }

    #[test]
    fn regions_are_kept_apart_until_the_fallback() {
        let r = rules();
        let at = |region: &str, waited_ms| Waiting {
            region: region.to_owned(),
            ..solo(1000, waited_ms)
        };
        let w = [at("eu", 0), at("us", 0), at("eu", 0)];
        let formed = form(&w, 2, 2, &r);
        assert_eq!(formed.len(), 1);
        assert_eq!(
            formed[0].tickets.iter().map(|t| t.0).collect::<Vec<_>>(),
            [0, 2]
        );
        assert_eq!(formed[0].region, "eu");
        assert!(formed[0].region_only);
        let late = [at("eu", 11_000), at("us", 11_000)];
        let formed = form(&late, 2, 2, &r);
        assert_eq!(formed.len(), 1);
        assert!(!formed[0].region_only);
    }

    #[test]
    fn twenty_thousand_solos_form_in_one_pass() {
        let r = rules();
        let w: Vec<Waiting> = (0..20_000).map(|i| solo(1000 + (i % 50), 0)).collect();
        let formed = form(&w, 10, 2, &r);
        assert_eq!(formed.len(), 2_000);
    }
}
