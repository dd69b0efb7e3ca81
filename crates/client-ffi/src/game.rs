//! [`FfiGame`]: how one game's input, events and entities cross the C ABI.

use hightick_engine::Game;
use hightick_engine::replication::ClientEntity;
use hightick_proto::ProtoError;

/// The replica type of `F`'s game.
pub type ReplicaOf<F> = <<F as FfiGame>::Game as Game>::Replica;

/// A game's side of its C ABI: plain `#[repr(C)]` records for its input,
/// its events and one entity's state, and the conversions to and from the
/// game's own types. Implemented on a marker type in the game's library
/// crate (the game's types and this trait both live elsewhere), which then
/// calls [`export!`](crate::export).
///
/// Records, not the game's encoded bytes: a C, C# or Python caller reads
/// and fills fields directly, with no codec of the game's bit-packed wire
/// format to port and keep in step, and a record of plain integers and
/// floats is blittable (C# P/Invoke copies it without marshalling code or
/// garbage). Records the caller fills (the input) hold no enums and no
/// `bool`s, so no bit pattern a caller writes is undefined behaviour;
/// [`input`](Self::input) checks every field.
pub trait FfiGame: 'static {
    /// The game.
    type Game: Game;
    /// The input record the caller fills each frame (`#[repr(C)]`).
    type Input: Copy + 'static;
    /// One event as the caller reads it (`#[repr(C)]`).
    type Event: Copy + 'static;
    /// One entity's state as the caller reads it (`#[repr(C)]`).
    type Entity: Copy + 'static;

    /// The feet position of a replica, for the interpolation buffer.
    fn position(replica: &ReplicaOf<Self>) -> Option<[f32; 3]>;

    /// The game's input from the caller's record; a field out of range is
    /// [`ProtoError::InvalidValue`] naming it.
    fn input(input: &Self::Input) -> Result<<Self::Game as Game>::Input, ProtoError>;

    /// The caller's record of an event.
    fn event(event: &<Self::Game as Game>::Event) -> Self::Event;

    /// The caller's record of an entity; `position`, when given, replaces
    /// the replica's own (an interpolated position).
    fn entity(
        entity: ClientEntity<'_, ReplicaOf<Self>>,
        position: Option<[f32; 3]>,
    ) -> Self::Entity;
}
