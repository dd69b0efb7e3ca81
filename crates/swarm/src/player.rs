//! [`Player`]: one virtual player as a small state machine (which step is
//! next, its retry count, what it captured), stepped by a driver. A player
//! is about a hundred bytes plus its captured values; it owns no task, no
//! timer and no socket.

use std::time::Instant;

use rand::Rng;

use crate::scenario::template::{Builtin, Values};
use crate::scenario::{Model, Scenario, Step};

/// Where a player is in its scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Running the setup steps.
    Setup,
    /// Running behaviour `n`.
    Behaviour(u16),
    /// Set up, with no behaviour to run: stays, holding its session.
    Idle,
    /// Gone (open model: done; or the run ended).
    Done,
}

/// One virtual player. See the [module docs](self).
#[derive(Debug)]
pub(crate) struct Player {
    /// Its number, unique across drivers and agents.
    pub id: u64,
    /// Where it is.
    pub phase: Phase,
    /// The step within the phase's sequence.
    pub step: u16,
    /// Retries of the current step so far.
    pub retries: u16,
    /// URLs the current step moved on to after one kept answering a
    /// retryable status (bounds those moves to one round of the target's URLs).
    pub hops: u16,
    /// Whether the current step is polling its queue ticket.
    pub polling: bool,
    /// Behaviours started.
    pub iteration: u32,
    /// When the current attempt was meant to start.
    pub due: Instant,
    /// When the current step's first attempt was meant to start.
    pub began: Instant,
    /// Captured values, by slot.
    pub captures: Box<[Option<Box<str>>]>,
    /// Per target, which of its URLs the player uses now (empty when every
    /// target has one URL).
    pub routes: Box<[u16]>,
}

impl Player {
    /// A player about to run its setup (or its first behaviour) at `at`.
    pub(crate) fn new(id: u64, scenario: &Scenario, at: Instant, rng: &mut impl Rng) -> Self {
        let mut p = Self {
            id,
            phase: Phase::Setup,
            step: 0,
            retries: 0,
            hops: 0,
            polling: false,
            iteration: 0,
            due: at,
            began: at,
            captures: vec![None; scenario.variables.len()].into_boxed_slice(),
            routes: if scenario.targets.iter().all(|t| t.urls.len() == 1) {
                Box::new([])
            } else {
                vec![0; scenario.targets.len()].into_boxed_slice()
            },
        };
        p.go_home(scenario);
        if scenario.setup.is_empty() {
            p.next_behaviour(scenario, rng);
        }
        p
    }

    /// Starts over as a new player `id` (open model slot reuse), keeping memory.
    pub(crate) fn reuse(&mut self, id: u64, scenario: &Scenario, at: Instant, rng: &mut impl Rng) {
        self.id = id;
        self.phase = Phase::Setup;
        self.step = 0;
        self.retries = 0;
        self.hops = 0;
        self.polling = false;
        self.iteration = 0;
        self.due = at;
        self.began = at;
        self.captures.iter_mut().for_each(|c| *c = None);
        self.go_home(scenario);
        if scenario.setup.is_empty() {
            self.next_behaviour(scenario, rng);
        }
    }

    /// Back on each target's home URL: player `i` on URL `i % n`.
    fn go_home(&mut self, scenario: &Scenario) {
        for (route, t) in self.routes.iter_mut().zip(&scenario.targets) {
            *route = (self.id % t.urls.len() as u64) as u16;
        }
    }

    /// Which of target `target`'s URLs it uses now.
    pub(crate) fn route(&self, target: usize) -> usize {
        self.routes.get(target).map_or(0, |r| usize::from(*r))
    }

    /// Moves on to target `target`'s next URL (round robin), for good;
    /// false if the target has only one.
    pub(crate) fn fail_over(&mut self, scenario: &Scenario, target: usize) -> bool {
        let urls = scenario.targets.get(target).map_or(1, |t| t.urls.len());
        match self.routes.get_mut(target) {
            Some(route) if urls > 1 => {
                *route = ((usize::from(*route) + 1) % urls) as u16;
                true
            }
            _ => false,
        }
    }

