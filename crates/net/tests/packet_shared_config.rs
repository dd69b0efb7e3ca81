//! Endpoints built from one shared `PacketConfig` (as a server builds its
//! connections): they read the same config, talk as endpoints with their own
//! copies do, and an invalid shared config is refused with the field at fault.

use std::sync::Arc;
use std::time::Instant;

use hightick_net::{PacketConfig, PacketEndpoint, PacketError};

#[test]
fn shared_endpoints_read_one_config_and_talk() {
    let now = Instant::now();
    let config = Arc::new(PacketConfig::default());
    let mut a = PacketEndpoint::new_shared(Arc::clone(&config), now);
    let b = PacketEndpoint::new_shared(Arc::clone(&config), now);
    assert!(std::ptr::eq(a.config(), b.config()));
    assert!(std::ptr::eq(a.config(), &*config));

    let mut own = PacketEndpoint::new(&PacketConfig::default(), now);
    let mut buf = [0u8; 1200];
    let mut out = [0u8; 64];
    a.send_unreliable(b"input").unwrap();
    let (_, n) = a.write_packet(now, &mut buf).unwrap();
    own.read_packet(now, &buf[..n]).unwrap();
    let m = own.poll_message(&mut out).unwrap();
    assert_eq!(&out[..m.len], b"input");
}

#[test]
fn an_invalid_shared_config_names_its_field() {
    let config = Arc::new(PacketConfig {
        received_packet_window: 100,
        ..PacketConfig::default()
    });
    match PacketEndpoint::try_new_shared(config, Instant::now()) {
        Err(PacketError::Config { field, .. }) => assert_eq!(field, "received_packet_window"),
        other => panic!("expected a config error, got {:?}", other.err()),
    }
}
