//! A derived codec against the same codec written by hand: an input shaped
//! like the arena's (two stick axes in a range, two 16-bit angles, 11
//! button bits, a 4-bit slot), 64 of them written and read back. Both write
//! the same bytes (checked before timing); the figure is what the derive
//! costs or saves, median of interleaved pairs.
//!
//! `cargo bench -p hightick-derive --bench codec`

use std::hint::black_box;

use hightick_engine::Wire;
use hightick_proto::quantize::{read_angle, write_angle};
use hightick_proto::{BitReader, BitWriter, ProtoError};
use hightick_telemetry::bench::{figure, measure};

/// The input, declared once.
#[derive(Debug, Clone, Copy, PartialEq, Default, Wire)]
struct Aim {
    #[wire(range = -127..=127)]
    move_x: i8,
    #[wire(range = -127..=127)]
    move_y: i8,
    #[wire(angle)]
    yaw: f32,
    #[wire(angle)]
    pitch: f32,
    #[wire(bits = 11)]
    buttons: u16,
    #[wire(range = 0..=15)]
    slot: u8,
}

/// The same codec by hand, as a game would write it.
fn write_by_hand(a: &Aim, w: &mut BitWriter) -> Result<(), ProtoError> {
    let axis = |v: i8| (i32::from(v) + 127) as u32;
    w.all_or_nothing(|w| {
        w.write_ranged(axis(a.move_x), 0, 254)?;
        w.write_ranged(axis(a.move_y), 0, 254)?;
        write_angle(w, a.yaw)?;
        write_angle(w, a.pitch)?;
        w.write_bits(u32::from(a.buttons), 11)?;
        w.write_ranged(u32::from(a.slot), 0, 15)
    })
}

fn read_by_hand(r: &mut BitReader) -> Result<Aim, ProtoError> {
    let axis = |c: u32| (c as i32 - 127) as i8;
    Ok(Aim {
        move_x: axis(r.read_ranged(0, 254)?),
        move_y: axis(r.read_ranged(0, 254)?),
        yaw: read_angle(r)?,
        pitch: read_angle(r)?,
        buttons: r.read_bits(11)? as u16,
        slot: r.read_ranged(0, 15)? as u8,
    })
}

const N: usize = 64;

fn inputs() -> [Aim; N] {
    std::array::from_fn(|i| Aim {
        move_x: (i as i8).wrapping_mul(7) % 127,
        move_y: -((i as i8) % 100),
        yaw: i as f32 * 0.1,
        pitch: -(i as f32) * 0.05,
        buttons: (i as u16 * 37) & 0x7FF,
        slot: (i % 16) as u8,
    })
}

fn round_trip(
    inputs: &[Aim; N],
    buf: &mut [u8],
    write: impl Fn(&Aim, &mut BitWriter) -> Result<(), ProtoError>,
    read: impl Fn(&mut BitReader) -> Result<Aim, ProtoError>,
) -> usize {
    let mut w = BitWriter::new(buf);
    for a in inputs {
        write(a, &mut w).unwrap();
    }
    let len = w.finish();
    let mut r = BitReader::new(&buf[..len]);
    for _ in 0..N {
        black_box(read(&mut r).unwrap());
    }
    len
}

fn main() {
    let inputs = inputs();
    let (mut a, mut b) = ([0u8; 1024], [0u8; 1024]);
    let derived_len = round_trip(&inputs, &mut a, Aim::write, Aim::read);
    let hand_len = round_trip(&inputs, &mut b, write_by_hand, read_by_hand);
    assert_eq!(a[..derived_len], b[..hand_len], "the same bytes");

    let (mut derived, mut by_hand) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let d = measure(
            || round_trip(black_box(&inputs), &mut a, Aim::write, Aim::read),
            200,
            51,
        );
        let h = measure(
            || round_trip(black_box(&inputs), &mut b, write_by_hand, read_by_hand),
            200,
            51,
        );
        derived.push(d.median_ns() / N as f64);
        by_hand.push(h.median_ns() / N as f64);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (d, h) = (median(&mut derived), median(&mut by_hand));
    figure("derive_input_roundtrip_ns", d, "ns");
    figure("hand_input_roundtrip_ns", h, "ns");
    figure("derive_vs_hand_ratio", d / h, "x");
    println!();
    println!("| codec | bytes for {N} inputs | round trip per input |");
    println!("|---|---|---|");
    println!("| derived | {derived_len} | {d:.1} ns |");
    println!("| by hand | {hand_len} | {h:.1} ns |");
}
