//! Every message decoder on arbitrary bytes, as a server or client reads a
//! message the packet layer handed over: the engine's own (hightick-proto)
//! and the arena's payloads inside them (its input and events, the events'
//! codec derived: `#[derive(Wire, ReliableEvent)]`). Checks: no panic, and
//! decoding always stops (each record read consumes bits).
#![no_main]

use hightick_arena::event::ArenaEvent;
use hightick_arena::input::ArenaInput;
use hightick_engine::events::ReliableEvent;
use hightick_proto::message::read_entity_record_header;
use hightick_proto::{Avatar, BitReader, MessageKind, ResyncRequest, SchemaHash, SnapshotHeader};

type InputBatch = hightick_proto::InputBatch<ArenaInput>;
type InputCommand = hightick_proto::InputCommand<ArenaInput>;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = BitReader::new(data);
    match MessageKind::decode(&mut r) {
        Ok(MessageKind::InputBatch) => {
            let _ = InputBatch::decode(&mut r);
        }
        Ok(MessageKind::Snapshot) => {
            if SnapshotHeader::decode(&mut r).is_ok() {
                for _ in 0..=data.len() * 8 {
                    match read_entity_record_header(&mut r) {
                        Ok(Some(_)) => {}
                        Ok(None) | Err(_) => break,
                    }
                }
            }
        }
        Ok(MessageKind::Event) => {
            let _ = ArenaEvent::decode(&mut r);
        }
        Ok(MessageKind::ResyncRequest) => {
            let _ = ResyncRequest::decode(&mut r);
        }
        Ok(MessageKind::SchemaHash) => {
            let _ = SchemaHash::decode(&mut r);
        }
        Ok(MessageKind::Avatar) => {
            let _ = Avatar::decode(&mut r);
        }
        Err(_) => {}
    }
    // Each decoder also straight from the first bit.
    let _ = InputCommand::decode(&mut BitReader::new(data));
    let _ = InputBatch::decode(&mut BitReader::new(data));
    let _ = ArenaEvent::decode(&mut BitReader::new(data));
    let _ = ResyncRequest::decode(&mut BitReader::new(data));
    let _ = Avatar::decode(&mut BitReader::new(data));
    let _ = SnapshotHeader::decode(&mut BitReader::new(data));
});
