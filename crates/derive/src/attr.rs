//! Parsing `#[wire(...)]` on a field into an [`Encoding`]: how its value
//! travels. Every mistake is a `syn::Error` spanned at the attribute, so
//! the compiler points at the field.

use proc_macro2::Span;
use syn::parse::ParseStream;
use syn::spanned::Spanned;
use syn::{Attribute, Lit, Token};

/// How one value travels.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Encoding {
    /// The type's own `Wire` codec.
    Plain,
    /// An integer in this many bits (two's complement when signed).
    Bits(u32),
    /// An integer in `lo..=hi`, as its offset from `lo`.
    Range(Bound, Bound),
    /// An integer as a varint (zigzag when signed).
    Varint,
    /// An `f32` over `lo..=hi`, quantized in a number of bits or to a step.
    Float { lo: f64, hi: f64, size: FloatSize },
    /// An `f32` angle in radians, 16 bits.
    Angle,
    /// A `[f32; 3]` direction, octahedral, this many bits per component.
    UnitVector(u32),
    /// An entity id in its compact code.
    Entity,
}

/// An end of an integer range: a literal, or a constant's path (checked
/// when the expanded code is compiled).
#[derive(Clone)]
pub(crate) enum Bound {
    /// `-100`, `1023`.
    Lit(i128),
    /// `MAX_ROUND`, `-HALF_FIELD` (negated when `true`).
    Path(bool, syn::Path),
}

impl Bound {
    /// The bound as written, for comparing and printing (syn's paths have
    /// neither without its `extra-traits`).
    fn text(&self) -> String {
        match self {
            Bound::Lit(v) => v.to_string(),
            Bound::Path(neg, p) => format!("{}{}", if *neg { "-" } else { "" }, quote::quote!(#p)),
        }
    }
}

impl PartialEq for Bound {
    fn eq(&self, other: &Self) -> bool {
        self.text() == other.text()
    }
}

impl std::fmt::Debug for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text())
    }
}

/// How finely a quantized float is written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum FloatSize {
    /// This many bits.
    Bits(u32),
    /// Codes at most this far apart.
    Step(f64),
}

impl Encoding {
    /// Whether the encoding is of a whole array (`[f32; 3]`), not of each
    /// element of an array field.
    pub(crate) fn takes_an_array(&self) -> bool {
        matches!(self, Encoding::UnitVector(_))
    }
}

const KEYS: &str = "bits = N, range = LO..=HI (literals or constants), varint, float(range = LO..=HI, step = S | bits = N), angle, unit_vector(bits = N), entity";

/// The encoding the `#[wire(...)]` attributes among `attrs` ask for
/// ([`Encoding::Plain`] without one); at most one attribute, one encoding.
pub(crate) fn encoding(attrs: &[Attribute]) -> syn::Result<Encoding> {
    let mut found: Option<(Encoding, Span)> = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("wire")) {
        attr.parse_nested_meta(|meta| {
            let span = meta.path.span();
            let key = meta
                .path
                .get_ident()
                .map(|i| i.to_string())
                .unwrap_or_default();
            let enc = match key.as_str() {
                "bits" => Encoding::Bits(int_in(&meta.value()?.parse()?, 1, 64, "bits")?),
                "range" => {
                    let (lo, hi) = int_range(meta.value()?)?;
                    if let (Bound::Lit(lo), Bound::Lit(hi)) = (&lo, &hi)
                        && hi - lo > i128::from(u64::MAX)
                    {
                        return Err(meta.error("range: more than 64 bits apart"));
                    }
                    Encoding::Range(lo, hi)
                }
                "varint" => Encoding::Varint,
                "angle" => Encoding::Angle,
                "entity" => Encoding::Entity,
                "unit_vector" => {
                    let mut bits = None;
                    meta.parse_nested_meta(|inner| {
                        if inner.path.is_ident("bits") {
                            bits = Some(int_in(&inner.value()?.parse()?, 2, 16, "bits")?);
                            Ok(())
                        } else {
                            Err(inner.error("unit_vector takes `bits = N` (2..=16)"))
                        }
                    })?;
                    Encoding::UnitVector(
                        bits.ok_or_else(|| meta.error("unit_vector needs `bits = N` (2..=16)"))?,
                    )
                }
                "float" => float(&meta)?,
                _ => {
                    return Err(
                        meta.error(format!("unknown wire encoding; expected one of: {KEYS}"))
                    );
                }
            };
            if found.is_some() {
                return Err(syn::Error::new(span, "a field has one wire encoding"));
            }
            found = Some((enc, span));
            Ok(())
        })?;
    }
    Ok(found.map_or(Encoding::Plain, |(e, _)| e))
}

