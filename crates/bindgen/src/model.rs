//! [`Model`]: a game's three C records (input, event, entity) and how each
//! field maps to the game's own types, built from its wire schema. The
//! Rust and C# emitters both read it, so the two sides cannot disagree.

use hightick_engine::schema::GameSchema;
use hightick_proto::wire::schema::{Encoding, FieldSchema, Shape, TypeSchema};

use crate::BindgenError;
use crate::ctype::{FieldType, Scalar, c_size};

/// What a game's generated names are made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Names {
    /// `Tag` (the game's name in Pascal case): C# names and the marker.
    pub pascal: String,
    /// `TAG`: the C constants' infix.
    pub screaming: String,
    /// `hightick_tag_client`: the native library's name.
    pub library: String,
}

impl Names {
    /// The names for game `name` (`tag`, `my-game`).
    pub fn of(name: &str) -> Self {
        let snake = words(name).join("_").to_ascii_lowercase();
        Self {
            pascal: pascal(name),
            screaming: snake.to_ascii_uppercase(),
            library: format!("hightick_{snake}_client"),
        }
    }
}

fn words(name: &str) -> Vec<&str> {
    name.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect()
}

/// One field of a C record.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordField {
    /// Its name in the record (snake case; C# makes it Pascal case).
    pub name: String,
    /// Its type.
    pub ty: FieldType,
    /// One line on what it holds.
    pub doc: String,
}

/// A `u8` constant a record's field takes (an event kind, an archetype).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Constant {
    /// The C name (`HIGHTICK_TAG_EVENT_YOU`).
    pub c_name: String,
    /// The C# name, inside the record's struct (`You`).
    pub csharp: String,
    /// Its value.
    pub value: u8,
    /// One line on what it means.
    pub doc: String,
}

/// A `#[repr(C)]` record: its fields in layout order (largest alignment
/// first, so there is no padding between them).
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// What it is (`Input`, `Event`, `Entity`): the C# name after the
    /// game's, the Rust one after `Hightick` and the game's.
    pub what: &'static str,
    /// One line on what it is.
    pub doc: String,
    /// Its fields.
    pub fields: Vec<RecordField>,
    /// The constants its `kind` field takes.
    pub constants: Vec<Constant>,
}

impl Record {
    fn new(
        what: &'static str,
        doc: String,
        mut fields: Vec<RecordField>,
        constants: Vec<Constant>,
    ) -> Self {
        if fields.is_empty() {
            // A C struct has at least one member.
            fields.push(RecordField {
                name: "reserved".into(),
                ty: FieldType::scalar(Scalar::U8),
                doc: "Zero: the game's type has no fields.".into(),
            });
        }
        fields.sort_by_key(|f| std::cmp::Reverse(f.ty.align()));
        Self {
            what,
            doc,
            fields,
            constants,
        }
    }

    /// Its size in the C layout.
    pub fn size(&self) -> usize {
        c_size(self.fields.iter().map(|f| f.ty))
    }
}

/// A game field and the record field that carries it.
#[derive(Debug, Clone, PartialEq)]
pub struct Mapped {
    /// The game type's field (`now_it`, or `0` in a tuple).
    pub game: &'static str,
    /// The record's field (`tagged_now_it`).
    pub record: String,
    /// How it travels: what a caller's value is checked against.
    pub encoding: Encoding,
}

/// One event kind: its variant, its constant and its fields.
#[derive(Debug, Clone, PartialEq)]
pub struct Kind {
    /// The variant's name (`Tagged`).
    pub variant: &'static str,
    /// The C constant `kind` holds for it.
    pub constant: String,
    /// Its fields.
    pub fields: Vec<Mapped>,
}

/// The Rust paths of the game's types, for the generated conversions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// The game (`hightick_example_tag::Tag`).
    pub game: String,
    /// Its input.
    pub input: String,
    /// Its event enum.
    pub event: String,
    /// Its replicated state.
    pub replica: String,
}

/// Everything the emitters write.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// The game's name (`tag`).
    pub game: &'static str,
    /// Names made from it.
    pub names: Names,
    /// The schema's hash, in 16 hex digits.
    pub hash: String,
    /// The game's type paths.
    pub paths: Paths,
    /// The input record and its fields' mapping.
    pub input: (Record, Vec<Mapped>),
    /// The event record and each kind's mapping.
    pub event: (Record, Vec<Kind>),
    /// The entity record and the replica fields' mapping.
    pub entity: (Record, Vec<Mapped>),
}

/// `NowIt` -> `now_it`.
pub(crate) fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `now_it` -> `NowIt`; `0` -> `F0` (an identifier in C#).
pub(crate) fn pascal(name: &str) -> String {
    let out: String = words(name)
        .iter()
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect();
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        format!("F{out}")
    } else {
        out
    }
}

fn record_name(field: &str) -> String {
    if field.starts_with(|c: char| c.is_ascii_digit()) {
        format!("field_{field}")
    } else {
        field.to_owned()
    }
}

fn field_type(owner: &str, f: &FieldSchema) -> Result<FieldType, BindgenError> {
    FieldType::parse(f.ty).ok_or_else(|| BindgenError::Unsupported {
        owner: owner.to_owned(),
        field: f.name.to_owned(),
        ty: f.ty.to_owned(),
    })
}

fn struct_fields(
    part: &'static str,
    t: &TypeSchema,
) -> Result<&'static [FieldSchema], BindgenError> {
    match t.shape {
        Shape::Struct(fields) => Ok(fields),
        Shape::Enum(_) => Err(BindgenError::NotAStruct { part, name: t.name }),
    }
}

