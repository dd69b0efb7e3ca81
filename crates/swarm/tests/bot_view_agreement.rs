//! The client-side bot view (replicated world + events) agrees with the
//! server-side one (the `Arena` itself) on what a bot decides from: who and
//! where it is, its team, the phase, and the enemies it may know. Clients
//! and a real `Server` + `Match<Arena>` in process, on a virtual clock.

#[path = "../../client/tests/support/mod.rs"]
mod support;

use std::collections::BTreeMap;

use hightick_arena::Map;
use hightick_arena::bot::BotView;
use hightick_arena::client_bot::{Consistency, Knowledge};
use hightick_arena::input::ArenaInput;
use hightick_engine::{EntityId, PlayerId};
use hightick_proto::InputCommand;
use support::{Host, PERIOD, downlink, uplink};

const PLAYERS: usize = 10;

fn enemies(view: &dyn BotView, p: PlayerId) -> BTreeMap<u16, [f32; 3]> {
    let mut out = BTreeMap::new();
    view.for_each_enemy(p, &mut |e: EntityId, at| {
        out.insert(e.0, at.to_array());
    });
    out
}

#[test]
fn client_and_server_views_agree_tick_after_tick() {
    let mut host = Host::new(PLAYERS, std::time::Instant::now());
    let mut clients: Vec<_> = (0..PLAYERS).map(|i| host.client(i as u64)).collect();
    let map = host.game.game().map().name().to_owned();
    let mut knowledge: Vec<_> = (0..PLAYERS)
        .map(|_| Knowledge::new(Map::builtin(&map).unwrap()))
        .collect();
    let mut checks: Vec<_> = (0..PLAYERS).map(|_| Consistency::new(256)).collect();
    let (mut compared, mut enemies_seen) = (0u32, 0usize);
    for tick in 0..1400u32 {
        for (i, c) in clients.iter_mut().enumerate() {
            if let Some(estimate) = c.server_tick_estimate(host.now) {
                // Walk in circles so that players meet.
                let _ = c.send_input(InputCommand::new(
                    estimate as u32 + 4,
                    estimate as u32 + 4,
                    ArenaInput {
                        move_y: 127,
                        yaw: (tick as f32 / 200.0 + i as f32).sin() * 3.0,
                        ..ArenaInput::default()
                    },
                ));
            }
            uplink(&mut host, i, c);
        }
        host.tick();
        for (i, c) in clients.iter_mut().enumerate() {
            downlink(&mut host, i, c);
            while let Some(e) = c.poll_event() {
                assert!(checks[i].check_event(&e), "client {i}: {e:?}");
                knowledge[i].observe(&e);
            }
            assert_eq!(checks[i].check_world(c.world(), knowledge[i].team()), 0);
        }
        host.now += PERIOD;
        if tick < 50 {
            continue; // connecting
        }
        let arena = host.game.game();
        for (i, c) in clients.iter().enumerate() {
            let p = PlayerId(i as u16);
            let client = knowledge[i].sight(c.world());
            let (mine, theirs) = (client.me(p).unwrap(), arena.me(p).unwrap());
            assert_eq!(mine.team, theirs.team);
            assert_eq!((mine.alive, mine.armor), (theirs.alive, theirs.armor));
            assert!(
                mine.position.distance(theirs.position) < 0.05,
                "{mine:?} {theirs:?}"
            );
            assert!(mine.eye.distance(theirs.eye) < 0.1, "{mine:?} {theirs:?}");
            assert_eq!(client.phase(), arena.phase(), "tick {tick}");
            assert_eq!(client.round(), arena.round());
            let (a, b) = (enemies(&client, p), enemies(arena, p));
            assert_eq!(
                a.keys().collect::<Vec<_>>(),
                b.keys().collect::<Vec<_>>(),
                "tick {tick}, player {i}"
            );
            for (e, at) in &a {
                let d: f32 = (0..3).map(|k| (at[k] - b[e][k]).abs()).sum();
                assert!(d < 0.1, "enemy {e}: {at:?} vs {:?}", b[e]);
            }
            enemies_seen += a.len();
            let team = |t| client.spawn_points(t).len() == arena.spawn_points(t).len();
            assert!(team(mine.team) && team(mine.team.other()));
            compared += 1;
        }
    }
    assert!(compared > 10_000);
    assert!(enemies_seen > 0, "players met at least once");
    println!("compared {compared} views, {enemies_seen} enemy sightings");
}
