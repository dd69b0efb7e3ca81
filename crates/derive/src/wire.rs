//! `#[derive(Wire)]`: a struct writes its fields in order; an enum writes
//! its variant's index in the fewest bits that hold every index, then the
//! variant's fields.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{Data, DeriveInput, Fields, Ident};

use crate::attr::{Encoding, encoding};
use crate::codec::{WireField, all_or_errors, krate};

/// The `impl Wire` of `input`.
pub(crate) fn derive(input: &DeriveInput) -> syn::Result<TokenStream> {
    let k = krate();
    let name = &input.ident;
    misplaced(input)?;
    let (write, read, shape) = match &input.data {
        Data::Struct(s) => struct_body(name, &s.fields)?,
        Data::Enum(e) => enum_body(name, e)?,
        Data::Union(_) => {
            return Err(syn::Error::new_spanned(
                &input.ident,
                "Wire is derived for structs and enums, not unions",
            ));
        }
    };
    let name_text = name.to_string();
    let generics = bounded(input)?;
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    Ok(quote! {
        impl #impl_generics #k::Wire for #name #ty_generics #where_clause {
            #[inline]
            fn write(&self, __w: &mut #k::BitWriter) -> ::core::result::Result<(), #k::ProtoError> {
                __w.all_or_nothing(|__w| {
                    #write
                    ::core::result::Result::Ok(())
                })
            }
            #[inline]
            fn read(__r: &mut #k::BitReader) -> ::core::result::Result<Self, #k::ProtoError> {
                ::core::result::Result::Ok(#read)
            }
            const SCHEMA: ::core::option::Option<&'static #k::schema::TypeSchema> =
                ::core::option::Option::Some(&#k::schema::TypeSchema {
                    name: #name_text,
                    shape: #shape,
                });
        }
    })
}

/// A field's name in a schema: its identifier, or its index in a tuple.
pub(crate) fn field_name(field: &syn::Field, index: usize) -> String {
    field.ident.as_ref().map_or_else(
        || index.to_string(),
        |id| id.to_string().trim_start_matches("r#").to_owned(),
    )
}

/// The `schema::FieldSchema` constants of `wf`, in order.
fn fields_schema(wf: &[(WireField, Ident)]) -> Vec<TokenStream> {
    wf.iter()
        .enumerate()
        .map(|(i, (f, _))| f.schema(&field_name(f.field, i), None))
        .collect()
}

/// `#[wire(...)]` on the type or on a variant says nothing: an error there,
/// rather than an attribute silently ignored.
pub(crate) fn misplaced(input: &DeriveInput) -> syn::Result<()> {
    let variants: Vec<&syn::Attribute> = match &input.data {
        Data::Enum(e) => e.variants.iter().flat_map(|v| &v.attrs).collect(),
        _ => Vec::new(),
    };
    let wrong = input
        .attrs
        .iter()
        .chain(variants)
        .find(|a| a.path().is_ident("wire"));
    match wrong {
        Some(attr) => Err(syn::Error::new_spanned(
            attr,
            "#[wire(...)] goes on a field: it says how that field travels",
        )),
        None => Ok(()),
    }
}

