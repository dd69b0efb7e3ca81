//! Derived bit codecs for hightick games: a game declares each type's wire
//! form once, and the server's writer and the client's reader both come
//! from that one declaration, so the two can not drift apart.
//!
//! What it is for:
//! - `#[derive(Wire)]` on a struct or an enum implements
//!   `hightick_proto::Wire` from the fields: a struct writes its fields in
//!   order; an enum writes its variant's index in the fewest bits that hold
//!   every index, then the variant's fields.
//! - `#[derive(ReliableEvent)]` and `#[derive(InputPayload)]` implement the
//!   engine's traits over that codec; an event enum's variant names, in
//!   snake case, are its `KINDS`, and `kind()` is the variant's index.
//! - `#[derive(Replicated)]` on an archetype's state: every field carries
//!   `#[group(n)]` and makes `FieldGroups` (`write_group` for the server,
//!   `read_group` for the client) and, for each named field, a push setter
//!   `set_<field>(world, entity, value)` that stamps the field's group when
//!   the value changes (so replicated fields are `PartialEq`, as
//!   `ReplicationWorld::set` asks); `#[replicated(archetype = A)]` makes the struct the
//!   client's `Replica` too.
//! - `#[derive(Archetype)]` names a kind of entity and the state it carries
//!   (`#[archetype(groups = State)]`), and `#[derive(ReplicationSource)]`
//!   on the game's state serves the writer from the field marked
//!   `#[replicas]` (a `Vec<State>` by entity slot).
//! - `#[event(ends_match)]` on an event variant tells the swarm's bots that
//!   the match is over; `#[input(delta = fields)]` on an input struct
//!   writes its redundant copies field by field (a bit each, then the
//!   field when it changed) instead of the default one bit or the whole.
//!
//! A field travels by its type's own `Wire` codec (integers at full width,
//! `bool` in one bit, `f32` bit for bit, `EntityId` compact, arrays element
//! by element, `Option` as a bit and the value) unless `#[wire(...)]` says:
//!
//! | attribute | for | on the wire |
//! |---|---|---|
//! | `bits = N` | integers | `N` bits (two's complement when signed) |
//! | `range = LO..=HI` | integers | the offset from `LO` in the fewest bits for `HI - LO` (bounds: literals or constants) |
//! | `varint` | integers | 5, 10, 19 or 35 bits, small first (zigzag when signed) |
//! | `float(range = LO..=HI, step = S)` | `f32` | quantized, codes at most `S` apart |
//! | `float(range = LO..=HI, bits = N)` | `f32` | quantized in `N` bits (1..=24) |
//! | `angle` | `f32` radians | 16 bits |
//! | `unit_vector(bits = N)` | `[f32; 3]` | octahedral, `N` bits a component (2..=16) |
//! | `entity` | `EntityId` | 7, 12 or 18 bits |
//!
//! On an array field (`[T; N]`, nested too) the attribute applies to each
//! element (`unit_vector` to each `[f32; 3]`). The quantizers are
//! `hightick_proto::quantize`'s, made at compile time. A value the reader
//! would reject is refused on write, and a read never panics: both give
//! `ProtoError::InvalidValue` naming the field (`Stick.x`). A mistake in an
//! attribute is a compile error at the field.
//!
//! What it is not: hand-written codecs stay possible (a tuned delta, the
//! arena's transforms), and the derives do not write deltas against a
//! client's acknowledged state (`write_group_since`).
//!
//! Use it through the engine, which re-exports the derives beside the
//! traits they implement:
//!
//! ```
//! use hightick_engine::{EntityId, ReliableEvent, Wire};
//! use hightick_proto::BitWriter;
//!
//! #[derive(Debug, Clone, Copy, PartialEq, Wire, ReliableEvent)]
//! enum Happening {
//!     Hit {
//!         target: EntityId,
//!         #[wire(range = 0..=100)]
//!         damage: u8,
//!     },
//!     RoundEnd,
//! }
//!
//! let mut buf = [0u8; 8];
//! let mut w = BitWriter::new(&mut buf);
//! Happening::Hit { target: EntityId(3), damage: 42 }.write(&mut w).unwrap();
//! assert_eq!(w.bits_written(), 1 + 7 + 7);
//! assert_eq!(Happening::KINDS, &["hit", "round_end"]);
//! ```

mod archetype;
mod attr;
mod codec;
mod event;
mod replicated;
mod source;
mod wire;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Implements `Wire` from the fields and their `#[wire(...)]` attributes.
#[proc_macro_derive(Wire, attributes(wire))]
pub fn derive_wire(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    wire::derive(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Implements `ReliableEvent` over the type's `Wire` codec: `KINDS` are
/// the variant names in snake case; the variants marked
/// `#[event(ends_match)]` end the match (`ends_match`).
#[proc_macro_derive(ReliableEvent, attributes(event))]
pub fn derive_reliable_event(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    event::derive_event(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Implements `InputPayload` over the type's `Wire` codec; with
/// `#[input(delta = fields)]`, a struct's redundant copies are written
/// field by field.
#[proc_macro_derive(InputPayload, attributes(input))]
pub fn derive_input_payload(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    event::derive_input(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Implements `FieldGroups` (and, with `#[replicated(archetype = A)]`,
/// `Replica`) from fields that carry `#[group(n)]` and `#[wire(...)]`.
#[proc_macro_derive(Replicated, attributes(group, wire, replicated))]
pub fn derive_replicated(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    replicated::derive(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Implements `Archetype` for a unit struct (`#[archetype(groups = State)]`,
/// wire id 0) or a fieldless enum (the attribute on each variant; wire id:
/// the variant's index).
#[proc_macro_derive(Archetype, attributes(archetype))]
pub fn derive_archetype(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    archetype::derive(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Implements `ReplicationSource` for a game's state from its one field
/// marked `#[replicas]`: a table of `Replicated` states by entity slot.
#[proc_macro_derive(ReplicationSource, attributes(replicas))]
pub fn derive_replication_source(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    source::derive(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
