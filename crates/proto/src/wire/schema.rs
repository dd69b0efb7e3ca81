//! [`TypeSchema`]: what a derived codec writes, as data. The derives of
//! `hightick-derive` describe each type they make a codec for (its fields,
//! their Rust types and encodings, the field groups of replicated state),
//! so a game's whole wire vocabulary can be printed, compared between a
//! client and a server by its hash, and turned into bindings for other
//! languages. Hand-written codecs have no schema (`None`).

use serde::Serialize;

/// One type's wire form: a struct's fields in order, or an enum's variants
/// (written as their index in the fewest bits that hold every index, then
/// the variant's fields).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TypeSchema {
    /// The Rust type's name (`Stick`).
    pub name: &'static str,
    /// Its fields or variants.
    pub shape: Shape,
}

/// A struct's fields, or an enum's variants.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// Fields written in order.
    Struct(&'static [FieldSchema]),
    /// Variants, by index.
    Enum(&'static [VariantSchema]),
}

/// One variant of an enum.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct VariantSchema {
    /// Its name (`Tagged`).
    pub name: &'static str,
    /// Its fields, written in order after the index.
    pub fields: &'static [FieldSchema],
}

/// One field: its name, its Rust type, how it travels and, in replicated
/// state, its field group.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FieldSchema {
    /// Its name (`position`), or its index in a tuple struct (`0`).
    pub name: &'static str,
    /// The Rust type as written (`[i32; 2]`).
    pub ty: &'static str,
    /// How each value (each element of an array field) travels.
    pub encoding: Encoding,
    /// The field group it travels in (replicated state only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<u8>,
}

/// How a value travels: the forms of `#[wire(...)]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "form", rename_all = "snake_case")]
pub enum Encoding {
    /// The type's own codec: integers at full width, `bool` 1 bit, `f32`
    /// 32 bits, an entity id compact, `Option` a bit then the value, a
    /// derived type its own schema.
    Plain,
    /// An integer in this many bits (two's complement when signed).
    Bits {
        /// Bits per value.
        bits: u32,
    },
    /// An integer in `lo..=hi`, as its offset from `lo` in the fewest bits.
    Range {
        /// The least value.
        lo: i64,
        /// The greatest value.
        hi: i64,
    },
    /// An integer as a varint of 5, 10, 19 or 35 bits (zigzag when signed).
    Varint,
    /// An `f32` in `lo..=hi`, quantized in `bits`.
    Float {
        /// The least value.
        lo: f32,
        /// The greatest value.
        hi: f32,
        /// Bits per value.
        bits: u32,
    },
    /// An `f32` angle in radians, 16 bits.
    Angle,
    /// A `[f32; 3]` direction, octahedral, `bits` per component.
    UnitVector {
        /// Bits per component.
        bits: u32,
    },
    /// An entity id in its compact 7, 12 or 18 bits.
    Entity,
}