/// `float(range = LO..=HI, step = S)` or `float(range = LO..=HI, bits = N)`.
fn float(meta: &syn::meta::ParseNestedMeta) -> syn::Result<Encoding> {
    let (mut range, mut size) = (None, None);
    meta.parse_nested_meta(|inner| {
        let set = |size: &mut Option<FloatSize>, s| {
            if size.replace(s).is_some() {
                return Err(inner.error("float takes `step` or `bits`, not both"));
            }
            Ok(())
        };
        if inner.path.is_ident("range") {
            let (lo, hi) = float_range(inner.value()?)?;
            if !(lo.is_finite() && hi.is_finite() && lo < hi) {
                return Err(inner.error("float range: LO must be below HI"));
            }
            range = Some((lo, hi));
            Ok(())
        } else if inner.path.is_ident("step") {
            let step = signed_float(inner.value()?)?;
            if !(step.is_finite() && step > 0.0) {
                return Err(inner.error("float step must be positive"));
            }
            set(&mut size, FloatSize::Step(step))
        } else if inner.path.is_ident("bits") {
            let bits = int_in(&inner.value()?.parse()?, 1, 24, "bits")?;
            set(&mut size, FloatSize::Bits(bits))
        } else {
            Err(inner.error("float takes `range = LO..=HI` and `step = S` or `bits = N`"))
        }
    })?;
    let (lo, hi) = range.ok_or_else(|| meta.error("float needs `range = LO..=HI`"))?;
    let size = size.ok_or_else(|| meta.error("float needs `step = S` or `bits = N`"))?;
    Ok(Encoding::Float { lo, hi, size })
}

/// An integer literal in `min..=max`.
fn int_in(lit: &syn::LitInt, min: u32, max: u32, what: &str) -> syn::Result<u32> {
    match lit.base10_parse::<u32>() {
        Ok(v) if (min..=max).contains(&v) => Ok(v),
        _ => Err(syn::Error::new(
            lit.span(),
            format!("{what} must be in {min}..={max}"),
        )),
    }
}

/// `LO..=HI` of integer literals or constants, `LO <= HI` when both are
/// literals.
fn int_range(input: ParseStream) -> syn::Result<(Bound, Bound)> {
    let start = input.span();
    let lo = bound(input)?;
    input.parse::<Token![..=]>()?;
    let hi = bound(input)?;
    if let (Bound::Lit(lo), Bound::Lit(hi)) = (&lo, &hi)
        && lo > hi
    {
        return Err(syn::Error::new(start, "range: LO must not be above HI"));
    }
    Ok((lo, hi))
}

/// An integer literal or a constant's path, maybe negated.
fn bound(input: ParseStream) -> syn::Result<Bound> {
    let neg = input.parse::<Option<Token![-]>>()?.is_some();
    if input.peek(syn::Ident) || input.peek(Token![::]) || input.peek(Token![Self]) {
        return Ok(Bound::Path(neg, input.parse()?));
    }
    let v: i128 = input.parse::<syn::LitInt>()?.base10_parse()?;
    Ok(Bound::Lit(if neg { -v } else { v }))
}