/// The type's generics, with `FieldType: Wire` for every field that travels
/// by its own codec when the type has type parameters (as serde bounds
/// its derives), so `Pair<T>` is `Wire` whenever its fields are.
fn bounded(input: &DeriveInput) -> syn::Result<syn::Generics> {
    let k = krate();
    let mut generics = input.generics.clone();
    if generics.type_params().next().is_none() {
        return Ok(generics);
    }
    let fields: Vec<&syn::Field> = match &input.data {
        Data::Struct(s) => s.fields.iter().collect(),
        Data::Enum(e) => e.variants.iter().flat_map(|v| v.fields.iter()).collect(),
        Data::Union(_) => Vec::new(),
    };
    let clause = generics.make_where_clause();
    for f in fields {
        if encoding(&f.attrs)? == Encoding::Plain {
            let ty = &f.ty;
            clause.predicates.push(syn::parse_quote!(#ty: #k::Wire));
        }
    }
    Ok(generics)
}

/// The fields of a struct or variant with the names they are bound to when
/// written (`__f0`, `__f1`, ...) and what errors call them.
pub(crate) fn wire_fields<'a>(
    owner: &str,
    fields: &'a Fields,
) -> syn::Result<Vec<(WireField<'a>, Ident)>> {
    all_or_errors(fields.iter().enumerate().map(|(i, f)| {
        let label = match &f.ident {
            Some(id) => format!("{owner}.{id}"),
            None => format!("{owner}.{i}"),
        };
        Ok((WireField::new(f, label)?, format_ident!("__f{i}")))
    }))
}

/// A pattern or constructor of `path` from `fields` bound to `values`.
fn shape(path: TokenStream, fields: &Fields, values: &[TokenStream]) -> TokenStream {
    match fields {
        Fields::Named(named) => {
            let names = named.named.iter().map(|f| &f.ident);
            quote!(#path { #(#names: #values),* })
        }
        Fields::Unnamed(_) => quote!(#path ( #(#values),* )),
        Fields::Unit => path,
    }
}

/// A body's write statements, read expression and schema shape.
type Body = (TokenStream, TokenStream, TokenStream);

fn struct_body(name: &Ident, fields: &Fields) -> syn::Result<Body> {
    let wf = wire_fields(&name.to_string(), fields)?;
    let binds: Vec<TokenStream> = wf.iter().map(|(_, b)| quote!(#b)).collect();
    let pattern = shape(quote!(Self), fields, &binds);
    let writes = wf.iter().map(|(f, b)| f.write(&quote!(#b)));
    let reads: Vec<TokenStream> = wf.iter().map(|(f, _)| f.read()).collect();
    let write = quote! {
        let #pattern = self;
        #(#writes)*
    };
    let k = krate();
    let schema = fields_schema(&wf);
    let schema = quote!(#k::schema::Shape::Struct(&[#(#schema),*]));
    Ok((write, shape(quote!(Self), fields, &reads), schema))
}

fn enum_body(name: &Ident, data: &syn::DataEnum) -> syn::Result<Body> {
    let k = krate();
    let count = data.variants.len();
    if count == 0 {
        return Err(syn::Error::new_spanned(
            name,
            "Wire needs at least one variant",
        ));
    }
    let tag_bits = usize::BITS - (count - 1).leading_zeros();
    let kind_label = format!("{name} kind");
    let mut write_arms = Vec::new();
    let mut read_arms = Vec::new();
    let mut variants = Vec::new();
    for (index, v) in data.variants.iter().enumerate() {
        let vname = &v.ident;
        let index = index as u32;
        let wf = wire_fields(&format!("{name}::{vname}"), &v.fields)?;
        let binds: Vec<TokenStream> = wf.iter().map(|(_, b)| quote!(#b)).collect();
        let pattern = shape(quote!(Self::#vname), &v.fields, &binds);
        let writes = wf.iter().map(|(f, b)| f.write(&quote!(#b)));
        write_arms.push(quote! {
            #pattern => {
                __w.write_bits(#index, #tag_bits)?;
                #(#writes)*
            }
        });
        let reads: Vec<TokenStream> = wf.iter().map(|(f, _)| f.read()).collect();
        let value = shape(quote!(Self::#vname), &v.fields, &reads);
        read_arms.push(quote!(#index => #value,));
        let (vtext, fields) = (vname.to_string(), fields_schema(&wf));
        variants.push(quote!(#k::schema::VariantSchema { name: #vtext, fields: &[#(#fields),*] }));
    }
    let write = quote! {
        match self { #(#write_arms)* }
    };
    let read = quote! {
        match __r.read_bits(#tag_bits)? {
            #(#read_arms)*
            _ => return ::core::result::Result::Err(#k::ProtoError::invalid(#kind_label)),
        }
    };
    let schema = quote!(#k::schema::Shape::Enum(&[#(#variants),*]));
    Ok((write, read, schema))
}

#[cfg(test)]
mod tests {
    use syn::parse_quote;

    #[test]
    fn wire_attributes_off_a_field_are_errors() {
        for input in [
            parse_quote!(
                #[wire(bits = 3)]
                struct A(u8);
            ),
            parse_quote!(
                enum B {
                    #[wire(varint)]
                    X(u8),
                }
            ),
        ] {
            assert!(super::derive(&input).is_err());
        }
        assert!(
            super::derive(&parse_quote!(
                enum C {
                    X(#[wire(varint)] u8),
                }
            ))
            .is_ok()
        );
    }
}
