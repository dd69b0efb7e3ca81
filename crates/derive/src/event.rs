//! `#[derive(ReliableEvent)]` and `#[derive(InputPayload)]`: the engine's
//! traits for a game's events and input, over the type's `Wire` codec.
//! An event enum's variant names, in snake case, are its `KINDS`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, Fields};

use crate::codec::{krate, member_fields};

/// The `impl ReliableEvent` of `input`.
pub(crate) fn derive_event(input: &DeriveInput) -> syn::Result<TokenStream> {
    let k = krate();
    let name = &input.ident;
    let mut ends = Vec::new();
    let (kinds, kind_body) = match &input.data {
        Data::Enum(e) => {
            for v in &e.variants {
                if ends_match(&v.attrs)? {
                    ends.push(pattern(v));
                }
            }
            let kinds: Vec<String> = e
                .variants
                .iter()
                .map(|v| snake_case(&v.ident.to_string()))
                .collect();
            let arms = e.variants.iter().enumerate().map(|(i, v)| {
                let pattern = pattern(v);
                quote!(#pattern => #i,)
            });
            (kinds, quote!(match self { #(#arms)* }))
        }
        Data::Struct(_) => (vec![snake_case(&name.to_string())], quote!(0)),
        Data::Union(_) => {
            return Err(syn::Error::new_spanned(
                name,
                "ReliableEvent is derived for enums and structs",
            ));
        }
    };
    let ends_fn = if ends.is_empty() {
        TokenStream::new()
    } else {
        quote! {
            #[inline]
            fn ends_match(&self) -> bool {
                ::core::matches!(self, #(#ends)|*)
            }
        }
    };
    let count = kinds.len();
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    Ok(quote! {
        impl #impl_generics #k::ReliableEvent for #name #ty_generics #where_clause {
            const KINDS: &'static [&'static str] = &[#(#kinds),*];
            #[inline]
            fn encode(&self, w: &mut #k::BitWriter) -> ::core::result::Result<(), #k::ProtoError> {
                #k::Wire::write(self, w)
            }
            #[inline]
            fn decode(r: &mut #k::BitReader) -> ::core::result::Result<Self, #k::ProtoError> {
                <Self as #k::Wire>::read(r)
            }
            #[inline]
            fn kind(&self) -> usize {
                #kind_body
            }
            const SCHEMA: ::core::option::Option<&'static #k::schema::TypeSchema> =
                <Self as #k::Wire>::SCHEMA;
            #ends_fn
        }
        const _: () = ::core::assert!(
            #count <= #k::MAX_EVENT_KINDS,
            "a game names at most MAX_EVENT_KINDS kinds of event",
        );
    })
}

/// The pattern that matches variant `v` whatever its fields hold.
fn pattern(v: &syn::Variant) -> TokenStream {
    let name = &v.ident;
    match v.fields {
        Fields::Named(_) => quote!(Self::#name { .. }),
        Fields::Unnamed(_) => quote!(Self::#name(..)),
        Fields::Unit => quote!(Self::#name),
    }
}

/// Whether a variant says `#[event(ends_match)]`.
fn ends_match(attrs: &[syn::Attribute]) -> syn::Result<bool> {
    let mut found = false;
    for attr in attrs.iter().filter(|a| a.path().is_ident("event")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("ends_match") {
                found = true;
                Ok(())
            } else {
                Err(meta.error("event takes `ends_match`"))
            }
        })?;
    }
    Ok(found)
}

/// The `impl InputPayload` of `input`; with `#[input(delta = fields)]` on
/// a struct, a redundant copy in an input batch is written field by field
/// (a bit each, then the field when it changed) instead of whole.
pub(crate) fn derive_input(input: &DeriveInput) -> syn::Result<TokenStream> {
    let k = krate();
    let name = &input.ident;
    let delta = if delta_by_fields(&input.attrs)? {
        field_delta(input)?
    } else {
        TokenStream::new()
    };
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    Ok(quote! {
        impl #impl_generics #k::InputPayload for #name #ty_generics #where_clause {
            #[inline]
            fn encode(&self, w: &mut #k::BitWriter) -> ::core::result::Result<(), #k::ProtoError> {
                #k::Wire::write(self, w)
            }
            #[inline]
            fn decode(r: &mut #k::BitReader) -> ::core::result::Result<Self, #k::ProtoError> {
                <Self as #k::Wire>::read(r)
            }
            const SCHEMA: ::core::option::Option<&'static #k::schema::TypeSchema> =
                <Self as #k::Wire>::SCHEMA;
            #delta
        }
    })
}

/// Whether the type says `#[input(delta = fields)]`.
fn delta_by_fields(attrs: &[syn::Attribute]) -> syn::Result<bool> {
    let mut fields = false;
    for attr in attrs.iter().filter(|a| a.path().is_ident("input")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("delta") {
                let how: syn::Ident = meta.value()?.parse()?;
                if how != "fields" {
                    return Err(syn::Error::new(how.span(), "delta takes `fields`"));
                }
                fields = true;
                Ok(())
            } else {
                Err(meta.error("input takes `delta = fields`"))
            }
        })?;
    }
    Ok(fields)
}

/// `encode_delta` and `decode_delta` field by field, for a struct.
fn field_delta(input: &DeriveInput) -> syn::Result<TokenStream> {
    let k = krate();
    let name = &input.ident;
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new_spanned(
            name,
            "delta = fields is for structs",
        ));
    };
    let fields = member_fields(name, &data.fields)?;
    let writes = fields.iter().map(|(m, f)| {
        let write = f.write(&quote!(&self.#m));
        quote! {
            let __changed = self.#m != newer.#m;
            __w.write_bool(__changed)?;
            if __changed { #write }
        }
    });
    let reads = fields.iter().map(|(m, f)| {
        let read = f.read();
        quote!(if __r.read_bool()? { __v.#m = #read; })
    });
    Ok(quote! {
        #[inline]
        fn encode_delta(&self, newer: &Self, w: &mut #k::BitWriter) -> ::core::result::Result<(), #k::ProtoError> {
            w.all_or_nothing(|__w| {
                #(#writes)*
                ::core::result::Result::Ok(())
            })
        }
        #[inline]
        fn decode_delta(newer: &Self, __r: &mut #k::BitReader) -> ::core::result::Result<Self, #k::ProtoError> {
            let mut __v = *newer;
            #(#reads)*
            ::core::result::Result::Ok(__v)
        }
    })
}

/// `RoundEnd` -> `round_end`.
fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn variant_names_become_snake_case() {
        assert_eq!(super::snake_case("You"), "you");
        assert_eq!(super::snake_case("RoundEnd"), "round_end");
        assert_eq!(super::snake_case("over"), "over");
    }
}