/// `LO..=HI` of number literals.
fn float_range(input: ParseStream) -> syn::Result<(f64, f64)> {
    let lo = signed_float(input)?;
    input.parse::<Token![..=]>()?;
    Ok((lo, signed_float(input)?))
}

/// An optional `-`, then a float or integer literal.
fn signed_float(input: ParseStream) -> syn::Result<f64> {
    let neg = input.parse::<Option<Token![-]>>()?.is_some();
    let v = match input.parse::<Lit>()? {
        Lit::Float(f) => f.base10_parse::<f64>()?,
        Lit::Int(i) => i.base10_parse::<f64>()?,
        other => return Err(syn::Error::new(other.span(), "expected a number")),
    };
    Ok(if neg { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn of(attr: Attribute) -> syn::Result<Encoding> {
        encoding(&[attr])
    }

    #[test]
    fn every_form_parses() {
        assert_eq!(
            of(parse_quote!(#[wire(bits = 5)])).unwrap(),
            Encoding::Bits(5)
        );
        assert_eq!(
            of(parse_quote!(#[wire(range = -100..=100)])).unwrap(),
            Encoding::Range(Bound::Lit(-100), Bound::Lit(100))
        );
        assert_eq!(
            of(parse_quote!(#[wire(range = 0..=MAX_ROUND)])).unwrap(),
            Encoding::Range(Bound::Lit(0), Bound::Path(false, parse_quote!(MAX_ROUND)))
        );
        assert_eq!(
            of(parse_quote!(#[wire(range = -HALF..=HALF)])).unwrap(),
            Encoding::Range(
                Bound::Path(true, parse_quote!(HALF)),
                Bound::Path(false, parse_quote!(HALF))
            )
        );
        assert_eq!(of(parse_quote!(#[wire(varint)])).unwrap(), Encoding::Varint);
        assert_eq!(
            of(parse_quote!(#[wire(float(range = -1.5..=2, step = 0.01))])).unwrap(),
            Encoding::Float {
                lo: -1.5,
                hi: 2.0,
                size: FloatSize::Step(0.01)
            }
        );
        assert_eq!(
            of(parse_quote!(#[wire(float(bits = 8, range = 0.0..=1.0))])).unwrap(),
            Encoding::Float {
                lo: 0.0,
                hi: 1.0,
                size: FloatSize::Bits(8)
            }
        );
        assert_eq!(of(parse_quote!(#[wire(angle)])).unwrap(), Encoding::Angle);
        assert_eq!(
            of(parse_quote!(#[wire(unit_vector(bits = 11))])).unwrap(),
            Encoding::UnitVector(11)
        );
        assert_eq!(of(parse_quote!(#[wire(entity)])).unwrap(), Encoding::Entity);
        assert_eq!(
            encoding(&[parse_quote!(#[doc = "x"])]).unwrap(),
            Encoding::Plain
        );
    }

    #[test]
    fn mistakes_are_errors() {
        for bad in [
            parse_quote!(#[wire(bits = 0)]),
            parse_quote!(#[wire(bits = 65)]),
            parse_quote!(#[wire(range = 5..=1)]),
            parse_quote!(#[wire(range = 0..=18446744073709551616)]),
            parse_quote!(#[wire(colour)]),
            parse_quote!(#[wire(varint, angle)]),
            parse_quote!(#[wire(float(range = 1.0..=1.0, bits = 4))]),
            parse_quote!(#[wire(float(range = 0.0..=1.0))]),
            parse_quote!(#[wire(float(range = 0.0..=1.0, step = 0.1, bits = 3))]),
            parse_quote!(#[wire(float(range = 0.0..=1.0, step = -0.1))]),
            parse_quote!(#[wire(unit_vector(bits = 17))]),
            parse_quote!(#[wire(unit_vector)]),
        ] {
            assert!(of(bad).is_err());
        }
    }
}