    /// The step it runs next, if any.
    pub(crate) fn current<'s>(&self, scenario: &'s Scenario) -> Option<&'s Step> {
        match self.phase {
            Phase::Setup => scenario.setup.get(self.step as usize),
            Phase::Behaviour(b) => scenario
                .behaviours
                .get(b as usize)?
                .steps
                .get(self.step as usize),
            Phase::Idle | Phase::Done => None,
        }
    }

    /// The current step succeeded: on to the next one (or the next behaviour).
    pub(crate) fn advance(&mut self, scenario: &Scenario, rng: &mut impl Rng) {
        self.step += 1;
        self.retries = 0;
        self.hops = 0;
        self.polling = false;
        if self.current(scenario).is_none() {
            match self.phase {
                Phase::Setup => self.next_behaviour(scenario, rng),
                Phase::Behaviour(_) if scenario.model == Model::Open => self.phase = Phase::Done,
                Phase::Behaviour(_) => self.next_behaviour(scenario, rng),
                Phase::Idle | Phase::Done => {}
            }
        }
    }

    /// The current step failed for good: a setup starts over (a login that
    /// failed is tried again later); a behaviour is given up for the next.
    pub(crate) fn abandon(&mut self, scenario: &Scenario, rng: &mut impl Rng) {
        self.retries = 0;
        self.hops = 0;
        self.polling = false;
        match self.phase {
            Phase::Setup => self.step = 0,
            Phase::Behaviour(_) if scenario.model == Model::Open => self.phase = Phase::Done,
            Phase::Behaviour(_) => self.next_behaviour(scenario, rng),
            Phase::Idle | Phase::Done => {}
        }
    }

    fn next_behaviour(&mut self, scenario: &Scenario, rng: &mut impl Rng) {
        self.step = 0;
        self.retries = 0;
        self.hops = 0;
        self.polling = false;
        self.phase = match pick_behaviour(scenario, rng) {
            Some(b) => {
                self.iteration += 1;
                Phase::Behaviour(b)
            }
            None if scenario.model == Model::Open => Phase::Done,
            None => Phase::Idle,
        };
    }
}

/// A behaviour drawn by weight (`None`: the scenario has none).
pub(crate) fn pick_behaviour(scenario: &Scenario, rng: &mut impl Rng) -> Option<u16> {
    let total: u64 = scenario
        .behaviours
        .iter()
        .map(|b| u64::from(b.weight))
        .sum();
    if total == 0 {
        return None;
    }
    let mut draw = rng.random_range(0..total);
    for (i, b) in scenario.behaviours.iter().enumerate() {
        let w = u64::from(b.weight);
        if draw < w {
            return Some(i as u16);
        }
        draw -= w;
    }
    None
}

/// What a template sees of a player.
pub(crate) struct PlayerValues<'a, R> {
    /// The player.
    pub player: &'a Player,
    /// For `{{random}}`.
    pub rng: &'a mut R,
    /// The agent's index.
    pub agent: u32,
}

