//! A steady-state client tick allocates nothing: sending the input batch,
//! writing datagrams, reading snapshots and events, timers.

mod support;

use hightick_arena::input::ArenaInput;
use hightick_proto::InputCommand;
use hightick_telemetry::alloc::{CountingAllocator, count_allocations};
use support::{Host, PERIOD, SERVER};

#[global_allocator]
static A: CountingAllocator = CountingAllocator;

#[test]
fn a_steady_state_client_tick_allocates_nothing() {
    let mut host = Host::new(2, std::time::Instant::now());
    let mut clients: Vec<_> = (0..2).map(|i| host.client(i)).collect();
    let server = SERVER.parse().unwrap();
    let mut up = [[0u8; hightick_net::wire::MAX_PACKET_BYTES]; 8];
    let mut up_lens = [0usize; 8];
    let mut measured = 0u64;
    let mut total = 0u64;
    for tick in 0..700 {
        for (i, c) in clients.iter_mut().enumerate() {
            let now = host.now;
            let mut n = 0;
            let allocations = count_allocations(|| {
                if let Some(estimate) = c.server_tick_estimate(now) {
                    let _ = c.send_input(InputCommand::new(
                        estimate as u32 + 8,
                        estimate as u32 + 8,
                        ArenaInput {
                            move_x: 50,
                            ..ArenaInput::default()
                        },
                    ));
                }
                while n < up.len() {
                    let Some(t) = c.poll_transmit(now, &mut up[n]) else {
                        break;
                    };
                    up_lens[n] = t.len;
                    n += 1;
                }
            });
            for k in 0..n {
                host.receive(i, &mut up[k][..up_lens[k]]);
            }
            if tick >= 400 {
                total += allocations;
                measured += 1;
            }
        }
        host.tick();
        for (i, c) in clients.iter_mut().enumerate() {
            let mut datagrams = host.take_outbox(support::client_address(i));
            let now = host.now;
            let allocations = count_allocations(|| {
                for d in datagrams.iter_mut() {
                    c.handle_datagram(now, server, d);
                }
                if c.poll_timeout().is_some_and(|t| t <= now) {
                    c.handle_timeout(now);
                }
                while c.poll_event().is_some() {}
                c.interpolated(hightick_engine::EntityId(0), now.elapsed().as_secs_f32())
            });
            if tick >= 400 {
                total += allocations;
            }
        }
        host.now += PERIOD;
    }
    assert!(measured > 500);
    for c in &clients {
        let s = c.stats();
        assert!(s.snapshots_applied > 600 && s.inputs_sent > 600, "{s:?}");
    }
    assert_eq!(
        total, 0,
        "allocations in 300 steady-state ticks of 2 clients"
    );
}
