//! When closed-model players arrive: evenly over the ramp-up, or as a
//! launch does, a [`Stampede`] first (a share of the players within a short
//! window) and then a steady trickle of the rest over what is left of the
//! ramp-up.
//!
//! ```toml
//! model = "closed"
//! users = 20000
//! ramp_up = "20m"
//! stampede = { share = 0.4, within = "1m" }  # 8,000 in the first minute
//! ```

use std::time::Duration;

/// A share of the players arriving within a window at the run's start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stampede {
    /// Share of the players, in `(0, 1]`.
    pub share: f64,
    /// The window they arrive in (see [`Stampede::window`]).
    pub within: Duration,
}

impl Stampede {
    /// The window the stampede takes in a ramp-up of `ramp_up`: `within`,
    /// cut to the share's part of the ramp-up when longer, so that the
    /// trickle after it never comes faster than the stampede did.
    pub fn window(&self, ramp_up: Duration) -> Duration {
        self.within.min(ramp_up.mul_f64(self.share))
    }
}

/// When player `id` of `users` arrives, from the run's start: evenly over
/// `ramp_up`, or with `stampede` the stampede's players evenly over its
/// window and the others evenly over the rest of the ramp-up.
pub fn arrival_offset(
    id: u64,
    users: u64,
    ramp_up: Duration,
    stampede: Option<&Stampede>,
) -> Duration {
    let at = id as f64 / users.max(1) as f64;
    let Some(s) = stampede else {
        return ramp_up.mul_f64(at);
    };
    let within = s.window(ramp_up);
    if at < s.share {
        within.mul_f64(at / s.share)
    } else {
        let rest = (at - s.share) / (1.0 - s.share).max(f64::EPSILON);
        within + (ramp_up - within).mul_f64(rest.clamp(0.0, 1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(d: Duration) -> f64 {
        d.as_secs_f64()
    }

    #[test]
    fn without_a_stampede_players_arrive_evenly() {
        let ramp = Duration::from_secs(100);
        assert_eq!(secs(arrival_offset(0, 10, ramp, None)), 0.0);
        assert_eq!(secs(arrival_offset(5, 10, ramp, None)), 50.0);
    }

    #[test]
    fn a_stampede_brings_its_share_within_its_window_then_the_rest_trickle() {
        let ramp = Duration::from_secs(100);
        let s = Stampede {
            share: 0.5,
            within: Duration::from_secs(10),
        };
        // Half of 100 players within 10 s...
        assert_eq!(secs(arrival_offset(0, 100, ramp, Some(&s))), 0.0);
        assert!((secs(arrival_offset(49, 100, ramp, Some(&s))) - 9.8).abs() < 1e-9);
        // ...the other half evenly over the remaining 90 s.
        assert_eq!(secs(arrival_offset(50, 100, ramp, Some(&s))), 10.0);
        assert!((secs(arrival_offset(75, 100, ramp, Some(&s))) - 55.0).abs() < 1e-9);
        assert!(secs(arrival_offset(99, 100, ramp, Some(&s))) < 100.0);
    }

    #[test]
    fn a_window_past_the_shares_part_of_the_ramp_up_is_cut_to_it() {
        // 40% within 2 minutes, but a ramp-up of 90 s: 40% within 36 s,
        // the rest over the other 54 s (never all at once at the end).
        let ramp = Duration::from_secs(90);
        let s = Stampede {
            share: 0.4,
            within: Duration::from_secs(120),
        };
        assert_eq!(s.window(ramp), Duration::from_secs(36));
        assert!((secs(arrival_offset(40, 100, ramp, Some(&s))) - 36.0).abs() < 1e-9);
        assert!((secs(arrival_offset(70, 100, ramp, Some(&s))) - 63.0).abs() < 1e-9);
    }

    #[test]
    fn a_whole_stampede_or_a_window_past_the_ramp_up_stays_within_it() {
        let ramp = Duration::from_secs(10);
        let all = Stampede {
            share: 1.0,
            within: Duration::from_secs(60),
        };
        assert!(secs(arrival_offset(9, 10, ramp, Some(&all))) <= 10.0);
        assert_eq!(secs(arrival_offset(5, 10, ramp, Some(&all))), 5.0);
    }
}
