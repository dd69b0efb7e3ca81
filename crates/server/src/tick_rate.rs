//! A match's own tick rate: `POST /v1/matches` may run a preset at another
//! rate than its own. The rate reaches everything counted in ticks (the
//! engine's rate, the round phases' lengths) so a match at 64 Hz plays the
//! same seconds as one at 128 Hz; the mode's name, and so its per-tick
//! budgets, stay the preset's.

use std::time::Duration;

use hightick_arena::scenario::Scenario;

/// Rates a match may run at, in Hz.
pub const TICK_RATES_HZ: std::ops::RangeInclusive<u32> = 1..=256;

/// `scenario` rerun at `rate_hz`: phase lengths rescaled (at least one tick
/// each), the name kept. An error names the field when the rate is out of
/// [`TICK_RATES_HZ`].
pub(crate) fn at_rate(scenario: &mut Scenario, rate_hz: u32) -> Result<(), String> {
    if !TICK_RATES_HZ.contains(&rate_hz) {
        return Err(format!(
            "tick_rate_hz: must be between {} and {} (got {rate_hz})",
            TICK_RATES_HZ.start(),
            TICK_RATES_HZ.end()
        ));
    }
    let old = scenario.match_config.tick_rate_hz.max(1);
    if old == rate_hz {
        return Ok(());
    }
    let rescale = |ticks: u32| -> u32 {
        let scaled = u64::from(ticks) * u64::from(rate_hz) / u64::from(old);
        u32::try_from(scaled).unwrap_or(u32::MAX).max(1)
    };
    scenario.match_config.tick_rate_hz = rate_hz;
    scenario.arena.buy_ticks = rescale(scenario.arena.buy_ticks);
    scenario.arena.combat_ticks = rescale(scenario.arena.combat_ticks);
    scenario.arena.round_end_ticks = rescale(scenario.arena.round_end_ticks);
    Ok(())
}

/// One tick period at `rate_hz` (a rate of 0 counts as 1 Hz).
pub(crate) fn period(rate_hz: u32) -> Duration {
    Duration::from_nanos(1_000_000_000 / u64::from(rate_hz.max(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_preset_at_half_rate_keeps_its_seconds_and_its_name() {
        let mut s = Scenario::plaza100(128);
        let before = s.clone();
        at_rate(&mut s, 64).unwrap();
        assert_eq!(s.name, "plaza100");
        assert_eq!(s.match_config.tick_rate_hz, 64);
        assert_eq!(s.arena.buy_ticks * 2, before.arena.buy_ticks);
        assert_eq!(s.arena.combat_ticks * 2, before.arena.combat_ticks);
        assert_eq!(s.arena.round_end_ticks * 2, before.arena.round_end_ticks);
        assert_eq!(s.players, before.players);
    }

    #[test]
    fn the_same_rate_changes_nothing() {
        let mut s = Scenario::five_v_five();
        at_rate(&mut s, 128).unwrap();
        assert_eq!(s, Scenario::five_v_five());
    }

    #[test]
    fn phases_keep_at_least_one_tick() {
        let mut s = Scenario::five_v_five();
        s.arena.round_end_ticks = 1;
        at_rate(&mut s, 1).unwrap();
        assert_eq!(s.arena.round_end_ticks, 1);
        assert!(s.arena.buy_ticks >= 1);
    }

    #[test]
    fn rates_out_of_range_name_the_field() {
        for bad in [0, 257, 10_000] {
            let mut s = Scenario::five_v_five();
            let e = at_rate(&mut s, bad).unwrap_err();
            assert!(e.starts_with("tick_rate_hz:"), "{e}");
            assert_eq!(s, Scenario::five_v_five());
        }
    }

    #[test]
    fn periods_follow_the_rate() {
        assert_eq!(period(64), Duration::from_nanos(15_625_000));
        assert_eq!(period(128), Duration::from_nanos(7_812_500));
        assert_eq!(period(0), Duration::from_secs(1));
    }
}
