//! Tag's whole wire vocabulary, every codec of it derived (`Wire`,
//! `InputPayload`, `ReliableEvent`, `Replicated`), on arbitrary bytes as a
//! server or client reads them: its input batch, its events and each field
//! group of a runner. Checks: no panic, a failed group read leaves the
//! runner as it was, and whatever decodes encodes again to the same value.
#![no_main]

use hightick_engine::events::ReliableEvent;
use hightick_engine::FieldGroups;
use hightick_example_tag::{RunnerState, Stick, TagEvent};
use hightick_proto::{BitReader, BitWriter, InputBatch};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = InputBatch::<Stick>::decode(&mut BitReader::new(data));
    if let Ok(event) = TagEvent::decode(&mut BitReader::new(data)) {
        let mut buf = [0u8; 16];
        let mut w = BitWriter::new(&mut buf);
        event.encode(&mut w).expect("a decoded event encodes");
        let len = w.finish();
        assert_eq!(TagEvent::decode(&mut BitReader::new(&buf[..len])), Ok(event));
    }
    let mut runner = RunnerState::default();
    for group in 0..8 {
        let before = runner;
        if runner.read_group(group, &mut BitReader::new(data)).is_err() {
            assert_eq!(runner, before, "a failed read changes nothing");
            continue;
        }
        let mut buf = [0u8; 16];
        let mut w = BitWriter::new(&mut buf);
        runner.write_group(group, &mut w).expect("a decoded group encodes");
    }
});
