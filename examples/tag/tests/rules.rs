//! Tag's rules on a match run in memory: it ends on time, reports every
//! player, and refuses a bad setting by name.

use hightick_engine::mode::{HostedGame, Outcome};
use hightick_engine::{Match, PlayerId};
use hightick_example_tag::{Tag, TagSettings};

#[test]
fn a_match_ends_on_time_and_reports_every_player() {
    let mode = Tag::mode("tag").unwrap();
    let settings = TagSettings { seconds: Some(1) };
    let (config, game) = Tag::create(mode, &settings, 32, 1).unwrap();
    let mut m = Match::new(config, game).unwrap();
    let players: Vec<PlayerId> = (0..6).map(|_| m.join().unwrap()).collect();
    for _ in 0..32 {
        assert!(m.result().is_none());
        m.tick();
    }
    let result = m.result().expect("over after a second");
    let report = m.game().report(Some(&result), &players);
    assert_eq!(report.players.len(), 6);
    // The first runner was "it" the whole second: it scored least.
    assert_eq!(report.players[0].outcome, Outcome::Loss);
    assert!(report.players.iter().any(|p| p.outcome == Outcome::Win));
    assert_eq!(
        report.players.iter().map(|p| p.score).max(),
        result.iter().map(|&s| i64::from(s)).max()
    );
    let bad = TagSettings { seconds: Some(0) };
    assert!(
        Tag::create(mode, &bad, 32, 1)
            .unwrap_err()
            .starts_with("seconds")
    );
}
