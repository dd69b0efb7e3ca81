//! The arena's rules, driven by hand-written commands: purchases in the buy
//! phase only (reliable events to the buyer's team), malformed view angles
//! ignored, pose recording off during the buy phase.

use hightick_arena::Team;
use hightick_arena::event::ArenaEvent;
use hightick_arena::game::{ARMOR_PRICE, Arena, ArenaReplica, Item, Phase};
use hightick_arena::input::{ArenaInput, Buttons};
use hightick_arena::scenario::Scenario;
use hightick_engine::replication::{ClientWorld, PacketFate};
use hightick_engine::{Match, PlayerId};
use hightick_proto::InputCommand;

fn arena_match() -> (Match<Arena>, Vec<PlayerId>) {
    let s = Scenario::five_v_five();
    let arena = Arena::new(s.arena.clone(), &s.match_config, 1).expect("arena");
    let mut m = Match::new(s.match_config.clone(), arena).expect("match");
    let players = (0..4).map(|_| m.join().expect("join")).collect();
    (m, players)
}

fn command(m: &Match<Arena>, buttons: Buttons, slot: u8) -> InputCommand<ArenaInput> {
    let tick = m.tick_number() + 1;
    let input = ArenaInput {
        buttons,
        weapon_slot: slot,
        ..ArenaInput::default()
    };
    InputCommand::new(tick, tick, input)
}

fn drain(m: &mut Match<Arena>, p: PlayerId) -> Vec<ArenaEvent> {
    std::iter::from_fn(|| m.pop_event(p)).collect()
}

#[test]
fn purchases_happen_in_the_buy_phase_and_only_the_team_hears_of_them() {
    let (mut m, players) = arena_match();
    m.tick(); // round 1 starts: buy phase
    assert_eq!(m.game().clock().phase, Phase::Buy);
    for &p in &players {
        drain(&mut m, p);
    }
    let buyer = players[0];
    let team = m.game().fighter(buyer).unwrap().team;
    let start = m.game().fighter(buyer).unwrap().money;
    m.receive_command(buyer, &command(&m, Buttons::BUY, Item::Armor.slot()))
        .unwrap();
    m.tick();
    // Holding the button does not buy twice.
    m.receive_command(buyer, &command(&m, Buttons::BUY, Item::Armor.slot()))
        .unwrap();
    m.tick();
    let f = *m.game().fighter(buyer).unwrap();
    assert_eq!(f.money, start - ARMOR_PRICE);
    assert_eq!(f.armor, 100);
    for &p in &players {
        let same_team = m.game().fighter(p).unwrap().team == team;
        let heard = drain(&mut m, p)
            .iter()
            .any(|e| matches!(e, ArenaEvent::Purchase { .. }));
        assert_eq!(heard, same_team, "player {}", p.0);
    }
    // A rifle costs more than what is left: refused.
    m.receive_command(buyer, &command(&m, Buttons::empty(), 0))
        .unwrap();
    m.tick();
    m.receive_command(buyer, &command(&m, Buttons::BUY, Item::Rifle.slot()))
        .unwrap();
    m.tick();
    assert!(m.game().fighter(buyer).unwrap().loadout.primary.is_none());

    // After the buy phase, buying does nothing.
    while m.game().clock().phase == Phase::Buy {
        m.tick();
    }
    let money = m.game().fighter(players[1]).unwrap().money;
    m.receive_command(players[1], &command(&m, Buttons::BUY, Item::Armor.slot()))
        .unwrap();
    m.tick();
    assert_eq!(m.game().fighter(players[1]).unwrap().money, money);
}

#[test]
fn teams_are_balanced_and_money_is_replicated_to_the_team_only() {
    let (mut m, players) = arena_match();
    let teams: Vec<Team> = players
        .iter()
        .map(|&p| m.game().fighter(p).unwrap().team)
        .collect();
    assert_eq!(teams.iter().filter(|&&t| t == Team::Attackers).count(), 2);
    let mut client = ClientWorld::<ArenaReplica>::new(32);
    m.tick();
    client.apply(m.snapshot(players[0])).unwrap();
    m.packet_sent(players[0], 1);
    m.on_delivery(players[0], 1, PacketFate::Acked);
    for &p in &players {
        let f = m.game().fighter(p).unwrap();
        let held = client.get(f.wallet).map(|w| w.state.money);
        if f.team == teams[0] {
            assert_eq!(held, Some(Some(f.money)));
        } else {
            assert!(held.is_none(), "enemy wallet replicated");
        }
    }
}

#[test]
fn malformed_angles_are_ignored_and_poses_are_recorded_only_in_combat() {
    let (mut m, players) = arena_match();
    m.tick();
    let p = players[0];
    let yaw = m.game().fighter(p).unwrap().yaw;
    let mut bad = command(&m, Buttons::empty(), 0);
    bad.payload.yaw = f32::NAN;
    bad.payload.move_y = 127;
    m.receive_command(p, &bad).unwrap();
    m.tick();
    assert_eq!(m.game().fighter(p).unwrap().yaw, yaw);
    assert!(m.game().fighter(p).unwrap().position().is_finite());
    // Buy phase: nothing recorded.
    for _ in 0..16 {
        m.tick();
    }
    assert!(m.game().history().history(p).unwrap().is_empty());
    while m.game().clock().phase != Phase::Combat {
        m.tick();
    }
    for _ in 0..16 {
        m.tick();
    }
    let recorded = m.game().history().history(p).unwrap().len();
    assert!(
        recorded >= 3,
        "{recorded} poses recorded in 16 combat ticks"
    );
}

#[test]
fn a_released_seat_is_played_by_a_bot_until_its_player_returns() {
    let (mut m, players) = arena_match();
    let (gone, idle) = (players[0], players[1]);
    m.release_seat(gone).unwrap();
    assert!(m.game().stood_in(gone) && !m.game().stood_in(idle));
    let start = m.game().fighter(gone).unwrap().position();
    let mut farthest = 0.0f32;
    // No command from anyone: only the bot moves its fighter.
    for _ in 0..128 * 20 {
        m.tick();
        let f = m.game().fighter(gone).unwrap();
        farthest = farthest.max(f.position().distance(start));
    }
    assert!(farthest > 2.0, "the bot never moved: {farthest} m");
    m.reconnect(gone).unwrap();
    assert!(!m.game().stood_in(gone), "the player is back in control");
}
