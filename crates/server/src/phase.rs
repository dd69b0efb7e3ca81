//! Phase groups: where in its tick period each match of a worker ticks.
//!
//! Every wake-up of a worker has a cost of its own besides the ticks it runs:
//! on a virtual machine the vCPU halted while the worker slept, and the tick
//! path's code, the socket's state and the secure layer's tables come back
//! into cache and TLB at the first tick after it. Measured on the 2-vCPU
//! development host, 8 matches on 2 workers: ticking each worker's matches
//! back to back on one wake-up instead of one wake-up per match took about
//! 20 us of server CPU off every wake-up saved (docs/PERFORMANCE.md, "Phase
//! groups").
//!
//! So matches tick in *phase groups*. The members of a group share one
//! deadline and tick one after another on one wake-up, in the order they
//! joined. A group takes a new member while the members' budgeted mean tick
//! times (the mode's `tick.mean_us` from the budgets file) add up to at most
//! `share` of the period, so even at its budget the last member of a full
//! group starts at most that share of a period after its deadline. The next
//! match opens a new group, and groups are staggered across the period (at
//! 0, 1/2, 1/4, 3/4, 1/8, ... of it: [`phase_fraction`]), which spreads a
//! dense worker's load over the period as a per-match stagger would.
//!
//! A mode without a tick budget has no known cost and gets a group of its
//! own; `share = 0` gives every match its own phase (the full stagger).
//! Groups are per tick rate: a 64 Hz match never shares a deadline with a
//! 128 Hz one. An emptied group is removed and its phase is the first reused.

use std::time::{Duration, Instant};

/// Phase offset of the group with index `k`, as a fraction of the tick
/// period: 0, 1/2, 1/4, 3/4, 1/8, ... (van der Corput), so phases spread
/// evenly over the period whatever their number.
pub(crate) fn phase_fraction(k: u64) -> f64 {
    let mut k = k;
    let (mut fraction, mut scale) = (0.0, 0.5);
    while k > 0 {
        if k & 1 == 1 {
            fraction += scale;
        }
        k >>= 1;
        scale /= 2.0;
    }
    fraction
}

/// Which phase group a match joined, to leave it when the match ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Membership {
    /// The group's phase index (unique among a worker's live groups).
    pub group: u64,
    /// What the match counts for in the group's load.
    pub cost: Duration,
}

/// One group: its phase, its rate, what its members are budgeted to cost.
#[derive(Debug, Clone, Copy)]
struct Group {
    index: u64,
    period: Duration,
    load: Duration,
    members: usize,
}

/// The phase groups of one worker.
#[derive(Debug)]
pub(crate) struct PhasePlan {
    /// Phase 0 of every period (the worker's start).
    epoch: Instant,
    /// Share of a period one group's budgeted tick means may fill.
    share: f64,
    groups: Vec<Group>,
}

impl PhasePlan {
    /// No groups yet; phases count from `epoch`.
    pub(crate) fn new(epoch: Instant, share: f64) -> Self {
        Self {
            epoch,
            share: share.max(0.0),
            groups: Vec::new(),
        }
    }

    /// Places a new match that ticks every `period` and is budgeted to cost
    /// `cost` per tick (`None`: unknown). Returns its membership and its
    /// first deadline: on its group's phase, at least one period after
    /// `now` (its clients have that long to connect before it ticks).
    pub(crate) fn join(
        &mut self,
        period: Duration,
        cost: Option<Duration>,
        now: Instant,
    ) -> (Membership, Instant) {
        let room = period.mul_f64(self.share);
        // Unknown cost: as if it filled a group by itself.
        let cost = cost.unwrap_or(period).max(Duration::from_nanos(1));
        let joined = self
            .groups
            .iter_mut()
            .find(|g| g.period == period && g.load + cost <= room);
        let group = match joined {
            Some(group) => group,
            None => {
                let index = (0..)
                    .find(|i| self.groups.iter().all(|g| g.index != *i))
                    .expect("fewer groups than u64 values");
                self.groups.push(Group {
                    index,
                    period,
                    load: Duration::ZERO,
                    members: 0,
                });
                self.groups.last_mut().expect("just pushed")
            }
        };
        group.load += cost;
        group.members += 1;
        let membership = Membership {
            group: group.index,
            cost,
        };
        let phase = self.epoch + period.mul_f64(phase_fraction(group.index));
        (membership, next_on_grid(phase, period, now + period))
    }

    /// A match left its group (it ended); an emptied group is removed.
    pub(crate) fn leave(&mut self, membership: Membership) {
        if let Some(i) = self.groups.iter().position(|g| g.index == membership.group) {
            let group = &mut self.groups[i];
            group.load = group.load.saturating_sub(membership.cost);
            group.members = group.members.saturating_sub(1);
            if group.members == 0 {
                self.groups.swap_remove(i);
            }
        }
    }

    /// Live groups.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.groups.len()
    }
}

