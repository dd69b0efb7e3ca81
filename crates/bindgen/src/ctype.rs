//! [`FieldType`]: a derived field's Rust type as a C record holds it, in
//! Rust, C# and the C layout (size and alignment).

/// A C scalar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scalar {
    /// `int8_t`.
    I8,
    /// `uint8_t` (also a `bool`, 0 or 1).
    U8,
    /// `int16_t`.
    I16,
    /// `uint16_t` (also an entity id).
    U16,
    /// `int32_t`.
    I32,
    /// `uint32_t`.
    U32,
    /// `int64_t`.
    I64,
    /// `uint64_t`.
    U64,
    /// `float`.
    F32,
    /// `double`.
    F64,
}

impl Scalar {
    /// The Rust name of the record's type.
    pub fn rust(self) -> &'static str {
        match self {
            Self::I8 => "i8",
            Self::U8 => "u8",
            Self::I16 => "i16",
            Self::U16 => "u16",
            Self::I32 => "i32",
            Self::U32 => "u32",
            Self::I64 => "i64",
            Self::U64 => "u64",
            Self::F32 => "f32",
            Self::F64 => "f64",
        }
    }

    /// The C# name (blittable).
    pub fn csharp(self) -> &'static str {
        match self {
            Self::I8 => "sbyte",
            Self::U8 => "byte",
            Self::I16 => "short",
            Self::U16 => "ushort",
            Self::I32 => "int",
            Self::U32 => "uint",
            Self::I64 => "long",
            Self::U64 => "ulong",
            Self::F32 => "float",
            Self::F64 => "double",
        }
    }

    /// Size in bytes, which is also its alignment.
    pub fn size(self) -> usize {
        match self {
            Self::I8 | Self::U8 => 1,
            Self::I16 | Self::U16 => 2,
            Self::I32 | Self::U32 | Self::F32 => 4,
            Self::I64 | Self::U64 | Self::F64 => 8,
        }
    }

    /// The record's scalar for a derived field's scalar Rust type.
    fn of(ty: &str) -> Option<Self> {
        Some(match ty {
            "i8" => Self::I8,
            "u8" | "bool" => Self::U8,
            "i16" => Self::I16,
            "u16" | "EntityId" => Self::U16,
            "i32" => Self::I32,
            "u32" => Self::U32,
            "i64" => Self::I64,
            "u64" => Self::U64,
            "f32" => Self::F32,
            "f64" => Self::F64,
            _ => return None,
        })
    }
}

/// A record field's type: a scalar or a fixed-size array of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldType {
    /// The element.
    pub scalar: Scalar,
    /// `Some(n)` for an array of `n`.
    pub len: Option<usize>,
}

impl FieldType {
    /// A lone scalar.
    pub const fn scalar(scalar: Scalar) -> Self {
        Self { scalar, len: None }
    }

    /// The record type of a derived field's Rust type as the schema writes
    /// it (`i8`, `bool`, `EntityId`, `[i32; 2]`); `None` for a type a C
    /// record cannot hold as plain data (an `Option`, a nested type).
    pub fn parse(ty: &str) -> Option<Self> {
        let ty = ty.trim();
        if let Some(inner) = ty.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            let (elem, len) = inner.split_once(';')?;
            let len: usize = len.trim().parse().ok()?;
            return (len > 0).then_some(Self {
                scalar: Scalar::of(elem.trim())?,
                len: Some(len),
            });
        }
        Some(Self::scalar(Scalar::of(ty.rsplit("::").next()?)?))
    }

    /// The Rust type in the record (`[i32; 2]`).
    pub fn rust(self) -> String {
        match self.len {
            Some(n) => format!("[{}; {n}]", self.scalar.rust()),
            None => self.scalar.rust().to_owned(),
        }
    }

    /// Bytes.
    pub fn size(self) -> usize {
        self.scalar.size() * self.len.unwrap_or(1)
    }

    /// Alignment in bytes.
    pub fn align(self) -> usize {
        self.scalar.size()
    }
}

/// The C layout's size of fields laid out in this order (padding after
/// each to the next one's alignment, and at the end to the largest).
pub(crate) fn c_size(fields: impl IntoIterator<Item = FieldType>) -> usize {
    let (mut at, mut align) = (0usize, 1usize);
    for f in fields {
        at = at.next_multiple_of(f.align()) + f.size();
        align = align.max(f.align());
    }
    at.next_multiple_of(align)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_types_map_to_record_types_and_c_layout() {
        assert_eq!(
            FieldType::parse("bool"),
            Some(FieldType::scalar(Scalar::U8))
        );
        let pos = FieldType::parse("[i32; 2]").unwrap();
        assert_eq!(
            (pos.rust(), pos.size(), pos.align()),
            ("[i32; 2]".into(), 8, 4)
        );
        assert_eq!(
            FieldType::parse("hightick_engine::EntityId")
                .unwrap()
                .rust(),
            "u16"
        );
        assert_eq!(FieldType::parse("Option<u8>"), None);
        assert_eq!(FieldType::parse("[Inner; 2]"), None);
        let u8_ = FieldType::scalar(Scalar::U8);
        let u16_ = FieldType::scalar(Scalar::U16);
        assert_eq!(c_size([u8_, u16_, u8_]), 6);
        assert_eq!(c_size([pos, u16_, u8_, u8_]), 12);
        assert_eq!(c_size([]), 0);
    }
}
