//! A client built for another version of the game is refused at connect,
//! with the reason, before it reads anything: the server's first reliable
//! message is its schema hash, and this client's own differs.

mod support;

use std::net::UdpSocket;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hightick_arena::game::Arena;
use hightick_client::{GameClientConfig, Refusal, UdpClient};
use hightick_engine::input::InputSource;
use hightick_engine::schema::wire_hash;
use hightick_engine::{
    Archetype, Game, InputPayload, JoinRefused, PlayerId, ReliableEvent, Replicated,
    ReplicationSource, TickContext, Wire,
};
use hightick_net::ClientState;
use hightick_proto::InputCommand;
use support::Host;

/// A game of its own vocabulary, standing for a client of another build.
#[derive(Debug, Default, ReplicationSource)]
struct Elsewhere {
    #[replicas]
    dots: Vec<Dot>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Archetype)]
#[archetype(groups = Dot)]
struct Thing;

#[derive(Debug, Default, Clone, Copy, PartialEq, Replicated)]
#[replicated(archetype = Thing)]
struct Dot {
    #[group(0)]
    #[wire(range = -100..=100)]
    at: i16,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Wire, InputPayload)]
struct Push {
    dx: i8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire, ReliableEvent)]
enum Note {
    Hello,
}

impl Game for Elsewhere {
    type Input = Push;
    type Event = Note;
    type Replica = Dot;
    type MatchResult = ();

    fn join(&mut self, _: &mut TickContext<'_, Self>, _: PlayerId) -> Result<(), JoinRefused> {
        Ok(())
    }
    fn leave(&mut self, _: &mut TickContext<'_, Self>, _: PlayerId) {}
    fn input(
        &mut self,
        _: &mut TickContext<'_, Self>,
        _: PlayerId,
        _: &InputCommand<Push>,
        _: InputSource,
    ) {
    }
    fn tick(&mut self, _: &mut TickContext<'_, Self>) {}
    fn result(&self) -> Option<()> {
        None
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_client_of_another_schema_is_refused_with_the_reason() {
    assert_ne!(wire_hash::<Arena>(), wire_hash::<Elsewhere>());
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let host = Host::at(socket.local_addr().unwrap(), 2, Instant::now());
    let token = host.token(1);
    let stop = Arc::new(AtomicBool::new(false));
    let server = support::serve_udp(host, socket, stop.clone());

    let mut client = UdpClient::<Elsewhere>::bind(
        token,
        GameClientConfig::default(),
        "127.0.0.1:0".parse().unwrap(),
    )
    .await
    .unwrap();
    let end = Instant::now() + Duration::from_secs(5);
    while Instant::now() < end && client.core().refusal().is_none() {
        client
            .run_until(Instant::now() + Duration::from_millis(8))
            .await
            .unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    server.join().unwrap();
    let core = client.core_mut();
    let refusal = core.refusal().expect("refused within five seconds");
    assert_eq!(
        refusal,
        Refusal::SchemaMismatch {
            server: wire_hash::<Arena>(),
            client: wire_hash::<Elsewhere>(),
        }
    );
    assert!(refusal.to_string().contains("another version of the game"));
    assert!(matches!(core.state(), ClientState::Disconnected(_)));
    // Sending says why, too.
    let sent = core.send_input(InputCommand::new(1, 1, Push::default()));
    assert!(
        matches!(sent, Err(hightick_client::ClientError::Refused(r)) if r == refusal),
        "{sent:?}"
    );
    // Nothing of the arena's was read as this game's.
    assert_eq!(core.poll_event(), None);
    assert_eq!(core.stats().decode_errors, 0, "{:?}", core.stats());
    assert_eq!(core.world().iter().count(), 0);
}
