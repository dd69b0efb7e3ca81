//! `#[derive(ReliableEvent)]` and `#[derive(InputPayload)]`: the engine's
//! traits for a game's events and input, over the type's `Wire` codec.
//! An event enum's variant names, in snake case, are its `KINDS`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, Fields};

use crate::codec::krate;

/// The `impl ReliableEvent` of `input`.
pub(crate) fn derive_event(input: &DeriveInput) -> syn::Result<TokenStream> {
    let k = krate();
    let name = &input.ident;
    let (kinds, kind_body) = match &input.data {
        Data::Enum(e) => {
            let kinds: Vec<String> = e
                .variants
                .iter()
                .map(|v| snake_case(&v.ident.to_string()))
                .collect();
            let arms = e.variants.iter().enumerate().map(|(i, v)| {
                let vname = &v.ident;
                let pattern = match v.fields {
                    Fields::Named(_) => quote!(Self::#vname { .. }),
                    Fields::Unnamed(_) => quote!(Self::#vname(..)),
                    Fields::Unit => quote!(Self::#vname),
                };
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
        }
        const _: () = ::core::assert!(
            #count <= #k::MAX_EVENT_KINDS,
            "a game names at most MAX_EVENT_KINDS kinds of event",
        );
    })
}

/// The `impl InputPayload` of `input`.
pub(crate) fn derive_input(input: &DeriveInput) -> TokenStream {
    let k = krate();
    let name = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    quote! {
        impl #impl_generics #k::InputPayload for #name #ty_generics #where_clause {
            #[inline]
            fn encode(&self, w: &mut #k::BitWriter) -> ::core::result::Result<(), #k::ProtoError> {
                #k::Wire::write(self, w)
            }
            #[inline]
            fn decode(r: &mut #k::BitReader) -> ::core::result::Result<Self, #k::ProtoError> {
                <Self as #k::Wire>::read(r)
            }
        }
    }
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