/// The first instant `phase + n * period` (n >= 0) at or after `earliest`.
pub(crate) fn next_on_grid(phase: Instant, period: Duration, earliest: Instant) -> Instant {
    let behind = earliest.saturating_duration_since(phase);
    let period_ns = period.as_nanos().max(1);
    let periods = behind.as_nanos().div_ceil(period_ns);
    phase + Duration::from_nanos((periods * period_ns) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PERIOD: Duration = Duration::from_nanos(7_812_500);
    const US_300: Option<Duration> = Some(Duration::from_micros(300));

    #[test]
    fn phases_spread_over_the_period() {
        let first: Vec<f64> = (0..4).map(phase_fraction).collect();
        assert_eq!(first, vec![0.0, 0.5, 0.25, 0.75]);
        let mut eight: Vec<f64> = (0..8).map(phase_fraction).collect();
        eight.sort_by(f64::total_cmp);
        for (i, f) in eight.iter().enumerate() {
            assert_eq!(*f, i as f64 / 8.0);
        }
    }

    #[test]
    fn matches_share_a_deadline_until_their_budgets_fill_the_share() {
        let epoch = Instant::now();
        let mut plan = PhasePlan::new(epoch, 0.25);
        // 0.25 of 7.8125 ms holds six 300 us budgets (1.8 ms), not seven.
        let placed: Vec<(Membership, Instant)> =
            (0..8).map(|_| plan.join(PERIOD, US_300, epoch)).collect();
        for (m, deadline) in &placed[..6] {
            assert_eq!(m.group, 0);
            assert_eq!(*deadline, epoch + PERIOD);
        }
        for (m, deadline) in &placed[6..] {
            assert_eq!(m.group, 1);
            assert_eq!(*deadline, epoch + PERIOD + PERIOD / 2);
        }
        assert_eq!(plan.len(), 2);
    }

    #[test]
    fn a_late_joiner_lands_on_its_groups_grid() {
        let epoch = Instant::now();
        let mut plan = PhasePlan::new(epoch, 0.25);
        let (_, first) = plan.join(PERIOD, US_300, epoch);
        let later = epoch + Duration::from_millis(1234);
        let (m, deadline) = plan.join(PERIOD, US_300, later);
        assert_eq!(m.group, 0);
        assert!(deadline >= later + PERIOD && deadline < later + PERIOD * 2);
        let offset = deadline.duration_since(first).as_nanos();
        assert_eq!(offset % PERIOD.as_nanos(), 0);
    }

    #[test]
    fn zero_share_or_unknown_cost_gives_each_match_its_own_phase() {
        let epoch = Instant::now();
        let mut full_stagger = PhasePlan::new(epoch, 0.0);
        let groups: Vec<u64> = (0..4)
            .map(|_| full_stagger.join(PERIOD, US_300, epoch).0.group)
            .collect();
        assert_eq!(groups, [0, 1, 2, 3]);
        let mut unknown = PhasePlan::new(epoch, 0.25);
        let groups: Vec<u64> = (0..3)
            .map(|_| unknown.join(PERIOD, None, epoch).0.group)
            .collect();
        assert_eq!(groups, [0, 1, 2]);
    }

    #[test]
    fn rates_do_not_share_a_group() {
        let epoch = Instant::now();
        let mut plan = PhasePlan::new(epoch, 0.25);
        let (a, _) = plan.join(PERIOD, US_300, epoch);
        let (b, deadline) = plan.join(PERIOD * 2, US_300, epoch);
        assert_ne!(a.group, b.group);
        assert_eq!(deadline, epoch + PERIOD * 2 + PERIOD);
    }

    #[test]
    fn leaving_frees_room_and_an_empty_groups_phase_is_reused_first() {
        let epoch = Instant::now();
        let mut plan = PhasePlan::new(epoch, 0.25);
        let members: Vec<Membership> = (0..7).map(|_| plan.join(PERIOD, US_300, epoch).0).collect();
        // Group 0 is full: one leaves, the next joins it instead of group 1.
        plan.leave(members[0]);
        assert_eq!(plan.join(PERIOD, US_300, epoch).0.group, 0);
        // Group 1 empties and goes; group 0 full again, so phase 1 returns.
        plan.leave(members[6]);
        assert_eq!(plan.len(), 1);
        let (m, deadline) = plan.join(PERIOD, US_300, epoch);
        assert_eq!(m.group, 1);
        assert_eq!(deadline, epoch + PERIOD + PERIOD / 2);
    }

    #[test]
    fn the_grid_rounds_up_to_the_next_phase() {
        let phase = Instant::now();
        assert_eq!(next_on_grid(phase, PERIOD, phase), phase);
        assert_eq!(
            next_on_grid(phase, PERIOD, phase + Duration::from_nanos(1)),
            phase + PERIOD
        );
        assert_eq!(next_on_grid(phase + PERIOD, PERIOD, phase), phase + PERIOD);
    }
}