impl<R: Rng> Values for PlayerValues<'_, R> {
    fn builtin(&mut self, b: Builtin) -> u64 {
        match b {
            Builtin::User => self.player.id,
            Builtin::Iteration => u64::from(self.player.iteration),
            Builtin::Random => u64::from(self.rng.random::<u32>()),
            Builtin::Agent => u64::from(self.agent),
        }
    }

    fn capture(&self, slot: u16) -> Option<&str> {
        self.player.captures.get(slot as usize)?.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::SmallRng;

    const TEXT: &str = r#"
users = 1
duration = "1s"
[targets]
t = "http://127.0.0.1:1"
[[setup]]
name = "login"
url = "/login"
[[setup]]
name = "hello"
url = "/hello"
[[behaviour]]
name = "a"
weight = 3
[[behaviour.step]]
url = "/a"
[[behaviour]]
name = "b"
weight = 1
[[behaviour.step]]
url = "/b1"
[[behaviour.step]]
url = "/b2"
"#;

    #[test]
    fn a_player_walks_setup_then_weighted_behaviours() {
        let s = Scenario::parse(TEXT, "t.toml").unwrap();
        let mut rng = SmallRng::seed_from_u64(5);
        let mut p = Player::new(1, &s, Instant::now(), &mut rng);
        assert_eq!((p.phase, p.step), (Phase::Setup, 0));
        p.advance(&s, &mut rng);
        assert_eq!((p.phase, p.step), (Phase::Setup, 1));
        // A failed setup step starts the setup over.
        p.abandon(&s, &mut rng);
        assert_eq!((p.phase, p.step), (Phase::Setup, 0));
        p.advance(&s, &mut rng);
        p.advance(&s, &mut rng);
        assert!(matches!(p.phase, Phase::Behaviour(_)));
        assert_eq!(p.iteration, 1);
        let mut counts = [0u32; 2];
        for _ in 0..4_000 {
            let Phase::Behaviour(b) = p.phase else {
                panic!()
            };
            counts[b as usize] += 1;
            while p.phase == Phase::Behaviour(b) && p.step < 2 {
                let before = p.iteration;
                p.advance(&s, &mut rng);
                if p.iteration != before {
                    break;
                }
            }
        }
        let share = f64::from(counts[0]) / 4_000.0;
        assert!((share - 0.75).abs() < 0.03, "{counts:?}");
    }

    #[test]
    fn open_model_players_leave_after_one_behaviour() {
        let text = TEXT.replace(
            "users = 1",
            "model = \"open\"\narrival_rate = 1.0\nusers = 1",
        );
        let s = Scenario::parse(&text, "t.toml").unwrap();
        let mut rng = SmallRng::seed_from_u64(1);
        let mut p = Player::new(1, &s, Instant::now(), &mut rng);
        for _ in 0..2 {
            p.advance(&s, &mut rng);
        }
        while matches!(p.phase, Phase::Behaviour(_)) {
            p.advance(&s, &mut rng);
        }
        assert_eq!(p.phase, Phase::Done);
    }

    #[test]
    fn without_behaviours_a_closed_player_idles_after_setup() {
        let text = TEXT.split("[[behaviour]]").next().unwrap();
        let s = Scenario::parse(text, "t.toml").unwrap();
        let mut rng = SmallRng::seed_from_u64(1);
        let mut p = Player::new(1, &s, Instant::now(), &mut rng);
        p.advance(&s, &mut rng);
        p.advance(&s, &mut rng);
        assert_eq!(p.phase, Phase::Idle);
        assert!(p.current(&s).is_none());
        assert!(
            std::mem::size_of::<Player>() <= 96,
            "{}",
            std::mem::size_of::<Player>()
        );
    }

    #[test]
    fn players_start_on_url_i_mod_n_and_fail_over_round_robin() {
        let text = TEXT.replace(
            "t = \"http://127.0.0.1:1\"",
            "t = \"http://127.0.0.1:1\"\nu = [\"http://127.0.0.1:2\", \"http://127.0.0.1:3\", \"http://127.0.0.1:4\"]",
        )
        .replace("url = \"/", "target = \"u\"\nurl = \"/");
        let s = Scenario::parse(&text, "t.toml").unwrap();
        let mut rng = SmallRng::seed_from_u64(1);
        let homes: Vec<usize> = (0..6)
            .map(|id| Player::new(id, &s, Instant::now(), &mut rng).route(1))
            .collect();
        assert_eq!(homes, [0, 1, 2, 0, 1, 2]);
        let mut p = Player::new(2, &s, Instant::now(), &mut rng);
        assert!(!p.fail_over(&s, 0), "one URL: nowhere to go");
        assert_eq!(p.route(0), 0);
        let mut seen = Vec::new();
        for _ in 0..3 {
            assert!(p.fail_over(&s, 1));
            seen.push(p.route(1));
        }
        assert_eq!(seen, [0, 1, 2]);
        // It stays where it moved, across steps; a reused slot starts at home.
        p.advance(&s, &mut rng);
        assert_eq!(p.route(1), 2);
        p.fail_over(&s, 1);
        p.reuse(4, &s, Instant::now(), &mut rng);
        assert_eq!(p.route(1), 1);
        // With one URL per target, a player carries no routes.
        let plain = Player::new(
            5,
            &Scenario::parse(TEXT, "t.toml").unwrap(),
            Instant::now(),
            &mut rng,
        );
        assert!(plain.routes.is_empty());
    }
}
