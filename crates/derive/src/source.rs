//! `#[derive(ReplicationSource)]` on a game's state: the writer reads each
//! entity's field groups from the one field marked `#[replicas]`, a table of
//! `Replicated` states indexed by entity slot (`Vec<State>`, a boxed slice
//! or an array: the engine's `ReplicaTable`). The archetype is the state's
//! (`#[replicated(archetype = A)]`). Priorities, owners and deltas keep the
//! trait's defaults; a game that wants its own writes the impl by hand.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, Member};

use crate::codec::krate;

/// The `impl ReplicationSource` of `input`.
pub(crate) fn derive(input: &DeriveInput) -> syn::Result<TokenStream> {
    let k = krate();
    let name = &input.ident;
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new_spanned(
            name,
            "ReplicationSource is derived for a game's state struct",
        ));
    };
    let marked: Vec<(Member, &syn::Field)> = data
        .fields
        .iter()
        .enumerate()
        .filter(|(_, f)| f.attrs.iter().any(|a| a.path().is_ident("replicas")))
        .map(|(i, f)| (f.ident.clone().map_or(Member::from(i), Member::from), f))
        .collect();
    let (member, field) = match marked.as_slice() {
        [one] => one,
        [] => {
            return Err(syn::Error::new_spanned(
                name,
                "mark the field that holds the entities' replicated state with #[replicas]",
            ));
        }
        [_, second, ..] => {
            return Err(syn::Error::new_spanned(
                second.1,
                "only one field holds the replicated state (#[replicas])",
            ));
        }
    };
    let table = &field.ty;
    let missing = format!("{name} entity");
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    Ok(quote! {
        impl #impl_generics #k::ReplicationSource for #name #ty_generics #where_clause {
            type Archetype = <<#table as #k::ReplicaTable>::Replica as #k::Replica>::Archetype;
            #[inline]
            fn write_group(
                &self,
                entity: #k::EntityId,
                _: Self::Archetype,
                group: u8,
                w: &mut #k::BitWriter,
            ) -> ::core::result::Result<(), #k::ProtoError> {
                match #k::ReplicaTable::replica(&self.#member, entity) {
                    ::core::option::Option::Some(state) => #k::FieldGroups::write_group(state, group, w),
                    ::core::option::Option::None => ::core::result::Result::Err(#k::ProtoError::invalid(#missing)),
                }
            }
        }
    })
}
