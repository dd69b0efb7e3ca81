//! The code that writes and reads one field with its [`Encoding`]: the
//! one place where an attribute becomes calls into `hightick_proto`, shared
//! by every derive.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Field, Type};

use crate::attr::{Bound, Encoding, FloatSize, encoding};

/// The path the expanded code names `hightick_proto` and the engine by.
pub(crate) fn krate() -> TokenStream {
    quote!(::hightick_engine::__derive)
}

/// One field to write and read: its type, encoding and name on errors.
pub(crate) struct WireField<'a> {
    pub(crate) field: &'a Field,
    pub(crate) encoding: Encoding,
    /// `Type.field`, `Type::Variant.field`: what an error names.
    pub(crate) label: String,
}

impl<'a> WireField<'a> {
    /// The field with its `#[wire(...)]` encoding parsed.
    pub(crate) fn new(field: &'a Field, label: String) -> syn::Result<Self> {
        Ok(Self {
            field,
            encoding: encoding(&field.attrs)?,
            label,
        })
    }

    /// A statement writing the value behind the reference `value` into `__w`.
    pub(crate) fn write(&self, value: &TokenStream) -> TokenStream {
        let k = krate();
        let label = &self.label;
        let body = write_value(&self.field.ty, &self.encoding, value);
        quote_spanned! {self.field.ty.span()=>
            (#body).map_err(|e| #k::ProtoError::in_field(e, #label))?;
        }
    }

    /// A `FieldSchema` constant describing the field (in `group`, for
    /// replicated state).
    pub(crate) fn schema(&self, name: &str, group: Option<u8>) -> TokenStream {
        let k = krate();
        let ty = type_text(&self.field.ty);
        let encoding = encoding_schema(&self.encoding);
        let group = match group {
            Some(g) => quote!(::core::option::Option::Some(#g)),
            None => quote!(::core::option::Option::None),
        };
        quote! {
            #k::schema::FieldSchema { name: #name, ty: #ty, encoding: #encoding, group: #group }
        }
    }

    /// An expression reading the value from `__r` (with `?`).
    pub(crate) fn read(&self) -> TokenStream {
        let k = krate();
        let label = &self.label;
        let body = read_value(&self.field.ty, &self.encoding);
        quote_spanned! {self.field.ty.span()=>
            (#body).map_err(|e| #k::ProtoError::in_field(e, #label))?
        }
    }
}

/// A struct's fields as members (`self.x`, `self.0`) with their codecs,
/// each named `Owner.field` on errors.
pub(crate) fn member_fields<'a>(
    owner: &syn::Ident,
    fields: &'a syn::Fields,
) -> syn::Result<Vec<(syn::Member, WireField<'a>)>> {
    all_or_errors(fields.iter().enumerate().map(|(i, f)| {
        let member = f
            .ident
            .clone()
            .map_or(syn::Member::from(i), syn::Member::from);
        let label = match &member {
            syn::Member::Named(id) => format!("{owner}.{id}"),
            syn::Member::Unnamed(i) => format!("{owner}.{}", i.index),
        };
        Ok((member, WireField::new(f, label)?))
    }))
}

/// Every `Ok`, or every error combined: one build reports the mistakes of
/// all fields at once.
pub(crate) fn all_or_errors<T>(
    results: impl Iterator<Item = syn::Result<T>>,
) -> syn::Result<Vec<T>> {
    let mut oks = Vec::new();
    let mut errors: Option<syn::Error> = None;
    for r in results {
        match (r, &mut errors) {
            (Ok(v), _) => oks.push(v),
            (Err(e), Some(all)) => all.combine(e),
            (Err(e), none) => *none = Some(e),
        }
    }
    errors.map_or(Ok(oks), Err)
}

/// The element type when `ty` is an array whose elements the encoding
/// applies to one by one.
fn element<'t>(ty: &'t Type, enc: &Encoding) -> Option<&'t Type> {
    let Type::Array(array) = ty else { return None };
    let inner_is_array = matches!(*array.elem, Type::Array(_));
    (*enc != Encoding::Plain && (!enc.takes_an_array() || inner_is_array)).then_some(&array.elem)
}

fn write_value(ty: &Type, enc: &Encoding, v: &TokenStream) -> TokenStream {
    let k = krate();
    if let Some(elem) = element(ty, enc) {
        let one = write_value(elem, enc, &quote!(__v));
        return quote!(#k::array::write(__w, #v, |__v, __w| #one));
    }
    match enc {
        Encoding::Plain => quote!(<#ty as #k::Wire>::write(#v, __w)),
        Encoding::Bits(bits) => quote!(#k::int::write_bits(__w, *#v, #bits)),
        Encoding::Range(lo, hi) => {
            let (lo, hi) = range_bounds(lo, hi);
            quote!(#k::int::write_range(__w, *#v, #lo, #hi))
        }
        Encoding::Varint => quote!(#k::int::write_varint(__w, *#v)),
        Encoding::Float { .. } => {
            let q = float_quantizer(enc);
            quote!({ #q Q.write(__w, *#v) })
        }
        Encoding::Angle => quote!(#k::quantize::write_angle(__w, *#v)),
        Encoding::UnitVector(_) => {
            let q = unit_vector_quantizer(enc);
            quote!({ #q Q.write(__w, *#v) })
        }
        Encoding::Entity => quote!(#k::write_entity_id(__w, *#v)),
    }
}

fn read_value(ty: &Type, enc: &Encoding) -> TokenStream {
    let k = krate();
    if let Some(elem) = element(ty, enc) {
        let one = read_value(elem, enc);
        return quote!(#k::array::read(__r, |__r| #one));
    }
    match enc {
        Encoding::Plain => quote!(<#ty as #k::Wire>::read(__r)),
        Encoding::Bits(bits) => quote!(#k::int::read_bits::<#ty>(__r, #bits)),
        Encoding::Range(lo, hi) => {
            let (lo, hi) = range_bounds(lo, hi);
            quote!(#k::int::read_range::<#ty>(__r, #lo, #hi))
        }
        Encoding::Varint => quote!(#k::int::read_varint::<#ty>(__r)),
        Encoding::Float { .. } => {
            let q = float_quantizer(enc);
            quote!({ #q Q.read(__r) })
        }
        Encoding::Angle => quote!(#k::quantize::read_angle(__r)),
        Encoding::UnitVector(_) => {
            let q = unit_vector_quantizer(enc);
            quote!({ #q Q.read(__r) })
        }
        Encoding::Entity => quote!(#k::read_entity_id(__r)),
    }
}

/// The bounds of a range as constant `i128` expressions; bounds named by
/// constants are checked (`LO <= HI`) when the expanded code compiles.
fn range_bounds(lo: &Bound, hi: &Bound) -> (TokenStream, TokenStream) {
    let expr = |b: &Bound| match b {
        Bound::Lit(v) => quote!(#v),
        Bound::Path(false, p) => quote!((#p as i128)),
        Bound::Path(true, p) => quote!((-(#p as i128))),
    };
    let (lo, hi) = (expr(lo), expr(hi));
    let checked_hi = quote!({
        const { ::core::assert!(#lo <= #hi, "wire(range = LO..=HI): LO is above HI") };
        #hi
    });
    (lo, checked_hi)
}

/// `const Q: FloatQuantizer = ...;`, made at compile time: a configuration
/// the quantizer refuses fails the build.
fn float_quantizer(enc: &Encoding) -> TokenStream {
    let k = krate();
    let Encoding::Float { lo, hi, size } = enc else {
        return TokenStream::new();
    };
    let (lo, hi) = (*lo as f32, *hi as f32);
    let make = match size {
        FloatSize::Bits(bits) => quote!(#k::quantize::FloatQuantizer::with_bits(#lo, #hi, #bits)),
        FloatSize::Step(step) => {
            let precision = (*step / 2.0) as f32;
            quote!(#k::quantize::FloatQuantizer::with_precision(#lo, #hi, #precision))
        }
    };
    quote! {
        const Q: #k::quantize::FloatQuantizer = match #make {
            ::core::result::Result::Ok(q) => q,
            ::core::result::Result::Err(_) => {
                ::core::panic!("wire(float(...)): a step that fine needs more than 24 bits")
            }
        };
    }
}

/// `const Q: UnitVectorQuantizer = ...;` (the bits were checked when parsed).
fn unit_vector_quantizer(enc: &Encoding) -> TokenStream {
    let k = krate();
    let Encoding::UnitVector(bits) = enc else {
        return TokenStream::new();
    };
    quote! {
        const Q: #k::quantize::UnitVectorQuantizer = match #k::quantize::UnitVectorQuantizer::new(#bits) {
            ::core::result::Result::Ok(q) => q,
            ::core::result::Result::Err(_) => ::core::panic!("wire(unit_vector(bits)) must be in 2..=16"),
        };
    }
}

/// The Rust type as written, without the token spacing (`[i32; 2]`).
fn type_text(ty: &Type) -> String {
    let spaced = quote!(#ty).to_string();
    [
        (" ;", ";"),
        ("[ ", "["),
        (" ]", "]"),
        (" <", "<"),
        ("< ", "<"),
        (" >", ">"),
        (" ,", ","),
    ]
    .iter()
    .fold(spaced, |t, (from, to)| t.replace(from, to))
}

/// The `schema::Encoding` constant of an encoding.
fn encoding_schema(enc: &Encoding) -> TokenStream {
    let k = krate();
    let e = quote!(#k::schema::Encoding);
    match enc {
        Encoding::Plain => quote!(#e::Plain),
        Encoding::Bits(bits) => quote!(#e::Bits { bits: #bits }),
        Encoding::Range(lo, hi) => {
            let (lo, hi) = range_bounds(lo, hi);
            quote!(#e::Range { lo: (#lo) as i64, hi: (#hi) as i64 })
        }
        Encoding::Varint => quote!(#e::Varint),
        Encoding::Float { lo, hi, .. } => {
            let quantizer = float_quantizer(enc);
            let (lo, hi) = (*lo as f32, *hi as f32);
            quote!(#e::Float { lo: #lo, hi: #hi, bits: { #quantizer Q.bits() } })
        }
        Encoding::Angle => quote!(#e::Angle),
        Encoding::UnitVector(bits) => quote!(#e::UnitVector { bits: #bits }),
        Encoding::Entity => quote!(#e::Entity),
    }
}