fn encoding_words(e: &Encoding) -> String {
    match *e {
        Encoding::Plain => String::new(),
        Encoding::Bits { bits } => format!(", {bits} bits"),
        Encoding::Range { lo, hi } => format!(", {lo}..={hi}"),
        Encoding::Varint => ", a varint".into(),
        Encoding::Float { lo, hi, bits } => format!(", {lo}..={hi} in {bits} bits"),
        Encoding::Angle => ", an angle in radians".into(),
        Encoding::UnitVector { bits } => format!(", a unit vector, {bits} bits a component"),
        Encoding::Entity => ", an entity id".into(),
    }
}

impl Model {
    /// The model of a game's schema and type paths; an error names the
    /// part or the field a C record cannot carry.
    pub fn new(schema: &GameSchema, paths: Paths) -> Result<Self, BindgenError> {
        let w = &schema.wire;
        let missing = |part| BindgenError::HandWritten {
            game: schema.game,
            part,
        };
        let input = w.input.ok_or_else(|| missing("input"))?;
        let event = w.event.ok_or_else(|| missing("event"))?;
        let archetypes = w.archetypes.ok_or_else(|| missing("archetypes"))?;
        let replica = w.replica.ok_or_else(|| missing("replica"))?;
        let names = Names::of(schema.game);
        let prefix = format!("HIGHTICK_{}", names.screaming);

        let mut fields = Vec::new();
        let mut mapped = Vec::new();
        for f in struct_fields("input", input)? {
            let name = record_name(f.name);
            fields.push(RecordField {
                name: name.clone(),
                ty: field_type(input.name, f)?,
                doc: format!("`{}` (`{}`{}).", f.name, f.ty, encoding_words(&f.encoding)),
            });
            mapped.push(Mapped {
                game: f.name,
                record: name,
                encoding: f.encoding,
            });
        }
        let input_doc = format!("One tick of a player's input: the game's `{}`.", input.name);
        let input = (Record::new("Input", input_doc, fields, Vec::new()), mapped);

        let Shape::Enum(variants) = event.shape else {
            return Err(BindgenError::NotAnEnum { name: event.name });
        };
        let kind_field = RecordField {
            name: "kind".into(),
            ty: FieldType::scalar(Scalar::U8),
            doc: format!("`{prefix}_EVENT_*`: which variant; the fields of the others are zero."),
        };
        let (mut fields, mut constants, mut kinds) = (vec![kind_field], Vec::new(), Vec::new());
        for (index, v) in variants.iter().enumerate() {
            let value =
                u8::try_from(index).map_err(|_| BindgenError::TooManyKinds { name: event.name })?;
            let constant = format!("{prefix}_EVENT_{}", snake(v.name).to_ascii_uppercase());
            constants.push(Constant {
                c_name: constant.clone(),
                csharp: pascal(v.name),
                value,
                doc: format!("`{}::{}` (`kind`).", event.name, v.name),
            });
            let mut mapped = Vec::new();
            for f in v.fields {
                let name = format!("{}_{}", snake(v.name), f.name);
                fields.push(RecordField {
                    name: name.clone(),
                    ty: field_type(event.name, f)?,
                    doc: format!(
                        "`{}.{}` (`{}`{}): set for `{constant}`.",
                        v.name,
                        f.name,
                        f.ty,
                        encoding_words(&f.encoding)
                    ),
                });
                mapped.push(Mapped {
                    game: f.name,
                    record: name,
                    encoding: f.encoding,
                });
            }
            kinds.push(Kind {
                variant: v.name,
                constant,
                fields: mapped,
            });
        }
        let event_doc = format!(
            "One event (`{}`): a flat record for every kind, `kind` says which.",
            event.name
        );
        let event = (Record::new("Event", event_doc, fields, constants), kinds);

        let mut fields = vec![
            RecordField {
                name: "id".into(),
                ty: FieldType::scalar(Scalar::U16),
                doc: "The entity id.".into(),
            },
            RecordField {
                name: "kind".into(),
                ty: FieldType::scalar(Scalar::U8),
                doc: format!("`{prefix}_KIND_*`: its archetype."),
            },
        ];
        let constants = archetypes
            .iter()
            .map(|a| Constant {
                c_name: format!("{prefix}_KIND_{}", snake(a.name).to_ascii_uppercase()),
                csharp: format!("Kind{}", pascal(a.name)),
                value: a.wire_id,
                doc: format!("`{}` (`kind`), carrying a `{}`.", a.name, a.state),
            })
            .collect();
        let mut mapped = Vec::new();
        for f in struct_fields("replica", replica)? {
            let name = record_name(f.name);
            if fields.iter().any(|r| r.name == name) {
                return Err(BindgenError::Reserved {
                    owner: replica.name,
                    field: f.name,
                });
            }
            let group = f.group.map(|g| format!(", group {g}")).unwrap_or_default();
            fields.push(RecordField {
                name: name.clone(),
                ty: field_type(replica.name, f)?,
                doc: format!(
                    "`{}` (`{}`{}{group}).",
                    f.name,
                    f.ty,
                    encoding_words(&f.encoding)
                ),
            });
            mapped.push(Mapped {
                game: f.name,
                record: name,
                encoding: f.encoding,
            });
        }
        let entity_doc = format!(
            "One entity's replicated state (`{}`) as the newest snapshot has it.",
            replica.name
        );
        let entity = (Record::new("Entity", entity_doc, fields, constants), mapped);

        Ok(Self {
            game: schema.game,
            names,
            hash: schema.hash.clone(),
            paths,
            input,
            event,
            entity,
        })
    }
}
