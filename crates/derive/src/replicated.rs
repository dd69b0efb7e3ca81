//! `#[derive(Replicated)]`: an entity's replicated state declared once.
//! Every field names its field group with `#[group(n)]` and may carry a
//! `#[wire(...)]` encoding; the derive writes and reads a group's fields in
//! declaration order (`FieldGroups`), and with
//! `#[replicated(archetype = A)]` makes the type the client's `Replica`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Member, Type};

use crate::codec::{WireField, all_or_errors, krate, member_fields};

/// One replicated field: its codec, group and member.
struct GroupField<'a> {
    wire: WireField<'a>,
    group: u8,
    member: Member,
}

/// The `impl FieldGroups` (and `impl Replica`) of `input`.
pub(crate) fn derive(input: &DeriveInput) -> syn::Result<TokenStream> {
    let k = krate();
    let name = &input.ident;
    crate::wire::misplaced(input)?;
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new_spanned(
            name,
            "Replicated is derived for structs: one per archetype",
        ));
    };
    let fields = all_or_errors(member_fields(name, &data.fields)?.into_iter().map(
        |(member, wire)| {
            Ok(GroupField {
                group: group_of(wire.field)?,
                wire,
                member,
            })
        },
    ))?;
    let mut groups: Vec<u8> = fields.iter().map(|f| f.group).collect();
    groups.sort_unstable();
    groups.dedup();
    let mask: u32 = groups
        .iter()
        .fold(0, |m, g| m | 1u32 << (u32::from(*g) & 31));
    let group_label = format!("{name} group");
    let write_arms = groups.iter().map(|g| {
        let writes = fields.iter().filter(|f| f.group == *g).map(|f| {
            let member = &f.member;
            f.wire.write(&quote!(&self.#member))
        });
        quote!(#g => __w.all_or_nothing(|__w| { #(#writes)* ::core::result::Result::Ok(()) }),)
    });
    let read_arms = groups.iter().map(|g| {
        let mine: Vec<&GroupField> = fields.iter().filter(|f| f.group == *g).collect();
        let temps: Vec<_> = (0..mine.len())
            .map(|i| quote::format_ident!("__f{i}"))
            .collect();
        let reads = mine.iter().map(|f| f.wire.read());
        let members = mine.iter().map(|f| &f.member);
        // Read every field first: a group that fails to read changes nothing.
        quote!(#g => {
            #(let #temps = #reads;)*
            #(self.#members = #temps;)*
            ::core::result::Result::Ok(())
        })
    });
    let setters = fields.iter().map(|f| setter(f));
    let field_schemas = fields.iter().enumerate().map(|(i, f)| {
        f.wire
            .schema(&crate::wire::field_name(f.wire.field, i), Some(f.group))
    });
    let name_text = name.to_string();
    let max_group = groups.last().copied().unwrap_or(0);
    let replica = replica(input)?;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    Ok(quote! {
        impl #impl_generics #k::FieldGroups for #name #ty_generics #where_clause {
            const GROUPS: #k::GroupMask = #k::GroupMask(#mask as u8);
            const SCHEMA: ::core::option::Option<&'static #k::schema::TypeSchema> =
                ::core::option::Option::Some(&#k::schema::TypeSchema {
                    name: #name_text,
                    shape: #k::schema::Shape::Struct(&[#(#field_schemas),*]),
                });
            #[inline]
            fn write_group(&self, group: u8, __w: &mut #k::BitWriter) -> ::core::result::Result<(), #k::ProtoError> {
                match group {
                    #(#write_arms)*
                    _ => ::core::result::Result::Err(#k::ProtoError::invalid(#group_label)),
                }
            }
            #[inline]
            fn read_group(&mut self, group: u8, __r: &mut #k::BitReader) -> ::core::result::Result<(), #k::ProtoError> {
                match group {
                    #(#read_arms)*
                    _ => ::core::result::Result::Err(#k::ProtoError::invalid(#group_label)),
                }
            }
        }
        impl #impl_generics #name #ty_generics #where_clause {
            #(#setters)*
        }
        const _: () = ::core::assert!(
            #max_group < #k::MAX_GROUPS,
            "#[group(n)]: n must be below MAX_GROUPS",
        );
        #replica
    })
}

/// `set_<field>(world, entity, value)`: the push setter, which stamps the
/// field's group as changed when the value differs (named fields only).
fn setter(f: &GroupField) -> TokenStream {
    let k = krate();
    let Member::Named(field) = &f.member else {
        return TokenStream::new();
    };
    let name = quote::format_ident!("set_{}", field.to_string().trim_start_matches("r#"));
    let (vis, ty, group) = (&f.wire.field.vis, &f.wire.field.ty, f.group);
    let doc = format!(
        "Sets `{field}` and, when it changed, stamps field group {group} of `entity` \
         (`ReplicationWorld::set`); returns whether it changed."
    );
    quote! {
        #[doc = #doc]
        #[inline]
        #vis fn #name<A: #k::Archetype>(
            &mut self,
            world: &mut #k::ReplicationWorld<A>,
            entity: #k::EntityId,
            value: #ty,
        ) -> bool {
            world.set(entity, #group, &mut self.#field, value)
        }
    }
}

/// The field's `#[group(n)]`.
fn group_of(f: &syn::Field) -> syn::Result<u8> {
    let mut found = None;
    for attr in f.attrs.iter().filter(|a| a.path().is_ident("group")) {
        let lit: syn::LitInt = attr.parse_args()?;
        let group = lit
            .base10_parse::<u8>()
            .map_err(|_| syn::Error::new(lit.span(), "group must be a small number (0..8)"))?;
        if found.replace(group).is_some() {
            return Err(syn::Error::new_spanned(attr, "a field is in one group"));
        }
    }
    found.ok_or_else(|| {
        let at = f.ident.as_ref().map_or(f.ty.span(), |id| id.span());
        syn::Error::new(
            at,
            "a replicated field needs #[group(n)]: the field group it travels in",
        )
    })
}

/// `impl Replica` when the struct says `#[replicated(archetype = A)]`.
fn replica(input: &DeriveInput) -> syn::Result<TokenStream> {
    let k = krate();
    let mut archetype: Option<Type> = None;
    for attr in input
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("replicated"))
    {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("archetype") {
                archetype = Some(meta.value()?.parse()?);
                Ok(())
            } else {
                Err(meta.error("replicated takes `archetype = Type`"))
            }
        })?;
    }
    let Some(archetype) = archetype else {
        return Ok(TokenStream::new());
    };
    let name = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    Ok(quote! {
        impl #impl_generics #k::Replica for #name #ty_generics #where_clause {
            type Archetype = #archetype;
            const SCHEMA: ::core::option::Option<&'static #k::schema::TypeSchema> =
                <Self as #k::FieldGroups>::SCHEMA;
            #[inline]
            fn read_group(&mut self, _: #archetype, group: u8, r: &mut #k::BitReader) -> ::core::result::Result<(), #k::ProtoError> {
                #k::FieldGroups::read_group(self, group, r)
            }
        }
    })
}
