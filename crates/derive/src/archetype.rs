//! `#[derive(Archetype)]`: a kind of replicated entity and its field
//! groups, named once. A unit struct is a game's only archetype (wire id
//! 0); a fieldless enum has one per variant (wire id: the variant's index).
//! Each says `#[archetype(groups = State)]`, where `State` has
//! `FieldGroups` (usually `#[derive(Replicated)]`).

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Attribute, Data, DeriveInput, Fields, Type};

use crate::codec::krate;

/// The `impl Archetype` of `input`.
pub(crate) fn derive(input: &DeriveInput) -> syn::Result<TokenStream> {
    let k = krate();
    let name = &input.ident;
    let mut kinds = Vec::new();
    let (wire_id, from_wire_id, groups) = match &input.data {
        Data::Struct(s) if matches!(s.fields, Fields::Unit) => {
            let state = groups_of(&input.attrs, name)?;
            kinds.push(kind_schema(name, 0, &state));
            (
                quote!(0),
                quote!((id == 0).then_some(Self)),
                quote!(<#state as #k::FieldGroups>::GROUPS),
            )
        }
        Data::Enum(e) if e.variants.len() <= 256 => {
            let mut ids = Vec::new();
            let mut froms = Vec::new();
            let mut masks = Vec::new();
            for (i, v) in e.variants.iter().enumerate() {
                if !matches!(v.fields, Fields::Unit) {
                    return Err(syn::Error::new_spanned(
                        v,
                        "an archetype's variants carry no fields",
                    ));
                }
                let (vname, id) = (&v.ident, i as u8);
                let state = groups_of(&v.attrs, vname)?;
                kinds.push(kind_schema(vname, id, &state));
                ids.push(quote!(Self::#vname => #id,));
                froms.push(quote!(#id => ::core::option::Option::Some(Self::#vname),));
                masks.push(quote!(Self::#vname => <#state as #k::FieldGroups>::GROUPS,));
            }
            (
                quote!(match self { #(#ids)* }),
                quote!(match id { #(#froms)* _ => ::core::option::Option::None }),
                quote!(match self { #(#masks)* }),
            )
        }
        _ => {
            return Err(syn::Error::new_spanned(
                name,
                "Archetype is derived for a unit struct or an enum of at most 256 fieldless variants",
            ));
        }
    };
    Ok(quote! {
        impl #k::Archetype for #name {
            #[inline]
            fn wire_id(self) -> u8 {
                #wire_id
            }
            #[inline]
            fn from_wire_id(id: u8) -> ::core::option::Option<Self> {
                #from_wire_id
            }
            #[inline]
            fn groups(self) -> #k::GroupMask {
                #groups
            }
            const SCHEMA: ::core::option::Option<&'static [#k::ArchetypeSchema]> =
                ::core::option::Option::Some(&[#(#kinds),*]);
        }
    })
}

/// The `ArchetypeSchema` constant of one kind.
fn kind_schema(name: &syn::Ident, wire_id: u8, state: &Type) -> TokenStream {
    let k = krate();
    let (name, state) = (name.to_string(), quote!(#state).to_string());
    quote!(#k::ArchetypeSchema { name: #name, wire_id: #wire_id, state: #state })
}

/// The `State` of `#[archetype(groups = State)]` among `attrs`.
fn groups_of(attrs: &[Attribute], at: &syn::Ident) -> syn::Result<Type> {
    let mut state = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("archetype")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("groups") {
                state = Some(meta.value()?.parse()?);
                Ok(())
            } else {
                Err(meta.error("archetype takes `groups = State`"))
            }
        })?;
    }
    state.ok_or_else(|| {
        syn::Error::new(
            at.span(),
            "an archetype needs #[archetype(groups = State)]: the replicated state it carries",
        )
    })
}
